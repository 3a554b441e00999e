/*
 * oracle.h - the one CPU oracle of warpgen: what every kernel must write,
 * computed on the CPU, and the check of a GPU's output against it. The
 * Check suites, `warpgen run` (the CLI compiles these files in), the
 * emulated kernels (tests/emulate), the benchmarks (bench/) and, through
 * liboracle.so and ctypes, the Python tests all use it, so there is one
 * answer to compare with.
 *
 *   oracle_warp.c  the element formats (f16/bf16 rounding), random inputs
 *                  and the warp primitives (reduce, allreduce, scan,
 *                  exscan, broadcast, ballot, any, all, match over groups
 *                  of `width`, the last group partial);
 *   oracle.c       the whole-array and row reductions of every operator,
 *                  and the tolerance rule below;
 *   oracle_acc.c   the sharded reductions' accumulators (a shard's, and k
 *                  of them combined), in the device's bytes.
 *   oracle_hist.c  histograms: each key's bin, exact counts, test keys.
 *                  of them combined), in the device's bytes;
 *   oracle_compact.c  stream compaction (exact: values, indices, count).
 *   oracle_axis.c  reductions over axes of strided N-d arrays, as rows.
 *
 * Tolerances (the one rule, computed by wg_oracle_growth):
 *   - integers (wrapping modulo 2^bits), indices, counts, min, max,
 *     norminf, and/or/xor, broadcast and the votes: exact bits;
 *   - float results: |got - want| <= bound, where want is computed in long
 *     double (the warp primitives: double) and
 *         bound = c(n) u M + u_s |want| + tiny_s
 *     with n the number of elements folded into that output (a group's
 *     lanes so far for the warp primitives, the span for reductions), u
 *     the unit roundoff of the accumulator (2^-24 for f16/bf16/f32, 2^-53
 *     for f64), u_s that of the stored output (0 when it is the
 *     accumulator's type), tiny_s half the stored type's smallest
 *     subnormal, M the operator's magnitude, and
 *         c(n) = min(2 n, 2 sqrt(n) + log2(n + 1) + 16).
 *     2n is twice the worst case of any fold order (Higham's gamma_{n-1});
 *     the second term, smaller from n = 23 on, is the probabilistic growth
 *     of rounding errors (Higham & Mary) with the fold's depth bounded by
 *     n. The kernels fold in fixed orders that the bound does not depend on.
 *     M and the operators' forms:
 *       sum, scan  c(n) u S1                 S1 = sum |x|
 *       mean       c(n) u S1 / n
 *       prod       2 (n + 8) u |want|  (warp primitives: c(n) u |want|)
 *       norm1      c(n) u S1
 *       norm2      c(n) u S2 / want           S2 = sum x^2
 *       var        4 c(n) u S2 / d            d = max(0, n - correction)
 *       std        bound(var) / sqrt(var)
 *       logsumexp  (g(n) + 8) u + 2 u |want|  (u of f32 unless f64;
 *                  g(n) = 2 sqrt(n) + log2(n + 1) + 16 even below n = 23:
 *                  its 16 covers the device's exp and log, not folds)
 *     each plus u_s |want| + tiny_s. NaN must be NaN; an infinite want (or
 *     a finite one past the stored type's range) must be an infinity of
 *     the same sign.
 *   Changes (issue 9): the warp primitives' factor was 2 width, whatever
 *   the group's count, and is now c(k) for the k lanes folded (tighter for
 *   partial groups, scans' early lanes and width 32); reductions over fewer
 *   than 23 elements take 2n instead of the growth term (tighter); the
 *   reductions gained tiny_s (looser by half a subnormal, which a
 *   subnormal f16 result needs); min, max and norminf lost f16/bf16's
 *   u_s |want| (they store an element: exact). logsumexp is unchanged.
 *
 * Every function is pure (inputs in, results out), thread-safe, and never
 * prints or allocates, except wg_oracle_fresh_seed (a clock and a counter).
 */
#ifndef WG_ORACLE_H
#define WG_ORACLE_H

#include "warpgen.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- the tolerance rule --------------------------------------------------- */

/* c(n) u for floats of type t (u of the accumulator), as above. */
double wg_oracle_growth(wg_type t, uint64_t n);
/* u_s |want| + tiny_s: what storing `want` as type t adds (u_s = 0 and
 * tiny_s = half the smallest subnormal for f32/f64). */
double wg_oracle_store_error(wg_type t, double want);

/* --- whole-array and row reductions (oracle.c) ---------------------------- */

/* What a reduction of one span must produce. */
typedef struct wg_oracle {
  bool must_fail;    /* no answer: the call must be refused (argmax of
                        nothing) */
  wg_type out_type;  /* wg_reduce_output_type */
  bool exact;        /* compare the output's bits with `bits` */
  uint64_t bits;     /* exact: the expected bits (little-endian, out_type) */
  double want;       /* floats: the expected value */
  double bound;      /* floats: the allowed |got - want| */
} wg_oracle;

/* The oracle of reducing `count` elements of `type`, the k-th at element
 * first + k of `base`, with op and params (as for wg_reduce_ex: nparams 0
 * means the defaults). For argmin/argmax the index is relative to `first`. */
void wg_oracle_reduce(wg_oracle *out, wg_type type, wg_operator op, const void *base,
                      uint64_t first, uint64_t count, const wg_scalar *params,
                      size_t nparams);

/* Does the output element at `got` (of o->out_type) satisfy o? On false,
 * why says how it does not. */
bool wg_oracle_check(const wg_oracle *o, const void *got, char *why, size_t why_size);

/* Fills n elements of `type` with random values suited to op, element i a
 * function of (seed, i) only: few distinct values for argmin/argmax (ties),
 * values in [-1, 7) for the moments and logsumexp, zeros mixed in for
 * count_nonzero; the operators of the warp primitives get the warp
 * primitives' inputs (wg_oracle_warp_fill). */
void wg_oracle_fill(wg_type type, wg_operator op, void *in, uint64_t n, uint64_t seed);

/* wg_oracle_fill's values of the operators from argmin on, for elements
 * [begin, end) only (element i depends on (seed, i) alone). */
void wg_oracle_fill_range(wg_type type, wg_operator op, void *in, uint64_t begin,
                          uint64_t end, uint64_t seed);

/* Element i of `base` as a double (floats, integers converted). */
double wg_oracle_elem(wg_type type, const void *base, uint64_t i);
/* Stores x as element i of `base` (rounded to nearest even; integers
 * truncated toward zero). */
void wg_oracle_set(wg_type type, void *base, uint64_t i, double x);

/* --- sharded reductions (oracle_acc.c) ----------------------------------- */

/* The CPU twin of wg_reduce_partial for a built-in operator: the
 * accumulator of elements [first, first + count) of `base`, their indices
 * index_base + k, written to acc in the device's bytes
 * (wg_reduce_accumulator's layout: wg_reduce_combine takes them). WG_OK,
 * or wg_reduce_accumulator's error for a pair the library refuses. */
int wg_oracle_partial(void *acc, wg_type type, wg_operator op, const void *base,
                      uint64_t first, uint64_t count, int64_t index_base);
/* The CPU twin of wg_reduce_combine: the k accumulators at accs folded in
 * index order, then the final step over `total` elements, one element of
 * wg_reduce_output_type written to out. params as wg_oracle_reduce. */
int wg_oracle_combine(void *out, wg_type type, wg_operator op, const void *accs,
                      uint64_t k, uint64_t total, const wg_scalar *params,
                      size_t nparams);

/* --- the warp primitives (oracle_warp.c) ---------------------------------- */

/* Fills elements [begin, end) of `in` (an array of spec->type) with random
 * values suited to the spec: zeros mixed in for the votes, repeated values
 * for match, values near 1 for float products, mostly-set bits for `and`.
 * Element i depends only on (seed, i), so ranges may be filled in parallel
 * and give the same array. */
void wg_oracle_warp_fill(const wg_spec *spec, void *in, uint64_t begin, uint64_t end,
                         uint64_t seed);

/* The random bits both fills use: a counter-based generator (splitmix64's
 * finaliser), so element i's value needs no state and ranges may be filled
 * in parallel. `salt` separates the streams of one seed. */
uint64_t wg_oracle_random(uint64_t seed, uint64_t salt, uint64_t i);

/* A seed that differs from run to run (time, process id, a counter). */
uint64_t wg_oracle_fresh_seed(void);

/* The byte to fill an output buffer of the spec with before a launch: a
 * NaN for float outputs (never within any bound), an unlikely pattern for
 * the others. */
unsigned char wg_oracle_poison_byte(const wg_spec *spec);

/* The groups of `width` elements that n elements form (the last partial;
 * 0 for reduce-array and reduce-rows, which are not warp primitives). */
uint64_t wg_oracle_group_count(const wg_spec *spec, uint64_t n);

/* The outcome of comparing outputs with the oracle. */
typedef struct wg_oracle_report {
  uint64_t checked;     /* outputs compared */
  uint64_t mismatches;  /* outputs outside their bound */
  uint64_t first_index; /* the lowest mismatching output */
  char first[320];      /* what was wrong with it */
  double worst_ratio;   /* largest |got - want| / bound over float outputs */
} wg_oracle_report;

void wg_oracle_report_init(wg_oracle_report *report);
/* Adds `part` (e.g. from another thread's range) into `into`. */
void wg_oracle_report_merge(wg_oracle_report *into, const wg_oracle_report *part);

/* Compares every output that groups [group_begin, group_end) produce for
 * the n inputs `in` with the oracle and adds the result to *report.
 * `out` is the whole output array (wg_output_shape gives its length). */
void wg_oracle_warp_check(wg_oracle_report *report, const wg_spec *spec, const void *in,
                          uint64_t n, const void *out, uint64_t group_begin,
                          uint64_t group_end);

/* --- histograms (oracle_hist.c) ------------------------------------------ */

/* The bin of key i of `in` for a histogram of `bins` bins over keys of
 * `type` without map= (wg_histogram's rules: integer keys are their bin;
 * float keys the range rule over [lo, hi] in f32, f64 for f64), or -1 for
 * a key counted nowhere. */
int64_t wg_oracle_hist_bin(wg_type type, int64_t bins, double lo, double hi,
                           const void *in, uint64_t i);
/* Counts one key of bin `bin` into want (nothing for bins outside). */
void wg_oracle_hist_add(uint64_t *want, int64_t bins, int64_t bin);
/* want[0..bins) = the exact counts of the n keys (want is overwritten). */
void wg_oracle_histogram(uint64_t *want, wg_type type, int64_t bins, double lo, double hi,
                         const void *in, uint64_t n);
/* Compares `got`, bins counters of `counts` (u32: want modulo 2^32; u64),
 * with want, adding every bin to *report. */
void wg_oracle_hist_check(wg_oracle_report *report, wg_type counts, int64_t bins,
                          const uint64_t *want, const void *got);
/* Keys for a histogram test, each a function of (seed, i): */
enum {
  WG_ORACLE_HIST_UNIFORM = 0, /* uniform over the bins (floats over [lo, hi)) */
  WG_ORACLE_HIST_PILED = 1,   /* 255 in 256 in one bin (bins / 3), the rest uniform */
  WG_ORACLE_HIST_ONE_BIN = 2, /* every key in bin bins / 3 */
  WG_ORACLE_HIST_EDGES = 3    /* out of range, negative, NaN, +-inf, lo, hi, bin
                                 edges, huge, and uniform */
};
void wg_oracle_hist_fill(wg_type type, int64_t bins, double lo, double hi, int kind,
                         void *in, uint64_t n, uint64_t seed);
/* Does the spec carry expressions, inputs beyond x or parameters? Those
 * need wg_oracle_warp_check_ex; wg_oracle_warp_check counts them as one
 * mismatch that says so. */
bool wg_oracle_spec_has_expr(const wg_spec *spec);

/* --- warp primitives with expressions (oracle_expr.c) -------------------- */

/* Needs the library's expression evaluator (src/expr_eval.c), so it is
 * linked only where the static library is (the test suites, refcli), not
 * into liboracle.so.
 *
 * wg_oracle_warp_check for any operator spec, expressions included:
 * `inputs` holds max(1, spec->ninputs) arrays of n elements (input k of
 * spec->inputs[k], input 0 of spec->type), `params` spec->nparams values
 * (the spec declares none: the operator's defaults). Per group: the map
 * (else the element) of each element with i its global index and n the
 * group's count, folded with combine= (else by the operator, as
 * wg_oracle_reduce with its bound), then final= with r and n the group's
 * count. Expressions are evaluated by wg_expr_eval_bounded; where the
 * result is not exactly determined (a map with math functions under a
 * built-in operator, a float combine whose result depends on the fold
 * order, final= over an inexact float accumulator) the group counts as a
 * mismatch that says the spec cannot be checked: never a silent pass. */
void wg_oracle_warp_check_ex(wg_oracle_report *report, const wg_spec *spec,
                             const void *const *inputs, uint64_t n,
                             const wg_scalar *params, size_t nparams, const void *out,
                             uint64_t group_begin, uint64_t group_end);

/* --- reductions over axes of a strided N-d array (oracle_axis.c) ------- */

/* The rows a reduce-axis call reduces: the elements of an N-d array of
 * `size`-byte elements (element idx at base + sum(idx[d] * strides[d])
 * elements, strides of any sign) copied into dst as *rows rows of *cols
 * elements, row q being output q of wg_reduce_axis (the kept indices
 * row-major) and its elements the reduced indices row-major. dst NULL:
 * only the counts. false for an invalid ndim or axes. wg_oracle_rows_check
 * on dst then checks the outputs. */
bool wg_oracle_axis_gather(void *dst, const void *base, size_t size, int ndim,
                           const int64_t *shape, const int64_t *strides, const int *axes,
                           int naxes, uint64_t *rows, uint64_t *cols);

/* --- whole-array and row scans (oracle_scan.c) ----------------------------- */

/* Checks `rows` scanned rows of `cols` elements of `type` with op (sum,
 * prod, min, max, and, or, xor): row r's inputs start at element
 * r * in_stride of `in`, its outputs (of `type`) at element r * out_stride
 * of `out`. Output k must be the fold of elements 0..k (exclusive: 0..k-1,
 * the identity for k = 0): integers exactly, float min/max exactly (fmin/
 * fmax: a NaN loses), float sums within c(k + 1) u S1 and products within
 * 2 (k + 9) u |want|, plus the store's error. Adds the outcome to *report
 * (first_index: r * cols + k). A scan-array is one row. */
void wg_oracle_scan_check(wg_oracle_report *report, wg_type type, wg_operator op,
                          bool exclusive, const void *in, uint64_t rows, uint64_t cols,
                          uint64_t in_stride, const void *out, uint64_t out_stride);

/* --- both ---------------------------------------------------------------- */

/* Checks `rows` reductions of `cols` elements each (row r from element
 * r * cols of `in`; reduce-array is one row of n) against `out`, rows
 * outputs of wg_reduce_output_type(type, op), and adds the result to
 * *report (worst_ratio over float rows). An operator that must refuse a
 * row (argmax of nothing) counts every row as a mismatch: the caller
 * checks the refusal itself. */
void wg_oracle_rows_check(wg_oracle_report *report, wg_type type, wg_operator op,
                          const void *in, uint64_t rows, uint64_t cols,
                          const wg_scalar *params, size_t nparams, const void *out);

/* wg_oracle_warp_check over every group, the spec given as text (for
 * refcli and the Python tests, which load liboracle.so with ctypes).
 * Returns WG_OK, or WG_ESPEC for text wg_spec_parse refuses or a spec
 * that is not a warp primitive (the report untouched). */
int wg_oracle_warp_check_text(wg_oracle_report *report, const char *spec_text,
                              const void *in, uint64_t n, const void *out);

/* --- the fused row kernels (oracle_rownorm.c) ---------------------------- */

/* The expected row: value[k] (NaN and infinities where PyTorch puts them)
 * and scale[k], the arithmetic's allowed error beyond rounding the value
 * to the output type. The caller owns the two arrays of `cols` doubles. */
typedef struct wg_rownorm_want {
  uint64_t cols;
  double *value;
  double *scale;
} wg_rownorm_want;

/* The row of `cols` elements of `type` at in[first..] through primitive p
 * (WG_SOFTMAX_ROWS ... WG_RMSNORM_ROWS), in float64; weight and bias
 * (cols elements of `type`, NULL: none) for the norms, eps for the norms. */
void wg_oracle_rownorm_row(wg_rownorm_want *want, wg_primitive p, wg_type type,
                           const void *in, uint64_t first, uint64_t cols,
                           const void *weight, const void *bias, double eps);
/* The input rows the row-kernel tests draw: `rows` rows of `cols`
 * elements of `type`, row r at in[r * stride..], random around a per-row
 * centre (every third row up to +-64 away, so the max and the shift
 * matter). With `specials`, the first rows are the hard ones, as many as
 * there are rows: 0 a NaN, 1 a +inf, 2 only -inf, 3 every third -inf
 * beside a 1.5, 4 all equal, 5 all -1000.25, 6 one 0 (column 0) above a
 * constant rest, so far below that each exp(x - max) is just under half a
 * unit in the last place of 1 (an uncompensated sum that starts at 1
 * loses every one), 7 one 0 above -86 to -93 (softmax outputs in the
 * subnormals of f32 and bf16). Elements between rows (stride > cols) are
 * drawn too. */
void wg_oracle_rownorm_fill(wg_type type, void *in, uint64_t rows, uint64_t cols,
                            uint64_t stride, uint64_t seed, bool specials);
/* Does got[first..first+cols) (of `type`) match? NaN must be NaN, an
 * infinity the same infinity, anything else within the bound. On false,
 * *bad_col and why say where and how. */
bool wg_oracle_rownorm_check(const wg_rownorm_want *want, wg_type type, const void *got,
                             uint64_t first, uint64_t *bad_col, char *why,
                             size_t why_size);

/* --- stream compaction (oracle_compact.c) -------------------------------- */

/* Is element i of `in` non-zero on its bits (-0.0 is zero, a NaN is not):
 * what compact keeps without a predicate. */
bool wg_oracle_nonzero(wg_type type, const void *in, uint64_t i);
/* How many of keep[0..n) are non-zero. */
uint64_t wg_oracle_compact_count(const unsigned char *keep, uint64_t n);
/* Checks a compaction of the n elements of `in` (of `type`), keep[i]
 * non-zero for the kept ones: `count` must be their number, values[k]
 * (NULL: not checked) the bits of the k-th kept element, indices[k]
 * (NULL: not checked) its index, and every byte of both outputs past the
 * count still `poison`. Exact; adds to *report. */
void wg_oracle_compact_check(wg_oracle_report *report, wg_type type, const void *in,
                             uint64_t n, const unsigned char *keep, const void *values,
                             const int64_t *indices, uint64_t count,
                             unsigned char poison);

/* Host-side conversions of the half types, rounding to nearest even. */
uint16_t wg_oracle_f16_from_double(double x);
double wg_oracle_f16_to_double(uint16_t bits);
uint16_t wg_oracle_bf16_from_double(double x);
double wg_oracle_bf16_to_double(uint16_t bits);

#ifdef __cplusplus
}
#endif

#endif /* WG_ORACLE_H */
