"""CPU references for the GPU tests.

The answer every test must meet comes from the one CPU oracle in C
(tests/oracle.h: integers exact, floats within its one bound derived from
the count and the type), loaded from liboracle.so with ctypes:
check_warp() and check_reduce() compare a GPU's raw output bytes with it
and return its report. The library is found through WARPGEN_ORACLE_LIBRARY,
else beside WARPGEN_LIBRARY (build/tests/liboracle.so), else in build/.

The numpy functions below (integer reductions with the library's
wrap-around, the warp primitives group by group, identities) are the
values the tests print and compare with PyTorch; their float_tolerance is a
second, independent bound (tree depth instead of count, tighter for warp
groups), kept so that neither check is weaker than before."""

import ctypes
import math
import os

try:  # the C oracle's bindings work without numpy (test_oracle.py)
    import numpy as np
except ImportError:
    np = None

NUMPY = {} if np is None else {
    "f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32,
    "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
UNSIGNED = {} if np is None else {
    "i32": np.uint32, "u32": np.uint32, "i64": np.uint64, "u64": np.uint64}
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


# --- the C oracle (tests/oracle.h) through liboracle.so --------------------

class OracleReport(ctypes.Structure):
    """wg_oracle_report: outputs compared, how many differ, the first."""
    _fields_ = [("checked", ctypes.c_uint64), ("mismatches", ctypes.c_uint64),
                ("first_index", ctypes.c_uint64), ("first", ctypes.c_char * 320),
                ("worst_ratio", ctypes.c_double)]

    def __repr__(self):
        return (f"checked={self.checked} mismatches={self.mismatches} "
                f"worst={self.worst_ratio:.3f} first={self.first.decode()!r}")


def _oracle_candidates():
    env = os.environ.get("WARPGEN_ORACLE_LIBRARY")
    if env:
        return [env]
    found = []
    lib = os.environ.get("WARPGEN_LIBRARY")
    if lib:
        found.append(os.path.join(os.path.dirname(os.path.abspath(lib)),
                                  "tests", "liboracle.so"))
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    found.append(os.path.join(root, "build", "tests", "liboracle.so"))
    return found


_ORACLE = None


def oracle():
    """liboracle.so, loaded once (OSError naming the places tried)."""
    global _ORACLE
    if _ORACLE is None:
        tried = _oracle_candidates()
        path = next((p for p in tried if os.path.exists(p)), None)
        if path is None:
            raise OSError("no liboracle.so (build it with meson; set "
                          "WARPGEN_ORACLE_LIBRARY) at " + ", ".join(tried))
        lib = ctypes.CDLL(path)
        u64, vp = ctypes.c_uint64, ctypes.c_void_p
        lib.wg_oracle_report_init.argtypes = [ctypes.POINTER(OracleReport)]
        lib.wg_oracle_warp_check_text.argtypes = [
            ctypes.POINTER(OracleReport), ctypes.c_char_p, vp, u64, vp]
        lib.wg_oracle_warp_check_text.restype = ctypes.c_int
        lib.wg_oracle_rows_check.argtypes = [
            ctypes.POINTER(OracleReport), ctypes.c_int, ctypes.c_int, vp, u64,
            u64, ctypes.POINTER(ctypes.c_double), ctypes.c_size_t, vp]
        lib.wg_oracle_rows_check.restype = None
        _ORACLE = lib
    return _ORACLE


def _buffer(a):
    """A copy of the raw bytes of `a` (a numpy array or any buffer)."""
    if np is not None and isinstance(a, np.ndarray):
        data = np.ascontiguousarray(a).tobytes()  # memoryview refuses 0-sized shapes
    else:
        data = bytes(memoryview(a).cast("B"))
    return ctypes.create_string_buffer(data, len(data) + 1)


def check_warp(spec, host_in, n, host_out):
    """The oracle's report on warp-primitive spec `spec` (text) for the n
    inputs host_in and the outputs host_out, both numpy arrays of the raw
    elements (bf16 as 16-bit integers)."""
    lib = oracle()
    report = OracleReport()
    lib.wg_oracle_report_init(ctypes.byref(report))
    rc = lib.wg_oracle_warp_check_text(ctypes.byref(report), spec.encode(),
                                       _buffer(host_in), n, _buffer(host_out))
    if rc:
        raise ValueError(f"the oracle refuses spec {spec!r} ({rc})")
    return report


def check_reduce(type_, op, host_in, rows, cols, host_out, params=()):
    """The oracle's report on `rows` reductions of `cols` raw elements each
    (host_in, row-major) against the rows raw outputs host_out; params as
    for wg_reduce_ex (f64 values)."""
    import warpgen
    lib = oracle()
    report = OracleReport()
    lib.wg_oracle_report_init(ctypes.byref(report))
    p = (ctypes.c_double * max(len(params), 1))(*params)
    lib.wg_oracle_rows_check(ctypes.byref(report),
                             warpgen._lib.TYPES.index(type_),
                             warpgen._lib.OPERATORS.index(op),
                             _buffer(host_in), rows, cols, p, len(params),
                             _buffer(host_out))
    return report


def oracle_sharded():
    """liboracle.so with the sharded reductions' CPU twins bound
    (wg_oracle_partial, wg_oracle_combine; tests/oracle_acc.c) and
    wg_oracle_fill."""
    lib = oracle()
    vp, u64, i = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int
    lib.wg_oracle_partial.argtypes = [vp, i, i, vp, u64, u64, ctypes.c_int64]
    lib.wg_oracle_partial.restype = i
    lib.wg_oracle_combine.argtypes = [vp, i, i, vp, u64, u64, vp, ctypes.c_size_t]
    lib.wg_oracle_combine.restype = i
    lib.wg_oracle_fill.argtypes = [i, i, vp, u64, u64]
    lib.wg_oracle_fill.restype = None
    return lib
