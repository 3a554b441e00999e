"""The array operations: whole-array and row reductions, warp primitives.

Each function reads its input with arrays.view, picks the context for the
array's device, checks what the kernel cannot take (dtype, layout, out=),
and makes one C call on the array's stream. Nothing is copied.
"""

import ctypes
import struct

from . import _lib, expressions
from ._lib import lib
from .arrays import (DeviceArray, check_out, device_guard, empty_like_kind,
                     input_views, is_c_contiguous, is_dense, real,
                     same_shape_and_device, view)
from .context import default_context
from .errors import ArrayError, DTypeError, SpecError

_TYPE_INDEX = {name: i for i, name in enumerate(_lib.TYPES)}
_OP_INDEX = {name: i for i, name in enumerate(_lib.OPERATORS)
             if name != "none"}
_PRIMITIVE_INDEX = {name: i for i, name in enumerate(_lib.PRIMITIVES)}
_FIRST_NON_WARP = _PRIMITIVE_INDEX["reduce-array"]
# Warp primitives whose outputs are not of the input's type.
_OUTPUT_TYPES = {"ballot": "u32", "match": "u32", "any": "i32", "all": "i32"}
# The output type of each expression spec text: a function of the text
# alone, asked of the library (which parses the expressions) once.
_OUT_TYPES = {}
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
    params[0].f64 = real(correction, "var/std", "correction")
    return params, 1


def _with_expressions(x, exprs, params):
    return (isinstance(x, (tuple, list)) or params or
            any(e is not None for e in exprs))


def _row_layout(v, what):
    """(rows, cols, row_stride) of the 2-D view v, rows contiguous."""
    if len(v.shape) != 2:
        raise ArrayError(f"{what}: a 2-D array is needed, not shape "
                         f"{v.shape}")
    rows, cols = v.shape
    row_stride, col_stride = v.strides if v.strides is not None else (cols, 1)
    if rows <= 1 or cols == 0:
        # Nothing or one row is read: the strides (which libraries set
        # freely for empty arrays) do not matter.
        row_stride, col_stride = cols, 1
    if cols > 1 and col_stride != 1:
        raise ArrayError(f"{what}: rows must be contiguous (column "
                         f"stride 1), not {col_stride}; pass x.contiguous()")
    if rows > 1 and row_stride < cols:
        raise ArrayError(f"{what}: the row stride {row_stride} is "
                         f"less than the row length {cols}")
    return rows, cols, row_stride


def _rows_out(ctx, v, rows, out, out_type):
    """(out, its pointer): the caller's, checked, or allocated like v."""
    _ready(ctx, v)
    if out is None:
        return empty_like_kind(v, (rows,), out_type, ctx)
    return out, check_out(out, (rows,), out_type, v.device).ptr


def _expr_spec(ctx, what, primitive, vs, op, exprs, correction, params):
    """(the wg_spec, the output type, the parameter array, its length) of a
    reduction with expressions, several inputs or parameters: the spec text
    built by expressions.spec_text for `primitive` over the views vs."""
    names, values = expressions.order_params(params)
    map_, combine, identity, final = (
        None if e is None else expressions.rename(e, names) for e in exprs)
    if combine is None and op is None:
        op = "sum"
    if op is not None:
        _op_index(op)
    if correction is not None and values:
        raise ArrayError(f"{what}: correction= and expression parameters "
                         "do not go together")
    text = expressions.spec_text(primitive, [w.type for w in vs], op,
                                 map=map_, combine=combine, identity=identity,
                                 final=final, params=values)
    c = ctx.c_spec(text)
    out_type = _OUT_TYPES.get(text)
    if out_type is None:
        out_index = lib.wg_reduce_spec_output_type(ctypes.byref(c))
        if out_index < 0:
            ctx.validate_spec(c)  # raises with the library's message
        out_type = _lib.TYPES[out_index]
        if len(_OUT_TYPES) > 4096:
            _OUT_TYPES.clear()
        _OUT_TYPES[text] = out_type
    params_c, nparams = (expressions.scalars(values) if values
                         else _params(correction))
    return c, out_type, params_c, nparams


def _reduce_expr(rows_wise, x, op, exprs, correction, out, context, params,
                 vs=None):
    """reduce / reduce_rows with expressions, several inputs or parameters:
    one spec (text built by expressions.spec_text) and one
    wg_reduce_spec / wg_reduce_rows_spec call. vs: x's views, if made."""
    what = "reduce_rows" if rows_wise else "reduce"
    vs = vs or input_views(what, x)
    v = vs[0]
    ctx = _context_for(v, context)
    primitive = "reduce-rows" if rows_wise else "reduce-array"
    c, out_type, params_c, nparams = _expr_spec(ctx, what, primitive, vs, op,
                                                exprs, correction, params)
    k = len(vs)
    if rows_wise:
        layouts = [_row_layout(w, what) for w in vs]
        if any(lay != layouts[0] for lay in layouts[1:]):
            raise ArrayError(f"{what}: the inputs must share one row stride")
        rows, cols, row_stride = layouts[0]
        out, out_ptr = _rows_out(ctx, v, rows, out, out_type)
        if rows:
            inputs = (ctypes.c_uint64 * k)(*[w.ptr or out_ptr for w in vs])
            ctx.call(lib.wg_reduce_rows_spec, ctypes.byref(c), inputs, k, rows,
                     cols, row_stride, params_c, nparams, out_ptr, v.stream)
        return out
    n = v.size  # C-contiguous (reduce's _whole_as_dims sent the rest away)
    _ready(ctx, v)
    if out is None:
        def launch(handle, scratch):
            inputs = (ctypes.c_uint64 * k)(*[w.ptr or scratch for w in vs])
            return lib.wg_reduce_spec(handle, ctypes.byref(c), inputs, k, n,
                                      params_c, nparams, scratch, v.stream)
        raw = ctx.reduce_to_host(launch, v.stream, _lib.TYPE_SIZES[out_type])
        return _scalar(raw, out_type)
    o = check_out(out, None, out_type, v.device, size=1)
    inputs = (ctypes.c_uint64 * k)(*[w.ptr or o.ptr for w in vs])
    ctx.call(lib.wg_reduce_spec, ctypes.byref(c), inputs, k, n, params_c,
             nparams, o.ptr, v.stream)
    return out


def _whole_as_dims(vs, op, exprs, params, keepdim):
    """Every dim of x (0 for a 0-d x) where reduce with dim=None must go
    the way of dim= to give the row-major answer, else None (one pass over
    memory, in memory's order): keepdim, which returns an array of ones;
    a layout with gaps or negative strides; a layout that is not
    C-contiguous where the elements' order or pairing matters (argmin and
    argmax, expressions, which may use the index i, several inputs, which
    are paired by their position in memory). vs: the inputs' views."""
    ndim = len(vs[0].shape)
    every = tuple(range(ndim)) if ndim else 0
    if keepdim:
        return every
    if all(is_c_contiguous(w.shape, w.strides) for w in vs):
        return None
    ordered = (len(vs) > 1 or op in ("argmin", "argmax") or bool(params) or
               any(e is not None for e in exprs))
    if ordered or not all(is_dense(w.shape, w.strides) for w in vs):
        return every
    return None


def reduce(x, op=None, *, dim=None, keepdim=False, map=None, combine=None,
           identity=None, final=None, correction=None, out=None, context=None,
           **params):
    """Reduces every element of x with op and returns a Python scalar; with
    dim= (an int or a tuple of ints, negative ones from the end; any
    integer NumPy or PyTorch passes, such as np.int64, but not a bool) reduces
    those dimensions only and returns an array of the others, as PyTorch's
    x.sum(dim=dim, keepdim=keepdim) and NumPy's x.sum(axis=dim,
    keepdims=keepdim) shape it (argmin/argmax: the index along the reduced
    dims, row-major over them). Any strides, negative ones included, are
    read in place when they allow (python/warpgen/axis.py); out= then is an
    array of the output's shape.

    Expressions (docs/expressions.md): map= replaces each element by an
    expression of x (and y, z, w when x is a tuple of up to 4 arrays of one
    shape), i (the index), n (the count) and parameters; combine= (over a
    and b) with identity= defines a new reduction (leave op out); final=
    (over r, the reduced value, and n) gives the output. Parameters come by
    keyword: p0=..., or any other name the expressions use (a Python float
    is f64, an int i64, a numpy/torch scalar keeps its dtype); a new value
    compiles nothing. reduce((x, y), map="(x - y) * (x - y)") is the
    squared distance. op defaults to "sum".

    Operators: "sum", "prod", "min", "max", "and", "or", "xor" (an empty x
    gives the identity) and, as PyTorch computes them, "argmin", "argmax"
    (the first index, a NaN wins; an int; empty x is an error), "mean",
    "var", "std" (correction, default 1), "norm1", "norm2", "norminf",
    "logsumexp" and "count_nonzero". The output type
    (wg_reduce_output_type): indices and counts i64, logsumexp of integers
    f32, else x's type; so integer sum and prod wrap in x's type, where
    PyTorch's give int64. With out= (a one-element array of that type on
    x's device; with keepdim, of the output's shape) it writes there
    without waiting and returns out. dim=None reads any layout; keepdim
    then returns an array of x's rank, every dimension 1, as PyTorch's
    x.sum(dim=None, keepdim=True) does."""
    exprs = (map, combine, identity, final)
    whole = dim is None
    vs = input_views("reduce", x) if whole else None
    if whole:
        dim = _whole_as_dims(vs, op, exprs, params, keepdim)
    if dim is not None:
        from .axis import reduce_dims
        if not whole or keepdim:
            return reduce_dims(x, op, dim, keepdim, exprs, correction, out,
                               context, params)
        if out is not None:  # one element: as the 0-d output, in place
            reduce_dims(x, op, dim, False, exprs, correction,
                        out.reshape(()) if hasattr(out, "reshape") else out,
                        context, params)
            return out
        res = reduce_dims(x, op, dim, False, exprs, correction, None, context,
                          params)
        if isinstance(res, DeviceArray):  # bf16 comes back as its raw bits
            return _scalar(res.to_host().tobytes(), res.type)
        return res.item()
    if _with_expressions(x, exprs, params):
        return _reduce_expr(False, x, op, exprs, correction, out, context,
                            params, vs)
    op = "sum" if op is None else op
    v = vs[0]  # dense (_whole_as_dims sent the rest away)
    op_index = _op_index(op)
    ctx = _context_for(v, context)
    n = v.size
    reduction, out_type = _reduction(_TYPE_INDEX[v.type], op_index)
    params, nparams = _params(correction)
    _ready(ctx, v)
    if out is None:
        def launch(handle, scratch):
            inputs = (ctypes.c_uint64 * 1)(v.ptr or scratch)
            return lib.wg_reduce_ex(handle, ctypes.byref(reduction), inputs, 1,
                                    n, params, nparams, scratch, v.stream)
        raw = ctx.reduce_to_host(launch, v.stream, _lib.TYPE_SIZES[out_type])
        return _scalar(raw, out_type)
    o = check_out(out, None, out_type, v.device, size=1)
    # n == 0 reads nothing; the library still wants a valid pointer.
    inputs = (ctypes.c_uint64 * 1)(v.ptr or o.ptr)
    ctx.call(lib.wg_reduce_ex, ctypes.byref(reduction), inputs, 1, n, params,
             nparams, o.ptr, v.stream)
    return out


def reduce_rows(x, op=None, *, map=None, combine=None, identity=None,
                final=None, correction=None, out=None, context=None,
                **params):
    """Reduces each row of the 2-D array x into out[r] (shape (rows,)), with
    the operators of reduce and its output types (argmin/argmax: the index
    within the row). Rows may be padded (any row stride >= cols) but each
    row must be contiguous. Returns out, allocated like x when not given.
    Expressions, several inputs (one row stride) and parameters as for
    reduce; in them i is the column and n the row length."""
    exprs = (map, combine, identity, final)
    if _with_expressions(x, exprs, params):
        return _reduce_expr(True, x, op, exprs, correction, out, context,
                            params)
    op = "sum" if op is None else op
    v = view(x)
    op_index = _op_index(op)
    ctx = _context_for(v, context)
    rows, cols, row_stride = _row_layout(v, "reduce_rows")
    reduction, out_type = _reduction(_TYPE_INDEX[v.type], op_index)
    params, nparams = _params(correction)
    out, out_ptr = _rows_out(ctx, v, rows, out, out_type)
    if rows:
        inputs = (ctypes.c_uint64 * 1)(v.ptr or out_ptr)
        ctx.call(lib.wg_reduce_rows_ex, ctypes.byref(reduction), inputs, 1,
                 rows, cols, row_stride, params, nparams, out_ptr, v.stream)
    return out


def _whole_or_rows(x, op, dim, correction=None, out=None, context=None):
    """reduce over the whole array (dim None) or over dim (any dims)."""
    return reduce(x, op, dim=dim, correction=correction, out=out,
                  context=context)


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


def warp(x, spec, *, out=None, context=None, params=None):
    """Applies a warp-primitive spec (a Spec or its text) to x, taken as a
    flat C-contiguous sequence in groups of spec.width elements (x may be a
    tuple of up to 4 arrays of one shape for a spec with inputs=). The
    spec's type must be x's. Returns out: x's shape for one output per
    element, else (groups,); the operator's output type for reduce,
    allreduce and the scans (wg_reduce_spec_output_type: argmax gives i64
    indices), uint32 (ballot, match) or int32 (any, all). params: the
    values of p0.. in order (or the operator's own, var/std's correction),
    a kernel argument: a new value compiles nothing."""
    arrays = tuple(x) if isinstance(x, (tuple, list)) else (x,)
    return _warp([view(a) for a in arrays], spec, out, context, params or ())


def _warp(vs, spec, out, context, params=()):
    same_shape_and_device("warp", vs)
    v = vs[0]
    ctx = _context_for(v, context)
    c = ctx.c_spec(spec)
    if c.primitive >= _FIRST_NON_WARP:
        raise SpecError(f"warp: {_lib.PRIMITIVES[c.primitive]} is not a warp "
                        "primitive; use warpgen.reduce or reduce_rows",
                        _lib.WG_ESPEC)
    if c.type != _TYPE_INDEX[v.type]:
        raise DTypeError(f"warp: the spec is for {_lib.TYPES[c.type]}, the "
                         f"array holds {v.type}")
    for w in vs:
        if not is_c_contiguous(w.shape, w.strides):
            raise ArrayError(f"warp: groups are consecutive elements, so the "
                             f"input must be C-contiguous (strides "
                             f"{w.strides}); pass x.contiguous()")
    n = v.size
    count, elem_size = ctypes.c_uint64(), ctypes.c_size_t()
    status = lib.wg_output_shape(ctypes.byref(count), ctypes.byref(elem_size),
                                 ctypes.byref(c), n)
    if status != _lib.WG_OK:
        raise SpecError(f"wg_output_shape: {_lib.strerror(status)}", status)
    shape = v.shape if count.value == n else (count.value,)
    out_index = lib.wg_reduce_spec_output_type(ctypes.byref(c))
    out_type = (_lib.TYPES[out_index] if out_index >= 0 else
                _OUTPUT_TYPES.get(_lib.PRIMITIVES[c.primitive], v.type))
    params_c, nparams = expressions.scalars(list(params)) if params else (None, 0)
    _ready(ctx, v)
    if out is None:
        out, out_ptr = empty_like_kind(v, shape, out_type, ctx)
    else:
        out_ptr = check_out(out, shape, out_type, v.device).ptr
    if n:
        k = len(vs)
        inputs = (ctypes.c_uint64 * k)(*[w.ptr for w in vs])
        ctx.call(lib.wg_warp_ex, ctypes.byref(c), inputs, k, n, params_c,
                 nparams, out_ptr, v.stream)
    return out


# --- one function per warp primitive -----------------------------------------

def _primitive(x, name, op, width, variant, lane, out, context, exprs=(None,) * 4,
               correction=None, params=None):
    """warp() with the spec named by fields, for x's own type (x a tuple:
    the inputs x, y, z, w), with expressions and parameters as reduce()
    takes them."""
    vs = input_views("warp", x)
    params = params or {}
    if correction is not None and params:
        raise ArrayError("warp: correction= and expression parameters do not "
                         "go together")
    names, values = expressions.order_params(params)
    map_, combine, identity, final = (
        None if e is None else expressions.rename(e, names) for e in exprs)
    if op is not None and combine is None:
        _op_index(op)
    text = expressions.spec_text(name, [w.type for w in vs], op, map=map_,
                                 combine=combine, identity=identity,
                                 final=final, params=values)
    text += f" width={width} variant={variant}{f' lane={lane}' if lane else ''}"
    if correction is not None:
        values = [real(correction, "warp", "correction")]
    return _warp(vs, text, out, context, values)


_WARP_DOC = """

    op: any operator reduce() takes ("sum", "argmax", "var", ...; the scans
    take sum, prod, min, max, and, or, xor) or None with combine=. map=,
    combine=, identity=, final= and parameters by keyword as for reduce():
    i in a map is the element's global index, n the group's count (width,
    fewer at the end); final= sees r and n. argmin/argmax give the global
    index of the group's element (i64); var/std take correction=. x may be
    a tuple of up to 4 arrays of one shape (the map's x, y, z, w)."""


def warp_reduce(x, op="sum", *, width=32, variant="auto", map=None,
                combine=None, identity=None, final=None, correction=None,
                out=None, context=None, **params):
    """One result per group of `width` elements (shape (ceil(n/width),))."""
    return _primitive(x, "reduce", None if combine else op, width, variant, 0,
                      out, context, (map, combine, identity, final),
                      correction, params)


def warp_allreduce(x, op="sum", *, width=32, variant="auto", map=None,
                   combine=None, identity=None, final=None, correction=None,
                   out=None, context=None, **params):
    """Every element gets its group's reduction (x's shape)."""
    return _primitive(x, "allreduce", None if combine else op, width, variant,
                      0, out, context, (map, combine, identity, final),
                      correction, params)


def warp_scan(x, op="sum", *, width=32, variant="auto", map=None,
              combine=None, identity=None, out=None, context=None, **params):
    """Inclusive prefix within each group (x's shape)."""
    return _primitive(x, "scan", None if combine else op, width, variant, 0,
                      out, context, (map, combine, identity, None), None,
                      params)


def warp_exscan(x, op="sum", *, width=32, variant="auto", map=None,
                combine=None, identity=None, out=None, context=None,
                **params):
    """Exclusive prefix within each group; lane 0 gets the identity."""
    return _primitive(x, "exscan", None if combine else op, width, variant, 0,
                      out, context, (map, combine, identity, None), None,
                      params)


for _f in (warp_reduce, warp_allreduce, warp_scan, warp_exscan):
    _f.__doc__ += _WARP_DOC


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
