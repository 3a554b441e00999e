/*
 * oracle.h - the CPU oracle of the whole-array and row reductions
 * (oracle.c): what wg_reduce_ex / wg_reduce_rows_ex must write for a span
 * of elements, for every operator, and the check of a GPU's output against
 * it. Used by the GPU tests and meant for the CLI's `run` and the
 * benchmarks, so that there is one answer to compare with.
 *
 * Tolerances (documented once, here):
 *   - integers, indices, counts, min, max, norminf, and/or/xor: exact bits;
 *   - float results: |got - want| <= bound, where want is computed in long
 *     double and the bound follows from the count n, the unit roundoff u of
 *     the accumulator (2^-24 for f16/bf16/f32, 2^-53 for f64) and u_s of the
 *     stored output (0 when it is the accumulator's type):
 *         g(n) = (2 sqrt(n) + log2(n + 1) + 16) u
 *       sum     g S1 + u_s |want|                S1 = sum |x|
 *       mean    g S1 / n + u_s |want|
 *       prod    (2 (n + 8) u + u_s) |want|
 *       norm1   g S1 + u_s |want|
 *       norm2   g S2 / want + u_s |want|          S2 = sum x^2
 *       var     4 g S2 / d + u_s |want|            d = max(0, n - correction)
 *       std     bound(var) / sqrt(var) + u_s |want|
 *       logsumexp  g + 8 u + (2 u + u_s) |want|
 *     g(n) is the probabilistic growth of rounding errors (Higham & Mary)
 *     with the fold's depth bounded by n; the kernels fold in a fixed order
 *     that this bound does not depend on. NaN must be NaN; an infinite want
 *     (or a finite one past the stored type's range) must be an infinity of
 *     the same sign.
 */
#ifndef WG_ORACLE_H
#define WG_ORACLE_H

#include "warpgen.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * values in [-4, 4) with an offset for the moments and logsumexp, zeros
 * mixed in for count_nonzero; the operators of the warp primitives get the
 * reference's inputs (wg_ref_fill). */
void wg_oracle_fill(wg_type type, wg_operator op, void *in, uint64_t n, uint64_t seed);

/* Element i of `base` as a double (floats, integers converted). */
double wg_oracle_elem(wg_type type, const void *base, uint64_t i);
/* Stores x as element i of `base` (rounded to nearest even; integers
 * truncated toward zero). */
void wg_oracle_set(wg_type type, void *base, uint64_t i, double x);

#endif /* WG_ORACLE_H */
