"""The C oracle (tests/oracle.h) through liboracle.so, as the GPU tests use
it (refs.check_warp, refs.check_reduce): right outputs pass, outputs a
little off fail, and bad specs are refused. No GPU and no numpy needed."""

import ctypes
import os
import random
import statistics
from array import array

import pytest

import refs


@pytest.fixture(scope="module", autouse=True)
def lib():
    try:
        return refs.oracle()
    except OSError as e:
        if "WARPGEN_ORACLE_LIBRARY" in os.environ:
            raise
        pytest.skip(str(e))


def f32(x):
    return ctypes.c_float(x).value


def test_warp_integers_exact():
    x = array("i", range(10))
    out = array("i", [6, 22, 17])  # groups of 4, the last partial
    r = refs.check_warp("reduce i32 sum width=4", x, 10, out)
    assert (r.checked, r.mismatches) == (3, 0), r
    out[2] += 1
    r = refs.check_warp("reduce i32 sum width=4", x, 10, out)
    assert (r.mismatches, r.first_index) == (1, 2), r


def test_warp_float_scan_within_bound():
    rnd = random.Random(5)
    x = array("f", [f32(rnd.uniform(-1, 1)) for _ in range(37)])
    out = array("f")
    for start in range(0, 37, 8):
        acc = 0.0
        for v in x[start:start + 8]:
            acc = f32(acc + v)
            out.append(acc)
    r = refs.check_warp("scan f32 sum width=8", x, 37, out)
    assert (r.checked, r.mismatches) == (37, 0), r
    out[36] += 1e-3  # far past c(n) u S1
    r = refs.check_warp("scan f32 sum width=8", x, 37, out)
    assert r.mismatches == 1 and b"bound" in r.first, r


def test_warp_refuses_bad_and_reduction_specs():
    x = array("f", [0.0] * 4)
    for spec in ("reduce f32 plus", "reduce-array f32 sum"):
        with pytest.raises(ValueError):
            refs.check_warp(spec, x, 4, x)


def test_rows_var_with_correction():
    rnd = random.Random(9)
    rows = [[rnd.uniform(-1, 7) for _ in range(5)] for _ in range(3)]
    x = array("d", [v for row in rows for v in row])
    for params, var in (((), statistics.variance),
                        ((0.0,), statistics.pvariance)):
        out = array("d", [var(row) for row in rows])
        r = refs.check_reduce("f64", "var", x, 3, 5, out, params)
        assert (r.checked, r.mismatches) == (3, 0), r
        out[1] *= 1 + 1e-12  # thousands of ulps
        r = refs.check_reduce("f64", "var", x, 3, 5, out, params)
        assert (r.mismatches, r.first_index) == (1, 1), r


def test_rows_argmax_index_and_empty_rows():
    x = array("i", [1, 5, 5, 2, 0, 0, 0, 0])
    out = array("q", [1, 0])  # first index on ties, as i64
    r = refs.check_reduce("i32", "argmax", x, 2, 4, out)
    assert (r.checked, r.mismatches) == (2, 0), r
    # argmax of empty rows has no answer: the call must be refused.
    r = refs.check_reduce("i32", "argmax", x, 2, 0, out)
    assert r.mismatches == 2, r
