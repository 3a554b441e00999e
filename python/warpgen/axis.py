"""Reductions over dimensions: warpgen.reduce(x, op, dim=..., keepdim=...).

One wg_reduce_axis (or, with expressions, wg_reduce_axis_spec) call over
the array's own strides, of any sign (CuPy's x[::-1], torch views such as
x.t() or x[:, ::2]); nothing is copied when the library can read the
layout: the reduced dimensions must merge into one strided axis and the
kept ones into at most two (src/fam_axis.c). Other layouts (reduced
dimensions that are not neighbours in memory, such as dim=(0, 2) of a
contiguous 3-d array) are copied once with the reduced dimensions last,
by the array's own library, and then read as rows.
"""

import ctypes

from . import _lib
from ._lib import lib
from .arrays import (check_out, copied_dims_last, empty_like_kind, input_views,
                     integer)
from .errors import ArrayError, Error
from .ops import (_TYPE_INDEX, _context_for, _expr_spec, _op_index, _params,
                  _ready, _reduction)


def _as_dim(d, what):
    """d as a Python int (arrays.integer: np.int64 too, not a bool)."""
    i = integer(d)
    if i is None:
        raise ArrayError(f"{what}: dim must be an int or a tuple of ints, "
                         f"not {d!r}")
    return i


def normalize_dims(dim, ndim, what="reduce"):
    """The sorted, non-negative dims of `dim` (an int or a sequence of
    ints, negative ones counting from the end) for an ndim-d array. A 0-d
    array takes dim 0 or -1, as in PyTorch."""
    try:
        dims = (_as_dim(dim, what),)
    except ArrayError:
        try:  # a sequence of dims
            dims = tuple(_as_dim(d, what) for d in dim)
        except TypeError:
            raise ArrayError(f"{what}: dim must be an int or a tuple of ints, "
                             f"not {dim!r}") from None
    if not dims:
        raise ArrayError(f"{what}: dim=() is ambiguous (PyTorch reduces "
                         "every dimension, NumPy none): pass dim=None for "
                         "the whole array")
    rank = max(ndim, 1)
    out = []
    for d in dims:
        if not -rank <= d < rank:
            raise ArrayError(f"{what}: dim {d} is out of range for a "
                             f"{ndim}-d array (-{rank} to {rank - 1})")
        d %= rank
        if d in out:
            raise ArrayError(f"{what}: dim {d} is given twice")
        out.append(d)
    return tuple(sorted(out))


def normalize_dim(dim, ndim, what):
    """One dim (an int, negative from the end) as a non-negative axis of an
    ndim-d array: for the calls that work along a single dimension."""
    try:
        _as_dim(dim, what)
    except ArrayError:
        raise ArrayError(f"{what}: dim must be an int, not {dim!r}") from None
    return normalize_dims(dim, ndim, what)[0]


def _strides_of(v):
    """v's strides in elements (C-contiguous when the library gave none)."""
    if v.strides is not None:
        return tuple(v.strides)
    strides, step = [], 1
    for size in reversed(v.shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def reduce_dims(x, op, dim, keepdim, exprs, correction, out, context, params):
    """warpgen.reduce with dim= (see ops.reduce)."""
    vs = input_views("reduce", x)
    v = vs[0]
    ndim = len(v.shape)
    dims = normalize_dims(dim, ndim)
    shape = tuple(v.shape) if ndim else (1,)
    out_shape = tuple((1 if d in dims else n) for d, n in enumerate(v.shape)
                      if keepdim or d not in dims)
    strides = _strides_of(v) if ndim else (1,)
    if any(_strides_of(w) != strides for w in vs[1:] if ndim):
        # Inputs are paired by position in memory: with different strides
        # they would pair different elements.
        return _reduce_copies(x, vs, op, dims, keepdim, exprs, correction,
                              out, context, params)
    ctx = _context_for(v, context)
    use_spec = (len(vs) > 1 or params or
                any(e is not None for e in exprs))
    if use_spec:
        c, out_type, params_c, nparams = _expr_spec(
            ctx, "reduce", "reduce-axis", vs, op, exprs, correction, params)
    else:
        op = "sum" if op is None else op
        reduction, out_type = _reduction(_TYPE_INDEX[v.type], _op_index(op))
        params_c, nparams = _params(correction)
    _ready(ctx, v)
    out_given = out is not None
    if out is None:
        out, out_ptr = empty_like_kind(v, out_shape, out_type, ctx)
    else:
        out_ptr = check_out(out, out_shape, out_type, v.device).ptr
    k = len(vs)
    inputs = (ctypes.c_uint64 * k)(*[w.ptr or out_ptr or 1 for w in vs])
    c_shape = (ctypes.c_int64 * len(shape))(*shape)
    c_strides = (ctypes.c_int64 * len(shape))(*strides)
    c_axes = (ctypes.c_int * len(dims))(*dims)
    try:
        if use_spec:
            ctx.call(lib.wg_reduce_axis_spec, ctypes.byref(c), inputs, k,
                     len(shape), c_shape, c_strides, c_axes, len(dims),
                     params_c, nparams, out_ptr, v.stream)
        else:
            ctx.call(lib.wg_reduce_axis, ctypes.byref(reduction), inputs, k,
                     len(shape), c_shape, c_strides, c_axes, len(dims),
                     params_c, nparams, out_ptr, v.stream)
    except Error as e:
        if e.status != _lib.WG_EINVAL or "do not merge" not in str(e):
            raise
        return _reduce_copies(x, vs, op, dims, keepdim, exprs, correction,
                              out if out_given else None, context, params)
    return out


def _reduce_copies(x, vs, op, dims, keepdim, exprs, correction, out, context,
                   params):
    """reduce_dims of layouts the kernel cannot walk (reduced dims that do
    not merge into one strided axis) or pair (inputs of different strides):
    one copy of each input with the reduced dims last, C-contiguous, by
    its own library, then the same reduction of the copies. The result
    comes back in the copies' shape (the kept dims) and takes keepdim's
    ones as a view; a caller's out= gets it by assignment, whatever its
    strides."""
    arrays = tuple(x) if isinstance(x, (tuple, list)) else (x,)
    moved = [copied_dims_last(a, w, dims, "reduce")[0]
             for a, w in zip(arrays, vs)]
    ndim = len(vs[0].shape)
    last = tuple(range(ndim - len(dims), ndim))
    res = reduce_dims(moved if len(moved) > 1 else moved[0], op, last, False,
                      exprs, correction, None, context, params)
    res = res.reshape(tuple((1 if d in dims else n)
                            for d, n in enumerate(vs[0].shape)
                            if keepdim or d not in dims))
    if out is None:
        return res
    out[...] = res
    return out
