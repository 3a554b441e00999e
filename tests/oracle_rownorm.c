/*
 * oracle_rownorm.c - the CPU oracle of the fused row kernels (softmax,
 * log_softmax, layernorm, rmsnorm): each row computed in float64 with
 * PyTorch's formulas, including where NaN and infinities go, and a check
 * of a device output row against it with a bound per element.
 */
#include "oracle.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Relative error of the kernel's arithmetic: f32 for f32 and the 16-bit
 * types, f64 for f64. */
static double u_compute(wg_type t) { return t == WG_F64 ? 0x1p-53 : 0x1p-24; }

/* The oracle's sums: long double, compensated (Neumaier). A plain long
 * double sum that adds the same small term a million times to 1 rounds
 * it the same way each time (an f64 softmax row of 2^20 erred 4.9e-14
 * relative in the oracle, not in the kernel). */
typedef struct oracle_sum { long double s, c; } oracle_sum;
static void sum_add(oracle_sum *a, long double v) {
  const long double t = a->s + v;
  if (isinf(t)) { /* an infinity's sum is the infinity (or NaN); no error to carry */
    a->s = t;
    a->c = 0;
    return;
  }
  a->c += fabsl(a->s) >= fabsl(v) ? (a->s - t) + v : (v - t) + a->s;
  a->s = t;
}
static long double sum_of(const oracle_sum *a) { return a->s + a->c; }

void wg_oracle_rownorm_row(wg_rownorm_want *want, wg_primitive p, wg_type t,
                           const void *in, uint64_t first, uint64_t cols,
                           const void *weight, const void *bias, double eps) {
  want->cols = cols;
  double *v = want->value, *scale = want->scale;
  const double u = u_compute(t);
  /* Error grows with the length of the sums (a fixed tree: about log2). */
  const double grow = 16.0 + 2.0 * log2((double)cols + 1.0);
  if (p == WG_SOFTMAX_ROWS || p == WG_LOG_SOFTMAX_ROWS) {
    double m = -INFINITY;
    bool nan = false;
    for (uint64_t k = 0; k < cols; k++) {
      const double x = wg_oracle_elem(t, in, first + k);
      if (isnan(x)) nan = true;
      else if (x > m) m = x;
    }
    if (nan) m = NAN;
    oracle_sum sum = {0, 0};
    for (uint64_t k = 0; k < cols; k++) sum_add(&sum, exp(wg_oracle_elem(t, in, first + k) - m));
    const double s = (double)sum_of(&sum);
    for (uint64_t k = 0; k < cols; k++) {
      const double x = wg_oracle_elem(t, in, first + k);
      const double d = x - m;
      if (p == WG_SOFTMAX_ROWS) {
        v[k] = exp(d) / s;
        /* exp(d) carries d's rounding times |d|. */
        scale[k] = isfinite(d) ? fabs(v[k]) * (grow + fabs(d)) * u : 0.0;
      } else {
        v[k] = d - log(s);
        scale[k] = isfinite(v[k]) ? (fabs(x) + fabs(m) + fabs(log(s)) + 1.0) * grow * u : 0.0;
      }
    }
    return;
  }
  const double n = (double)cols;
  double mean = 0, r;
  /* The sums in compensated long double (oracle_sum): f64 rows are summed
   * in f64 by the kernel, and a plain double sum here errs as much
   * (hundreds of units for 1000 equal values, which round the same way
   * every time). */
  oracle_sum acc = {0, 0}, sq = {0, 0};
  if (p == WG_LAYERNORM_ROWS) {
    /* Shifted by the first element, so that an all-equal row has exactly
     * that mean (and variance 0) in float64 too. */
    const double x0 = wg_oracle_elem(t, in, first);
    for (uint64_t k = 0; k < cols; k++)
      sum_add(&acc, (long double)wg_oracle_elem(t, in, first + k) - x0);
    mean = (double)(x0 + sum_of(&acc) / n);
    for (uint64_t k = 0; k < cols; k++) {
      const long double d = (long double)wg_oracle_elem(t, in, first + k) - mean;
      sum_add(&sq, d * d);
    }
  } else {
    for (uint64_t k = 0; k < cols; k++) {
      const long double x = wg_oracle_elem(t, in, first + k);
      sum_add(&sq, x * x);
    }
  }
  const long double q = sum_of(&sq);
  r = (double)(1.0L / sqrtl(q / n + eps));
  for (uint64_t k = 0; k < cols; k++) {
    const double x = wg_oracle_elem(t, in, first + k);
    const double w = weight ? wg_oracle_elem(t, weight, k) : 1.0;
    const double b = bias ? wg_oracle_elem(t, bias, k) : 0.0;
    const double y = (p == WG_LAYERNORM_ROWS ? x - mean : x) * r;
    v[k] = y * w + b;
    /* The statistics' relative error moves y by about |y| (and, through
     * the mean, by |mean| r) ulps of the sums. */
    scale[k] = !isfinite(v[k]) ? 0.0 : ((fabs(y) + (p == WG_LAYERNORM_ROWS ? fabs(mean) * r : 0.0) + 1.0) * fabs(w) +
                fabs(b)) * grow * u;
  }
}

static double unit(uint64_t seed, uint64_t salt, uint64_t i) {
  return (double)(wg_oracle_random(seed, salt, i) >> 11) * 0x1p-53 - 0.5;
}

void wg_oracle_rownorm_fill(wg_type t, void *in, uint64_t rows, uint64_t cols,
                            uint64_t stride, uint64_t seed, bool specials) {
  const uint64_t total = rows ? (rows - 1) * stride + cols : 0;
  for (uint64_t i = 0; i < total; i++) {
    const uint64_t row = i / stride;
    const double centre = unit(seed, 7, row) * 128.0 * (row % 3 == 0);
    wg_oracle_set(t, in, i, centre + unit(seed, 1, i) * 8.0);
  }
  if (!specials || cols == 0) return;
  const uint64_t k = (uint64_t)((unit(seed, 3, 0) + 0.5) * (double)cols);
  if (rows > 0) wg_oracle_set(t, in, 0 * stride + k, NAN);
  if (rows > 1) wg_oracle_set(t, in, 1 * stride + k, INFINITY);
  for (uint64_t j = 0; rows > 2 && j < cols; j++) wg_oracle_set(t, in, 2 * stride + j, -INFINITY);
  for (uint64_t j = 0; rows > 3 && j < cols; j += 3) wg_oracle_set(t, in, 3 * stride + j, -INFINITY);
  if (rows > 3 && cols > 1) wg_oracle_set(t, in, 3 * stride + 1, 1.5);
  for (uint64_t j = 0; rows > 4 && j < cols; j++) wg_oracle_set(t, in, 4 * stride + j, 0.1);
  for (uint64_t j = 0; rows > 5 && j < cols; j++) wg_oracle_set(t, in, 5 * stride + j, -1000.25);
  /* A first element far from a constant rest: the hardest case for sums
   * started at the first element (softmax's at 1, layernorm's shifted by
   * it). exp(-36.75) and exp(-16.75) are just below 2^-53 and 2^-24, half a
   * unit of 1 in f64 and in f32 (what the 16-bit types compute in); both
   * values are exact in every type. */
  const double below = t == WG_F64 ? -36.75 : -16.75;
  for (uint64_t j = 0; rows > 6 && j < cols; j++)
    wg_oracle_set(t, in, 6 * stride + j, j == 0 ? 0.0 : below);
  /* 0, then -86 to -93: softmax outputs e^-86 to e^-93, the subnormals of
   * f32 and bf16 (2^-126 is e^-87.3, bf16's least 2^-133 e^-92.2), which
   * an exp that flushes below 2^-126 gets wrong. */
  for (uint64_t j = 0; rows > 7 && j < cols; j++)
    wg_oracle_set(t, in, 7 * stride + j, j == 0 ? 0.0 : -(double)(86 + j % 8));
}

bool wg_oracle_rownorm_check(const wg_rownorm_want *want, wg_type t, const void *got,
                             uint64_t first, uint64_t *bad_col, char *why,
                             size_t why_size) {
  for (uint64_t k = 0; k < want->cols; k++) {
    const double w = want->value[k], g = wg_oracle_elem(t, got, first + k);
    bool ok;
    if (isnan(w)) ok = isnan(g);
    else if (isinf(w)) ok = g == w;
    else ok = isfinite(g) && fabs(g - w) <= wg_oracle_store_error(t, w) + want->scale[k];
    if (!ok) {
      *bad_col = k;
      snprintf(why, why_size, "column %llu: got %.17g, want %.17g (bound %.3g)",
               (unsigned long long)k, g, w,
               isfinite(w) ? wg_oracle_store_error(t, w) + want->scale[k] : 0.0);
      return false;
    }
  }
  return true;
}
