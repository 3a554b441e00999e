"""Loads libwarpgen with ctypes and declares the C functions and structs.

This is the only module that knows the C ABI of include/warpgen.h: struct
layouts, argument types and status codes. Everything else in the package
goes through the names defined here.

Loading libwarpgen maps neither NVRTC nor the CUDA driver (the library
loads each on the first call that needs it), so `import warpgen` costs a
few milliseconds; keep heavy imports out of module level.
"""

import ctypes
import os

# Status codes (enum in warpgen.h).
WG_OK = 0
WG_EINVAL = -1
WG_ESPEC = -2
WG_ENOMEM = -3
WG_ETEMPLATE = -4
WG_ECOMPILE = -5
WG_ENODRIVER = -6
WG_ENODEVICE = -7
WG_ECUDA = -8
WG_EARCH = -9
WG_EALIGN = -10
WG_ERANGE = -11
WG_EIO = -12
WG_ENOTFOUND = -13
WG_ELAUNCH = -14

WG_SPEC_VERSION = 4
WG_OPTIONS_VERSION = 1


class wg_spec(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_int),
        ("primitive", ctypes.c_int),
        ("type", ctypes.c_int),
        ("op", ctypes.c_int),
        ("width", ctypes.c_int),
        ("variant", ctypes.c_int),
        ("arch", ctypes.c_int),
        ("lane", ctypes.c_int),
        ("cols", ctypes.c_int64),
        ("layout", ctypes.c_int),
        ("map", ctypes.c_char_p),
        ("combine", ctypes.c_char_p),
        ("identity", ctypes.c_char_p),
        ("final", ctypes.c_char_p),
        ("ninputs", ctypes.c_int),
        ("inputs", ctypes.c_int * 4),
        ("nparams", ctypes.c_int),
        ("params", ctypes.c_int * 8),
        ("bins", ctypes.c_int64),
        ("counts", ctypes.c_int),
        ("deterministic", ctypes.c_int),
    ]


class wg_options(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_int),
        ("device", ctypes.c_int),
        ("cache_dir", ctypes.c_char_p),
        ("disk_cache", ctypes.c_int),
        ("cache_max_bytes", ctypes.c_uint64),
        ("template_dir", ctypes.c_char_p),
    ]


class wg_cache_stats(ctypes.Structure):
    _fields_ = [
        ("memory_hits", ctypes.c_uint64),
        ("disk_hits", ctypes.c_uint64),
        ("compiles", ctypes.c_uint64),
        ("evictions", ctypes.c_uint64),
        ("disk_errors", ctypes.c_uint64),
        ("entries", ctypes.c_uint64),
        ("bytes", ctypes.c_uint64),
        ("max_bytes", ctypes.c_uint64),
        ("enabled", ctypes.c_int),
        ("last_error", ctypes.c_char * 256),
    ]


class wg_device_info(ctypes.Structure):
    _fields_ = [
        ("driver_version", ctypes.c_int),
        ("device_count", ctypes.c_int),
        ("ordinal", ctypes.c_int),
        ("arch", ctypes.c_int),
        ("sm_count", ctypes.c_int),
        ("memory_bytes", ctypes.c_uint64),
        ("name", ctypes.c_char * 128),
    ]


WG_REDUCTION_VERSION = 1
WG_MAX_PARAMS = 8


class wg_reduction(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_int),
        ("type", ctypes.c_int),
        ("op", ctypes.c_int),
        ("ninputs", ctypes.c_int),
    ]


class wg_scalar(ctypes.Union):
    _fields_ = [
        ("f64", ctypes.c_double),
        ("f32", ctypes.c_float),
        ("i64", ctypes.c_int64),
        ("u64", ctypes.c_uint64),
        ("i32", ctypes.c_int32),
        ("u32", ctypes.c_uint32),
    ]


WG_ACCUMULATOR_MAX_FIELDS = 4


class wg_accumulator_field(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_int),
        ("offset", ctypes.c_size_t),
    ]


class wg_accumulator_layout(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("align", ctypes.c_size_t),
        ("nfields", ctypes.c_int),
        ("fields", wg_accumulator_field * WG_ACCUMULATOR_MAX_FIELDS),
        ("native", ctypes.c_int),
    ]


class wg_launch_config(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_int),
        ("block_size", ctypes.c_uint),
        ("grid_size", ctypes.c_uint),
    ]


def _candidates():
    """Where libwarpgen may be, in the order tried; a generator, so that the
    system's search (ctypes.util, which imports subprocess and may run
    ldconfig) is asked only when the package's own copy is missing."""
    env = os.environ.get("WARPGEN_LIBRARY")
    if env:
        # An explicit choice: no silent fallback to another copy.
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libwarpgen.so")
    import ctypes.util
    system = ctypes.util.find_library("warpgen")
    if system:
        yield system
    yield "libwarpgen.so.0"


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (no such file)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError(
        "warpgen: cannot load libwarpgen; tried: " + "; ".join(tried) +
        ". Install the package with 'pip install .' from the repository, or "
        "set WARPGEN_LIBRARY to a built libwarpgen.so (e.g. build/libwarpgen.so)")


lib, path = _load()

_P = ctypes.POINTER
_ctx = ctypes.c_void_p
_u64 = ctypes.c_uint64
_int = ctypes.c_int
_size = ctypes.c_size_t
_str = ctypes.c_char_p
_vp = ctypes.c_void_p

_SIGNATURES = {
    "wg_version": (_str, []),
    "wg_version_number": (_int, []),
    "wg_strerror": (_str, [_int]),
    "wg_spec_init": (None, [_P(wg_spec)]),
    "wg_primitive_name": (_str, [_int]),
    "wg_type_name": (_str, [_int]),
    "wg_operator_name": (_str, [_int]),
    "wg_variant_name": (_str, [_int]),
    "wg_layout_name": (_str, [_int]),
    "wg_type_size": (_size, [_int]),
    "wg_options_init": (None, [_P(wg_options)]),
    "wg_context_create": (_int, [_P(_ctx), _P(wg_options)]),
    "wg_context_destroy": (None, [_ctx]),
    "wg_errmsg": (_str, [_ctx]),
    "wg_free": (None, [_vp]),
    "wg_spec_parse": (_int, [_ctx, _P(wg_spec), _str]),
    "wg_spec_format": (_int, [_str, _size, _P(wg_spec)]),
    "wg_spec_validate": (_int, [_ctx, _P(wg_spec)]),
    "wg_spec_resolve_variant": (_int, [_P(wg_spec)]),
    "wg_spec_list": (_int, [_ctx, _P(_P(wg_spec)), _P(_size), _int]),
    "wg_supported_archs": (_int, [_ctx, _P(_P(_int)), _P(_size)]),
    "wg_nvrtc_version": (_int, [_ctx, _P(_int), _P(_int)]),
    "wg_source": (_int, [_ctx, _P(_vp), _P(wg_spec)]),
    "wg_ptx": (_int, [_ctx, _P(_vp), _P(_size), _P(wg_spec)]),
    "wg_cubin": (_int, [_ctx, _P(_vp), _P(_size), _P(wg_spec)]),
    "wg_kernel_name": (_int, [_str, _size, _P(wg_spec)]),
    "wg_cache_dir": (_str, [_ctx]),
    "wg_cache_stats_get": (_int, [_ctx, _P(wg_cache_stats)]),
    "wg_cache_clear": (_int, [_ctx]),
    "wg_cache_prune": (_int, [_ctx, _u64]),
    "wg_device_get_info": (_int, [_ctx, _P(wg_device_info)]),
    "wg_device_info_at": (_int, [_ctx, _P(wg_device_info), _int]),
    "wg_mem_alloc": (_int, [_ctx, _P(_u64), _size]),
    "wg_mem_free": (_int, [_ctx, _u64]),
    "wg_memcpy_htod": (_int, [_ctx, _u64, _vp, _size, _vp]),
    "wg_memcpy_dtoh": (_int, [_ctx, _vp, _u64, _size, _vp]),
    "wg_memset_d8": (_int, [_ctx, _u64, ctypes.c_ubyte, _size, _vp]),
    "wg_stream_sync": (_int, [_ctx, _vp]),
    "wg_kernel_get": (_int, [_ctx, _P(_vp), _P(wg_spec)]),
    "wg_warp_launch": (_int, [_ctx, _vp, _u64, _u64, _u64, _vp,
                              _P(wg_launch_config)]),
    "wg_warp": (_int, [_ctx, _P(wg_spec), _u64, _u64, _u64, _vp]),
    "wg_warp_launch_ex": (_int, [_ctx, _vp, _P(_u64), _size, _u64,
                                 _P(wg_scalar), _size, _u64, _vp,
                                 _P(wg_launch_config)]),
    "wg_warp_ex": (_int, [_ctx, _P(wg_spec), _P(_u64), _size, _u64,
                          _P(wg_scalar), _size, _u64, _vp]),
    "wg_output_shape": (_int, [_P(_u64), _P(_size), _P(wg_spec), _u64]),
    "wg_reduce": (_int, [_ctx, _int, _int, _u64, _u64, _u64, _vp]),
    "wg_reduce_rows": (_int, [_ctx, _int, _int, _u64, _u64, _u64, _u64, _u64,
                              _vp]),
    "wg_reduce_output_type": (_int, [_int, _int]),
    "wg_reduction_init": (None, [_P(wg_reduction)]),
    "wg_reduce_ex": (_int, [_ctx, _P(wg_reduction), _P(_u64), _size, _u64,
                            _P(wg_scalar), _size, _u64, _vp]),
    "wg_reduce_rows_ex": (_int, [_ctx, _P(wg_reduction), _P(_u64), _size,
                                 _u64, _u64, _u64, _P(wg_scalar), _size, _u64,
                                 _vp]),
    "wg_reduce_spec": (_int, [_ctx, _P(wg_spec), _P(_u64), _size, _u64,
                              _P(wg_scalar), _size, _u64, _vp]),
    "wg_reduce_rows_spec": (_int, [_ctx, _P(wg_spec), _P(_u64), _size, _u64,
                                   _u64, _u64, _P(wg_scalar), _size, _u64,
                                   _vp]),
    "wg_reduce_spec_output_type": (_int, [_P(wg_spec)]),
    "wg_compact": (_int, [_ctx, _P(wg_spec), _P(_u64), _size, _u64, _P(wg_scalar),
                          _size, _u64, _u64, _u64, _vp]),
    "wg_reduce_accumulator": (_int, [_P(wg_accumulator_layout), _P(wg_spec)]),
    "wg_reduce_partial": (_int, [_ctx, _P(wg_spec), _P(_u64), _size, _u64,
                                 ctypes.c_int64, _u64, _P(wg_scalar), _size,
                                 _u64, _vp]),
    "wg_reduce_combine": (_int, [_ctx, _P(wg_spec), _u64, _u64, _u64,
                                 _P(wg_scalar), _size, _u64, _vp]),
    "wg_histogram": (_int, [_ctx, _P(wg_spec), _u64, _u64, _P(wg_scalar),
                            _size, _u64, _vp]),
    "wg_softmax_rows": (_int, [_ctx, _int, _u64, _u64, _u64, _u64, _u64, _u64,
                               _vp]),
    "wg_log_softmax_rows": (_int, [_ctx, _int, _u64, _u64, _u64, _u64, _u64,
                                   _u64, _vp]),
    "wg_layer_norm_rows": (_int, [_ctx, _int, _u64, _u64, _u64, _u64, _u64,
                                  _u64, _u64, _u64, ctypes.c_double, _vp]),
    "wg_rms_norm_rows": (_int, [_ctx, _int, _u64, _u64, _u64, _u64, _u64, _u64,
                                _u64, ctypes.c_double, _vp]),
    "wg_rownorm_spec": (_int, [_ctx, _P(wg_spec), _u64, _u64, _u64, _u64, _u64,
                               _u64, _u64, _u64, ctypes.c_double, _vp]),
    "wg_reduce_axis": (_int, [_ctx, _P(wg_reduction), _P(_u64), _size, _int,
                              _P(ctypes.c_int64), _P(ctypes.c_int64),
                              _P(_int), _int, _P(wg_scalar), _size, _u64,
                              _vp]),
    "wg_reduce_axis_spec": (_int, [_ctx, _P(wg_spec), _P(_u64), _size, _int,
                                   _P(ctypes.c_int64), _P(ctypes.c_int64),
                                   _P(_int), _int, _P(wg_scalar), _size,
                                   _u64, _vp]),
    "wg_scan_array": (_int, [_ctx, _int, _int, _int, _u64, _u64, _u64, _vp]),
    "wg_scan_rows": (_int, [_ctx, _int, _int, _int, _u64, _u64, _u64, _u64, _u64,
                            _u64, _vp]),
    "wg_scan_array_spec": (_int, [_ctx, _P(wg_spec), _u64, _u64, _u64, _vp]),
    "wg_scan_rows_spec": (_int, [_ctx, _P(wg_spec), _u64, _u64, _u64, _u64, _u64,
                                 _u64, _vp]),
    "wg_scan_spec_output_type": (_int, [_P(wg_spec)]),
}

for _name, (_restype, _argtypes) in _SIGNATURES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _restype
    _fn.argtypes = _argtypes


def strerror(status):
    return lib.wg_strerror(status).decode()


def _names(fn):
    """The names of an enum, read from the library until it answers NULL."""
    out = []
    while True:
        name = fn(len(out))
        if name is None:
            return tuple(out)
        out.append(name.decode())


PRIMITIVES = _names(lib.wg_primitive_name)
TYPES = _names(lib.wg_type_name)
OPERATORS = _names(lib.wg_operator_name)
VARIANTS = _names(lib.wg_variant_name)
LAYOUTS = _names(lib.wg_layout_name)
TYPE_SIZES = {name: lib.wg_type_size(i) for i, name in enumerate(TYPES)}
