"""Running prefixes: warpgen.scan, warpgen.cumsum, cumprod, cummax, cummin
over torch, CuPy and other CUDA arrays (wg_scan_array_spec and
wg_scan_rows_spec, include/warpgen.h).

The axis scanned decides the kernel: a 1-D array is one whole-array scan;
the last axis of an N-d array is a row scan (the leading axes flattened
into rows, each row contiguous, rows any stride apart). Any other axis of a
torch or CuPy array is moved last and made contiguous (one copy), scanned,
and the result moved back: a view with the input's shape whose memory is
laid out with that axis last (not C-contiguous). Other arrays must be
scanned along their last axis.
"""

import ctypes

from . import _lib, expressions
from ._lib import lib
from .arrays import check_out, copied_dims_last, empty_like_kind, view
from .axis import normalize_dim
from .errors import ArrayError, SpecError
from .ops import _context_for, _op_index, _ready

SCAN_OPERATORS = ("sum", "prod", "min", "max", "and", "or", "xor")


def _rows_of(v):
    """(rows, cols, row_stride) of v scanned along its last axis, or None
    when the leading axes do not flatten into one row stride."""
    shape = v.shape
    cols = shape[-1]
    rows = 1
    for d in shape[:-1]:
        rows *= d
    if v.strides is None or rows * cols == 0:
        return rows, cols, cols
    strides = v.strides
    if cols > 1 and strides[-1] != 1:
        return None
    # Leading axes of length 1 do not matter; the others must nest.
    lead = [(d, s) for d, s in zip(shape[:-1], strides[:-1]) if d != 1]
    if not lead:
        return rows, cols, cols
    for (d0, s0), (d1, s1) in zip(lead, lead[1:]):
        if s0 != s1 * d1:
            return None
    row_stride = lead[-1][1]
    if rows > 1 and row_stride < cols:
        return None
    return rows, cols, row_stride


def scan(x, op="sum", dim=-1, exclusive=False, *, deterministic=True, map=None,
         combine=None, identity=None, out=None, context=None):
    """The running `op` of x along `dim`: out[..., i] = x[..., 0] op ... op
    x[..., i] (exclusive=True: up to i - 1, the first the identity).

    op: "sum", "prod", "min", "max" (floats: a NaN loses, as fmin/fmax;
    torch.cummax lets it win), "and", "or", "xor"; or combine= (over a and
    b) with identity= for a running user combine (docs/expressions.md);
    map= (over x and i, the index along dim) first maps each element. The
    output has the operator's value type: integers keep their type and
    wrap (torch.cumsum gives int64), f16/bf16 accumulate in f32 and each
    output is rounded once. deterministic=False takes the faster single
    pass whose floating sums may differ in their last bits from run to run.

    out= (last-axis scans only): a C-contiguous array of x's shape and the
    output type; it may be x itself (in place). Returns the output,
    allocated like x when out is None."""
    v = view(x)
    ndim = len(v.shape)
    axis = normalize_dim(dim, ndim, "scan")
    if ndim > 1 and axis != ndim - 1:
        if out is not None:
            raise ArrayError("scan: out= needs dim to be the last axis")
        moved, back = copied_dims_last(x, v, (axis,), "scan")
        return back(scan(moved, op, -1, exclusive, deterministic=deterministic,
                         map=map, combine=combine, identity=identity,
                         context=context))
    if combine is None:
        if op not in SCAN_OPERATORS:
            _op_index(op)  # unknown names get the list of every operator
            raise SpecError(f"scan: '{op}' has no running form; one of "
                            + ", ".join(SCAN_OPERATORS), _lib.WG_ESPEC)
        op_word = op
    else:
        op_word = None
    ctx = _context_for(v, context)
    rows_wise = ndim > 1
    layout = _rows_of(v) if rows_wise else None
    if rows_wise and layout is None:
        if v.kind not in ("torch", "cupy"):
            raise ArrayError(f"scan: strides {v.strides} for shape {v.shape} "
                             "do not make rows; pass a contiguous array")
        if out is not None:
            raise ArrayError("scan: out= needs rows that are contiguous")
        x = copied_dims_last(x, v, (), "scan")[0]
        v = view(x)
        layout = _rows_of(v)
    if not rows_wise and v.strides is not None and v.size > 1 and \
            v.strides[0] != 1:
        if v.kind not in ("torch", "cupy") or out is not None:
            raise ArrayError(f"scan: a 1-D array of stride {v.strides[0]}; "
                             "pass a contiguous array")
        x = copied_dims_last(x, v, (), "scan")[0]
        v = view(x)
    primitive = ("exscan" if exclusive else "scan") + \
        ("-rows" if rows_wise else "-array")
    text = expressions.spec_text(primitive, [v.type], op_word, map=map,
                                 combine=combine, identity=identity)
    if not deterministic:
        text += " deterministic=0"
    c = ctx.c_spec(text)
    out_index = lib.wg_scan_spec_output_type(ctypes.byref(c))
    if out_index < 0:
        ctx.validate_spec(c)  # raises with the library's message
        raise SpecError(f"scan: {text!r} is not a scan", _lib.WG_ESPEC)
    out_type = _lib.TYPES[out_index]
    shape = tuple(v.shape)
    _ready(ctx, v)
    if out is None:
        out, out_ptr = empty_like_kind(v, shape, out_type, ctx)
    else:
        out_ptr = check_out(out, shape, out_type, v.device).ptr
    if rows_wise:
        rows, cols, row_stride = layout
        if rows and cols:
            ctx.call(lib.wg_scan_rows_spec, ctypes.byref(c), v.ptr, rows, cols,
                     row_stride, out_ptr, cols, v.stream)
    elif v.size:
        ctx.call(lib.wg_scan_array_spec, ctypes.byref(c), v.ptr, v.size,
                 out_ptr, v.stream)
    return out


def cumsum(x, dim, *, exclusive=False, deterministic=True, out=None,
           context=None):
    """torch.cumsum(x, dim) (integers keep their type and wrap)."""
    return scan(x, "sum", dim, exclusive, deterministic=deterministic, out=out,
                context=context)


def cumprod(x, dim, *, exclusive=False, deterministic=True, out=None,
            context=None):
    """torch.cumprod(x, dim) (integers keep their type and wrap)."""
    return scan(x, "prod", dim, exclusive, deterministic=deterministic,
                out=out, context=context)


def cummax(x, dim, *, out=None, context=None):
    """The values of torch.cummax(x, dim) (a NaN loses, as fmax)."""
    return scan(x, "max", dim, out=out, context=context)


def cummin(x, dim, *, out=None, context=None):
    """The values of torch.cummin(x, dim) (a NaN loses, as fmin)."""
    return scan(x, "min", dim, out=out, context=context)
