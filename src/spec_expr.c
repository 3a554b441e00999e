/*
 * spec_expr.c - the expression keys of the reductions' specs: map=,
 * combine=, identity=, final=, inputs= and params=. Their text form
 * (quoted, escaped), their validation (each expression parsed and
 * type-checked in its scope by expr.c), their canonical form and the types
 * they give the reduction. spec.c calls in here; codegen and kernel.c read
 * the answers.
 *
 * The canonical form of an expression is the text expr.c prints from its
 * tree, so equal expressions share spec text, kernel and cache entry, and
 * nothing the user typed reaches generated source except through a tree.
 *
 * Parsing is the costly part of a launch, so what a valid spec resolves to
 * (canonical form, types, kernel family) is worked out once per context
 * and looked up after that (wg_spec_facts_get, at the end).
 */
#include "expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The four expressions of a spec, in text order, with their roles. */
typedef struct expr_key {
  const char *name;
  wg_expr_role role;
  size_t offset; /* of the const char * in wg_spec */
} expr_key;

static const expr_key expr_keys[] = {
  {"map", WG_EXPR_MAP, offsetof(wg_spec, map)},
  {"combine", WG_EXPR_COMBINE, offsetof(wg_spec, combine)},
  {"identity", WG_EXPR_IDENTITY, offsetof(wg_spec, identity)},
  {"final", WG_EXPR_FINAL, offsetof(wg_spec, final)},
};

/* compact keeps its predicate in the map slot and writes it pred=: one
 * slot, one parse, one canonical form; only the key's name and the role
 * (any result type, non-zero keeps) differ. */
static bool map_is_predicate(const wg_spec *s) { return s->primitive == WG_COMPACT; }
static const char *key_name(const wg_spec *s, int k) {
  return k == 0 && map_is_predicate(s) ? "pred" : expr_keys[k].name;
}

static const char *expr_text(const wg_spec *s, int k) {
  return *(const char *const *)((const char *)s + expr_keys[k].offset);
}
static void set_expr_text(wg_spec *s, int k, const char *text) {
  *(const char **)((char *)s + expr_keys[k].offset) = text;
}

static int ninputs_of(const wg_spec *s) { return s->ninputs < 1 ? 1 : s->ninputs; }

bool wg_spec_has_expr(const wg_spec *s) {
  for (int k = 0; k < (int)WG_COUNT_OF(expr_keys); k++)
    if (expr_text(s, k)) return true;
  return ninputs_of(s) > 1 || s->nparams > 0;
}

/* The element type of input k. */
static wg_type input_type(const wg_spec *s, int k) { return k ? s->inputs[k] : s->type; }

/* The storage type that holds an expression value: bool counts as i32. */
static wg_type type_of_vt(wg_value_type vt) {
  static const wg_type types[WG_VT_COUNT] = {
    [WG_VT_BOOL] = WG_I32, [WG_VT_I32] = WG_I32, [WG_VT_U32] = WG_U32,
    [WG_VT_I64] = WG_I64,  [WG_VT_U64] = WG_U64, [WG_VT_F32] = WG_F32,
    [WG_VT_F64] = WG_F64,
  };
  return types[vt];
}

/* The scope of role in s; the accumulator is the value type (see
 * wg_spec_value_type), which the caller passes. */
static wg_expr_scope scope_of(const wg_spec *s, wg_expr_role role, wg_type value) {
  wg_expr_scope sc = {0};
  sc.role = role;
  sc.ninputs = ninputs_of(s);
  for (int k = 0; k < sc.ninputs; k++) sc.inputs[k] = wg_value_type_of(input_type(s, k));
  sc.nparams = s->nparams;
  for (int k = 0; k < s->nparams; k++) sc.params[k] = wg_value_type_of(s->params[k]);
  sc.acc = wg_value_type_of(value);
  return sc;
}

/* The type map gives, or the input's when there is no map (or it fails). */
static wg_type map_type(const wg_spec *s) {
  if (!s->map) return s->type;
  wg_expr *e = NULL;
  const wg_expr_scope sc = scope_of(s, WG_EXPR_MAP, s->type);
  if (wg_expr_parse(NULL, &e, s->map, strlen(s->map), &sc)) return s->type;
  const wg_type t = type_of_vt(wg_expr_type(e));
  wg_expr_free(e);
  return t;
}

wg_type wg_spec_value_type(const wg_spec *s) {
  const wg_type t = map_type(s);
  return s->combine ? t : wg_operator_value_type(s->op, t);
}

wg_type wg_spec_out_type(const wg_spec *s) {
  if (s->final) {
    wg_expr *e = NULL;
    const wg_expr_scope sc = scope_of(s, WG_EXPR_FINAL, wg_spec_value_type(s));
    if (wg_expr_parse(NULL, &e, s->final, strlen(s->final), &sc) == WG_OK) {
      const wg_type t = type_of_vt(wg_expr_type(e));
      wg_expr_free(e);
      return t;
    }
  }
  return s->combine ? map_type(s) : wg_operator_out_type(s->op, map_type(s));
}

int wg_spec_expr_parse(wg_context *ctx, wg_expr **out, const wg_spec *s, wg_expr_role role) {
  int k = 0;
  while (expr_keys[k].role != role) k++;
  const char *text = expr_text(s, k);
  if (role == WG_EXPR_MAP && map_is_predicate(s)) role = WG_EXPR_PREDICATE;
  const wg_expr_scope sc = scope_of(s, role, wg_spec_value_type(s));
  return wg_expr_parse(ctx, out, text, strlen(text), &sc);
}

/* What the kernels can bind: the map sees every name of its scope (the
 * element kernel, when it reads more than x and i), the final step r, n
 * and the parameters; combine and identity run inside the folds, which
 * have no parameters. */
static int check_uses(wg_context *ctx, const wg_expr *e, wg_expr_role role) {
  const unsigned params = ((1u << WG_MAX_PARAMS) - 1u) * WG_EXPR_USES_PARAM(0);
  if ((role == WG_EXPR_COMBINE || role == WG_EXPR_IDENTITY) && (wg_expr_uses(e) & params))
    return wg_fail(ctx, WG_ESPEC, "%s: parameters are not supported there yet (map= and "
                   "final= may read them)", wg_expr_role_name(role));
  return WG_OK;
}

bool wg_spec_elementwise(const wg_spec *s) {
  if (ninputs_of(s) > 1) return true;
  if (!s->map) return false;
  wg_expr *e = NULL;
  const wg_expr_scope sc = scope_of(s, WG_EXPR_MAP, s->type);
  if (wg_expr_parse(NULL, &e, s->map, strlen(s->map), &sc)) return false;
  const unsigned uses = wg_expr_uses(e);
  wg_expr_free(e);
  return (uses & ~(WG_EXPR_USES_INPUT(0) | WG_EXPR_USES_I)) != 0;
}

int wg_spec_expr_validate(wg_context *ctx, const wg_spec *s) {
  if (!wg_spec_has_expr(s)) return WG_OK;
  const char *pn = wg_primitives[s->primitive].name;
  if (!wg_primitives[s->primitive].takes_expr)
    return wg_fail(ctx, WG_ESPEC, "'%s' takes no expressions, inputs or params: only "
                   "reduce-array, reduce-rows and the warp reduce, allreduce, scan and "
                   "exscan do", pn);
  if ((s->primitive == WG_SCAN || s->primitive == WG_EXSCAN) && s->final)
    return wg_fail(ctx, WG_ESPEC, "final: '%s' writes every prefix as the accumulator "
                   "holds it; final= is for the reductions", pn);
  if (s->ninputs > WG_MAX_INPUTS)
    return wg_fail(ctx, WG_ESPEC, "inputs: %d inputs; at most %d (x y z w)", s->ninputs,
                   WG_MAX_INPUTS);
  for (int k = 1; k < ninputs_of(s); k++)
    if ((unsigned)s->inputs[k] >= WG_TYPE_COUNT)
      return wg_fail(ctx, WG_ESPEC, "inputs: type %d of input %d is out of range",
                     (int)s->inputs[k], k);
  if (s->nparams < 0 || s->nparams > WG_MAX_PARAMS)
    return wg_fail(ctx, WG_ESPEC, "params: %d parameters; 0 to %d (p0..p%d)", s->nparams,
                   WG_MAX_PARAMS, WG_MAX_PARAMS - 1);
  for (int k = 0; k < s->nparams; k++)
    if ((unsigned)s->params[k] >= WG_TYPE_COUNT || wg_types[s->params[k]].size == 2)
      return wg_fail(ctx, WG_ESPEC, "params: p%d must be f32, f64, i32, u32, i64 or u64",
                     k);
  if (s->nparams > 0 && !s->combine && wg_operators[s->op].nparams > 0)
    return wg_fail(ctx, WG_ESPEC, "params: '%s' has a parameter of its own (the "
                   "correction) in the kernel's parameter slots; it takes no params=",
                   wg_operators[s->op].name);
  if (!s->combine != !s->identity)
    return wg_fail(ctx, WG_ESPEC, "%s: combine= and identity= come together (a new "
                   "accumulator needs both)", s->combine ? "identity" : "combine");
  if (s->combine && s->op != WG_OP_NONE)
    return wg_fail(ctx, WG_ESPEC, "operator: combine= replaces the operator; leave "
                   "'%s' out", wg_operators[s->op].name);
  if (s->final && !s->combine) {
    const wg_operator_info *o = &wg_operators[s->op];
    if (o->acc[0].name || o->acc[0].type)
      return wg_fail(ctx, WG_ESPEC, "final: '%s' keeps a composite accumulator; final= "
                     "takes a scalar one (sum, prod, min, max, and, or, xor, mean, the "
                     "norms) or combine=", o->name);
  }
  /* Each expression in its scope, map first: it sets the value type. */
  for (int k = 0; k < (int)WG_COUNT_OF(expr_keys); k++) {
    if (!expr_text(s, k)) continue;
    wg_expr *e = NULL;
    int rc = wg_spec_expr_parse(ctx, &e, s, expr_keys[k].role);
    if (!rc) rc = check_uses(ctx, e, expr_keys[k].role);
    wg_expr_free(e);
    if (rc) return rc;
  }
  if (s->map && !s->combine && !map_is_predicate(s) &&
      !wg_operator_accepts(s->op, map_type(s)))
    return wg_fail(ctx, WG_ESPEC, "map: '%s' does not take the map's values, of type "
                   "%s", wg_operators[s->op].name, wg_types[map_type(s)].name);
  return WG_OK;
}

/* --- text form ------------------------------------------------------------ */

/* Appends a type list "f32,i64". */
static void types_text(wg_buf *out, const wg_type *types, int first, int count) {
  for (int k = first; k < count; k++)
    wg_buf_printf(out, "%s%s", k > first ? "," : "", wg_types[types[k]].name);
}

int wg_spec_expr_format(wg_buf *out, const wg_spec *s) {
  for (int k = 0; k < (int)WG_COUNT_OF(expr_keys); k++) {
    if (!expr_text(s, k)) continue;
    wg_expr *e = NULL;
    int rc = wg_spec_expr_parse(NULL, &e, s, expr_keys[k].role);
    if (rc) return rc;
    /* Canonical text holds no '"' or '\\': no escapes are needed. */
    wg_buf_printf(out, " %s=\"", key_name(s, k));
    rc = wg_expr_format(e, out);
    wg_buf_puts(out, "\"");
    wg_expr_free(e);
    if (rc) return rc;
  }
  if (ninputs_of(s) > 1) {
    wg_buf_printf(out, " inputs=%s", wg_types[s->type].name);
    wg_buf_puts(out, ",");
    types_text(out, s->inputs, 1, ninputs_of(s));
  }
  if (s->nparams > 0) {
    wg_buf_puts(out, " params=");
    types_text(out, s->params, 0, s->nparams);
  }
  return out->failed ? WG_ENOMEM : WG_OK;
}

int wg_spec_canonical(wg_context *ctx, wg_spec *out, const wg_spec *s) {
  *out = *s;
  if (out->ninputs < 1) out->ninputs = 1;
  /* Unused slots do not tell specs apart. */
  out->inputs[0] = s->type;
  for (int k = out->ninputs; k < WG_MAX_INPUTS; k++) out->inputs[k] = WG_F32;
  for (int k = out->nparams < 0 ? WG_MAX_PARAMS : out->nparams; k < WG_MAX_PARAMS; k++)
    out->params[k] = WG_F32;
  for (int k = 0; k < (int)WG_COUNT_OF(expr_keys); k++) {
    if (!expr_text(s, k)) continue;
    wg_expr *e = NULL;
    wg_buf b = {0};
    int rc = wg_spec_expr_parse(ctx, &e, s, expr_keys[k].role);
    if (!rc) rc = wg_expr_format(e, &b) ? wg_fail(ctx, WG_ENOMEM, "out of memory") : WG_OK;
    const char *text = rc ? NULL : wg_intern(ctx, b.data ? b.data : "", b.len);
    if (!rc && !text) rc = WG_ENOMEM;
    wg_expr_free(e);
    wg_buf_free(&b);
    if (rc) return rc;
    set_expr_text(out, k, text);
  }
  return WG_OK;
}

/* A type list into types[first..]; *count gets how many. */
static int parse_types(wg_context *ctx, const char *key, const char *val, size_t vlen,
                       wg_type *types, int most, int *count) {
  int n = 0;
  const char *p = val, *end = val + vlen;
  while (p <= end) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *stop = comma ? comma : end;
    int found = -1;
    for (int t = 0; t < WG_TYPE_COUNT; t++)
      if (strlen(wg_types[t].name) == (size_t)(stop - p) &&
          memcmp(wg_types[t].name, p, (size_t)(stop - p)) == 0)
        found = t;
    if (found < 0)
      return wg_fail(ctx, WG_ESPEC, "%s: '%s' is not a type (write e.g. %s=f32,i64)", key,
                     wg_escape((char[64]){0}, 64, p, (size_t)(stop - p), false), key);
    if (n == most)
      return wg_fail(ctx, WG_ESPEC, "%s: more than %d types", key, most);
    types[n++] = (wg_type)found;
    p = stop + 1;
  }
  *count = n;
  return WG_OK;
}

int wg_spec_expr_key(wg_context *ctx, wg_spec *s, const char *key, size_t klen,
                     const char *val, size_t vlen) {
  if (klen == 4 && memcmp(key, "pred", 4) == 0 && !map_is_predicate(s))
    return wg_fail(ctx, WG_ESPEC, "pred: only compact takes a predicate (the "
                   "reductions take map=)");
  for (int k = 0; k < (int)WG_COUNT_OF(expr_keys); k++) {
    const char *name = key_name(s, k);
    if (strlen(name) != klen || memcmp(name, key, klen) != 0) {
      if (k == 0 && map_is_predicate(s) && klen == 3 && memcmp(key, "map", 3) == 0)
        return wg_fail(ctx, WG_ESPEC, "map: compact takes its expression as pred=, "
                       "e.g. pred=\"x > p0\"");
      continue;
    }
    if (vlen < 2 || val[0] != '"' || val[vlen - 1] != '"')
      return wg_fail(ctx, WG_ESPEC, "%s: write the expression in double quotes, e.g. "
                     "%s=\"x * x\"", name, name);
    /* Undo the escapes: \" and \\ only. */
    char *text = malloc(vlen);
    if (!text) return wg_fail(ctx, WG_ENOMEM, "out of memory");
    size_t n = 0;
    for (size_t j = 1; j + 1 < vlen; j++) {
      if (val[j] == '\\') {
        j++;
        if (j + 1 >= vlen || (val[j] != '"' && val[j] != '\\')) {
          free(text);
          return wg_fail(ctx, WG_ESPEC, "%s: at %zu: a backslash escapes only '\"' "
                         "and '\\\\'", name, j - 2);
        }
      }
      text[n++] = val[j];
    }
    const char *interned = wg_intern(ctx, text, n);
    free(text);
    if (!interned) return WG_ENOMEM;
    set_expr_text(s, k, interned);
    return WG_OK;
  }
  wg_type types[WG_MAX_PARAMS];
  int count = 0, rc;
  if (klen == 6 && memcmp(key, "inputs", 6) == 0) {
    if ((rc = parse_types(ctx, "inputs", val, vlen, types, WG_MAX_INPUTS, &count)))
      return rc;
    s->ninputs = count;
    memcpy(s->inputs, types, (size_t)count * sizeof *types);
    return WG_OK;
  }
  if (klen == 6 && memcmp(key, "params", 6) == 0) {
    if ((rc = parse_types(ctx, "params", val, vlen, types, WG_MAX_PARAMS, &count)))
      return rc;
    s->nparams = count;
    memcpy(s->params, types, (size_t)count * sizeof *types);
    return WG_OK;
  }
  return -1; /* not an expression key */
}

/* --- facts, worked out once per context --------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

uint64_t wg_spec_hash(const wg_spec *s) {
  uint64_t h = 0x8a5cd789635d2dffull;
  const int64_t fields[] = {s->version, s->primitive, s->type, s->op,  s->width,
                            s->variant, s->arch,      s->lane, s->cols, s->layout,
                            s->ninputs, s->nparams,   s->bins, s->counts,
                            s->deterministic};
  for (size_t f = 0; f < WG_COUNT_OF(fields); f++) h = mix(h, (uint64_t)fields[f]);
  for (int k = 0; k < (int)WG_COUNT_OF(expr_keys); k++) {
    h = mix(h, (uint64_t)k); /* map="x" and final="x" differ */
    for (const char *c = expr_text(s, k); c && *c; c++) h = mix(h, (unsigned char)*c);
  }
  for (int k = 0; k < WG_MAX_INPUTS; k++) h = mix(h, (uint64_t)s->inputs[k]);
  for (int k = 0; k < WG_MAX_PARAMS; k++) h = mix(h, (uint64_t)s->params[k]);
  return h ^ (h >> 29);
}

static bool same_text(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

bool wg_spec_same(const wg_spec *a, const wg_spec *b) {
  if (a->version != b->version || a->primitive != b->primitive || a->type != b->type ||
      a->op != b->op || a->width != b->width || a->variant != b->variant ||
      a->arch != b->arch || a->lane != b->lane || a->cols != b->cols ||
      a->layout != b->layout || a->ninputs != b->ninputs || a->nparams != b->nparams ||
      a->bins != b->bins || a->counts != b->counts || a->deterministic != b->deterministic ||
      memcmp(a->inputs, b->inputs, sizeof a->inputs) != 0 ||
      memcmp(a->params, b->params, sizeof a->params) != 0)
    return false;
  for (int k = 0; k < (int)WG_COUNT_OF(expr_keys); k++)
    if (!same_text(expr_text(a, k), expr_text(b, k))) return false;
  return true;
}

/* The memo: chains in a power-of-two bucket array, kept at most one entry a
 * bucket. Only valid specs enter, so it grows with the specs a program
 * really uses. */
typedef struct memo_entry {
  struct memo_entry *next;
  uint64_t hash; /* of key */
  wg_spec key;   /* the spec as asked, its texts interned in the context */
  wg_spec_facts facts;
} memo_entry;

struct wg_spec_memo {
  memo_entry **buckets;
  size_t capacity, count;
};

void wg_spec_memo_free(wg_context *ctx) {
  struct wg_spec_memo *m = ctx->spec_memo;
  if (!m) return;
  for (size_t b = 0; b < m->capacity; b++)
    for (memo_entry *e = m->buckets[b], *next; e; e = next) {
      next = e->next;
      free(e);
    }
  free(m->buckets);
  free(m);
  ctx->spec_memo = NULL;
}

/* Room for one more entry; false when out of memory (the caller then just
 * does not remember). */
static bool memo_reserve(wg_context *ctx) {
  struct wg_spec_memo *m = ctx->spec_memo;
  if (!m && !(m = ctx->spec_memo = calloc(1, sizeof *m))) return false;
  if (m->count < m->capacity) return true;
  const size_t capacity = m->capacity ? m->capacity * 2 : 16;
  memo_entry **buckets = calloc(capacity, sizeof *buckets);
  if (!buckets) return false;
  for (size_t b = 0; b < m->capacity; b++)
    for (memo_entry *e = m->buckets[b], *next; e; e = next) {
      next = e->next;
      e->next = buckets[e->hash & (capacity - 1)];
      buckets[e->hash & (capacity - 1)] = e;
    }
  free(m->buckets);
  m->buckets = buckets;
  m->capacity = capacity;
  return true;
}

/* The facts of a valid spec, worked out from scratch. */
static int facts_of(wg_context *ctx, const wg_spec *s, wg_spec_facts *out) {
  int rc = wg_spec_canonical(ctx, &out->canonical, s);
  if (rc) return rc;
  out->hash = wg_spec_hash(&out->canonical);
  out->value_type = wg_spec_value_type(s);
  out->out_type = wg_spec_out_type(s);
  out->elementwise = wg_spec_has_expr(s) && wg_spec_elementwise(s);
  return WG_OK;
}

int wg_spec_facts_get(wg_context *ctx, const wg_spec *spec, wg_spec_facts *out) {
  if (!ctx || !spec || !out) return wg_fail(ctx, WG_EINVAL, "wg_spec_facts_get: NULL argument");
  /* Without expressions validating is a few compares and nothing parses:
   * nothing is worth remembering. */
  if (!wg_spec_has_expr(spec)) {
    const int rc = wg_spec_validate(ctx, spec);
    return rc ? rc : facts_of(ctx, spec, out);
  }
  const uint64_t hash = wg_spec_hash(spec);
  const struct wg_spec_memo *m = ctx->spec_memo;
  if (m && m->capacity)
    for (const memo_entry *e = m->buckets[hash & (m->capacity - 1)]; e; e = e->next)
      if (e->hash == hash && wg_spec_same(&e->key, spec)) {
        *out = e->facts;
        return WG_OK;
      }
  int rc = wg_spec_validate(ctx, spec);
  if (!rc) rc = facts_of(ctx, spec, out);
  if (rc) return rc;
  /* Remember it under the spec as asked, its texts copied: the caller's
   * may be freed or reused after the call. Out of memory here only means
   * the next call works the facts out again. */
  memo_entry *e = memo_reserve(ctx) ? malloc(sizeof *e) : NULL;
  if (!e) return WG_OK;
  e->key = *spec;
  for (int k = 0; k < (int)WG_COUNT_OF(expr_keys); k++) {
    const char *text = expr_text(spec, k);
    const char *copy = text ? wg_intern(ctx, text, strlen(text)) : NULL;
    if (text && !copy) {
      free(e);
      wg_errmsg_clear(ctx);
      return WG_OK;
    }
    set_expr_text(&e->key, k, copy);
  }
  e->hash = hash;
  e->facts = *out;
  struct wg_spec_memo *w = ctx->spec_memo;
  e->next = w->buckets[hash & (w->capacity - 1)];
  w->buckets[hash & (w->capacity - 1)] = e;
  w->count++;
  return WG_OK;
}
