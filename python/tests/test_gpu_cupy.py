"""warpgen on CuPy arrays: one case per function, against CuPy and the numpy
references. Outputs must be CuPy arrays on the input's device. Skips without
CuPy or a GPU."""

import numpy as np
import pytest

import warpgen
from refs import warp_reference


@pytest.fixture(scope="module")
def cp(cupy):
    return cupy


def test_reduce(cp):
    x = cp.random.rand(100_003, dtype=cp.float32)
    assert abs(warpgen.reduce(x) - float(cp.sum(x, dtype=cp.float64))) < 1e-2
    xi = cp.arange(-500, 500, dtype=cp.int64)
    assert warpgen.reduce(xi, "min") == -500
    assert warpgen.reduce(xi, "max") == int(cp.max(xi))
    out = cp.empty(1, dtype=cp.int64)
    assert warpgen.reduce(xi, "sum", out=out) is out
    assert int(out[0]) == int(cp.sum(xi))


def test_reduce_rows(cp):
    x = cp.random.rand(300, 1003).astype(cp.float64)
    out = warpgen.reduce_rows(x, "sum")
    assert isinstance(out, cp.ndarray) and out.dtype == cp.float64
    cp.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-12)
    padded = cp.arange(40 * 50, dtype=cp.uint32).reshape(40, 50)[:, :33]
    cp.testing.assert_array_equal(warpgen.reduce_rows(padded, "max"),
                                  padded.max(axis=1))


@pytest.mark.parametrize("name, call", [
    ("reduce", lambda x: warpgen.warp_reduce(x, "sum", width=16)),
    ("allreduce", lambda x: warpgen.warp_allreduce(x, "max", width=8)),
    ("scan", lambda x: warpgen.warp_scan(x, "sum", width=32)),
    ("exscan", lambda x: warpgen.warp_exscan(x, "sum", width=4)),
    ("broadcast", lambda x: warpgen.warp_broadcast(x, 3, width=8)),
    ("ballot", lambda x: warpgen.ballot(x, width=32)),
    ("any", lambda x: warpgen.any(x, width=16)),
    ("all", lambda x: warpgen.all(x, width=4)),
    ("match", lambda x: warpgen.match(x, width=32)),
])
def test_warp_primitives(cp, name, call):
    host = np.random.default_rng(7).choice(np.array([0, 2, 5], np.int32),
                                           1001)
    x = cp.asarray(host)
    out = call(x)
    assert isinstance(out, cp.ndarray)
    assert out.device.id == x.device.id
    op = {"reduce": "sum", "allreduce": "max", "scan": "sum",
          "exscan": "sum"}.get(name)
    width = {"reduce": 16, "allreduce": 8, "scan": 32, "exscan": 4,
             "broadcast": 8, "ballot": 32, "any": 16, "all": 4,
             "match": 32}[name]
    ref = warp_reference(host, "i32", name, op, width, lane=3)
    np.testing.assert_array_equal(cp.asnumpy(out).ravel(), ref)


def test_cupy_stream_is_honoured(cp):
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        # Partial sums stay below 2^24: exact in float32.
        x = cp.ones(1 << 22, dtype=cp.float32) * 3
        total = warpgen.reduce(x)
        rows = warpgen.reduce_rows(x.reshape(1 << 11, 1 << 11), "min")
    stream.synchronize()
    assert total == float(3 << 22)
    assert bool((rows == 3).all())


def test_refused(cp):
    with pytest.raises(warpgen.DTypeError):
        warpgen.reduce(cp.zeros(4, dtype=cp.int8))
    with pytest.raises(warpgen.DTypeError):
        warpgen.reduce(cp.zeros(4, dtype=cp.complex64))
    assert warpgen.reduce(cp.ones(5, dtype=cp.float32)) == 5.0


def test_whole_array_of_any_layout(cp):
    # dim=None reads layouts with gaps and negative strides (refused before
    # stop 45) by way of the dims path, and counts indices row-major.
    m = cp.arange(64, dtype=cp.float32).reshape(8, 8)
    for x in (m[:, ::2], m[::-1], m.T[::-1, 1:], m[::-2, ::3]):
        assert warpgen.reduce(x) == float(x.sum())
        assert warpgen.reduce(x, "argmax") == int(cp.argmax(x))
        assert warpgen.reduce(x, "argmin") == int(cp.argmin(x))
