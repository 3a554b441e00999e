/*
 * oracle_acc.c - the CPU twin of the sharded reductions (wg_reduce_partial,
 * wg_reduce_combine): a shard's accumulator in the device's bytes
 * (wg_reduce_accumulator's layout) and the fold of k of them with the
 * final step, for every built-in operator.
 *
 * It mirrors src/tables.c's operator rows in the accumulator's own
 * precision (f32 values for f32/f16/bf16: every operation rounded to float,
 * which a double computation followed by a float rounding gives exactly
 * for + - * / and sqrt), so that CPU and GPU accumulators can be mixed in
 * one combine and so that the tests without a GPU exercise the same
 * combining rules (argmax ties by index, Chan's merge, the online
 * logsumexp). Results are checked against wg_oracle_reduce on the whole
 * array, which shares none of this: it is the independent answer.
 */
#include "oracle.h"

#include <math.h>
#include <string.h>

/* One accumulator, every field any operator uses. */
typedef struct cpu_acc {
  double v;      /* a float value: sum, min, max, argmin/argmax's, mean... */
  uint64_t bits; /* an integer value (argmin/argmax of ints, int scalars) */
  int64_t i;     /* argmin/argmax: the index */
  uint64_t n;    /* var/std: the count */
  double mean, m2;
  double m, s;   /* logsumexp */
} cpu_acc;

#define NO_INDEX INT64_MAX

typedef struct model {
  wg_operator op;
  wg_type in;    /* the element type */
  wg_type value; /* what the accumulator computes in: F32, F64 or the int */
  wg_accumulator_layout layout;
} model;

static bool is_float(wg_type t) { return t <= WG_F64; }
static bool is_signed(wg_type t) { return t == WG_I32 || t == WG_I64; }
static uint64_t mask_of(wg_type t) {
  return wg_type_size(t) == 8 ? UINT64_MAX : 0xffffffffull;
}
/* x rounded to the value type's precision. */
static double rnd(const model *m, double x) {
  return m->value == WG_F64 ? x : (double)(float)x;
}
static bool int_less(wg_type t, uint64_t a, uint64_t b) {
  if (is_signed(t)) {
    const unsigned shift = 64 - 8 * (unsigned)wg_type_size(t);
    return (int64_t)(a << shift) >> shift < (int64_t)(b << shift) >> shift;
  }
  return a < b;
}

static cpu_acc identity(const model *m) {
  cpu_acc a = {0};
  const bool f = is_float(m->value);
  const uint64_t mask = mask_of(m->value);
  const uint64_t hi = is_signed(m->value) ? mask >> 1 : mask, lo = is_signed(m->value)
                                                                   ? (mask >> 1) + 1 : 0;
  switch (m->op) {
  case WG_OP_PROD: a.v = 1, a.bits = 1; break;
  case WG_OP_MIN: a.v = INFINITY, a.bits = hi; break;
  case WG_OP_MAX: a.v = -INFINITY, a.bits = lo; break;
  case WG_OP_AND: a.bits = mask; break;
  case WG_OP_ARGMIN: a.v = INFINITY, a.bits = hi, a.i = NO_INDEX; break;
  case WG_OP_ARGMAX: a.v = -INFINITY, a.bits = lo, a.i = NO_INDEX; break;
  case WG_OP_LOGSUMEXP: a.m = -INFINITY, a.s = 0; break;
  default: break;
  }
  (void)f;
  return a;
}

/* Element k of the span as the accumulator the map makes. */
static cpu_acc map(const model *m, const void *base, uint64_t k, int64_t index) {
  cpu_acc a = identity(m);
  const double x = is_float(m->in) ? wg_oracle_elem(m->in, base, k)
                                   : rnd(m, wg_oracle_elem(m->in, base, k));
  uint64_t raw = 0;
  memcpy(&raw, (const unsigned char *)base + k * wg_type_size(m->in), wg_type_size(m->in));
  switch (m->op) {
  case WG_OP_ARGMIN:
  case WG_OP_ARGMAX: a.v = x, a.bits = raw, a.i = index; break;
  case WG_OP_VAR:
  case WG_OP_STD: a.n = 1, a.mean = x, a.m2 = x - x; break;
  case WG_OP_NORM1:
  case WG_OP_NORMINF: a.v = fabs(x); break;
  case WG_OP_NORM2: a.v = rnd(m, x * x); break;
  case WG_OP_LOGSUMEXP: a.m = x, a.s = 1; break;
  case WG_OP_COUNT_NONZERO: {
    /* on the storage bits: -0.0 is zero, NaN is not */
    const uint64_t nonsign = is_float(m->in) ? raw & ~(1ull << (8 * wg_type_size(m->in) - 1))
                                             : raw;
    a.bits = nonsign != 0;
    break;
  }
  default: a.v = x, a.bits = raw; break;
  }
  return a;
}

/* argmin/argmax: b replaces a when b is a NaN and a is not, when b is
 * better, or on a tie when b comes first (src/tables.c, wg_arg_pick). */
static cpu_acc arg_pick(const model *m, cpu_acc a, cpu_acc b, bool want_less) {
  if (is_float(m->value)) {
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an != bn) return bn ? b : a;
    const bool better = want_less ? b.v < a.v : a.v < b.v;
    if (!an && better) return b;
    const bool tie = an || a.v == b.v;
    return tie && b.i < a.i ? b : a;
  }
  const bool better = want_less ? int_less(m->value, b.bits, a.bits)
                                : int_less(m->value, a.bits, b.bits);
  if (better) return b;
  return a.bits == b.bits && b.i < a.i ? b : a;
}

static cpu_acc combine(const model *m, cpu_acc a, cpu_acc b) {
  const uint64_t mask = mask_of(m->value);
  const bool f = is_float(m->value);
  cpu_acc r = a;
  switch (m->op) {
  case WG_OP_SUM:
  case WG_OP_MEAN:
  case WG_OP_NORM1:
  case WG_OP_NORM2:
    if (f) r.v = rnd(m, a.v + b.v);
    else r.bits = (a.bits + b.bits) & mask;
    break;
  case WG_OP_PROD:
    if (f) r.v = rnd(m, a.v * b.v);
    else r.bits = (a.bits * b.bits) & mask;
    break;
  case WG_OP_MIN:
    if (f) r.v = fmin(a.v, b.v);
    else r.bits = int_less(m->value, b.bits, a.bits) ? b.bits : a.bits;
    break;
  case WG_OP_MAX:
    if (f) r.v = fmax(a.v, b.v);
    else r.bits = int_less(m->value, a.bits, b.bits) ? b.bits : a.bits;
    break;
  case WG_OP_AND: r.bits = a.bits & b.bits; break;
  case WG_OP_OR: r.bits = a.bits | b.bits; break;
  case WG_OP_XOR: r.bits = a.bits ^ b.bits; break;
  case WG_OP_ARGMIN: return arg_pick(m, a, b, true);
  case WG_OP_ARGMAX: return arg_pick(m, a, b, false);
  case WG_OP_VAR:
  case WG_OP_STD: { /* Chan et al., as wg_welford_merge */
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    r.n = a.n + b.n;
    const double d = rnd(m, b.mean - a.mean), wb = rnd(m, (double)b.n / (double)r.n);
    r.mean = rnd(m, a.mean + rnd(m, d * wb));
    r.m2 = rnd(m, rnd(m, a.m2 + b.m2) + rnd(m, rnd(m, d * d) * rnd(m, (double)a.n * wb)));
    if (d - d != d - d) r.m2 = d - d;
    return r;
  }
  case WG_OP_NORMINF: r.v = (a.v < b.v || b.v != b.v) ? b.v : a.v; break;
  case WG_OP_LOGSUMEXP: { /* as wg_lse_merge */
    if (a.m != a.m || b.m != b.m) {
      r.m = a.m + b.m, r.s = 1;
      return r;
    }
    const cpu_acc hi = a.m < b.m ? b : a, lo = a.m < b.m ? a : b;
    if (lo.m == -INFINITY || hi.m == INFINITY) return hi;
    r.m = hi.m;
    r.s = rnd(m, hi.s + rnd(m, lo.s * rnd(m, exp(rnd(m, lo.m - hi.m)))));
    return r;
  }
  case WG_OP_COUNT_NONZERO: r.bits = a.bits + b.bits; break;
  default: break;
  }
  return r;
}

/* A span folded as a pairwise tree (short chains, as the device's). */
static cpu_acc fold(const model *m, const void *base, uint64_t first, uint64_t count,
                    int64_t index) {
  if (count <= 8) {
    cpu_acc a = identity(m);
    for (uint64_t k = 0; k < count; k++)
      a = combine(m, a, map(m, base, first + k, index + (int64_t)k));
    return a;
  }
  const uint64_t half = count / 2;
  return combine(m, fold(m, base, first, half, index),
                 fold(m, base, first + half, count - half, index + (int64_t)half));
}

/* --- the device's bytes ----------------------------------------------------- */

static void put(void *acc, const wg_accumulator_field *f, double v, uint64_t bits) {
  unsigned char *p = (unsigned char *)acc + f->offset;
  if (f->type == WG_F32) {
    const float x = (float)v;
    memcpy(p, &x, 4);
  } else if (f->type == WG_F64) {
    memcpy(p, &v, 8);
  } else {
    memcpy(p, &bits, wg_type_size(f->type)); /* little-endian */
  }
}

static void get(const void *acc, const wg_accumulator_field *f, double *v, uint64_t *bits) {
  const unsigned char *p = (const unsigned char *)acc + f->offset;
  *v = 0, *bits = 0;
  if (f->type == WG_F32) {
    float x;
    memcpy(&x, p, 4);
    *v = x;
  } else if (f->type == WG_F64) {
    memcpy(v, p, 8);
  } else {
    memcpy(bits, p, wg_type_size(f->type));
    if (f->type == WG_I32 && (*bits >> 31)) *bits |= 0xffffffff00000000ull;
  }
}

/* Field f of a as (value, bits), by the field's name. */
static void field_of(const cpu_acc *a, const char *name, double *v, uint64_t *bits) {
  *v = a->v, *bits = a->bits;
  if (!strcmp(name, "i")) *bits = (uint64_t)a->i;
  else if (!strcmp(name, "n")) *bits = a->n;
  else if (!strcmp(name, "mean")) *v = a->mean;
  else if (!strcmp(name, "m2")) *v = a->m2;
  else if (!strcmp(name, "m")) *v = a->m;
  else if (!strcmp(name, "s")) *v = a->s;
}

static void set_field(cpu_acc *a, const char *name, double v, uint64_t bits) {
  if (!strcmp(name, "i")) a->i = (int64_t)bits;
  else if (!strcmp(name, "n")) a->n = bits;
  else if (!strcmp(name, "mean")) a->mean = v;
  else if (!strcmp(name, "m2")) a->m2 = v;
  else if (!strcmp(name, "m")) a->m = v;
  else if (!strcmp(name, "s")) a->s = v;
  else a->v = v, a->bits = bits;
}

static void pack(void *out, const model *m, const cpu_acc *a) {
  memset(out, 0, m->layout.size);
  for (int f = 0; f < m->layout.nfields; f++) {
    double v;
    uint64_t bits;
    field_of(a, m->layout.fields[f].name, &v, &bits);
    put(out, &m->layout.fields[f], v, bits);
  }
}

static cpu_acc unpack(const void *in, const model *m) {
  cpu_acc a = identity(m);
  for (int f = 0; f < m->layout.nfields; f++) {
    double v;
    uint64_t bits;
    get(in, &m->layout.fields[f], &v, &bits);
    set_field(&a, m->layout.fields[f].name, v, bits);
  }
  if (!is_float(m->value)) a.bits &= mask_of(m->value);
  return a;
}

static int model_of(model *m, wg_type type, wg_operator op) {
  wg_spec spec;
  wg_spec_init(&spec);
  spec.primitive = WG_REDUCE_ARRAY;
  spec.type = type;
  spec.op = op;
  memset(m, 0, sizeof *m);
  const int rc = wg_reduce_accumulator(&m->layout, &spec);
  if (rc != WG_OK) return rc;
  m->op = op;
  m->in = type;
  /* the first value-carrying field's type, else the input's */
  m->value = type == WG_F16 || type == WG_BF16 ? WG_F32 : type;
  if (op == WG_OP_LOGSUMEXP && !is_float(type)) m->value = WG_F32;
  return WG_OK;
}

int wg_oracle_partial(void *acc, wg_type type, wg_operator op, const void *base,
                      uint64_t first, uint64_t count, int64_t index_base) {
  model m;
  const int rc = model_of(&m, type, op);
  if (rc != WG_OK) return rc;
  const cpu_acc a = fold(&m, base, first, count, index_base);
  pack(acc, &m, &a);
  return WG_OK;
}

int wg_oracle_combine(void *out, wg_type type, wg_operator op, const void *accs,
                      uint64_t k, uint64_t total, const wg_scalar *params,
                      size_t nparams) {
  model m;
  const int rc = model_of(&m, type, op);
  if (rc != WG_OK) return rc;
  cpu_acc r = identity(&m);
  for (uint64_t j = 0; j < k; j++)
    r = combine(&m, r, unpack((const unsigned char *)accs + j * m.layout.size, &m));
  const wg_type out_type = (wg_type)wg_reduce_output_type(type, op);
  const double c = nparams ? params[0].f64 : 1.0;
  double v = r.v;
  uint64_t bits = r.bits;
  switch (op) {
  case WG_OP_ARGMIN:
  case WG_OP_ARGMAX: bits = (uint64_t)r.i; break;
  case WG_OP_COUNT_NONZERO: break;
  case WG_OP_MEAN: v = rnd(&m, r.v / rnd(&m, (double)total)); break;
  case WG_OP_VAR:
  case WG_OP_STD: {
    const double n = rnd(&m, (double)r.n), cc = rnd(&m, c);
    v = rnd(&m, r.m2 / (n > cc ? rnd(&m, n - cc) : 0.0));
    if (op == WG_OP_STD) v = rnd(&m, sqrt(v));
    break;
  }
  case WG_OP_NORM2: v = rnd(&m, sqrt(r.v)); break;
  case WG_OP_LOGSUMEXP:
    v = (r.m == -INFINITY || r.m == INFINITY || r.m != r.m) ? r.m : rnd(&m, r.m + log(r.s));
    break;
  default: break;
  }
  if (is_float(out_type)) wg_oracle_set(out_type, out, 0, v);
  else memcpy(out, &bits, wg_type_size(out_type));
  return WG_OK;
}
