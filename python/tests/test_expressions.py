"""Reductions with expressions from Python: the spec text the package
builds (quotes, escapes, parameter slots and types), what the library
makes of it with no GPU (canonical text, source), ReductionKernel's
renaming, and, with torch and a GPU, results against numpy on fresh random
data (outputs poisoned first, sizes around the boundaries)."""

import pytest

import warpgen
from warpgen import expressions
from warpgen.errors import SpecError


def test_quote_escapes_quotes_and_backslashes():
    assert expressions.quote('x * "y"') == '"x * \\"y\\""'
    assert expressions.quote("a\\b") == '"a\\\\b"'


def test_rename_swaps_at_once_and_leaves_functions():
    assert expressions.rename("abs(y - x) + x1", {"x": "y", "y": "x"}) == \
        "abs(x - y) + x1"


def test_parameter_slots_types_and_names():
    names, values = expressions.order_params({"scale": 2.0, "p0": 3})
    assert names == {"scale": "p1"} and values == [3, 2.0]
    assert [expressions.param_type(v) for v in values] == ["i64", "f64"]
    with pytest.raises(SpecError, match="p0 is missing"):
        expressions.order_params({"p1": 1.0})


def test_parameter_values_must_fit_their_type():
    """ctypes keeps only the low bits of a too-wide integer: 2**64 + 5
    would have reached the kernel as 5. It is refused instead."""
    out, n = expressions.scalars([2**63 - 1, -2**63, 0.5, True])
    assert n == 4 and (out[0].i64, out[1].i64, out[2].f64, out[3].i64) == \
        (2**63 - 1, -2**63, 0.5, 1)
    for bad in (2**63, -2**63 - 1, 2**64 + 5):
        with pytest.raises(SpecError, match="does not fit i64"):
            expressions.scalars([1, bad])


def test_spec_text_round_trips_through_the_library():
    text = expressions.spec_text("reduce-array", ["f32", "f32"], "sum",
                                 map="(x-y)*(x-y)*p0", params=[0.5])
    assert text == ('reduce-array f32 sum map="(x-y)*(x-y)*p0" '
                    'inputs=f32,f32 params=f64')
    spec = warpgen.Spec(text)
    assert str(spec) == ('reduce-array f32 sum map="(x - y) * (x - y) * p0" '
                         'inputs=f32,f32 params=f64')
    src = warpgen.source(spec)
    assert "wg_load_y(wg_in.y[wg_at])" in src
    assert "(x-y)" not in src  # only the tree's rendering reaches source


def test_bad_expressions_name_the_problem():
    with pytest.raises(SpecError, match="map expression"):
        warpgen.Spec('reduce-array f32 sum map="x +"')
    with pytest.raises(SpecError, match="p0"):
        warpgen.Spec('reduce-array f32 sum map="x * p0"')


def test_reduction_kernel_in_warpgen_names():
    k = warpgen.ReductionKernel("T u, T v, T scale", "T out",
                                "(u - v) * (u - v) * scale", "a + b",
                                "out = sqrt(a / n)", "0", "rms")
    assert k.expressions(2) == ("(x - y) * (x - y) * p0", "a + b", "0",
                                "sqrt(r / n)")
    text = expressions.spec_text("reduce-array", ["f32", "f32"],
                                 None, map=k.expressions(2)[0],
                                 combine="a + b", identity="0",
                                 final="sqrt(f32(r) / f32(n))",
                                 params=[1.0])
    assert str(warpgen.Spec(text)).startswith(
        'reduce-array f32 map="(x - y) * (x - y) * p0"')


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


def test_gpu_results_match_numpy(torch):
    import numpy as np
    rng = np.random.default_rng()
    for n in (0, 1, 7, 8, 9, 4095, 4096, 4097, 100_003):
        a = rng.standard_normal(n).astype(np.float64)
        b = rng.standard_normal(n).astype(np.float64)
        x, y = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        got = warpgen.reduce((x, y), map="(x - y) * (x - y) * w8",
                             w8=0.25)
        want = float(np.sum((a - b) ** 2) * 0.25)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
        assert warpgen.reduce(x, map="x * x") == \
            pytest.approx(float(np.sum(a * a)), rel=1e-12, abs=1e-12)
        m = warpgen.reduce(x, combine="a > b ? a : b", identity="-1e300")
        assert m == (float(a.max()) if n else -1e300)
    rows = torch.from_numpy(rng.standard_normal((37, 129))).cuda()
    out = torch.full((37,), float("nan"), dtype=torch.float64, device="cuda")
    warpgen.reduce_rows(rows, "max", map="abs(x) * p0", p0=2.0, out=out)
    assert np.array_equal(out.cpu().numpy(),
                          np.abs(rows.cpu().numpy()).max(axis=1) * 2.0)
    k = warpgen.ReductionKernel("T x", "T y", "x * x", "a + b",
                                "y = sqrt(a)", "0", "l2norm")
    assert k(rows[0]) == pytest.approx(
        float(np.sqrt(np.sum(rows[0].cpu().numpy() ** 2))), rel=1e-12)
