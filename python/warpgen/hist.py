"""Histograms: warpgen.histogram (torch.histc's bins, exact integer counts)
and warpgen.bincount (torch.bincount), one wg_histogram call each on the
array's stream, over torch, CuPy or any CUDA Array Interface array.

Both return int64 counts (the kernel counts in u64; the bits are the same
below 2^63). Where a bound is not given it costs reductions first (each a
wait for the stream): histogram's range is (min, max) of x, bincount's bins
max(x) + 1 (and min(x) checks that no key is negative).
"""

import ctypes
import math

from . import _lib, expressions
from ._lib import lib
from .arrays import (check_out, copied_dims_last, empty_like_kind, integer,
                     is_c_contiguous, is_dense, view)
from .errors import ArrayError, DTypeError
from .ops import _context_for, _ready, reduce

_FLOATS = ("f16", "bf16", "f32", "f64")
_INTS = ("i32", "u32", "i64", "u64")


def _flat(v, what):
    if not is_dense(v.shape, v.strides):
        raise ArrayError(f"{what}: an input with strides {v.strides} for shape "
                         f"{v.shape} has gaps; pass a contiguous array")
    return v.size


def _count(v, ctx, text, bins, params_c, nparams, out):
    """One wg_histogram call writing `bins` int64 counts; returns out."""
    c = ctx.c_spec(text)
    ctx.validate_spec(c)  # the library's message for a bad spec
    _ready(ctx, v)
    if out is None:
        out, out_ptr = empty_like_kind(v, (bins,), "i64", ctx)
    else:
        out_ptr = check_out(out, (bins,), "i64", v.device).ptr
    if bins:
        # n == 0 reads nothing; the library still wants a valid pointer.
        ctx.call(lib.wg_histogram, ctypes.byref(c), v.ptr or out_ptr, v.size,
                 params_c, nparams, out_ptr, v.stream)
    return out


def histogram(x, bins=100, range=None, *, map=None, out=None, context=None,
              **params):
    """torch.histc(x, bins, min, max) as exact counts (int64, not x's float
    type): `bins` equal bins over range=(lo, hi); bin = floor((x - lo) *
    bins / (hi - lo)) computed in f32 (f64 for float64 x), x == hi in the
    last bin, x outside [lo, hi] and NaN counted nowhere.

    range=None (or (0, 0), as torch) takes (min, max) of x: two reductions
    first, and, unlike torch, NaN is ignored there (torch refuses the
    range); lo == hi becomes (lo - 1, hi + 1) as in torch. Integer x counts
    key k in bin k (range must be None): that is bincount with a fixed
    number of bins. map= (docs/expressions.md, over x, i, n and keyword
    parameters p0=...; i counts row-major, whatever x's strides) gives
    each key's bin instead (integer; outside [0, bins) counted nowhere).
    Returns out, shape (bins,), int64."""
    if integer(bins) is None or integer(bins) < 1:
        raise ArrayError(f"histogram: bins must be an integer of at least 1, "
                         f"not {bins!r}")
    bins = integer(bins)
    span = None
    if range is not None:
        try:
            lo, hi = (float(r) for r in range)
        except (TypeError, ValueError):
            raise ArrayError(f"histogram: range must be two numbers (min, "
                             f"max), not {range!r}") from None
        span = (lo, hi)
    v = view(x)
    if map is not None and not is_c_contiguous(v.shape, v.strides):
        # map= may read the index i, which counts in memory's order: a
        # transposed x is copied row-major first.
        x = copied_dims_last(x, v, (), "histogram")[0]
        v = view(x)
    ctx = _context_for(v, context)
    n = _flat(v, "histogram")
    words = [f"histogram {v.type}"]
    params_c, nparams = None, 0
    if map is not None:
        if range is not None:
            raise ArrayError("histogram: map= gives the bin; range= has no "
                             "meaning with it")
        names, values = expressions.order_params(params)
        words.append(f"map={expressions.quote(expressions.rename(map, names))}")
        if values:
            words.append("params=" + ",".join(expressions.param_type(p)
                                                for p in values))
        params_c, nparams = expressions.scalars(values)
    elif params:
        raise ArrayError("histogram: parameters are read by a map= only")
    elif v.type in _FLOATS:
        lo, hi = span or (0.0, 0.0)
        if (lo, hi) == (0.0, 0.0):  # as torch.histc: the data's min and max
            lo, hi = (reduce(v.obj, "min", context=ctx),
                      reduce(v.obj, "max", context=ctx)) if n else (0.0, 0.0)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ArrayError(f"histogram: range of [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if lo > hi:
            raise ArrayError(f"histogram: max must be larger than min "
                             f"({lo} > {hi})")
        params_c = (_lib.wg_scalar * 2)()
        params_c[0].f64, params_c[1].f64 = lo, hi
        nparams = 2
    elif range is not None:
        raise DTypeError("histogram: integer keys are their own bin; range= "
                         "is for floats (or use map=)")
    words.append(f"bins={bins} counts=u64")
    return _count(v, ctx, " ".join(words), bins, params_c, nparams, out)


def bincount(x, minlength=0, *, out=None, context=None):
    """torch.bincount(x, minlength=minlength) for a 1-D array of
    non-negative integers (i32, u32, i64, u64): out[k] = how many keys are
    k, int64, max(x) + 1 or minlength bins, whichever is more. Finding
    max(x) (and min(x) for signed keys, to refuse negatives as torch does)
    costs reductions first. Weights are not supported."""
    if integer(minlength) is None or integer(minlength) < 0:
        raise ArrayError(f"bincount: minlength must be a non-negative integer, "
                         f"not {minlength!r}")
    minlength = integer(minlength)
    v = view(x)
    if v.type not in _INTS:
        raise DTypeError(f"bincount: integer keys only, not {v.type}")
    if len(v.shape) != 1:
        raise ArrayError(f"bincount: a 1-D array is needed, not shape {v.shape}")
    ctx = _context_for(v, context)
    n = _flat(v, "bincount")
    bins = minlength
    if n:
        if v.type[0] == "i" and reduce(v.obj, "min", context=ctx) < 0:
            raise ArrayError("bincount: only non-negative keys are counted "
                             "(torch.bincount refuses negative ones too)")
        bins = max(bins, int(reduce(v.obj, "max", context=ctx)) + 1)
    if bins == 0:
        return empty_like_kind(v, (0,), "i64", ctx)[0] if out is None else out
    return _count(v, ctx, f"histogram {v.type} bins={bins} counts=u64", bins,
                  None, 0, out)
