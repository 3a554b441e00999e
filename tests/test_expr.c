/*
 * test_expr.c - the expression language (src/expr.c): precedence and
 * associativity, typing and promotions, every function, every error with
 * its position, the caps, canonical round trips, the rendering of literals
 * and operators, and (argv[1] = "nvrtc", in the nvrtc suite) that rendered
 * CUDA of every type, operator, function and cast compiles with NVRTC.
 */
#include "expr.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wg_context *ctx;

static void setup(void) {
  wg_options o = WG_OPTIONS_INIT;
  o.disk_cache = -1;
  ck_assert_int_eq(wg_context_create(&ctx, &o), WG_OK);
}
static void teardown(void) { wg_context_destroy(ctx); }

/* map over x:f32 y:i32 z:u64 w:f64, p0:f64 p1:u32 p2:bool */
static const wg_expr_scope map_scope = {
  WG_EXPR_MAP, 4, {WG_VT_F32, WG_VT_I32, WG_VT_U64, WG_VT_F64},
  3, {WG_VT_F64, WG_VT_U32, WG_VT_BOOL}, WG_VT_F32};

static wg_expr *parse_in(const wg_expr_scope *sc, const char *text) {
  wg_expr *e = NULL;
  int rc = wg_expr_parse(ctx, &e, text, strlen(text), sc);
  ck_assert_msg(rc == WG_OK, "'%s': %s", text, wg_errmsg(ctx));
  return e;
}

/* format or render of text, into a static buffer. */
static const char *show(const wg_expr_scope *sc, const char *text, bool cuda) {
  static char out[8192];
  wg_expr *e = parse_in(sc, text);
  wg_buf b = {0};
  ck_assert_int_eq(cuda ? wg_expr_render(e, &b) : wg_expr_format(e, &b), WG_OK);
  snprintf(out, sizeof out, "%s", b.data);
  wg_buf_free(&b);
  wg_expr_free(e);
  return out;
}
static const char *canon(const char *text) { return show(&map_scope, text, false); }
static const char *cuda(const char *text) { return show(&map_scope, text, true); }

static wg_value_type type_in(const wg_expr_scope *sc, const char *text) {
  wg_expr *e = parse_in(sc, text);
  wg_value_type t = wg_expr_type(e);
  wg_expr_free(e);
  return t;
}

static void expect_error_in(const wg_expr_scope *sc, const char *text, const char *needle) {
  wg_expr *e = (wg_expr *)&e;
  int rc = wg_expr_parse(ctx, &e, text, strlen(text), sc);
  ck_assert_msg(rc == WG_ESPEC, "'%s' was accepted (rc %d)", text, rc);
  ck_assert_ptr_null(e);
  ck_assert_msg(strstr(wg_errmsg(ctx), needle), "'%s': message '%s' lacks '%s'", text,
                wg_errmsg(ctx), needle);
}
static void expect_error(const char *text, const char *needle) {
  expect_error_in(&map_scope, text, needle);
}

START_TEST(precedence_and_associativity) {
  static const char *const cases[][2] = {
    {"x+y*w", "x + y * w"},
    {"(x+y)*w", "(x + y) * w"},
    {"x-y-w", "x - y - w"},
    {"x-(y-w)", "x - (y - w)"},
    {"(x-y)-w", "x - y - w"},
    {"x/y*w", "x / y * w"},
    {"x/(y*w)", "x / (y * w)"},
    {"x<y==w>x", "x < y == w > x"},
    {"x<(y==w)", "x < (y == w)"},
    {"x||y&&w", "x || y && w"},
    {"(x||y)&&w", "(x || y) && w"},
    {"!x==y", "!x == y"},
    {"!(x==y)", "!(x == y)"},
    {"-x*y", "-x * y"},
    {"-(x*y)", "-(x * y)"},
    {"x?y:w?x:y", "x ? y : w ? x : y"},
    {"(x?y:w)?x:y", "(x ? y : w) ? x : y"},
    {"x?y?x:w:y", "x ? y ? x : w : y"},
    {"x+(y?x:w)", "x + (y ? x : w)"},
    {"x>0?x:0", "x > 0.0 ? x : 0.0"},
    {"((((x))))", "x"},
    {"  x\t*\n( y )\r", "x * y"},
    {"fmax( x ,y )", "fmax(x, y)"},
    {"- -x", "-(-x)"},
    {"-(-5)", "-(-5)"},
    {"-(5)", "-(5)"},
    {"x - -1", "x - -1.0"},
    {"y%3%2", "y % 3 % 2"},
    {"y%(3%2)", "y % (3 % 2)"},
  };
  for (size_t k = 0; k < WG_COUNT_OF(cases); k++)
    ck_assert_msg(strcmp(canon(cases[k][0]), cases[k][1]) == 0, "'%s' -> '%s', want '%s'",
                  cases[k][0], canon(cases[k][0]), cases[k][1]);
  /* the tree, not just the text: a - b - c subtracts c last */
  ck_assert_str_eq(cuda("x-y-w"), "(((double)(wg_x - ((float)wg_y))) - wg_w)");
}
END_TEST

START_TEST(promotions) {
  /* x + y for each pair of types follows bool < i32 < u32 < i64 < u64 <
   * f32 < f64, with bool as i32. */
  for (int a = 0; a < WG_VT_COUNT; a++)
    for (int b = 0; b < WG_VT_COUNT; b++) {
      wg_expr_scope sc = {WG_EXPR_MAP, 2, {(wg_value_type)a, (wg_value_type)b}, 0, {0}, 0};
      int want = a > b ? a : b;
      if (want == WG_VT_BOOL) want = WG_VT_I32;
      ck_assert_int_eq(type_in(&sc, "x + y"), want);
      ck_assert_int_eq(type_in(&sc, "x < y"), WG_VT_BOOL);
      ck_assert_int_eq(type_in(&sc, "x && y"), WG_VT_BOOL);
      int cond = a == WG_VT_BOOL && b == WG_VT_BOOL ? WG_VT_BOOL : want;
      ck_assert_int_eq(type_in(&sc, "x ? x : y"), cond);
    }
  /* literals without suffix take the other side's type when they fit */
  ck_assert_int_eq(type_in(&map_scope, "x * 2"), WG_VT_F32);
  ck_assert_int_eq(type_in(&map_scope, "x * 0.5"), WG_VT_F32);
  ck_assert_int_eq(type_in(&map_scope, "x * 1e300"), WG_VT_F64);   /* no f32 holds it */
  ck_assert_int_eq(type_in(&map_scope, "y * 2"), WG_VT_I32);
  ck_assert_int_eq(type_in(&map_scope, "y * 0.5"), WG_VT_F64);     /* as in C */
  ck_assert_int_eq(type_in(&map_scope, "y + 3000000000"), WG_VT_I64);
  ck_assert_int_eq(type_in(&map_scope, "p1 - 1"), WG_VT_U32);
  ck_assert_int_eq(type_in(&map_scope, "p1 * -1"), WG_VT_U32);     /* -1 wraps, as in C */
  ck_assert_int_eq(type_in(&map_scope, "x * 2i64"), WG_VT_F32);
  ck_assert_int_eq(type_in(&map_scope, "y * 2i64"), WG_VT_I64);
  ck_assert_int_eq(type_in(&map_scope, "2"), WG_VT_I32);
  ck_assert_int_eq(type_in(&map_scope, "2147483648"), WG_VT_I64);
  ck_assert_int_eq(type_in(&map_scope, "9223372036854775808"), WG_VT_U64);
  ck_assert_int_eq(type_in(&map_scope, "2.5"), WG_VT_F64);
  ck_assert_int_eq(type_in(&map_scope, "2.5f32"), WG_VT_F32);
  ck_assert_int_eq(type_in(&map_scope, "2f32"), WG_VT_F32);
  ck_assert_int_eq(type_in(&map_scope, "true"), WG_VT_BOOL);
  ck_assert_int_eq(type_in(&map_scope, "true + true"), WG_VT_I32);
  ck_assert_int_eq(type_in(&map_scope, "-p2"), WG_VT_I32);
  ck_assert_int_eq(type_in(&map_scope, "i"), WG_VT_I64);
  ck_assert_int_eq(type_in(&map_scope, "n * y"), WG_VT_I64);
  ck_assert_int_eq(type_in(&map_scope, "y > 0 ? 1 : 2.5"), WG_VT_F64);
  ck_assert_int_eq(type_in(&map_scope, "f32(w)"), WG_VT_F32);
  ck_assert_int_eq(type_in(&map_scope, "u64(x)"), WG_VT_U64);
  ck_assert_int_eq(type_in(&map_scope, "bool(x)"), WG_VT_BOOL);
  /* the canonical text shows the adopted literal as its type's kind */
  ck_assert_str_eq(canon("x * 2"), "x * 2.0");
  ck_assert_str_eq(canon("x * 2.0"), "x * 2.0");
  ck_assert_str_eq(canon("2 * 2.5"), "2.0 * 2.5");
  ck_assert_str_eq(canon("y * 2"), "y * 2");
}
END_TEST

START_TEST(every_function) {
  static const struct {
    const char *name;
    int arity;
    const char *f32, *f64, *i32; /* NULL: integers compute in f64 */
  } fn[] = {
    {"abs", 1, "fabsf(", "fabs(", "wg_abs("},  {"min", 2, "wg_min(", "wg_min(", "wg_min("},
    {"max", 2, "wg_max(", "wg_max(", "wg_max("}, {"fmin", 2, "fminf(", "fmin(", NULL},
    {"fmax", 2, "fmaxf(", "fmax(", NULL},       {"pow", 2, "powf(", "pow(", NULL},
    {"sqrt", 1, "sqrtf(", "sqrt(", NULL},       {"rsqrt", 1, "rsqrtf(", "rsqrt(", NULL},
    {"exp", 1, "expf(", "exp(", NULL},          {"exp2", 1, "exp2f(", "exp2(", NULL},
    {"expm1", 1, "expm1f(", "expm1(", NULL},    {"log", 1, "logf(", "log(", NULL},
    {"log2", 1, "log2f(", "log2(", NULL},       {"log1p", 1, "log1pf(", "log1p(", NULL},
    {"sin", 1, "sinf(", "sin(", NULL},          {"cos", 1, "cosf(", "cos(", NULL},
    {"tanh", 1, "tanhf(", "tanh(", NULL},       {"erf", 1, "erff(", "erf(", NULL},
    {"floor", 1, "floorf(", "floor(", NULL},    {"ceil", 1, "ceilf(", "ceil(", NULL},
    {"sigmoid", 1, "(1.0f / (1.0f + expf(-wg_", "(1.0 / (1.0 + exp(-", NULL},
  };
  wg_expr_scope sc = {WG_EXPR_MAP, 2, {WG_VT_F32, WG_VT_F32}, 0, {0}, 0};
  for (size_t k = 0; k < WG_COUNT_OF(fn); k++) {
    char text[64];
    snprintf(text, sizeof text, fn[k].arity == 1 ? "%s(x)" : "%s(x, y)", fn[k].name);
    static const wg_value_type types[] = {WG_VT_F32, WG_VT_F64, WG_VT_I32, WG_VT_U64};
    for (size_t t = 0; t < WG_COUNT_OF(types); t++) {
      sc.inputs[0] = sc.inputs[1] = types[t];
      const char *want = t == 0 ? fn[k].f32 : t == 1 ? fn[k].f64 : fn[k].i32;
      wg_value_type rt = want || t < 2 ? types[t] : WG_VT_F64;
      if (!want) want = fn[k].f64; /* integers converted to f64 */
      ck_assert_msg(type_in(&sc, text) == rt, "%s over %s", text, wg_vt_name(types[t]));
      const char *r = show(&sc, text, true);
      ck_assert_msg(strncmp(r, want, strlen(want)) == 0, "%s over %s renders '%s'", text,
                    wg_vt_name(types[t]), r);
      ck_assert_str_eq(show(&sc, text, false), text);
    }
    sc.inputs[0] = sc.inputs[1] = WG_VT_BOOL;
    expect_error_in(&sc, text, "takes numbers, found bool");
    expect_error(fn[k].arity == 1 ? (snprintf(text, sizeof text, "%s(x, y)", fn[k].name), text)
                                  : (snprintf(text, sizeof text, "%s(x)", fn[k].name), text),
                 "argument");
  }
  /* a literal argument takes the other's type; alone it becomes f64 */
  ck_assert_str_eq(cuda("pow(x, 2)"), "powf(wg_x, 2.0f)");
  ck_assert_str_eq(cuda("sqrt(2)"), "sqrt(2.0)");
  ck_assert_str_eq(cuda("sqrt(y)"), "sqrt(((double)wg_y))");
  ck_assert_str_eq(cuda("max(y, 3)"), "wg_max(wg_y, 3)");
}
END_TEST

START_TEST(operators_render) {
  /* signed + - * and unary - wrap through the unsigned twin; integer / and
   * % call the helpers; floats are plain. */
  ck_assert_str_eq(cuda("y + y"), "((int)((unsigned int)wg_y + (unsigned int)wg_y))");
  ck_assert_str_eq(cuda("-y"), "((int)(0 - (unsigned int)wg_y))");
  ck_assert_str_eq(cuda("z * z"), "(wg_z * wg_z)");
  ck_assert_str_eq(cuda("y / y"), "wg_div(wg_y, wg_y)");
  ck_assert_str_eq(cuda("y % y"), "wg_mod(wg_y, wg_y)");
  ck_assert_str_eq(cuda("x / x"), "(wg_x / wg_x)");
  ck_assert_str_eq(cuda("x + y"), "(wg_x + ((float)wg_y))");
  ck_assert_str_eq(cuda("x == x && !p2"), "((wg_x == wg_x) && (!wg_p2))");
  ck_assert_str_eq(cuda("p2 ? x : w"), "(wg_p2 ? ((double)wg_x) : wg_w)");
  /* casts: float -> integer saturates through intrinsics; -> bool tests */
  ck_assert_str_eq(cuda("i32(x)"), "wg_f32_to_i32(wg_x)");
  ck_assert_str_eq(cuda("u64(w)"), "wg_f64_to_u64(wg_w)");
  ck_assert_str_eq(cuda("bool(w)"), "(wg_w != 0)");
  ck_assert_str_eq(cuda("f64(y)"), "((double)wg_y)");
  ck_assert_str_eq(cuda("f32(x)"), "wg_x");
  ck_assert_str_eq(cuda("i + n"), "((long long)((unsigned long long)wg_i + (unsigned long long)wg_n))");
  /* the helpers are defined for every operand */
  const char *h = wg_expr_helpers();
  ck_assert_ptr_nonnull(strstr(h, "int wg_div(int a, int b) { return b == 0 ? (int)0 : b == -1"));
  ck_assert_ptr_nonnull(strstr(h, "wg_mod(long long a, long long b) { return b == 0 || b == -1"));
  ck_assert_ptr_nonnull(strstr(h, "float wg_min(float a, float b) { return (a < b || a != a)"));
}
END_TEST

START_TEST(literals) {
  static const char *const cases[][3] = { /* text, canonical, CUDA */
    {"0", "0", "0"},
    {"0x1F", "31", "31"},
    {"-5", "-5", "(-5)"},
    {"2147483647", "2147483647", "2147483647"},
    {"-2147483648", "-2147483648", "(-2147483647 - 1)"},
    {"2147483648", "2147483648", "2147483648LL"},
    {"-9223372036854775808", "-9223372036854775808", "(-9223372036854775807LL - 1)"},
    {"18446744073709551615", "18446744073709551615", "18446744073709551615ULL"},
    {"7u32", "7u32", "7u"},
    {"7i64", "7i64", "7LL"},
    {"0xffu64", "255u64", "255ULL"},
    {"-2147483648i32", "-2147483648i32", "(-2147483647 - 1)"},
    {"1.5", "1.5", "1.5"},
    {".5", "0.5", "0.5"},
    {"1.", "1.0", "1.0"},
    {"1e3", "1e3", "1000.0"},
    {"1234.5e1", "12345.0", "12345.0"},
    {"1E-3", "0.001", "0.001"},
    {"1e+20", "1e20", "1e+20"},
    {"1e-5", "1e-5", "1.0000000000000001e-05"},
    {"0.1", "0.1", "0.10000000000000001"},
    {"0.1f32", "0.1f32", "0.100000001f"},
    {"2f32", "2.0f32", "2.0f"},
    {"-0.0", "-0.0", "(-0.0)"},
    {"-1.5f64", "-1.5f64", "(-1.5)"},
    {"3.4028234663852886e38f32", "3.4028235e38f32", "3.40282347e+38f"},
    {"1e-45f32", "1e-45f32", "1.40129846e-45f"},
    {"true", "true", "true"},
    {"false", "false", "false"},
  };
  for (size_t k = 0; k < WG_COUNT_OF(cases); k++) {
    ck_assert_msg(strcmp(canon(cases[k][0]), cases[k][1]) == 0, "'%s' -> '%s', want '%s'",
                  cases[k][0], canon(cases[k][0]), cases[k][1]);
    ck_assert_msg(strcmp(cuda(cases[k][0]), cases[k][2]) == 0, "'%s' renders '%s', want '%s'",
                  cases[k][0], cuda(cases[k][0]), cases[k][2]);
  }
  /* the edge of f32: below 2^128 - 2^103 rounds to FLT_MAX, from there on
   * to infinity, so an f32 literal is refused and a plain one stays f64 */
  ck_assert_str_eq(cuda("3.4028235677973362e38f32"), "3.40282347e+38f");
  expect_error("3.4028235677973366e38f32", "the number is too large for f32");
  ck_assert_int_eq(type_in(&map_scope, "x * 3.4028235677973362e38"), WG_VT_F32);
  ck_assert_int_eq(type_in(&map_scope, "x * 3.4028235677973366e38"), WG_VT_F64);
  /* a literal in an f32 context is printed as float from its parsed value */
  ck_assert_str_eq(cuda("x * 0.1"), "(wg_x * 0.100000001f)");
  ck_assert_str_eq(cuda("x * 16777217"), "(wg_x * 16777216.0f)");
  ck_assert_str_eq(cuda("z + 1"), "(wg_z + 1ULL)");
  ck_assert_str_eq(cuda("p1 * -1"), "(wg_p1 * ((unsigned int)(-1)))");
}
END_TEST

START_TEST(errors_with_positions) {
  static const char *const cases[][2] = {
    {"", "at 0: expected a number, a name, '(' or a unary operator, found the end"},
    {"(x + y", "at 6: expected ')' or an operator, found the end"},
    {"(x + x y)", "at 7: expected ')' or an operator, found 'y'"},
    {"x y", "at 2: expected an operator or the end, found 'y'"},
    {"x +", "at 3: expected a number, a name, '(' or a unary operator, found the end"},
    {"x @ y", "at 2: expected an operator or the end, found '@'"},
    {"x \x01", "at 2: expected an operator or the end, found '\\x01'"},
    {"x \xc3\xa9", "at 2: expected an operator or the end, found '\\xc3'"},
    {"x & y", "at 2: expected an operator or the end, found '&'"},
    {"x = y", "at 2: expected an operator or the end, found '='"},
    {"x ? y", "at 5: expected ':' or an operator, found the end"},
    {"x % y", "at 2: '%' needs integers, found f32"},
    {"y % 1.5", "at 2: '%' needs integers, found f64"},
    {"q + x", "at 0: unknown name 'q'; a map expression here has x, y, z, w, i, n, p0..p2"},
    {"a + x", "at 0: no variable 'a'; a map expression here has"},
    {"p3", "at 0: no variable 'p3'"},
    {"foo(x)", "at 0: unknown function 'foo'"},
    {"sqrt x", "at 5: expected '(' after 'sqrt', found 'x'"},
    {"sqrt(x, y)", "at 0: 'sqrt' takes 1 argument, found 2"},
    {"pow(x)", "at 0: 'pow' takes 2 arguments, found 1"},
    {"fmax(x y)", "at 7: expected ',' or ')' in the arguments of 'fmax', found 'y'"},
    {"sqrt(p2)", "at 5: 'sqrt' takes numbers, found bool"},
    {"f16(x)", "at 0: there is no f16 cast"},
    {"i32 x", "at 4: expected '(' after 'i32', found 'x'"},
    {"1.5i32", "at 0: a number with a fraction or exponent cannot be i32"},
    {"5u", "at 1: unknown suffix on the number '5u'"},
    {"2x", "at 1: unknown suffix on the number '2x'"},
    {"1e", "at 1: unknown suffix"},
    {"0x", "at 0: '0x' needs hexadecimal digits"},
    {"1e999", "at 0: the number is too large for f64"},
    {"1e39f32", "at 0: the number is too large for f32"},
    {"18446744073709551616", "at 0: the integer is larger than 2^64 - 1"},
    {"-9223372036854775809", "at 0: the integer is smaller than -2^63"},
    {"-1u32", "at 0: -1 does not fit in u32"},
    {"2147483648i32", "at 0: 2147483648 does not fit in i32"},
    {"x.y", "at 1: expected an operator or the end, found '.'"},
    {"x + 1.2.3", "at 7: expected an operator or the end, found '.3'"},
  };
  for (size_t k = 0; k < WG_COUNT_OF(cases); k++) expect_error(cases[k][0], cases[k][1]);
  /* every message names its role */
  expect_error("x y", "map expression: at 2:");
  wg_expr_scope comb = {WG_EXPR_COMBINE, 0, {0}, 1, {WG_VT_F32}, WG_VT_F64};
  expect_error_in(&comb, "x + a", "combine expression: at 0: no variable 'x'; a combine "
                                  "expression here has a, b, p0..p0");
  wg_expr_scope ident = {WG_EXPR_IDENTITY, 0, {0}, 0, {0}, WG_VT_F64};
  expect_error_in(&ident, "n", "identity expression: at 0: no variable 'n'; an identity");
  /* an embedded NUL is a byte like any other */
  wg_expr *e;
  ck_assert_int_eq(wg_expr_parse(ctx, &e, "x\0y", 3, &map_scope), WG_ESPEC);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "at 1: expected an operator or the end, found '\\x00'"));
}
END_TEST

START_TEST(bad_arguments) {
  wg_expr *e;
  ck_assert_int_eq(wg_expr_parse(ctx, NULL, "x", 1, &map_scope), WG_EINVAL);
  ck_assert_int_eq(wg_expr_parse(ctx, &e, NULL, 1, &map_scope), WG_EINVAL);
  ck_assert_int_eq(wg_expr_parse(ctx, &e, "x", 1, NULL), WG_EINVAL);
  ck_assert_ptr_null(e);
  wg_expr_scope sc = map_scope;
  sc.ninputs = 5;
  ck_assert_int_eq(wg_expr_parse(ctx, &e, "x", 1, &sc), WG_EINVAL);
  sc = map_scope;
  sc.params[1] = WG_VT_COUNT;
  ck_assert_int_eq(wg_expr_parse(ctx, &e, "x", 1, &sc), WG_EINVAL);
  sc = map_scope;
  sc.role = WG_EXPR_ROLE_COUNT;
  ck_assert_int_eq(wg_expr_parse(ctx, &e, "x", 1, &sc), WG_EINVAL);
  sc = map_scope;
  sc.nparams = -1;
  ck_assert_int_eq(wg_expr_parse(ctx, &e, "x", 1, &sc), WG_EINVAL);
  /* no context: the status alone */
  ck_assert_int_eq(wg_expr_parse(NULL, &e, "x +", 3, &map_scope), WG_ESPEC);
  ck_assert_int_eq(wg_expr_parse(NULL, &e, "x", 1, &map_scope), WG_OK);
  wg_expr_free(e);
  wg_expr_free(NULL);
  ck_assert_int_eq(wg_expr_type(NULL), WG_VT_COUNT);
  ck_assert_uint_eq(wg_expr_uses(NULL), 0);
}
END_TEST

START_TEST(caps) {
  static char text[3 * WG_EXPR_MAX_LEN];
  /* length: 4096 bytes pass, 4097 do not */
  memset(text, ' ', sizeof text);
  text[0] = 'x';
  wg_expr *e;
  ck_assert_int_eq(wg_expr_parse(ctx, &e, text, WG_EXPR_MAX_LEN, &map_scope), WG_OK);
  wg_expr_free(e);
  ck_assert_int_eq(wg_expr_parse(ctx, &e, text, WG_EXPR_MAX_LEN + 1, &map_scope), WG_ESPEC);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "longer than 4096 bytes"));
  /* depth: a chain of 64 levels passes, 65 do not */
  for (int levels = 63; levels <= 65; levels++) {
    size_t n = 0;
    n += (size_t)sprintf(text + n, "x");
    for (int k = 1; k < levels; k++) n += (size_t)sprintf(text + n, "+x");
    int rc = wg_expr_parse(ctx, &e, text, n, &map_scope);
    ck_assert_int_eq(rc, levels <= WG_EXPR_MAX_DEPTH ? WG_OK : WG_ESPEC);
    if (rc == WG_OK) wg_expr_free(e);
    else ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "nested deeper than 64 levels"));
  }
  /* parentheses: 128 pass, 129 do not, and nothing recurses without bound */
  for (int levels = 128; levels <= 129; levels++) {
    size_t n = 0;
    for (int k = 0; k < levels; k++) text[n++] = '(';
    text[n++] = 'x';
    for (int k = 0; k < levels; k++) text[n++] = ')';
    int rc = wg_expr_parse(ctx, &e, text, n, &map_scope);
    ck_assert_int_eq(rc, levels <= 128 ? WG_OK : WG_ESPEC);
    if (rc == WG_OK) wg_expr_free(e);
  }
  memset(text, '(', 4000);
  ck_assert_int_eq(wg_expr_parse(ctx, &e, text, 4000, &map_scope), WG_ESPEC);
  memset(text, '-', 4000);
  text[4000] = 'x';
  ck_assert_int_eq(wg_expr_parse(ctx, &e, text, 4001, &map_scope), WG_ESPEC);
  /* 64 levels of negation print as -(-(...)) and parse again */
  size_t n = 0;
  for (int k = 0; k < 63; k++) text[n++] = '-';
  text[n++] = 'x';
  wg_expr *deep = parse_in(&map_scope, (text[n] = '\0', text));
  wg_buf b = {0};
  wg_expr_format(deep, &b);
  ck_assert_int_eq(wg_expr_parse(ctx, &e, b.data, b.len, &map_scope), WG_OK);
  wg_expr_free(e);
  wg_expr_free(deep);
  wg_buf_free(&b);
  /* a text within the cap whose canonical form is not: 1e5 prints longer */
  n = 0;
  while (n + 4 <= WG_EXPR_MAX_LEN - 4) n += (size_t)sprintf(text + n, "1e5+");
  text[n++] = '1';
  ck_assert_int_eq(wg_expr_parse(ctx, &e, text, n, &map_scope), WG_ESPEC);
}
END_TEST

START_TEST(round_trips) {
  static const char *const texts[] = {
    "x*x", "abs(x-y)", "x > p0 && x == x", "-(-(-x))", "-5 * -x", "x - -1 - -(1)",
    "sigmoid(x) + tanh(w) * erf(y)", "y % 3 + y / 0", "p2 ? i : n", "!(!p2)",
    "u64(x) + 18446744073709551615", "f32(y) * 0.1 + 1e-300", "1e+20 * x",
    "min(y, -2147483648) + max(z, 0x10)", "x < y < w", "(x < y) + (y < w)",
    "y ? y ? 1 : 2 : y ? 3 : 4", "pow(x, -0.5) - rsqrt(x)", "-0.0 * x", "true && false || !true",
    "bool(x) + bool(0)", "-(2.5)", "-(-2147483648)", "i64(-9223372036854775808)",
  };
  for (size_t k = 0; k < WG_COUNT_OF(texts); k++) {
    char first[1024], second[1024];
    snprintf(first, sizeof first, "%s", canon(texts[k]));
    snprintf(second, sizeof second, "%s", canon(first));
    ck_assert_msg(strcmp(first, second) == 0, "'%s' -> '%s' -> '%s'", texts[k], first, second);
    char r1[2048];
    snprintf(r1, sizeof r1, "%s", cuda(texts[k]));
    ck_assert_msg(strcmp(r1, cuda(first)) == 0, "'%s' and '%s' render differently", texts[k],
                  first);
  }
}
END_TEST

START_TEST(roles_and_uses) {
  wg_expr *e = parse_in(&map_scope, "x + y * z - w + i + n + p0 + p2");
  ck_assert_uint_eq(wg_expr_uses(e), WG_EXPR_USES_INPUT(0) | WG_EXPR_USES_INPUT(1) |
                                         WG_EXPR_USES_INPUT(2) | WG_EXPR_USES_INPUT(3) |
                                         WG_EXPR_USES_I | WG_EXPR_USES_N |
                                         WG_EXPR_USES_PARAM(0) | WG_EXPR_USES_PARAM(2));
  wg_expr_free(e);
  wg_expr_scope comb = {WG_EXPR_COMBINE, 0, {0}, 0, {0}, WG_VT_F64};
  e = parse_in(&comb, "fmax(a, b)");
  ck_assert_uint_eq(wg_expr_uses(e), WG_EXPR_USES_A | WG_EXPR_USES_B);
  ck_assert_int_eq(wg_expr_type(e), WG_VT_F64);
  wg_expr_free(e);
  ck_assert_str_eq(show(&comb, "a + b", true), "(wg_a + wg_b)");
  wg_expr_scope fin = {WG_EXPR_FINAL, 0, {0}, 1, {WG_VT_F64}, WG_VT_F32};
  ck_assert_str_eq(show(&fin, "r / f32(n - p0)", true),
                   "(wg_r / ((float)(((double)wg_n) - wg_p0)))");
  expect_error_in(&fin, "x", "no variable 'x'; a final expression here has n, r, p0..p0");
  wg_expr_scope pred = {WG_EXPR_PREDICATE, 1, {WG_VT_F32}, 1, {WG_VT_F32}, 0};
  ck_assert_int_eq(type_in(&pred, "x > p0 && x == x"), WG_VT_BOOL);
  expect_error_in(&pred, "y", "no variable 'y'; a predicate expression here has x, i, n, p0..p0");
  wg_expr_scope ident = {WG_EXPR_IDENTITY, 0, {0}, 1, {WG_VT_I64}, WG_VT_F64};
  ck_assert_str_eq(show(&ident, "-p0", true), "((long long)(0 - (unsigned long long)wg_p0))");
  wg_expr_scope none = {WG_EXPR_IDENTITY, 0, {0}, 0, {0}, WG_VT_F64};
  expect_error_in(&none, "p0", "an identity expression here has no variables");
}
END_TEST

START_TEST(names_and_mapping) {
  ck_assert_int_eq(wg_value_type_of(WG_F16), WG_VT_F32);
  ck_assert_int_eq(wg_value_type_of(WG_BF16), WG_VT_F32);
  ck_assert_int_eq(wg_value_type_of(WG_F32), WG_VT_F32);
  ck_assert_int_eq(wg_value_type_of(WG_F64), WG_VT_F64);
  ck_assert_int_eq(wg_value_type_of(WG_I32), WG_VT_I32);
  ck_assert_int_eq(wg_value_type_of(WG_U32), WG_VT_U32);
  ck_assert_int_eq(wg_value_type_of(WG_I64), WG_VT_I64);
  ck_assert_int_eq(wg_value_type_of(WG_U64), WG_VT_U64);
  ck_assert_int_eq(wg_value_type_of(WG_TYPE_COUNT), WG_VT_COUNT);
  ck_assert_str_eq(wg_vt_name(WG_VT_U32), "u32");
  ck_assert_str_eq(wg_vt_ctype(WG_VT_I64), "long long");
  ck_assert_ptr_null(wg_vt_name(WG_VT_COUNT));
  ck_assert_str_eq(wg_expr_role_name(WG_EXPR_FINAL), "final");
  ck_assert_ptr_null(wg_expr_role_name(WG_EXPR_ROLE_COUNT));
}
END_TEST

/* --- nvrtc: rendered CUDA compiles ---------------------------------------- */

/* One kernel: a device function per expression over every variable, typed
 * by `sc`, storing its value as double. */
static void add_function(wg_buf *src, const wg_expr_scope *sc, const char *text, int k) {
  wg_expr *e = parse_in(sc, text);
  static const char *const inputs[] = {"wg_x", "wg_y", "wg_z", "wg_w"};
  wg_buf_printf(src, "__device__ double f%d(", k);
  for (int j = 0; j < 4; j++) wg_buf_printf(src, "%s %s, ", wg_vt_ctype(sc->inputs[j]), inputs[j]);
  wg_buf_printf(src, "long long wg_i, long long wg_n, %s wg_a, %s wg_b, %s wg_r",
                wg_vt_ctype(sc->acc), wg_vt_ctype(sc->acc), wg_vt_ctype(sc->acc));
  for (int j = 0; j < 8; j++) wg_buf_printf(src, ", %s wg_p%d", wg_vt_ctype(sc->params[j]), j);
  wg_buf_puts(src, ") { return (double)");
  wg_expr_render(e, src);
  wg_buf_puts(src, "; }\n");
  wg_expr_free(e);
}

START_TEST(rendered_cuda_compiles) {
  wg_buf src = {0};
  wg_buf_puts(&src, wg_expr_helpers());
  wg_buf_puts(&src, wg_expr_helpers()); /* twice is fine */
  static const char *const texts[] = {
    "x + y", "x - y", "x * y", "x / y", "x < y", "x <= y", "x > y", "x >= y", "x == y",
    "x != y", "x && y", "x || y", "!x", "x ? y : z", "-x", "x + 1", "x * -2.5", "min(x, y)",
    "max(x, y)", "x + i * n", "p0 + p1 * p2", "abs(x)", "sqrt(x) + rsqrt(y) + exp(z)",
    "exp2(x) + expm1(x) + log(x) + log2(x) + log1p(x) + sin(x) + cos(x) + tanh(x)",
    "erf(x) + floor(x) + ceil(x) + sigmoid(x) + pow(x, y) + fmin(x, y) + fmax(x, y)",
    "bool(x) + i32(x) + u32(x) + i64(x) + u64(x) + f32(x) + f64(x)", "a + b", "r / f64(n)",
    "-2147483648 + -9223372036854775808 + 18446744073709551615 + 0.1 + 1e-300 + true",
  };
  int k = 0;
  for (int t = 0; t < WG_VT_COUNT; t++) {
    wg_expr_scope sc = {WG_EXPR_MAP, 4, {0}, 8, {0}, (wg_value_type)t};
    for (int j = 0; j < 4; j++) sc.inputs[j] = (wg_value_type)((t + j) % WG_VT_COUNT);
    for (int j = 0; j < 8; j++) sc.params[j] = (wg_value_type)((t + j) % WG_VT_COUNT);
    for (size_t j = 0; j < WG_COUNT_OF(texts); j++) {
      wg_expr *e;
      sc.role = strchr(texts[j], 'a') && texts[j][0] == 'a' ? WG_EXPR_COMBINE
                : texts[j][0] == 'r' ? WG_EXPR_FINAL : WG_EXPR_MAP;
      /* skip what the types reject (% on floats, functions of bools) */
      if (wg_expr_parse(ctx, &e, texts[j], strlen(texts[j]), &sc) != WG_OK) continue;
      wg_expr_free(e);
      add_function(&src, &sc, texts[j], k++);
    }
  }
  ck_assert_int_gt(k, 150);
  /* Every function is called on loaded values, so none is folded away. */
  wg_buf_puts(&src, "extern \"C\" __global__ void wg_expr_probe(const double *in, double *out) {\n"
                    "  double v[17];\n  for (int k = 0; k < 17; k++) v[k] = in[threadIdx.x + k];\n");
  for (int j = 0; j < k; j++) {
    wg_buf_printf(&src, "  out[%d] = f%d(", j, j);
    for (int a = 0; a < 17; a++) wg_buf_printf(&src, "%sv[%d]", a ? ", " : "", a);
    wg_buf_puts(&src, ");\n");
  }
  wg_buf_puts(&src, "}\n");
  ck_assert(!src.failed);
  wg_binary bin;
  int rc = wg_compile(ctx, &bin, src.data, "wg_expr_probe", 90);
  ck_assert_msg(rc == WG_OK, "%s\n%s", wg_errmsg(ctx), src.data);
  ck_assert_ptr_nonnull(strstr(bin.ptx, ".entry wg_expr_probe"));
  ck_assert_ptr_nonnull(strstr(bin.ptx, "cvt.rzi.u64.f64")); /* u64(x) of a double */
  wg_binary_free(&bin);
  wg_buf_free(&src);
}
END_TEST

int main(int argc, char **argv) {
  bool nvrtc = argc > 1 && strcmp(argv[1], "nvrtc") == 0;
  Suite *s = suite_create(nvrtc ? "expr-nvrtc" : "expr");
  TCase *tc = tcase_create("expr");
  tcase_add_checked_fixture(tc, setup, teardown);
  if (nvrtc) {
    tcase_add_test(tc, rendered_cuda_compiles);
    tcase_set_timeout(tc, 600);
  } else {
    tcase_add_test(tc, precedence_and_associativity);
    tcase_add_test(tc, promotions);
    tcase_add_test(tc, every_function);
    tcase_add_test(tc, operators_render);
    tcase_add_test(tc, literals);
    tcase_add_test(tc, errors_with_positions);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, caps);
    tcase_add_test(tc, round_trips);
    tcase_add_test(tc, roles_and_uses);
    tcase_add_test(tc, names_and_mapping);
  }
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
