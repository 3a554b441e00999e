"""warpgen.histogram and warpgen.bincount on the GPU, against
torch.histc / torch.bincount and the C oracle (tests/oracle_hist.c through
liboracle.so): bins 1, 2, 255, 256, 65536 and 200000 (every method of the
kernel), sizes 0, 1 and across the vector and block edges, NaN, infinities,
lo, hi and out-of-range keys, keys piled into one bin, maps, poisoned
outputs and the errors. Skips without torch and a CUDA device."""

import ctypes

import pytest

import warpgen
from refs import OracleReport, oracle

BINS = (1, 2, 255, 256, 65536, 200000)
SIZES = (0, 1, 7, 33, 4097, (1 << 20) + 3)


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


def keys(torch, dtype, n, seed, lo=-3.0, hi=5.0, edges=True):
    """Uniform keys over [lo, hi] with, when edges, NaN, +-inf, lo, hi, the
    value just below hi and keys outside the range mixed in."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.rand(n, generator=g, dtype=torch.float64) * (hi - lo) + lo
    if edges and n:
        pick = torch.randint(0, 16, (n,), generator=g)
        below = torch.nextafter(torch.tensor(hi, dtype=torch.float64),
                                torch.tensor(lo, dtype=torch.float64))
        for k, value in enumerate((float("nan"), float("inf"), -float("inf"),
                                   lo, hi, below.item(), lo - 1.5, hi + 2.5)):
            x[pick == k] = value
    return x.to(getattr(torch, dtype)).cuda()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("bins", BINS)
def test_histogram_matches_histc(torch, dtype, bins):
    for k, n in enumerate(SIZES):
        x = keys(torch, dtype, n, seed=bins * 31 + k)
        # torch.histc rounds a half's steps to half; warpgen computes them in
        # f32, which histc of the same values as f32 does too
        want = torch.histc(x.float() if dtype == "float16" else x, bins, -3.0,
                           5.0).long()
        got = warpgen.histogram(x, bins, (-3.0, 5.0))
        assert got.dtype == torch.int64 and got.shape == (bins,)
        assert torch.equal(got, want), (dtype, bins, n)
        assert int(got.sum()) <= n


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_default_range(torch, dtype):
    """range None: (min, max) of x, as torch.histc(x, bins) (no NaN: torch
    refuses a NaN range, warpgen ignores NaN)."""
    for n in (1, 2, 1000, 100003):
        x = keys(torch, dtype, n, seed=n, edges=False)
        for bins in (1, 10, 256):
            assert torch.equal(warpgen.histogram(x, bins),
                               torch.histc(x, bins).long()), (n, bins)
    same = torch.full((100,), 2.5, dtype=getattr(torch, dtype), device="cuda")
    assert torch.equal(warpgen.histogram(same, 5), torch.histc(same, 5).long())
    empty = torch.empty(0, device="cuda")
    assert torch.equal(warpgen.histogram(empty, 3),
                       torch.zeros(3, dtype=torch.int64, device="cuda"))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_bincount_matches_torch(torch, dtype):
    g = torch.Generator(device="cpu").manual_seed(7)
    for n in (0, 1, 31, 4097, (1 << 20) + 5):
        for top in (1, 255, 256, 65536, 300000):
            x = torch.randint(0, top, (n,), generator=g).to(getattr(torch, dtype)).cuda()
            for minlength in (0, 10, top + 7):
                want = torch.bincount(x, minlength=minlength)
                got = warpgen.bincount(x, minlength=minlength)
                assert got.dtype == torch.int64
                assert torch.equal(got, want), (n, top, minlength)


def test_piled_keys(torch):
    """255 in 256 keys in one bin (the 16-bit counters wrap many times)."""
    n = 1 << 24
    g = torch.Generator(device="cpu").manual_seed(3)
    for bins in (256, 30000, 65536, 200000):
        x = torch.randint(0, bins, (n,), generator=g, dtype=torch.int32)
        x[torch.randint(0, 256, (n,), generator=g) != 0] = bins // 3
        x = x.cuda()
        assert torch.equal(warpgen.histogram(x, bins),
                           torch.bincount(x, minlength=bins)), bins
        f = (x.double() + 0.5).float()
        assert torch.equal(warpgen.histogram(f, bins, (0, bins)),
                           torch.histc(f, bins, 0, bins).long()), bins


def test_integer_keys_against_the_oracle(torch):
    """Integer keys are their bin: negative, past the end and huge keys are
    counted nowhere (the C oracle decides)."""
    lib = oracle()
    lib.wg_oracle_histogram.argtypes = [
        ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double,
        ctypes.c_double, ctypes.c_void_p, ctypes.c_uint64]
    lib.wg_oracle_hist_check.argtypes = [
        ctypes.POINTER(OracleReport), ctypes.c_int, ctypes.c_int64,
        ctypes.c_void_p, ctypes.c_void_p]
    lib.wg_oracle_hist_fill.argtypes = [
        ctypes.c_int, ctypes.c_int64, ctypes.c_double, ctypes.c_double,
        ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64]
    types = warpgen._lib.TYPES
    for type_, dtype in (("i32", torch.int32), ("i64", torch.int64)):
        for bins in BINS:
            n = 100003
            host = torch.empty(n, dtype=dtype)
            lib.wg_oracle_hist_fill(types.index(type_), bins, 0, 0, 3,
                                    host.data_ptr(), n, bins)
            want = torch.empty(bins, dtype=torch.int64)
            lib.wg_oracle_histogram(want.data_ptr(), types.index(type_), bins,
                                    0, 0, host.data_ptr(), n)
            got = warpgen.histogram(host.cuda(), bins).cpu()
            report = OracleReport()
            lib.wg_oracle_report_init(ctypes.byref(report))
            lib.wg_oracle_hist_check(ctypes.byref(report), types.index("u64"),
                                     bins, want.data_ptr(), got.data_ptr())
            assert report.mismatches == 0, (type_, bins, report.first)


def test_map_and_poisoned_out(torch):
    x = keys(torch, "float32", 100003, seed=11, lo=-1.0, hi=11.0)
    out = torch.full((100,), -7, dtype=torch.int64, device="cuda")
    got = warpgen.histogram(x, 100, map="i32(x * p0)", p0=torch.tensor(
        10.0, dtype=torch.float32), out=out)
    assert got is out
    # f32 product, then the language's cast: NaN -> 0, saturating
    b = torch.nan_to_num(x * 10.0, nan=0.0, posinf=2.0 ** 31, neginf=-2.0 ** 31)
    b = b.double().clamp(-2.0 ** 31, 2.0 ** 31 - 1).trunc().long()
    b = b[(b >= 0) & (b < 100)]
    assert torch.equal(out, torch.bincount(b, minlength=100))
    again = torch.full((65536,), 123, dtype=torch.int64, device="cuda")
    i = torch.randint(0, 65536, (5000,), device="cuda", dtype=torch.int32)
    warpgen.histogram(i, 65536, out=again)
    assert torch.equal(again, torch.bincount(i, minlength=65536))


def test_errors(torch):
    x = torch.rand(10, device="cuda")
    with pytest.raises(warpgen.ArrayError):
        warpgen.histogram(x, 0)
    with pytest.raises(warpgen.ArrayError):
        warpgen.histogram(x, 4, (0, float("inf")))
    with pytest.raises(warpgen.ArrayError):
        warpgen.histogram(x, 4, (2, 1))
    with pytest.raises(warpgen.DTypeError):
        warpgen.bincount(x)
    with pytest.raises(warpgen.ArrayError):
        warpgen.bincount(torch.tensor([1, -1, 2], device="cuda"))
    with pytest.raises(warpgen.ArrayError):
        warpgen.bincount(torch.zeros((2, 2), dtype=torch.int64, device="cuda"))
    with pytest.raises(warpgen.SpecError):
        warpgen.histogram(x, 4, map="x * 2.0")
    with pytest.raises(warpgen.SpecError):
        warpgen.histogram(x, 1 << 31, (0, 1))


def test_map_index_is_row_major(torch):
    # map= reads i; a transposed x is counted as its row-major order says.
    x = torch.randn(30, 40, device="cuda").t()
    flat = x.reshape(-1)  # row-major (a copy here)
    i = torch.arange(flat.numel(), device="cuda")
    want = torch.bincount((flat > 0).long() * (1 + i % 3), minlength=4)
    got = warpgen.histogram(x, 4, map="i32(x > 0) * (1 + i32(i % 3))")
    assert torch.equal(got, want)
