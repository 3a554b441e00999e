/*
 * oracle_expr.c - the CPU oracle of the warp primitives whose specs carry
 * expressions (map=, combine=, identity=, final=), more inputs or
 * parameters (oracle.h, wg_oracle_warp_check_ex).
 *
 * Each group is evaluated as the kernels define it: the map of every
 * element (i its global index, n the group's count) by the library's CPU
 * evaluator (src/expr_eval.c, the semantics of the CUDA it renders), then
 * the fold: combine= step by step from identity=, or the built-in operator
 * through wg_oracle_reduce over the mapped values (its bound), then final=.
 * What the evaluator cannot pin down (a map with math functions under an
 * operator, a float combine that gives other bits in another order) is a
 * mismatch saying so, never a pass. Links the static library (internal
 * symbols), so it is not part of liboracle.so.
 */
#include "expr.h"
#include "internal.h"
#include "oracle.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_WIDTH 32

static bool type_is_float(wg_type t) { return t <= WG_F64; }

/* Element i of an array of t as the expression value the kernels load. */
static wg_value value_at(wg_type t, const void *base, uint64_t i) {
  wg_value v;
  memset(&v, 0, sizeof v);
  v.type = wg_value_type_of(t);
  uint64_t raw = 0;
  memcpy(&raw, (const unsigned char *)base + i * wg_type_size(t), wg_type_size(t));
  switch (v.type) {
  case WG_VT_F32: v.as.f32 = (float)wg_oracle_elem(t, base, i); break;
  case WG_VT_F64: v.as.f64 = wg_oracle_elem(t, base, i); break;
  case WG_VT_I32: v.as.i32 = (int32_t)(uint32_t)raw; break;
  case WG_VT_U32: v.as.u32 = (uint32_t)raw; break;
  case WG_VT_I64: v.as.i64 = (int64_t)raw; break;
  default: v.as.u64 = raw; break;
  }
  return v;
}

static double num(wg_value v) {
  switch (v.type) {
  case WG_VT_BOOL: return v.as.b;
  case WG_VT_I32: return v.as.i32;
  case WG_VT_U32: return v.as.u32;
  case WG_VT_I64: return (double)v.as.i64;
  case WG_VT_U64: return (double)v.as.u64;
  case WG_VT_F32: return v.as.f32;
  default: return v.as.f64;
  }
}

/* An integer value's two's-complement word (the oracle keeps its own copy of
 * the evaluator's word_of: it checks the library, it does not reuse it). */
static uint64_t word(wg_value v) {
  switch (v.type) {
  case WG_VT_BOOL: return v.as.b;
  case WG_VT_I32: return (uint64_t)(int64_t)v.as.i32;
  case WG_VT_U32: return v.as.u32;
  case WG_VT_I64: return (uint64_t)v.as.i64;
  default: return v.as.u64;
  }
}

/* v stored as type t (bool as 0/1, floats rounded to nearest even), its
 * raw bits; the kernels cast a value to its storage the same way. */
static uint64_t raw_of(wg_value v, wg_type t) {
  uint64_t raw = 0;
  if (type_is_float(t)) {
    wg_oracle_set(t, &raw, 0, num(v));
    return raw;
  }
  raw = v.type == WG_VT_F32 || v.type == WG_VT_F64 ? (uint64_t)(int64_t)num(v) : word(v);
  return wg_type_size(t) == 8 ? raw : raw & 0xffffffffull;
}

/* The value of storage bits `raw` of t (the accumulator's form). */
static wg_value from_raw(uint64_t raw, wg_type t) {
  return value_at(t, &raw, 0);
}

/* One parameter as the value its declared type gives it. */
static wg_value param_value(wg_type t, wg_scalar p) {
  wg_value v;
  memset(&v, 0, sizeof v);
  v.type = wg_value_type_of(t);
  switch (t) {
  case WG_F32: v.as.f32 = p.f32; break;
  case WG_F64: v.as.f64 = p.f64; break;
  case WG_I32: v.as.i32 = p.i32; break;
  case WG_U32: v.as.u32 = p.u32; break;
  case WG_I64: v.as.i64 = p.i64; break;
  default: v.as.u64 = p.u64; break;
  }
  return v;
}

/* Is `got` (an output of type t) the value want, within tol (wg_expr's
 * tolerance) plus what storing it as t rounds? */
static bool value_matches(wg_type t, const void *got, wg_value want, double tol, char *why,
                          size_t size) {
  uint64_t g = 0;
  memcpy(&g, got, wg_type_size(t));
  const uint64_t w = raw_of(want, t);
  bool ok;
  if (!type_is_float(t)) {
    ok = g == w;
  } else {
    const double gv = wg_oracle_elem(t, got, 0), wv = num(want);
    if (isnan(wv)) ok = isnan(gv);
    else if (g == w) ok = true;
    else if (isinf(wv) || isinf(gv)) ok = false;
    else ok = tol > 0 && fabs(gv - wv) <= tol + wg_oracle_store_error(t, wv);
  }
  if (!ok)
    snprintf(why, size, "got 0x%" PRIx64 " (%.10g), want 0x%" PRIx64 " (%.10g, tolerance %.3g)",
             g, type_is_float(t) ? wg_oracle_elem(t, got, 0) : (double)g, w, num(want), tol);
  return ok;
}

/* What one spec needs for every group. */
typedef struct model {
  const wg_spec *spec;
  const void *const *inputs;
  wg_value params[WG_MAX_PARAMS];
  const wg_scalar *op_params; /* the operator's own (var's correction) */
  size_t op_nparams;
  wg_expr *map, *combine, *identity, *final;
  wg_type value_type; /* the accumulator's storage (wg_spec_value_type) */
  wg_type out_type;
} model;

/* The expected output of one prefix (reduce: the whole group). */
typedef struct expect {
  bool by_operator;  /* compare with `o` (a built-in operator, no final=) */
  wg_oracle o;
  wg_value want;     /* else with want, within tol */
  double tol;
  const char *cannot; /* why this output cannot be checked, or NULL */
} expect;

/* The map's values of the group's k elements from `base`. */
static const char *map_group(const model *m, uint64_t base, unsigned k, wg_value *vals,
                             double *tols) {
  const wg_spec *s = m->spec;
  const wg_value_type acc_vt = wg_value_type_of(m->value_type);
  for (unsigned j = 0; j < k; j++) {
    tols[j] = 0;
    if (!m->map) {
      vals[j] = value_at(s->type, m->inputs[0], base + j);
    } else {
      wg_expr_values vars;
      memset(&vars, 0, sizeof vars);
      for (int q = 0; q < (s->ninputs > 1 ? s->ninputs : 1); q++)
        vars.inputs[q] = value_at(q ? s->inputs[q] : s->type, m->inputs[q], base + j);
      vars.i = (int64_t)(base + j);
      vars.n = k;
      memcpy(vars.params, m->params, sizeof vars.params);
      if (wg_expr_eval_bounded(NULL, m->map, &vars, &vals[j], &tols[j]) != WG_OK)
        return "the map does not evaluate";
    }
    if (vals[j].type != acc_vt) /* bool maps count as i32, halves load as f32 */
      vals[j] = from_raw(raw_of(vals[j], m->value_type), m->value_type);
  }
  return NULL;
}

/* The combine= fold of vals[0..c) from identity=, in `reverse` order or not. */
static const char *user_fold(const model *m, const wg_value *vals, unsigned c, bool reverse,
                             wg_value *acc) {
  wg_expr_values vars;
  memset(&vars, 0, sizeof vars);
  double tol = 0;
  if (wg_expr_eval_bounded(NULL, m->identity, &vars, acc, &tol) != WG_OK)
    return "identity= does not evaluate";
  const wg_value_type acc_vt = wg_value_type_of(m->value_type);
  if (acc->type != acc_vt) *acc = from_raw(raw_of(*acc, m->value_type), m->value_type);
  for (unsigned q = 0; q < c; q++) {
    const unsigned j = reverse ? c - 1 - q : q;
    vars.a = reverse ? vals[j] : *acc;
    vars.b = reverse ? *acc : vals[j];
    wg_value next;
    if (wg_expr_eval_bounded(NULL, m->combine, &vars, &next, &tol) != WG_OK)
      return "combine= does not evaluate";
    if (tol != 0) return "combine= is not exact on the CPU (math functions)";
    *acc = next.type == acc_vt ? next : from_raw(raw_of(next, m->value_type), m->value_type);
  }
  return NULL;
}

/* The expected output of the prefix vals[0..c) of the group at `base` (k
 * elements). */
static expect expect_prefix(const model *m, uint64_t base, unsigned k, const wg_value *vals,
                            const double *tols, unsigned c) {
  expect x;
  memset(&x, 0, sizeof x);
  const wg_spec *s = m->spec;
  for (unsigned j = 0; j < c; j++)
    if (tols[j] != 0) {
      x.cannot = "the map is not exact on the CPU (math functions, a fusable multiply-add)";
      return x;
    }
  wg_value r;
  if (m->combine) {
    x.cannot = user_fold(m, vals, c, false, &r);
    if (x.cannot) return x;
    if (type_is_float(m->value_type)) {
      wg_value other;
      x.cannot = user_fold(m, vals, c, true, &other);
      if (!x.cannot && raw_of(other, m->value_type) != raw_of(r, m->value_type) &&
          !(isnan(num(r)) && isnan(num(other))))
        x.cannot = "combine= gives other bits in another order (a float sum?): the "
                   "oracle cannot know the kernel's";
      if (x.cannot) return x;
    }
  } else {
    uint64_t raw[MAX_WIDTH];
    for (unsigned j = 0; j < c; j++) raw[j] = raw_of(vals[j], m->value_type);
    /* raw[j] holds element j little-endian in its first bytes: repack. */
    unsigned char packed[MAX_WIDTH * 8];
    const size_t size = wg_type_size(m->value_type);
    for (unsigned j = 0; j < c; j++) memcpy(packed + j * size, &raw[j], size);
    wg_oracle_reduce(&x.o, m->value_type, s->op, packed, 0, c, m->op_params, m->op_nparams);
    if (s->op == WG_OP_ARGMIN || s->op == WG_OP_ARGMAX) x.o.bits += base;
    if (!m->final) {
      x.by_operator = true;
      return x;
    }
    if (s->op > WG_OP_XOR)
      x.cannot = "final= over this operator's accumulator is not modelled by the oracle";
    else if (!x.o.exact && x.o.bound != 0)
      x.cannot = "final= over a rounded float accumulator: the oracle cannot know its bits";
    if (x.cannot) return x;
    uint64_t bits = x.o.bits;
    if (!x.o.exact) wg_oracle_set(x.o.out_type, &bits, 0, x.o.want);
    r = from_raw(bits, m->value_type);
  }
  if (!m->final) {
    x.want = r;
    return x;
  }
  wg_expr_values vars;
  memset(&vars, 0, sizeof vars);
  vars.r = r;
  vars.n = k;
  memcpy(vars.params, m->params, sizeof vars.params);
  if (wg_expr_eval_bounded(NULL, m->final, &vars, &x.want, &x.tol) != WG_OK)
    x.cannot = "final= does not evaluate";
  else if (isinf(x.tol))
    x.cannot = "final= is not determined on the CPU (a comparison or cast the GPU's "
               "rounding could flip)";
  return x;
}

static void mismatch(wg_oracle_report *r, uint64_t index, uint64_t group, uint64_t base,
                     unsigned k, const char *why) {
  r->mismatches++;
  if (index < r->first_index) {
    r->first_index = index;
    snprintf(r->first, sizeof r->first, "output %" PRIu64 " (group %" PRIu64 ", elements %"
             PRIu64 "..%" PRIu64 "): %s", index, group, base, base + k - 1, why);
  }
}

static void check_output(const model *m, wg_oracle_report *report, const expect *x,
                         const void *out, uint64_t index, uint64_t group, uint64_t base,
                         unsigned k) {
  char why[240];
  report->checked++;
  if (x->cannot) {
    mismatch(report, index, group, base, k, x->cannot);
    return;
  }
  const size_t size = wg_type_size(m->out_type);
  const void *got = (const unsigned char *)out + index * size;
  const bool ok = x->by_operator ? wg_oracle_check(&x->o, got, why, sizeof why)
                                 : value_matches(m->out_type, got, x->want, x->tol, why,
                                                 sizeof why);
  if (!ok) mismatch(report, index, group, base, k, why);
}

void wg_oracle_warp_check_ex(wg_oracle_report *report, const wg_spec *spec,
                             const void *const *inputs, uint64_t n,
                             const wg_scalar *params, size_t nparams, const void *out,
                             uint64_t group_begin, uint64_t group_end) {
  if (!wg_oracle_spec_has_expr(spec) && nparams == 0) {
    wg_oracle_warp_check(report, spec, inputs[0], n, out, group_begin, group_end);
    return;
  }
  model m;
  memset(&m, 0, sizeof m);
  m.spec = spec;
  m.inputs = inputs;
  for (int k = 0; k < spec->nparams && (size_t)k < nparams; k++)
    m.params[k] = param_value(spec->params[k], params[k]);
  if (spec->nparams == 0) {
    m.op_params = params;
    m.op_nparams = nparams;
  }
  m.value_type = wg_spec_value_type(spec);
  m.out_type = wg_spec_out_type(spec);
  const char *cannot = NULL;
  if ((spec->map && wg_spec_expr_parse(NULL, &m.map, spec, WG_EXPR_MAP)) ||
      (spec->combine && wg_spec_expr_parse(NULL, &m.combine, spec, WG_EXPR_COMBINE)) ||
      (spec->identity && wg_spec_expr_parse(NULL, &m.identity, spec, WG_EXPR_IDENTITY)) ||
      (spec->final && wg_spec_expr_parse(NULL, &m.final, spec, WG_EXPR_FINAL)))
    cannot = "an expression does not parse";
  const uint64_t width = (uint64_t)spec->width;
  const uint64_t groups = wg_oracle_group_count(spec, n);
  if (group_end > groups) group_end = groups;
  for (uint64_t gi = group_begin; gi < group_end; gi++) {
    const uint64_t base = gi * width;
    const unsigned k = (unsigned)(n - base < width ? n - base : width);
    wg_value vals[MAX_WIDTH];
    double tols[MAX_WIDTH];
    const char *why = cannot ? cannot : map_group(&m, base, k, vals, tols);
    if (why) {
      mismatch(report, base, gi, base, k, why);
      continue;
    }
    expect x;
    switch (spec->primitive) {
    case WG_REDUCE:
      x = expect_prefix(&m, base, k, vals, tols, k);
      check_output(&m, report, &x, out, gi, gi, base, k);
      break;
    case WG_ALLREDUCE:
      x = expect_prefix(&m, base, k, vals, tols, k);
      for (unsigned j = 0; j < k; j++) check_output(&m, report, &x, out, base + j, gi, base, k);
      break;
    case WG_SCAN:
    case WG_EXSCAN:
      for (unsigned j = 0; j < k; j++) {
        x = expect_prefix(&m, base, k, vals, tols, spec->primitive == WG_SCAN ? j + 1 : j);
        check_output(&m, report, &x, out, base + j, gi, base, k);
      }
      break;
    default:
      mismatch(report, base, gi, base, k, "not an operator primitive");
      break;
    }
  }
  wg_expr_free(m.map);
  wg_expr_free(m.combine);
  wg_expr_free(m.identity);
  wg_expr_free(m.final);
}
