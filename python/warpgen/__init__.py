"""warpgen for Python: GPU warp kernels written at run time, on PyTorch,
CuPy and any CUDA Array Interface or DLPack array.

    import warpgen
    spec = warpgen.Spec("reduce f32 sum width=16 variant=xor")
    print(warpgen.ptx(spec))               # no GPU needed
    total = warpgen.reduce(x, "sum")       # x: a torch or CuPy array
    counts = warpgen.histogram(x, 256, (0.0, 1.0))
    sums = warpgen.reduce_rows(m, "max")   # one value per row

A thin ctypes layer over libwarpgen (include/warpgen.h); the functions here
use the calling thread's default Context, and every one of them is also a
method of Context for callers that manage their own.
"""

from . import _lib
from .arrays import DeviceArray
from .compact import compact
from .context import CacheStats, Context, DeviceInfo, default_context
from .errors import (AlignmentError, ArchError, ArrayError, CompileError,
                     CudaError, DTypeError, Error, FileError,
                     InvalidArgumentError, LaunchError, NoDeviceError,
                     NotFoundError, OutOfMemoryError, RangeError, SpecError,
                     TemplateError)
from .expressions import ReductionKernel
from .hist import bincount, histogram
from .ops import (argmax, argmin, ballot, count_nonzero, logsumexp, match,
                  mean, norm, reduce, reduce_rows, std, var, warp, warp_all,
                  warp_allreduce, warp_any, warp_broadcast, warp_exscan,
                  warp_reduce, warp_scan)
from .rownorm import layer_norm, log_softmax, rms_norm, softmax
from .scan import cummax, cummin, cumprod, cumsum, scan
from .spec import Spec
from .tools import find_disassembler

__version__ = _lib.lib.wg_version().decode()
library_path = _lib.path

PRIMITIVES = _lib.PRIMITIVES
TYPES = _lib.TYPES
OPERATORS = tuple(op for op in _lib.OPERATORS if op != "none")
VARIANTS = _lib.VARIANTS

# numpy's names for the votes; warp_any/warp_all stay for code that
# shadows the builtins.
any = warp_any
all = warp_all


def _context(context):
    return default_context(None) if context is None else context


def source(spec, *, context=None):
    """The CUDA source warpgen writes for spec (a Spec or its text)."""
    return _context(context).source(spec)


def ptx(spec, *, context=None):
    """The PTX of spec, compiled by NVRTC (or from the disk cache)."""
    return _context(context).ptx(spec)


def cubin(spec, *, context=None):
    """The cubin of spec: an ELF image, as bytes."""
    return _context(context).cubin(spec)


def sass(spec, *, context=None):
    """The SASS of spec, through nvdisasm or cuobjdump."""
    return _context(context).sass(spec)


def spec_list(arch=0, *, context=None):
    """Every valid spec with an explicit variant, for `arch` (0: unset)."""
    return _context(context).spec_list(arch)


def device_info(device=0):
    """The CUDA device `device`, as the driver describes it (NoDeviceError
    without a driver or device)."""
    return default_context(None).device_info(device)


__all__ = [
    "AlignmentError", "ArchError", "ArrayError", "CacheStats",
    "CompileError", "Context", "CudaError", "DTypeError", "DeviceArray",
    "DeviceInfo", "Error", "FileError", "InvalidArgumentError",
    "LaunchError", "NoDeviceError", "NotFoundError", "OPERATORS",
    "OutOfMemoryError", "PRIMITIVES", "RangeError", "Spec", "SpecError",
    "TYPES", "TemplateError", "VARIANTS", "all", "any", "argmax", "argmin",
    "ballot", "bincount", "compact", "count_nonzero", "cubin", "default_context",
    "device_info", "find_disassembler", "histogram", "layer_norm",
    "log_softmax", "logsumexp", "match", "mean", "norm", "ptx", "rms_norm",
    "softmax",
    "ReductionKernel", "reduce", "reduce_rows", "sass", "scan", "cumsum",
    "cumprod", "cummax", "cummin", "source", "spec_list", "std", "var",
    "warp",
    "warp_all", "warp_allreduce", "warp_any", "warp_broadcast",
    "warp_exscan", "warp_reduce", "warp_scan",
]
