/*
 * codegen.c - spec -> CUDA source: the one place that knows which template
 * text serves which (primitive, variant).
 *
 * A kernel is the skeleton warp_kernel.cu around a body template; the
 * element type and the operator come in through prelude.cuh, filled from
 * the rows of tables.c. The snippets below are the few lines in which two
 * variants of one body differ (which shuffle, how the result is finished).
 */
#include "expr.h"
#include "family.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wg_kernel_name(char *buf, size_t size, const wg_spec *spec) {
  if (!buf && size) return WG_EINVAL; /* snprintf's rule */
  int rc = wg_spec_validate(NULL, spec); /* WG_EINVAL for NULL, else WG_ESPEC */
  if (rc) return rc;
  wg_spec s = wg_spec_concrete(spec, 0);
  wg_buf name = {0};
  wg_buf_printf(&name, "wg_%s_%s", wg_primitives[s.primitive].name, wg_types[s.type].name);
  for (char *c = name.data; c && *c; c++)
    if (*c == '-') *c = '_';
  if (s.op != WG_OP_NONE) wg_buf_printf(&name, "_%s", wg_operators[s.op].name);
  const wg_family *fam = wg_family_of(s.primitive);
  if (fam->name_suffix) fam->name_suffix(&name, &s);
  if (wg_spec_has_expr(&s)) {
    /* Expressions: a hash of the canonical spec text (FNV-1a, 32 bits). */
    wg_spec any_arch = s; /* one name whichever arch it compiles for */
    any_arch.arch = 0;
    const int len = wg_spec_format(NULL, 0, &any_arch);
    char *text = len > 0 ? malloc((size_t)len + 1) : NULL;
    if (text) {
      wg_spec_format(text, (size_t)len + 1, &any_arch);
      uint32_t h = 2166136261u;
      for (const char *c = text; *c; c++) h = (h ^ (unsigned char)*c) * 16777619u;
      wg_buf_printf(&name, "_e%08x", (unsigned)h);
    } else {
      name.failed = true;
    }
    free(text);
  }
  if (name.failed) {
    wg_buf_free(&name);
    return WG_ENOMEM;
  }
  if (size) snprintf(buf, size, "%s", name.data);
  const int n = (int)name.len;
  wg_buf_free(&name);
  return n;
}

/* Does the accumulator of spec need a struct (fields shuffled one by one)? */
static bool acc_is_struct(const wg_spec *s) {
  return !s->combine && wg_operators[s->op].acc[0].name != NULL;
}

/* The bytes a thread's slot of the smem variant holds: any scalar or an
 * element's bits in 8; the struct accumulators, (count, mean, M2) of f64
 * the widest, in 32 (the templates assert it). */
static unsigned smem_slot(const wg_spec *s) { return acc_is_struct(s) ? 32u : 8u; }

static size_t warp_shared_bytes(const wg_spec *concrete, unsigned block_size) {
  return concrete->variant == WG_VARIANT_SMEM ? (size_t)block_size * smem_slot(concrete)
                                              : 0;
}

bool wg_codegen_warp_takes_params(const wg_spec *s) {
  return wg_primitives[s->primitive].is_warp && wg_primitives[s->primitive].takes_operator &&
         (wg_spec_has_expr(s) || (!s->combine && wg_operators[s->op].nparams > 0));
}

size_t wg_codegen_shared_bytes(const wg_spec *concrete, unsigned block_size) {
  const wg_family *fam = wg_family_of(concrete->primitive);
  return fam->shared_bytes ? fam->shared_bytes(concrete, block_size) : 0;
}

/* Fills an operator text's own keys (${value}, ${uacc}, ${lowest}, ...)
 * from the value type v. */
static int operator_text(wg_context *ctx, char **out, const char *what,
                         const char *expr, const wg_type_info *v) {
  const wg_template_var vars[] = {
    {"value", v->acc},
    {"uacc", v->uacc ? v->uacc : v->acc},
    {"lowest", v->lowest},
    {"highest", v->highest},
  };
  wg_buf b = {0};
  int rc = wg_template_fill(ctx, &b, what, expr ? expr : "", vars, WG_COUNT_OF(vars));
  if (!rc && b.failed) rc = wg_fail(ctx, WG_ENOMEM, "out of memory");
  if (rc) {
    wg_buf_free(&b);
    return rc;
  }
  *out = b.data ? b.data : wg_strdup("");
  return *out ? WG_OK : wg_fail(ctx, WG_ENOMEM, "out of memory");
}

/* The accumulator's declaration and its field-by-field shuffle and load:
 * a scalar typedef, or a struct whose fields move one by one (a shuffle
 * carries at most 64 bits). */
static void render_acc(wg_buf *decl, wg_buf *shfl, wg_buf *ldcg,
                       const wg_operator_info *o, const char *value) {
  if (!o->acc[0].name) {
    const char *type = o->acc[0].type ? o->acc[0].type : "${value}";
    wg_buf_printf(decl, "typedef %s wg_acc; /* what lanes combine */", type);
    wg_buf_puts(shfl, "  r = __shfl_down_sync(0xffffffffu, v, offset, width);\n");
    wg_buf_puts(ldcg, "  r = __ldcg(p);\n");
    return;
  }
  (void)value;
  wg_buf_puts(decl, "struct wg_acc { /* what lanes combine */\n");
  for (int f = 0; f < WG_ACC_MAX_FIELDS && o->acc[f].name; f++) {
    wg_buf_printf(decl, "  %s %s;\n", o->acc[f].type, o->acc[f].name);
    wg_buf_printf(shfl, "  r.%s = __shfl_down_sync(0xffffffffu, v.%s, offset, width);\n",
                  o->acc[f].name, o->acc[f].name);
    wg_buf_printf(ldcg, "  r.%s = __ldcg(&p->%s);\n", o->acc[f].name, o->acc[f].name);
  }
  wg_buf_puts(decl, "};");
}

void wg_codegen_expr_params(wg_buf *out, const wg_spec *s, unsigned uses) {
  for (int k = 0; k < s->nparams; k++)
    if (uses & WG_EXPR_USES_PARAM(k))
      wg_buf_printf(out, "  const %s wg_p%d = wg_pp.p[%d].%s;\n",
                    wg_vt_ctype(wg_value_type_of(s->params[k])), k, k,
                    wg_types[s->params[k]].name);
}

/* One user expression as a device function `name` returning `ret`, its
 * parameters `params` (CUDA text declaring wg_x, wg_a...), the p<k> it
 * reads loaded from `wg_pp` when `with_params`. */
static int user_function(wg_context *ctx, wg_buf *defs, const wg_spec *s,
                         wg_expr_role role, const char *ret, const char *name,
                         const char *params, bool with_params) {
  wg_expr *e = NULL;
  int rc = wg_spec_expr_parse(ctx, &e, s, role);
  if (rc) return rc;
  wg_buf_printf(defs, "static __device__ __forceinline__ %s %s(%s) {\n", ret, name, params);
  if (with_params) wg_codegen_expr_params(defs, s, wg_expr_uses(e));
  wg_buf_printf(defs, "  return (%s)", ret);
  rc = wg_expr_render(e, defs);
  wg_buf_puts(defs, ";\n}\n");
  wg_expr_free(e);
  return rc || defs->failed ? wg_fail(ctx, WG_ENOMEM, "out of memory") : WG_OK;
}

/* The device functions of a spec's expressions (wg_user_map...) after the
 * operator's own definitions, and the texts of the model that call them. */
static int user_model(wg_context *ctx, wg_buf *defs, const char *op_defs,
                      const wg_spec *s, const wg_type_info *v, const wg_type_info *o_t,
                      char **texts, int identity, int combine, int final) {
  wg_buf_puts(defs, op_defs);
  wg_buf_puts(defs, wg_expr_helpers());
  const char *x = wg_vt_ctype(wg_value_type_of(s->type));
  char params[256];
  int rc = WG_OK;
  const bool elementwise = wg_spec_elementwise(s);
  if (elementwise) {
    /* The element kernel's inputs, each with its own load to the type
     * expressions compute in. */
    static const char *const names = "xyzw";
    wg_buf_puts(defs, "struct wg_inputs { /* the input arrays, read at one offset */\n"
                      "  const wg_elem *x;\n");
    for (int k = 1; k < WG_MAX_INPUTS; k++) {
      if (k < s->ninputs)
        wg_buf_printf(defs, "  const %s *%c;\n", wg_types[s->inputs[k]].ctype, names[k]);
      else
        wg_buf_printf(defs, "  const void *%c; /* not an input */\n", names[k]);
    }
    wg_buf_puts(defs, "};\n");
    int used = snprintf(params, sizeof params, "%s wg_x", x);
    for (int k = 1; k < s->ninputs; k++) {
      const wg_type_info *in = &wg_types[s->inputs[k]];
      wg_buf_printf(defs, "static __device__ __forceinline__ %s wg_load_%c(%s x) "
                    "{ return %s; }\n", in->acc, names[k], in->ctype, in->load);
      used += snprintf(params + used, sizeof params - (size_t)used, ", %s wg_%c",
                       wg_vt_ctype(wg_value_type_of(s->inputs[k])), names[k]);
    }
    snprintf(params + used, sizeof params - (size_t)used,
             ", long long wg_i, long long wg_n, const wg_params &wg_pp");
  } else {
    snprintf(params, sizeof params, "%s wg_x, long long wg_i", x);
  }
  if (s->map)
    rc = user_function(ctx, defs, s, WG_EXPR_MAP, v->acc, "wg_user_map", params,
                       elementwise);
  struct { const char *text; int slot; } calls[3] = {{NULL, 0}};
  if (!rc && s->combine) {
    rc = user_function(ctx, defs, s, WG_EXPR_IDENTITY, "wg_acc", "wg_user_identity", "",
                       false);
    if (!rc)
      rc = user_function(ctx, defs, s, WG_EXPR_COMBINE, "wg_acc", "wg_user_combine",
                         "wg_acc wg_a, wg_acc wg_b", false);
    calls[0].text = "wg_user_identity()", calls[0].slot = identity;
    calls[1].text = "wg_user_combine(a, b)", calls[1].slot = combine;
  }
  if (!rc && s->final) {
    rc = user_function(ctx, defs, s, WG_EXPR_FINAL, o_t->acc, "wg_user_final",
                       "wg_acc wg_r, long long wg_n, const wg_params &wg_pp", true);
    calls[2].text = "wg_user_final(r, (long long)n, p)", calls[2].slot = final;
  }
  for (int c = 0; c < 3 && !rc; c++) {
    if (!calls[c].text) continue;
    free(texts[calls[c].slot]);
    texts[calls[c].slot] = wg_strdup(calls[c].text);
    if (!texts[calls[c].slot]) rc = wg_fail(ctx, WG_ENOMEM, "out of memory");
  }
  return rc;
}

int wg_codegen_lookback(wg_context *ctx, wg_buf *out, wg_lookback_knobs knobs) {
  char text[4][16];
  const unsigned values[4] = {knobs.k, knobs.first_sleep, knobs.sleep, knobs.spins};
  for (int i = 0; i < 4; i++) snprintf(text[i], sizeof text[i], "%u", values[i]);
  const wg_template_var vars[] = {
    {"lb_k", text[0]}, {"lb_first_sleep", text[1]}, {"lb_sleep", text[2]}, {"lb_spins", text[3]},
  };
  return wg_template_render(ctx, out, "lookback.cuh", vars, WG_COUNT_OF(vars));
}

int wg_codegen_prelude(wg_context *ctx, wg_buf *out, const wg_spec *s) {
  const wg_type_info *t = &wg_types[s->type];
  const wg_type_info *v = &wg_types[wg_spec_value_type(s)];
  const wg_type_info *o_t = &wg_types[wg_spec_out_type(s)];
  const wg_operator_info *o = &wg_operators[s->op];
  /* The model's texts in the order of texts[]: filled from the value type. */
  enum { ACC, SHFL, LDCG, DEFS, IDENTITY, COMBINE, MAP, FINAL, FOLD, NTEXTS };
  wg_buf raw[3] = {{0}};
  render_acc(&raw[ACC], &raw[SHFL], &raw[LDCG], o, v->acc);
  const char *sources[NTEXTS] = {
    [ACC] = raw[ACC].data, [SHFL] = raw[SHFL].data, [LDCG] = raw[LDCG].data,
    [DEFS] = o->defs, [IDENTITY] = o->identity,
    [COMBINE] = v->is_float && o->combine_float ? o->combine_float : o->combine,
    [MAP] = o->map, [FINAL] = o->final, [FOLD] = o->fold,
  };
  static const char *const what[NTEXTS] = {
    "accumulator", "accumulator shuffle", "accumulator load", "operator definitions",
    "operator identity", "operator combine", "operator map", "operator final",
    "operator fold",
  };
  char *texts[NTEXTS] = {0};
  int rc = raw[ACC].failed || raw[SHFL].failed || raw[LDCG].failed
               ? wg_fail(ctx, WG_ENOMEM, "out of memory") : WG_OK;
  for (int k = 0; k < NTEXTS && !rc; k++)
    rc = operator_text(ctx, &texts[k], what[k], sources[k], v);
  /* A spec's expressions replace texts of the operator's model. */
  wg_buf user_defs = {0};
  if (!rc && wg_spec_has_expr(s)) {
    rc = user_model(ctx, &user_defs, texts[DEFS], s, v, o_t, texts, IDENTITY, COMBINE,
                    FINAL);
    if (!rc) {
      free(texts[DEFS]);
      texts[DEFS] = user_defs.data; /* freed with the texts */
      user_defs.data = NULL;
    }
  }
  wg_buf_free(&user_defs);
  /* The map's value from the element (and, in the element kernel, the
   * other inputs at the same offset, n and the parameters). */
  const bool elementwise = wg_spec_has_expr(s) && wg_spec_elementwise(s);
  char map_value[512];
  int used = snprintf(map_value, sizeof map_value, s->map ? "(%s)wg_user_map(wg_load(x)"
                      : "(%s)wg_load(x)", v->acc);
  for (int k = 1; s->map && elementwise && k < s->ninputs; k++)
    used += snprintf(map_value + used, sizeof map_value - (size_t)used,
                     ", wg_load_%c(wg_in.%c[wg_at])", "xyzw"[k], "xyzw"[k]);
  if (s->map)
    snprintf(map_value + used, sizeof map_value - (size_t)used, "%s",
             elementwise ? ", i, wg_n, wg_pp)" : ", i)");
  const char *map_params = elementwise ? ", const wg_inputs &wg_in, unsigned long long "
                                         "wg_at, long long wg_n, const wg_params &wg_pp"
                                       : "";
  bool halves = t->size == 2;
  for (int k = 1; elementwise && k < s->ninputs; k++)
    halves = halves || wg_types[s->inputs[k]].size == 2;
  wg_buf conv = {0};
  if (!rc && halves)
    rc = wg_template_render(ctx, &conv, "half_conversions.cuh", NULL, 0);
  const char *conversions = conv.data ? conv.data : "";
  /* The operator's fold of a lane's values, where it has one and its own
   * combine is the spec's (a user combine= has none); the element kernels
   * (several inputs) fold as they map. */
  wg_buf fold = {0};
  if (o->fold && !s->combine && !elementwise)
    wg_buf_printf(&fold, "#define WG_FOLD_VALUES 1\n"
                  "typedef %s wg_fold_value; /* a mapped value */\n"
                  "static __device__ __forceinline__ wg_fold_value wg_value(wg_elem x, long long i) {\n"
                  "  (void)i;\n"
                  "  return %s;\n"
                  "}\n"
                  "template <int N>\n"
                  "static __device__ __forceinline__ wg_acc wg_fold_values(const wg_fold_value (&v)[N]) {\n"
                  "%s}\n", v->acc, map_value, texts[FOLD]);
  else
    wg_buf_puts(&fold, "#define WG_FOLD_VALUES 0\n");
  if (!rc && fold.failed) rc = wg_fail(ctx, WG_ENOMEM, "out of memory");
  char max_params[16];
  snprintf(max_params, sizeof max_params, "%d", WG_MAX_PARAMS);
  if (!rc) {
    const wg_template_var vars[] = {
      {"type", t->name},          {"op", o->name},
      {"ctype", t->ctype},        {"num", t->acc},
      {"bits", t->bits_type},     {"conversions", conversions},
      {"load", t->load},          {"store", t->store},
      {"to_bits", t->to_bits},    {"from_bits", t->from_bits},
      {"nonzero", t->nonzero},
      {"acc_decl", texts[ACC]},   {"out_ctype", o_t->ctype},
      {"max_params", max_params}, {"defs", texts[DEFS]},
      {"identity", texts[IDENTITY]}, {"combine", texts[COMBINE]},
      {"value", v->acc},          {"map", texts[MAP]},
      {"result", o_t->acc},       {"final", texts[FINAL]},
      {"out_store", o_t->store},  {"shfl", texts[SHFL]},
      {"ldcg", texts[LDCG]},      {"map_value", map_value},
      {"map_params", map_params}, {"fold", fold.data},
    };
    rc = wg_template_render(ctx, out, "prelude.cuh", vars, WG_COUNT_OF(vars));
  }
  wg_buf_free(&fold);
  for (int k = 0; k < NTEXTS; k++) free(texts[k]);
  for (int k = 0; k < 3; k++) wg_buf_free(&raw[k]);
  wg_buf_free(&conv);
  return rc;
}

/* --- warp primitives ------------------------------------------------------ */

static const char *const summaries[WG_PRIMITIVE_COUNT] = {
  [WG_REDUCE] = "warp reduce; the group's first lane writes the result",
  [WG_ALLREDUCE] = "warp all-reduce; every lane writes the result",
  [WG_SCAN] = "inclusive warp scan",
  [WG_EXSCAN] = "exclusive warp scan; the first lane gets the identity",
  [WG_BROADCAST] = "warp broadcast of one lane's element",
  [WG_BALLOT] = "warp ballot of 'element != 0', one mask word per group",
  [WG_ANY] = "warp vote: is any element of the group non-zero",
  [WG_ALL] = "warp vote: is every element of the group non-zero",
  [WG_MATCH] = "warp match: the lanes holding the same bits as this one",
};

static const char *const variant_summaries[WG_VARIANT_COUNT] = {
  [WG_VARIANT_DOWN] = "through __shfl_down_sync",
  [WG_VARIANT_XOR] = "through __shfl_xor_sync (a butterfly)",
  [WG_VARIANT_UP] = "through __shfl_up_sync",
  [WG_VARIANT_IDX] = "through __shfl_sync with computed lanes",
  [WG_VARIANT_REDUX] = "through __reduce_*_sync (redux.sync)",
  [WG_VARIANT_SMEM] = "through a shared-memory tree (the baseline)",
  [WG_VARIANT_VOTE] = "through the warp vote instructions",
};

/* Elements a lane loads at once in the vec layout, and how many such loads
 * it keeps in flight: 16 bytes each, 64 bytes a lane a trip. match keeps
 * one element a lane (match.any compares lanes) and 8 loads in flight. */
static int vec_elements(const wg_spec *s) {
  return s->primitive == WG_MATCH ? 1 : (int)(16u / wg_types[s->type].size);
}
static int vec_unroll(const wg_spec *s) { return s->primitive == WG_MATCH ? 8 : 4; }

unsigned wg_codegen_elements_per_thread(const wg_spec *concrete) {
  if (concrete->layout != WG_LAYOUT_VEC || !wg_primitives[concrete->primitive].is_warp)
    return 1;
  return (unsigned)(vec_elements(concrete) * vec_unroll(concrete));
}

/* Which body template and which lines differ, for one concrete spec. The
 * exchange across a group's lanes is written once for both layouts, in
 * v, offset, gmask, glane and WG_LANES (the lanes a group spans). */
typedef struct body_plan {
  const char *template_name;
  const char *shuffle;  /* one step of the exchange loop */
  const char *redux;    /* instead of a loop: one redux.sync */
  const char *finish;   /* lines after the loop */
  const char *from_lane0; /* allreduce down: the shuffle after the loop */
  const char *shift;    /* scans, vec layout: v from the lane before */
  const char *store;    /* how the result is written */
  const char *exchange; /* broadcast, vote: the whole exchange */
  const char *vote;     /* any/all */
  const char *past_end; /* any/all: the predicate of missing lanes */
  const char *fold;     /* any/all: the predicate folded in a thread */
} body_plan;

static const char *const store_group =
    "    if (glane == 0 && valid) out[i / WG_WIDTH] = WG_FINAL(v, i);\n";
static const char *const store_each = "    if (valid) out[i] = WG_FINAL(v, i);\n";
static const char *const vec_store_group =
    "#pragma unroll\n"
    "      for (int k = 0; k < WG_VEC / WG_SUB; k++)\n"
    "        if ((WG_LANES == 1 || glane == 0) && WG_VALID(k * WG_SUB))\n"
    "          out[(e + k * WG_SUB) / WG_WIDTH] = WG_FINAL(p[k], e + k * WG_SUB);\n";
static const char *const vec_store_each =
    "      wg_out y[WG_VEC];\n"
    "#pragma unroll\n"
    "      for (int j = 0; j < WG_VEC; j++) y[j] = WG_FINAL(p[j / WG_SUB], e + j);\n"
    "      wg_put(out, e, y, vector, full, n);\n";
static const char *const vec_store_scan =
    "#pragma unroll\n"
    "        for (int j = 0; j < WG_SUB; j++)\n"
    "          y[k * WG_SUB + j] = WG_FINAL(a[j], e + k * WG_SUB + j);\n";
static const char *const vec_store_exscan =
    "        y[k * WG_SUB] = WG_FINAL(lead, e + k * WG_SUB);\n"
    "#pragma unroll\n"
    "        for (int j = 1; j < WG_SUB; j++)\n"
    "          y[k * WG_SUB + j] = WG_FINAL(a[j - 1], e + k * WG_SUB + j);\n";

static body_plan plan_for(const wg_spec *s) {
  body_plan b = {0};
  const bool all = s->primitive == WG_ALLREDUCE, ex = s->primitive == WG_EXSCAN;
  const bool vec = s->layout == WG_LAYOUT_VEC;
  switch (s->primitive) {
  case WG_REDUCE:
  case WG_ALLREDUCE:
    b.template_name = vec ? "warp_vec_reduce.cu" : "warp_reduce.cu";
    b.store = vec ? (all ? vec_store_each : vec_store_group) : all ? store_each : store_group;
    switch (s->variant) {
    case WG_VARIANT_DOWN:
      b.shuffle = "__shfl_down_sync(gmask, v, offset, WG_LANES)";
      if (all) b.from_lane0 = "__shfl_sync(gmask, v, 0, WG_LANES)";
      break;
    case WG_VARIANT_XOR: b.shuffle = "__shfl_xor_sync(gmask, v, offset, WG_LANES)"; break;
    case WG_VARIANT_IDX: b.shuffle = "__shfl_sync(gmask, v, glane ^ offset, WG_LANES)"; break;
    case WG_VARIANT_REDUX: b.redux = wg_operators[s->op].redux; break;
    default:
      b.template_name = "warp_reduce_smem.cu";
      if (all)
        b.finish = "    if (glane == 0) s[0] = v;\n    __syncwarp(gmask);\n"
                   "    v = s[-(int)glane];\n    __syncwarp(gmask);\n";
      break;
    }
    break;
  case WG_SCAN:
  case WG_EXSCAN:
    b.template_name = vec ? "warp_vec_scan.cu" : "warp_scan.cu";
    b.store = ex ? vec_store_exscan : vec_store_scan;
    if (s->variant == WG_VARIANT_SMEM) {
      b.template_name = "warp_scan_smem.cu";
      if (ex)
        b.finish = "    s[0] = v;\n    __syncwarp(gmask);\n"
                   "    v = glane ? s[-1] : wg_identity();\n    __syncwarp(gmask);\n";
    } else if (s->variant == WG_VARIANT_UP) {
      b.shuffle = "__shfl_up_sync(gmask, v, offset, WG_LANES)";
      b.shift = "__shfl_up_sync(gmask, v, 1, WG_LANES)";
    } else {
      b.shuffle = "__shfl_sync(gmask, v, (glane - offset) & (WG_LANES - 1u), WG_LANES)";
      b.shift = "__shfl_sync(gmask, v, (glane - 1u) & (WG_LANES - 1u), WG_LANES)";
    }
    break;
  case WG_BROADCAST:
    b.template_name = vec ? "warp_vec_broadcast.cu" : "warp_broadcast.cu";
    b.exchange = s->variant == WG_VARIANT_SMEM
                     ? "    wg_bits *s = (wg_bits *)wg_smem + threadIdx.x;\n"
                       "    s[0] = b;\n    __syncwarp(gmask);\n"
                       "    b = s[WG_LANE - (int)glane];\n    __syncwarp(gmask);\n"
                 : vec ? "        if (WG_LANES > 1) b = __shfl_sync(gmask, b, WG_LANE / WG_VEC, "
                         "WG_LANES);\n"
                       : "    b = __shfl_sync(gmask, b, WG_LANE, WG_LANES);\n";
    break;
  case WG_BALLOT: b.template_name = vec ? "warp_vec_ballot.cu" : "warp_ballot.cu"; break;
  case WG_ANY:
  case WG_ALL:
    b.template_name = vec ? "warp_vec_vote.cu" : "warp_anyall.cu";
    b.vote = s->primitive == WG_ANY ? "__any_sync" : "__all_sync";
    b.past_end = s->primitive == WG_ANY ? "false" : "true";
    b.fold = s->primitive == WG_ANY ? "||" : "&&";
    break;
  default: b.template_name = vec ? "warp_vec_match.cu" : "warp_match.cu"; break;
  }
  return b;
}

/* `o` (declared by the caller) = `shuffle` of the accumulator v, field by
 * field (a shuffle moves at most 64 bits): each line is the shuffle with
 * its operand ", v, " made ", v.FIELD, ". */
static void shuffle_fields(wg_buf *out, const char *shuffle, const wg_operator_info *o,
                           const char *in) {
  const char *operand = strstr(shuffle, ", v, ");
  for (int f = 0; operand && f < WG_ACC_MAX_FIELDS && o->acc[f].name; f++) {
    wg_buf_printf(out, "%s  o.%s = ", in, o->acc[f].name);
    wg_buf_append(out, shuffle, (size_t)(operand - shuffle));
    wg_buf_printf(out, ", v.%s, %s;\n", o->acc[f].name, operand + strlen(", v, "));
  }
}

/* The exchange of a reduction or scan across WG_LANES lanes, indented by
 * `in`: a shuffle loop (or one redux.sync), then the finish. */
static void exchange_text(wg_buf *out, const body_plan *b, const wg_spec *s,
                          const char *in) {
  const bool each = acc_is_struct(s);
  const bool scan = s->primitive == WG_SCAN || s->primitive == WG_EXSCAN;
  if (b->redux) {
    wg_buf_printf(out, "%sv = (wg_acc)%s(gmask, (%s)v); /* one redux.sync */\n", in,
                  b->redux,
                  !(wg_operators[s->op].types & (1u << WG_F32)) ? "unsigned" /* bitwise */ : wg_types[s->type].acc);
  } else if (scan && b->shuffle) {
    wg_buf_printf(out,
                  "#pragma unroll\n"
                  "%sfor (unsigned offset = 1; offset < WG_LANES; offset *= 2) {\n"
                  "%s  const wg_acc before = %s;\n"
                  "%s  if (glane >= offset) v = wg_combine(before, v);\n"
                  "%s}\n", in, in, b->shuffle, in, in);
    /* The lane form's exscan: shift the inclusive result by one lane. */
    if (s->primitive == WG_EXSCAN && s->layout == WG_LAYOUT_LANE)
      wg_buf_printf(out, "%s{\n%s  const wg_acc before = %s;\n"
                    "%s  v = glane ? before : wg_identity();\n%s}\n",
                    in, in, b->shift, in, in);
  } else if (b->shuffle && !each) {
    wg_buf_printf(out,
                  "#pragma unroll\n"
                  "%sfor (unsigned offset = WG_LANES / 2; offset > 0; offset /= 2)\n"
                  "%s  v = wg_combine(v, %s);\n", in, in, b->shuffle);
    if (b->from_lane0) wg_buf_printf(out, "%sv = %s; /* from lane 0 */\n", in, b->from_lane0);
  } else if (b->shuffle) {
    const wg_operator_info *o = &wg_operators[s->op];
    wg_buf_printf(out,
                  "#pragma unroll\n"
                  "%sfor (unsigned offset = WG_LANES / 2; offset > 0; offset /= 2) {\n"
                  "%s  wg_acc o; /* the other lane's accumulator */\n", in, in);
    shuffle_fields(out, b->shuffle, o, in);
    wg_buf_printf(out, "%s  v = wg_combine(v, o);\n%s}\n", in, in);
    if (b->from_lane0) {
      wg_buf_printf(out, "%s{ /* from lane 0 */\n%s  wg_acc o;\n", in, in);
      shuffle_fields(out, b->from_lane0, o, in);
      wg_buf_printf(out, "%s  v = o;\n%s}\n", in, in);
    }
  } /* smem: the template holds its own exchange */
}

/* The lines an operator primitive's kernel adds after the prelude: the
 * group's count, how an element becomes an accumulator (WG_MAP, with the
 * element's global index) and how a result is written (WG_FINAL, with the
 * group's count); and
 * the kernel's extra arguments (the parameters and inputs y, z, w of the
 * _ex ABI) or, in the plain ABI, the parameters' absence. */
static void operator_lines(wg_buf *pre, wg_buf *abi, wg_buf *locals, const wg_spec *s) {
  const bool elementwise = wg_spec_has_expr(s) && wg_spec_elementwise(s);
  wg_buf_puts(pre, "/* Elements of the group whose first element is `first` (< WG_WIDTH "
                   "at the end). */\n"
                   "#define WG_GROUP_COUNT(first) ((n) - (first) < (unsigned long long)WG_WIDTH "
                   "? (n) - (first) : (unsigned long long)WG_WIDTH)\n"
                   "/* Element x at global index `at` as an accumulator. */\n");
  if (elementwise)
    wg_buf_puts(pre, "#define WG_MAP(x, at) wg_map((x), (long long)(at), wg_in, (at), "
                     "(long long)WG_GROUP_COUNT((at) & ~(WG_WIDTH - 1ull)), params)\n");
  else
    wg_buf_puts(pre, "#define WG_MAP(x, at) wg_map((x), (long long)(at))\n");
  wg_buf_puts(pre, "/* The output of accumulator v of the group holding element `at`. */\n"
                   "#define WG_FINAL(v, at) wg_finalize((v), "
                   "WG_GROUP_COUNT((at) & ~(WG_WIDTH - 1ull)), params)\n");
  if (!wg_codegen_warp_takes_params(s)) {
    wg_buf_puts(locals, "  const wg_params params = {}; /* the plain ABI: no step reads "
                        "parameters */\n");
    return;
  }
  wg_buf_puts(pre, "#define WG_EX_ABI 1 /* the kernel takes parameters and inputs y, z, w */\n");
  wg_buf_puts(abi, ",\n    const wg_params params, const void *wg_y, const void *wg_z, "
                   "const void *wg_w");
  if (elementwise)
    wg_buf_puts(locals, "  wg_inputs wg_in; /* every input, read at the element's index */\n"
                        "  wg_in.x = in;\n"
                        "  wg_in.y = (decltype(wg_in.y))wg_y;\n"
                        "  wg_in.z = (decltype(wg_in.z))wg_z;\n"
                        "  wg_in.w = (decltype(wg_in.w))wg_w;\n");
  else
    wg_buf_puts(locals, "  (void)wg_y; (void)wg_z; (void)wg_w; /* only x is read */\n");
}

static int codegen_warp(wg_context *ctx, wg_buf *out, const wg_spec *s) {
  const bool vec = s->layout == WG_LAYOUT_VEC;
  const bool takes_op = wg_primitives[s->primitive].takes_operator;
  body_plan plan = plan_for(s);
  char kernel[128], width[16], group_mask[96], width_mask[32],
      lane_def[64], summary[256], vec_def[16], unroll[16], shared[192];
  const int spec_len = wg_spec_format(NULL, 0, s);
  char *spec_text = spec_len > 0 ? malloc((size_t)spec_len + 1) : NULL;
  if (!spec_text) return wg_fail(ctx, WG_ENOMEM, "out of memory");
  wg_spec_format(spec_text, (size_t)spec_len + 1, s);
  wg_kernel_name(kernel, sizeof kernel, s);
  snprintf(width, sizeof width, "%d", s->width);
  snprintf(group_mask, sizeof group_mask, s->width == 32 ? "0xffffffffu"
           : "((1u << WG_WIDTH) - 1u) << (lane & ~(WG_WIDTH - 1u))");
  snprintf(width_mask, sizeof width_mask, "0x%xu",
           (unsigned)((1ull << s->width) - 1u)); /* width may be 32 */
  snprintf(lane_def, sizeof lane_def, "%d", s->lane);
  snprintf(summary, sizeof summary, "%s, %s.", summaries[s->primitive],
           variant_summaries[s->variant]);
  snprintf(vec_def, sizeof vec_def, "%d", vec_elements(s));
  snprintf(unroll, sizeof unroll, "%d", vec_unroll(s));
  shared[0] = '\0';
  if (s->variant == WG_VARIANT_SMEM)
    snprintf(shared, sizeof shared,
             "  extern __shared__ unsigned long long wg_smem[]; /* %u bytes a thread */\n%s",
             smem_slot(s), !takes_op ? "" : acc_is_struct(s)
             ? "  static_assert(sizeof(wg_acc) <= 32, \"a thread's shared slot\");\n" : "");
  const char *out_type = s->primitive == WG_BALLOT || s->primitive == WG_MATCH
                             ? "unsigned int"
                         : s->primitive == WG_ANY || s->primitive == WG_ALL ? "int"
                         : takes_op ? "wg_out" : "wg_elem";

  wg_buf body = {0}, prelude = {0}, exchange = {0}, pre = {0}, abi = {0}, locals = {0};
  if (plan.exchange)
    wg_buf_puts(&exchange, plan.exchange);
  else
    exchange_text(&exchange, &plan, s, vec ? "        " : "    ");
  int rc = exchange.failed ? wg_fail(ctx, WG_ENOMEM, "out of memory") : WG_OK;
  if (!rc) rc = wg_codegen_prelude(ctx, &prelude, s);
  if (!rc) {
    const wg_template_var body_vars[] = {
      {"exchange", exchange.data ? exchange.data : ""},
      {"finish", plan.finish ? plan.finish : ""},
      {"shift", plan.shift ? plan.shift : ""},
      {"store", plan.store ? plan.store : ""},
      {"vote", plan.vote ? plan.vote : ""},
      {"past_end", plan.past_end ? plan.past_end : ""},
      {"fold", plan.fold ? plan.fold : ""},
      {"width_mask", width_mask},
    };
    rc = wg_template_render(ctx, &body, plan.template_name, body_vars,
                            WG_COUNT_OF(body_vars));
  }
  if (!rc) {
    wg_buf_puts(&pre, prelude.data);
    if (s->primitive == WG_BROADCAST)
      wg_buf_printf(&pre, "#define WG_LANE %s /* the source lane */\n", lane_def);
    if (takes_op) operator_lines(&pre, &abi, &locals, s);
    const wg_template_var vars[] = {
      {"spec", spec_text},
      {"version", WG_VERSION_STRING},
      {"summary", summary},
      {"prelude", pre.data},
      {"width", width},
      {"vec", vec_def},
      {"unroll", unroll},
      {"kernel", kernel},
      {"out_type", out_type},
      {"abi", abi.data ? abi.data : ""},
      {"abi_locals", locals.data ? locals.data : ""},
      {"shared", shared},
      {"group_mask", group_mask},
      {"body", body.data},
    };
    rc = pre.failed || abi.failed || locals.failed
             ? wg_fail(ctx, WG_ENOMEM, "out of memory")
             : wg_template_render(ctx, out, vec ? "warp_vec_kernel.cu" : "warp_kernel.cu",
                                  vars, WG_COUNT_OF(vars));
  }
  free(spec_text);
  wg_buf_free(&pre);
  wg_buf_free(&abi);
  wg_buf_free(&locals);
  wg_buf_free(&exchange);
  wg_buf_free(&body);
  wg_buf_free(&prelude);
  return rc;
}

int wg_codegen(wg_context *ctx, char **out, const wg_spec *concrete) {
  *out = NULL;
  wg_buf b = {0};
  int rc = wg_family_of(concrete->primitive)->source(ctx, &b, concrete);
  if (!rc && b.failed) rc = wg_fail(ctx, WG_ENOMEM, "out of memory generating source");
  if (rc) {
    wg_buf_free(&b);
    return rc;
  }
  *out = b.data;
  return WG_OK;
}

/* --- the warp family ------------------------------------------------------ */

static int warp_validate(wg_context *ctx, const wg_spec *s, int arch) {
  (void)arch; /* redux's arch is checked with the variants, in spec.c */
  if (s->width != 2 && s->width != 4 && s->width != 8 && s->width != 16 && s->width != 32)
    return wg_fail(ctx, WG_ESPEC, "width: %d is not allowed; a logical warp has 2, 4, "
                   "8, 16 or 32 lanes", s->width);
  if (s->primitive == WG_BROADCAST) {
    if (s->lane < 0 || s->lane >= s->width)
      return wg_fail(ctx, WG_ESPEC, "lane: %d is outside the group; broadcast takes "
                     "a source lane from 0 to %d", s->lane, s->width - 1);
  } else if (s->lane != 0) {
    return wg_fail(ctx, WG_ESPEC, "lane: only broadcast takes a lane (got lane=%d "
                   "for '%s')", s->lane, wg_primitives[s->primitive].name);
  }
  return WG_OK;
}

static void warp_format_keys(wg_buf *out, const wg_spec *s) {
  wg_buf_printf(out, " width=%d variant=%s", s->width, wg_variant_names[s->variant]);
  if (s->layout != WG_LAYOUT_VEC)
    wg_buf_printf(out, " layout=%s", wg_layout_names[s->layout]);
  if (s->primitive == WG_BROADCAST) wg_buf_printf(out, " lane=%d", s->lane);
}

static void warp_name_suffix(wg_buf *out, const wg_spec *s) {
  wg_buf_printf(out, "_w%d_%s%s", s->width, wg_variant_names[s->variant],
                s->layout == WG_LAYOUT_VEC ? "_vec" : "");
  if (s->primitive == WG_BROADCAST) wg_buf_printf(out, "_l%d", s->lane);
}

const wg_family wg_family_warp = {
  .name = "warp primitive",
  .keys = WG_KEY_WIDTH | WG_KEY_LAYOUT | WG_KEY_LANE,
  .validate = warp_validate,
  .format_keys = warp_format_keys,
  .name_suffix = warp_name_suffix,
  .source = codegen_warp,
  .shared_bytes = warp_shared_bytes,
};
