"""The fused row kernels over the last dimension: softmax, log_softmax,
layer_norm and rms_norm, as PyTorch computes them (include/warpgen.h,
wg_softmax_rows and the three after it).

x is a torch, CuPy, CUDA Array Interface or DLPack array of f16, bf16, f32
or f64 with any number of dimensions; the last is normalised (softmax and
log_softmax: dim). Rows that are each contiguous, with leading dimensions
that fold into one row stride (any padding between rows is fine), are read
where they are: one C call on x's stream, nothing copied. Any other layout
of a torch or CuPy array, and softmax over a dim that is not the last, is
first copied once by x's own library with that dim last (the result of a
moved dim is a view in x's shape, laid out with dim last); other arrays in
such layouts are refused. The output is a new contiguous array of x's shape
and type (or out=, whose rows must be contiguous and fold the same way).
weight and bias are 1-D arrays of x's type and length cols on x's device.
"""

from ._lib import lib
from .arrays import copied_dims_last, empty_like_kind, real, view
from .axis import normalize_dim
from .errors import ArrayError, DTypeError
from .ops import _TYPE_INDEX, _context_for, _ready

_FLOATS = ("f16", "bf16", "f32", "f64")
# rms_norm's eps when none is given, as PyTorch's (2.7 on, its PR 142848):
# torch.finfo of the type the row is computed in, f32 for the 16-bit types
# (2^-23, not their own 2^-10 and 2^-7, which would swamp the mean square
# of rows of small values), f64 for f64.
_DEFAULT_RMS_EPS = {"f16": 2.0 ** -23, "bf16": 2.0 ** -23, "f32": 2.0 ** -23,
                    "f64": 2.0 ** -52}


def _rows(v, what):
    """(rows, cols, row_stride) of v read as rows of its last dimension;
    ArrayError when its layout does not fold so (_layout copies instead)."""
    if v.type not in _FLOATS:
        raise DTypeError(f"{what}: f16, bf16, f32 or f64 arrays, not {v.type}")
    if not v.shape:
        raise ArrayError(f"{what}: a 0-d array has no rows")
    shape = tuple(v.shape)
    cols = shape[-1]
    rows = 1
    for d in shape[:-1]:
        rows *= d
    if rows == 0 or cols == 0:
        return rows, cols, cols
    strides = v.strides if v.strides is not None else None
    if strides is None:
        return rows, cols, cols
    if cols > 1 and strides[-1] != 1:
        raise ArrayError(f"{what}: the last dimension must be contiguous "
                         f"(stride 1), not {strides[-1]}; pass x.contiguous()")
    # The leading dimensions (sizes > 1) must step by one row stride.
    lead = [(d, s) for d, s in zip(shape[:-1], strides[:-1]) if d != 1]
    row_stride = lead[-1][1] if lead else cols
    expect = row_stride
    for d, s in reversed(lead):
        if s != expect:
            raise ArrayError(f"{what}: strides {tuple(strides)} for shape "
                             f"{shape} do not fold into rows of one stride; "
                             "pass x.contiguous()")
        expect = s * d
    if rows > 1 and row_stride < cols:
        raise ArrayError(f"{what}: the row stride {row_stride} is less than "
                         f"the row length {cols}")
    return rows, cols, row_stride


def _vector(a, name, v, cols, what):
    """The device pointer of weight/bias (0 for None), checked."""
    if a is None:
        return 0
    w = view(a)
    if w.type != v.type:
        raise DTypeError(f"{what}: {name} has type {w.type}, x has {v.type}")
    if tuple(w.shape) != (cols,):
        raise ArrayError(f"{what}: {name} must have shape ({cols},), not "
                         f"{tuple(w.shape)}")
    if cols > 1 and w.strides is not None and w.strides[0] != 1:
        raise ArrayError(f"{what}: {name} must be contiguous")
    if w.device != v.device:
        raise ArrayError(f"{what}: {name} is on CUDA device {w.device}, x on "
                         f"{v.device}")
    return w.ptr


def _output(ctx, v, out, what):
    """(out, pointer, row stride) of the output: a new contiguous array like
    x, or the caller's out= (x's shape and type, rows contiguous)."""
    _ready(ctx, v)
    if out is None:
        o, ptr = empty_like_kind(v, tuple(v.shape), v.type, ctx)
        return o, ptr, v.shape[-1]
    o = view(out)
    if o.type != v.type:
        raise DTypeError(f"out= has type {o.type}; this call writes {v.type}")
    if tuple(o.shape) != tuple(v.shape):
        raise ArrayError(f"out= has shape {tuple(o.shape)}; this call writes "
                         f"{tuple(v.shape)}")
    if o.device != v.device:
        raise ArrayError(f"out= is on CUDA device {o.device}, x on {v.device}")
    _, _, stride = _rows(o, what + " (out=)")
    return out, o.ptr, stride


def _layout(x, v, what):
    """(x, v, rows, cols, row_stride): x itself when its rows fold into one
    stride, else (torch, CuPy) a contiguous copy made by its library."""
    try:
        return (x, v) + _rows(v, what)
    except ArrayError:
        if v.type not in _FLOATS or not v.shape or v.kind not in ("torch",
                                                                  "cupy"):
            raise
    x = copied_dims_last(x, v, (), what)[0]
    v = view(x)
    return (x, v) + _rows(v, what)


def _softmax(kind, x, dim, out, context):
    """softmax or log_softmax over dim: a dim that is not the last is moved
    last by one copy, and the result moved back."""
    v = view(x)
    ndim = len(v.shape)
    axis = normalize_dim(dim, ndim, kind)
    if ndim > 1 and axis != ndim - 1:
        if out is not None:
            raise ArrayError(f"{kind}: out= needs dim to be the last "
                             f"dimension, not {dim}")
        moved, back = copied_dims_last(x, v, (axis,), kind)
        return back(_run(kind, moved, None, None, 0.0, None, context))
    return _run(kind, x, None, None, 0.0, out, context)


def _run(kind, x, weight, bias, eps, out, context):
    what = kind
    eps = real(eps, what, "eps")
    x, v, rows, cols, in_stride = _layout(x, view(x), what)
    ctx = _context_for(v, context)
    w_ptr = _vector(weight, "weight", v, cols, what)
    b_ptr = _vector(bias, "bias", v, cols, what)
    out, out_ptr, out_stride = _output(ctx, v, out, what)
    if rows == 0 or cols == 0:
        return out
    t = _TYPE_INDEX[v.type]
    if kind == "softmax":
        ctx.call(lib.wg_softmax_rows, t, v.ptr, out_ptr, rows, cols, in_stride,
                 out_stride, v.stream)
    elif kind == "log_softmax":
        ctx.call(lib.wg_log_softmax_rows, t, v.ptr, out_ptr, rows, cols,
                 in_stride, out_stride, v.stream)
    elif kind == "layer_norm":
        ctx.call(lib.wg_layer_norm_rows, t, v.ptr, w_ptr, b_ptr, out_ptr, rows,
                 cols, in_stride, out_stride, eps, v.stream)
    else:
        ctx.call(lib.wg_rms_norm_rows, t, v.ptr, w_ptr, out_ptr, rows, cols,
                 in_stride, out_stride, eps, v.stream)
    return out


def softmax(x, dim=-1, *, out=None, context=None):
    """torch.softmax(x, dim): exp(x - max) / sum along dim, the max
    subtracted first; a NaN, a +inf or a row of only -inf makes the row
    NaN. A dim that is not the last costs one copy (module docstring)."""
    return _softmax("softmax", x, dim, out, context)


def log_softmax(x, dim=-1, *, out=None, context=None):
    """torch.log_softmax(x, dim): x - max - log(sum(exp(x - max))) along
    dim, as softmax."""
    return _softmax("log_softmax", x, dim, out, context)


def layer_norm(x, weight=None, bias=None, eps=1e-5, *, out=None,
               context=None):
    """torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps):
    (x - mean) / sqrt(var + eps) * weight + bias with the biased variance;
    an all-equal row has variance exactly 0. A new eps compiles nothing."""
    return _run("layer_norm", x, weight, bias, eps, out, context)


def rms_norm(x, weight=None, eps=None, *, out=None, context=None):
    """torch.nn.functional.rms_norm(x, (x.shape[-1],), weight, eps):
    x / sqrt(mean(x^2) + eps) * weight; eps None is PyTorch's default,
    torch.finfo of the type the row is computed in: float32's for f16,
    bf16 and f32 (2^-23), float64's for f64."""
    if eps is None:
        eps = _DEFAULT_RMS_EPS.get(view(x).type, 0.0)
    return _run("rms_norm", x, weight, None, eps, out, context)
