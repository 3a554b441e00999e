"""warpgen on PyTorch tensors, with torch (and numpy, for integer
wrap-around) as the reference: every type and operator, sizes that are
empty or not multiples of the width, rows, the warp primitives, streams,
threads, out= and the arrays warpgen must refuse. Skips without torch or a
GPU; fails where a GPU is present and warpgen cannot use it."""

import math
import zlib

import numpy as np
import pytest

import warpgen
from concurrency import in_threads
from refs import (ACC_EPS, FLOAT_OPS, FLOATS, INT_OPS, INTS, NUMPY,
                  STORE_RTOL, check_reduce, check_warp, float_tolerance,
                  identity, int_reduce, random_data, warp_reference)

CASES = [(t, op) for t in FLOATS for op in FLOAT_OPS] + \
        [(t, op) for t in INTS for op in INT_OPS]
SIZES = [0, 1, 31, 33, 1000, 4097, 100_003]


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


def seeded(*key):
    """A random generator that gives the same data on every run."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def to_device(torch, host, type_):
    """A CUDA tensor of warpgen type `type_` from host data."""
    if type_ == "bf16":
        return torch.from_numpy(np.asarray(host, np.float32)).cuda() \
            .to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(host, NUMPY[type_])).cuda()


def to_host(t):
    """A tensor as numpy; floating types widened to float64."""
    t = t.detach()
    return (t.double() if t.is_floating_point() else t).cpu().numpy()


def raw(torch, t):
    """A tensor's elements as numpy, bits unchanged (halves as int16), for
    the C oracle (refs.check_warp, refs.check_reduce)."""
    t = t.detach().contiguous()
    if t.is_floating_point() and t.element_size() == 2:
        t = t.view(torch.int16)
    return t.cpu().numpy()


def torch_reduce(torch, x, op, dim=None):
    """torch's answer for a float reduction, in float64."""
    x64 = x.double()
    if op == "sum":
        return torch.sum(x64) if dim is None else torch.sum(x64, dim=dim)
    if op == "prod":
        return torch.prod(x64) if dim is None else torch.prod(x64, dim=dim)
    if op == "max":
        return torch.amax(x) if dim is None else torch.amax(x, dim=dim)
    return torch.amin(x) if dim is None else torch.amin(x, dim=dim)


def check_float(got, ref, type_, op, absum, n):
    """min and max are exact; sums and products within rounding."""
    if op in ("min", "max"):
        assert got == ref, (got, ref)
        return
    if op == "sum":
        tol = float_tolerance(type_, ref, absum, n)
    else:  # relative errors of n products add up like a random walk
        tol = (STORE_RTOL[type_] + 8 * math.sqrt(n) * ACC_EPS[type_]) * \
            abs(ref)
    assert abs(got - ref) <= tol, (got, ref, tol)


@pytest.mark.parametrize("type_, op", CASES)
def test_reduce_against_torch(torch, type_, op):
    rng = seeded(type_, op)
    for n in SIZES + [int(rng.integers(2, 300_000))]:
        host = random_data(rng, type_, op, n)
        x = to_device(torch, host, type_)
        got = warpgen.reduce(x, op)
        if n == 0:
            assert got == identity(type_, op), (type_, op, got)
            continue
        if type_ in FLOATS:
            assert isinstance(got, float)
            ref = float(torch_reduce(torch, x, op))
            absum = float(torch.sum(x.double().abs()))
            check_float(got, ref, type_, op, absum, n)
        else:
            assert isinstance(got, int)
            ref = int(int_reduce(to_host(x), type_, op))
            assert got == ref, (type_, op, n, got, ref)


def test_reduce_multidimensional_and_transposed(torch):
    x = torch.randn(37, 129, device="cuda")
    ref = float(torch.sum(x.double()))
    assert abs(warpgen.reduce(x) - ref) < 1e-3
    assert abs(warpgen.reduce(x.t()) - ref) < 1e-3  # dense: no copy needed
    assert warpgen.reduce(x[5:9], "max") == float(torch.amax(x[5:9]))


@pytest.mark.parametrize("type_, op", CASES)
def test_reduce_rows_against_torch(torch, type_, op):
    rng = seeded("rows", type_, op)
    shapes = [(0, 5), (3, 0), (1, 1), (7, 33), (64, 1000), (5, 70_001),
              (int(rng.integers(1, 300)), int(rng.integers(1, 3000)))]
    for rows, cols in shapes:
        host = random_data(rng, type_, op, rows * (cols + 3)).reshape(
            rows, cols + 3)
        padded = to_device(torch, host, type_)
        for x in (padded[:, :cols].contiguous(), padded[:, :cols]):
            out = warpgen.reduce_rows(x, op)
            assert isinstance(out, torch.Tensor)
            assert out.shape == (rows,) and out.dtype == x.dtype
            assert out.device == x.device
            got = to_host(out)
            if cols == 0:
                assert all(v == identity(type_, op) for v in got.tolist())
                continue
            report = check_reduce(type_, op, raw(torch, x), rows, cols,
                                  raw(torch, out))
            assert report.mismatches == 0 and report.checked == rows, \
                (type_, op, rows, cols, report)
            if rows == 0:
                continue
            if type_ in FLOATS:
                ref = to_host(torch_reduce(torch, x, op, dim=1))
                absum = to_host(torch.sum(x.double().abs(), dim=1))
                for r in range(rows):
                    check_float(got[r], ref[r], type_, op, absum[r], cols)
            else:
                ref = int_reduce(to_host(x), type_, op, axis=1)
                np.testing.assert_array_equal(got, ref)


def test_reduce_rows_sum_matches_torch_sum_dim1(torch):
    x = torch.randn(300, 1000, device="cuda")
    out = torch.empty(300, device="cuda")
    assert warpgen.reduce_rows(x, "sum", out=out) is out
    torch.testing.assert_close(out, torch.sum(x, dim=1), rtol=1e-5,
                               atol=1e-4)


# The warp primitives: per type, one spec of each kind, at several widths.
FLOAT_WARPS = [("reduce", "sum", 32), ("reduce", "max", 8),
               ("allreduce", "min", 16), ("scan", "sum", 4),
               ("exscan", "prod", 32), ("broadcast", None, 8),
               ("ballot", None, 32), ("any", None, 16), ("all", None, 8),
               ("match", None, 32)]
INT_WARPS = [("reduce", "sum", 32), ("reduce", "xor", 8),
             ("allreduce", "min", 16), ("scan", "sum", 4),
             ("exscan", "prod", 32), ("allreduce", "and", 2),
             ("broadcast", None, 8), ("ballot", None, 32), ("any", None, 16),
             ("all", None, 8), ("match", None, 32)]
WARP_CASES = [(t, *w) for t in FLOATS for w in FLOAT_WARPS] + \
             [(t, *w) for t in INTS for w in INT_WARPS]
FUNCTIONS = {"reduce": warpgen.warp_reduce, "allreduce": warpgen.warp_allreduce,
             "scan": warpgen.warp_scan, "exscan": warpgen.warp_exscan}


def vote_data(rng, type_, n):
    """Few distinct values, zeros among them: votes and matches that are
    neither all nor none."""
    values = [0, 3, 5] if type_ in INTS else [0.0, 1.5, -2.0]
    return rng.choice(np.array(values), n)


def run_primitive(x, primitive, op, width):
    if primitive in FUNCTIONS:
        return FUNCTIONS[primitive](x, op, width=width)
    if primitive == "broadcast":
        return warpgen.warp_broadcast(x, 3, width=width)
    return {"ballot": warpgen.ballot, "any": warpgen.any,
            "all": warpgen.all, "match": warpgen.match}[primitive](
                x, width=width)


@pytest.mark.parametrize("type_, primitive, op, width", WARP_CASES)
def test_warp_primitives(torch, type_, primitive, op, width):
    rng = seeded(type_, primitive, op, width)
    for n in (0, 1, 33, 1000, 4099):
        if op is None:
            host = vote_data(rng, type_, n)
        else:
            host = random_data(rng, type_, op, n)
        x = to_device(torch, host, type_)
        out = run_primitive(x, primitive, op, width)
        assert isinstance(out, torch.Tensor) and out.is_cuda
        got = to_host(out).ravel()
        ref = warp_reference(to_host(x), type_, primitive, op, width, lane=3)
        assert got.shape == ref.shape, (got.shape, ref.shape)
        if type_ in FLOATS and op in ("sum", "prod"):
            absmax = float(np.abs(to_host(x)).max()) if n else 0.0
            for g, r in zip(got.tolist(), ref.tolist()):
                scale = width * absmax if op == "sum" else abs(r)
                assert abs(g - r) <= float_tolerance(type_, r, scale, width), \
                    (primitive, op, width, n, g, r)
        else:
            np.testing.assert_array_equal(got, ref,
                                          err_msg=f"{primitive} {op} {n}")
        spec = f"{primitive} {type_}{' ' + op if op else ''} width={width}"
        if primitive == "broadcast":
            spec += " lane=3"
        report = check_warp(spec, raw(torch, x), n, raw(torch, out))
        assert report.mismatches == 0 and report.checked == got.size, \
            (spec, n, report)


def test_warp_with_a_spec_and_out(torch):
    x = torch.arange(100, dtype=torch.float32, device="cuda")
    spec = warpgen.Spec("scan f32 sum width=8 variant=up")
    out = torch.full((100,), -1.0, device="cuda")
    assert warpgen.warp(x, spec, out=out) is out
    ref = warp_reference(x.cpu().numpy(), "f32", "scan", "sum", 8)
    np.testing.assert_allclose(out.cpu().numpy(), ref, rtol=1e-6)
    y = warpgen.warp(x.reshape(10, 10), "allreduce f32 max width=4")
    assert y.shape == (10, 10)
    assert warpgen.ballot(x).dtype == torch.uint32
    assert warpgen.any(x).dtype == torch.int32


def test_reduce_out_is_asynchronous_and_checked(torch):
    x = torch.ones(1000, device="cuda")
    out = torch.empty(1, device="cuda")
    assert warpgen.reduce(x, "sum", out=out) is out
    assert float(out) == 1000.0
    with pytest.raises(warpgen.DTypeError):
        warpgen.reduce(x, out=torch.empty(1, dtype=torch.float64,
                                          device="cuda"))
    with pytest.raises(warpgen.ArrayError, match="elements"):
        warpgen.reduce(x, out=torch.empty(2, device="cuda"))


def test_out_is_checked(torch):
    x = torch.randn(8, 64, device="cuda")
    with pytest.raises(warpgen.DTypeError):
        warpgen.reduce_rows(x, out=torch.empty(8, dtype=torch.float64,
                                               device="cuda"))
    with pytest.raises(warpgen.ArrayError, match="shape"):
        warpgen.reduce_rows(x, out=torch.empty(9, device="cuda"))
    with pytest.raises(warpgen.ArrayError, match="contiguous"):
        warpgen.reduce_rows(x, out=torch.empty(16, device="cuda")[::2])
    with pytest.raises(warpgen.ArrayError, match="cpu"):
        warpgen.reduce_rows(x, out=torch.empty(8))
    with pytest.raises(warpgen.ArrayError, match="shape"):
        warpgen.warp_scan(x, out=torch.empty(512, device="cuda"))


def test_refused_tensors(torch):
    with pytest.raises(warpgen.ArrayError, match="cpu"):
        warpgen.reduce(torch.ones(4))
    for dtype in (torch.bool, torch.int8, torch.uint8, torch.int16,
                  torch.complex64):
        x = torch.zeros(4, dtype=dtype, device="cuda")
        with pytest.raises(warpgen.DTypeError, match="no warpgen type"):
            warpgen.reduce(x)
        with pytest.raises(warpgen.DTypeError):
            warpgen.warp_scan(x)
    x = torch.randn(16, 16, device="cuda")
    # A layout with gaps is read (through the dims path since stop 45).
    assert abs(warpgen.reduce(x[:, ::2]) - float(x[:, ::2].double().sum())) < 1e-4
    with pytest.raises(warpgen.ArrayError, match="C-contiguous"):
        warpgen.warp_reduce(x.t())
    with pytest.raises(warpgen.ArrayError, match="column"):
        warpgen.reduce_rows(x.t())
    with pytest.raises(warpgen.SpecError):
        warpgen.reduce(x, "xor")  # bitwise on floats: the library says no
    # None of that stuck: the next call works.
    assert warpgen.reduce(torch.ones(7, device="cuda")) == 7.0


def test_spec_for_another_architecture(torch):
    major, minor = torch.cuda.get_device_capability()
    other = 80 if major * 10 + minor != 80 else 90
    x = torch.ones(64, device="cuda")
    with pytest.raises(warpgen.ArchError):
        warpgen.warp(x, f"reduce f32 sum arch=sm_{other}")
    assert float(warpgen.warp_reduce(x).sum()) == 64.0


def test_streams_are_honoured(torch):
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        # Work queued on `stream` that the reduction must wait for.
        x = torch.ones(1 << 24, device="cuda") * 2
        total = warpgen.reduce(x, "sum")
        rows = warpgen.reduce_rows(x.view(1 << 12, 1 << 12), "max")
        scan = warpgen.warp_scan(x[:64], width=32)
    stream.synchronize()
    assert total == float(1 << 25)
    assert bool((rows == 2).all())
    assert scan[31].item() == 64.0


def test_threads_each_with_their_context(torch):
    results = {}

    def work(i):
        torch.cuda.set_device(0)
        x = torch.full((10_000 + i,), float(i), device="cuda")
        results[i] = (warpgen.reduce(x, "max"),
                      float(warpgen.reduce_rows(x.view(1, -1)).item()))

    errors = in_threads(work, 6)
    assert not errors, errors
    for i, (peak, total) in results.items():
        assert peak == float(i)
        assert total == float(i) * (10_000 + i)


def test_own_contexts_side_by_side(torch):
    x = torch.arange(1, 21, dtype=torch.int64, device="cuda")
    with warpgen.Context(disk_cache=False) as a:
        b = warpgen.Context()
        assert a.reduce(x) == 210
        assert b.reduce(x, "max") == 20
        assert warpgen.reduce(x, "min") == 1
    # a is closed: b and the default context go on.
    assert b.reduce(x, "prod") == math.factorial(20)
    assert a.closed
    with pytest.raises(warpgen.Error, match="closed"):
        a.reduce(x)
    b.close()
    for _ in range(50):  # create, use, destroy, again
        with warpgen.Context() as c:
            assert c.reduce(x) == 210


def test_dlpack_only_arrays(torch):
    x = torch.arange(64, dtype=torch.float32, device="cuda")

    class OnlyDLPack:
        def __dlpack__(self, stream=None):
            return x.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return x.__dlpack_device__()

    assert warpgen.reduce(OnlyDLPack()) == float(sum(range(64)))
    out = warpgen.warp_reduce(OnlyDLPack(), width=16)
    assert isinstance(out, warpgen.DeviceArray)
    as_torch = torch.as_tensor(out, device="cuda")  # no copy
    assert as_torch.data_ptr() == out.ptr
    ref = x.view(4, 16).sum(dim=1)
    torch.testing.assert_close(as_torch, ref)
    np.testing.assert_allclose(out.to_host(), ref.cpu().numpy())


def test_outputs_are_shared_with_cupy_without_copy(torch):
    cupy = pytest.importorskip("cupy")
    out = warpgen.warp_scan(torch.ones(64, device="cuda"))
    view = cupy.asarray(out)
    assert view.data.ptr == out.data_ptr()
    assert float(view[31]) == 32.0


def test_device_info(torch):
    info = warpgen.device_info()
    major, minor = torch.cuda.get_device_capability()
    assert info.arch == major * 10 + minor
    assert info.device_count == torch.cuda.device_count()
    assert info.name
