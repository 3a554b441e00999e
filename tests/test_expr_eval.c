/*
 * test_expr_eval.c - the CPU evaluator (src/expr_eval.c) and the random
 * expression generator (tests/expr_gen.c), in the unit suite:
 *   - the GPU semantics case by case: wrap-around, x/0, MIN/-1, saturating
 *     casts with NaN -> 0, min/max against fmin/fmax on NaN, f32 rounding
 *     at every step, literals, ?: and the short-circuit operators;
 *   - the tolerances: 0 for correctly rounded chains, ulps for math
 *     functions and fusable multiply-adds, INFINITY where an error could
 *     flip a comparison or cast; wg_value_within;
 *   - properties over random expressions (fresh seed, printed; replay with
 *     WARPGEN_TEST_SEED): every generated text parses, its canonical text
 *     is a fixed point, and the canonical text evaluates to the same bits
 *     and tolerance as the original on random values; the generator
 *     reaches every operator, function, cast and literal form.
 */
#include "expr.h"
#include "expr_gen.h"

#include <check.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static wg_context *ctx;

static void setup(void) {
  wg_options o = WG_OPTIONS_INIT;
  o.disk_cache = -1;
  ck_assert_int_eq(wg_context_create(&ctx, &o), WG_OK);
}
static void teardown(void) { wg_context_destroy(ctx); }

static uint64_t base_seed(void) {
  static uint64_t seed;
  if (!seed) {
    const char *env = getenv("WARPGEN_TEST_SEED");
    seed = env && *env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) << 20 ^ (uint64_t)clock()) | 1;
  }
  return seed;
}

/* map over x:f32 y:i32 z:u64 w:f64, p0:f64 p1:u32 p2:bool p3:i64 */
static const wg_expr_scope scope = {
  WG_EXPR_MAP, 4, {WG_VT_F32, WG_VT_I32, WG_VT_U64, WG_VT_F64},
  4, {WG_VT_F64, WG_VT_U32, WG_VT_BOOL, WG_VT_I64}, WG_VT_F32};

static wg_value F32(float v) { return (wg_value){.type = WG_VT_F32, .as.f32 = v}; }
static wg_value F64(double v) { return (wg_value){.type = WG_VT_F64, .as.f64 = v}; }
static wg_value I32(int32_t v) { return (wg_value){.type = WG_VT_I32, .as.i32 = v}; }
static wg_value U32(uint32_t v) { return (wg_value){.type = WG_VT_U32, .as.u32 = v}; }
static wg_value I64(int64_t v) { return (wg_value){.type = WG_VT_I64, .as.i64 = v}; }
static wg_value U64(uint64_t v) { return (wg_value){.type = WG_VT_U64, .as.u64 = v}; }
static wg_value BOOL(bool v) { return (wg_value){.type = WG_VT_BOOL, .as.b = v}; }

/* Values for `scope`: x y z w as given, the rest plain. */
static wg_expr_values vals(float x, int32_t y, uint64_t z, double w) {
  wg_expr_values v = {{F32(x), I32(y), U64(z), F64(w)}, 5, 100, F32(0), F32(0), F32(0),
                      {F64(0.5), U32(3), BOOL(true), I64(-7)}};
  return v;
}

/* Evaluates text over v; *tol gets the tolerance. */
static wg_value eval_tol(const char *text, const wg_expr_values *v, double *tol) {
  wg_expr *e = NULL;
  int rc = wg_expr_parse(ctx, &e, text, strlen(text), &scope);
  ck_assert_msg(rc == WG_OK, "'%s': %s", text, wg_errmsg(ctx));
  wg_value out;
  ck_assert_int_eq(wg_expr_eval_bounded(ctx, e, v, &out, tol), WG_OK);
  wg_expr_free(e);
  return out;
}

/* Asserts that text over v gives exactly want (bits; any NaN for NaN) and
 * that the GPU is held to it exactly. */
static void expect(const char *text, wg_expr_values v, wg_value want) {
  double tol = -1;
  wg_value got = eval_tol(text, &v, &tol);
  char a[64], b[64];
  ck_assert_msg(got.type == want.type && wg_value_within(want, 0, got) && tol == 0,
                "'%s' gave %s (tolerance %g), expected exactly %s", text,
                wg_value_show(a, sizeof a, got), tol, wg_value_show(b, sizeof b, want));
}

START_TEST(integer_semantics) {
  wg_expr_values v = vals(0, INT32_MIN, 0, 0);
  expect("y / 0", v, I32(0));
  expect("y % 0", v, I32(0));
  expect("y / -1", v, I32(INT32_MIN));
  expect("y % -1", v, I32(0));
  expect("-y", v, I32(INT32_MIN));
  expect("abs(y)", v, I32(INT32_MIN));
  expect("y - 1", v, I32(INT32_MAX));
  expect("y * 2", v, I32(0));
  v = vals(0, 7, 0, 0);
  expect("y / 2", v, I32(3));
  expect("-y / 2", v, I32(-3));  /* truncation toward zero */
  expect("-y % 2", v, I32(-1));  /* the sign of the dividend */
  expect("y % -2", v, I32(1));
  expect("y * 306783379", v, I32((int32_t)(uint32_t)(7u * 306783379u)));
  expect("z - 1", v, U64(UINT64_MAX));
  expect("-z", vals(0, 0, 1, 0), U64(UINT64_MAX));
  expect("z / 0 + z % 0", vals(0, 0, 9, 0), U64(0));
  expect("p1 - 4", v, U32(UINT32_MAX));           /* u32 wraps */
  expect("p1 * -1", v, U32(UINT32_MAX - 2));      /* -1 does not fit u32: i32 -> u32 */
  expect("y + 3000000000", v, I64(3000000007LL)); /* the literal is i64 */
  expect("i64(y) * 0x100000000", vals(0, -1, 0, 0), I64(-4294967296LL));
  expect("p3 / -1 + i", v, I64(12));
  expect("9223372036854775807 + i", v, I64(INT64_MIN + 4));
  expect("-9223372036854775808 / -1", v, I64(INT64_MIN));
  expect("min(y, -3)", v, I32(-3));
  expect("max(z, 5)", vals(0, 0, UINT64_MAX, 0), U64(UINT64_MAX));
  expect("min(y, z)", vals(0, -1, 5, 0), U64(5)); /* -1 becomes 2^64 - 1 */
  expect("u32(y)", vals(0, -1, 0, 0), U32(UINT32_MAX));
  expect("i32(z)", vals(0, 0, 0x1ffffffffULL, 0), I32(-1));
  expect("i64(u32(y))", vals(0, -2, 0, 0), I64(4294967294LL));
  expect("true + true", v, I32(2));
  expect("-true", v, I32(-1));
  expect("p2 ? y : 0", v, I32(7));
}
END_TEST

START_TEST(cast_semantics) {
  expect("i32(x)", vals(NAN, 0, 0, 0), I32(0));
  expect("i32(x)", vals(INFINITY, 0, 0, 0), I32(INT32_MAX));
  expect("i32(x)", vals(-INFINITY, 0, 0, 0), I32(INT32_MIN));
  expect("i32(x)", vals(3e9f, 0, 0, 0), I32(INT32_MAX));
  expect("i32(x)", vals(-2.75f, 0, 0, 0), I32(-2));
  expect("i32(w)", vals(0, 0, 0, 2147483647.9), I32(INT32_MAX));
  expect("i32(w)", vals(0, 0, 0, -2147483648.9), I32(INT32_MIN));
  expect("u32(x)", vals(-5.5f, 0, 0, 0), U32(0));
  expect("u32(w)", vals(0, 0, 0, 4294967295.5), U32(UINT32_MAX));
  expect("u64(x)", vals(1.9e19f, 0, 0, 0), U64(UINT64_MAX));
  expect("u64(x)", vals(-0.9f, 0, 0, 0), U64(0));
  expect("u64(w)", vals(0, 0, 0, 1.8446744073709550e19), U64(18446744073709549568ULL));
  expect("i64(x)", vals(9.3e18f, 0, 0, 0), I64(INT64_MAX));
  expect("i64(w)", vals(0, 0, 0, -9.3e18), I64(INT64_MIN));
  expect("i64(w)", vals(0, 0, 0, NAN), I64(0));
  expect("bool(x)", vals(NAN, 0, 0, 0), BOOL(true));
  expect("bool(x)", vals(-0.0f, 0, 0, 0), BOOL(false));
  expect("!x", vals(NAN, 0, 0, 0), BOOL(false));
  expect("f32(w)", vals(0, 0, 0, 1e39), F32(INFINITY));
  expect("f32(w)", vals(0, 0, 0, 3.4028235e38), F32(FLT_MAX)); /* rounds down to the max */
  expect("f32(w)", vals(0, 0, 0, 0.1), F32(0.1f));
  expect("f32(z)", vals(0, 0, UINT64_MAX, 0), F32(18446744073709551616.0f));
  /* 2^24 + 1 rounds to even once, straight from the integer */
  expect("f32(y)", vals(0, 16777217, 0, 0), F32(16777216.0f));
  expect("f32(z)", vals(0, 0, 0x20000020000001ULL, 0), F32(9007200328482816.0f));
  expect("f64(x)", vals(0.1f, 0, 0, 0), F64((double)0.1f));
}
END_TEST

START_TEST(float_semantics) {
  /* f32 arithmetic rounds to f32 at every step */
  expect("x + 1e-8", vals(1, 0, 0, 0), F32(1.0f));
  expect("x * x", vals(4097, 0, 0, 0), F32(16785408.0f));
  expect("(x + 1.0) - x", vals(1e8f, 0, 0, 0), F32(0.0f));
  expect("x / 3.0", vals(1, 0, 0, 0), F32(1.0f / 3.0f));
  expect("w / 3.0", vals(0, 0, 0, 1), F64(1.0 / 3.0));
  expect("x * 0.1", vals(3, 0, 0, 0), F32(3.0f * 0.1f));
  expect("x * 0.1f64", vals(3, 0, 0, 0), F64(3.0 * 0.1)); /* typed: f64 */
  expect("x / 0.0", vals(-1, 0, 0, 0), F32(-INFINITY));
  expect("-x", vals(0, 0, 0, 0), F32(-0.0f));
  expect("x - x", vals(INFINITY, 0, 0, 0), F32(NAN));
  expect("sqrt(x)", vals(2, 0, 0, 0), F32(sqrtf(2.0f)));
  expect("sqrt(x)", vals(-1, 0, 0, 0), F32(NAN));
  expect("floor(x) + ceil(x)", vals(-2.5f, 0, 0, 0), F32(-5.0f));
  expect("abs(x)", vals(-0.0f, 0, 0, 0), F32(0.0f));
  /* min/max propagate NaN from either side; fmin/fmax drop it */
  expect("min(x, 1.0)", vals(NAN, 0, 0, 0), F32(NAN));
  expect("min(1.0, x)", vals(NAN, 0, 0, 0), F32(NAN));
  expect("max(x, 1.0)", vals(NAN, 0, 0, 0), F32(NAN));
  expect("max(1.0, x)", vals(NAN, 0, 0, 0), F32(NAN));
  expect("fmin(x, 1.0)", vals(NAN, 0, 0, 0), F32(1.0f));
  expect("fmax(2.0, x)", vals(NAN, 0, 0, 0), F32(2.0f));
  expect("x < x || x == x", vals(NAN, 0, 0, 0), BOOL(false));
  expect("x != x", vals(NAN, 0, 0, 0), BOOL(true));
  expect("w > 0 ? w : -w", vals(0, 0, 0, -2), F64(2));
  expect("sqrt(i)", vals(0, 0, 0, 0), F64(sqrt(5.0))); /* integers compute in f64 */
  expect("x + y", vals(0.5f, 16777217, 0, 0), F32(16777216.5f)); /* i32 -> f32 first */
  /* pow(x, 0) and pow(1, y) are 1 even for a signaling NaN, as on the
   * GPU (glibc's pow says NaN) */
  expect("pow(w, -p2 + 1)", vals(0, 0, 0, __builtin_nans("")), F64(1));
  expect("pow(w, 0.0)", vals(0, 0, 0, -__builtin_nans("")), F64(1));
  expect("pow(1.0f64, w)", vals(0, 0, 0, __builtin_nans("")), F64(1));
  expect("pow(w, 0.0)", vals(0, 0, 0, NAN), F64(1));
}
END_TEST

/* Math functions: the value the CPU computes, within the documented
 * number of ulps on each side. */
START_TEST(function_tolerances) {
  static const struct { const char *text; double x; int min_ulps; } cases[] = {
    {"exp(x)", 1.5, 3}, {"sin(x)", 1e4, 3}, {"tanh(x)", 0.3, 3},
    {"pow(x, 2.5)", 3.0, 5}, {"rsqrt(x)", 3.0, 3}, {"log(x)", 7.0, 2},
    {"sigmoid(x)", -2.0, 5}, {"erf(x)", 0.5, 3},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    double tol;
    wg_expr_values v = vals((float)cases[k].x, 0, 0, 0);
    wg_value got = eval_tol(cases[k].text, &v, &tol);
    ck_assert_int_eq(got.type, WG_VT_F32);
    float ulp = nextafterf(fabsf(got.as.f32), INFINITY) - fabsf(got.as.f32);
    ck_assert_msg(tol >= cases[k].min_ulps * ulp && tol <= 8 * ulp, "%s: tolerance %g, ulp %g",
                  cases[k].text, tol, (double)ulp);
  }
  double tol;
  wg_expr_values v = vals(2.0f, 0, 0, 2.0);
  /* fused multiply-add possible: half an ulp of the product and a rounding */
  wg_value got = eval_tol("x * x + 1.0", &v, &tol);
  ck_assert(got.as.f32 == 5.0f && tol > 0 && tol < 1e-5);
  eval_tol("x * x", &v, &tol);
  ck_assert(tol == 0);
  eval_tol("f64(x) * w - 1.0", &v, &tol);
  ck_assert(tol > 0 && tol < 1e-14);
  /* far from the edge a comparison stands; at it nothing is promised */
  got = eval_tol("sin(x) > 0.5", &v, &tol);
  ck_assert(got.as.b && tol == 0);
  v = vals(0, 0, 0, 0);
  eval_tol("sin(x) > 0.0", &v, &tol);
  ck_assert(isinf(tol));
  eval_tol("sin(x) > 0.0 || true", &v, &tol);
  ck_assert(tol == 0);
  eval_tol("i32(exp(x) * 3.0)", &v, &tol); /* 3 +- a few ulps truncates to 2 or 3 */
  ck_assert(isinf(tol));
  eval_tol("i32(exp(x) * 3.5)", &v, &tol);
  ck_assert(tol == 0);
  /* overflow: exp(100) in f32 is infinite for sure, exp(88.72) is close */
  v = vals(100, 0, 0, 0);
  got = eval_tol("exp(x)", &v, &tol);
  ck_assert(isinf(got.as.f32) && tol == 0);
  v = vals(88.7228394f, 0, 0, 0);
  eval_tol("exp(x)", &v, &tol);
  ck_assert(isinf(tol));
  /* fmin, fmax, min and max of two zeros: which zero is not specified
   * (min's rule as written says b unless a < b, the CPU's answer) */
  v = vals(0.0f, 0, 0, 0);
  eval_tol("fmin(x, -0.0)", &v, &tol);
  ck_assert(tol > 0 && tol < 1e-40);
  got = eval_tol("min(x, -0.0)", &v, &tol);
  ck_assert(got.as.f32 == 0 && signbit(got.as.f32) && tol > 0 && tol < 1e-40);
  got = eval_tol("max(-0.0, x)", &v, &tol);
  ck_assert(got.as.f32 == 0 && !signbit(got.as.f32) && tol > 0 && tol < 1e-40);
  eval_tol("max(x, 1.0)", &v, &tol);
  ck_assert(tol == 0);
  /* and stays unspecified through a product or quotient that is 0: a
   * bound of 0 would demand one zero's bits */
  eval_tol("fmin(x, -0.0) * 0.0", &v, &tol);
  ck_assert(tol > 0 && tol < 1e-40);
  eval_tol("fmin(f64(x), -0.0) / 1e300", &v, &tol);
  ck_assert(tol > 0 && tol < 1e-300);
}
END_TEST

START_TEST(within) {
  ck_assert(wg_value_within(F32(NAN), 0, F32(-NAN)));
  ck_assert(!wg_value_within(F32(0.0f), 0, F32(-0.0f)));
  ck_assert(wg_value_within(F32(0.0f), 1e-45, F32(-0.0f)));
  ck_assert(wg_value_within(F32(1.0f), 1e-6, F32(1.0000001f)));
  ck_assert(!wg_value_within(F32(1.0f), 1e-8, F32(1.0000001f)));
  ck_assert(!wg_value_within(F32(INFINITY), 1e30, F32(FLT_MAX)));
  ck_assert(!wg_value_within(F32(NAN), 1.0, F32(1.0f)));
  ck_assert(wg_value_within(F32(NAN), INFINITY, F32(1.0f)));
  ck_assert(!wg_value_within(I32(1), 0, U32(1)));
  ck_assert(!wg_value_within(I64(-1), 0, I64(1)));
  ck_assert(wg_value_within(BOOL(true), 0, BOOL(true)));
  char buf[64];
  ck_assert_str_eq(wg_value_show(buf, sizeof buf, I32(-5)), "-5i32");
  ck_assert_str_eq(wg_value_show(buf, sizeof buf, U64(UINT64_MAX)), "18446744073709551615u64");
  ck_assert_str_eq(wg_value_show(buf, sizeof buf, BOOL(false)), "false");
}
END_TEST

START_TEST(bad_arguments) {
  wg_expr *e = NULL;
  ck_assert_int_eq(wg_expr_parse(ctx, &e, "x + y", 5, &scope), WG_OK);
  wg_expr_values v = vals(1, 2, 3, 4);
  wg_value out;
  ck_assert_int_eq(wg_expr_eval(ctx, NULL, &v, &out), WG_EINVAL);
  ck_assert_int_eq(wg_expr_eval(ctx, e, NULL, &out), WG_EINVAL);
  ck_assert_int_eq(wg_expr_eval(ctx, e, &v, NULL), WG_EINVAL);
  v.inputs[1] = F32(2); /* y is i32 in scope */
  ck_assert_int_eq(wg_expr_eval(ctx, e, &v, &out), WG_EINVAL);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "type"));
  v.inputs[1] = I32(2);
  v.inputs[2] = F32(0); /* z is not read: not looked at */
  ck_assert_int_eq(wg_expr_eval(NULL, e, &v, &out), WG_OK);
  ck_assert(out.type == WG_VT_F32 && out.as.f32 == 3.0f);
  wg_expr_free(e);
}
END_TEST

/* --- properties over random expressions ---------------------------------- */

#define RANDOM_EXPRESSIONS 3000

static char *canonical(const wg_expr *e) {
  wg_buf b = {0};
  ck_assert_int_eq(wg_expr_format(e, &b), WG_OK);
  return b.data;
}

START_TEST(random_round_trips) {
  uint64_t seed = base_seed() + (uint64_t)_i * 0x1000193;
  uint64_t rng = seed;
  static char text[WG_EXPR_MAX_LEN];
  int parsed = 0;
  for (int k = 0; k < RANDOM_EXPRESSIONS; k++) {
    wg_expr_scope sc;
    wg_gen_scope(&rng, &sc);
    int depth = 1 + (int)(wg_gen_next(&rng) % 8);
    size_t len = wg_gen_expr(&rng, &sc, depth, text, sizeof text);
    if (!len) continue;
    wg_expr *e = NULL, *again = NULL;
    int rc = wg_expr_parse(ctx, &e, text, len, &sc);
    ck_assert_msg(rc == WG_OK, "seed %" PRIu64 " (WARPGEN_TEST_SEED=%" PRIu64
                  "): generated text does not parse: '%s': %s",
                  seed, base_seed(), text, wg_errmsg(ctx));
    parsed++;
    char *canon = canonical(e);
    ck_assert_int_eq(wg_expr_parse(ctx, &again, canon, strlen(canon), &sc), WG_OK);
    char *canon2 = canonical(again);
    ck_assert_msg(strcmp(canon, canon2) == 0, "not a fixed point: '%s' -> '%s' -> '%s'", text,
                  canon, canon2);
    ck_assert_int_eq(wg_expr_type(e), wg_expr_type(again));
    for (int trial = 0; trial < 8; trial++) {
      wg_expr_values v;
      wg_gen_values(&rng, &sc, &v);
      wg_value a, b;
      double ta, tb;
      ck_assert_int_eq(wg_expr_eval_bounded(ctx, e, &v, &a, &ta), WG_OK);
      ck_assert_int_eq(wg_expr_eval_bounded(ctx, again, &v, &b, &tb), WG_OK);
      char sa[64], sb[64];
      ck_assert_msg(a.type == wg_expr_type(e) && memcmp(&a, &b, sizeof a) == 0 &&
                        (ta == tb || (isnan(ta) && isnan(tb))),
                    "'%s' and its canonical '%s' evaluate differently: %s (%g) vs %s (%g)",
                    text, canon, wg_value_show(sa, sizeof sa, a), ta,
                    wg_value_show(sb, sizeof sb, b), tb);
      ck_assert_msg(ta >= 0, "'%s': tolerance %g", canon, ta);
    }
    free(canon);
    free(canon2);
    wg_expr_free(e);
    wg_expr_free(again);
  }
  ck_assert_int_ge(parsed, RANDOM_EXPRESSIONS * 9 / 10);
}
END_TEST

/* The generator reaches every form the grammar has. */
START_TEST(generator_coverage) {
  static const char *const needles[] = {
    "abs(", "min(", "max(", "fmin(", "fmax(", "pow(", "sqrt(", "rsqrt(", "exp(", "exp2(",
    "expm1(", "log(", "log2(", "log1p(", "sin(", "cos(", "tanh(", "erf(", "floor(", "ceil(",
    "sigmoid(", "bool(", "i32(", "u32(", "i64(", "u64(", "f32(", "f64(", " + ", " - ",
    " * ", " / ", " % ", " < ", " <= ", " > ", " >= ", " == ", " != ", " && ", " || ",
    " ? ", "!", "-(", "true", "false", "e-", "u32", "i64", "u64", "f32", "f64",
    "-2147483648", "-9223372036854775808", "x", "y", "z", "w", "i", "n", "a", "b", "r",
    "p0", "p7",
  };
  bool seen[sizeof needles / sizeof *needles] = {false};
  uint64_t rng = base_seed();
  static char text[WG_EXPR_MAX_LEN];
  for (int k = 0; k < 2000; k++) {
    wg_expr_scope sc;
    wg_gen_scope(&rng, &sc);
    size_t len = wg_gen_expr(&rng, &sc, 6, text, sizeof text);
    wg_expr *e = NULL;
    if (!len || wg_expr_parse(ctx, &e, text, len, &sc) != WG_OK) continue;
    char *canon = canonical(e);
    for (size_t j = 0; j < sizeof needles / sizeof *needles; j++)
      seen[j] |= strstr(canon, needles[j]) != NULL;
    free(canon);
    wg_expr_free(e);
  }
  for (size_t j = 0; j < sizeof needles / sizeof *needles; j++)
    ck_assert_msg(seen[j], "no generated expression has '%s'", needles[j]);
}
END_TEST

int main(void) {
  printf("expr-eval: seed %" PRIu64 " (set WARPGEN_TEST_SEED to replay)\n", base_seed());
  Suite *s = suite_create("expr-eval");
  TCase *tc = tcase_create("eval");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, integer_semantics);
  tcase_add_test(tc, cast_semantics);
  tcase_add_test(tc, float_semantics);
  tcase_add_test(tc, function_tolerances);
  tcase_add_test(tc, within);
  tcase_add_test(tc, bad_arguments);
  tcase_add_loop_test(tc, random_round_trips, 0, 2);
  tcase_add_test(tc, generator_coverage);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
