/*
 * spec.c - the spec: its text form, its validation and the list of every
 * valid spec, and the choice that `auto` stands for.
 *
 * The text form is "PRIMITIVE TYPE [OPERATOR] key=value...". Formatting
 * always writes every key that matters for the primitive, in one order, so
 * that format(parse(format(s))) == format(s) and an interpreter can use the
 * text as a dictionary key.
 */
#include "family.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wg_spec_init(wg_spec *spec) {
  if (spec) *spec = (wg_spec)WG_SPEC_INIT;
}

/* Text quoted for a message: never raw bytes (see wg_escape). */
#define QUOTED_N(text, len) wg_escape((char[160]){0}, 160, (text), (len), false)
#define QUOTED(text) QUOTED_N((text), strlen(text))

/* --- names ---------------------------------------------------------------- */

/* The index of `name` among `count` names, or -1. */
static int name_index(const char *name, size_t len, const char *(*get)(int),
                      int count) {
  for (int i = 0; i < count; i++) {
    const char *n = get(i);
    if (n && strlen(n) == len && memcmp(n, name, len) == 0) return i;
  }
  return -1;
}

static const char *prim_at(int i) { return wg_primitive_name((wg_primitive)i); }
static const char *type_at(int i) { return wg_type_name((wg_type)i); }
static const char *op_at(int i) { return i ? wg_operator_name((wg_operator)i) : NULL; }
static const char *variant_at(int i) { return wg_variant_name((wg_variant)i); }
static const char *layout_at(int i) { return wg_layout_name((wg_layout)i); }

/* "a, b, c" from a name table, for messages. */
static void names_text(char *buf, size_t size, const char *(*get)(int), int count,
                       unsigned only) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < count && used < size; i++) {
    const char *n = get(i);
    if (!n || !(only & (1u << i))) continue;
    used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", n);
  }
}

/* --- validation ----------------------------------------------------------- */

static bool variant_is_redux_able(const wg_spec *s, int arch) {
  return (s->type == WG_I32 || s->type == WG_U32) && wg_operators[s->op].redux &&
         arch >= 80 && !wg_spec_has_expr(s);
}

/* The warp scans take the operators whose prefixes mean something. */
static bool is_scan(wg_primitive p) { return p == WG_SCAN || p == WG_EXSCAN; }

/* The primitives whose family takes `key`, as "a, b" for a message. */
static void takers_text(char *buf, size_t size, unsigned key) {
  size_t n = 0;
  buf[0] = '\0';
  for (int p = 0; p < WG_PRIMITIVE_COUNT && n < size; p++)
    if (wg_primitives[p].family->keys & key)
      n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", wg_primitives[p].name);
}

/* Every key the family does not take must keep its WG_SPEC_INIT value. */
static int check_unused_keys(wg_context *ctx, const wg_spec *s, const wg_family *fam) {
  static const wg_spec init = WG_SPEC_INIT;
  const struct {
    unsigned key;
    const char *name;
    bool set;
    long long value;
  } keys[] = {
    {WG_KEY_WIDTH, "width", s->width != init.width, s->width},
    {WG_KEY_LANE, "lane", s->lane != init.lane, s->lane},
    {WG_KEY_COLS, "cols", s->cols != init.cols, (long long)s->cols},
    {WG_KEY_BINS, "bins", s->bins != init.bins, (long long)s->bins},
    {WG_KEY_COUNTS, "counts", s->counts != init.counts, s->counts},
    {WG_KEY_DETERMINISTIC, "deterministic", s->deterministic != init.deterministic,
     s->deterministic},
  };
  const char *pn = wg_primitives[s->primitive].name;
  char takers[160];
  if ((unsigned)s->counts >= WG_TYPE_COUNT)
    return wg_fail(ctx, WG_ESPEC, "counts: type %d is out of range", (int)s->counts);
  for (size_t k = 0; k < WG_COUNT_OF(keys); k++) {
    if (!keys[k].set || (fam->keys & keys[k].key)) continue;
    takers_text(takers, sizeof takers, keys[k].key);
    if (keys[k].key == WG_KEY_WIDTH)
      return wg_fail(ctx, WG_ESPEC, "width: '%s' chooses its own lanes; leave width "
                     "out (got width=%lld)", pn, keys[k].value);
    return wg_fail(ctx, WG_ESPEC, "%s: only %s take%s %s (got %s=%lld for '%s')",
                   keys[k].name, takers, strchr(takers, ',') ? "" : "s", keys[k].name,
                   keys[k].name, keys[k].value, pn);
  }
  if (s->layout != init.layout && !(fam->keys & WG_KEY_LAYOUT))
    return wg_fail(ctx, WG_ESPEC, "layout: '%s' chooses its own loads; leave layout "
                   "out (got layout=%s)", pn, wg_layout_names[s->layout]);
  return WG_OK;
}

/* Validates with `arch` as the effective architecture (0: not yet known). */
static int validate(wg_context *ctx, const wg_spec *s, int arch) {
  char allowed[256];
  int rc;
  if (!s) return wg_fail(ctx, WG_EINVAL, "spec is NULL");
  if (s->version != WG_SPEC_VERSION)
    return wg_fail(ctx, WG_ESPEC, "spec version %d is not supported (expected %d): "
                   "initialise it with WG_SPEC_INIT or wg_spec_init()",
                   s->version, WG_SPEC_VERSION);
  if ((unsigned)s->primitive >= WG_PRIMITIVE_COUNT)
    return wg_fail(ctx, WG_ESPEC, "primitive %d is out of range", (int)s->primitive);
  if ((unsigned)s->type >= WG_TYPE_COUNT)
    return wg_fail(ctx, WG_ESPEC, "type %d is out of range", (int)s->type);
  if ((unsigned)s->op >= WG_OPERATOR_COUNT)
    return wg_fail(ctx, WG_ESPEC, "operator %d is out of range", (int)s->op);
  if ((unsigned)s->variant >= WG_VARIANT_COUNT)
    return wg_fail(ctx, WG_ESPEC, "variant %d is out of range", (int)s->variant);
  if ((unsigned)s->layout >= WG_LAYOUT_COUNT)
    return wg_fail(ctx, WG_ESPEC, "layout %d is out of range", (int)s->layout);

  const wg_primitive_info *p = &wg_primitives[s->primitive];
  const wg_type_info *t = &wg_types[s->type];
  const char *pn = p->name, *tn = t->name, *on = wg_operators[s->op].name;

  if (p->takes_operator && s->op == WG_OP_NONE && !s->combine) {
    unsigned ops = 0;
    for (int o = 0; o < WG_OPERATOR_COUNT; o++)
      if (!p->is_warp || (wg_operators[o].warp && (!is_scan(s->primitive) ||
                                                   wg_operators[o].scan)))
        ops |= 1u << o;
    names_text(allowed, sizeof allowed, op_at, WG_OPERATOR_COUNT, ops);
    return wg_fail(ctx, WG_ESPEC, "operator: '%s' needs an operator, one of %s", pn,
                   allowed);
  }
  if (!p->takes_operator && s->op != WG_OP_NONE)
    return wg_fail(ctx, WG_ESPEC, "operator: '%s' takes no operator (got '%s')", pn, on);
  /* A map or combine decides the types the operator sees (spec_expr.c). */
  if (p->takes_operator && !s->map && !s->combine && !wg_operator_accepts(s->op, s->type)) {
    names_text(allowed, sizeof allowed, type_at, WG_TYPE_COUNT, wg_operators[s->op].types);
    const char *note = wg_operators[s->op].types_note;
    return wg_fail(ctx, WG_ESPEC, "operator: '%s' %s (%s), not %s", on,
                   note ? note : "takes the types", allowed, tn);
  }
  if (p->is_warp && p->takes_operator && !wg_operators[s->op].warp)
    return wg_fail(ctx, WG_ESPEC, "operator: '%s' exists for reduce-array and "
                   "reduce-rows, not for the warp primitive '%s'", on, pn);
  if (is_scan(s->primitive) && !s->combine && !wg_operators[s->op].scan)
    return wg_fail(ctx, WG_ESPEC, "operator: '%s' has no prefix the warp scans can "
                   "give (its accumulator is not its output); scans take sum, prod, min, "
                   "max, and, or, xor or combine=", on);

  const wg_family *fam = p->family;
  rc = check_unused_keys(ctx, s, fam);
  if (rc) return rc;

  if (!(p->variants & (1u << s->variant))) {
    names_text(allowed, sizeof allowed, variant_at, WG_VARIANT_COUNT, p->variants);
    return wg_fail(ctx, WG_ESPEC, "variant: '%s' is not available for '%s'; "
                   "allowed: %s", wg_variant_names[s->variant], pn, allowed);
  }
  if (s->variant == WG_VARIANT_REDUX) {
    if (s->type != WG_I32 && s->type != WG_U32)
      return wg_fail(ctx, WG_ESPEC, "variant: 'redux' works on 32-bit integers "
                     "(i32, u32), not %s", tn);
    if (!wg_operators[s->op].redux)
      return wg_fail(ctx, WG_ESPEC, "variant: 'redux' has sum, min, max, and, or, "
                     "xor but not '%s'", s->combine ? "combine=" : on);
    if (wg_spec_has_expr(s))
      return wg_fail(ctx, WG_ESPEC, "variant: 'redux' reduces the elements as they are; "
                     "a spec with expressions, inputs or params takes down, xor, idx or "
                     "smem");
    if (arch && arch < 80)
      return wg_fail(ctx, WG_ESPEC, "variant: 'redux' needs sm_80 or newer, not sm_%d",
                     arch);
  }

  /* Whether NVRTC compiles for s->arch is asked when compiling (compile.c):
   * asking here would load NVRTC in processes the disk cache serves. */
  if (s->arch < 0 || s->arch > 10000)
    return wg_fail(ctx, WG_ESPEC, "arch: %d is not an architecture like 90 "
                   "(sm_90)", s->arch);
  if (fam->validate && (rc = fam->validate(ctx, s, arch))) return rc;
  return wg_spec_expr_validate(ctx, s);
}

int wg_spec_validate(wg_context *ctx, const wg_spec *spec) {
  return validate(ctx, spec, spec ? spec->arch : 0);
}

/* --- auto ----------------------------------------------------------------- */

/* Lanes that one group spans in the concrete spec: width in the lane
 * layout; in the vec layout each lane holds 16 bytes of the group (match
 * keeps one element a lane: match.any compares lanes, not registers). */
int wg_spec_group_lanes(const wg_spec *s) {
  if (s->layout == WG_LAYOUT_LANE || s->variant == WG_VARIANT_SMEM ||
      s->primitive == WG_MATCH)
    return s->width;
  int per_lane = (int)(16u / wg_types[s->type].size);
  return s->width > per_lane ? s->width / per_lane : 1;
}

/* What `auto` picks: the lowest latency in the README's table, measured
 * with bench/warp_latency on the H200. redux is 3x faster than five
 * shuffles for a whole warp of 32-bit integers, but with a partial mask
 * (fewer than 32 lanes) it is 2x to 18x slower than shuffling, so it is
 * picked only when a group spans the whole warp: width 32 in the lane
 * layout, never in the vec layout (32-bit groups span at most 8 lanes
 * there). Otherwise: down for reduce, xor for allreduce (every lane needs
 * the result), up for scans; the smem tree never wins by more than noise. */
static wg_variant auto_variant(const wg_spec *s, int arch) {
  bool redux = wg_spec_group_lanes(s) == 32 && variant_is_redux_able(s, arch);
  switch (s->primitive) {
  case WG_REDUCE: return redux ? WG_VARIANT_REDUX : WG_VARIANT_DOWN;
  case WG_ALLREDUCE: return redux ? WG_VARIANT_REDUX : WG_VARIANT_XOR;
  case WG_SCAN:
  case WG_EXSCAN: return WG_VARIANT_UP;
  case WG_BROADCAST: return WG_VARIANT_IDX;
  case WG_BALLOT:
  case WG_ANY:
  case WG_ALL:
  case WG_MATCH: return WG_VARIANT_VOTE;
  default: return WG_VARIANT_AUTO; /* array and rows choose inside codegen */
  }
}

int wg_spec_arch(const wg_spec *spec, int device_arch) {
  if (spec->arch) return spec->arch;
  return device_arch ? device_arch : WG_DEFAULT_ARCH;
}

wg_spec wg_spec_concrete(const wg_spec *spec, int device_arch) {
  wg_spec c = *spec;
  c.arch = wg_spec_arch(spec, device_arch);
  if (c.variant == WG_VARIANT_AUTO) c.variant = auto_variant(&c, c.arch);
  /* The shared-memory tree is the baseline, kept one element a lane. */
  if (c.variant == WG_VARIANT_SMEM) c.layout = WG_LAYOUT_LANE;
  const wg_family *fam = wg_family_of(c.primitive);
  if (fam->concrete) fam->concrete(&c);
  return c;
}

wg_variant wg_spec_resolve_variant(const wg_spec *spec) {
  if (!spec || validate(NULL, spec, spec->arch) != WG_OK) return WG_VARIANT_AUTO;
  if (spec->variant != WG_VARIANT_AUTO) return spec->variant;
  /* Array and row reductions take only auto; what runs inside them is a
   * __shfl_down_sync tree (templates/reduce_helpers.cuh), so name that. */
  if (!wg_primitives[spec->primitive].is_warp) return WG_VARIANT_DOWN;
  return auto_variant(spec, wg_spec_arch(spec, 0));
}

/* --- text form ------------------------------------------------------------ */

int wg_spec_format(char *buf, size_t size, const wg_spec *s) {
  if (!buf && size) return WG_EINVAL; /* snprintf's rule */
  /* Only a valid spec has a text form that parses back to it. */
  int rc = validate(NULL, s, s ? s->arch : 0);
  if (rc) return rc;
  const wg_primitive_info *p = &wg_primitives[s->primitive];
  wg_buf text = {0};
  wg_buf_printf(&text, "%s %s", p->name, wg_types[s->type].name);
  if (s->op != WG_OP_NONE) wg_buf_printf(&text, " %s", wg_operators[s->op].name);
  rc = wg_spec_expr_format(&text, s);
  if (p->family->format_keys) p->family->format_keys(&text, s);
  if (s->arch) wg_buf_printf(&text, " arch=sm_%d", s->arch);
  if (!rc && text.failed) rc = WG_ENOMEM;
  if (rc) {
    wg_buf_free(&text);
    return rc;
  }
  if (size) snprintf(buf, size, "%s", text.data);
  const int n = (int)text.len;
  wg_buf_free(&text);
  return n;
}

/* A name from one of the tables into *out, or WG_ESPEC naming the field
 * and listing what it may be. */
static int parse_name(wg_context *ctx, int *out, const char *field, const char *plural,
                      const char *word, size_t len, const char *(*get)(int), int count) {
  *out = name_index(word, len, get, count);
  if (*out >= 0) return WG_OK;
  char allowed[256];
  names_text(allowed, sizeof allowed, get, count, ~0u);
  return wg_fail(ctx, WG_ESPEC, "%s: unknown '%s'; %s are %s", field, QUOTED_N(word, len),
                 plural, allowed);
}

/* Parses a whole decimal integer in [lo, hi]. */
static bool parse_int(const char *v, size_t len, int64_t lo, int64_t hi, int64_t *out) {
  char tmp[32];
  if (len == 0 || len >= sizeof tmp) return false;
  memcpy(tmp, v, len);
  tmp[len] = '\0';
  char *end;
  errno = 0;
  long long x = strtoll(tmp, &end, 10);
  if (errno || *end || x < lo || x > hi) return false;
  *out = x;
  return true;
}

static int parse_key(wg_context *ctx, wg_spec *s, const char *key, size_t klen,
                     const char *val, size_t vlen, unsigned *seen) {
  /* The simple keys, then (from FIRST_EXPR_KEY) the expression keys. */
  static const char *const keys[] = {"width", "variant", "arch", "lane", "cols",
                                     "layout", "bins", "counts", "deterministic",
                                     "map", "combine", "identity", "final",
                                     "inputs", "params", "pred"};
  enum { FIRST_EXPR_KEY = 9 };
  int k = -1;
  for (int i = 0; i < (int)WG_COUNT_OF(keys); i++)
    if (strlen(keys[i]) == klen && memcmp(keys[i], key, klen) == 0) k = i;
  if (k < 0)
    return wg_fail(ctx, WG_ESPEC, "unknown key '%s'; keys are width, variant, "
                   "layout, arch, lane, cols, bins, counts, deterministic, map, "
                   "combine, identity, final, inputs, params, pred", QUOTED_N(key, klen));
  if (*seen & (1u << k))
    return wg_fail(ctx, WG_ESPEC, "key '%s' given twice", keys[k]);
  *seen |= 1u << k;
  if (k < FIRST_EXPR_KEY && memchr(val, '"', vlen))
    return wg_fail(ctx, WG_ESPEC, "%s: only map, combine, identity, final and pred "
                   "take quoted values", keys[k]);
  if (k >= FIRST_EXPR_KEY) { /* the expression keys (spec_expr.c) */
    if (!ctx)
      return wg_fail(ctx, WG_EINVAL, "%s: a spec with expressions needs a context "
                     "(it owns their text)", keys[k]);
    return wg_spec_expr_key(ctx, s, key, klen, val, vlen);
  }
  int64_t x;
  switch (k) {
  case 0:
    if (!parse_int(val, vlen, 0, 1 << 20, &x))
      return wg_fail(ctx, WG_ESPEC, "width: '%s' is not a number; a logical warp "
                     "has 2, 4, 8, 16 or 32 lanes", QUOTED_N(val, vlen));
    s->width = (int)x;
    return WG_OK;
  case 1: {
    int v, rc = parse_name(ctx, &v, "variant", "variants", val, vlen, variant_at,
                           WG_VARIANT_COUNT);
    if (!rc) s->variant = (wg_variant)v;
    return rc;
  }
  case 2:
    if (vlen > 3 && memcmp(val, "sm_", 3) == 0) val += 3, vlen -= 3;
    if (!parse_int(val, vlen, 1, 10000, &x))
      return wg_fail(ctx, WG_ESPEC, "arch: '%s' is not an architecture like sm_90",
                     QUOTED_N(val, vlen));
    s->arch = (int)x;
    return WG_OK;
  case 3:
    if (!parse_int(val, vlen, -(1 << 20), 1 << 20, &x))
      return wg_fail(ctx, WG_ESPEC, "lane: '%s' is not a number", QUOTED_N(val, vlen));
    s->lane = (int)x;
    return WG_OK;
  case 4:
    if (!parse_int(val, vlen, 0, INT64_MAX, &x))
      return wg_fail(ctx, WG_ESPEC, "cols: '%s' is not a non-negative number",
                     QUOTED_N(val, vlen));
    s->cols = x;
    return WG_OK;
  case 5: {
    int v, rc = parse_name(ctx, &v, "layout", "layouts", val, vlen, layout_at,
                           WG_LAYOUT_COUNT);
    if (!rc) s->layout = (wg_layout)v;
    return rc;
  }
  case 6:
    if (!parse_int(val, vlen, 0, INT64_MAX, &x))
      return wg_fail(ctx, WG_ESPEC, "bins: '%s' is not a non-negative number",
                     QUOTED_N(val, vlen));
    s->bins = x;
    return WG_OK;
  case 7: {
    int v, rc = parse_name(ctx, &v, "counts", "types", val, vlen, type_at,
                           WG_TYPE_COUNT);
    if (!rc) s->counts = (wg_type)v;
    return rc;
  }
  default: /* deterministic */
    if (!parse_int(val, vlen, 0, 1, &x))
      return wg_fail(ctx, WG_ESPEC, "deterministic: '%s' is neither 0 nor 1",
                     QUOTED_N(val, vlen));
    s->deterministic = (int)x;
    return WG_OK;
  }
}


int wg_spec_parse(wg_context *ctx, wg_spec *out, const char *text) {
  if (!out || !text) return wg_fail(ctx, WG_EINVAL, "wg_spec_parse: NULL argument");
  /* Every word of a spec is printable ASCII, so any other byte is an error
   * here, and the messages below that quote a word quote only printable
   * text. */
  for (const unsigned char *b = (const unsigned char *)text; *b; b++)
    if ((*b < 0x20 || *b >= 0x7f) && *b != ' ' && *b != '\t' && *b != '\n')
      return wg_fail(ctx, WG_ESPEC, "spec '%s': byte 0x%02x at offset %zu is not "
                     "allowed; a spec is words of printable ASCII", QUOTED(text), *b,
                     (size_t)(b - (const unsigned char *)text));
  wg_spec s = WG_SPEC_INIT;
  s.op = WG_OP_NONE;
  const char *p = text;
  int word = 0, index;
  unsigned seen = 0;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (!*p) break;
    const char *start = p;
    /* A word ends at a space outside double quotes; inside, a backslash
     * escapes the next byte (spec_expr.c undoes the escapes). */
    bool quoted = false;
    const char *first_eq = NULL;
    for (; *p && (quoted || (*p != ' ' && *p != '\t' && *p != '\n')); p++) {
      /* A quote opens only as a key's value (key="..."), so the words
       * and keys that messages quote never hold a space or a tab. */
      if (!first_eq && *p == '=') first_eq = p;
      if (*p == '"' && (quoted || (first_eq && p == first_eq + 1)))
        quoted = !quoted;
      else if (quoted && *p == '\\' && p[1])
        p++;
    }
    if (quoted)
      return wg_fail(ctx, WG_ESPEC, "spec '%s': the quote at offset %zu is not closed",
                     QUOTED(text), (size_t)(strchr(start, '"') - text));
    size_t len = (size_t)(p - start);
    const char *eq = memchr(start, '=', len);
    int rc = WG_OK;
    if (eq) {
      if (word < 2)
        return wg_fail(ctx, WG_ESPEC, "spec '%s': expected 'PRIMITIVE TYPE [OPERATOR] "
                       "key=value...' but '%s' comes too early", QUOTED(text), QUOTED_N(start, len));
      rc = parse_key(ctx, &s, start, (size_t)(eq - start), eq + 1,
                     len - (size_t)(eq - start) - 1, &seen);
      if (rc) return rc;
    } else if (word == 0) {
      if ((rc = parse_name(ctx, &index, "primitive", "primitives", start, len, prim_at,
                           WG_PRIMITIVE_COUNT)))
        return rc;
      s.primitive = (wg_primitive)index;
    } else if (word == 1) {
      if ((rc = parse_name(ctx, &index, "type", "types", start, len, type_at,
                           WG_TYPE_COUNT)))
        return rc;
      s.type = (wg_type)index;
    } else if (word == 2 && !seen) {
      if ((rc = parse_name(ctx, &index, "operator", "operators", start, len, op_at,
                           WG_OPERATOR_COUNT)))
        return rc;
      s.op = (wg_operator)index;
    } else {
      return wg_fail(ctx, WG_ESPEC, "spec '%s': unexpected word '%s' (options are "
                     "written key=value)", QUOTED(text), QUOTED_N(start, len));
    }
    word += eq ? 0 : 1;
    if (eq && word < 3) word = 3; /* an operator may not follow a key */
  }
  if (word < 2)
    return wg_fail(ctx, WG_ESPEC, "spec '%s': expected at least 'PRIMITIVE TYPE', "
                   "e.g. 'reduce f32 sum'", QUOTED(text));
  if (s.ninputs > 1 && s.inputs[0] != s.type)
    return wg_fail(ctx, WG_ESPEC, "inputs: the first input is the spec's type, %s, "
                   "not %s", wg_types[s.type].name, wg_types[s.inputs[0]].name);
  int rc = validate(ctx, &s, s.arch);
  /* The expressions as their canonical text, which the context owns. */
  if (!rc && wg_spec_has_expr(&s)) rc = wg_spec_canonical(ctx, &s, &s);
  if (rc) return rc;
  *out = s;
  return WG_OK;
}

/* --- listing -------------------------------------------------------------- */

int wg_spec_list(wg_context *ctx, wg_spec **out, size_t *count, int arch) {
  if (!out || !count) return wg_fail(ctx, WG_EINVAL, "wg_spec_list: NULL output");
  *out = NULL;
  *count = 0;
  if (arch) {
    int rc = wg_nvrtc_check_arch(ctx, arch);
    if (rc) return rc;
  }
  static const int widths[] = {2, 4, 8, 16, 32};
  size_t cap = 4096, n = 0;
  wg_spec *list = malloc(cap * sizeof *list);
  if (!list) return wg_fail(ctx, WG_ENOMEM, "out of memory");
  for (int p = 0; p < WG_PRIMITIVE_COUNT; p++) {
    bool warp = wg_primitives[p].is_warp;
    for (int t = 0; t < WG_TYPE_COUNT; t++)
      for (int o = 0; o < WG_OPERATOR_COUNT; o++)
        for (int v = warp ? 1 : 0; v < (warp ? WG_VARIANT_COUNT : 1); v++)
          for (int l = 0; l < (warp ? WG_LAYOUT_COUNT : 1); l++)
          for (size_t w = 0; w < (warp ? WG_COUNT_OF(widths) : 1); w++) {
            wg_spec s = WG_SPEC_INIT;
            s.primitive = (wg_primitive)p;
            s.type = (wg_type)t;
            s.op = (wg_operator)o;
            s.variant = (wg_variant)v;
            s.width = warp ? widths[w] : 32;
            s.arch = arch;
            s.layout = (wg_layout)l;
            /* smem is one kernel in either layout: listed once, as lane. */
            if (v == WG_VARIANT_SMEM && l == WG_LAYOUT_VEC) continue;
            if (validate(NULL, &s, arch ? arch : WG_DEFAULT_ARCH) != WG_OK) continue;
            if (n == cap) {
              wg_spec *bigger = realloc(list, 2 * cap * sizeof *list);
              if (!bigger) {
                free(list);
                return wg_fail(ctx, WG_ENOMEM, "out of memory");
              }
              list = bigger;
              cap *= 2;
            }
            list[n++] = s;
          }
  }
  *out = list;
  *count = n;
  return WG_OK;
}
