"""Contexts as an interpreter uses them: several per process, one per
thread, created and destroyed many times, errors that do not stick. No GPU
needed."""

import os

import pytest

import warpgen
from concurrency import in_threads

SPEC = "reduce f32 sum width=16 variant=xor arch=sm_90"


def test_package_facts():
    assert warpgen.__version__.count(".") == 2
    assert os.path.exists(warpgen.library_path)


def test_error_classes():
    assert issubclass(warpgen.SpecError, warpgen.Error)
    assert issubclass(warpgen.NoDeviceError, warpgen.Error)
    assert issubclass(warpgen.DTypeError, warpgen.ArrayError)
    assert issubclass(warpgen.DTypeError, TypeError)
    assert issubclass(warpgen.ArrayError, ValueError)
    from warpgen.errors import error_for
    for status, cls in [(-1, warpgen.InvalidArgumentError),
                        (-2, warpgen.SpecError),
                        (-5, warpgen.CompileError),
                        (-6, warpgen.NoDeviceError),
                        (-7, warpgen.NoDeviceError),
                        (-8, warpgen.CudaError),
                        (-9, warpgen.ArchError),
                        (-14, warpgen.LaunchError)]:
        e = error_for(status)
        assert type(e) is cls and e.status == status and str(e)
    assert error_for(-6).code == "WG_ENODRIVER"


def test_context_options(tmp_path):
    with warpgen.Context(cache_dir=tmp_path / "c") as ctx:
        assert ctx.cache_dir == str(tmp_path / "c")
        ctx.ptx(SPEC)
        ctx.ptx(SPEC)
        stats = ctx.cache_stats()
        assert stats.enabled and stats.compiles + stats.disk_hits >= 1
        assert stats.entries >= 1
        ctx.cache_clear()
        assert ctx.cache_stats().entries == 0
    with warpgen.Context(disk_cache=False) as ctx:
        assert ctx.cache_dir is None
        assert not ctx.cache_stats().enabled


def test_context_options_are_checked():
    """ctypes would keep only the low bits of a wider integer (device
    2**32 would be device 0): such options are refused."""
    for kw in ({"device": 2**32}, {"device": -1}, {"device": 1.5},
               {"device": True}, {"cache_max_bytes": -1},
               {"cache_max_bytes": 2**64}):
        with pytest.raises(warpgen.InvalidArgumentError, match="Context"):
            warpgen.Context(**kw)
    with warpgen.Context() as ctx:
        for bad in (2**32, -1, 0.5):
            with pytest.raises(warpgen.InvalidArgumentError, match="ordinal"):
                ctx.device_info(bad)


def test_disk_cache_shared_between_contexts(tmp_path):
    with warpgen.Context(cache_dir=tmp_path) as a:
        a.cubin(SPEC)
    with warpgen.Context(cache_dir=tmp_path) as b:
        b.cubin(SPEC)
        stats = b.cache_stats()
        assert stats.disk_hits >= 1 and stats.compiles == 0


def test_close_is_final_and_idempotent():
    ctx = warpgen.Context()
    ctx.source(SPEC)
    ctx.close()
    ctx.close()
    assert ctx.closed
    with pytest.raises(warpgen.Error, match="closed"):
        ctx.source(SPEC)


def test_errors_do_not_poison_the_next_call():
    ctx = warpgen.Context()
    with pytest.raises(warpgen.SpecError):
        ctx.source("reduce f32 xor")
    assert "integer" in ctx.errmsg
    assert "wg_reduce_f32_sum_w16_xor" in ctx.source(SPEC)
    assert ctx.errmsg == ""
    with pytest.raises(warpgen.SpecError):
        warpgen.ptx("reduce f32 sum width=7")
    assert ".entry" in warpgen.ptx(SPEC)


def test_a_context_per_thread():
    seen = {}

    def work(i):
        ctx = warpgen.default_context(None)
        assert ctx is warpgen.default_context(None)
        text = f"scan {('f32', 'f64', 'i32', 'u64')[i % 4]} sum " \
               f"width={2 ** (1 + i % 5)} arch=sm_90"
        for _ in range(3):
            assert ".entry" in warpgen.ptx(text)
        seen[i] = ctx  # kept alive, so that ids cannot be reused

    assert not in_threads(work, 8)
    assert len({id(ctx) for ctx in seen.values()}) == 8
    assert warpgen.default_context(None) not in seen.values()


def test_shared_context_between_threads():
    ctx = warpgen.Context()

    def work(i):
        for _ in range(20):
            with pytest.raises(warpgen.SpecError):
                ctx.source("reduce f32 and")
            assert "__global__" in ctx.source(SPEC)

    assert not in_threads(work, 4)
    ctx.close()


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"),
                    reason="needs /proc")
def test_create_destroy_does_not_leak():
    def cycle(count):
        for _ in range(count):
            with warpgen.Context() as ctx:
                ctx.source(SPEC)
                spec = warpgen.Spec("reduce i32 xor width=8", context=ctx)
                assert spec.width == 8
            ctx = warpgen.Context()  # and one left to the collector
            del ctx

    cycle(200)  # warm up the allocator and caches
    before = _rss_bytes()
    cycle(1000)
    grown = _rss_bytes() - before
    assert grown < 4 * 1024 * 1024, f"RSS grew by {grown} bytes"


def test_device_functions_without_a_device(has_driver):
    if has_driver:
        pytest.skip("a CUDA driver and device are present")
    with pytest.raises(warpgen.NoDeviceError) as info:
        warpgen.device_info()
    assert info.value.code in ("WG_ENODRIVER", "WG_ENODEVICE")
    assert "libcuda" in str(info.value) or "device" in str(info.value)
    # And the context is still good for compiling.
    assert ".entry" in warpgen.ptx(SPEC)


def test_a_missing_library_says_where_it_looked():
    import subprocess
    import sys
    package_parent = os.path.dirname(os.path.dirname(warpgen.__file__))
    env = dict(os.environ, WARPGEN_LIBRARY="/nonexistent/libwarpgen.so",
               PYTHONPATH=package_parent)
    done = subprocess.run([sys.executable, "-c", "import warpgen"], env=env,
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "ImportError" in done.stderr
    assert "/nonexistent/libwarpgen.so" in done.stderr
    assert "WARPGEN_LIBRARY" in done.stderr
