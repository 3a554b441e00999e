"""warpgen.softmax, log_softmax, layer_norm and rms_norm on PyTorch (and
CuPy) arrays, against PyTorch in float64 and the C oracle
(tests/oracle_rownorm.c) row by row: every type, row lengths 1 to 2^20,
leading dimensions that fold into rows, padded rows, NaN and infinities,
all-equal rows, weight and bias, out=, and the arrays warpgen refuses.
Skips without torch or a GPU."""

import ctypes
import zlib

import numpy as np
import pytest

import warpgen
from refs import FLOATS, oracle

# 32768: f64 softmax's rows kept partly in shared memory; 65536: f32's
# (sm_80 on); the other types and operations stream both.
COLS = [1, 2, 31, 33, 1000, 4096, 32768, 65536, 1 << 20]
OPS = ["softmax", "log_softmax", "layer_norm", "rms_norm"]
PRIMITIVE = {"softmax": "softmax-rows", "log_softmax": "log-softmax-rows",
             "layer_norm": "layernorm-rows", "rms_norm": "rmsnorm-rows"}
# Relative tolerance against float64 PyTorch: a rounding of the output
# type and f32 (or f64) arithmetic over the row.
RTOL = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 2e-5, "f64": 1e-12}


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


def dtype(torch, t):
    return {"f16": torch.float16, "bf16": torch.bfloat16,
            "f32": torch.float32, "f64": torch.float64}[t]


def rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def make(torch, t, shape, key, specials=False):
    """A tensor of type t: rows around different centres; with specials,
    the first rows hold a NaN, a +inf, only -inf, some -inf, all equal."""
    g = rng(*key)
    a = g.standard_normal(shape) * 2.0
    a += (g.integers(-32, 32, shape[:-1] + (1,)) *
          (g.random(shape[:-1] + (1,)) < 0.3))
    flat = a.reshape(-1, shape[-1])
    if specials and flat.shape[0] >= 5:
        k = int(g.integers(0, shape[-1]))
        flat[0, k] = np.nan
        flat[1, k] = np.inf
        flat[2, :] = -np.inf
        flat[3, ::3] = -np.inf
        flat[4, :] = 0.1
    return torch.from_numpy(a).to(dtype(torch, t)).cuda()


def reference(torch, op, x, w=None, b=None, eps=1e-5):
    """PyTorch's answer in float64."""
    F = torch.nn.functional
    x64 = x.double()
    w64 = None if w is None else w.double()
    b64 = None if b is None else b.double()
    if op == "softmax":
        return torch.softmax(x64, -1)
    if op == "log_softmax":
        return torch.log_softmax(x64, -1)
    if op == "layer_norm":
        return F.layer_norm(x64, (x.shape[-1],), w64, b64, eps)
    ms = (x64 * x64).mean(-1, keepdim=True)
    y = x64 * torch.rsqrt(ms + eps)
    return y if w64 is None else y * w64


def run(op, x, w=None, b=None, eps=1e-5, **kw):
    if op == "softmax":
        return warpgen.softmax(x, **kw)
    if op == "log_softmax":
        return warpgen.log_softmax(x, **kw)
    if op == "layer_norm":
        return warpgen.layer_norm(x, w, b, eps, **kw)
    return warpgen.rms_norm(x, w, eps, **kw)


def assert_close(torch, got, want, t, what):
    g = got.double().cpu()
    w = want.cpu()
    nan_w, nan_g = torch.isnan(w), torch.isnan(g)
    assert torch.equal(nan_w, nan_g), f"{what}: NaN where PyTorch has " \
        f"{int((nan_w != nan_g).sum())} differences"
    ok = ~nan_w
    inf = torch.isinf(w) & ok
    assert torch.equal(g[inf], w[inf]), f"{what}: infinities differ"
    fin = ok & ~inf
    err = (g[fin] - w[fin]).abs()
    bound = RTOL[t] * (w[fin].abs() + 1.0)
    if err.numel():
        worst = int(torch.argmax(err / bound))
        assert bool((err <= bound).all()), \
            f"{what}: got {g[fin][worst].item()} want {w[fin][worst].item()}"


class Want(ctypes.Structure):
    _fields_ = [("cols", ctypes.c_uint64),
                ("value", ctypes.POINTER(ctypes.c_double)),
                ("scale", ctypes.POINTER(ctypes.c_double))]


def raw(torch, t):
    t = t.detach().contiguous()
    if t.element_size() == 2:
        t = t.view(torch.int16)
    return np.ascontiguousarray(t.cpu().numpy())


def oracle_check(torch, op, t, x, got, w=None, b=None, eps=1e-5, rows=8):
    """The C oracle on the first `rows` rows (all of them when fewer)."""
    lib = oracle()
    vp, u64 = ctypes.c_void_p, ctypes.c_uint64
    lib.wg_oracle_rownorm_row.argtypes = [
        ctypes.POINTER(Want), ctypes.c_int, ctypes.c_int, vp, u64, u64, vp, vp,
        ctypes.c_double]
    lib.wg_oracle_rownorm_row.restype = None
    lib.wg_oracle_rownorm_check.argtypes = [
        ctypes.POINTER(Want), ctypes.c_int, vp, u64, ctypes.POINTER(u64),
        ctypes.c_char_p, ctypes.c_size_t]
    lib.wg_oracle_rownorm_check.restype = ctypes.c_bool
    cols = x.shape[-1]
    xs = raw(torch, x.reshape(-1, cols)[:rows])
    gs = raw(torch, got.reshape(-1, cols)[:rows])
    ws = None if w is None else raw(torch, w)
    bs = None if b is None else raw(torch, b)
    value = (ctypes.c_double * cols)()
    scale = (ctypes.c_double * cols)()
    want = Want(cols, value, scale)
    prim = warpgen._lib.PRIMITIVES.index(PRIMITIVE[op])
    ti = warpgen._lib.TYPES.index(t)
    ptr = (lambda a: None if a is None else a.ctypes.data)
    for r in range(xs.shape[0]):
        lib.wg_oracle_rownorm_row(ctypes.byref(want), prim, ti, ptr(xs),
                                  r * cols, cols, ptr(ws), ptr(bs), eps)
        bad = u64(0)
        why = ctypes.create_string_buffer(320)
        assert lib.wg_oracle_rownorm_check(ctypes.byref(want), ti, ptr(gs),
                                           r * cols, ctypes.byref(bad), why,
                                           320), \
            f"{op} {t} cols={cols} row {r}: {why.value.decode()}"


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("t", FLOATS)
@pytest.mark.parametrize("cols", COLS)
def test_against_torch_and_oracle(torch, op, t, cols):
    shape = (2, cols) if cols >= 32768 else (3, 7, cols)
    x = make(torch, t, shape, (op, t, cols), specials=cols < 32768)
    w = b = None
    if op in ("layer_norm", "rms_norm"):
        w = make(torch, t, (cols,), ("w", t, cols))
        b = make(torch, t, (cols,), ("b", t, cols)) if op == "layer_norm" \
            else None
    got = run(op, x, w, b)
    assert got.shape == x.shape and got.dtype == x.dtype
    what = f"{op} {t} shape={tuple(shape)}"
    assert_close(torch, got, reference(torch, op, x, w, b), t, what)
    oracle_check(torch, op, t, x, got, w, b)
    if op == "layer_norm" and cols < 32768:
        # Row 4 is all equal: variance exactly 0, the output is the bias.
        assert torch.equal(got.reshape(-1, cols)[4], b), \
            f"{what}: an all-equal row is not the bias"


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("t", ["bf16", "f32"])
def test_torch_in_its_own_type(torch, op, t):
    """Beside PyTorch's own kernels in the same dtype: within two of the
    type's roundings."""
    F = torch.nn.functional
    x = make(torch, t, (64, 768), ("own", op, t))
    w = make(torch, t, (768,), ("own-w", t))
    b = make(torch, t, (768,), ("own-b", t))
    if op == "softmax":
        mine, theirs = warpgen.softmax(x), torch.softmax(x, -1)
    elif op == "log_softmax":
        mine, theirs = warpgen.log_softmax(x), torch.log_softmax(x, -1)
    elif op == "layer_norm":
        mine, theirs = warpgen.layer_norm(x, w, b, 1e-5), \
            F.layer_norm(x, (768,), w, b, 1e-5)
    else:
        if not hasattr(F, "rms_norm"):
            pytest.skip("torch has no rms_norm")
        eps = torch.finfo(x.dtype).eps
        mine, theirs = warpgen.rms_norm(x, w, eps), \
            F.rms_norm(x, (768,), w, eps)
    # Each side within a few roundings of the exact result, relative to the
    # row's scale: layer_norm's 1/std (rsqrt here, a division there) and
    # its sum orders differ, so an output near zero differs by a few ulps
    # of the largest one, not of itself (4 eps of itself failed on the
    # H200 for f32 layer_norm).
    tol = 8 * torch.finfo(x.dtype).eps
    scale = float(theirs.double().abs().max())
    assert torch.allclose(mine.double(), theirs.double(), rtol=tol,
                          atol=tol * max(scale, 1.0))


def test_padded_rows_and_out(torch):
    big = make(torch, "f32", (300, 1100), ("pad",))
    x = big[:, 7:1007]  # row stride 1100, unaligned start
    out_big = torch.full((300, 1200), 123.0, device="cuda")
    out = out_big[:, :1000]
    r = warpgen.layer_norm(x, None, None, 1e-5, out=out)
    assert r is out
    assert_close(torch, out, reference(torch, "layer_norm", x), "f32",
                 "padded")
    assert bool((out_big[:, 1000:] == 123.0).all()), "wrote into the gaps"
    y = warpgen.softmax(x)
    assert y.is_contiguous()
    assert_close(torch, y, reference(torch, "softmax", x), "f32", "strided")


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64"])
def test_rms_norm_default_eps(torch, t):
    # Rows of small values (mean square near 1e-4), where the eps chosen
    # shows: the 16-bit types' own finfo eps (2^-10, 2^-7) would change
    # every output by tens of percent; PyTorch (2.7 on) takes float32's.
    F = torch.nn.functional
    if not hasattr(F, "rms_norm"):
        pytest.skip("torch has no rms_norm")
    x = make(torch, t, (16, 256), ("eps", t)) * 0.01
    a = warpgen.rms_norm(x)
    assert torch.equal(a, warpgen.rms_norm(x, None, torch.finfo(
        torch.float64 if t == "f64" else torch.float32).eps))
    theirs = F.rms_norm(x, (256,))
    tol = 8 * torch.finfo(x.dtype).eps
    assert torch.allclose(a.double(), theirs.double(), rtol=tol, atol=tol)


def test_empty(torch):
    x = torch.empty((0, 5), device="cuda")
    assert warpgen.softmax(x).shape == (0, 5)
    x = torch.empty((4, 0), device="cuda", dtype=torch.float16)
    assert warpgen.layer_norm(x).shape == (4, 0)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_any_dim(torch, op):
    """Every dim of a 3-d tensor, negative ones too, as torch gives it: a
    dim that is not the last is moved last by one copy and back."""
    x = make(torch, "f32", (5, 6, 7), ("dims", op))
    x[1, 2, 3] = float("nan")
    x[2, :, 4] = float("-inf")
    fn = getattr(warpgen, op)
    theirs = getattr(torch, op)
    for dim in (0, 1, 2, -1, -2, -3):
        got = fn(x, dim)
        want = theirs(x.double(), dim)
        assert got.shape == x.shape and got.dtype == x.dtype
        assert_close(torch, got, want, "f32", f"{op} dim={dim}")
    with pytest.raises(warpgen.ArrayError):
        fn(x, 3)
    with pytest.raises(warpgen.ArrayError):
        fn(x, 1.0)
    with pytest.raises(warpgen.ArrayError):
        fn(x, 0, out=torch.empty_like(x))


@pytest.mark.parametrize("op", OPS)
def test_layouts_copied(torch, op):
    """Layouts whose rows do not fold into one stride (a transpose, a
    column step, a permuted 3-d tensor) are copied once and computed."""
    base = make(torch, "f32", (40, 24, 30), ("layouts", op))
    for x in (base[0].t(), base[:, :, ::2], base.permute(2, 0, 1)):
        w = make(torch, "f32", (x.shape[-1],), ("lw", op)) \
            if op in ("layer_norm", "rms_norm") else None
        b = make(torch, "f32", (x.shape[-1],), ("lb", op)) \
            if op == "layer_norm" else None
        got = run(op, x, w, b)
        assert got.shape == x.shape and got.is_contiguous()
        # The oracle's bound: weight and bias far from 0 (make's row
        # centres) scale the f32 rounding of x - mean past assert_close's.
        oracle_check(torch, op, "f32", x, got, w, b,
                     rows=x.numel() // x.shape[-1])


def test_refused(torch):
    x = torch.ones((4, 8), device="cuda")
    with pytest.raises(warpgen.DTypeError):
        warpgen.softmax(torch.ones((4, 8), device="cuda", dtype=torch.int32))
    with pytest.raises(warpgen.ArrayError):
        warpgen.layer_norm(x, torch.ones(7, device="cuda"))
    with pytest.raises(warpgen.DTypeError):
        warpgen.layer_norm(x, torch.ones(8, device="cuda",
                                         dtype=torch.float16))
    with pytest.raises(warpgen.ArrayError):  # out='s rows must fold
        warpgen.softmax(x, out=torch.empty((8, 4), device="cuda").t())
    with pytest.raises(warpgen.InvalidArgumentError):
        warpgen.layer_norm(x, eps=-1.0)


def test_cupy(cupy):
    x = cupy.random.standard_normal((50, 333)).astype(cupy.float32)
    got = cupy.asnumpy(warpgen.softmax(x))
    a = cupy.asnumpy(x).astype(np.float64)
    e = np.exp(a - a.max(-1, keepdims=True))
    want = e / e.sum(-1, keepdims=True)
    assert np.allclose(got, want, rtol=2e-5, atol=1e-7)
    got = cupy.asnumpy(warpgen.rms_norm(x, None, 1e-6))
    want = a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-6)
    assert np.allclose(got, want, rtol=2e-5, atol=1e-6)
    # Negative strides (copied once) and a softmax over dim 0 (moved last).
    r = x[::-1, ::-1]
    got = cupy.asnumpy(warpgen.softmax(r))
    ar = a[::-1, ::-1]
    e = np.exp(ar - ar.max(-1, keepdims=True))
    assert np.allclose(got, e / e.sum(-1, keepdims=True), rtol=2e-5, atol=1e-7)
    got = cupy.asnumpy(warpgen.log_softmax(x, 0))
    m = a.max(0, keepdims=True)
    want = a - m - np.log(np.exp(a - m).sum(0, keepdims=True))
    assert got.shape == a.shape
    assert np.allclose(got, want, rtol=2e-5, atol=1e-5)
