"""Stream compaction: warpgen.compact(x, pred, **params), over wg_compact.

The predicate is an expression of warpgen's language (docs/expressions.md)
over x (and y, z, w when x is a tuple of arrays of one shape), i (the flat
index), n (the count) and parameters by keyword, as for reduce; the
elements it keeps come back in order, as torch.masked_select gives them.
"""

import ctypes

from . import expressions
from ._lib import lib
from .arrays import DeviceArray, empty_like_kind, input_views, is_c_contiguous
from .errors import ArrayError
from .ops import _context_for, _ready


def _spec_text(types, pred, params):
    words = ["compact", types[0]]
    if pred is not None:
        words.append("pred=" + expressions.quote(pred))
    if len(types) > 1:
        words.append("inputs=" + ",".join(types))
    if params:
        words.append("params=" + ",".join(expressions.param_type(v) for v in params))
    return " ".join(words)


def compact(x, pred=None, *, indices=True, narrow=True, context=None, **params):
    """The elements of x for which `pred` is non-zero, in order (flat, C
    order), their indices and their count: (values, indices, count).

    pred: e.g. "x > p0 && x == x" with p0=0.5; None keeps the non-zero
    elements (-0.0 is zero, NaN is not), as torch.masked_select(x, x != 0)
    does. A NaN result of pred keeps. Parameters come by keyword (p0=...,
    or any other name pred uses; a Python float is f64, an int i64, a numpy
    or torch scalar keeps its dtype); a new value compiles nothing.

    values has x's dtype, indices is int64 (None with indices=False). The
    count is written on the device; with narrow=True (the default) it is
    read back, which waits for x's stream once, and values and indices are
    views of their first `count` elements; count is a Python int. With
    narrow=False nothing waits: values and indices keep all n elements
    (those past the count are uninitialised) and count is a one-element
    int64 array on the device. Arrays of x's library (torch, CuPy), on x's
    device and stream."""
    vs = input_views("compact", x)
    v = vs[0]
    for w in vs:
        if not is_c_contiguous(w.shape, w.strides):
            raise ArrayError("compact: the inputs must be C-contiguous (the order "
                             "of the kept elements is the flat C order); pass "
                             "x.contiguous()")
    ctx = _context_for(v, context)
    names, values = expressions.order_params(params)
    if pred is not None:
        pred = expressions.rename(pred, names)
    c = ctx.c_spec(_spec_text([w.type for w in vs], pred, values))
    params_c, nparams = expressions.scalars(values)
    n = v.size
    _ready(ctx, v)
    out_values, values_ptr = empty_like_kind(v, (n,), v.type, ctx)
    out_indices, indices_ptr = (empty_like_kind(v, (n,), "i64", ctx) if indices
                                else (None, 0))
    count, count_ptr = empty_like_kind(v, (1,), "i64", ctx)
    k = len(vs)
    inputs = (ctypes.c_uint64 * k)(*[w.ptr or count_ptr for w in vs])
    ctx.call(lib.wg_compact, ctypes.byref(c), inputs, k, n, params_c, nparams,
             values_ptr, indices_ptr, count_ptr, v.stream)
    if not narrow:
        return out_values, out_indices, count
    word = ctypes.c_uint64()
    ctx.call(lib.wg_memcpy_dtoh, ctypes.byref(word), count_ptr, 8, v.stream)
    kept = word.value

    def first(a):  # a DeviceArray (CAI and DLPack inputs' outputs): no slices
        return a.shorten(kept) if isinstance(a, DeviceArray) else a[:kept]
    return (first(out_values), None if out_indices is None else first(out_indices),
            kept)
