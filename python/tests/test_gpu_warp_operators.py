"""The warp reduce, allreduce and scans with the operators of issue 9 and
with expressions, on PyTorch tensors, with PyTorch's row reductions over
groups of `width` as the reference (a group is a row of x.view(-1, width);
the last, partial group a row of its own). argmin/argmax give the global
index. Skips without torch or a GPU."""

import math

import pytest

import warpgen

from test_gpu_operators import close, data

WIDTHS = [2, 8, 32]
SIZES = [1, 31, 1000, 4099]


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


def groups(torch, x, width):
    """The groups of x as (rows of the full groups, the partial tail)."""
    full = x.numel() // width * width
    return x[:full].view(-1, width), x[full:]


def per_group(torch, x, width, fn):
    """fn over each group's elements (a 2-D view, dim 1), as a list."""
    body, tail = groups(torch, x, width)
    out = list(fn(body).double().cpu()) if body.numel() else []
    if tail.numel():
        out += list(fn(tail.view(1, -1)).double().cpu())
    return [float(v) for v in out]


ROW_REFS = {
    "mean": lambda torch, m: m.mean(1),
    "var": lambda torch, m: m.var(1),
    "std": lambda torch, m: m.std(1),
    "norm2": lambda torch, m: torch.linalg.vector_norm(m, 2, dim=1),
    "norminf": lambda torch, m: torch.linalg.vector_norm(m, float("inf"), dim=1),
    "logsumexp": lambda torch, m: torch.logsumexp(m, 1),
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("op", ["argmin", "argmax", "count_nonzero"])
def test_indices_and_counts(torch, op, dtype, width):
    for n in SIZES:
        x = data(torch, dtype, n, seed=n * 7 + width, ties=True)
        got = warpgen.warp_reduce(x, op, width=width)
        assert got.dtype == torch.int64
        if op == "count_nonzero":
            want = per_group(torch, x, width, lambda m: (m != 0).sum(1))
        else:
            fn = getattr(torch, op)
            local = per_group(torch, x, width, lambda m: fn(m, 1))
            want = [g * width + j for g, j in enumerate(local)]
        assert [int(v) for v in got.cpu()] == [int(v) for v in want], (op, n)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(ROW_REFS))
def test_statistics(torch, op, dtype, width):
    for n in SIZES:
        x = data(torch, dtype, n, seed=n * 11 + width)
        got = warpgen.warp_reduce(x, op, width=width).double().cpu()
        want = per_group(torch, x, width, lambda m: ROW_REFS[op](torch, m))
        for g, (a, b) in enumerate(zip(got, want)):
            assert close(torch, a, b, dtype), (op, n, g, float(a), b)
        every = warpgen.warp_allreduce(x, op, width=width, variant="xor")
        assert every.shape == x.shape
        for i in range(0, n, max(1, n // 37)):
            assert close(torch, every[i], want[i // width], dtype), (op, n, i)


def test_var_correction(torch):
    x = data(torch, "float32", 1000, seed=5)
    got = warpgen.warp_reduce(x, "var", width=16, correction=0).double().cpu()
    want = per_group(torch, x, 16, lambda m: m.var(1, correction=0))
    assert all(close(torch, a, b, "float32") for a, b in zip(got, want))


def test_map_two_inputs_and_parameters(torch):
    x = data(torch, "float32", 4099, seed=1)
    y = data(torch, "float32", 4099, seed=2)
    got = warpgen.warp_reduce((x, y), "sum", map="(x - y) * (x - y) * s",
                              width=8, s=0.5)
    want = per_group(torch, (x - y) * (x - y) * 0.5, 8, lambda m: m.sum(1))
    assert all(close(torch, a, b, "float32") for a, b in zip(got, want))
    # A new parameter value compiles nothing (it is a kernel argument).
    ctx = warpgen.default_context(x.device.index)
    before = ctx.cache_stats()
    warpgen.warp_reduce((x, y), "sum", map="(x - y) * (x - y) * s", width=8,
                        s=2.0)
    after = ctx.cache_stats()
    assert after.compiles + after.disk_hits == before.compiles + before.disk_hits


def test_scans_with_combine(torch):
    x = data(torch, "int32", 1000, seed=3)
    got = warpgen.warp_scan(x, combine="max(a, b)", identity="-100", width=16)
    want = torch.cat([torch.cummax(x[k:k + 16], 0).values
                      for k in range(0, 1000, 16)])
    assert torch.equal(got, want)
    with pytest.raises(warpgen.SpecError):
        warpgen.warp_scan(x, "argmax")


def test_final_over_a_combine(torch):
    x = data(torch, "int32", 1000, seed=4).abs()
    got = warpgen.warp_reduce(x.to(torch.int32), combine="a + b", identity="0",
                              final="f64(r) / f64(n)", width=32)
    assert got.dtype == torch.float64
    want = per_group(torch, x.double(), 32, lambda m: m.mean(1))
    assert all(math.isclose(float(a), b, rel_tol=1e-12) for a, b in zip(got.cpu(), want))
