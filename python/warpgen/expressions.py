"""Reductions with expressions: map=, combine=/identity=, final=, several
inputs and parameters (docs/expressions.md), and ReductionKernel, a
CuPy-style object over them.

The expression text goes to the library inside the spec text (quoted and
escaped here); the library parses it into a tree and prints it back, so
equal expressions share one kernel and one cache entry. Parameter values
are kernel arguments: a new value never compiles anything.
"""

import re

from . import _lib
from .errors import ArrayError, SpecError

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARAM = re.compile(r"p[0-7]")
_INPUT_NAMES = "xyzw"
# numpy / torch scalar dtype names -> warpgen types
_DTYPE_TYPES = {"float32": "f32", "float64": "f64", "int32": "i32",
                "uint32": "u32", "int64": "i64", "uint64": "u64"}
_INT_RANGES = {"i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1),
               "i64": (-2**63, 2**63 - 1), "u64": (0, 2**64 - 1)}


def quote(expr):
    """expr as a spec value: in double quotes, '"' and '\\' escaped."""
    text = str(expr)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rename(expr, names):
    """expr with each identifier that is a key of `names` replaced by its
    value (all at once, so x->y and y->x swap). The language has no string
    literals, so every identifier is a name or a function."""
    return _IDENT.sub(lambda m: names.get(m.group(0), m.group(0)), str(expr))


def param_type(value):
    """The warpgen type of a parameter value: a numpy/torch scalar keeps its
    dtype; a Python bool or int is i64, a float f64."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        name = str(dtype).replace("torch.", "")
        if name in _DTYPE_TYPES:
            return _DTYPE_TYPES[name]
        raise SpecError(f"a parameter of dtype {name} is not supported; use "
                        "float32, float64, int32, uint32, int64 or uint64",
                        _lib.WG_ESPEC)
    if isinstance(value, (bool, int)):
        return "i64"
    if isinstance(value, float):
        return "f64"
    raise SpecError(f"parameter {value!r} is not a number", _lib.WG_ESPEC)


def order_params(params):
    """(names, values) of keyword parameters: p0..p7 keep their slots,
    other names take the free slots in the order given; `names` maps each
    other name to its p<k>."""
    slots = {}
    for name, value in params.items():
        if _PARAM.fullmatch(name):
            slots[int(name[1])] = value
    free = (k for k in range(8) if k not in slots)
    names = {}
    for name, value in params.items():
        if _PARAM.fullmatch(name):
            continue
        k = next(free, None)
        if k is None:
            raise SpecError("at most 8 parameters (p0..p7)", _lib.WG_ESPEC)
        slots[k] = value
        names[name] = f"p{k}"
    if slots and sorted(slots) != list(range(len(slots))):
        missing = min(set(range(max(slots) + 1)) - set(slots))
        raise SpecError(f"parameter p{missing} is missing (parameters are "
                        "p0, p1, ... in order)", _lib.WG_ESPEC)
    return names, [slots[k] for k in range(len(slots))]


def spec_text(primitive, types, op=None, *, map=None, combine=None,
              identity=None, final=None, params=()):
    """The spec text of a reduction: `types` the input types (one per
    input), `params` the parameter values (their types declared)."""
    words = [primitive, types[0]]
    if op is not None and combine is None:
        words.append(op)
    for key, expr in (("map", map), ("combine", combine),
                      ("identity", identity), ("final", final)):
        if expr is not None:
            words.append(f"{key}={quote(expr)}")
    if len(types) > 1:
        words.append("inputs=" + ",".join(types))
    if params:
        words.append("params=" + ",".join(param_type(v) for v in params))
    return " ".join(words)


def scalars(params):
    """The wg_scalar array of parameter values (each in the member of its
    type), or (None, 0)."""
    if not params:
        return None, 0
    out = (_lib.wg_scalar * len(params))()
    for k, value in enumerate(params):
        t = param_type(value)
        if t[0] == "f":
            setattr(out[k], t, float(value))
            continue
        # ctypes would keep only the low bits of an integer too wide for
        # its member: refuse it rather than pass another number
        v, (lo, hi) = int(value), _INT_RANGES[t]
        if not lo <= v <= hi:
            raise SpecError(f"parameter p{k} = {value!r} does not fit {t} "
                            f"({lo} to {hi})", _lib.WG_ESPEC)
        setattr(out[k], t, v)
    return out, len(params)


class ReductionKernel:
    """A reduction made of expressions, shaped like cupy.ReductionKernel
    but in warpgen's expression language (docs/expressions.md):

        l2 = warpgen.ReductionKernel("T x", "T y", "x * x", "a + b",
                                     "y = sqrt(a)", "0", "l2norm")
        l2(v)                      # a Python scalar
        l2(m, axis=1)              # one value per row of a 2-D array

    in_params: comma-separated "[type] name"; the first names are the input
    arrays (up to 4), in order, and any after them scalars passed as
    parameters (p0, ...). map_expr reads those names, i (the index) and n
    (the length); reduce_expr reads a and b; post_map_expr ("y = ...", or
    just the expression) reads a (the reduced value) and n; identity is an
    expression of literals and the scalars. The output's type is the
    post-map's (or the accumulator's). A call takes the arrays, then the
    scalars, positionally; axis=None reduces everything, axis=1 or -1 each
    row of a 2-D array. `name` is kept for messages."""

    def __init__(self, in_params, out_params, map_expr, reduce_expr,
                 post_map_expr, identity, name="reduce_kernel"):
        self.name = name
        decls = [d.split() for d in str(in_params).split(",") if d.strip()]
        self.in_names = [d[-1] for d in decls]
        if not self.in_names:
            raise SpecError(f"{name}: in_params names no input", _lib.WG_ESPEC)
        self.out_name = str(out_params).split()[-1] if str(out_params).strip() else None
        self.map_expr = map_expr
        self.reduce_expr = reduce_expr
        post = str(post_map_expr).strip() if post_map_expr else None
        if post and self.out_name and re.match(
                r"%s\s*=(?!=)" % re.escape(self.out_name), post):
            post = post.split("=", 1)[1].strip()
        self.post_map_expr = post
        self.identity = identity

    def _names(self, ninputs):
        if ninputs > len(_INPUT_NAMES):
            raise ArrayError(f"{self.name}: at most 4 input arrays")
        names = {n: _INPUT_NAMES[k] for k, n in enumerate(self.in_names[:ninputs])}
        names.update({n: f"p{k}" for k, n in enumerate(self.in_names[ninputs:])})
        return names

    def expressions(self, ninputs):
        """(map, combine, identity, final) in warpgen's names for a call
        with `ninputs` arrays: the inputs become x y z w, scalars p0..,
        and the post-map's a the final step's r."""
        names = self._names(ninputs)
        final = None
        if self.post_map_expr:
            final = rename(self.post_map_expr, dict(names, a="r"))
        return (rename(self.map_expr, names), rename(self.reduce_expr, names),
                rename(self.identity, names), final)

    def __call__(self, *args, axis=None, out=None, context=None):
        from .arrays import view
        ninputs = 0
        for a in args:
            try:
                view(a)
            except Exception:
                break
            ninputs += 1
        if ninputs == 0:
            raise ArrayError(f"{self.name}: the first argument must be an array")
        arrays, scalars_ = args[:ninputs], args[ninputs:]
        if len(arrays) + len(scalars_) != len(self.in_names):
            raise ArrayError(f"{self.name}: takes {len(self.in_names)} arguments "
                             f"({', '.join(self.in_names)}), {len(args)} given")
        map_, combine, identity, final = self.expressions(ninputs)
        params = {f"p{k}": v for k, v in enumerate(scalars_)}
        from .ops import reduce, reduce_rows
        x = arrays if ninputs > 1 else arrays[0]
        kwargs = dict(map=map_, combine=combine, identity=identity,
                      final=final, out=out, context=context, **params)
        if axis is None:
            return reduce(x, None, **kwargs)
        if axis in (1, -1):
            return reduce_rows(x, None, **kwargs)
        raise ArrayError(f"{self.name}: axis must be None or 1 / -1, not "
                         f"{axis!r}")
