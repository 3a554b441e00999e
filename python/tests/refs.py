"""CPU references for the GPU tests, in numpy: integer reductions with the
library's wrap-around, the warp primitives group by group, identities and
tolerances. Floats are computed in float64."""

import math

import numpy as np

NUMPY = {"f16": np.float16, "f32": np.float32, "f64": np.float64,
         "i32": np.int32, "u32": np.uint32, "i64": np.int64,
         "u64": np.uint64}
UNSIGNED = {"i32": np.uint32, "u32": np.uint32, "i64": np.uint64,
            "u64": np.uint64}
FLOATS = ("f16", "bf16", "f32", "f64")
INTS = ("i32", "u32", "i64", "u64")
FLOAT_OPS = ("sum", "prod", "min", "max")
INT_OPS = ("sum", "prod", "min", "max", "and", "or", "xor")

# Relative error of one rounding into the stored type, and the unit
# roundoff of the type values are combined in (halves combine in f32).
STORE_RTOL = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23,
              "f64": 2.0 ** -52}
ACC_EPS = {"f16": 2.0 ** -24, "bf16": 2.0 ** -24, "f32": 2.0 ** -24,
           "f64": 2.0 ** -53}


def identity(type_, op):
    if op == "sum" or op in ("or", "xor"):
        return 0
    if op == "prod":
        return 1
    if type_ in FLOATS:
        return math.inf if op == "min" else -math.inf
    info = np.iinfo(NUMPY[type_])
    if op == "min":
        return int(info.max)
    if op == "max":
        return int(info.min)
    return -1 if type_[0] == "i" else int(info.max)  # and: all ones


def random_data(rng, type_, op, n):
    """Host data for op: floats near 1 for prod (no overflow), odd integers
    for prod (never zero, and they wrap), full-range integers otherwise."""
    if type_ in FLOATS:
        if op == "prod":
            return rng.uniform(0.99, 1.01, n)
        return rng.uniform(-1.0, 1.0, n)
    info = np.iinfo(NUMPY[type_])
    a = rng.integers(int(info.min), int(info.max), n, dtype=NUMPY[type_],
                     endpoint=True)
    return a | 1 if op == "prod" else a


def int_reduce(a, type_, op, axis=None):
    """numpy reduction of integer array `a` with warpgen's semantics (sums
    and products wrap); the result in a's dtype."""
    dtype = NUMPY[type_]
    if op in ("min", "max"):
        return (a.min if op == "min" else a.max)(axis=axis)
    u = a.astype(np.uint64)  # two's complement, mod 2^64
    ufunc = {"sum": np.add, "prod": np.multiply, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    r = ufunc.reduce(u, axis=axis, dtype=np.uint64)
    return np.asarray(r).astype(UNSIGNED[type_]).view(dtype)


def _accumulate(g, type_, op):
    """Inclusive prefix along axis 1 of the (groups, width) array g."""
    if type_ in FLOATS:
        ufunc = {"sum": np.add, "prod": np.multiply, "min": np.fmin,
                 "max": np.fmax}[op]
        return ufunc.accumulate(g.astype(np.float64), axis=1)
    if op in ("min", "max"):
        return (np.minimum if op == "min" else np.maximum).accumulate(g, 1)
    ufunc = {"sum": np.add, "prod": np.multiply, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    r = ufunc.accumulate(g.astype(np.uint64), axis=1, dtype=np.uint64)
    return r.astype(UNSIGNED[type_]).view(NUMPY[type_])


def _groups(a, width, fill):
    n = a.size
    groups = -(-n // width)
    padded = np.full(groups * width, fill, dtype=a.dtype)
    padded[:n] = a
    return padded.reshape(groups, width)


def warp_reference(a, type_, primitive, op, width, lane=0):
    """What warp primitive `primitive` writes for host data `a` (float
    types as float64)."""
    n = a.size
    if type_ in FLOATS:
        a = a.astype(np.float64)
    if primitive in ("reduce", "allreduce", "scan", "exscan"):
        fill = identity(type_, op)
        g = _groups(a, width, fill)
        scan = _accumulate(g, type_, op)
        if primitive == "reduce":
            return scan[:, -1]
        if primitive == "allreduce":
            return np.repeat(scan[:, -1:], width, axis=1).ravel()[:n]
        if primitive == "scan":
            return scan.ravel()[:n]
        ex = np.empty_like(scan)
        ex[:, 0] = fill
        ex[:, 1:] = scan[:, :-1]
        return ex.ravel()[:n]
    g = _groups(a, width, 0)
    valid = _groups(np.ones(n, bool), width, False)
    if primitive == "broadcast":
        src = np.where(valid[:, lane], g[:, lane], 0)
        return np.repeat(src[:, None], width, axis=1).ravel()[:n]
    nonzero = (g != 0) & valid
    if primitive == "ballot":
        bits = (nonzero.astype(np.uint64) << np.arange(width, dtype=np.uint64))
        return bits.sum(axis=1).astype(np.uint32)
    if primitive == "any":
        return nonzero.any(axis=1).astype(np.int32)
    if primitive == "all":
        return (nonzero | ~valid).all(axis=1).astype(np.int32)
    if primitive == "match":
        bits = _bits(g)
        same = (bits[:, :, None] == bits[:, None, :]) & valid[:, None, :]
        weights = np.uint64(1) << np.arange(width, dtype=np.uint64)
        masks = (same.astype(np.uint64) * weights).sum(axis=2)
        return masks.astype(np.uint32).ravel()[:n]
    raise ValueError(primitive)


def _bits(g):
    return g.view(np.uint64) if g.dtype.itemsize == 8 else \
        g.view({2: np.uint16, 4: np.uint32}[g.dtype.itemsize])


def float_tolerance(type_, ref, absum, terms=1):
    """How far a float result may be from the float64 reference: one
    rounding into the stored type, plus combining `terms` values in the
    accumulator."""
    return (STORE_RTOL[type_] * abs(ref) +
            4 * ACC_EPS[type_] * max(math.log2(max(terms, 2)), 1) * absum +
            1e-30)
