/*
 * expr_gen.c - random expression texts from the grammar (see expr_gen.h).
 *
 * The generator is lightly typed so that nearly everything it writes type
 * checks: each request asks for ANY value, a NUMber (not bool: arguments
 * of functions) or an INTeger (operands of %); it never checks its output
 * by parsing it, so it stays usable where only text is wanted (fuzzer
 * seeds). Parentheses are written only where precedence needs them, plus
 * some redundant ones, so that the parser's precedence is exercised.
 */
#include "expr_gen.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { ANY, NUM, INT };

typedef struct gen {
  uint64_t *rng;
  const wg_expr_scope *sc;
  char *out;
  size_t len, size;
  bool over;
} gen;

uint64_t wg_gen_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static unsigned pick(gen *g, unsigned n) { return (unsigned)(wg_gen_next(g->rng) % n); }

static void put(gen *g, const char *s) {
  size_t n = strlen(s);
  if (g->len + n + 1 > g->size) {
    g->over = true;
    return;
  }
  memcpy(g->out + g->len, s, n + 1);
  g->len += n;
}

/* Wraps out[from..len) in parentheses. */
static void wrap(gen *g, size_t from) {
  if (g->over || g->len + 3 > g->size) {
    g->over = true;
    return;
  }
  memmove(g->out + from + 1, g->out + from, g->len - from + 1);
  g->out[from] = '(';
  g->len++;
  put(g, ")");
}

static void space(gen *g) {
  static const char *const spaces[] = {" ", " ", " ", "", "  ", "\t", "\n"};
  put(g, spaces[pick(g, 7)]);
}

/* --- leaves -------------------------------------------------------------- */

static const char *const int_literals[] = {
  "0", "1", "2", "3", "7", "10", "100", "-1", "-2", "-7", "0x1F", "0xff", "0X10",
  "65536", "2147483647", "-2147483648", "2147483648", "4294967295", "4294967296",
  "9223372036854775807", "-9223372036854775808", "18446744073709551615",
  "5i32", "-3i32", "-2147483648i32", "7u32", "4294967295u32", "0x7fffffffu32",
  "-1i64", "9223372036854775807i64", "-9223372036854775808i64", "3u64",
  "18446744073709551615u64", "0i32", "1u32",
};
static const char *const float_literals[] = {
  "0.0", "-0.0", "1.5", ".5", "2.", "1e5", "1E-3", "2.5e+3", "0.1", "-0.75",
  "3.4028235e38", "1e-40", "1e-45", "1e300", "-1e300", "6.5e4", "16777217.0",
  "2.5f32", "0.1f32", "-0.0f32", "1e38f32", "3f32", "1.5f64", "1e-310f64", "7f64",
  "0.333333333333333314829616256247390992939472198486328125", "1e-320", "0.5e-3",
};

static void literal(gen *g, int cls) {
  char buf[64];
  unsigned k = pick(g, 10);
  if (cls == ANY && k == 0) {
    put(g, pick(g, 2) ? "true" : "false");
  } else if (cls == INT || k < 5) {
    if (pick(g, 3) == 0) snprintf(buf, sizeof buf, "%u", pick(g, 1000));
    else snprintf(buf, sizeof buf, "%s", int_literals[pick(g, WG_COUNT_OF(int_literals))]);
    put(g, buf);
  } else if (pick(g, 3) == 0) {
    /* a random decimal: 1 to 9 digits, exponent -8..8 */
    double v = ldexp((double)(wg_gen_next(g->rng) >> 11), -53) * pow(10, (int)pick(g, 17) - 8);
    snprintf(buf, sizeof buf, "%.*g", 1 + (int)pick(g, 9), pick(g, 4) ? v : -v);
    if (!strpbrk(buf, ".e")) strcat(buf, ".0");
    put(g, buf);
  } else {
    put(g, float_literals[pick(g, WG_COUNT_OF(float_literals))]);
  }
}

static bool fits(wg_value_type t, int cls) {
  if (cls == ANY) return true;
  if (cls == NUM) return t != WG_VT_BOOL;
  return t != WG_VT_BOOL && t != WG_VT_F32 && t != WG_VT_F64;
}

/* A variable of the scope whose type suits cls, or a literal. */
static void leaf(gen *g, int cls) {
  static const char *const inputs[] = {"x", "y", "z", "w"};
  static const char *const params[] = {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"};
  const wg_expr_scope *sc = g->sc;
  const char *names[16];
  int count = 0;
  bool has_inputs = sc->role == WG_EXPR_MAP || sc->role == WG_EXPR_PREDICATE;
  for (int k = 0; has_inputs && k < sc->ninputs; k++)
    if (fits(sc->inputs[k], cls)) names[count++] = inputs[k];
  if (has_inputs || sc->role == WG_EXPR_FINAL) names[count++] = "n";
  if (has_inputs) names[count++] = "i";
  if (sc->role == WG_EXPR_COMBINE && fits(sc->acc, cls)) {
    names[count++] = "a";
    names[count++] = "b";
  }
  if (sc->role == WG_EXPR_FINAL && fits(sc->acc, cls)) names[count++] = "r";
  for (int k = 0; k < sc->nparams; k++)
    if (fits(sc->params[k], cls)) names[count++] = params[k];
  if (count && pick(g, 3)) put(g, names[pick(g, (unsigned)count)]);
  else literal(g, cls);
}

/* --- inner nodes --------------------------------------------------------- */

static const char *const type_names[WG_VT_COUNT] = {"bool", "i32", "u32", "i64", "u64", "f32", "f64"};
static const struct { const char *name; int arity; bool integer; } functions[] = {
  {"abs", 1, true}, {"min", 2, true}, {"max", 2, true}, {"fmin", 2, false},
  {"fmax", 2, false}, {"pow", 2, false}, {"sqrt", 1, false}, {"rsqrt", 1, false},
  {"exp", 1, false}, {"exp2", 1, false}, {"expm1", 1, false}, {"log", 1, false},
  {"log2", 1, false}, {"log1p", 1, false}, {"sin", 1, false}, {"cos", 1, false},
  {"tanh", 1, false}, {"erf", 1, false}, {"floor", 1, false}, {"ceil", 1, false},
  {"sigmoid", 1, false},
};
static const struct { const char *text; int prec; int kids; } binops[] = {
  {"+", 6, ANY}, {"-", 6, ANY}, {"*", 7, ANY}, {"/", 7, ANY}, {"%", 7, INT},
  {"<", 5, ANY}, {"<=", 5, ANY}, {">", 5, ANY}, {">=", 5, ANY}, {"==", 4, ANY},
  {"!=", 4, ANY}, {"&&", 3, ANY}, {"||", 2, ANY},
};
enum { ARITH_OPS = 5, PREC_COND = 1, PREC_UNARY = 8, PREC_ATOM = 9 };

static int node(gen *g, int cls, int depth);

/* A kid that must bind at least as tightly as min, else parenthesised;
 * now and then parenthesised anyway. */
static void kid(gen *g, int cls, int depth, int min) {
  size_t from = g->len;
  int prec = node(g, cls, depth);
  if (prec < min || pick(g, 12) == 0) wrap(g, from);
}

static void call(gen *g, const char *name, int arity, int cls, int depth) {
  put(g, name);
  put(g, "(");
  for (int k = 0; k < arity; k++) {
    if (k) {
      put(g, ",");
      space(g);
    }
    kid(g, cls, depth - 1, PREC_COND);
  }
  put(g, ")");
}

/* Writes one node for a value of class cls; returns its precedence. */
static int node(gen *g, int cls, int depth) {
  if (g->over) return PREC_ATOM;
  if (depth <= 1 || pick(g, 10) < 3) {
    leaf(g, cls);
    return PREC_ATOM;
  }
  switch (pick(g, 6)) {
  case 0: case 1: { /* binary */
    unsigned op = cls == ANY ? pick(g, WG_COUNT_OF(binops)) : pick(g, ARITH_OPS);
    int kids = cls == INT || binops[op].kids == INT ? INT : ANY;
    kid(g, kids, depth - 1, binops[op].prec);
    space(g);
    put(g, binops[op].text);
    space(g);
    kid(g, kids, depth - 1, binops[op].prec + 1);
    return binops[op].prec;
  }
  case 2: /* unary */
    if (cls == ANY && pick(g, 2)) {
      put(g, "!");
      kid(g, ANY, depth - 1, PREC_UNARY);
    } else {
      put(g, "-");
      /* "-7u32" would be one literal that does not fit: "-(7u32)" negates */
      size_t from = g->len;
      kid(g, cls == INT ? INT : ANY, depth - 1, PREC_UNARY);
      if (!g->over && g->out[from] && strchr("0123456789.", g->out[from])) wrap(g, from);
    }
    return PREC_UNARY;
  case 3: /* c ? a : b */
    kid(g, ANY, depth - 1, PREC_COND + 1);
    space(g);
    put(g, "?");
    space(g);
    kid(g, cls, depth - 1, PREC_COND);
    space(g);
    put(g, ":");
    space(g);
    kid(g, cls, depth - 1, PREC_COND);
    return PREC_COND;
  case 4: { /* function */
    unsigned f;
    do f = pick(g, WG_COUNT_OF(functions)); while (cls == INT && !functions[f].integer);
    call(g, functions[f].name, functions[f].arity, cls == INT ? INT : NUM, depth);
    return PREC_ATOM;
  }
  default: { /* cast */
    unsigned t;
    do t = pick(g, WG_VT_COUNT); while (!fits((wg_value_type)t, cls));
    call(g, type_names[t], 1, ANY, depth);
    return PREC_ATOM;
  }
  }
}

size_t wg_gen_expr(uint64_t *state, const wg_expr_scope *scope, int max_depth,
                   char *out, size_t size) {
  if (!size) return 0;
  gen g = {state, scope, out, 0, size, false};
  out[0] = '\0';
  if (pick(&g, 8) == 0) space(&g);
  node(&g, ANY, max_depth < 1 ? 1 : max_depth > 16 ? 16 : max_depth);
  if (pick(&g, 8) == 0) space(&g);
  if (g.over) {
    out[0] = '\0';
    return 0;
  }
  return g.len;
}

void wg_gen_scope(uint64_t *state, wg_expr_scope *scope) {
  memset(scope, 0, sizeof *scope);
  scope->role = (wg_expr_role)(wg_gen_next(state) % WG_EXPR_ROLE_COUNT);
  scope->ninputs = (int)(wg_gen_next(state) % 5);
  scope->nparams = (int)(wg_gen_next(state) % 9);
  for (int k = 0; k < 4; k++) scope->inputs[k] = (wg_value_type)(wg_gen_next(state) % WG_VT_COUNT);
  for (int k = 0; k < 8; k++) scope->params[k] = (wg_value_type)(wg_gen_next(state) % WG_VT_COUNT);
  scope->acc = (wg_value_type)(wg_gen_next(state) % WG_VT_COUNT);
}

/* --- values -------------------------------------------------------------- */

wg_value wg_gen_value(uint64_t *state, wg_value_type t) {
  static const double float_edges[] = {
    0.0, -0.0, 1.0, -1.0, 0.5, -2.5, INFINITY, -INFINITY, NAN, 3.4028234663852886e38,
    -3.4028234663852886e38, 1.1754943508222875e-38, 1.4e-45, -1.4e-45, 2147483648.0,
    -2147483649.0, 4294967296.0, 9.2233720368547758e18, -9.2233720368547758e18,
    1.8446744073709552e19, 16777217.0, 1e300, -1e-310, 88.72, -103.0, 710.0,
  };
  static const uint64_t int_edges[] = {
    0, 1, UINT64_MAX, 2, 7, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000,
    0x7fffffffffffffff, 0x8000000000000000, 0xffffffff80000000, 65536, 46341,
  };
  uint64_t r = wg_gen_next(state), bits = wg_gen_next(state);
  unsigned how = (unsigned)(r % 3);
  wg_value v = {.type = t};
  double d;
  if (t == WG_VT_F32 || t == WG_VT_F64) {
    if (how == 0) {
      d = float_edges[(r >> 8) % (sizeof float_edges / sizeof *float_edges)];
    } else if (how == 1) { /* -100..100 with a fraction */
      d = ((double)(bits >> 11) * 0x1p-53 - 0.5) * 200.0;
    } else { /* any finite or not bit pattern */
      if (t == WG_VT_F32) {
        uint32_t b = (uint32_t)bits;
        float f;
        memcpy(&f, &b, sizeof f);
        v.as.f32 = f;
      } else {
        memcpy(&v.as.f64, &bits, sizeof bits);
      }
      return v;
    }
    if (t == WG_VT_F32) v.as.f32 = fabs(d) < 0x1.ffffffp+127 || isnan(d) ? (float)d : (float)copysign(INFINITY, d);
    else v.as.f64 = d;
    return v;
  }
  uint64_t w = how == 0 ? int_edges[(r >> 8) % (sizeof int_edges / sizeof *int_edges)]
               : how == 1 ? (uint64_t)((int64_t)(bits % 201) - 100) : bits;
  switch (t) {
  case WG_VT_BOOL: v.as.b = w & 1; break;
  case WG_VT_I32: v.as.i32 = (int32_t)(uint32_t)w; break;
  case WG_VT_U32: v.as.u32 = (uint32_t)w; break;
  case WG_VT_I64: v.as.i64 = (int64_t)w; break;
  default: v.as.u64 = w; break;
  }
  return v;
}

void wg_gen_values(uint64_t *state, const wg_expr_scope *scope, wg_expr_values *vars) {
  memset(vars, 0, sizeof *vars);
  for (int k = 0; k < 4; k++) vars->inputs[k] = wg_gen_value(state, scope->inputs[k]);
  for (int k = 0; k < 8; k++) vars->params[k] = wg_gen_value(state, scope->params[k]);
  vars->a = wg_gen_value(state, scope->acc);
  vars->b = wg_gen_value(state, scope->acc);
  vars->r = wg_gen_value(state, scope->acc);
  vars->i = wg_gen_value(state, WG_VT_I64).as.i64;
  int64_t n = wg_gen_value(state, WG_VT_I64).as.i64;
  vars->n = n < 0 ? -(n + 1) : n;
}
