/*
 * run_hist.c - what `warpgen run` and `warpgen bench` need for histogram
 * specs beyond the other jobs (cmd_run.c calls in here): the parameters a
 * spec takes from --param (the range of float keys, default [0, 1]; a
 * map's declared params, each converted to its type), the keys (the
 * oracle's edge mix for run, uniform for bench) and the check against the
 * oracle (tests/oracle_hist.c), a map's bins evaluated on the CPU by the
 * expression evaluator (src/expr_eval.c).
 */
#include "cli.h"
#include "expr.h"
#include "oracle.h"

#include <stdlib.h>
#include <string.h>

/* The range of float keys when --param gives none. */
static const double default_lo = 0.0, default_hi = 1.0;

bool wg_cli_hist_range_form(const wg_spec *s) {
  return !s->map && wg_type_size(s->type) && s->type <= WG_F64;
}

size_t wg_cli_hist_params(const wg_spec *s, const wg_scalar *given, size_t ngiven,
                          wg_scalar out[WG_MAX_PARAMS]) {
  memset(out, 0, sizeof(wg_scalar) * WG_MAX_PARAMS);
  if (wg_cli_hist_range_form(s) && ngiven == 0) {
    out[0].f64 = default_lo;
    out[1].f64 = default_hi;
    return 2;
  }
  if (!s->map) { /* the range as given; a wrong count is the call's to report */
    memcpy(out, given, (ngiven < WG_MAX_PARAMS ? ngiven : WG_MAX_PARAMS) * sizeof *out);
    return ngiven;
  }
  /* --param values are decimals: each into the member of its declared type */
  for (size_t k = 0; k < ngiven && k < WG_MAX_PARAMS; k++) {
    const double v = given[k].f64;
    switch (k < (size_t)s->nparams ? s->params[k] : WG_F64) {
    case WG_F32: out[k].f32 = (float)v; break;
    case WG_I32: out[k].i32 = (int32_t)v; break;
    case WG_U32: out[k].u32 = (uint32_t)v; break;
    case WG_I64: out[k].i64 = (int64_t)v; break;
    case WG_U64: out[k].u64 = (uint64_t)v; break;
    default: out[k].f64 = v; break;
    }
  }
  return ngiven;
}

void wg_cli_hist_fill(const wg_spec *s, const wg_scalar *params, bool edges, void *in,
                      uint64_t n, uint64_t seed) {
  const bool range = wg_cli_hist_range_form(s);
  /* A map's keys: across about four times the bins, so some miss. */
  const int64_t span = s->map ? s->bins * 4 : s->bins;
  wg_oracle_hist_fill(s->type, span, range ? params[0].f64 : -1.0,
                      range ? params[1].f64 : (double)s->bins,
                      edges ? WG_ORACLE_HIST_EDGES : WG_ORACLE_HIST_UNIFORM, in, n, seed);
}

/* The bin a map gives key i, evaluated on the CPU; -1 outside. */
static int64_t map_bin(const wg_expr *e, const wg_spec *s, const wg_scalar *params,
                       const void *in, uint64_t i, uint64_t n) {
  wg_expr_values vars;
  memset(&vars, 0, sizeof vars);
  const wg_value_type xt = wg_value_type_of(s->type);
  const double x = wg_oracle_elem(s->type, in, i);
  uint64_t bits = 0;
  memcpy(&bits, (const unsigned char *)in + i * wg_type_size(s->type),
         wg_type_size(s->type));
  vars.inputs[0].type = xt;
  switch (xt) {
  case WG_VT_F32: vars.inputs[0].as.f32 = (float)x; break;
  case WG_VT_F64: vars.inputs[0].as.f64 = x; break;
  case WG_VT_I32: vars.inputs[0].as.i32 = (int32_t)(uint32_t)bits; break;
  case WG_VT_U32: vars.inputs[0].as.u32 = (uint32_t)bits; break;
  case WG_VT_I64: vars.inputs[0].as.i64 = (int64_t)bits; break;
  default: vars.inputs[0].as.u64 = bits; break;
  }
  vars.i = (int64_t)i;
  vars.n = (int64_t)n;
  for (int k = 0; k < s->nparams; k++) {
    wg_value *p = &vars.params[k];
    p->type = wg_value_type_of(s->params[k]);
    switch (s->params[k]) {
    case WG_F32: p->as.f32 = params[k].f32; break;
    case WG_I32: p->as.i32 = params[k].i32; break;
    case WG_U32: p->as.u32 = params[k].u32; break;
    case WG_I64: p->as.i64 = params[k].i64; break;
    case WG_U64: p->as.u64 = params[k].u64; break;
    default: p->as.f64 = params[k].f64; break;
    }
  }
  wg_value v;
  if (wg_expr_eval(NULL, e, &vars, &v) != WG_OK) return -1;
  switch (v.type) {
  case WG_VT_BOOL: return v.as.b;
  case WG_VT_I32: return v.as.i32;
  case WG_VT_U32: return v.as.u32;
  case WG_VT_I64: return v.as.i64;
  case WG_VT_U64: return v.as.u64 > INT64_MAX ? -1 : (int64_t)v.as.u64;
  default: return -1;
  }
}

int wg_cli_hist_check(wg_oracle_report *report, const wg_spec *s, const wg_scalar *params,
                      const void *in, uint64_t n, const void *out) {
  wg_oracle_report_init(report);
  uint64_t *want = calloc((size_t)s->bins, sizeof *want);
  if (!want) return WG_ENOMEM;
  if (s->map) {
    wg_expr *e = NULL;
    const int rc = wg_spec_expr_parse(NULL, &e, s, WG_EXPR_MAP);
    if (rc) {
      free(want);
      return rc;
    }
    for (uint64_t i = 0; i < n; i++)
      wg_oracle_hist_add(want, s->bins, map_bin(e, s, params, in, i, n));
    wg_expr_free(e);
  } else {
    const bool range = wg_cli_hist_range_form(s);
    wg_oracle_histogram(want, s->type, s->bins, range ? params[0].f64 : 0,
                        range ? params[1].f64 : 0, in, n);
  }
  wg_oracle_hist_check(report, s->counts, s->bins, want, out);
  free(want);
  return WG_OK;
}
