"""Many GPUs in one process: each device gets its own context (the calling
thread's default context for the array's device), two devices used from
two threads at once give the right answers, and devices of one
architecture share the disk cache (the second device's first call is a
disk hit, not a compile). Skips with fewer than 2 GPUs."""

import tempfile

import pytest

import warpgen
from concurrency import in_threads


@pytest.fixture(scope="module")
def torch(torch_cuda):
    if torch_cuda.cuda.device_count() < 2:
        pytest.skip("fewer than 2 CUDA devices")
    return torch_cuda


def _data(torch, device):
    g = torch.Generator().manual_seed(7 + device)
    return (torch.rand(1_000_003, generator=g) * 4 - 1).to(f"cuda:{device}")


def _check(torch, device, ctx=None):
    x = _data(torch, device)
    x64 = x.double()
    assert abs(warpgen.reduce(x, "sum", context=ctx) - float(x64.sum())) <= \
        1e-4 * float(x64.abs().sum())
    assert warpgen.reduce(x, "argmax", context=ctx) == int(torch.argmax(x))
    assert abs(warpgen.reduce(x, "var", context=ctx) - float(x64.var())) <= \
        1e-4 * float(x64.var())


def test_two_devices_from_two_threads(torch):
    ctxs = {}

    def work(device):
        torch.cuda.set_device(device)
        for _ in range(20):
            _check(torch, device)
        ctxs[device] = warpgen.default_context(device)
    errors = in_threads(work, 2)
    assert not errors, errors
    assert ctxs[0] is not ctxs[1]
    assert ctxs[0].device_info().ordinal == 0
    assert ctxs[1].device_info().ordinal == 1


def test_one_disk_cache_for_one_architecture(torch):
    folder = tempfile.mkdtemp(prefix="warpgen-multi-")
    first = warpgen.Context(cache_dir=folder, device=0)
    second = warpgen.Context(cache_dir=folder, device=1)
    with torch.cuda.device(0):
        _check(torch, 0, first)
    with torch.cuda.device(1):
        _check(torch, 1, second)
    assert first.cache_stats().compiles > 0
    if first.device_info().arch == second.device_info().arch:
        assert second.cache_stats().compiles == 0, second.cache_stats()
        assert second.cache_stats().disk_hits > 0
    first.close()
    second.close()
