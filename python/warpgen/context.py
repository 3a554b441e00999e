"""Context: one wg_context, and the per-thread default contexts.

A wg_context must be used by one thread at a time, and it binds to one CUDA
device the first time it touches the GPU. So the module-level functions use a
default context per (thread, device), kept in a threading.local; a Context
made by hand may be shared between threads, since every C call on it holds
its lock (ctypes releases the GIL during the call).
"""

import atexit
import ctypes
import threading
import weakref

from . import _lib
from ._lib import lib
from .arrays import integer
from .errors import Error, InvalidArgumentError, NoDeviceError, error_for


class CacheStats:
    """The disk and memory cache counters of a context (wg_cache_stats)."""

    __slots__ = ("memory_hits", "disk_hits", "compiles", "evictions",
                 "disk_errors", "entries", "bytes", "max_bytes", "enabled",
                 "last_error")

    def __init__(self, c):
        for name in self.__slots__:
            value = getattr(c, name)
            setattr(self, name, value.decode() if isinstance(value, bytes)
                    else value)
        self.enabled = bool(self.enabled)

    def __repr__(self):
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"CacheStats({fields})"


class DeviceInfo:
    """What the CUDA driver says about a device (wg_device_info)."""

    __slots__ = ("driver_version", "device_count", "ordinal", "arch",
                 "sm_count", "memory_bytes", "name")

    def __init__(self, c):
        for name in self.__slots__:
            value = getattr(c, name)
            setattr(self, name, value.decode() if isinstance(value, bytes)
                    else value)

    def __repr__(self):
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"DeviceInfo({fields})"


def _take_bytes(ptr, length):
    """Copies `length` bytes the library returned, then frees its copy."""
    try:
        return ctypes.string_at(ptr, length)
    finally:
        lib.wg_free(ptr)


class Context:
    """A warpgen context: its caches, its CUDA device and loaded kernels.

    Context(cache_dir=None, disk_cache=None, device=0, cache_max_bytes=0,
    template_dir=None). disk_cache None follows WARPGEN_CACHE, True/False
    force it on/off. `device` is the CUDA ordinal used for arrays. Close it
    with close() or a with-block; the garbage collector closes it too.
    """

    def __init__(self, cache_dir=None, disk_cache=None, device=0,
                 cache_max_bytes=0, template_dir=None):
        # ctypes would keep only the low bits of a wider integer
        if integer(device) is None or not 0 <= integer(device) < 2**31:
            raise InvalidArgumentError(f"Context: device must be a CUDA "
                                       f"ordinal (an integer from 0), not "
                                       f"{device!r}")
        if integer(cache_max_bytes) is None or \
                not 0 <= integer(cache_max_bytes) < 2**64:
            raise InvalidArgumentError(f"Context: cache_max_bytes must be an "
                                       f"integer from 0 (0: the default), not "
                                       f"{cache_max_bytes!r}")
        device = integer(device)
        options = _lib.wg_options()
        lib.wg_options_init(options)
        options.device = device
        # Kept on self: the C library copies them, but only at create time.
        self._cache_dir_b = None if cache_dir is None else str(cache_dir).encode()
        self._template_dir_b = (None if template_dir is None
                                else str(template_dir).encode())
        options.cache_dir = self._cache_dir_b
        options.template_dir = self._template_dir_b
        options.disk_cache = {None: 0, True: 1, False: -1}[
            None if disk_cache is None else bool(disk_cache)]
        options.cache_max_bytes = integer(cache_max_bytes)
        handle = ctypes.c_void_p()
        status = lib.wg_context_create(ctypes.byref(handle), options)
        if status != _lib.WG_OK:
            raise error_for(status, "wg_context_create: " +
                            _lib.strerror(status))
        self._handle = handle.value
        self._lock = threading.Lock()
        self.device = device
        self._bound = False       # set once bound to its CUDA device
        self._scratch = 0         # 8 device bytes for scalar results
        self._specs = {}          # (text) -> parsed wg_spec, for fast paths

    # --- life cycle -------------------------------------------------------

    def close(self):
        """Frees the context and everything it loaded. Idempotent."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            handle, self._handle = self._handle, None
            if handle is None:
                return
            if self._scratch:
                lib.wg_mem_free(handle, self._scratch)
                self._scratch = 0
            lib.wg_context_destroy(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to report to
            pass

    @property
    def closed(self):
        return self._handle is None

    def __repr__(self):
        state = "closed" if self.closed else f"device={self.device}"
        return f"<warpgen.Context {state}>"

    # --- calling C --------------------------------------------------------

    def _live(self):
        if self._handle is None:
            raise Error("this warpgen.Context is closed", _lib.WG_EINVAL)
        return self._handle

    def _error(self, status):
        message = lib.wg_errmsg(self._handle)
        return error_for(status, message.decode(errors="replace")
                         if message else None)

    def call(self, fn, *args):
        """Calls C function `fn`(ctx, *args) under the lock; raises the
        status as an Error with the context's message."""
        with self._lock:
            status = fn(self._live(), *args)
            if status != _lib.WG_OK:
                raise self._error(status)

    @property
    def errmsg(self):
        """The message of the last failed call ("" after a success)."""
        with self._lock:
            return lib.wg_errmsg(self._live()).decode(errors="replace")

    # --- specs ------------------------------------------------------------

    def parse_spec(self, text):
        """Parses and validates spec text into a C wg_spec."""
        c = _lib.wg_spec()
        lib.wg_spec_init(c)
        self.call(lib.wg_spec_parse, ctypes.byref(c), str(text).encode())
        return c

    def validate_spec(self, c):
        self.call(lib.wg_spec_validate, ctypes.byref(c))

    def c_spec(self, spec):
        """The wg_spec behind a Spec, or parsed from text (memoised: the
        array functions name the same few specs again and again)."""
        c = getattr(spec, "_c", None)
        if c is not None:
            return c
        c = self._specs.get(spec)
        if c is None:
            if len(self._specs) > 4096:
                self._specs.clear()
            c = self._specs[spec] = self.parse_spec(spec)
        return c

    def spec_list(self, arch=0):
        """Every valid spec with an explicit variant, as Spec objects."""
        from .spec import Spec, _arch_value, copy_spec
        out = ctypes.POINTER(_lib.wg_spec)()
        count = ctypes.c_size_t()
        self.call(lib.wg_spec_list, ctypes.byref(out), ctypes.byref(count),
                  _arch_value(arch))
        try:
            return [Spec._from_c(copy_spec(out[i]))
                    for i in range(count.value)]
        finally:
            lib.wg_free(out)

    # --- generating and compiling (no GPU needed) -------------------------

    def source(self, spec):
        """The CUDA source for spec, as a str."""
        out = ctypes.c_void_p()
        self.call(lib.wg_source, ctypes.byref(out),
                  ctypes.byref(self.c_spec(spec)))
        try:
            return ctypes.string_at(out).decode()
        finally:
            lib.wg_free(out)

    def ptx(self, spec):
        """The PTX for spec, as a str (NVRTC, or the disk cache)."""
        out, length = ctypes.c_void_p(), ctypes.c_size_t()
        self.call(lib.wg_ptx, ctypes.byref(out), ctypes.byref(length),
                  ctypes.byref(self.c_spec(spec)))
        return _take_bytes(out, length.value).decode()

    def cubin(self, spec):
        """The cubin (an ELF image) for spec, as bytes."""
        out, length = ctypes.c_void_p(), ctypes.c_size_t()
        self.call(lib.wg_cubin, ctypes.byref(out), ctypes.byref(length),
                  ctypes.byref(self.c_spec(spec)))
        return _take_bytes(out, length.value)

    def sass(self, spec):
        """The SASS of spec's cubin, through nvdisasm or cuobjdump."""
        from .spec import Spec
        from .tools import disassemble
        text = str(Spec._from_c(self.c_spec(spec)))
        return disassemble(self.cubin(spec), text)

    def nvrtc_version(self):
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.call(lib.wg_nvrtc_version, ctypes.byref(major),
                  ctypes.byref(minor))
        return (major.value, minor.value)

    def supported_archs(self):
        """The architectures this NVRTC compiles for, e.g. [75, 80, ...]."""
        out = ctypes.POINTER(ctypes.c_int)()
        count = ctypes.c_size_t()
        self.call(lib.wg_supported_archs, ctypes.byref(out),
                  ctypes.byref(count))
        try:
            return [out[i] for i in range(count.value)]
        finally:
            lib.wg_free(out)

    # --- arrays (the module functions, on this context) -------------------

    def reduce(self, x, op="sum", *, out=None):
        """warpgen.reduce on this context."""
        from . import ops
        return ops.reduce(x, op, out=out, context=self)

    def reduce_rows(self, x, op="sum", *, out=None):
        """warpgen.reduce_rows on this context."""
        from . import ops
        return ops.reduce_rows(x, op, out=out, context=self)

    def warp(self, x, spec, *, out=None):
        """warpgen.warp on this context."""
        from . import ops
        return ops.warp(x, spec, out=out, context=self)

    # --- the cache --------------------------------------------------------

    @property
    def cache_dir(self):
        """The disk cache folder, or None when the disk cache is off."""
        with self._lock:
            path = lib.wg_cache_dir(self._live())
        return path.decode() if path else None

    def cache_stats(self):
        c = _lib.wg_cache_stats()
        self.call(lib.wg_cache_stats_get, ctypes.byref(c))
        return CacheStats(c)

    def cache_clear(self):
        self.call(lib.wg_cache_clear)

    def cache_prune(self, max_bytes=0):
        if integer(max_bytes) is None or not 0 <= integer(max_bytes) < 2**64:
            raise InvalidArgumentError(f"cache_prune: max_bytes must be an "
                                       f"integer from 0, not {max_bytes!r}")
        self.call(lib.wg_cache_prune, integer(max_bytes))

    # --- the device -------------------------------------------------------

    def device_info(self, ordinal=None):
        """DeviceInfo for this context's device, or for device `ordinal`."""
        c = _lib.wg_device_info()
        if ordinal is None:
            self.call(lib.wg_device_get_info, ctypes.byref(c))
        else:
            if integer(ordinal) is None or not 0 <= integer(ordinal) < 2**31:
                raise InvalidArgumentError(f"device_info: ordinal must be an "
                                           f"integer from 0, not {ordinal!r}")
            self.call(lib.wg_device_info_at, ctypes.byref(c), integer(ordinal))
        return DeviceInfo(c)

    def bind(self, device_guard=None):
        """Binds the context to its CUDA device, once.

        The C library adopts whatever CUDA context is current on first use,
        so the caller passes `device_guard`, a context manager that makes
        self.device current (torch.cuda.device, cupy.cuda.Device)."""
        if self._bound:
            return
        if device_guard is None:
            info = self.device_info()
        else:
            with device_guard:
                info = self.device_info()
        if info.ordinal != self.device:
            raise NoDeviceError(
                f"this warpgen.Context is for CUDA device {self.device}, but "
                f"CUDA device {info.ordinal} was current when it first used "
                "the GPU; make the array's device current (torch.cuda.device,"
                " cupy.cuda.Device) or use a Context(device=...) per device",
                _lib.WG_ENODEVICE)
        self._bound = True

    def reduce_to_host(self, launch, stream, size):
        """launch(handle, scratch) (a wg_reduce_ex or wg_reduce_spec call
        that writes one value to the device word `scratch`, returning the
        status) into this context's scratch word, then copies it back (raw
        bytes). One lock hold for both, so threads that share the context
        never share the word; the copy waits for the stream."""
        buf = ctypes.create_string_buffer(8)
        with self._lock:
            handle = self._live()
            status = _lib.WG_OK
            if not self._scratch:
                word = ctypes.c_uint64()
                status = lib.wg_mem_alloc(handle, ctypes.byref(word), 8)
                self._scratch = word.value if status == _lib.WG_OK else 0
            if status == _lib.WG_OK:
                status = launch(handle, self._scratch)
            if status == _lib.WG_OK:
                status = lib.wg_memcpy_dtoh(handle, buf, self._scratch, size,
                                            stream)
            if status != _lib.WG_OK:
                raise self._error(status)
        return buf.raw[:size]


# --- the default contexts -------------------------------------------------

_local = threading.local()
# Every default context alive, so that they are closed before the CUDA
# runtimes of torch or CuPy tear down at exit.
_all_defaults = weakref.WeakSet()


def default_context(device=0):
    """The calling thread's context for CUDA device `device`; device None
    is the thread's context for generating and compiling only, so that an
    arch=0 spec never binds an array context to the wrong device."""
    contexts = getattr(_local, "contexts", None)
    if contexts is None:
        contexts = _local.contexts = {}
    ctx = contexts.get(device)
    if ctx is None or ctx.closed:
        ctx = contexts[device] = Context(device=device or 0)
        _all_defaults.add(ctx)
    return ctx


@atexit.register
def _close_defaults():
    for ctx in list(_all_defaults):
        ctx.close()
