/*
 * expr.c - the expression language: text -> typed tree -> canonical text
 * and CUDA. docs/expressions.md is the manual, expr.h the contract.
 *
 * One pass: a lexer hands tokens to a recursive-descent parser (C's
 * precedence, by precedence climbing), and each node is type-checked as it
 * is built, with implicit conversions made explicit as nodes that the
 * canonical text skips and the CUDA shows. Types, operators, functions and
 * variables are rows of tables; printing walks the tree, so no byte of the
 * user's text is ever copied to the output: names come from the tables and
 * numbers are printed from their parsed values.
 *
 * The C stack stays bounded: the parser counts nesting (parentheses,
 * prefix operators, calls, ?: branches) and every node knows its depth, both
 * capped at WG_EXPR_MAX_DEPTH, so every walk of a tree is shallow too.
 */
#include "expr_tree.h"

#include <errno.h>
#include <pthread.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- tables -------------------------------------------------------------- */

typedef struct vt_info {
  const char *name;
  const char *ctype;
  const char *utype;    /* the unsigned twin signed arithmetic wraps in */
  const char *suffix;   /* of a CUDA literal: "u", "LL", "f"... */
  const char *from_f32; /* float -> this integer type, defined for any value */
  const char *from_f64; /* double -> this integer type */
  bool is_float;
  bool is_signed;
} vt_info;

/* Float -> integer casts go through helpers (wg_expr_helpers) that send NaN
 * to 0, saturate at the type's range and truncate in between: a plain C++
 * cast of an out-of-range float is undefined, and the H200 measured
 * __float2ull_rz(-2e9) and __double2ull_rz(NaN) as 2^63, not 0. */
static const vt_info vts[WG_VT_COUNT] = {
  [WG_VT_BOOL] = {"bool", "bool", NULL, "", NULL, NULL, false, false},
  [WG_VT_I32] = {"i32", "int", "unsigned int", "", "wg_f32_to_i32",
                 "wg_f64_to_i32", false, true},
  [WG_VT_U32] = {"u32", "unsigned int", "unsigned int", "u", "wg_f32_to_u32",
                 "wg_f64_to_u32", false, false},
  [WG_VT_I64] = {"i64", "long long", "unsigned long long", "LL",
                 "wg_f32_to_i64", "wg_f64_to_i64", false, true},
  [WG_VT_U64] = {"u64", "unsigned long long", "unsigned long long", "ULL",
                 "wg_f32_to_u64", "wg_f64_to_u64", false, false},
  [WG_VT_F32] = {"f32", "float", NULL, "f", NULL, NULL, true, true},
  [WG_VT_F64] = {"f64", "double", NULL, "", NULL, NULL, true, true},
};

static const char *const role_names[WG_EXPR_ROLE_COUNT] = {
  "map", "combine", "final", "predicate", "identity",
};

/* Binary operators. The class decides the typing rule. */
enum { ARITH, MODULO, COMPARE, LOGIC };
static const struct binop_info {
  const char *text;
  unsigned char prec; /* higher binds tighter; all associate to the left */
  unsigned char cls;
} binops[OP_COUNT] = {
  [OP_OR] = {"||", 2, LOGIC},    [OP_AND] = {"&&", 3, LOGIC},
  [OP_EQ] = {"==", 4, COMPARE},  [OP_NE] = {"!=", 4, COMPARE},
  [OP_LT] = {"<", 5, COMPARE},   [OP_LE] = {"<=", 5, COMPARE},
  [OP_GT] = {">", 5, COMPARE},   [OP_GE] = {">=", 5, COMPARE},
  [OP_ADD] = {"+", 6, ARITH},    [OP_SUB] = {"-", 6, ARITH},
  [OP_MUL] = {"*", 7, ARITH},    [OP_DIV] = {"/", 7, ARITH},
  [OP_MOD] = {"%", 7, MODULO},
};
enum { PREC_COND = 1, PREC_OR = 2, PREC_UNARY = 8, PREC_ATOM = 9 };

/* Functions. FLOAT ones compute in the floating type of their arguments
 * (integers convert to f64, as C's math functions take double); NUMERIC
 * ones in the common type of their arguments. A pattern is CUDA with $0 and
 * $1 standing for the rendered arguments, each used once, so a rendering
 * grows linearly with the tree. */
enum { FLOAT_FN, NUMERIC_FN };
static const struct fn_info {
  const char *name;
  unsigned char arity;
  unsigned char domain;
  const char *f32, *f64, *integer;
} fns[FN_COUNT] = {
  [FN_ABS] = {"abs", 1, NUMERIC_FN, "fabsf($0)", "fabs($0)", "wg_abs($0)"},
  [FN_MIN] = {"min", 2, NUMERIC_FN, "wg_min($0, $1)", "wg_min($0, $1)", "wg_min($0, $1)"},
  [FN_MAX] = {"max", 2, NUMERIC_FN, "wg_max($0, $1)", "wg_max($0, $1)", "wg_max($0, $1)"},
  [FN_FMIN] = {"fmin", 2, FLOAT_FN, "fminf($0, $1)", "fmin($0, $1)", NULL},
  [FN_FMAX] = {"fmax", 2, FLOAT_FN, "fmaxf($0, $1)", "fmax($0, $1)", NULL},
  [FN_POW] = {"pow", 2, FLOAT_FN, "powf($0, $1)", "pow($0, $1)", NULL},
  [FN_SQRT] = {"sqrt", 1, FLOAT_FN, "sqrtf($0)", "sqrt($0)", NULL},
  [FN_RSQRT] = {"rsqrt", 1, FLOAT_FN, "rsqrtf($0)", "rsqrt($0)", NULL},
  [FN_EXP] = {"exp", 1, FLOAT_FN, "expf($0)", "exp($0)", NULL},
  [FN_EXP2] = {"exp2", 1, FLOAT_FN, "exp2f($0)", "exp2($0)", NULL},
  [FN_EXPM1] = {"expm1", 1, FLOAT_FN, "expm1f($0)", "expm1($0)", NULL},
  [FN_LOG] = {"log", 1, FLOAT_FN, "logf($0)", "log($0)", NULL},
  [FN_LOG2] = {"log2", 1, FLOAT_FN, "log2f($0)", "log2($0)", NULL},
  [FN_LOG1P] = {"log1p", 1, FLOAT_FN, "log1pf($0)", "log1p($0)", NULL},
  [FN_SIN] = {"sin", 1, FLOAT_FN, "sinf($0)", "sin($0)", NULL},
  [FN_COS] = {"cos", 1, FLOAT_FN, "cosf($0)", "cos($0)", NULL},
  [FN_TANH] = {"tanh", 1, FLOAT_FN, "tanhf($0)", "tanh($0)", NULL},
  [FN_ERF] = {"erf", 1, FLOAT_FN, "erff($0)", "erf($0)", NULL},
  [FN_FLOOR] = {"floor", 1, FLOAT_FN, "floorf($0)", "floor($0)", NULL},
  [FN_CEIL] = {"ceil", 1, FLOAT_FN, "ceilf($0)", "ceil($0)", NULL},
  [FN_SIGMOID] = {"sigmoid", 1, FLOAT_FN, "(1.0f / (1.0f + expf(-$0)))",
   "(1.0 / (1.0 + exp(-$0)))", NULL},
};

/* Variables, by id (expr_tree.h). */
static const char *const var_names[V_COUNT] = {
  "x", "y", "z", "w", "i", "n", "a", "b", "r",
  "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7",
};
/* Which variables each role has (inputs and params are further limited by
 * the scope's counts). */
#define INPUTS (0xfu)
#define PARAMS (0xffu << V_P0)
static const unsigned role_vars[WG_EXPR_ROLE_COUNT] = {
  [WG_EXPR_MAP] = INPUTS | 1u << V_I | 1u << V_N | PARAMS,
  [WG_EXPR_COMBINE] = 1u << V_A | 1u << V_B | PARAMS,
  [WG_EXPR_FINAL] = 1u << V_R | 1u << V_N | PARAMS,
  [WG_EXPR_PREDICATE] = INPUTS | 1u << V_I | 1u << V_N | PARAMS,
  [WG_EXPR_IDENTITY] = PARAMS,
};

/* The tree itself (node, struct wg_expr) is laid out in expr_tree.h. */

/* --- numbers, independent of the C locale -------------------------------- */

/* strtod of s[0..n), '.' as the decimal point whatever the locale says. */
static double parse_double(const char *s, size_t n, bool *ok) {
  char buf[128];
  *ok = false;
  if (n >= sizeof buf) return 0;
  char point = localeconv()->decimal_point[0];
  for (size_t k = 0; k < n; k++) buf[k] = s[k] == '.' ? point : s[k];
  buf[n] = '\0';
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  *ok = end == buf + n;
  return v;
}

/* The shortest %g spelling of v that reads back as v (as float when
 * as_float), always with a '.' or an exponent, so that it reads as a
 * floating number. */
static void print_double(char *out, size_t size, double v, bool as_float) {
  char point = localeconv()->decimal_point[0];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(out, size, "%.*g", prec, v);
    for (char *c = out; *c; c++)
      if (*c == point) *c = '.';
    bool ok;
    double back = parse_double(out, strlen(out), &ok);
    if (as_float ? wg_expr_to_f32(back) == wg_expr_to_f32(v) : back == v) break;
  }
  /* "1e+05" -> "1e5": one spelling of the exponent */
  char *x = strchr(out, 'e');
  if (x) {
    char *digits = x + 1 + (x[1] == '-' || x[1] == '+');
    char *first = digits;
    while (*first == '0' && first[1]) first++;
    memmove(x[1] == '-' ? x + 2 : x + 1, first, strlen(first) + 1);
  }
  if (!strpbrk(out, ".e")) strncat(out, ".0", size - strlen(out) - 1);
}

static bool int_fits(bool neg, uint64_t mag, wg_value_type t) {
  switch (t) {
  case WG_VT_I32: return neg ? mag <= 0x80000000u : mag <= 0x7fffffffu;
  case WG_VT_U32: return !neg && mag <= 0xffffffffu;
  case WG_VT_I64: return neg ? mag <= 0x8000000000000000u : mag <= 0x7fffffffffffffffu;
  case WG_VT_U64: return !neg;
  default: return false;
  }
}

/* --- the parser ---------------------------------------------------------- */

enum { T_END, T_NUM, T_NAME, T_BINOP, T_LPAREN, T_RPAREN, T_COMMA, T_QUESTION,
       T_COLON, T_NOT, T_BAD };

typedef struct token {
  int kind;
  int op; /* T_BINOP */
  size_t pos, len;
} token;

typedef struct parser {
  wg_context *ctx;
  const char *text;
  size_t len;
  size_t at; /* next byte to lex */
  token tok; /* the current token */
  const wg_expr_scope *scope;
  wg_expr *e;
  int nest;
  int status;
} parser;

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_alnum(int c) { return is_alpha(c) || is_digit(c); }
static bool is_hex(int c) { return is_digit(c) || ((c | 32) >= 'a' && (c | 32) <= 'f'); }

/* The byte at k, or 0 past the end. */
static int byte_at(const parser *p, size_t k) {
  return k < p->len ? (unsigned char)p->text[k] : 0;
}

/* The length of the number at s[0..n) without its suffix: decimal digits
 * with an optional fraction and exponent, or 0x and hexadecimal digits.
 * The lexer and the parser both use it, so they agree on every token. */
static size_t number_body(const char *s, size_t n, bool *hex) {
  size_t k = 0;
  *hex = n > 1 && s[0] == '0' && (s[1] | 32) == 'x';
  if (*hex) {
    for (k = 2; k < n && is_hex((unsigned char)s[k]); k++) {}
    return k;
  }
  while (k < n && is_digit((unsigned char)s[k])) k++;
  if (k < n && s[k] == '.')
    for (k++; k < n && is_digit((unsigned char)s[k]); k++) {}
  if (k < n && (s[k] | 32) == 'e') {
    size_t j = k + 1;
    if (j < n && (s[j] == '+' || s[j] == '-')) j++;
    if (j < n && is_digit((unsigned char)s[j]))
      for (k = j; k < n && is_digit((unsigned char)s[k]); k++) {}
  }
  return k;
}

static void lex(parser *p) {
  while (p->at < p->len && strchr(" \t\n\r", p->text[p->at]) && p->text[p->at])
    p->at++;
  size_t s = p->at, k = s;
  token t = {T_BAD, 0, s, 1};
  int c = byte_at(p, k), c1 = byte_at(p, k + 1);
  if (s >= p->len) {
    t.kind = T_END;
    t.len = 0;
  } else if (is_digit(c) || (c == '.' && is_digit(c1))) {
    bool hex;
    k += number_body(p->text + s, p->len - s, &hex);
    while (is_alnum(byte_at(p, k))) k++; /* the suffix */
    t.kind = T_NUM;
    t.len = k - s;
  } else if (is_alpha(c)) {
    while (is_alnum(byte_at(p, k))) k++;
    t.kind = T_NAME;
    t.len = k - s;
  } else {
    static const char two[][3] = {"||", "&&", "==", "!=", "<=", ">="};
    static const int two_op[] = {OP_OR, OP_AND, OP_EQ, OP_NE, OP_LE, OP_GE};
    for (size_t j = 0; j < WG_COUNT_OF(two); j++)
      if (c == two[j][0] && c1 == two[j][1]) {
        t = (token){T_BINOP, two_op[j], s, 2};
        break;
      }
    if (t.kind == T_BAD) {
      static const char one[] = "<>+-*/%";
      static const int one_op[] = {OP_LT, OP_GT, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD};
      const char *hit = c ? strchr(one, c) : NULL;
      if (hit) t = (token){T_BINOP, one_op[hit - one], s, 1};
      else if (c == '(') t.kind = T_LPAREN;
      else if (c == ')') t.kind = T_RPAREN;
      else if (c == ',') t.kind = T_COMMA;
      else if (c == '?') t.kind = T_QUESTION;
      else if (c == ':') t.kind = T_COLON;
      else if (c == '!') t.kind = T_NOT;
    }
  }
  p->tok = t;
  p->at = s + t.len;
}

/* The current token as a message shows it: quoted, shortened, with bytes
 * that are not printable ASCII escaped. */
static const char *describe(const parser *p, char *buf, size_t size) {
  const token *t = &p->tok;
  if (t->kind == T_END) return "the end";
  if (t->kind == T_BAD) {
    int c = byte_at(p, t->pos);
    if (c >= 0x20 && c < 0x7f) snprintf(buf, size, "'%c'", c);
    else snprintf(buf, size, "'\\x%02x'", c);
    return buf;
  }
  /* Names, numbers and operators are printable by construction. */
  int n = t->len > 24 ? 24 : (int)t->len;
  snprintf(buf, size, "'%.*s%s'", n, p->text + t->pos, t->len > 24 ? "..." : "");
  return buf;
}

static int fail(parser *p, size_t pos, const char *fmt, ...) WG_PRINTF(3, 4);
static int fail(parser *p, size_t pos, const char *fmt, ...) {
  if (p->status != WG_OK) return -1; /* the first error is the one reported */
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->status = wg_fail(p->ctx, WG_ESPEC, "%s expression: at %zu: %s",
                      role_names[p->scope->role], pos, msg);
  return -1;
}

static int fail_expected(parser *p, const char *what) {
  char buf[48];
  return fail(p, p->tok.pos, "expected %s, found %s", what, describe(p, buf, sizeof buf));
}

static int nomem(parser *p) {
  if (p->status == WG_OK) p->status = wg_fail(p->ctx, WG_ENOMEM, "expression: out of memory");
  return -1;
}

static node *at(const parser *p, int id) { return &p->e->nodes[id]; }

/* A new node; kids' depths make its own. -1 after an error. */
static int add_node(parser *p, node n, int nkids) {
  int depth = 0;
  for (int k = 0; k < nkids; k++) {
    const node *kid = at(p, n.kid[k]);
    int d = kid->depth + !n.implicit;
    if (d > depth) depth = d;
  }
  if (nkids == 0) depth = 1;
  if (depth > WG_EXPR_MAX_DEPTH)
    return fail(p, n.pos, "nested deeper than %d levels", WG_EXPR_MAX_DEPTH);
  n.depth = (unsigned char)depth;
  wg_expr *e = p->e;
  if (e->count == e->cap) {
    int cap = e->cap ? 2 * e->cap : 64;
    node *grown = realloc(e->nodes, (size_t)cap * sizeof *grown);
    if (!grown) return nomem(p);
    e->nodes = grown;
    e->cap = cap;
  }
  e->nodes[e->count] = n;
  return e->count++;
}

/* Nesting of the parser itself, so that "((((x))))" cannot exhaust the C
 * stack even though it builds a single node. Twice the depth of trees: the
 * canonical text of a tree level holds at most one '(' and one prefix
 * operator ("-(-x)"), and it must parse again. */
#define MAX_NEST (2 * WG_EXPR_MAX_DEPTH)
static bool enter(parser *p) {
  if (++p->nest <= MAX_NEST) return true;
  fail(p, p->tok.pos, "parentheses and prefix operators nested deeper than %d levels",
       MAX_NEST);
  return false;
}
static void leave(parser *p) { p->nest--; }

/* --- typing -------------------------------------------------------------- */

static bool is_plain_literal(const node *n) {
  return n->kind == K_LIT && n->spelling == SPELL_PLAIN && n->type != WG_VT_BOOL;
}

/* Can a literal without suffix take type t without changing its value
 * (beyond the rounding of a float)? */
static bool literal_fits(const node *n, wg_value_type t) {
  if (vts[n->type].is_float) {
    if (t == WG_VT_F64) return true;
    return t == WG_VT_F32 && isfinite(wg_expr_to_f32(n->f));
  }
  return vts[t].is_float || int_fits(n->neg, n->mag, t);
}

static void literal_take(node *n, wg_value_type t) {
  if (vts[t].is_float && !vts[n->type].is_float) {
    n->f = n->neg ? -(double)n->mag : (double)n->mag;
    n->neg = false;
    n->mag = 0;
  }
  n->type = (unsigned char)t;
}

/* Makes kid *id of type t: a plain literal takes the type when it fits,
 * anything else gets an implicit conversion node. */
static void convert(parser *p, int *id, wg_value_type t) {
  if (*id < 0) return;
  node *kid = at(p, *id);
  if (kid->type == t) return;
  if (is_plain_literal(kid) && literal_fits(kid, t)) {
    literal_take(kid, t);
    return;
  }
  node c = {.kind = K_CAST, .type = (unsigned char)t, .implicit = 1,
            .pos = kid->pos, .kid = {*id}};
  *id = add_node(p, c, 1);
}

static wg_value_type promoted(wg_value_type t) { return t == WG_VT_BOOL ? WG_VT_I32 : t; }

/* The common type of n operands under C's usual arithmetic conversions
 * (bool counts as i32 unless keep_bool and every operand is bool), where a
 * plain literal first tries the type of the others. Converts them all. */
static wg_value_type unify(parser *p, int *ids, int n, bool keep_bool) {
  bool all_bool = true, any_typed = false;
  wg_value_type t = WG_VT_BOOL;
  for (int k = 0; k < n; k++) {
    const node *kid = at(p, ids[k]);
    all_bool &= kid->type == WG_VT_BOOL;
    if (is_plain_literal(kid)) continue;
    wg_value_type kt = promoted((wg_value_type)kid->type);
    if (!any_typed || kt > t) t = kt;
    any_typed = true;
  }
  if (keep_bool && all_bool) return WG_VT_BOOL;
  wg_value_type joined = any_typed ? t : WG_VT_BOOL;
  for (int k = 0; k < n; k++) {
    const node *kid = at(p, ids[k]);
    if (!is_plain_literal(kid)) continue;
    wg_value_type kt = any_typed && literal_fits(kid, t) ? t : (wg_value_type)kid->type;
    if (kt > joined) joined = kt;
  }
  return joined;
}

static int make_binary(parser *p, int op, size_t pos, int l, int r) {
  const struct binop_info *info = &binops[op];
  node n = {.kind = K_BIN, .op = (unsigned char)op, .pos = (unsigned)pos};
  int ids[2] = {l, r};
  if (info->cls == LOGIC) {
    n.type = WG_VT_BOOL;
  } else {
    wg_value_type t = unify(p, ids, 2, false);
    if (info->cls == MODULO && vts[t].is_float)
      return fail(p, pos, "'%%' needs integers, found %s", vts[t].name);
    convert(p, &ids[0], t);
    convert(p, &ids[1], t);
    n.type = (unsigned char)(info->cls == COMPARE ? WG_VT_BOOL : t);
  }
  if (ids[0] < 0 || ids[1] < 0) return -1;
  n.kid[0] = ids[0];
  n.kid[1] = ids[1];
  return add_node(p, n, 2);
}

static int make_call(parser *p, int fn, size_t pos, int *args) {
  const struct fn_info *f = &fns[fn];
  for (int k = 0; k < f->arity; k++)
    if (at(p, args[k])->type == WG_VT_BOOL)
      return fail(p, at(p, args[k])->pos, "'%s' takes numbers, found bool", f->name);
  wg_value_type t = unify(p, args, f->arity, false);
  if (f->domain == FLOAT_FN && !vts[t].is_float) t = WG_VT_F64;
  node n = {.kind = K_CALL, .type = (unsigned char)t, .op = (unsigned char)fn,
            .pos = (unsigned)pos};
  for (int k = 0; k < f->arity; k++) {
    convert(p, &args[k], t);
    if (args[k] < 0) return -1;
    n.kid[k] = args[k];
  }
  return add_node(p, n, f->arity);
}

/* --- the grammar --------------------------------------------------------- */

static int parse_cond(parser *p);

static bool accept(parser *p, int kind) {
  if (p->tok.kind != kind) return false;
  lex(p);
  return true;
}

/* A number token as a literal; neg when a unary minus came right before. */
static int parse_number(parser *p, size_t pos, bool neg) {
  const char *s = p->text + p->tok.pos;
  size_t len = p->tok.len;
  bool hex;
  size_t digits = number_body(s, len, &hex);
  if (hex && digits == 2) return fail(p, p->tok.pos, "'0x' needs hexadecimal digits");
  bool is_float = !hex && (memchr(s, '.', digits) || memchr(s, 'e', digits) ||
                           memchr(s, 'E', digits));
  const char *suffix = s + digits;
  size_t slen = len - digits;
  static const char *const suffixes[] = {"i32", "u32", "i64", "u64", "f32", "f64"};
  static const wg_value_type suffix_types[] = {WG_VT_I32, WG_VT_U32, WG_VT_I64,
                                               WG_VT_U64, WG_VT_F32, WG_VT_F64};
  int which = -1;
  for (int k = 0; k < 6; k++)
    if (slen == 3 && memcmp(suffix, suffixes[k], 3) == 0) which = k;
  if (slen && which < 0) {
    char buf[48];
    return fail(p, p->tok.pos + digits,
                "unknown suffix on the number %s (one of i32 u32 i64 u64 f32 f64)",
                describe(p, buf, sizeof buf));
  }
  node n = {.kind = K_LIT, .pos = (unsigned)pos,
            .spelling = which < 0 ? SPELL_PLAIN : SPELL_TYPED};
  wg_value_type t = which < 0 ? WG_VT_COUNT : suffix_types[which];
  if (is_float && t != WG_VT_COUNT && !vts[t].is_float)
    return fail(p, p->tok.pos, "a number with a fraction or exponent cannot be %s",
                vts[t].name);
  if (is_float || (t != WG_VT_COUNT && vts[t].is_float)) {
    bool ok;
    double v = parse_double(s, digits, &ok);
    if (!ok) return fail(p, p->tok.pos, "malformed or too long a number (at most 100 characters)");
    if (t == WG_VT_F32) v = wg_expr_to_f32(v);
    if (!isfinite(v))
      return fail(p, p->tok.pos, "the number is too large for %s",
                  t == WG_VT_F32 ? "f32" : "f64");
    n.f = neg ? -v : v;
    n.type = (unsigned char)(t == WG_VT_COUNT ? WG_VT_F64 : t);
  } else {
    uint64_t v = 0;
    unsigned base = hex ? 16 : 10;
    for (size_t k = hex ? 2 : 0; k < digits; k++) {
      unsigned d = is_digit(s[k]) ? (unsigned)(s[k] - '0') : (unsigned)((s[k] | 32) - 'a' + 10);
      if (v > (UINT64_MAX - d) / base)
        return fail(p, p->tok.pos, "the integer is larger than 2^64 - 1");
      v = v * base + d;
    }
    n.neg = neg && v != 0;
    n.mag = v;
    if (t == WG_VT_COUNT) { /* the smallest of i32, i64, u64 that holds it */
      t = int_fits(n.neg, v, WG_VT_I32) ? WG_VT_I32
          : int_fits(n.neg, v, WG_VT_I64) ? WG_VT_I64 : WG_VT_U64;
      if (!int_fits(n.neg, v, t))
        return fail(p, pos, "the integer is smaller than -2^63");
    } else if (!int_fits(n.neg, v, t)) {
      return fail(p, pos, "%s%llu does not fit in %s", n.neg ? "-" : "",
                  (unsigned long long)v, vts[t].name);
    }
    n.type = (unsigned char)t;
  }
  lex(p);
  return add_node(p, n, 0);
}

static int lookup_function(const char *s, size_t len) {
  for (size_t k = 0; k < WG_COUNT_OF(fns); k++)
    if (strlen(fns[k].name) == len && memcmp(fns[k].name, s, len) == 0) return (int)k;
  return -1;
}

static int lookup_type(const char *s, size_t len) {
  for (int t = 0; t < WG_VT_COUNT; t++)
    if (strlen(vts[t].name) == len && memcmp(vts[t].name, s, len) == 0) return t;
  return -1;
}

/* "x, i, n and p0..p1": the names a role has, for messages. */
static void names_in_scope(const parser *p, char *buf, size_t size) {
  const wg_expr_scope *sc = p->scope;
  size_t used = 0;
  buf[0] = '\0';
  for (int v = 0; v < V_P0; v++) {
    if (!(role_vars[sc->role] >> v & 1) || (v <= V_W && v >= sc->ninputs)) continue;
    used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", var_names[v]);
    if (used >= size) return;
  }
  if (sc->nparams)
    snprintf(buf + used, size - used, "%sp0..p%d", used ? ", " : "", sc->nparams - 1);
  else if (!used)
    snprintf(buf, size, "no variables");
}

static int parse_variable(parser *p, const char *s, size_t len, size_t pos) {
  const wg_expr_scope *sc = p->scope;
  int v = -1;
  for (int k = 0; k < V_COUNT; k++)
    if (strlen(var_names[k]) == len && memcmp(var_names[k], s, len) == 0) v = k;
  bool allowed = v >= 0 && (role_vars[sc->role] >> v & 1) &&
                 !(v <= V_W && v >= sc->ninputs) && !(v >= V_P0 && v - V_P0 >= sc->nparams);
  if (!allowed) {
    char names[96];
    names_in_scope(p, names, sizeof names);
    int n = len > 24 ? 24 : (int)len;
    return fail(p, pos, "%s '%.*s%s'; %s %s expression here has %s",
                v >= 0 ? "no variable" : "unknown name", n, s, len > 24 ? "..." : "",
                sc->role == WG_EXPR_IDENTITY ? "an" : "a", role_names[sc->role], names);
  }
  wg_value_type t = v <= V_W ? sc->inputs[v]
                    : v == V_I || v == V_N ? WG_VT_I64
                    : v >= V_P0 ? sc->params[v - V_P0] : sc->acc;
  node n = {.kind = K_VAR, .type = (unsigned char)t, .op = (unsigned char)v,
            .pos = (unsigned)pos};
  return add_node(p, n, 0);
}

/* A call, a cast, true/false or a variable. */
static int parse_name(parser *p) {
  const char *s = p->text + p->tok.pos;
  size_t len = p->tok.len, pos = p->tok.pos;
  if ((len == 4 && memcmp(s, "true", 4) == 0) || (len == 5 && memcmp(s, "false", 5) == 0)) {
    lex(p);
    node n = {.kind = K_LIT, .type = WG_VT_BOOL, .mag = len == 4, .pos = (unsigned)pos};
    return add_node(p, n, 0);
  }
  int fn = lookup_function(s, len), cast = lookup_type(s, len);
  bool halves = (len == 3 && memcmp(s, "f16", 3) == 0) || (len == 4 && memcmp(s, "bf16", 4) == 0);
  if (halves)
    return fail(p, pos, "there is no %.*s cast: f16 and bf16 values are computed as f32",
                (int)len, s);
  if (fn < 0 && cast < 0) {
    lex(p);
    if (p->tok.kind == T_LPAREN) {
      int n = len > 24 ? 24 : (int)len;
      return fail(p, pos, "unknown function '%.*s%s' (docs/expressions.md lists them)",
                  n, s, len > 24 ? "..." : "");
    }
    return parse_variable(p, s, len, pos);
  }
  const char *name = fn >= 0 ? fns[fn].name : vts[cast].name;
  lex(p);
  char what[48];
  snprintf(what, sizeof what, "'(' after '%s'", name);
  if (!accept(p, T_LPAREN)) return fail_expected(p, what);
  if (!enter(p)) return -1;
  int arity = fn >= 0 ? fns[fn].arity : 1, args[2], got = 0;
  snprintf(what, sizeof what, "',' or ')' in the arguments of '%s'", name);
  if (p->tok.kind != T_RPAREN) {
    for (;;) {
      int a = parse_cond(p);
      if (a < 0) return -1;
      if (got < arity) args[got] = a;
      got++;
      if (accept(p, T_COMMA)) continue;
      if (p->tok.kind != T_RPAREN) return fail_expected(p, what);
      break;
    }
  }
  leave(p);
  if (got != arity)
    return fail(p, pos, "'%s' takes %d argument%s, found %d", name, arity,
                arity == 1 ? "" : "s", got);
  lex(p); /* the ')' */
  if (fn >= 0) return make_call(p, fn, pos, args);
  node n = {.kind = K_CAST, .type = (unsigned char)cast, .pos = (unsigned)pos, .kid = {args[0]}};
  return add_node(p, n, 1);
}

static int parse_unary(parser *p) {
  size_t pos = p->tok.pos;
  if (p->tok.kind == T_BINOP && p->tok.op == OP_SUB) {
    lex(p);
    if (p->tok.kind == T_NUM) return parse_number(p, pos, true); /* -5 is one literal */
    if (!enter(p)) return -1;
    int kid = parse_unary(p);
    leave(p);
    if (kid < 0) return -1;
    convert(p, &kid, promoted((wg_value_type)at(p, kid)->type));
    if (kid < 0) return -1;
    node n = {.kind = K_NEG, .type = at(p, kid)->type, .pos = (unsigned)pos, .kid = {kid}};
    return add_node(p, n, 1);
  }
  if (accept(p, T_NOT)) {
    if (!enter(p)) return -1;
    int kid = parse_unary(p);
    leave(p);
    if (kid < 0) return -1;
    node n = {.kind = K_NOT, .type = WG_VT_BOOL, .pos = (unsigned)pos, .kid = {kid}};
    return add_node(p, n, 1);
  }
  if (p->tok.kind == T_NUM) return parse_number(p, pos, false);
  if (p->tok.kind == T_NAME) return parse_name(p);
  if (accept(p, T_LPAREN)) {
    if (!enter(p)) return -1;
    int kid = parse_cond(p);
    leave(p);
    if (kid < 0) return -1;
    if (!accept(p, T_RPAREN)) return fail_expected(p, "')' or an operator");
    return kid;
  }
  return fail_expected(p, "a number, a name, '(' or a unary operator");
}

/* Binary operators of precedence >= min, by precedence climbing. */
static int parse_binary(parser *p, int min) {
  int left = parse_unary(p);
  while (left >= 0 && p->tok.kind == T_BINOP && binops[p->tok.op].prec >= min) {
    int op = p->tok.op;
    size_t pos = p->tok.pos;
    lex(p);
    int right = parse_binary(p, binops[op].prec + 1);
    if (right < 0) return -1;
    left = make_binary(p, op, pos, left, right);
  }
  return left;
}

static int parse_cond(parser *p) {
  int c = parse_binary(p, PREC_OR);
  if (c < 0 || p->tok.kind != T_QUESTION) return c;
  size_t pos = p->tok.pos;
  lex(p);
  if (!enter(p)) return -1;
  int ids[2];
  ids[0] = parse_cond(p);
  if (ids[0] >= 0 && !accept(p, T_COLON)) ids[0] = fail_expected(p, "':' or an operator");
  ids[1] = ids[0] < 0 ? -1 : parse_cond(p);
  leave(p);
  if (ids[1] < 0) return -1;
  wg_value_type t = unify(p, ids, 2, true);
  convert(p, &ids[0], t);
  convert(p, &ids[1], t);
  if (ids[0] < 0 || ids[1] < 0) return -1;
  node n = {.kind = K_COND, .type = (unsigned char)t, .pos = (unsigned)pos,
            .kid = {c, ids[0], ids[1]}};
  return add_node(p, n, 3);
}

/* --- printing ------------------------------------------------------------ */

static int prec_of(const node *n) {
  switch (n->kind) {
  case K_BIN: return binops[n->op].prec;
  case K_COND: return PREC_COND;
  case K_NEG: case K_NOT: return PREC_UNARY;
  default: return PREC_ATOM;
  }
}

static const node *skip_implicit(const wg_expr *e, const node *n) {
  while (n->kind == K_CAST && n->implicit) n = &e->nodes[n->kid[0]];
  return n;
}

static void format_literal(const node *n, wg_buf *out) {
  char buf[64];
  if (n->type == WG_VT_BOOL) {
    wg_buf_puts(out, n->mag ? "true" : "false");
    return;
  }
  /* A typed f32 holds a float; a plain literal keeps the double it was
   * parsed as, whatever type it took, and must print as that double. */
  if (vts[n->type].is_float)
    print_double(buf, sizeof buf, n->f, n->type == WG_VT_F32 && n->spelling == SPELL_TYPED);
  else snprintf(buf, sizeof buf, "%s%llu", n->neg ? "-" : "", (unsigned long long)n->mag);
  wg_buf_puts(out, buf);
  if (n->spelling == SPELL_TYPED) wg_buf_puts(out, vts[n->type].name);
}

static void format_node(const wg_expr *e, const node *n, int min, wg_buf *out) {
  n = skip_implicit(e, n);
  int prec = prec_of(n);
  bool parens = prec < min;
  if (parens) wg_buf_puts(out, "(");
  const node *k0 = n->kid[0] >= 0 ? &e->nodes[n->kid[0]] : NULL;
  switch (n->kind) {
  case K_LIT: format_literal(n, out); break;
  case K_VAR: wg_buf_puts(out, var_names[n->op]); break;
  case K_NEG: case K_NOT: {
    wg_buf_puts(out, n->kind == K_NEG ? "-" : "!");
    /* "-(5)" and "-(-x)": "-5" would read as one literal, "--x" is ugly */
    const node *operand = skip_implicit(e, k0);
    bool wrap = n->kind == K_NEG && (operand->kind == K_NEG ||
                                     (operand->kind == K_LIT && operand->type != WG_VT_BOOL));
    format_node(e, k0, wrap ? PREC_ATOM + 1 : PREC_UNARY, out);
    break;
  }
  case K_BIN:
    format_node(e, k0, prec, out);
    wg_buf_printf(out, " %s ", binops[n->op].text);
    format_node(e, &e->nodes[n->kid[1]], prec + 1, out);
    break;
  case K_COND:
    format_node(e, k0, PREC_OR, out);
    wg_buf_puts(out, " ? ");
    format_node(e, &e->nodes[n->kid[1]], PREC_COND, out);
    wg_buf_puts(out, " : ");
    format_node(e, &e->nodes[n->kid[2]], PREC_COND, out);
    break;
  case K_CALL: case K_CAST: {
    wg_buf_puts(out, n->kind == K_CALL ? fns[n->op].name : vts[n->type].name);
    wg_buf_puts(out, "(");
    int arity = n->kind == K_CALL ? fns[n->op].arity : 1;
    for (int k = 0; k < arity; k++) {
      if (k) wg_buf_puts(out, ", ");
      format_node(e, &e->nodes[n->kid[k]], PREC_COND, out);
    }
    wg_buf_puts(out, ")");
    break;
  }
  }
  if (parens) wg_buf_puts(out, ")");
}

static void render_literal(const node *n, wg_buf *out) {
  const vt_info *t = &vts[n->type];
  if (n->type == WG_VT_BOOL) {
    wg_buf_puts(out, n->mag ? "true" : "false");
  } else if (t->is_float) {
    char buf[64];
    double v = n->type == WG_VT_F32 ? (double)wg_expr_to_f32(n->f) : n->f;
    snprintf(buf, sizeof buf, "%.*g", n->type == WG_VT_F32 ? 9 : 17, v);
    char point = localeconv()->decimal_point[0];
    for (char *c = buf; *c; c++)
      if (*c == point) *c = '.';
    if (!strpbrk(buf, ".e")) strcat(buf, ".0");
    bool neg = signbit(v);
    wg_buf_printf(out, "%s%s%s%s", neg ? "(" : "", buf, t->suffix, neg ? ")" : "");
  } else if (n->neg && n->mag == (n->type == WG_VT_I32 ? 0x80000000u : 0x8000000000000000u)) {
    /* The most negative value has no literal of its own in C++. */
    wg_buf_printf(out, "(-%llu%s - 1)", (unsigned long long)(n->mag - 1), t->suffix);
  } else {
    wg_buf_printf(out, "%s%llu%s%s", n->neg ? "(-" : "", (unsigned long long)n->mag,
                  t->suffix, n->neg ? ")" : "");
  }
}

static void render_node(const wg_expr *e, const node *n, wg_buf *out);

static void render_kid(const wg_expr *e, const node *n, int k, wg_buf *out) {
  render_node(e, &e->nodes[n->kid[k]], out);
}

static void render_cast(const wg_expr *e, const node *n, wg_buf *out) {
  const node *kid = &e->nodes[n->kid[0]];
  const vt_info *to = &vts[n->type], *from = &vts[kid->type];
  if (n->type == kid->type) {
    render_node(e, kid, out);
  } else if (n->type == WG_VT_BOOL) {
    wg_buf_puts(out, "(");
    render_node(e, kid, out);
    wg_buf_puts(out, " != 0)");
  } else if (kid->type == WG_VT_BOOL && to->is_float) {
    /* A select, not a conversion: CUDA 13.0's ptxas was seen to fold
     * cvt.rn.f32.u32 of a 0/1 select into the integers 0/1, a wrong
     * float, when the float's bits were then taken (tests/test_expr_gpu.c,
     * seed 0x4714957494508a9a). */
    wg_buf_puts(out, "(");
    render_node(e, kid, out);
    wg_buf_puts(out, to->ctype[0] == 'f' ? " ? 1.0f : 0.0f)" : " ? 1.0 : 0.0)");
  } else if (from->is_float && !to->is_float) {
    wg_buf_printf(out, "%s(", kid->type == WG_VT_F32 ? to->from_f32 : to->from_f64);
    render_node(e, kid, out);
    wg_buf_puts(out, ")");
  } else {
    wg_buf_printf(out, "((%s)", to->ctype);
    render_node(e, kid, out);
    wg_buf_puts(out, ")");
  }
}

static void render_binary(const wg_expr *e, const node *n, wg_buf *out) {
  const node *l = &e->nodes[n->kid[0]];
  const vt_info *t = &vts[l->type]; /* both sides have it */
  const char *op = binops[n->op].text, *helper = NULL;
  if (n->op == OP_DIV && !t->is_float) helper = "wg_div";
  if (n->op == OP_MOD) helper = "wg_mod";
  if (helper) { /* integer / and %: defined for every operand */
    wg_buf_printf(out, "%s(", helper);
    render_kid(e, n, 0, out);
    wg_buf_puts(out, ", ");
    render_kid(e, n, 1, out);
    wg_buf_puts(out, ")");
  } else if (binops[n->op].cls == ARITH && t->is_signed && !t->is_float) {
    /* Signed + - * wrap through the unsigned twin instead of being UB. */
    wg_buf_printf(out, "((%s)((%s)", t->ctype, t->utype);
    render_kid(e, n, 0, out);
    wg_buf_printf(out, " %s (%s)", op, t->utype);
    render_kid(e, n, 1, out);
    wg_buf_puts(out, "))");
  } else {
    wg_buf_puts(out, "(");
    render_kid(e, n, 0, out);
    wg_buf_printf(out, " %s ", op);
    render_kid(e, n, 1, out);
    wg_buf_puts(out, ")");
  }
}

static void render_call(const wg_expr *e, const node *n, wg_buf *out) {
  const struct fn_info *f = &fns[n->op];
  const char *pattern = n->type == WG_VT_F32 ? f->f32 : n->type == WG_VT_F64 ? f->f64 : f->integer;
  for (const char *c = pattern; *c; c++) {
    if (*c == '$') {
      render_kid(e, n, *++c - '0', out);
      continue;
    }
    const char *next = strchr(c, '$');
    size_t run = next ? (size_t)(next - c) : strlen(c);
    wg_buf_append(out, c, run);
    c += run - 1;
  }
}

static void render_node(const wg_expr *e, const node *n, wg_buf *out) {
  const vt_info *t = &vts[n->type];
  switch (n->kind) {
  case K_LIT: render_literal(n, out); break;
  case K_VAR: wg_buf_printf(out, "wg_%s", var_names[n->op]); break;
  case K_NEG:
    if (t->is_signed && !t->is_float) wg_buf_printf(out, "((%s)(0 - (%s)", t->ctype, t->utype);
    else wg_buf_puts(out, "(-");
    render_kid(e, n, 0, out);
    wg_buf_puts(out, t->is_signed && !t->is_float ? "))" : ")");
    break;
  case K_NOT:
    wg_buf_puts(out, "(!");
    render_kid(e, n, 0, out);
    wg_buf_puts(out, ")");
    break;
  case K_BIN: render_binary(e, n, out); break;
  case K_COND:
    wg_buf_puts(out, "(");
    render_kid(e, n, 0, out);
    wg_buf_puts(out, " ? ");
    render_kid(e, n, 1, out);
    wg_buf_puts(out, " : ");
    render_kid(e, n, 2, out);
    wg_buf_puts(out, ")");
    break;
  case K_CALL: render_call(e, n, out); break;
  case K_CAST: render_cast(e, n, out); break;
  }
}

/* --- the API ------------------------------------------------------------- */

static bool scope_valid(const wg_expr_scope *sc) {
  if ((unsigned)sc->role >= WG_EXPR_ROLE_COUNT || sc->ninputs < 0 || sc->ninputs > 4 ||
      sc->nparams < 0 || sc->nparams > 8)
    return false;
  for (int k = 0; k < sc->ninputs; k++)
    if ((unsigned)sc->inputs[k] >= WG_VT_COUNT) return false;
  for (int k = 0; k < sc->nparams; k++)
    if ((unsigned)sc->params[k] >= WG_VT_COUNT) return false;
  if ((sc->role == WG_EXPR_COMBINE || sc->role == WG_EXPR_FINAL) &&
      (unsigned)sc->acc >= WG_VT_COUNT)
    return false;
  return true;
}

int wg_expr_parse(wg_context *ctx, wg_expr **out, const char *text, size_t len,
                  const wg_expr_scope *scope) {
  if (out) *out = NULL;
  if (!out || (!text && len) || !scope)
    return wg_fail(ctx, WG_EINVAL, "expression: a NULL argument");
  if (!scope_valid(scope))
    return wg_fail(ctx, WG_EINVAL, "expression: the scope's role, counts or types are out of range");
  if (len > WG_EXPR_MAX_LEN)
    return wg_fail(ctx, WG_ESPEC, "%s expression: at %d: longer than %d bytes",
                   role_names[scope->role], WG_EXPR_MAX_LEN, WG_EXPR_MAX_LEN);
  wg_expr *e = calloc(1, sizeof *e);
  if (!e) return wg_fail(ctx, WG_ENOMEM, "expression: out of memory");
  parser p = {.ctx = ctx, .text = text ? text : "", .len = len, .scope = scope, .e = e};
  lex(&p);
  e->root = parse_cond(&p);
  if (e->root >= 0 && p.tok.kind != T_END) fail_expected(&p, "an operator or the end");
  if (p.status == WG_OK) {
    /* Parsing the canonical text must succeed too, so it obeys the cap. */
    wg_buf canon = {0};
    wg_expr_format(e, &canon);
    if (canon.failed) nomem(&p);
    else if (canon.len > WG_EXPR_MAX_LEN)
      fail(&p, 0, "the canonical form is longer than %d bytes", WG_EXPR_MAX_LEN);
    wg_buf_free(&canon);
  }
  if (p.status != WG_OK) {
    wg_expr_free(e);
    return p.status;
  }
  for (int k = 0; k < e->count; k++)
    if (e->nodes[k].kind == K_VAR) e->uses |= 1u << e->nodes[k].op;
  *out = e;
  return WG_OK;
}

wg_value_type wg_expr_type(const wg_expr *e) {
  return e ? (wg_value_type)e->nodes[e->root].type : WG_VT_COUNT;
}

int wg_expr_format(const wg_expr *e, wg_buf *out) {
  if (!e || !out) return WG_EINVAL;
  format_node(e, &e->nodes[e->root], PREC_COND, out);
  return out->failed ? WG_ENOMEM : WG_OK;
}

int wg_expr_render(const wg_expr *e, wg_buf *out) {
  if (!e || !out) return WG_EINVAL;
  render_node(e, &e->nodes[e->root], out);
  return out->failed ? WG_ENOMEM : WG_OK;
}

unsigned wg_expr_uses(const wg_expr *e) { return e ? e->uses : 0; }

void wg_expr_free(wg_expr *e) {
  if (!e) return;
  free(e->nodes);
  free(e);
}

wg_value_type wg_value_type_of(wg_type t) {
  switch (t) {
  case WG_F16: case WG_BF16: case WG_F32: return WG_VT_F32;
  case WG_F64: return WG_VT_F64;
  case WG_I32: return WG_VT_I32;
  case WG_U32: return WG_VT_U32;
  case WG_I64: return WG_VT_I64;
  case WG_U64: return WG_VT_U64;
  default: return WG_VT_COUNT;
  }
}

const char *wg_vt_name(wg_value_type t) {
  return (unsigned)t < WG_VT_COUNT ? vts[t].name : NULL;
}
const char *wg_vt_ctype(wg_value_type t) {
  return (unsigned)t < WG_VT_COUNT ? vts[t].ctype : NULL;
}
const char *wg_expr_role_name(wg_expr_role role) {
  return (unsigned)role < WG_EXPR_ROLE_COUNT ? role_names[role] : NULL;
}

/* Division and remainder: x/0 and x%0 are 0, MIN/-1 wraps to MIN (the
 * hardware would trap or give garbage, and C++ calls both undefined). */
#define SIGNED_HELPERS(T, U)                                                     \
  "static __device__ __forceinline__ " T " wg_div(" T " a, " T " b) {"           \
  " return b == 0 ? (" T ")0 : b == -1 ? (" T ")(0 - (" U ")a) : a / b; }\n"     \
  "static __device__ __forceinline__ " T " wg_mod(" T " a, " T " b) {"           \
  " return b == 0 || b == -1 ? (" T ")0 : a % b; }\n"                            \
  "static __device__ __forceinline__ " T " wg_abs(" T " a) {"                    \
  " return a < 0 ? (" T ")(0 - (" U ")a) : a; }\n"
#define UNSIGNED_HELPERS(T)                                                      \
  "static __device__ __forceinline__ " T " wg_div(" T " a, " T " b) {"           \
  " return b == 0 ? (" T ")0 : a / b; }\n"                                       \
  "static __device__ __forceinline__ " T " wg_mod(" T " a, " T " b) {"           \
  " return b == 0 ? (" T ")0 : a % b; }\n"                                       \
  "static __device__ __forceinline__ " T " wg_abs(" T " a) { return a; }\n"
/* min/max: integers plainly; floats give NaN when either side is NaN
 * (fmin/fmax are the functions where a NaN loses). */
#define MINMAX_HELPERS(T, NANCHECK)                                              \
  "static __device__ __forceinline__ " T " wg_min(" T " a, " T " b) {"           \
  " return (a < b" NANCHECK ") ? a : b; }\n"                                     \
  "static __device__ __forceinline__ " T " wg_max(" T " a, " T " b) {"           \
  " return (a > b" NANCHECK ") ? a : b; }\n"

/* Float -> integer: NaN is 0, values at or past a bound (LO and HI are
 * exact powers of two in every float type) saturate, the rest truncate
 * through the intrinsic, which is exact inside the range. */
#define TO_INT_HELPER(NAME, F, T, LO, LOVAL, HI, HIVAL, INTRINSIC)               \
  "static __device__ __forceinline__ " T " " NAME "(" F " x) {"                 \
  " return x != x ? (" T ")0 : x <= (" F ")" LO " ? (" T ")" LOVAL              \
  " : x >= (" F ")" HI " ? (" T ")" HIVAL " : " INTRINSIC "(x); }\n"
#define TO_INT_HELPERS(F, P, I)                                                   \
  TO_INT_HELPER("wg_" P "_to_i32", F, "int", "-2147483648.0", "(-2147483647 - 1)", \
                "2147483648.0", "2147483647", "__" I "2int_rz")                   \
  TO_INT_HELPER("wg_" P "_to_u32", F, "unsigned int", "0.0", "0u",                \
                "4294967296.0", "4294967295u", "__" I "2uint_rz")                 \
  TO_INT_HELPER("wg_" P "_to_i64", F, "long long", "-9223372036854775808.0",      \
                "(-9223372036854775807LL - 1)", "9223372036854775808.0",          \
                "9223372036854775807LL", "__" I "2ll_rz")                         \
  TO_INT_HELPER("wg_" P "_to_u64", F, "unsigned long long", "0.0", "0ULL",        \
                "18446744073709551616.0", "18446744073709551615ULL", "__" I "2ull_rz")

/* The helpers in pieces: C11 promises only 4095 characters a literal. */
static const char *const helper_pieces[] = {
  "#ifndef WG_EXPR_HELPERS\n"
  "#define WG_EXPR_HELPERS\n"
  "/* helpers of rendered expressions (warpgen src/expr.c) */\n"
  SIGNED_HELPERS("int", "unsigned int")
  SIGNED_HELPERS("long long", "unsigned long long"),
  UNSIGNED_HELPERS("unsigned int")
  UNSIGNED_HELPERS("unsigned long long")
  MINMAX_HELPERS("int", "")
  MINMAX_HELPERS("unsigned int", "")
  MINMAX_HELPERS("long long", "")
  MINMAX_HELPERS("unsigned long long", "")
  MINMAX_HELPERS("float", " || a != a")
  MINMAX_HELPERS("double", " || a != a"),
  TO_INT_HELPERS("float", "f32", "float"),
  TO_INT_HELPERS("double", "f64", "double")
  "#endif\n",
};
static char helpers_text[8192];
static pthread_once_t helpers_once = PTHREAD_ONCE_INIT;

static void join_helpers(void) {
  size_t len = 0;
  for (size_t k = 0; k < sizeof helper_pieces / sizeof helper_pieces[0]; k++) {
    const size_t n = strlen(helper_pieces[k]);
    if (len + n >= sizeof helpers_text) break; /* cannot happen: sized above */
    memcpy(helpers_text + len, helper_pieces[k], n);
    len += n;
  }
  helpers_text[len] = '\0';
}

const char *wg_expr_helpers(void) {
  pthread_once(&helpers_once, join_helpers);
  return helpers_text;
}
