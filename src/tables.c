/*
 * tables.c - element types, operators, primitives and variants as data.
 *
 * Adding a type or an operator is adding a row here; codegen and the spec
 * validator read these rows and never switch on a particular type.
 */
#include "family.h"

#define INF_F "__int_as_float(0x7f800000)"
#define INF_D "__longlong_as_double(0x7ff0000000000000LL)"

/* name, ctype, acc, uacc, load, store, lowest, highest, bits, to_bits,
 * from_bits, nonzero, size, is_float, is_signed. nonzero tests the storage
 * bits, never a conversion: a float is non-zero when any bit but the sign is
 * set (-0.0 is zero, NaN is not). */
const wg_type_info wg_types[WG_TYPE_COUNT] = {
  [WG_F16] = {"f16", "unsigned short", "float", NULL, "wg_f16_to_f32(x)",
              "wg_f32_to_f16(v)", "-" INF_F, INF_F, "unsigned int",
              "(unsigned int)x", "(unsigned short)b", "(x & 0x7fffu) != 0u", 2,
              true, true},
  [WG_BF16] = {"bf16", "unsigned short", "float", NULL, "wg_bf16_to_f32(x)",
               "wg_f32_to_bf16(v)", "-" INF_F, INF_F, "unsigned int",
               "(unsigned int)x", "(unsigned short)b", "(x & 0x7fffu) != 0u", 2,
               true, true},
  [WG_F32] = {"f32", "float", "float", NULL, "x", "v", "-" INF_F, INF_F,
              "unsigned int", "__float_as_uint(x)", "__uint_as_float(b)",
              "(__float_as_uint(x) << 1) != 0u", 4, true, true},
  [WG_F64] = {"f64", "double", "double", NULL, "x", "v", "-" INF_D, INF_D,
              "unsigned long long",
              "(unsigned long long)__double_as_longlong(x)",
              "__longlong_as_double((long long)b)",
              "((unsigned long long)__double_as_longlong(x) << 1) != 0ull", 8,
              true, true},
  [WG_I32] = {"i32", "int", "int", "unsigned int", "x", "v",
              "(-2147483647 - 1)", "2147483647", "unsigned int",
              "(unsigned int)x", "(int)b", "x != 0", 4, false, true},
  [WG_U32] = {"u32", "unsigned int", "unsigned int", "unsigned int", "x", "v",
              "0u", "0xffffffffu", "unsigned int", "x", "b", "x != 0u", 4,
              false, false},
  [WG_I64] = {"i64", "long long", "long long", "unsigned long long", "x", "v",
              "(-9223372036854775807LL - 1)", "9223372036854775807LL",
              "unsigned long long", "(unsigned long long)x", "(long long)b",
              "x != 0", 8, false, true},
  [WG_U64] = {"u64", "unsigned long long", "unsigned long long",
              "unsigned long long", "x", "v", "0ull", "0xffffffffffffffffull",
              "unsigned long long", "x", "b", "x != 0ull", 8, false, false},
};

/* The operator model (internal.h, wg_operator_info). Expressions see:
 *   identity        -                         -> wg_acc
 *   combine         a, b (wg_acc)             -> wg_acc
 *   map             v (the element as ${value}), i (its index, long long)
 *   final           r (wg_acc), n (the count: the array's n or the row's
 *                   length, unsigned long long), p (wg_params)
 *                                             -> the output's arithmetic type
 * ${value}, ${uacc}, ${lowest} and ${highest} are those of the value type.
 * `defs` are device functions the row's expressions call, emitted once
 * after wg_acc. Integer sums and products go through the unsigned twin:
 * they wrap, as the header promises, instead of being undefined on
 * overflow. */

#define FLOATS ((1u << WG_F16) | (1u << WG_BF16) | (1u << WG_F32) | (1u << WG_F64))
#define INTS ((1u << WG_I32) | (1u << WG_U32) | (1u << WG_I64) | (1u << WG_U64))
#define ALL_TYPES (FLOATS | INTS)
#define NO_INDEX "0x7fffffffffffffffLL"

/* argmin/argmax: b replaces a when b is a NaN and a is not (NaN wins, as in
 * PyTorch), when b is better, or on a tie (two NaNs, equal values) when b
 * comes first. Ties decided by index make the combine associative and
 * commutative: any fold order gives the first index. A merge runs about
 * once an element, so it decides with predicates and selects (& and |,
 * which need no branch, not && and ||); b_better is false when either
 * side is a NaN. */
static const char arg_defs[] =
    "static __device__ __forceinline__ wg_acc wg_arg_pick(wg_acc a, wg_acc b,\n"
    "    bool b_better) {\n"
    "  const bool a_nan = a.v != a.v, b_nan = b.v != b.v;\n"
    "  const bool tie = a_nan || a.v == b.v;\n"
    "  const bool take_b = (b_nan & !a_nan) | ((a_nan == b_nan) & (b_better | (tie & (b.i < a.i))));\n"
    "  wg_acc r;\n"
    "  r.v = take_b ? b.v : a.v;\n"
    "  r.i = take_b ? b.i : a.i;\n"
    "  return r;\n"
    "}\n";

/* logsumexp: (max, sum of exp(x - max)), merged online: one exp a merge
 * and no branch (a merge runs about once an element). The side with the
 * greater max keeps it; the other's sum is scaled by exp(lo - hi). When
 * lo - hi is NaN (both maxima the same infinity) fmax makes it -inf and
 * the scale exp(-inf) = 0, as for the identity's -inf: the greater side
 * is kept. A NaN max wins: a's by the compare, b's by the last select. */
static const char lse_defs[] =
    "static __device__ __forceinline__ float wg_lse_exp(float d) { return __expf(d); }\n"
    "static __device__ __forceinline__ double wg_lse_exp(double d) { return exp(d); }\n"
    "static __device__ __forceinline__ wg_acc wg_lse_merge(wg_acc a, wg_acc b) {\n"
    "  const bool b_hi = a.m < b.m;\n"
    "  const ${value} hm = b_hi ? b.m : a.m, lm = b_hi ? a.m : b.m;\n"
    "  const ${value} hs = b_hi ? b.s : a.s, ls = b_hi ? a.s : b.s;\n"
    "  wg_acc r = {b.m != b.m ? b.m : hm, hs + ls * wg_lse_exp(fmax(lm - hm, ${lowest}))};\n"
    "  return r;\n"
    "}\n";

/* A lane's values at once: the max first, then one exp a value (the
 * merge costs an exp and a rescale an element). A NaN stays the max; an
 * infinite max gives exp(NaN -> lowest) = 0 to its equals, as the merge
 * does. */
static const char lse_fold[] =
    "  ${value} m = v[0];\n"
    "#pragma unroll\n"
    "  for (int j = 1; j < N; j++) m = (v[j] > m || v[j] != v[j]) ? v[j] : m;\n"
    "  ${value} s = 0;\n"
    "#pragma unroll\n"
    "  for (int j = 0; j < N; j++) s += wg_lse_exp(fmax(v[j] - m, ${lowest}));\n"
    "  return wg_acc{m, s};\n";

/* mean/var/std: (count, mean, M2) merged as Chan et al.; the counts are
 * exact 64-bit integers. An infinity makes the variance NaN, as in PyTorch:
 * an element's M2 is v - v (0, or NaN for inf and NaN), and a merge whose
 * means differ by an infinity gives NaN. */
static const char welford_defs[] =
    "static __device__ __forceinline__ float wg_ratio(float a, float b) { return __fdividef(a, b); }\n"
    "static __device__ __forceinline__ double wg_ratio(double a, double b) { return a / b; }\n"
    "static __device__ __forceinline__ wg_acc wg_welford_merge(wg_acc a, wg_acc b) {\n"
    "  if (b.n == 0) return a;\n"
    "  if (a.n == 0) return b;\n"
    "  wg_acc r;\n"
    "  r.n = a.n + b.n;\n"
    "  const ${value} d = b.mean - a.mean;\n"
    "  if (a.n == b.n) { /* the kernels' trees: equal counts, no division */\n"
    "    r.mean = a.mean + d * (${value})0.5;\n"
    "    r.m2 = a.m2 + b.m2 + d * d * ((${value})a.n * (${value})0.5);\n"
    "  } else {\n"
    "    const ${value} wb = wg_ratio((${value})b.n, (${value})r.n);\n"
    "    r.mean = a.mean + d * wb;\n"
    "    r.m2 = a.m2 + b.m2 + d * d * ((${value})a.n * wb);\n"
    "  }\n"
    "  if (d - d != d - d) r.m2 = d - d; /* an infinity met another: NaN */\n"
    "  return r;\n"
    "}\n"
    "/* M2 / max(0, n - correction), as PyTorch: 0/0 is NaN, M2/0 infinite. */\n"
    "static __device__ __forceinline__ ${value} wg_welford_var(wg_acc r,\n"
    "    const wg_params &p) {\n"
    "  const ${value} n = (${value})r.n, c = (${value})p.p[0].f64;\n"
    "  return r.m2 / (n > c ? n - c : (${value})0);\n"
    "}\n";

/* A lane's values at once, as sums shifted by its first value (three
 * operations a value, where a merge takes a dozen and branches): mean =
 * v0 + s / N, M2 = q - s * s / N, N a power of two. The shift keeps the
 * cancellation small (v0 is one of the values: M2's relative error is at
 * most about N units); a rounding below 0 is taken as 0. An infinity gives
 * M2 = inf - inf = NaN, as the merge does. */
static const char welford_fold[] =
    "  const ${value} v0 = v[0];\n"
    "  ${value} s = 0, q = 0;\n"
    "#pragma unroll\n"
    "  for (int j = 0; j < N; j++) {\n"
    "    const ${value} d = v[j] - v0;\n"
    "    s += d;\n"
    "    q += d * d;\n"
    "  }\n"
    "  const ${value} mean_d = s * ((${value})1 / (${value})N);\n"
    "  const ${value} m2 = q - s * mean_d;\n"
    "  return wg_acc{(unsigned long long)N, v0 + mean_d, m2 < (${value})0 ? (${value})0 : m2};\n";

/* var and std: PyTorch's default correction (Bessel's). */
static const double correction_default[] = {1.0};

#define SCALAR {{NULL, NULL}}
/* The operators before argmin: scalar, usable by every operator primitive
 * (warp scans included); argmin on: every reduction, no scan. */
#define OLD(name, combine, combine_float, identity, redux, types, note)    \
  name, SCALAR, NULL, identity, combine, combine_float, "v", "r",         \
      WG_OUT_INPUT, types, note, false, false, 0, NULL, redux, true, true

const wg_operator_info wg_operators[WG_OPERATOR_COUNT] = {
  [WG_OP_NONE] = {OLD("none", "a", NULL, "0", NULL, ALL_TYPES, NULL)},
  [WG_OP_SUM] = {OLD("sum", "(wg_acc)((${uacc})a + (${uacc})b)", "a + b", "0",
                     "__reduce_add_sync", ALL_TYPES, NULL)},
  [WG_OP_PROD] = {OLD("prod", "(wg_acc)((${uacc})a * (${uacc})b)", "a * b", "1",
                      NULL, ALL_TYPES, NULL)},
  [WG_OP_MIN] = {OLD("min", "(b < a ? b : a)", "fmin(a, b)", "${highest}",
                     "__reduce_min_sync", ALL_TYPES, NULL)},
  [WG_OP_MAX] = {OLD("max", "(a < b ? b : a)", "fmax(a, b)", "${lowest}",
                     "__reduce_max_sync", ALL_TYPES, NULL)},
  [WG_OP_AND] = {OLD("and", "a & b", NULL, "~(wg_acc)0", "__reduce_and_sync", INTS,
                     "is bitwise and exists for integer types")},
  [WG_OP_OR] = {OLD("or", "a | b", NULL, "0", "__reduce_or_sync", INTS,
                    "is bitwise and exists for integer types")},
  [WG_OP_XOR] = {OLD("xor", "a ^ b", NULL, "0", "__reduce_xor_sync", INTS,
                     "is bitwise and exists for integer types")},
  /* name, accumulator fields, defs, identity, combine, combine_float, map,
   * final, output rule, types, note, float_value, needs_elements, nparams,
   * param_defaults, redux, warp, scan, fold */
  [WG_OP_ARGMIN] = {"argmin", {{"${value}", "v"}, {"long long", "i"}}, arg_defs,
                    "wg_acc{${highest}, " NO_INDEX "}", "wg_arg_pick(a, b, b.v < a.v)",
                    NULL, "wg_acc{v, i}", "r.i", WG_OUT_I64, ALL_TYPES, NULL, false,
                    true, 0, NULL, NULL, true},
  [WG_OP_ARGMAX] = {"argmax", {{"${value}", "v"}, {"long long", "i"}}, arg_defs,
                    "wg_acc{${lowest}, " NO_INDEX "}", "wg_arg_pick(a, b, a.v < b.v)",
                    NULL, "wg_acc{v, i}", "r.i", WG_OUT_I64, ALL_TYPES, NULL, false,
                    true, 0, NULL, NULL, true},
  [WG_OP_MEAN] = {"mean", SCALAR, NULL, "0", "a + b", NULL, "v",
                  "r / (${value})n", WG_OUT_FLOAT, FLOATS,
                  "needs floating types, as in PyTorch", false, false, 0, NULL, NULL, true},
  [WG_OP_VAR] = {"var", {{"unsigned long long", "n"}, {"${value}", "mean"},
                         {"${value}", "m2"}},
                 welford_defs, "wg_acc{0ull, 0, 0}", "wg_welford_merge(a, b)", NULL,
                 "wg_acc{1ull, v, v - v}", "wg_welford_var(r, p)", WG_OUT_FLOAT, FLOATS,
                 "needs floating types, as in PyTorch", false, false, 1, correction_default, NULL, true,
                 false, welford_fold},
  [WG_OP_STD] = {"std", {{"unsigned long long", "n"}, {"${value}", "mean"},
                         {"${value}", "m2"}},
                 welford_defs, "wg_acc{0ull, 0, 0}", "wg_welford_merge(a, b)", NULL,
                 "wg_acc{1ull, v, v - v}", "sqrt(wg_welford_var(r, p))", WG_OUT_FLOAT,
                 FLOATS, "needs floating types, as in PyTorch", false, false, 1,
                 correction_default, NULL, true, false, welford_fold},
  [WG_OP_NORM1] = {"norm1", SCALAR, NULL, "0", "a + b", NULL, "fabs(v)", "r",
                   WG_OUT_FLOAT, FLOATS, "needs floating types, as in PyTorch", false,
                   false, 0, NULL, NULL, true},
  [WG_OP_NORM2] = {"norm2", SCALAR, NULL, "0", "a + b", NULL, "v * v", "sqrt(r)",
                   WG_OUT_FLOAT, FLOATS, "needs floating types, as in PyTorch", false,
                   false, 0, NULL, NULL, true},
  /* max |x| with NaN spreading (fmax would drop it); empty is an error, as
   * PyTorch's vector_norm says it has no identity. */
  [WG_OP_NORMINF] = {"norminf", SCALAR, NULL, "0", "(a < b || b != b) ? b : a", NULL,
                     "fabs(v)", "r", WG_OUT_FLOAT, FLOATS,
                     "needs floating types, as in PyTorch", false, true, 0, NULL,
                     NULL, true},
  [WG_OP_LOGSUMEXP] = {"logsumexp", {{"${value}", "m"}, {"${value}", "s"}}, lse_defs,
                       "wg_acc{${lowest}, 0}", "wg_lse_merge(a, b)", NULL,
                       "wg_acc{v, 1}",
                       "(r.m == ${lowest} || r.m == ${highest} || r.m != r.m) ? r.m"
                       " : r.m + log(r.s)",
                       WG_OUT_FLOAT, ALL_TYPES, NULL, true, false, 0, NULL, NULL, true,
                       false, lse_fold},
  [WG_OP_COUNT_NONZERO] = {"count_nonzero", {{"unsigned long long", NULL}}, NULL, "0ull",
                           "a + b", NULL, "v != (${value})0 ? 1ull : 0ull",
                           "(long long)r", WG_OUT_I64, ALL_TYPES, NULL, false, false,
                           0, NULL, NULL, true},
};

bool wg_operator_accepts(wg_operator op, wg_type type) {
  return (wg_operators[op].types >> type) & 1u;
}

wg_type wg_operator_value_type(wg_operator op, wg_type type) {
  return wg_operators[op].float_value && !wg_types[type].is_float ? WG_F32 : type;
}

wg_type wg_operator_out_type(wg_operator op, wg_type type) {
  switch (wg_operators[op].out) {
  case WG_OUT_I64: return WG_I64;
  case WG_OUT_FLOAT: return wg_types[type].is_float ? type : WG_F32;
  default: return type;
  }
}

#define V(x) (1u << WG_VARIANT_##x)

const wg_primitive_info wg_primitives[WG_PRIMITIVE_COUNT] = {
  [WG_REDUCE] = {"reduce", true, false, true,
                 V(AUTO) | V(DOWN) | V(XOR) | V(IDX) | V(REDUX) | V(SMEM),
                 &wg_family_warp, true},
  [WG_ALLREDUCE] = {"allreduce", true, false, true,
                    V(AUTO) | V(DOWN) | V(XOR) | V(IDX) | V(REDUX) | V(SMEM),
                    &wg_family_warp, true},
  [WG_SCAN] = {"scan", true, false, true, V(AUTO) | V(UP) | V(IDX) | V(SMEM),
               &wg_family_warp, true},
  [WG_EXSCAN] = {"exscan", true, false, true, V(AUTO) | V(UP) | V(IDX) | V(SMEM),
                 &wg_family_warp, true},
  [WG_BROADCAST] = {"broadcast", false, false, true, V(AUTO) | V(IDX) | V(SMEM),
                    &wg_family_warp, false},
  [WG_BALLOT] = {"ballot", false, true, true, V(AUTO) | V(VOTE), &wg_family_warp, false},
  [WG_ANY] = {"any", false, true, true, V(AUTO) | V(VOTE), &wg_family_warp, false},
  [WG_ALL] = {"all", false, true, true, V(AUTO) | V(VOTE), &wg_family_warp, false},
  [WG_MATCH] = {"match", false, true, true, V(AUTO) | V(VOTE), &wg_family_warp, false},
  [WG_REDUCE_ARRAY] = {"reduce-array", true, false, false, V(AUTO),
                       &wg_family_reduce_array, true},
  [WG_REDUCE_ROWS] = {"reduce-rows", true, false, false, V(AUTO),
                      &wg_family_reduce_rows, true},
  [WG_HISTOGRAM] = {"histogram", false, false, false, V(AUTO), &wg_family_histogram, true},
  [WG_COMPACT] = {"compact", false, false, false, V(AUTO), &wg_family_compact, true},
  [WG_SOFTMAX_ROWS] = {"softmax-rows", false, false, false, V(AUTO), &wg_family_rownorm,
                       false},
  [WG_LOG_SOFTMAX_ROWS] = {"log-softmax-rows", false, false, false, V(AUTO),
                           &wg_family_rownorm, false},
  [WG_LAYERNORM_ROWS] = {"layernorm-rows", false, false, false, V(AUTO), &wg_family_rownorm,
                         false},
  [WG_RMSNORM_ROWS] = {"rmsnorm-rows", false, false, false, V(AUTO), &wg_family_rownorm,
                       false},
  [WG_REDUCE_AXIS] = {"reduce-axis", true, false, false, V(AUTO),
                      &wg_family_reduce_axis, true},
  [WG_SCAN_ARRAY] = {"scan-array", true, false, false, V(AUTO), &wg_family_scan_array, true},
  [WG_EXSCAN_ARRAY] = {"exscan-array", true, false, false, V(AUTO), &wg_family_scan_array,
                       true},
  [WG_SCAN_ROWS] = {"scan-rows", true, false, false, V(AUTO), &wg_family_scan_rows, true},
  [WG_EXSCAN_ROWS] = {"exscan-rows", true, false, false, V(AUTO), &wg_family_scan_rows,
                      true},
};

const char *const wg_variant_names[WG_VARIANT_COUNT] = {
  "auto", "down", "xor", "up", "idx", "redux", "smem", "vote",
};

const char *const wg_layout_names[WG_LAYOUT_COUNT] = {"vec", "lane"};

const char *wg_primitive_name(wg_primitive p) {
  return (unsigned)p < WG_PRIMITIVE_COUNT ? wg_primitives[p].name : NULL;
}
const char *wg_type_name(wg_type t) {
  return (unsigned)t < WG_TYPE_COUNT ? wg_types[t].name : NULL;
}
const char *wg_operator_name(wg_operator op) {
  return (unsigned)op < WG_OPERATOR_COUNT ? wg_operators[op].name : NULL;
}
const char *wg_variant_name(wg_variant v) {
  return (unsigned)v < WG_VARIANT_COUNT ? wg_variant_names[v] : NULL;
}
const char *wg_layout_name(wg_layout l) {
  return (unsigned)l < WG_LAYOUT_COUNT ? wg_layout_names[l] : NULL;
}
size_t wg_type_size(wg_type t) {
  return (unsigned)t < WG_TYPE_COUNT ? wg_types[t].size : 0;
}
