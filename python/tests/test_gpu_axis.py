"""warpgen.reduce(x, op, dim=..., keepdim=...) on torch and CuPy arrays:
every operator on a few types, dims given as ints, negative ints and tuples,
contiguous and strided views (transposed, sliced, padded; CuPy's negative
strides), empty and size-1 dims, and layouts that need the copy fallback.
Each output is checked against the C oracle (tests/oracle.h) on the
elements gathered by the array library itself (permute the reduced dims
last, reshape to rows), and its shape against PyTorch's / NumPy's. Skips
without torch / CuPy or a GPU."""

import zlib

import numpy as np
import pytest

import warpgen
from refs import FLOATS, NUMPY, check_reduce, random_data

OPS = ("sum", "prod", "min", "max", "and", "or", "xor", "argmin", "argmax",
       "mean", "var", "std", "norm1", "norm2", "norminf", "logsumexp",
       "count_nonzero")
FLOAT_ONLY = {"mean", "var", "std", "norm1", "norm2", "norminf"}
BITWISE = {"and", "or", "xor"}
NO_EMPTY = {"argmin", "argmax", "norminf"}
TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32",
                "f64": "float64", "i32": "int32", "i64": "int64"}


def accepts(type_, op):
    if op in FLOAT_ONLY:
        return type_ in FLOATS
    if op in BITWISE:
        return type_ not in FLOATS
    return True


def seeded(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def host_data(type_, op, shape, key):
    n = int(np.prod(shape)) if shape else 1
    data = random_data(seeded(type_, op, shape, key), type_, op, n)
    if op == "prod" and type_ in FLOATS:  # products of many stay in range
        data = np.asarray(data, np.float64) ** (1.0 / 8)
    return np.asarray(data).reshape(shape)


def out_shape(shape, dims, keepdim):
    return tuple((1 if d in dims else n) for d, n in enumerate(shape)
                 if keepdim or d not in dims)


def norm_dims(dim, ndim):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(d % max(ndim, 1) for d in dims))


# (shape, dim, how the view is made from a bigger contiguous tensor)
LAYOUTS = [
    ((37, 45), 0, "plain"),
    ((37, 45), -1, "plain"),
    ((37, 45), 0, "t"),            # x.t(): reduces a unit-stride dim (rows)
    ((200, 64), 0, "plain"),       # 16-byte columns
    ((6, 50, 9), 1, "plain"),      # the middle axis
    ((6, 50, 9), (0, 1), "plain"),  # two dims that merge
    ((6, 50, 9), (0, 2), "plain"),  # two dims that do not: the copy
    ((6, 50, 9), -2, "slice"),     # x[:, :, ::2] of a wider tensor
    ((3000, 8), 0, "plain"),       # few columns: the axis split
    ((1500, 5), 0, "narrow"),      # x[1:, 2:] (padded rows)
    ((0, 5), 0, "plain"),          # an empty axis
    ((5, 0), 0, "plain"),          # no outputs
    ((9, 1, 40), 1, "plain"),
    ((3, 4, 5, 6), (1, 3), "permute"),
]


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


def torch_view(torch, base, how):
    """A view of `base`'s data (a contiguous tensor) of base's shape made
    non-contiguous the way `how` says."""
    if how == "plain":
        return base
    if how == "t":
        return base.t().contiguous().t()
    if how == "slice":  # every other element of the last dim
        wide = torch.zeros(base.shape[:-1] + (2 * base.shape[-1],),
                           dtype=base.dtype, device=base.device)
        wide[..., ::2] = base
        return wide[..., ::2]
    if how == "narrow":
        big = torch.zeros((base.shape[0] + 1, base.shape[1] + 2),
                          dtype=base.dtype, device=base.device)
        big[1:, 2:] = base
        return big[1:, 2:]
    if how == "permute":  # stored as (3, 1, 0, 2), seen as base's order
        return base.permute(3, 1, 0, 2).contiguous().permute(2, 1, 3, 0)
    raise ValueError(how)


def raw_torch(torch, t):
    t = t.detach().contiguous()
    if t.is_floating_point() and t.element_size() == 2:
        t = t.view(torch.int16)
    return t.cpu().numpy()


def gathered(x, dims, permute, reshape):
    kept = [d for d in range(x.ndim) if d not in dims]
    rows = int(np.prod([x.shape[d] for d in kept])) if kept else 1
    cols = int(np.prod([x.shape[d] for d in dims]))
    return reshape(permute(x, kept + list(dims)), (rows, cols)), rows, cols


def check_against_oracle(type_, op, x_rows, rows, cols, got_raw, what):
    report = check_reduce(type_, op, x_rows, rows, cols, got_raw)
    assert report.mismatches == 0 and report.checked == rows, (what, report)


@pytest.mark.parametrize("type_", ["f32", "f16", "bf16", "f64", "i32", "i64"])
def test_torch_every_operator_and_layout(torch, type_):
    dtype = getattr(torch, TORCH_DTYPES[type_])
    for op in OPS:
        if not accepts(type_, op):
            continue
        for shape, dim, how in LAYOUTS:
            dims = norm_dims(dim, len(shape))
            if op in ("argmin", "argmax") and len(dims) > 1:
                continue  # PyTorch's argmin takes one dim; warpgen's too here
            host = host_data(type_, op, shape, (dim, how))
            base = torch.from_numpy(np.ascontiguousarray(
                host, np.float32 if type_ in FLOATS else host.dtype)).cuda()
            base = base.to(dtype)
            x = torch_view(torch, base, how)
            what = (type_, op, shape, dim, how)
            empty_axis = 0 in [shape[d] for d in dims]
            if empty_axis and op in NO_EMPTY and 0 not in [
                    shape[d] for d in range(len(shape)) if d not in dims]:
                with pytest.raises(warpgen.Error):
                    warpgen.reduce(x, op, dim=dim)
                continue
            for keepdim in (False, True):
                got = warpgen.reduce(x, op, dim=dim, keepdim=keepdim)
                assert tuple(got.shape) == out_shape(shape, dims, keepdim), what
                assert tuple(torch.sum(base.double(), dim=dims,
                                       keepdim=keepdim).shape) == \
                    tuple(got.shape), what
            got = warpgen.reduce(x, op, dim=dim)
            xr, rows, cols = gathered(x, dims, lambda a, o: a.permute(o),
                                      lambda a, s: a.reshape(s))
            check_against_oracle(type_, op, raw_torch(torch, xr), rows, cols,
                                 raw_torch(torch, got.reshape(-1)), what)


def test_torch_matches_pytorch(torch):
    """PyTorch's own answers, on the benchmark's layouts (smaller)."""
    x = torch.randn(4096, 256, device="cuda")
    for dim in (0, 1, -1, (0, 1)):
        got = warpgen.reduce(x, "sum", dim=dim)
        want = x.double().sum(dim=dim)
        assert torch.allclose(got.double(), want, rtol=1e-4, atol=1e-3)
    y = torch.randn(8, 512, 64, device="cuda")
    for op, ref in (("max", lambda t: t.amax(dim=1)),
                    ("argmax", lambda t: t.argmax(dim=1)),
                    ("mean", lambda t: t.mean(dim=1)),
                    ("std", lambda t: t.std(dim=1)),
                    ("logsumexp", lambda t: t.logsumexp(dim=1))):
        got = warpgen.reduce(y, op, dim=1)
        want = ref(y.double() if op not in ("argmax", "max") else y)
        if op == "argmax":
            assert torch.equal(got, want)
        else:
            assert torch.allclose(got.double(), want.double(), rtol=1e-4,
                                  atol=1e-4), op
    i = torch.randint(-1000, 1000, (300, 77), device="cuda", dtype=torch.int32)
    got = warpgen.reduce(i, "sum", dim=0)
    assert torch.equal(got, i.sum(dim=0).to(torch.int32))
    # dim=None keeps the whole-array scalar; 0-d arrays take dim 0.
    assert isinstance(warpgen.reduce(x, "sum"), float)
    s = torch.tensor(3.5, device="cuda")
    assert warpgen.reduce(s, "sum", dim=0).shape == ()
    assert float(warpgen.reduce(s, "sum", dim=-1, keepdim=True)) == 3.5


def test_torch_expressions(torch):
    x = torch.randint(-100, 100, (50, 33), device="cuda", dtype=torch.int32)
    y = torch.randint(-100, 100, (50, 33), device="cuda", dtype=torch.int32)
    got = warpgen.reduce(x, dim=0, map="x * x")
    assert torch.equal(got, (x.long() * x.long()).sum(dim=0).to(torch.int32))
    got = warpgen.reduce((x, y), dim=0, map="x * y")
    assert torch.equal(got, (x.long() * y.long()).sum(dim=0).to(torch.int32))
    got = warpgen.reduce(x, dim=0, map="x * k", k=3)
    assert torch.equal(got.long(), (x.long() * 3).sum(dim=0))
    got = warpgen.reduce(x.t(), dim=1, combine="max(a, b)", identity="-1000")
    assert torch.equal(got, x.t().amax(dim=1))


def test_torch_errors(torch):
    x = torch.zeros(3, 4, device="cuda")
    for bad in (2, -3, (0, 0), ()):
        with pytest.raises(warpgen.ArrayError):
            warpgen.reduce(x, "sum", dim=bad)
    with pytest.raises(warpgen.ArrayError):
        warpgen.reduce(x, "sum", dim=0, out=torch.zeros(3, device="cuda"))


def test_cupy_negative_strides(cupy):
    for type_ in ("f32", "f64", "i32", "u64", "f16"):
        for op in ("sum", "max", "argmin", "count_nonzero", "logsumexp",
                   "var" if type_ in FLOATS else "xor"):
            host = host_data(type_, op, (300, 40), "cupy")
            base = cupy.asarray(np.asarray(host, NUMPY[type_]))
            for view, dim in ((base[::-1], 0), (base[:, ::-1], 0),
                              (base[::-2, ::-1], 1), (base[::-1, ::3], 0),
                              (base.T[::-1], 1), (base[::-1].reshape(
                                  300, 40)[:, 5:], (0, 1))):
                dims = norm_dims(dim, 2)
                got = warpgen.reduce(view, op, dim=dim)
                xr, rows, cols = gathered(view, dims,
                                          lambda a, o: cupy.transpose(a, o),
                                          lambda a, s: a.reshape(s))
                xr = cupy.asnumpy(cupy.ascontiguousarray(xr))
                g = cupy.asnumpy(got).reshape(-1)
                if type_ == "f16":
                    xr, g = xr.view(np.int16), g.view(np.int16)
                check_against_oracle(type_, op, xr, rows, cols, g,
                                     (type_, op, view.strides, dim))
                assert got.shape == cupy.sum(view.astype(cupy.float64),
                                             axis=dim).shape


def test_torch_whole_array_in_any_layout(torch):
    """dim=None on layouts the one pass over memory cannot answer: the
    index of argmin/argmax counts row-major, expressions see row-major i,
    several inputs pair by position in the array, not in memory; layouts
    with gaps are read; keepdim keeps x's rank."""
    m = torch.randn(37, 53, device="cuda")
    m[5, 7] = 9.0   # one clear maximum and minimum, away from the diagonal
    m[30, 2] = -9.0
    for x in (m.t(), m.t().contiguous().t(), m[:, ::2], m[::3]):
        assert warpgen.reduce(x, "argmax") == int(torch.argmax(x)), x.stride()
        assert warpgen.reduce(x, "argmin") == int(torch.argmin(x)), x.stride()
        assert abs(warpgen.reduce(x, "sum") - float(x.double().sum())) < 1e-3
        ramp = torch.arange(x.numel(), device="cuda").reshape(x.shape)
        terms = x.double() * ramp
        got = warpgen.reduce(x, map="f64(x) * f64(i)")
        assert abs(got - float(terms.sum())) <= \
            1e-6 * float(terms.abs().sum()), x.stride()
        out = torch.full((1,), -1, dtype=torch.int64, device="cuda")
        assert warpgen.reduce(x, "argmax", out=out) is out
        assert int(out) == int(torch.argmax(x))
    a = torch.randint(-50, 50, (40, 30), device="cuda", dtype=torch.int32)
    b = torch.randint(-50, 50, (30, 40), device="cuda",
                      dtype=torch.int32).t()  # a's shape, transposed storage
    d = (a.long() - b.long()) ** 2
    assert warpgen.reduce((a, b), map="(x - y) * (x - y)") == int(d.sum())
    assert torch.equal(warpgen.reduce((a, b), map="(x - y) * (x - y)",
                                      dim=0).long(), d.sum(dim=0))
    k = warpgen.reduce(m, "sum", keepdim=True)
    assert k.shape == (1, 1) and abs(float(k) - float(m.double().sum())) < 1e-3
    s = torch.tensor(2.5, device="cuda")
    assert warpgen.reduce(s, "sum", keepdim=True).shape == ()


def test_torch_negative_bit_is_refused(torch):
    z = torch.randn(8, dtype=torch.complex64, device="cuda")
    with pytest.raises(warpgen.ArrayError, match="negative bit"):
        warpgen.reduce(z.conj().imag)
    assert warpgen.reduce(z.conj().imag.resolve_neg(), "sum") == \
        pytest.approx(float(-z.imag.sum()), abs=1e-5)
