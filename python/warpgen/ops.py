"""The array operations: whole-array and row reductions, warp primitives.

Each function reads its input with arrays.view, picks the context for the
array's device, checks what the kernel cannot take (dtype, layout, out=),
and makes one C call on the array's stream. Nothing is copied.
"""

import ctypes
import struct

from . import _lib
from ._lib import lib
from .arrays import (check_out, device_guard, empty_like_kind,
                     is_c_contiguous, is_dense, view)
from .context import default_context
from .errors import ArrayError, DTypeError, SpecError

_TYPE_INDEX = {name: i for i, name in enumerate(_lib.TYPES)}
_OP_INDEX = {name: i for i, name in enumerate(_lib.OPERATORS)
             if name != "none"}
_PRIMITIVE_INDEX = {name: i for i, name in enumerate(_lib.PRIMITIVES)}
_FIRST_NON_WARP = _PRIMITIVE_INDEX["reduce-array"]
# Warp primitives whose outputs are not of the input's type.
_OUTPUT_TYPES = {"ballot": "u32", "match": "u32", "any": "i32", "all": "i32"}
_UNPACK = {"f16": "<e", "f32": "<f", "f64": "<d", "i32": "<i", "u32": "<I",
           "i64": "<q", "u64": "<Q"}


def _scalar(raw, type_):
    """A Python float or int from the raw bytes of one element."""
    if type_ == "bf16":  # the upper half of an f32
        return struct.unpack("<f", b"\0\0" + raw)[0]
    return struct.unpack(_UNPACK[type_], raw)[0]


def _context_for(v, context):
    ctx = default_context(v.device) if context is None else context
    if ctx.device != v.device:
        raise ArrayError(f"the array is on CUDA device {v.device}, the "
                         f"context on {ctx.device}")
    return ctx


def _ready(ctx, v):
    """Binds ctx to v's device before its first GPU call; checks come
    first, so that a wrong argument is reported without touching CUDA."""
    if not ctx._bound:
        ctx.bind(device_guard(v))


def _op_index(op):
    index = _OP_INDEX.get(op)
    if index is None:
        raise SpecError(f"unknown operator {op!r}; one of: " +
                        ", ".join(_OP_INDEX), _lib.WG_ESPEC)
    return index


def _reduction(type_index, op_index):
    """The wg_reduction and the output type name of (type, op); a pair the
    library refuses keeps the input type, so the call reports why."""
    r = _lib.wg_reduction(_lib.WG_REDUCTION_VERSION, type_index, op_index, 1)
    out = lib.wg_reduce_output_type(type_index, op_index)
    return r, _lib.TYPES[out] if out >= 0 else _lib.TYPES[type_index]


def _params(correction):
    """The parameter array of var/std (the correction), or (None, 0)."""
    if correction is None:
        return None, 0
    params = (_lib.wg_scalar * 1)()
    params[0].f64 = float(correction)
    return params, 1


def reduce(x, op="sum", *, correction=None, out=None, context=None):
    """Reduces every element of x with op and returns a Python scalar.
    Operators: "sum", "prod", "min", "max", "and", "or", "xor" (an empty x
    gives the identity) and, as PyTorch computes them, "argmin", "argmax"
    (the first index, a NaN wins; an int; empty x is an error), "mean",
    "var", "std" (correction, default 1), "norm1", "norm2", "norminf",
    "logsumexp" and "count_nonzero". The output type follows PyTorch
    (wg_reduce_output_type: indices and counts i64, logsumexp of integers
    f32, else x's type). With out= (a one-element array of that type on
    x's device) it writes there without waiting and returns out."""
    v = view(x)
    op_index = _op_index(op)
    ctx = _context_for(v, context)
    if not is_dense(v.shape, v.strides):
        raise ArrayError(f"reduce: an input with strides {v.strides} for "
                         f"shape {v.shape} has gaps; pass a contiguous "
                         "array (x.contiguous(), cupy.ascontiguousarray)")
    n = v.size
    reduction, out_type = _reduction(_TYPE_INDEX[v.type], op_index)
    params, nparams = _params(correction)
    _ready(ctx, v)
    if out is None:
        raw = ctx.reduce_to_host(reduction, v.ptr, n, params, nparams,
                                 v.stream, _lib.TYPE_SIZES[out_type])
        return _scalar(raw, out_type)
    o = check_out(out, None, out_type, v.device, size=1)
    # n == 0 reads nothing; the library still wants a valid pointer.
    inputs = (ctypes.c_uint64 * 1)(v.ptr or o.ptr)
    ctx.call(lib.wg_reduce_ex, ctypes.byref(reduction), inputs, 1, n, params,
             nparams, o.ptr, v.stream)
    return out


def reduce_rows(x, op="sum", *, correction=None, out=None, context=None):
    """Reduces each row of the 2-D array x into out[r] (shape (rows,)), with
    the operators of reduce and its output types (argmin/argmax: the index
    within the row). Rows may be padded (any row stride >= cols) but each
    row must be contiguous. Returns out, allocated like x when not given."""
    v = view(x)
    op_index = _op_index(op)
    ctx = _context_for(v, context)
    if len(v.shape) != 2:
        raise ArrayError(f"reduce_rows: a 2-D array is needed, not shape "
                         f"{v.shape}")
    rows, cols = v.shape
    row_stride, col_stride = v.strides if v.strides is not None else (cols, 1)
    if rows <= 1 or cols == 0:
        # Nothing or one row is read: the strides (which libraries set
        # freely for empty arrays) do not matter.
        row_stride, col_stride = cols, 1
    if cols > 1 and col_stride != 1:
        raise ArrayError(f"reduce_rows: rows must be contiguous (column "
                         f"stride 1), not {col_stride}; pass x.contiguous()")
    if rows > 1 and row_stride < cols:
        raise ArrayError(f"reduce_rows: the row stride {row_stride} is "
                         f"less than the row length {cols}")
    reduction, out_type = _reduction(_TYPE_INDEX[v.type], op_index)
    params, nparams = _params(correction)
    _ready(ctx, v)
    if out is None:
        out, out_ptr = empty_like_kind(v, (rows,), out_type, ctx)
    else:
        out_ptr = check_out(out, (rows,), out_type, v.device).ptr
    if rows:
        inputs = (ctypes.c_uint64 * 1)(v.ptr or out_ptr)
        ctx.call(lib.wg_reduce_rows_ex, ctypes.byref(reduction), inputs, 1,
                 rows, cols, row_stride, params, nparams, out_ptr, v.stream)
    return out


def _whole_or_rows(x, op, dim, correction=None, out=None, context=None):
    """reduce (dim None) or reduce_rows (dim 1 or -1 of a 2-D array)."""
    if dim is None:
        return reduce(x, op, correction=correction, out=out, context=context)
    if dim in (1, -1):
        return reduce_rows(x, op, correction=correction, out=out,
                           context=context)
    raise ArrayError(f"{op}: dim must be None (the whole array) or 1 / -1 "
                     f"(each row of a 2-D array), not {dim!r}")


def argmax(x, dim=None, *, out=None, context=None):
    """torch.argmax: the first index of the greatest element (a NaN wins)."""
    return _whole_or_rows(x, "argmax", dim, out=out, context=context)


def argmin(x, dim=None, *, out=None, context=None):
    """torch.argmin: the first index of the least element (a NaN wins)."""
    return _whole_or_rows(x, "argmin", dim, out=out, context=context)


def mean(x, dim=None, *, out=None, context=None):
    """torch.mean: floating x only; the mean of nothing is NaN."""
    return _whole_or_rows(x, "mean", dim, out=out, context=context)


def var(x, dim=None, *, correction=1, out=None, context=None):
    """torch.var: M2 / max(0, n - correction); a new correction compiles
    nothing (it is a kernel argument)."""
    return _whole_or_rows(x, "var", dim, correction, out, context)


def std(x, dim=None, *, correction=1, out=None, context=None):
    """torch.std: the square root of var."""
    return _whole_or_rows(x, "std", dim, correction, out, context)


def norm(x, ord=2, dim=None, *, out=None, context=None):
    """torch.linalg.vector_norm for ord 1, 2 and inf."""
    names = {1: "norm1", 2: "norm2", float("inf"): "norminf"}
    if ord not in names:
        raise ArrayError(f"norm: ord must be 1, 2 or inf, not {ord!r}")
    return _whole_or_rows(x, names[ord], dim, out=out, context=context)


def logsumexp(x, dim=None, *, out=None, context=None):
    """torch.logsumexp: integers give f32; nothing gives -inf."""
    return _whole_or_rows(x, "logsumexp", dim, out=out, context=context)


def count_nonzero(x, dim=None, *, out=None, context=None):
    """torch.count_nonzero: an i64 count (NaN counts)."""
    return _whole_or_rows(x, "count_nonzero", dim, out=out, context=context)


def warp(x, spec, *, out=None, context=None):
    """Applies a warp-primitive spec (a Spec or its text) to x, taken as a
    flat C-contiguous sequence in groups of spec.width elements. The spec's
    type must be x's. Returns out: x's shape for one output per element,
    else (groups,); x's type, uint32 (ballot, match) or int32 (any, all)."""
    return _warp(view(x), spec, out, context)


def _warp(v, spec, out, context):
    ctx = _context_for(v, context)
    c = ctx.c_spec(spec)
    if c.primitive >= _FIRST_NON_WARP:
        raise SpecError(f"warp: {_lib.PRIMITIVES[c.primitive]} is not a warp "
                        "primitive; use warpgen.reduce or reduce_rows",
                        _lib.WG_ESPEC)
    if c.type != _TYPE_INDEX[v.type]:
        raise DTypeError(f"warp: the spec is for {_lib.TYPES[c.type]}, the "
                         f"array holds {v.type}")
    if not is_c_contiguous(v.shape, v.strides):
        raise ArrayError(f"warp: groups are consecutive elements, so the "
                         f"input must be C-contiguous (strides {v.strides}); "
                         "pass x.contiguous()")
    n = v.size
    count, elem_size = ctypes.c_uint64(), ctypes.c_size_t()
    status = lib.wg_output_shape(ctypes.byref(count), ctypes.byref(elem_size),
                                 ctypes.byref(c), n)
    if status != _lib.WG_OK:
        raise SpecError(f"wg_output_shape: {_lib.strerror(status)}", status)
    shape = v.shape if count.value == n else (count.value,)
    out_type = _OUTPUT_TYPES.get(_lib.PRIMITIVES[c.primitive], v.type)
    _ready(ctx, v)
    if out is None:
        out, out_ptr = empty_like_kind(v, shape, out_type, ctx)
    else:
        out_ptr = check_out(out, shape, out_type, v.device).ptr
    if n:
        ctx.call(lib.wg_warp, ctypes.byref(c), v.ptr, out_ptr, n, v.stream)
    return out


# --- one function per warp primitive -----------------------------------------

def _primitive(x, name, op, width, variant, lane, out, context):
    """warp() with the spec named by fields, for x's own type."""
    v = view(x)
    text = f"{name} {v.type}{' ' + op if op else ''} width={width} " \
           f"variant={variant}{f' lane={lane}' if lane else ''}"
    return _warp(v, text, out, context)


def warp_reduce(x, op="sum", *, width=32, variant="auto", out=None,
                context=None):
    """One result per group of `width` elements (shape (ceil(n/width),))."""
    return _primitive(x, "reduce", op, width, variant, 0, out, context)


def warp_allreduce(x, op="sum", *, width=32, variant="auto", out=None,
                   context=None):
    """Every element gets its group's reduction (x's shape)."""
    return _primitive(x, "allreduce", op, width, variant, 0, out, context)


def warp_scan(x, op="sum", *, width=32, variant="auto", out=None,
              context=None):
    """Inclusive prefix within each group (x's shape)."""
    return _primitive(x, "scan", op, width, variant, 0, out, context)


def warp_exscan(x, op="sum", *, width=32, variant="auto", out=None,
                context=None):
    """Exclusive prefix within each group; lane 0 gets the identity."""
    return _primitive(x, "exscan", op, width, variant, 0, out, context)


def warp_broadcast(x, lane=0, *, width=32, variant="auto", out=None,
                   context=None):
    """Every element gets its group's element `lane` (zero past the end)."""
    return _primitive(x, "broadcast", None, width, variant, lane, out,
                      context)


def ballot(x, *, width=32, out=None, context=None):
    """One uint32 per group: bit j set when the group's element j != 0."""
    return _primitive(x, "ballot", None, width, "auto", 0, out, context)


def warp_any(x, *, width=32, out=None, context=None):
    """One int32 per group: 1 when any of its elements is non-zero."""
    return _primitive(x, "any", None, width, "auto", 0, out, context)


def warp_all(x, *, width=32, out=None, context=None):
    """One int32 per group: 1 when all of its elements are non-zero."""
    return _primitive(x, "all", None, width, "auto", 0, out, context)


def match(x, *, width=32, out=None, context=None):
    """One uint32 per element: the group lanes holding the same bits."""
    return _primitive(x, "match", None, width, "auto", 0, out, context)
