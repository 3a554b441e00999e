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
    long double sum = 0;
    for (uint64_t k = 0; k < cols; k++) sum += exp(wg_oracle_elem(t, in, first + k) - m);
    const double s = (double)sum;
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
  /* The sums in long double: f64 rows are summed in f64 by the kernel,
   * and a plain double sum here errs as much (hundreds of units for 1000
   * equal values, which round the same way every time). */
  long double acc = 0, q = 0;
  if (p == WG_LAYERNORM_ROWS) {
    /* Shifted by the first element, so that an all-equal row has exactly
     * that mean (and variance 0) in float64 too. */
    const double x0 = wg_oracle_elem(t, in, first);
    for (uint64_t k = 0; k < cols; k++) acc += (long double)wg_oracle_elem(t, in, first + k) - x0;
    mean = (double)(x0 + acc / n);
    for (uint64_t k = 0; k < cols; k++) {
      const long double d = (long double)wg_oracle_elem(t, in, first + k) - mean;
      q += d * d;
    }
  } else {
    for (uint64_t k = 0; k < cols; k++) {
      const long double x = wg_oracle_elem(t, in, first + k);
      q += x * x;
    }
  }
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
