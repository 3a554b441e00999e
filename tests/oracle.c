/*
 * oracle.c - what every reduction operator must produce for a span of
 * elements, computed on the CPU (oracle.h says how close is close enough).
 *
 * One row per operator (oracle_rows[]), as the library has one row per
 * operator in src/tables.c: integers are computed exactly, wrapping as the
 * kernels do; floats in long double, with two passes where the kernels use
 * a one-pass form (var: the mean first; logsumexp: the max first), so the
 * oracle never shares the kernels' algorithm or their rounding.
 */
#include "oracle.h"


#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* --- elements ------------------------------------------------------------- */

static unsigned type_size(wg_type t) { return (unsigned)wg_type_size(t); }
static bool is_float(wg_type t) { return t <= WG_F64; }
static bool is_signed_int(wg_type t) { return t == WG_I32 || t == WG_I64; }

static uint64_t raw_at(wg_type t, const void *base, uint64_t i) {
  uint64_t v = 0;
  memcpy(&v, (const unsigned char *)base + i * type_size(t), type_size(t));
  return v;
}

/* An integer element as int64 (signed types) or uint64 bits. */
static int64_t int_at(wg_type t, const void *base, uint64_t i) {
  const uint64_t v = raw_at(t, base, i);
  if (t == WG_I32) return (int32_t)(uint32_t)v;
  return (int64_t)v;
}

double wg_oracle_elem(wg_type t, const void *base, uint64_t i) {
  const uint64_t v = raw_at(t, base, i);
  switch (t) {
  case WG_F16: return wg_oracle_f16_to_double((uint16_t)v);
  case WG_BF16: return wg_oracle_bf16_to_double((uint16_t)v);
  case WG_F32: {
    float f;
    uint32_t u = (uint32_t)v;
    memcpy(&f, &u, 4);
    return f;
  }
  case WG_F64: {
    double d;
    memcpy(&d, &v, 8);
    return d;
  }
  case WG_U32:
  case WG_U64: return (double)v;
  default: return (double)int_at(t, base, i);
  }
}

void wg_oracle_set(wg_type t, void *base, uint64_t i, double x) {
  uint64_t v = 0;
  switch (t) {
  case WG_F16: v = wg_oracle_f16_from_double(x); break;
  case WG_BF16: v = wg_oracle_bf16_from_double(x); break;
  case WG_F32: {
    const float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    v = u;
    break;
  }
  case WG_F64: memcpy(&v, &x, 8); break;
  case WG_U32:
  case WG_U64: v = (uint64_t)x; break;
  default: v = (uint64_t)(int64_t)x; break;
  }
  memcpy((unsigned char *)base + i * type_size(t), &v, type_size(t));
}

/* --- the tolerance rule (oracle.h) --------------------------------------- */

/* Unit roundoff of the accumulator of floats of type t. */
static double u_acc(wg_type t) { return t == WG_F64 ? 0x1p-53 : 0x1p-24; }
/* Unit roundoff the store to t adds to a value of t's accumulator. */
static double u_store(wg_type t) {
  return t == WG_F16 ? 0x1p-11 : t == WG_BF16 ? 0x1p-8 : 0;
}
/* Half the smallest subnormal of t: the absolute error of rounding a
 * subnormal result, which u_store |want| does not cover. */
static double tiny_store(wg_type t) {
  return t == WG_F16 ? 0x1p-25 : t == WG_BF16 ? 0x1p-134 : t == WG_F32 ? 0x1p-150 : 0x1p-1074;
}

/* The probabilistic growth term alone: 2 sqrt(n) + log2(n + 1) + 16. */
static double likely_growth(uint64_t n) {
  return 2 * sqrt((double)n) + log2((double)n + 1) + 16;
}

double wg_oracle_growth(wg_type t, uint64_t n) {
  const double worst = 2.0 * (double)n, likely = likely_growth(n);
  return (worst < likely ? worst : likely) * u_acc(t);
}

double wg_oracle_store_error(wg_type t, double want) {
  return u_store(t) * fabs(want) + tiny_store(t);
}

static double growth(wg_type t, uint64_t n) { return wg_oracle_growth(t, n); }

/* --- the rows ------------------------------------------------------------- */

/* One span of elements: element k is base[first + k]. */
typedef struct span {
  wg_type type;
  const void *base;
  uint64_t first, n;
} span;

static double x_at(const span *s, uint64_t k) {
  return wg_oracle_elem(s->type, s->base, s->first + k);
}

static void set_exact(wg_oracle *o, uint64_t bits) {
  o->exact = true;
  o->bits = bits;
}

static void set_float(wg_oracle *o, double want, double bound) {
  o->want = want;
  o->bound = bound + wg_oracle_store_error(o->out_type, want);
}

/* min, max, norminf: one of the elements, exactly. */
static void set_element(wg_oracle *o, double want) {
  o->want = want;
  o->bound = 0;
}

typedef void (*oracle_fn)(wg_oracle *o, const span *s, const double *params);

/* Integer sum, product, min, max, and, or, xor: exact, wrapping. */
static uint64_t int_mask(wg_type t) {
  return type_size(t) == 8 ? UINT64_MAX : 0xffffffffull;
}
static bool int_less(wg_type t, uint64_t a, uint64_t b) {
  if (is_signed_int(t)) {
    const unsigned shift = 64 - 8 * type_size(t);
    return (int64_t)(a << shift) >> shift < (int64_t)(b << shift) >> shift;
  }
  return a < b;
}

typedef enum { I_SUM, I_PROD, I_MIN, I_MAX, I_AND, I_OR, I_XOR } int_op;

static void integer_fold(wg_oracle *o, const span *s, int_op op) {
  const uint64_t mask = int_mask(s->type);
  const bool sgn = is_signed_int(s->type);
  uint64_t r = op == I_PROD ? 1 : op == I_AND ? mask : op == I_MIN ? (sgn ? mask >> 1 : mask)
               : op == I_MAX ? (sgn ? (mask >> 1) + 1 : 0) : 0;
  for (uint64_t k = 0; k < s->n; k++) {
    const uint64_t x = raw_at(s->type, s->base, s->first + k);
    switch (op) {
    case I_SUM: r += x; break;
    case I_PROD: r *= x; break;
    case I_MIN: if (int_less(s->type, x, r)) r = x; break;
    case I_MAX: if (int_less(s->type, r, x)) r = x; break;
    case I_AND: r &= x; break;
    case I_OR: r |= x; break;
    default: r ^= x; break;
    }
  }
  set_exact(o, r & mask);
}

static void row_sum(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  if (!is_float(s->type)) {
    integer_fold(o, s, I_SUM);
    return;
  }
  long double sum = 0, s1 = 0;
  for (uint64_t k = 0; k < s->n; k++) {
    const double x = x_at(s, k);
    sum += x;
    s1 += fabs(x);
  }
  set_float(o, (double)sum, growth(s->type, s->n) * (double)s1);
}

static void row_prod(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  if (!is_float(s->type)) {
    integer_fold(o, s, I_PROD);
    return;
  }
  long double prod = 1;
  for (uint64_t k = 0; k < s->n; k++) prod *= x_at(s, k);
  set_float(o, (double)prod, fabs((double)prod) * 2 * ((double)s->n + 8) * u_acc(s->type));
}

/* fmin/fmax: a NaN loses against a number. */
static void float_extreme(wg_oracle *o, const span *s, bool max) {
  double r = max ? -INFINITY : INFINITY;
  for (uint64_t k = 0; k < s->n; k++) r = max ? fmax(r, x_at(s, k)) : fmin(r, x_at(s, k));
  set_element(o, r);
}

static void row_min(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  if (!is_float(s->type)) {
    integer_fold(o, s, I_MIN);
    return;
  }
  float_extreme(o, s, false);
}
static void row_max(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  if (!is_float(s->type)) {
    integer_fold(o, s, I_MAX);
    return;
  }
  float_extreme(o, s, true);
}
static void row_and(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  integer_fold(o, s, I_AND);
}
static void row_or(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  integer_fold(o, s, I_OR);
}
static void row_xor(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  integer_fold(o, s, I_XOR);
}

/* The first index of the least (argmin) or greatest (argmax) element; the
 * first NaN wins over everything. Integers compare exactly. */
static void arg_extreme(wg_oracle *o, const span *s, bool max) {
  if (s->n == 0) {
    o->must_fail = true;
    return;
  }
  uint64_t best = 0;
  if (is_float(s->type)) {
    double b = x_at(s, 0);
    for (uint64_t k = 1; k < s->n && !isnan(b); k++) {
      const double x = x_at(s, k);
      if (isnan(x) || (max ? x > b : x < b)) b = x, best = k;
    }
  } else {
    uint64_t b = raw_at(s->type, s->base, s->first);
    for (uint64_t k = 1; k < s->n; k++) {
      const uint64_t x = raw_at(s->type, s->base, s->first + k);
      if (max ? int_less(s->type, b, x) : int_less(s->type, x, b)) b = x, best = k;
    }
  }
  set_exact(o, best);
}
static void row_argmin(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  arg_extreme(o, s, false);
}
static void row_argmax(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  arg_extreme(o, s, true);
}

static void row_mean(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  long double sum = 0, s1 = 0;
  for (uint64_t k = 0; k < s->n; k++) {
    const double x = x_at(s, k);
    sum += x;
    s1 += fabs(x);
  }
  const double n = (double)s->n;
  set_float(o, (double)(sum / n), growth(s->type, s->n) * (double)s1 / n); /* 0/0: NaN */
}

/* Two passes: the mean, then the sum of squared deviations. */
static double variance(const span *s, double correction, double *bound) {
  long double sum = 0, s2 = 0;
  for (uint64_t k = 0; k < s->n; k++) sum += x_at(s, k);
  const long double mean = s->n ? sum / (long double)s->n : 0;
  long double m2 = 0;
  for (uint64_t k = 0; k < s->n; k++) {
    const long double x = x_at(s, k), d = x - mean;
    m2 += d * d;
    s2 += x * x;
  }
  const double n = (double)s->n, div = n > correction ? n - correction : 0;
  *bound = div > 0 ? 4 * growth(s->type, s->n) * (double)s2 / div : 0;
  if (div > 0) return (double)(m2 / div);
  return isnan((double)m2) || m2 == 0 ? NAN : INFINITY; /* M2 / 0, as PyTorch */
}

static void row_var(wg_oracle *o, const span *s, const double *p) {
  double bound;
  const double v = variance(s, p[0], &bound);
  set_float(o, v, bound);
}

static void row_std(wg_oracle *o, const span *s, const double *p) {
  double bound;
  const double v = variance(s, p[0], &bound);
  set_float(o, sqrt(v), v > 0 ? bound / sqrt(v) : sqrt(bound));
}

static void row_norm1(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  long double s1 = 0;
  for (uint64_t k = 0; k < s->n; k++) s1 += fabs(x_at(s, k));
  set_float(o, (double)s1, growth(s->type, s->n) * (double)s1);
}

static void row_norm2(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  long double s2 = 0;
  for (uint64_t k = 0; k < s->n; k++) s2 += (long double)x_at(s, k) * x_at(s, k);
  const double want = sqrt((double)s2), b = growth(s->type, s->n) * (double)s2;
  set_float(o, want, want > 0 ? b / want : sqrt(b));
}

static void row_norminf(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  if (s->n == 0) {
    o->must_fail = true;
    return;
  }
  double r = 0;
  for (uint64_t k = 0; k < s->n && !isnan(r); k++) {
    const double x = fabs(x_at(s, k));
    if (isnan(x) || x > r) r = x;
  }
  set_element(o, r);
}

/* Integers are summed as the kernel sees them: rounded to f32 first. */
static double lse_value(const span *s, uint64_t k) {
  const double x = x_at(s, k);
  return is_float(s->type) ? x : (double)(float)x;
}

static void row_logsumexp(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  double m = -INFINITY;
  bool nan = false;
  for (uint64_t k = 0; k < s->n; k++) {
    const double x = lse_value(s, k);
    nan |= isnan(x);
    if (x > m) m = x;
  }
  const double u = u_acc(o->out_type == WG_F64 ? WG_F64 : WG_F32);
  if (nan || isinf(m)) {
    set_float(o, nan ? NAN : m, 0);
    return;
  }
  long double sum = 0;
  for (uint64_t k = 0; k < s->n; k++) sum += expl((long double)lse_value(s, k) - m);
  const double want = m + (double)logl(sum);
  /* likely_growth, not c(n): its constant 16 also covers the device's
   * exp and log (a few ulps each), which are not folds. */
  set_float(o, want, (likely_growth(s->n) + 8) * u + 2 * u * fabs(want));
}

static void row_count_nonzero(wg_oracle *o, const span *s, const double *p) {
  (void)p;
  uint64_t c = 0;
  for (uint64_t k = 0; k < s->n; k++)
    c += is_float(s->type) ? x_at(s, k) != 0 : raw_at(s->type, s->base, s->first + k) != 0;
  set_exact(o, c);
}

/* The operators' oracle rows, in wg_operator order. */
static const oracle_fn oracle_rows[WG_OPERATOR_COUNT] = {
  [WG_OP_SUM] = row_sum,         [WG_OP_PROD] = row_prod,
  [WG_OP_MIN] = row_min,         [WG_OP_MAX] = row_max,
  [WG_OP_AND] = row_and,         [WG_OP_OR] = row_or,
  [WG_OP_XOR] = row_xor,         [WG_OP_ARGMIN] = row_argmin,
  [WG_OP_ARGMAX] = row_argmax,   [WG_OP_MEAN] = row_mean,
  [WG_OP_VAR] = row_var,         [WG_OP_STD] = row_std,
  [WG_OP_NORM1] = row_norm1,     [WG_OP_NORM2] = row_norm2,
  [WG_OP_NORMINF] = row_norminf, [WG_OP_LOGSUMEXP] = row_logsumexp,
  [WG_OP_COUNT_NONZERO] = row_count_nonzero,
};

/* Parameter defaults, as the header documents them (var/std: correction 1). */
static const double default_params[WG_OPERATOR_COUNT][WG_MAX_PARAMS] = {
  [WG_OP_VAR] = {1.0},
  [WG_OP_STD] = {1.0},
};

void wg_oracle_reduce(wg_oracle *out, wg_type type, wg_operator op, const void *base,
                      uint64_t first, uint64_t count, const wg_scalar *params,
                      size_t nparams) {
  memset(out, 0, sizeof *out);
  const int ot = wg_reduce_output_type(type, op);
  if (ot < 0 || !oracle_rows[op]) {
    out->must_fail = true;
    return;
  }
  out->out_type = (wg_type)ot;
  double p[WG_MAX_PARAMS];
  for (size_t k = 0; k < WG_MAX_PARAMS; k++)
    p[k] = k < nparams ? params[k].f64 : default_params[op][k];
  const span s = {type, base, first, count};
  oracle_rows[op](out, &s, p);
}

/* The smallest magnitude that rounds to infinity in a float type: the
 * largest finite value plus half its unit in the last place (f64: none
 * that a double holds). */
static double overflow_at(wg_type t) {
  return t == WG_F16 ? 65520.0 : t == WG_BF16 ? 0x1.ffp127 : t == WG_F32 ? 0x1.ffffffp127
                                                                         : INFINITY;
}

/* wg_oracle_check, also giving |got - want| / bound (0 unless a finite
 * float comparison with a nonzero bound). */
static bool check_one(const wg_oracle *o, const void *got, char *why, size_t why_size,
                      double *ratio) {
  *ratio = 0;
  if (o->must_fail) {
    snprintf(why, why_size, "the call should have failed");
    return false;
  }
  if (o->exact) {
    const uint64_t g = raw_at(o->out_type, got, 0);
    if (g == o->bits) return true;
    snprintf(why, why_size, "got %" PRId64 " (0x%" PRIx64 "), want %" PRId64 " (0x%" PRIx64 ")",
             (int64_t)g, g, (int64_t)o->bits, o->bits);
    return false;
  }
  const double g = wg_oracle_elem(o->out_type, got, 0);
  bool ok;
  if (isnan(o->want))
    ok = isnan(g);
  else if (isinf(g)) /* right when the exact value, within the bound, rounds past the range */
    ok = (g > 0) == (o->want > 0) &&
         (isinf(o->want) || fabs(o->want) + o->bound >= overflow_at(o->out_type));
  else {
    ok = fabs(g - o->want) <= o->bound; /* a NaN never passes */
    if (ok && o->bound > 0) *ratio = fabs(g - o->want) / o->bound;
  }
  if (!ok)
    snprintf(why, why_size, "got %.10g, want %.10g (bound %.3g)", g, o->want, o->bound);
  return ok;
}

bool wg_oracle_check(const wg_oracle *o, const void *got, char *why, size_t why_size) {
  double ratio;
  return check_one(o, got, why, why_size, &ratio);
}

void wg_oracle_rows_check(wg_oracle_report *report, wg_type type, wg_operator op,
                          const void *in, uint64_t rows, uint64_t cols,
                          const wg_scalar *params, size_t nparams, const void *out) {
  const int ot = wg_reduce_output_type(type, op);
  const size_t osize = ot < 0 ? 0 : wg_type_size((wg_type)ot);
  for (uint64_t r = 0; r < rows; r++) {
    wg_oracle want;
    wg_oracle_reduce(&want, type, op, in, r * cols, cols, params, nparams);
    char why[200];
    double ratio;
    report->checked++;
    if (check_one(&want, (const unsigned char *)out + r * osize, why, sizeof why, &ratio)) {
      if (ratio > report->worst_ratio) report->worst_ratio = ratio;
      continue;
    }
    if (report->mismatches++ == 0 || r < report->first_index) {
      report->first_index = r;
      if (cols)
        snprintf(report->first, sizeof report->first, "row %" PRIu64 " (elements %" PRIu64
                 "..%" PRIu64 "): %s", r, r * cols, r * cols + cols - 1, why);
      else
        snprintf(report->first, sizeof report->first, "row %" PRIu64 " (empty): %s", r, why);
    }
  }
}

/* --- inputs --------------------------------------------------------------- */

void wg_oracle_fill(wg_type type, wg_operator op, void *in, uint64_t n, uint64_t seed) {
  if (op <= WG_OP_XOR) { /* the reference's inputs, as the warp tests use */
    wg_spec spec = WG_SPEC_INIT;
    spec.type = type;
    spec.op = op;
    wg_oracle_warp_fill(&spec, in, 0, n, seed);
    return;
  }
  wg_oracle_fill_range(type, op, in, 0, n, seed);
}

void wg_oracle_fill_range(wg_type type, wg_operator op, void *in, uint64_t begin,
                          uint64_t end, uint64_t seed) {
  for (uint64_t i = begin; i < end; i++) {
    const uint64_t r = wg_oracle_random(seed, 0x51ed27, i);
    const double unit = (double)(r >> 11) * 0x1p-53; /* [0, 1) */
    double x;
    if (op == WG_OP_ARGMIN || op == WG_OP_ARGMAX)
      x = (double)(int)(r % 17) - (is_float(type) || is_signed_int(type) ? 8 : 0);
    else if (op == WG_OP_COUNT_NONZERO)
      x = (r & 1) ? 0 : (double)(1 + (r >> 8) % 100);
    else if (!is_float(type))
      x = (double)(int)(r % 41) - (is_signed_int(type) ? 20 : 0);
    else
      x = 3.0 + 8.0 * unit - 4.0; /* [-1, 7): a mean away from 0 */
    wg_oracle_set(type, in, i, x);
  }
}
