"""What warpgen needs to know of a GPU array, from torch, CuPy, the CUDA
Array Interface or DLPack; and output arrays of the input's own kind.

view(x) reads a device pointer, warpgen type, shape, strides (in elements),
device and stream from x without copying anything. PyTorch tensors and CuPy
arrays take a fast path (their attributes are cheaper than building the
interface dict); any other object goes through __cuda_array_interface__,
then __dlpack__. Outputs are allocated with the input's library (torch.empty,
cupy.empty), so they are natively that type; other inputs get a DeviceArray.
"""

import ctypes
import operator
import sys

from . import _lib
from ._lib import lib
from .errors import ArrayError, DTypeError

_TYPESTRS = {"<f2": "f16", "<f4": "f32", "<f8": "f64", "<i4": "i32",
             "<u4": "u32", "<i8": "i64", "<u8": "u64"}
_TYPESTR_OF = {t: s for s, t in _TYPESTRS.items()}
_SUPPORTED = ("float16, bfloat16, float32, float64, int32, uint32, int64, "
              "uint64")
# DLPack (type code, bits) -> warpgen type.
_DLPACK_TYPES = {(2, 16): "f16", (4, 16): "bf16", (2, 32): "f32",
                 (2, 64): "f64", (0, 32): "i32", (1, 32): "u32",
                 (0, 64): "i64", (1, 64): "u64"}
_KDLCPU, _KDLCUDA, _KDLCUDAHOST, _KDLCUDAMANAGED = 1, 2, 3, 13


class ArrayView:
    """A GPU array as warpgen sees it. strides are in elements, or None for
    C-contiguous; stream is an int (0: the default stream)."""

    __slots__ = ("ptr", "type", "shape", "strides", "device", "stream",
                 "kind", "obj", "keep")

    def __init__(self, ptr, type_, shape, strides, device, stream, kind, obj,
                 keep=None):
        self.ptr = ptr
        self.type = type_
        self.shape = shape
        self.strides = strides
        self.device = device
        self.stream = stream
        self.kind = kind
        self.obj = obj
        self.keep = keep  # what must outlive the call (a DLPack capsule)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


# --- PyTorch ---------------------------------------------------------------

_torch = None
_torch_types = None     # torch.dtype -> warpgen type
_torch_dtypes = None    # warpgen type -> torch.dtype
_torch_stream = None    # device index -> raw stream pointer


def _torch_setup():
    global _torch, _torch_types, _torch_dtypes, _torch_stream
    import torch
    names = {"float16": "f16", "bfloat16": "bf16", "float32": "f32",
             "float64": "f64", "int32": "i32", "uint32": "u32",
             "int64": "i64", "uint64": "u64"}
    _torch_types = {getattr(torch, n): t for n, t in names.items()
                    if hasattr(torch, n)}
    _torch_dtypes = {t: d for d, t in _torch_types.items()}
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:  # older torch: the public (slower) way
        def raw(device):
            return torch.cuda.current_stream(device).cuda_stream
    _torch_stream = raw
    _torch = torch


def _torch_view(x):
    if _torch is None:
        _torch_setup()
    if not x.is_cuda:
        raise ArrayError(f"a torch tensor on {x.device}: warpgen works on "
                         "CUDA tensors (x.cuda())")
    type_ = _torch_types.get(x.dtype)
    if type_ is None:
        raise DTypeError(f"torch dtype {x.dtype} has no warpgen type; "
                         f"supported: {_SUPPORTED}")
    if getattr(x, "is_neg", None) is not None and x.is_neg():
        # A lazily negated view (z.conj().imag): its memory holds -x.
        raise ArrayError("a torch tensor with its negative bit set (a view "
                         "such as z.conj().imag): pass x.resolve_neg()")
    device = x.get_device()
    return ArrayView(x.data_ptr(), type_, tuple(x.shape), x.stride(), device,
                     _torch_stream(device), "torch", x)


# --- CuPy ------------------------------------------------------------------

_cupy = None


def _cupy_view(x):
    global _cupy
    if _cupy is None:
        import cupy
        _cupy = cupy
    type_ = _TYPESTRS.get(x.dtype.str)
    if type_ is None:
        raise DTypeError(f"CuPy dtype {x.dtype} has no warpgen type; "
                         f"supported: {_SUPPORTED}")
    item = x.itemsize
    strides = tuple(s // item for s in x.strides)
    with x.device:  # CuPy's current stream is the current device's
        stream = _cupy.cuda.get_current_stream().ptr
    return ArrayView(x.data.ptr, type_, x.shape, strides, x.device.id,
                     stream, "cupy", x)


# --- the CUDA Array Interface and DLPack -------------------------------------

def _current_device():
    """The CUDA device an array without one is assumed to be on: the
    current device of a loaded torch or CuPy, else 0."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return torch.cuda.current_device()
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        return cupy.cuda.runtime.getDevice()
    return 0


def _cai_view(x, cai):
    if cai.get("mask") is not None:
        raise ArrayError("masked arrays are not supported")
    typestr = cai["typestr"]
    type_ = _TYPESTRS.get(typestr)
    if type_ is None:
        raise DTypeError(f"typestr {typestr!r} has no warpgen type; "
                         f"supported: {_SUPPORTED}")
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is not None:
        item = _lib.TYPE_SIZES[type_]
        if any(s % item for s in strides):
            raise ArrayError("strides that are not a multiple of the "
                             "element size are not supported")
        strides = tuple(s // item for s in strides)
    # CAI v3: None means no stream to order against; 1 and 2 are the legacy
    # and per-thread default streams, which the driver takes as handles.
    stream = cai.get("stream") or 0
    kind = "numba" if type(x).__module__.startswith("numba") else "cai"
    return ArrayView(cai["data"][0], type_, shape, strides, _current_device(),
                     stream, kind, x)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dlpack_view(x):
    device_type, device_id = x.__dlpack_device__()
    if device_type not in (_KDLCUDA, _KDLCUDAMANAGED):
        raise _host_error(x) if device_type in (_KDLCPU, _KDLCUDAHOST) else \
            ArrayError(f"a DLPack array on device type {device_type}: "
                       "warpgen works on CUDA device arrays")
    try:
        # stream=1: the producer orders its work before the legacy default
        # stream, which is where warpgen launches for such arrays.
        capsule = x.__dlpack__(stream=1)
    except TypeError:
        capsule = x.__dlpack__()
    # A DLManagedTensor starts with its DLTensor. The capsule is not
    # consumed: it stays alive in the view, and x keeps the memory.
    t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    if t.dtype.lanes != 1 or (t.dtype.code, t.dtype.bits) not in _DLPACK_TYPES:
        raise DTypeError(f"DLPack dtype (code {t.dtype.code}, bits "
                         f"{t.dtype.bits}, lanes {t.dtype.lanes}) has no "
                         f"warpgen type; supported: {_SUPPORTED}")
    type_ = _DLPACK_TYPES[(t.dtype.code, t.dtype.bits)]
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = (tuple(t.strides[i] for i in range(t.ndim)) if t.strides
               else None)
    return ArrayView((t.data or 0) + t.byte_offset, type_, shape, strides,
                     device_id, 0, "dlpack", x, keep=capsule)


def _host_error(x):
    return ArrayError(f"a host array ({type(x).__name__}): warpgen works on "
                      "GPU arrays; move it first, e.g. torch.as_tensor(x, "
                      "device='cuda') or cupy.asarray(x)")


def view(x):
    """The ArrayView of x, or ArrayError/DTypeError saying why not."""
    module = type(x).__module__
    if module.startswith("torch") and hasattr(x, "data_ptr"):
        return _torch_view(x)
    if module.startswith("cupy") and hasattr(x, "data"):
        return _cupy_view(x)
    try:
        cai = x.__cuda_array_interface__
    except AttributeError:
        cai = None
    if cai is not None:
        return _cai_view(x, cai)
    if hasattr(x, "__dlpack_device__") and hasattr(x, "__dlpack__"):
        return _dlpack_view(x)
    if hasattr(x, "__array_interface__") or hasattr(x, "__array__"):
        raise _host_error(x)
    raise ArrayError(f"{type(x).__name__} is not a GPU array: warpgen takes "
                     "objects with __cuda_array_interface__ or __dlpack__ "
                     "(PyTorch, CuPy, Numba)")


# --- a call's arguments ----------------------------------------------------

def integer(value):
    """value as a Python int when it is an integer (an int, NumPy's
    integers, a 0-d integer tensor: operator.index, as PyTorch and NumPy
    take them), else None; a bool is not one here (dim=True, bins=True)."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def real(value, what, name):
    """value as a Python float (any real number: NumPy's, a 0-d tensor),
    or ArrayError naming it; a bool or a string is not one here."""
    if not isinstance(value, (bool, str, bytes)):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise ArrayError(f"{what}: {name} must be a number, not {value!r}")


def same_shape_and_device(what, vs):
    """ArrayError unless every view of vs has the first's shape and device."""
    v = vs[0]
    for w in vs[1:]:
        if w.shape != v.shape or w.device != v.device:
            raise ArrayError(f"{what}: the inputs differ in shape or device "
                             f"({v.shape} on {v.device}, {w.shape} on "
                             f"{w.device})")


def input_views(what, x, most=4):
    """The views of a call's inputs: x one array, or a tuple or list of 1
    to `most` arrays of one shape on one device."""
    arrays = tuple(x) if isinstance(x, (tuple, list)) else (x,)
    if not 1 <= len(arrays) <= most:
        raise ArrayError(f"{what}: 1 to {most} input arrays, not {len(arrays)}")
    vs = [view(a) for a in arrays]
    same_shape_and_device(what, vs)
    return vs


# --- layouts ---------------------------------------------------------------

def is_c_contiguous(shape, strides):
    # An empty array reads nothing, whatever strides its library gave it.
    if strides is None or 0 in shape:
        return True
    expected = 1
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def is_dense(shape, strides):
    """True when the elements fill one block of memory with no gaps, in any
    dimension order (a transposed contiguous tensor is dense)."""
    if strides is None or 0 in shape:
        return True
    dims = sorted((s, d) for d, s in zip(shape, strides) if d != 1)
    expected = 1
    for stride, dim in dims:
        if stride != expected:
            return False
        expected *= dim
    return True


def copied_dims_last(x, v, dims, what):
    """(copy, back) for a torch or CuPy array x (viewed as v): a
    C-contiguous copy of x with the dimensions in `dims` moved last, in
    that order (none: a plain copy), made by x's own library on x's stream,
    and a function that returns an array of the copy's shape with its
    dimensions put back in x's order (a view). Other arrays: ArrayError,
    for warpgen cannot copy them."""
    dims = list(dims)
    order = [d for d in range(len(v.shape)) if d not in dims] + dims
    inverse = [order.index(d) for d in range(len(order))]
    if v.kind == "torch":
        return x.permute(order).contiguous(), lambda y: y.permute(inverse)
    if v.kind == "cupy":
        return (_cupy.ascontiguousarray(_cupy.transpose(x, order)),
                lambda y: _cupy.transpose(y, inverse))
    raise ArrayError(f"{what}: a {v.kind} array of shape {tuple(v.shape)} "
                     f"and strides {v.strides} is not in a layout warpgen "
                     "reads, and warpgen copies only torch and CuPy arrays: "
                     "pass it contiguous, with the dimension worked on last")


# --- outputs ---------------------------------------------------------------

def device_guard(v):
    """A context manager that makes v's device current in v's library, or
    None when warpgen cannot tell (plain CAI and DLPack arrays)."""
    if v.kind == "torch":
        return _torch.cuda.device(v.device)
    if v.kind == "cupy":
        return _cupy.cuda.Device(v.device)
    return None


def empty_like_kind(v, shape, type_, ctx):
    """(array, device pointer): an uninitialised C-contiguous array of shape
    and warpgen type on v's device, made by v's own library. The pointer
    comes with it, so the caller need not view (and check) it again."""
    if v.kind == "torch":
        dtype = _torch_dtypes.get(type_)
        if dtype is not None:
            out = _torch.empty(shape, dtype=dtype, device=v.obj.device)
            return out, out.data_ptr()
    elif v.kind == "cupy" and type_ != "bf16":
        with _cupy.cuda.Device(v.device):
            out = _cupy.empty(shape, dtype=_TYPESTR_OF[type_])
        return out, out.data.ptr
    out = DeviceArray(ctx, shape, type_, v.stream)
    return out, out.ptr


def check_out(out, shape, type_, device, size=None):
    """The view of a caller's out= array, checked against what the kernel
    writes: `shape`, or any shape of `size` elements when shape is None."""
    o = view(out)
    if o.type != type_:
        raise DTypeError(f"out= has type {o.type}; this call writes {type_}")
    if shape is not None and tuple(o.shape) != tuple(shape):
        raise ArrayError(f"out= has shape {tuple(o.shape)}; this call writes "
                         f"{tuple(shape)}")
    if size is not None and o.size != size:
        raise ArrayError(f"out= holds {o.size} elements; this call writes "
                         f"{size}")
    if not is_c_contiguous(o.shape, o.strides):
        raise ArrayError("out= must be C-contiguous")
    if o.device != device:
        raise ArrayError(f"out= is on CUDA device {o.device}, the input on "
                         f"{device}")
    return o


class DeviceArray:
    """Device memory from wg_mem_alloc, exposing __cuda_array_interface__:
    the output for inputs that are neither torch nor CuPy. torch.as_tensor(a,
    device='cuda') and cupy.asarray(a) take it without a copy; to_host()
    copies it into a numpy array."""

    def __init__(self, ctx, shape, type_, stream=0):
        self.shape = tuple(int(d) for d in shape)
        self.type = type_
        self.stream = stream
        self._ctx = ctx  # frees the memory, so it must outlive it
        size = 1
        for d in self.shape:
            size *= d
        self.nbytes = size * _lib.TYPE_SIZES[type_]
        ptr = ctypes.c_uint64()
        ctx.call(lib.wg_mem_alloc, ctypes.byref(ptr), max(self.nbytes, 1))
        self.ptr = ptr.value

    @property
    def __cuda_array_interface__(self):
        if self.type == "bf16":
            raise DTypeError("bf16 has no CUDA Array Interface typestr")
        return {"shape": self.shape, "typestr": _TYPESTR_OF[self.type],
                "data": (self.ptr, False), "strides": None, "version": 3,
                # The legacy default stream where the handle is NULL.
                "stream": self.stream or 1}

    def to_host(self):
        """A numpy copy (waits for the stream the array was written on)."""
        import numpy
        dtype = "<u2" if self.type == "bf16" else _TYPESTR_OF[self.type]
        host = numpy.empty(self.shape, dtype=dtype)
        self._ctx.call(lib.wg_memcpy_dtoh, host.ctypes.data, self.ptr,
                       self.nbytes, self.stream or None)
        return host

    def shorten(self, count):
        """Makes this 1-d array its first `count` elements (compact's
        outputs, once the count is known) and returns it; the allocation
        stays whole until it is freed."""
        if len(self.shape) != 1 or not 0 <= count <= self.shape[0]:
            raise ArrayError(f"cannot shorten shape {self.shape} to {count}")
        self.shape = (int(count),)
        self.nbytes = int(count) * _lib.TYPE_SIZES[self.type]
        return self

    def __del__(self):
        ptr, self.ptr = getattr(self, "ptr", 0), 0
        if ptr and not self._ctx.closed:
            try:
                self._ctx.call(lib.wg_mem_free, ptr)
            except Exception:  # a finaliser has no one to raise to
                pass

    def __repr__(self):
        return f"<warpgen.DeviceArray {self.type} shape={self.shape}>"
