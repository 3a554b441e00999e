/*
 * oracle_scan.c - the CPU oracle of the whole-array and row scans
 * (scan-array, exscan-array, scan-rows, exscan-rows): every output of a row
 * against the running fold of the row's elements, by the rule of oracle.h
 * (integers, min and max exact; float sums and products within the bound
 * of the count folded into that output).
 */
#include "oracle.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_float(wg_type t) { return t <= WG_F64; }

static uint64_t raw_at(wg_type t, const void *base, uint64_t i) {
  uint64_t v = 0;
  memcpy(&v, (const unsigned char *)base + i * wg_type_size(t), wg_type_size(t));
  return v;
}

static uint64_t int_mask(wg_type t) {
  return wg_type_size(t) == 8 ? UINT64_MAX : 0xffffffffull;
}

static bool int_less(wg_type t, uint64_t a, uint64_t b) {
  if (t == WG_I32 || t == WG_I64) {
    const unsigned shift = 64 - 8 * (unsigned)wg_type_size(t);
    return (int64_t)(a << shift) >> shift < (int64_t)(b << shift) >> shift;
  }
  return a < b;
}

/* The running state of one row's fold. */
typedef struct running {
  uint64_t bits;      /* integers: the fold so far */
  long double value;  /* floats: the fold so far (sum, prod; min/max exact) */
  long double s1;     /* floats: sum |x| so far (the sum's bound) */
  uint64_t count;     /* elements folded */
} running;

static void running_init(running *r, wg_type t, wg_operator op) {
  const uint64_t mask = int_mask(t);
  const bool sgn = t == WG_I32 || t == WG_I64;
  memset(r, 0, sizeof *r);
  switch (op) {
  case WG_OP_PROD: r->bits = 1; r->value = 1; break;
  case WG_OP_AND: r->bits = mask; break;
  case WG_OP_MIN: r->bits = sgn ? mask >> 1 : mask; r->value = INFINITY; break;
  case WG_OP_MAX: r->bits = sgn ? (mask >> 1) + 1 : 0; r->value = -INFINITY; break;
  default: break;
  }
}

static void running_add(running *r, wg_type t, wg_operator op, const void *row, uint64_t k) {
  r->count++;
  if (!is_float(t)) {
    const uint64_t x = raw_at(t, row, k);
    switch (op) {
    case WG_OP_SUM: r->bits += x; break;
    case WG_OP_PROD: r->bits *= x; break;
    case WG_OP_MIN: if (int_less(t, x, r->bits)) r->bits = x; break;
    case WG_OP_MAX: if (int_less(t, r->bits, x)) r->bits = x; break;
    case WG_OP_AND: r->bits &= x; break;
    case WG_OP_OR: r->bits |= x; break;
    default: r->bits ^= x; break;
    }
    r->bits &= int_mask(t);
    return;
  }
  const double x = wg_oracle_elem(t, row, k);
  switch (op) {
  case WG_OP_SUM: r->value += x; r->s1 += fabs(x); break;
  case WG_OP_PROD: r->value *= x; break;
  case WG_OP_MIN: r->value = fmin((double)r->value, x); break;
  default: r->value = fmax((double)r->value, x); break;
  }
}

/* What the output after this state must be. */
static void running_want(wg_oracle *o, const running *r, wg_type t, wg_operator op) {
  memset(o, 0, sizeof *o);
  o->out_type = t;
  if (!is_float(t)) {
    o->exact = true;
    o->bits = r->bits;
    return;
  }
  o->want = (double)r->value;
  if (op == WG_OP_MIN || op == WG_OP_MAX) return; /* an element (or the identity) */
  const double bound = op == WG_OP_SUM
                           ? wg_oracle_growth(t, r->count) * (double)r->s1
                           : fabs(o->want) * 2 * ((double)r->count + 8) *
                                 (t == WG_F64 ? 0x1p-53 : 0x1p-24);
  o->bound = bound + wg_oracle_store_error(t, o->want);
}

void wg_oracle_scan_check(wg_oracle_report *report, wg_type type, wg_operator op,
                          bool exclusive, const void *in, uint64_t rows, uint64_t cols,
                          uint64_t in_stride, const void *out, uint64_t out_stride) {
  const size_t size = wg_type_size(type);
  for (uint64_t r = 0; r < rows; r++) {
    const unsigned char *row = (const unsigned char *)in + r * in_stride * size;
    const unsigned char *got = (const unsigned char *)out + r * out_stride * size;
    running run;
    running_init(&run, type, op);
    for (uint64_t k = 0; k < cols; k++) {
      if (!exclusive) running_add(&run, type, op, row, k);
      wg_oracle want;
      running_want(&want, &run, type, op);
      char why[200];
      report->checked++;
      if (!wg_oracle_check(&want, got + k * size, why, sizeof why)) {
        if (report->mismatches++ == 0) {
          report->first_index = r * cols + k;
          snprintf(report->first, sizeof report->first, "row %" PRIu64 " element %" PRIu64
                   ": %s", r, k, why);
        }
      } else if (want.bound > 0) {
        const double ratio = fabs(wg_oracle_elem(type, got, k) - want.want) / want.bound;
        if (ratio > report->worst_ratio) report->worst_ratio = ratio;
      }
      if (exclusive) running_add(&run, type, op, row, k);
    }
  }
}
