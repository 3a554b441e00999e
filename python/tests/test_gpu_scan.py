"""warpgen.scan / cumsum / cumprod / cummax / cummin on torch (and CuPy)
arrays, against PyTorch and the C oracle (tests/oracle_scan.c through
liboracle.so): every type and scan operator, 1-D arrays, the last axis and
other axes of N-d tensors, non-contiguous and negative strides (CuPy),
exclusive scans, in place, user combines, and the calls warpgen refuses.
Skips without torch or a GPU."""

import ctypes

import pytest

import warpgen
from refs import FLOATS, INTS, OracleReport, _buffer, oracle

OPS = {t: ("sum", "prod", "min", "max") for t in FLOATS}
OPS.update({t: ("sum", "prod", "min", "max", "and", "or", "xor")
            for t in INTS})
SIZES = [0, 1, 7, 4096, 4097, 70_001, 1_000_003]


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


def dtype_of(torch, t):
    return {"f16": torch.float16, "bf16": torch.bfloat16,
            "f32": torch.float32, "f64": torch.float64, "i32": torch.int32,
            "u32": getattr(torch, "uint32", None), "i64": torch.int64,
            "u64": getattr(torch, "uint64", None)}[t]


def data(torch, t, op, shape, seed):
    """Random inputs suited to op: floats near 1 for prod, small integers
    (odd for prod) that stay far from overflow in a float sum."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    dt = dtype_of(torch, t)
    if t in FLOATS:
        if op == "prod":
            x = torch.rand(shape, generator=g, device="cuda",
                           dtype=torch.float64) * 0.02 + 0.99
        else:
            x = torch.rand(shape, generator=g, device="cuda",
                           dtype=torch.float64) * 2 - 1
        return x.to(dt)
    x = torch.randint(-1000, 1000, shape, generator=g, device="cuda",
                      dtype=torch.int64)
    if t[0] == "u":
        x = x.abs()
    if op == "prod":
        x = x | 1
    return x.to(dt)


def raw(torch, x):
    """The elements' bits as numpy (halves as int16), row-major."""
    x = x.detach().contiguous()
    if x.is_floating_point() and x.element_size() == 2:
        x = x.view(torch.int16)
    if x.dtype in (getattr(torch, "uint32", None), getattr(torch, "uint64", None)):
        x = x.view(torch.int32 if x.element_size() == 4 else torch.int64)
    return x.cpu().numpy()


def check_oracle(torch, t, op, exclusive, x, y):
    """The C oracle's report on the scan of every row of x (last axis)."""
    lib = oracle()
    fn = lib.wg_oracle_scan_check
    u64, vp = ctypes.c_uint64, ctypes.c_void_p
    fn.argtypes = [ctypes.POINTER(OracleReport), ctypes.c_int, ctypes.c_int,
                   ctypes.c_bool, vp, u64, u64, u64, vp, u64]
    fn.restype = None
    cols = x.shape[-1] if x.dim() else 1
    rows = x.numel() // cols if cols else 0
    report = OracleReport()
    lib.wg_oracle_report_init(ctypes.byref(report))
    fn(ctypes.byref(report), warpgen._lib.TYPES.index(t),
       warpgen._lib.OPERATORS.index(op), exclusive, _buffer(raw(torch, x)),
       rows, cols, cols, _buffer(raw(torch, y)), cols)
    assert report.mismatches == 0, (t, op, exclusive, tuple(x.shape), report)


@pytest.mark.parametrize("t", FLOATS + INTS)
def test_every_type_and_operator_1d(torch, t):
    if dtype_of(torch, t) is None:
        pytest.skip(f"this torch has no {t}")
    for op in OPS[t]:
        for k, n in enumerate(SIZES):
            if op == "prod" and t in FLOATS and n > 2000:
                continue
            x = data(torch, t, op, (n,), 1000 * k + len(op))
            for exclusive in (False, True):
                y = warpgen.scan(x, op, 0, exclusive)
                assert y.shape == x.shape and y.dtype == x.dtype
                check_oracle(torch, t, op, exclusive, x, y)


def test_cumsum_matches_torch(torch):
    for t, dt in (("f32", torch.float32), ("f64", torch.float64),
                  ("i32", torch.int32), ("i64", torch.int64)):
        for n in (1, 1000, 1 << 20):
            x = data(torch, t, "sum", (n,), n)
            y = warpgen.cumsum(x, 0)
            want = torch.cumsum(x, 0, dtype=dt)
            if t in INTS:
                assert torch.equal(y, want)
            else:
                tol = 1e-5 if t == "f32" else 1e-12
                scale = torch.cumsum(x.abs().double(), 0)
                assert ((y.double() - want.double()).abs() <=
                        tol * (scale + 1)).all()


def test_cumprod_cummax_cummin_match_torch(torch):
    x = data(torch, "f64", "prod", (3, 700), 5)
    assert torch.allclose(warpgen.cumprod(x, 1), torch.cumprod(x, 1),
                          rtol=1e-12)
    x = data(torch, "f32", "sum", (5, 4, 1234), 6)
    for dim in (0, 1, 2, -1):
        assert torch.equal(warpgen.cummax(x, dim), torch.cummax(x, dim).values)
        assert torch.equal(warpgen.cummin(x, dim), torch.cummin(x, dim).values)
    xi = data(torch, "i64", "sum", (2, 50000), 7)
    assert torch.equal(warpgen.cummax(xi, 1), torch.cummax(xi, 1).values)


@pytest.mark.parametrize("shape", [(4, 1), (3, 5), (1000, 33), (65, 4097),
                                   (2, 3, 1025), (40000, 300), (3, 300000)])
def test_rows_every_shape(torch, shape):
    for t in ("f32", "f16", "i32", "u64", "bf16"):
        if dtype_of(torch, t) is None:
            continue
        x = data(torch, t, "sum", shape, sum(shape))
        for exclusive in (False, True):
            for det in (True, False):
                y = warpgen.scan(x, "sum", -1, exclusive, deterministic=det)
                check_oracle(torch, t, "sum", exclusive, x, y)


def test_other_dims_and_strides(torch):
    x = data(torch, "f32", "sum", (37, 64, 129), 8)
    for dim in (0, 1, 2, -2):
        y = warpgen.cumsum(x, dim)
        want = torch.cumsum(x.double(), dim)
        assert y.shape == x.shape
        assert ((y.double() - want).abs() <= 1e-4 * (1 + want.abs())).all()
    # Rows with a padded stride, a transposed view, a sliced 1-D view.
    base = data(torch, "i32", "sum", (300, 1000), 9)
    padded = base[:, :999]
    assert torch.equal(warpgen.cumsum(padded, 1),
                       torch.cumsum(padded, 1, dtype=torch.int32))
    assert torch.equal(warpgen.cumsum(base.t(), 1),
                       torch.cumsum(base.t(), 1, dtype=torch.int32))
    strided = base.reshape(-1)[::3]
    assert torch.equal(warpgen.cumsum(strided, 0),
                       torch.cumsum(strided, 0, dtype=torch.int32))
    unaligned = base.reshape(-1)[1:]
    assert torch.equal(warpgen.cumsum(unaligned, 0),
                       torch.cumsum(unaligned, 0, dtype=torch.int32))
    # 0-d and empty tensors.
    assert warpgen.cumsum(torch.zeros((0, 5), device="cuda"), 1).shape == (0, 5)
    assert warpgen.cumsum(torch.zeros((5, 0), device="cuda"), 0).shape == (5, 0)


def test_in_place_and_out(torch):
    x = data(torch, "f64", "sum", (10, 5000), 10)
    want = torch.cumsum(x, 1)
    out = torch.empty_like(x)
    assert warpgen.cumsum(x, 1, out=out) is out
    assert torch.allclose(out, want, rtol=1e-12, atol=1e-12)
    y = x.clone()
    warpgen.cumsum(y, 1, out=y)
    assert torch.allclose(y, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(warpgen.ArrayError):
        warpgen.cumsum(x, 0, out=out)
    with pytest.raises(warpgen.DTypeError):
        warpgen.cumsum(x, 1, out=torch.empty_like(x, dtype=torch.float32))


def test_deterministic_same_bits(torch):
    x = data(torch, "f32", "sum", (1 << 24,), 11)
    first = warpgen.cumsum(x, 0)
    for _ in range(3):
        assert torch.equal(warpgen.cumsum(x, 0), first)
    fast = warpgen.cumsum(x, 0, deterministic=False)
    assert torch.allclose(fast, first, rtol=1e-4, atol=1e-2)


def test_user_combine_and_map(torch):
    x = data(torch, "i32", "sum", (100_003,), 12)
    y = warpgen.scan(x, combine="a + b", identity="0", dim=0)
    assert torch.equal(y, torch.cumsum(x, 0, dtype=torch.int32))
    y = warpgen.scan(x, "sum", 0, map="x * x")
    assert torch.equal(y, torch.cumsum(x * x, 0, dtype=torch.int32))
    y = warpgen.scan(x, "max", 0, map="x * 0.5")
    assert y.dtype == torch.float64
    assert torch.equal(y, torch.cummax(x.double() * 0.5, 0).values)


def test_refused(torch):
    x = data(torch, "f32", "sum", (100,), 13)
    with pytest.raises(warpgen.SpecError, match="running form"):
        warpgen.scan(x, "argmax", 0)
    with pytest.raises(warpgen.SpecError):
        warpgen.scan(x, "xor", 0)  # bitwise on floats
    with pytest.raises(warpgen.SpecError):
        warpgen.scan(x, "bogus", 0)
    with pytest.raises(warpgen.ArrayError):
        warpgen.cumsum(x, 1)
    with pytest.raises(warpgen.ArrayError):
        warpgen.cumsum(x, 0, out=torch.empty(99, device="cuda"))


def test_cupy_negative_strides(cupy):
    a = cupy.arange(100_000, dtype=cupy.int64)
    rev = a[::-1]
    assert (warpgen.cumsum(rev, 0) == cupy.cumsum(rev)).all()
    m = cupy.arange(60_000, dtype=cupy.float64).reshape(200, 300)[:, ::-1]
    got = warpgen.cumsum(m, 1)
    assert cupy.allclose(got, cupy.cumsum(m, axis=1), rtol=1e-12)
    got = warpgen.cumsum(m, 0)
    assert cupy.allclose(got, cupy.cumsum(m, axis=0), rtol=1e-12)
