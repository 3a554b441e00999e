"""The operators of issue 9 on PyTorch tensors, with PyTorch as the
reference: argmin/argmax (first index, NaN wins), mean/var/std (with a
correction), the norms, logsumexp and count_nonzero, whole arrays and rows,
their output dtypes, NaNs, ties and empty inputs. Skips without torch or a
GPU; fails where a GPU is present and warpgen cannot use it."""

import math

import pytest

import warpgen

FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
INT_DTYPES = ["int32", "int64"]
SIZES = [1, 2, 31, 33, 1000, 4097, 100_003]


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


def data(torch, dtype, n, seed, ties=False):
    g = torch.Generator(device="cpu").manual_seed(seed)
    if ties or dtype.startswith("int"):
        x = torch.randint(-8, 9, (n,), generator=g)
    else:
        x = torch.rand(n, generator=g, dtype=torch.float64) * 8 - 1
    return x.to(getattr(torch, dtype)).cuda()


def close(torch, got, want, dtype):
    """float results within the oracle's bound (tests/oracle.h), scaled for
    PyTorch's own rounding; NaN matches NaN, infinities exactly."""
    got = float(got)
    # The exact answer rounded to the output dtype first: a float16 norm1
    # of 100003 elements is past float16's range, inf for PyTorch too.
    want = torch.tensor(float(want), dtype=torch.float64).to(
        getattr(torch, dtype)).item()
    if math.isnan(want) or math.isinf(want):
        return (math.isnan(got) and math.isnan(want)) or got == want
    eps = {"float16": 2**-10, "bfloat16": 2**-7, "float32": 2**-20,
           "float64": 2**-48}.get(dtype, 2**-20)
    return abs(got - want) <= 8 * eps * (abs(want) + 1)


REFS = {
    "mean": lambda torch, x: x.mean(),
    "var": lambda torch, x: x.var(),
    "std": lambda torch, x: x.std(),
    "norm1": lambda torch, x: torch.linalg.vector_norm(x, 1),
    "norm2": lambda torch, x: torch.linalg.vector_norm(x, 2),
    "norminf": lambda torch, x: torch.linalg.vector_norm(x, float("inf")),
    "logsumexp": lambda torch, x: torch.logsumexp(x, 0),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES)
@pytest.mark.parametrize("op", ["argmin", "argmax", "count_nonzero"])
def test_indices_and_counts_are_exact(torch, dtype, op):
    for n in SIZES:
        x = data(torch, dtype, n, n, ties=True)
        if dtype in FLOAT_DTYPES and n > 5:
            x[n // 3] = float("nan") if op != "count_nonzero" else 0
        want = getattr(torch, op)(x).item()
        assert warpgen.reduce(x, op) == want, (dtype, op, n)
        rows = x[: (n // 7) * 7].reshape(-1, 7) if n >= 7 else x.reshape(1, -1)
        got = warpgen.reduce_rows(rows, op)
        assert got.dtype == torch.int64
        wantr = getattr(torch, op)(rows, dim=1)
        assert torch.equal(got, wantr), (dtype, op, n)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", sorted(REFS))
def test_floats_match_torch(torch, dtype, op):
    for n in SIZES:
        x = data(torch, dtype, n, 7 * n + 1)
        want = REFS[op](torch, x.double()).item()
        assert close(torch, warpgen.reduce(x, op), want, dtype), (dtype, op, n)
        rows = x[: (n // 5) * 5].reshape(-1, 5) if n >= 5 else x.reshape(1, -1)
        got = warpgen.reduce_rows(rows, op)
        assert got.dtype == x.dtype  # PyTorch's rule: the input's dtype
        wantr = torch.stack([REFS[op](torch, r.double()) for r in rows])
        for g, w in zip(got.double().tolist(), wantr.tolist()):
            assert close(torch, g, w, dtype), (dtype, op, n)


def test_logsumexp_of_integers_is_f32(torch):
    x = data(torch, "int32", 1000, 3)
    got = warpgen.reduce_rows(x.reshape(10, 100), "logsumexp")
    assert got.dtype == torch.float32
    want = torch.logsumexp(x.reshape(10, 100).double(), 1)
    assert torch.allclose(got.double(), want, rtol=1e-6)


def test_correction_is_an_argument(torch):
    x = data(torch, "float32", 5000, 11)
    for c in (0, 1, 2.5):
        assert close(torch, warpgen.var(x, correction=c),
                     torch.var(x.double(), correction=c).item(), "float32")
        assert close(torch, warpgen.std(x, correction=c),
                     torch.std(x.double(), correction=c).item(), "float32")
    assert math.isnan(warpgen.var(x[:1]))  # n - 1 == 0 and M2 == 0


def test_empty_inputs(torch):
    e = torch.empty(0, device="cuda")
    assert math.isnan(warpgen.mean(e))
    assert math.isnan(warpgen.var(e))
    assert warpgen.logsumexp(e) == float("-inf")
    assert warpgen.count_nonzero(e) == 0
    assert warpgen.norm(e, 2) == 0
    for op in ("argmax", "argmin", "norminf"):
        with pytest.raises(warpgen.InvalidArgumentError):
            warpgen.reduce(e, op)


def test_the_helpers_match_torch(torch):
    m = data(torch, "float32", 64 * 300, 5).reshape(64, 300)
    m[3, 17] = float("nan")
    assert torch.equal(warpgen.argmax(m, dim=1), torch.argmax(m, dim=1))
    assert warpgen.argmax(m) == torch.argmax(m).item()
    assert torch.allclose(warpgen.mean(m, dim=-1), m.mean(1), equal_nan=True)
    with pytest.raises(warpgen.SpecError):
        warpgen.mean(data(torch, "int32", 10, 1))
