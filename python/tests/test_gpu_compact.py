"""warpgen.compact on PyTorch (and CuPy) arrays against torch.masked_select
and torch.nonzero, and against the C oracle (tests/oracle_compact.c through
liboracle.so): every torch dtype, sizes around a tile and many tiles, NaN,
inf and -0.0 inputs, all kept and none kept, parameters, a second input,
with and without indices, narrow=False, a side stream, and the arrays it
must refuse. Skips without torch or a GPU."""

import ctypes
import zlib

import numpy as np
import pytest

import warpgen
from refs import OracleReport, _buffer, oracle

SIZES = [0, 1, 31, 33, 4095, 4096, 4097, 100_003, 3_000_017]
DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64"]
ITEM = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int32": 4,
        "int64": 8}
WG_TYPE = {"float16": 0, "bfloat16": 1, "float32": 2, "float64": 3, "int32": 4,
           "int64": 6}


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


def data(torch, dtype, n, key):
    """n values with zeros, -0.0, NaN and infinities mixed in (floats)."""
    rng = np.random.default_rng(zlib.crc32(repr((dtype, n, key)).encode()))
    if dtype.startswith("int"):
        a = rng.integers(-100, 100, n)
        a[rng.random(n) < 0.1] = 0
        return torch.from_numpy(a).cuda().to(getattr(torch, dtype))
    a = rng.uniform(-10, 10, n)
    r = rng.random(n)
    a[r < 0.05] = 0.0
    a[(r >= 0.05) & (r < 0.06)] = -0.0
    a[(r >= 0.06) & (r < 0.07)] = np.nan
    a[(r >= 0.07) & (r < 0.08)] = np.inf
    return torch.from_numpy(a).cuda().to(getattr(torch, dtype))


def raw(torch, t):
    """The bytes of tensor t on the host, as a numpy array of its bits."""
    t = t.detach().contiguous()
    if t.dtype.is_floating_point:  # bits, so that NaNs compare equal
        t = t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    return t.cpu().numpy()


def oracle_check(torch, x, keep, values, indices, count):
    """The C oracle's report: keep a bool tensor, values/indices the
    narrowed outputs (padded on the host, so the past-count check there
    is the Check suite's job, not this one's)."""
    lib = oracle()
    lib.wg_oracle_compact_check.argtypes = [
        ctypes.POINTER(OracleReport), ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
        ctypes.c_ubyte]
    lib.wg_oracle_compact_check.restype = None
    n = x.numel()
    item = x.element_size()
    pad = lambda b, size: b + b"\xa7" * (size - len(b))
    v = pad(raw(torch, values).tobytes(), n * item + 8)
    ix = pad(indices.cpu().numpy().astype(np.int64).tobytes(), n * 8 + 8)
    k = keep.cpu().numpy().astype(np.uint8)
    report = OracleReport()
    lib.wg_oracle_report_init(ctypes.byref(report))
    lib.wg_oracle_compact_check(ctypes.byref(report), WG_TYPE[str(x.dtype)[6:]],
                                _buffer(raw(torch, x)), n, _buffer(k),
                                ctypes.create_string_buffer(v, len(v)),
                                ctypes.create_string_buffer(ix, len(ix)), count, 0xa7)
    return report


def same(torch, got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(raw(torch, got), raw(torch, want))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_against_masked_select(torch, dtype, n):
    x = data(torch, dtype, n, "pred")
    p0 = 0.25 if dtype.startswith("float") or dtype == "bfloat16" else 3
    keep = (x > p0) & (x == x)
    values, indices, count = warpgen.compact(x, "x > p0 && x == x", p0=p0)
    assert count == int(keep.sum())
    same(torch, values, torch.masked_select(x, keep))
    assert torch.equal(indices, torch.nonzero(keep).flatten())
    report = oracle_check(torch, x, keep, values, indices, count)
    assert report.mismatches == 0, report


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 4097, 3_000_017])
def test_nonzero_without_a_predicate(torch, dtype, n):
    x = data(torch, dtype, n, "nonzero")
    keep = x != 0  # -0.0 is zero, NaN is not
    values, indices, count = warpgen.compact(x)
    assert count == int(keep.sum())
    same(torch, values, torch.masked_select(x, keep))
    assert torch.equal(indices, torch.nonzero(keep).flatten())


@pytest.mark.parametrize("pred,expect", [("i >= 0", "all"), ("i < 0", "none"),
                                          ("x != x", "nan"), ("i == n - 1", "last")])
def test_all_none_nan_last(torch, pred, expect):
    x = data(torch, "float32", 1_000_003, "patterns")
    i = torch.arange(x.numel(), device=x.device)
    keep = {"all": i >= 0, "none": i < 0, "nan": torch.isnan(x),
            "last": i == x.numel() - 1}[expect]
    values, indices, count = warpgen.compact(x, pred)
    assert count == int(keep.sum())
    same(torch, values, torch.masked_select(x, keep))
    assert torch.equal(indices, torch.nonzero(keep).flatten())


def test_second_input_and_2d(torch):
    x = data(torch, "float32", 300 * 1001, "x2").reshape(300, 1001)
    y = data(torch, "float16", 300 * 1001, "y2").reshape(300, 1001)
    values, indices, count = warpgen.compact((x, y), "y > lim", lim=0.5)
    keep = y.float() > 0.5
    assert count == int(keep.sum())
    same(torch, values, torch.masked_select(x, keep))
    assert torch.equal(indices, torch.nonzero(keep.flatten()).flatten())


def test_options_and_stream(torch):
    x = data(torch, "float32", 70_001, "opts")
    keep = x > 1
    v, ix, count = warpgen.compact(x, "x > 1", indices=False)
    assert ix is None and count == int(keep.sum())
    same(torch, v, torch.masked_select(x, keep))
    v, ix, c = warpgen.compact(x, "x > 1", narrow=False)
    assert v.shape == (x.numel(),) and ix.shape == (x.numel(),)
    assert c.device == x.device and int(c.item()) == count
    same(torch, v[:count], torch.masked_select(x, keep))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        x2 = x * 2
        v, ix, count2 = warpgen.compact(x2, "x > 2")
    torch.cuda.synchronize()
    assert count2 == count
    same(torch, v, torch.masked_select(x2, x2 > 2))


def test_refusals(torch):
    x = data(torch, "float32", 1000, "bad").reshape(20, 50)
    with pytest.raises(warpgen.ArrayError):
        warpgen.compact(x.t(), "x > 0")
    with pytest.raises(warpgen.SpecError):
        warpgen.compact(x, "x > q")
    with pytest.raises(warpgen.ArrayError):
        warpgen.compact((x, x[:10]), "y > 0")


def test_cupy(cupy):
    x = cupy.arange(-5000, 5000, dtype=cupy.float32)
    values, indices, count = warpgen.compact(x, "x > p0", p0=1.5)
    want = x[x > 1.5]
    assert count == want.size
    assert bool((values == want).all())
    assert bool((indices == cupy.nonzero(x > 1.5)[0]).all())


def test_cuda_array_interface_input(torch):
    # An array that is neither torch nor CuPy: the outputs are warpgen's
    # DeviceArray, narrowed to the count like the others.
    x = data(torch, "float32", 5_000, "cai")

    class Plain:
        __cuda_array_interface__ = x.__cuda_array_interface__

    torch.cuda.synchronize()
    values, indices, count = warpgen.compact(Plain(), "x > 0.5")
    keep = x > 0.5
    assert count == int(keep.sum())
    assert values.shape == (count,) and indices.shape == (count,)
    assert np.array_equal(values.to_host(),
                          torch.masked_select(x, keep).cpu().numpy())
    assert np.array_equal(indices.to_host(),
                          torch.nonzero(keep).flatten().cpu().numpy())
