"""Shared fixtures: the GPU gate and a private disk cache.

GPU tests ask for the `torch_cuda` (or `cupy`) fixture. It skips where torch
or CUDA is missing; where torch sees a GPU, a warpgen failure to use it is a
failure, not a skip, so the suite never passes vacuously on a GPU machine.
"""

import importlib.util
import os
import tempfile

import pytest

# Tests must not fill the user's cache folder; a caller (CI, the device run)
# may point WARPGEN_CACHE_DIR at a warm one instead.
if "WARPGEN_CACHE_DIR" not in os.environ:
    os.environ["WARPGEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="warpgen-test-")


# The GPU tests compute their references with numpy. Without numpy they are
# left out, unless torch is installed (and so perhaps a GPU): then they fail
# to import, loudly, rather than pass by not running.
if importlib.util.find_spec("numpy") is None and \
        importlib.util.find_spec("torch") is None:
    collect_ignore_glob = ["test_gpu_*.py"]


@pytest.fixture(scope="session")
def torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible to torch")
    return torch


@pytest.fixture(scope="session")
def cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA device visible to CuPy")
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA device visible to CuPy")
    return cupy


@pytest.fixture
def has_driver():
    """True where the CUDA driver loads and sees a device."""
    import warpgen
    try:
        warpgen.device_info()
        return True
    except warpgen.NoDeviceError:
        return False
