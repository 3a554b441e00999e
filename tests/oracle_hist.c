/*
 * oracle_hist.c - what a histogram (wg_histogram) must count, on the CPU:
 * the bin of each key by the rules of warpgen.h (integer keys are their own
 * bin; float keys follow torch.histc's (x - lo) * bins / (hi - lo) in f32,
 * or f64 for f64 keys), exact counts, the comparison with a GPU's counters
 * (u32 counts modulo 2^32), and keys that exercise the edges: uniform,
 * piled into one bin, and a mix of out-of-range, negative, NaN, lo, hi and
 * exact bin edges. A map= expression's bins come from the caller (the
 * tests evaluate it with wg_expr_eval) through wg_oracle_hist_add.
 */
#include "oracle.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Little-endian raw bits of element i of a type of `size` bytes. */
static uint64_t raw(const void *base, uint64_t i, size_t size) {
  uint64_t v = 0;
  memcpy(&v, (const unsigned char *)base + i * size, size);
  return v;
}

int64_t wg_oracle_hist_bin(wg_type type, int64_t bins, double lo, double hi,
                           const void *in, uint64_t i) {
  const size_t size = wg_type_size(type);
  switch (type) {
  case WG_I32: {
    const int32_t k = (int32_t)(uint32_t)raw(in, i, size);
    return k >= 0 && k < bins ? k : -1;
  }
  case WG_I64: {
    const int64_t k = (int64_t)raw(in, i, size);
    return k >= 0 && k < bins ? k : -1;
  }
  case WG_U32:
  case WG_U64: {
    const uint64_t k = raw(in, i, size);
    return k < (uint64_t)bins ? (int64_t)k : -1;
  }
  case WG_F64: {
    const double v = wg_oracle_elem(type, in, i);
    if (!(v >= lo && v <= hi)) return -1;
    const double d = v - lo, scaled = d * (double)bins; /* as the kernel: */
    const double t = isfinite(scaled) ? scaled / (hi - lo) : d / (hi - lo) * (double)bins;
    const int64_t b = (int64_t)t;
    return b < bins ? b : bins - 1;
  }
  default: { /* f16, bf16, f32: in f32, one rounding a step, as the kernel */
    const float v = (float)wg_oracle_elem(type, in, i);
    const float l = (float)lo, h = (float)hi;
    if (!(v >= l && v <= h)) return -1;
    const float d = v - l;
    const float scaled = d * (float)bins;
    const float t = isfinite(scaled) ? scaled / (h - l) : d / (h - l) * (float)bins;
    const int64_t b = (int64_t)t;
    return b < bins ? b : bins - 1;
  }
  }
}

void wg_oracle_hist_add(uint64_t *want, int64_t bins, int64_t bin) {
  if (bin >= 0 && bin < bins) want[bin]++;
}

void wg_oracle_histogram(uint64_t *want, wg_type type, int64_t bins, double lo, double hi,
                         const void *in, uint64_t n) {
  memset(want, 0, (size_t)bins * sizeof *want);
  for (uint64_t i = 0; i < n; i++)
    wg_oracle_hist_add(want, bins, wg_oracle_hist_bin(type, bins, lo, hi, in, i));
}

void wg_oracle_hist_check(wg_oracle_report *report, wg_type counts, int64_t bins,
                          const uint64_t *want, const void *got) {
  const bool wide = counts == WG_U64;
  for (int64_t b = 0; b < bins; b++) {
    const uint64_t expect = wide ? want[b] : (uint32_t)want[b];
    const uint64_t have = raw(got, (uint64_t)b, wide ? 8 : 4);
    report->checked++;
    if (have == expect) continue;
    if (report->mismatches++ == 0 || (uint64_t)b < report->first_index) {
      report->first_index = (uint64_t)b;
      snprintf(report->first, sizeof report->first,
               "bin %lld of %lld: got %llu, want %llu", (long long)b, (long long)bins,
               (unsigned long long)have, (unsigned long long)expect);
    }
  }
}

/* A float in [0, 1) from random bits. */
static double unit(uint64_t r) { return (double)(r >> 11) * 0x1.0p-53; }

/* One key of the edge mix: outside the range, NaN, infinities, lo, hi, the
 * last value below hi, exact bin edges, or (half the time) uniform. */
static double float_edge(uint64_t r, int64_t bins, double lo, double hi) {
  const double width = hi - lo;
  switch (r % 16) {
  case 0: return NAN;
  case 1: return lo - 1 - unit(r) * width;
  case 2: return hi + 1 + unit(r) * width;
  case 3: return lo;
  case 4: return hi;
  case 5: return (r >> 8) & 1 ? INFINITY : -INFINITY;
  case 6: return nextafter(hi, lo);
  case 7: return lo + width * (double)((r >> 8) % (uint64_t)(bins + 1)) / (double)bins;
  default: return lo + unit(r) * width;
  }
}

/* One integer key of the edge mix: negative, bins, bins - 1, 0, huge. */
static uint64_t int_edge(wg_type type, uint64_t r, int64_t bins) {
  const bool is_signed = type == WG_I32 || type == WG_I64;
  switch (r % 12) {
  case 0: return is_signed ? (uint64_t)-(int64_t)(1 + (r >> 8) % 1000) : UINT64_MAX - (r >> 40);
  case 1: return (uint64_t)bins;
  case 2: return (uint64_t)bins - 1;
  case 3: return 0;
  case 4: return (uint64_t)bins + 1 + (r >> 8) % 100000;
  case 5: return is_signed ? (type == WG_I32 ? (uint64_t)INT32_MIN : (uint64_t)INT64_MIN)
                           : (type == WG_U32 ? UINT32_MAX : UINT64_MAX);
  default: return (r >> 8) % (uint64_t)bins;
  }
}

void wg_oracle_hist_fill(wg_type type, int64_t bins, double lo, double hi, int kind,
                         void *in, uint64_t n, uint64_t seed) {
  const size_t size = wg_type_size(type);
  const bool is_float = type <= WG_F64;
  const int64_t hot = bins / 3;
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t r = wg_oracle_random(seed, 0x4157u, i);
    const bool piled = kind == WG_ORACLE_HIST_ONE_BIN ||
                       (kind == WG_ORACLE_HIST_PILED && (r & 255u) != 0);
    if (is_float) {
      double x;
      if (piled) x = lo + (hi - lo) * ((double)hot + 0.5) / (double)bins;
      else if (kind == WG_ORACLE_HIST_EDGES) x = float_edge(r >> 8, bins, lo, hi);
      else x = lo + unit(r) * (hi - lo);
      wg_oracle_set(type, in, i, x);
    } else {
      uint64_t k;
      if (piled) k = (uint64_t)hot;
      else if (kind == WG_ORACLE_HIST_EDGES) k = int_edge(type, r >> 8, bins);
      else k = (r >> 8) % (uint64_t)bins;
      memcpy((unsigned char *)in + i * size, &k, size); /* little-endian: the low bytes */
    }
  }
}
