/*
 * oracle_warp.c - what every warp primitive must produce, computed on the
 * CPU, and the comparison of a GPU's outputs with it; also the element
 * formats (f16/bf16 rounding) and the random inputs the oracle shares.
 *
 * Types and operators are rows of tables: a type is its size, signedness
 * and, for floats, its binary format (exponent and mantissa bits, with one
 * routine for f16, bf16 and f32); an operator is one integer and one
 * floating combine plus its identities. Each group of `width` elements is
 * loaded once into integers (exact, masked to the type's bits) or doubles,
 * and the primitive is evaluated lane by lane.
 *
 * Float sums and products follow oracle.h's one rule with n the lanes
 * folded so far: c(n) u M + u_s |want| + tiny_s, M the sum (or product) of
 * the terms' magnitudes. Kernels may add in any order, so c(n) covers the
 * worst order (2n: twice gamma_{n-1}, the factor 2 covering the double
 * reference's own rounding, which matters for f64).
 */
#include "oracle.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_WIDTH 32

/* --- types ---------------------------------------------------------------- */

typedef struct ref_type {
  unsigned size;      /* bytes */
  bool is_float;
  bool is_signed;     /* integers */
  int exp_bits;       /* binary floats up to 32 bits: the format; 0 for f64 */
  int mant_bits;
} ref_type;

static const ref_type ref_types[WG_TYPE_COUNT] = {
    [WG_F16] = {2, true, true, 5, 10},
    [WG_BF16] = {2, true, true, 8, 7},
    [WG_F32] = {4, true, true, 8, 23},
    [WG_F64] = {8, true, true, 0, 0},
    [WG_I32] = {4, false, true, 0, 0},
    [WG_U32] = {4, false, false, 0, 0},
    [WG_I64] = {8, false, true, 0, 0},
    [WG_U64] = {8, false, false, 0, 0},
};

static uint64_t type_mask(const ref_type *t) {
  return t->size == 8 ? UINT64_MAX : (UINT64_C(1) << (t->size * 8)) - 1;
}

/* Little-endian raw bits of element i. */
static uint64_t load_bits(const void *base, uint64_t i, unsigned size) {
  uint64_t v = 0;
  memcpy(&v, (const unsigned char *)base + i * size, size);
  return v;
}

static void store_bits(void *base, uint64_t i, unsigned size, uint64_t v) {
  memcpy((unsigned char *)base + i * size, &v, size);
}

static int64_t sign_extend(uint64_t v, const ref_type *t) {
  unsigned shift = 64 - t->size * 8;
  return (int64_t)(v << shift) >> shift;
}

/* A binary float of (exp_bits, mant_bits) from its bits. */
static double decode_binary(uint64_t bits, int exp_bits, int mant_bits) {
  int bias = (1 << (exp_bits - 1)) - 1;
  uint64_t mant = bits & ((UINT64_C(1) << mant_bits) - 1);
  int exp = (int)((bits >> mant_bits) & ((1u << exp_bits) - 1));
  bool negative = (bits >> (mant_bits + exp_bits)) & 1;
  double v;
  if (exp == 0)
    v = ldexp((double)mant, 1 - bias - mant_bits);
  else if (exp == (1 << exp_bits) - 1)
    v = mant ? NAN : INFINITY;
  else
    v = ldexp((double)(mant | (UINT64_C(1) << mant_bits)),
              exp - bias - mant_bits);
  return negative ? -v : v;
}

/* The bits of x rounded to nearest even in (exp_bits, mant_bits). */
static uint64_t encode_binary(double x, int exp_bits, int mant_bits) {
  int bias = (1 << (exp_bits - 1)) - 1;
  uint64_t sign = (uint64_t)(signbit(x) ? 1 : 0) << (mant_bits + exp_bits);
  uint64_t inf = (uint64_t)((1 << exp_bits) - 1) << mant_bits;
  if (isnan(x))
    return inf | (UINT64_C(1) << (mant_bits - 1));
  double ax = fabs(x);
  if (isinf(ax))
    return sign | inf;
  if (ax == 0)
    return sign;
  int e2 = 0;
  frexp(ax, &e2);
  int exponent = e2 - 1; /* ax in [2^exponent, 2^(exponent+1)) */
  int min_normal = 1 - bias;
  int quantum = (exponent < min_normal ? min_normal : exponent) - mant_bits;
  /* rint rounds half to even in the default rounding mode; the scaling by
   * a power of two is exact. */
  double steps = rint(ldexp(ax, -quantum));
  double rounded = ldexp(steps, quantum);
  if (rounded >= ldexp(1.0, bias + 1))
    return sign | inf;
  if (rounded < ldexp(1.0, min_normal))
    return sign | (uint64_t)steps; /* subnormal (or zero) */
  frexp(rounded, &e2);
  exponent = e2 - 1;
  uint64_t mant = (uint64_t)ldexp(rounded, mant_bits - exponent) -
                  (UINT64_C(1) << mant_bits);
  return sign | ((uint64_t)(exponent + bias) << mant_bits) | mant;
}

uint16_t wg_oracle_f16_from_double(double x) {
  return (uint16_t)encode_binary(x, 5, 10);
}
double wg_oracle_f16_to_double(uint16_t bits) {
  return decode_binary(bits, 5, 10);
}
uint16_t wg_oracle_bf16_from_double(double x) {
  return (uint16_t)encode_binary(x, 8, 7);
}
double wg_oracle_bf16_to_double(uint16_t bits) {
  return decode_binary(bits, 8, 7);
}

static double bits_to_double(uint64_t bits, const ref_type *t) {
  if (t->exp_bits)
    return decode_binary(bits, t->exp_bits, t->mant_bits);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static uint64_t double_to_bits(double x, const ref_type *t) {
  if (t->exp_bits)
    return encode_binary(x, t->exp_bits, t->mant_bits);
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits;
}

/* --- operators ------------------------------------------------------------ */

typedef struct ref_operator {
  uint64_t (*combine_int)(uint64_t a, uint64_t b, const ref_type *t);
  long double (*combine_float)(long double a, long double b);
  double float_identity;
  bool rounds; /* sum, prod: floats carry a rounding bound */
} ref_operator;

static uint64_t int_sum(uint64_t a, uint64_t b, const ref_type *t) {
  return (a + b) & type_mask(t);
}
static uint64_t int_prod(uint64_t a, uint64_t b, const ref_type *t) {
  return (a * b) & type_mask(t);
}
static bool int_less(uint64_t a, uint64_t b, const ref_type *t) {
  return t->is_signed ? sign_extend(a, t) < sign_extend(b, t) : a < b;
}
static uint64_t int_min(uint64_t a, uint64_t b, const ref_type *t) {
  return int_less(b, a, t) ? b : a;
}
static uint64_t int_max(uint64_t a, uint64_t b, const ref_type *t) {
  return int_less(a, b, t) ? b : a;
}
static uint64_t int_and(uint64_t a, uint64_t b, const ref_type *t) {
  (void)t;
  return a & b;
}
static uint64_t int_or(uint64_t a, uint64_t b, const ref_type *t) {
  (void)t;
  return a | b;
}
static uint64_t int_xor(uint64_t a, uint64_t b, const ref_type *t) {
  (void)t;
  return a ^ b;
}
static long double float_sum(long double a, long double b) { return a + b; }
static long double float_prod(long double a, long double b) { return a * b; }

static const ref_operator ref_operators[WG_OPERATOR_COUNT] = {
    [WG_OP_SUM] = {int_sum, float_sum, 0.0, true},
    [WG_OP_PROD] = {int_prod, float_prod, 1.0, true},
    [WG_OP_MIN] = {int_min, fminl, INFINITY, false},
    [WG_OP_MAX] = {int_max, fmaxl, -INFINITY, false},
    [WG_OP_AND] = {int_and, NULL, 0.0, false},
    [WG_OP_OR] = {int_or, NULL, 0.0, false},
    [WG_OP_XOR] = {int_xor, NULL, 0.0, false},
};

static uint64_t int_identity(wg_operator op, const ref_type *t) {
  uint64_t mask = type_mask(t);
  uint64_t sign_bit = UINT64_C(1) << (t->size * 8 - 1);
  switch (op) {
  case WG_OP_PROD:
    return 1;
  case WG_OP_MIN:
    return t->is_signed ? mask >> 1 : mask;
  case WG_OP_MAX:
    return t->is_signed ? sign_bit : 0;
  case WG_OP_AND:
    return mask;
  default:
    return 0;
  }
}

/* --- random inputs -------------------------------------------------------- */

/* splitmix64's finaliser: a counter-based generator, so element i's value
 * needs no state. */
static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t wg_oracle_random(uint64_t seed, uint64_t salt, uint64_t i) {
  return mix64(seed ^ mix64(salt * 0x632be59bd9b4e019ull + i));
}

/* A uniform double in [-1, 1). */
static double unit_double(uint64_t r) {
  return (double)(r >> 11) * 0x1p-52 - 1.0;
}

/* Random bits (or a random float) for one element, shaped by the operator. */
static uint64_t random_value(const wg_spec *spec, const ref_type *t,
                             uint64_t seed, uint64_t counter) {
  uint64_t r = wg_oracle_random(seed, 1, counter);
  if (!t->is_float) {
    if (spec->op == WG_OP_AND) /* mostly ones, so the AND keeps some */
      for (uint64_t s = 2; s < 6; s++)
        r |= wg_oracle_random(seed, s, counter);
    else if (spec->op == WG_OP_OR) /* mostly zeros, so the OR keeps some */
      for (uint64_t s = 2; s < 6; s++)
        r &= wg_oracle_random(seed, s, counter);
    return r & type_mask(t);
  }
  double x;
  if (spec->op == WG_OP_PROD) /* magnitudes near 1: 32 of them stay finite */
    x = (r & 1 ? -1.0 : 1.0) * (0.8 + 0.45 * fabs(unit_double(r)));
  else
    x = unit_double(r);
  uint64_t bits = double_to_bits(x, t);
  /* A negative value too small for the type rounds to -0; make it +0 so
   * that min/max and match never hinge on the sign of zero. */
  if (bits_to_double(bits, t) == 0.0)
    bits = 0;
  return bits;
}

void wg_oracle_warp_fill(const wg_spec *spec, void *in, uint64_t begin, uint64_t end,
                 uint64_t seed) {
  const ref_type *t = &ref_types[spec->type];
  uint64_t width = (uint64_t)spec->width;
  bool vote = spec->primitive == WG_BALLOT || spec->primitive == WG_ANY ||
              spec->primitive == WG_ALL;
  /* Chances, in 64ths, that a vote input is zero: all-zero, all-set and
   * mixed groups all occur. */
  static const unsigned zero_chance[] = {0, 1, 32, 63, 64};
  /* How many distinct values a match group draws from. */
  static const unsigned distinct[] = {1, 2, 3, 4, 32};
  if (spec->op > WG_OP_XOR) { /* argmin on: the reductions' inputs (ties...) */
    wg_oracle_fill_range(spec->type, spec->op, in, begin, end, seed);
    return;
  }
  for (uint64_t i = begin; i < end; i++) {
    uint64_t group = i / width;
    uint64_t g = wg_oracle_random(seed, 7, group);
    uint64_t counter = i;
    if (spec->primitive == WG_MATCH)
      counter = group * 64 + wg_oracle_random(seed, 8, i) % distinct[g % 5];
    uint64_t v = random_value(spec, t, seed, counter);
    if (vote && (wg_oracle_random(seed, 9, i) & 63) < zero_chance[g % 5])
      v = 0;
    else if (vote && v == 0)
      v = t->is_float ? double_to_bits(1.0, t) : 1;
    store_bits(in, i, t->size, v);
  }
}

uint64_t wg_oracle_fresh_seed(void) {
  static uint64_t counter;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return mix64((uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec) ^
         mix64((uint64_t)getpid() << 20 ^ ++counter);
}

unsigned char wg_oracle_poison_byte(const wg_spec *spec) {
  bool float_out;
  const int out = wg_reduce_spec_output_type(spec); /* reductions, warp operators */
  if (out >= 0)
    float_out = ref_types[out].is_float;
  else
    float_out = ref_types[spec->type].is_float && spec->primitive == WG_BROADCAST;
  /* All-ones bits are a NaN in every float format. */
  return float_out ? 0xff : 0xa7;
}

uint64_t wg_oracle_group_count(const wg_spec *spec, uint64_t n) {
  uint64_t width = (uint64_t)spec->width;
  if (spec->width <= 0 || spec->primitive == WG_REDUCE_ARRAY ||
      spec->primitive == WG_REDUCE_ROWS) /* not a warp primitive */
    return 0;
  return n / width + (n % width != 0);
}

/* --- checking ------------------------------------------------------------- */

void wg_oracle_report_init(wg_oracle_report *report) {
  memset(report, 0, sizeof *report);
  report->first_index = UINT64_MAX;
}

void wg_oracle_report_merge(wg_oracle_report *into, const wg_oracle_report *part) {
  into->checked += part->checked;
  into->mismatches += part->mismatches;
  if (part->mismatches && part->first_index < into->first_index) {
    into->first_index = part->first_index;
    memcpy(into->first, part->first, sizeof into->first);
  }
  if (part->worst_ratio > into->worst_ratio)
    into->worst_ratio = part->worst_ratio;
}

/* One group of inputs, loaded once. */
typedef struct group {
  uint64_t index; /* of the group */
  uint64_t base;  /* of its first element */
  unsigned k;     /* elements present (< width for the last group) */
  uint64_t bits[MAX_WIDTH];
  double value[MAX_WIDTH]; /* floats */
} group;

/* The running value of a reduction or scan, with the magnitude its float
 * bound needs; floats in long double, so that the reference's own rounding
 * stays far below the kernels' (f64 included). */
typedef struct accumulator {
  uint64_t bits;
  long double value;
  double magnitude; /* sum of |x| for sums, product of |x| for products */
  unsigned terms;
} accumulator;

typedef struct checker {
  const wg_spec *spec;
  const void *in;
  const ref_type *type;
  const ref_operator *op;
  const void *out;
  wg_oracle_report *report;
} checker;

static accumulator acc_identity(const checker *c) {
  accumulator a = {0};
  if (c->type->is_float) {
    a.value = c->op->float_identity;
    a.magnitude = c->spec->op == WG_OP_PROD ? 1.0 : 0.0;
  } else {
    a.bits = int_identity(c->spec->op, c->type);
  }
  return a;
}

static void acc_add(const checker *c, accumulator *a, const group *g,
                    unsigned lane) {
  if (c->type->is_float) {
    double x = g->value[lane];
    a->value = c->op->combine_float(a->value, x);
    a->magnitude = c->spec->op == WG_OP_PROD ? a->magnitude * fabs(x)
                                              : a->magnitude + fabs(x);
  } else {
    a->bits = c->op->combine_int(a->bits, g->bits[lane], c->type);
  }
  a->terms++;
}

static void record(const checker *c, uint64_t out_index, const group *g,
                   const char *detail) {
  wg_oracle_report *r = c->report;
  r->mismatches++;
  if (out_index < r->first_index) {
    r->first_index = out_index;
    snprintf(r->first, sizeof r->first,
             "output %llu (group %llu, elements %llu..%llu): %s",
             (unsigned long long)out_index, (unsigned long long)g->index,
             (unsigned long long)g->base,
             (unsigned long long)(g->base + g->k - 1), detail);
  }
}

/* Compares an output of the input's type with the exact bits `want`. */
static void expect_bits(const checker *c, uint64_t out_index, const group *g,
                        uint64_t want, unsigned size) {
  uint64_t got = load_bits(c->out, out_index, size);
  c->report->checked++;
  if (got == want)
    return;
  char detail[200];
  snprintf(detail, sizeof detail, "got 0x%0*llx, want 0x%0*llx",
           (int)size * 2, (unsigned long long)got, (int)size * 2,
           (unsigned long long)want);
  record(c, out_index, g, detail);
}

/* Compares an output of the input's type with a reduction or scan value. */
static void expect_acc(const checker *c, uint64_t out_index, const group *g,
                       const accumulator *want) {
  const ref_type *t = c->type;
  if (!t->is_float) {
    expect_bits(c, out_index, g, want->bits, t->size);
    return;
  }
  double got = bits_to_double(load_bits(c->out, out_index, t->size), t);
  double bound = 0;
  if (c->op->rounds)
    bound = wg_oracle_growth(c->spec->type, want->terms) * want->magnitude +
            wg_oracle_store_error(c->spec->type, (double)want->value);
  c->report->checked++;
  double want_value = (double)want->value;
  double error = fabs(got - want_value);
  bool ok = got == want_value || (!isnan(got) && error <= bound);
  if (ok) {
    if (bound > 0 && error / bound > c->report->worst_ratio)
      c->report->worst_ratio = error / bound;
    return;
  }
  char detail[200];
  snprintf(detail, sizeof detail, "got %.17g, want %.17g (bound %.3g)", got,
           want_value, bound);
  record(c, out_index, g, detail);
}

static bool nonzero(const checker *c, const group *g, unsigned lane) {
  return c->type->is_float ? g->value[lane] != 0.0 : g->bits[lane] != 0;
}

/* reduce and allreduce of the operators from argmin on: each group is a
 * reduction of its k elements (wg_oracle_reduce, its bound for k); argmin
 * and argmax give the global index (the group's first element's plus the
 * index within the group). */
static void check_group_model(const checker *c, const group *g) {
  const wg_spec *spec = c->spec;
  wg_oracle o;
  wg_oracle_reduce(&o, spec->type, spec->op, c->in, g->base, g->k, NULL, 0);
  if (spec->op == WG_OP_ARGMIN || spec->op == WG_OP_ARGMAX) o.bits += g->base;
  const size_t size = wg_type_size(o.out_type);
  const uint64_t first = spec->primitive == WG_REDUCE ? g->index : g->base;
  const unsigned outputs = spec->primitive == WG_REDUCE ? 1 : g->k;
  for (unsigned j = 0; j < outputs; j++) {
    char why[200];
    c->report->checked++;
    if (!wg_oracle_check(&o, (const unsigned char *)c->out + (first + j) * size, why,
                         sizeof why))
      record(c, first + j, g, why);
  }
}

static void check_group(const checker *c, const group *g) {
  const wg_spec *spec = c->spec;
  if (spec->op > WG_OP_XOR) {
    check_group_model(c, g);
    return;
  }
  accumulator acc = acc_identity(c);
  switch (spec->primitive) {
  case WG_REDUCE:
    for (unsigned j = 0; j < g->k; j++)
      acc_add(c, &acc, g, j);
    expect_acc(c, g->index, g, &acc);
    break;
  case WG_ALLREDUCE:
    for (unsigned j = 0; j < g->k; j++)
      acc_add(c, &acc, g, j);
    for (unsigned j = 0; j < g->k; j++)
      expect_acc(c, g->base + j, g, &acc);
    break;
  case WG_SCAN:
  case WG_EXSCAN:
    for (unsigned j = 0; j < g->k; j++) {
      if (spec->primitive == WG_SCAN)
        acc_add(c, &acc, g, j);
      expect_acc(c, g->base + j, g, &acc);
      if (spec->primitive == WG_EXSCAN)
        acc_add(c, &acc, g, j);
    }
    break;
  case WG_BROADCAST: {
    unsigned lane = (unsigned)spec->lane;
    uint64_t want = lane < g->k ? g->bits[lane] : 0;
    for (unsigned j = 0; j < g->k; j++)
      expect_bits(c, g->base + j, g, want, c->type->size);
    break;
  }
  case WG_BALLOT:
  case WG_ANY:
  case WG_ALL: {
    uint64_t ballot = 0;
    unsigned set = 0;
    for (unsigned j = 0; j < g->k; j++)
      if (nonzero(c, g, j)) {
        ballot |= UINT64_C(1) << j;
        set++;
      }
    uint64_t want = spec->primitive == WG_BALLOT ? ballot
                    : spec->primitive == WG_ANY  ? set > 0
                                                 : set == g->k;
    expect_bits(c, g->index, g, want, 4);
    break;
  }
  case WG_MATCH:
    for (unsigned j = 0; j < g->k; j++) {
      uint64_t mask = 0;
      for (unsigned l = 0; l < g->k; l++)
        if (g->bits[l] == g->bits[j])
          mask |= UINT64_C(1) << l;
      expect_bits(c, g->base + j, g, mask, 4);
    }
    break;
  default:
    break;
  }
}

void wg_oracle_warp_check(wg_oracle_report *report, const wg_spec *spec, const void *in,
                  uint64_t n, const void *out, uint64_t group_begin,
                  uint64_t group_end) {
  checker c = {spec, in, &ref_types[spec->type], &ref_operators[spec->op], out,
               report};
  uint64_t width = (uint64_t)spec->width;
  uint64_t groups = wg_oracle_group_count(spec, n);
  if (wg_oracle_spec_has_expr(spec)) { /* needs the evaluator: oracle_expr.c */
    report->mismatches++;
    report->first_index = 0;
    snprintf(report->first, sizeof report->first, "a spec with expressions, inputs or "
             "params: check it with wg_oracle_warp_check_ex");
    return;
  }
  if (group_end > groups)
    group_end = groups;
  group g;
  for (uint64_t gi = group_begin; gi < group_end; gi++) {
    g.index = gi;
    g.base = gi * width;
    g.k = (unsigned)(n - g.base < width ? n - g.base : width);
    for (unsigned j = 0; j < g.k; j++) {
      g.bits[j] = load_bits(in, g.base + j, c.type->size);
      if (c.type->is_float)
        g.value[j] = bits_to_double(g.bits[j], c.type);
    }
    check_group(&c, &g);
  }
}

bool wg_oracle_spec_has_expr(const wg_spec *spec) {
  return spec->map || spec->combine || spec->identity || spec->final ||
         spec->ninputs > 1 || spec->nparams > 0;
}

int wg_oracle_warp_check_text(wg_oracle_report *report, const char *spec_text,
                              const void *in, uint64_t n, const void *out) {
  wg_context *ctx;
  if (wg_context_create(&ctx, NULL) != WG_OK)
    return WG_ENOMEM;
  wg_spec spec;
  int rc = wg_spec_parse(ctx, &spec, spec_text);
  wg_context_destroy(ctx);
  if (rc == WG_OK && wg_oracle_group_count(&spec, 1) == 0)
    rc = WG_ESPEC; /* reduce-array, reduce-rows: wg_oracle_rows_check */
  if (rc == WG_OK)
    wg_oracle_warp_check(report, &spec, in, n, out, 0, wg_oracle_group_count(&spec, n));
  return rc;
}
