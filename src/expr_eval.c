/*
 * expr_eval.c - expressions evaluated on the CPU with the semantics of the
 * CUDA that expr.c renders, and a bound on how far the GPU may differ.
 *
 * The walk mirrors render_node: integers are computed as 64-bit words and
 * cut to their width (so + - * and unary - wrap, as the rendered unsigned
 * twins do), / and % follow wg_div and wg_mod of wg_expr_helpers(), casts
 * from floating types truncate, saturate and send NaN to 0 as the
 * wg_f32_to_i32 helpers and their kin do, f32 arithmetic is done in float (with
 * FLT_EVAL_METHOD 0 each step rounds to float, as on the GPU).
 *
 * Each value travels with `err`, a bound on |GPU - CPU|: 0 while every
 * step is correctly rounded on both sides (then the bits agree), a number
 * once a math function with CUDA's documented ulp error (or a multiply-add
 * NVRTC may fuse) is involved, INFINITY once the difference could flip a
 * comparison, a cast to an integer, a branch, or reach an infinity or NaN.
 * The rules are first order and conservative; wg_expr_eval_bounded
 * documents the contract and docs/expressions.md the tolerances.
 *
 * No CUDA, no NVRTC; the C library's math only. Recursion depth is the
 * tree's, which the parser caps.
 */
#include "expr_tree.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "expr_eval.c needs float arithmetic rounded to float at every step"
#endif

typedef struct ev {
  wg_value v;
  double err; /* bound on |GPU - v|; INFINITY: unknown */
} ev;

/* Per function: CUDA's documented maximum ulp error (CUDA C Programming
 * Guide, "Mathematical Functions", f32 / f64, default flags: IEEE division
 * and sqrt, no fast math) plus the CPU reference's own: f32 functions are
 * computed in f64 and rounded once (at most 1 ulp off after rounding),
 * f64 ones by glibc (at most 2 ulp for these). `shape` says how an error in
 * the argument carries through. */
enum { EXACT_SELECT, MONOTONE, LIPSCHITZ1, POWER };
static const struct fn_eval {
  unsigned char shape;
  unsigned char ulps_f32, ulps_f64;
} fn_eval[FN_COUNT] = {
  [FN_ABS] = {EXACT_SELECT, 0, 0},  [FN_MIN] = {EXACT_SELECT, 0, 0},
  [FN_MAX] = {EXACT_SELECT, 0, 0},  [FN_FMIN] = {EXACT_SELECT, 0, 0},
  [FN_FMAX] = {EXACT_SELECT, 0, 0}, [FN_POW] = {POWER, 4 + 1, 2 + 2},
  [FN_SQRT] = {MONOTONE, 0, 0},     [FN_RSQRT] = {MONOTONE, 2 + 1, 1 + 2},
  [FN_EXP] = {MONOTONE, 2 + 1, 1 + 2},   [FN_EXP2] = {MONOTONE, 2 + 1, 1 + 2},
  [FN_EXPM1] = {MONOTONE, 1 + 1, 1 + 2}, [FN_LOG] = {MONOTONE, 1 + 1, 1 + 2},
  [FN_LOG2] = {MONOTONE, 1 + 1, 1 + 2},  [FN_LOG1P] = {MONOTONE, 1 + 1, 1 + 2},
  [FN_SIN] = {LIPSCHITZ1, 2 + 1, 2 + 2}, [FN_COS] = {LIPSCHITZ1, 2 + 1, 2 + 2},
  [FN_TANH] = {MONOTONE, 2 + 1, 2 + 2},  [FN_ERF] = {MONOTONE, 2 + 1, 2 + 2},
  [FN_FLOOR] = {MONOTONE, 0, 0},    [FN_CEIL] = {MONOTONE, 0, 0},
  /* 1/(1+exp(-v)): exp's error, shrunk by the sum, plus two roundings */
  [FN_SIGMOID] = {MONOTONE, 4 + 1, 3 + 2},
};

static bool is_float(wg_value_type t) { return t == WG_VT_F32 || t == WG_VT_F64; }
static bool is_signed(wg_value_type t) { return t == WG_VT_I32 || t == WG_VT_I64; }

/* --- integers as 64-bit words -------------------------------------------- */

/* Sign-extended for signed types, zero-extended otherwise. */
static uint64_t word_of(wg_value v) {
  switch (v.type) {
  case WG_VT_BOOL: return v.as.b;
  case WG_VT_I32: return (uint64_t)(int64_t)v.as.i32;
  case WG_VT_U32: return v.as.u32;
  case WG_VT_I64: return (uint64_t)v.as.i64;
  default: return v.as.u64;
  }
}

/* Two's complement without relying on implementation-defined conversions. */
static int64_t signed_of(uint64_t w) {
  return w <= (uint64_t)INT64_MAX ? (int64_t)w : -(int64_t)(~w) - 1;
}

/* w cut to t's width: the wrap-around of the rendered arithmetic. */
static wg_value int_value(wg_value_type t, uint64_t w) {
  wg_value v = {.type = t};
  switch (t) {
  case WG_VT_BOOL: v.as.b = w != 0; break;
  case WG_VT_I32: {
    uint32_t u = (uint32_t)w;
    v.as.i32 = u <= INT32_MAX ? (int32_t)u : -(int32_t)~u - 1;
    break;
  }
  case WG_VT_U32: v.as.u32 = (uint32_t)w; break;
  case WG_VT_I64: v.as.i64 = signed_of(w); break;
  default: v.as.u64 = w; break;
  }
  return v;
}

static wg_value bool_value(bool b) { return (wg_value){.type = WG_VT_BOOL, .as.b = b}; }

/* --- floating values ----------------------------------------------------- */

/* The value as a double: exact for floats, bool and 32-bit integers. */
static double num_of(wg_value v) {
  switch (v.type) {
  case WG_VT_F32: return v.as.f32;
  case WG_VT_F64: return v.as.f64;
  case WG_VT_I32: case WG_VT_I64: case WG_VT_BOOL: return (double)signed_of(word_of(v));
  default: return (double)word_of(v);
  }
}

static wg_value float_value(wg_value_type t, double d) {
  wg_value v = {.type = t};
  if (t == WG_VT_F32) v.as.f32 = wg_expr_to_f32(d);
  else v.as.f64 = d;
  return v;
}

/* The spacing of t's numbers at v (subnormal spacing below the normal
 * range); INFINITY for an infinity or NaN. */
static double ulp_of(double v, wg_value_type t) {
  int digits = t == WG_VT_F32 ? FLT_MANT_DIG : DBL_MANT_DIG;
  int emin = t == WG_VT_F32 ? FLT_MIN_EXP - 1 : DBL_MIN_EXP - 1;
  if (!isfinite(v)) return INFINITY;
  int e = v == 0 ? emin : ilogb(v);
  return ldexp(1.0, (e < emin ? emin : e) - (digits - 1));
}

/* A NaN whose quiet bit is clear (random bit patterns make them). */
static bool is_signaling(wg_value v) {
  uint64_t bits = 0;
  if (v.type == WG_VT_F32) {
    uint32_t b;
    memcpy(&b, &v.as.f32, sizeof b);
    return isnan(v.as.f32) && !(b & 0x400000u);
  }
  if (v.type != WG_VT_F64) return false;
  memcpy(&bits, &v.as.f64, sizeof bits);
  return isnan(v.as.f64) && !(bits & 0x8000000000000ull);
}

static double max_finite(wg_value_type t) { return t == WG_VT_F32 ? FLT_MAX : DBL_MAX; }

/* An inexact result that is infinite, NaN or could overflow on the GPU
 * side says nothing reliable. */
static double settle(const ev *r) {
  if (r->err == 0 || !is_float(r->v.type)) return r->err;
  double x = num_of(r->v);
  if (!isfinite(x) || isnan(r->err) || fabs(x) + r->err > max_finite(r->v.type)) return INFINITY;
  return r->err;
}

static bool is_true(wg_value v) { return is_float(v.type) ? num_of(v) != 0 : word_of(v) != 0; }

/* Truth as the GPU sees it: 1 true, 0 false, -1 unknown (the error could
 * reach 0). */
static int truth(const ev *a) {
  if (a->err == 0) return is_true(a->v);
  if (!is_float(a->v.type) || isinf(a->err)) return -1;
  return fabs(num_of(a->v)) > a->err ? 1 : -1;
}

/* --- conversions --------------------------------------------------------- */

/* A floating value (exact as a double) truncated toward zero and saturated
 * at t's range, NaN to 0: the wg_f32_to_i32 helpers and their kin. */
static uint64_t saturate(double d, wg_value_type t) {
  if (isnan(d)) return 0;
  d = trunc(d);
  switch (t) {
  case WG_VT_I32:
    if (d <= -0x1p31) return (uint64_t)(int64_t)INT32_MIN;
    if (d >= 0x1p31 - 1) return INT32_MAX;
    return (uint64_t)(int64_t)d;
  case WG_VT_U32:
    if (d <= 0) return 0;
    if (d >= 0x1p32 - 1) return UINT32_MAX;
    return (uint64_t)d;
  case WG_VT_I64:
    if (d <= -0x1p63) return (uint64_t)INT64_MIN;
    if (d >= 0x1p63) return INT64_MAX;
    return (uint64_t)(int64_t)d;
  default:
    if (d <= 0) return 0;
    if (d >= 0x1p64) return UINT64_MAX;
    return (uint64_t)d;
  }
}

/* v converted to t as the rendered cast does. */
static wg_value convert_value(wg_value v, wg_value_type t) {
  if (v.type == t) return v;
  if (t == WG_VT_BOOL) return bool_value(is_true(v));
  if (is_float(t)) {
    if (is_float(v.type)) return float_value(t, num_of(v)); /* rounds f64 to f32 */
    /* integer -> float rounds once, straight from the integer (a detour
     * through double could round twice) */
    uint64_t w = word_of(v);
    bool s = is_signed(v.type) || v.type == WG_VT_BOOL;
    wg_value r = {.type = t};
    if (t == WG_VT_F32) r.as.f32 = s ? (float)signed_of(w) : (float)w;
    else r.as.f64 = s ? (double)signed_of(w) : (double)w;
    return r;
  }
  if (is_float(v.type)) return int_value(t, saturate(num_of(v), t));
  return int_value(t, word_of(v));
}

static ev convert_ev(ev a, wg_value_type t) {
  ev r = {convert_value(a.v, t), a.err};
  if (a.err == 0 || a.v.type == t) return r;
  if (isinf(a.err)) return (ev){r.v, INFINITY};
  if (t == WG_VT_BOOL) {
    r.err = truth(&a) < 0 ? INFINITY : 0;
  } else if (is_float(t)) {
    /* float -> float: the error carries, plus a rounding that may differ */
    r.err = is_float(a.v.type) ? a.err + ulp_of(num_of(r.v), t) : INFINITY;
  } else {
    /* float -> integer: known only when the whole interval truncates alike */
    double x = num_of(a.v);
    bool same = saturate(x - a.err, t) == saturate(x + a.err, t);
    r.err = same ? 0 : INFINITY;
  }
  r.err = settle(&r);
  return r;
}

/* --- operators ----------------------------------------------------------- */

static uint64_t int_div(uint64_t a, uint64_t b, wg_value_type t, bool mod) {
  if (b == 0) return 0;
  if (is_signed(t)) {
    if (signed_of(b) == -1) return mod ? 0 : 0 - a; /* MIN / -1 wraps to MIN */
    int64_t x = signed_of(a), y = signed_of(b);
    return (uint64_t)(mod ? x % y : x / y);
  }
  return mod ? a % b : a / b;
}

static bool int_less(uint64_t a, uint64_t b, wg_value_type t) {
  return is_signed(t) ? signed_of(a) < signed_of(b) : a < b;
}

static bool compare(int op, double l, double r) {
  switch (op) {
  case OP_EQ: return l == r;
  case OP_NE: return l != r;
  case OP_LT: return l < r;
  case OP_LE: return l <= r;
  case OP_GT: return l > r;
  default: return l >= r;
  }
}

static wg_value float_arith(int op, wg_value_type t, double l, double r) {
  if (t == WG_VT_F32) {
    float x = (float)l, y = (float)r, z; /* exact: l and r are floats */
    switch (op) {
    case OP_ADD: z = x + y; break;
    case OP_SUB: z = x - y; break;
    case OP_MUL: z = x * y; break;
    default: z = x / y; break;
    }
    return (wg_value){.type = WG_VT_F32, .as.f32 = z};
  }
  double z = op == OP_ADD ? l + r : op == OP_SUB ? l - r : op == OP_MUL ? l * r : l / r;
  return (wg_value){.type = WG_VT_F64, .as.f64 = z};
}

/* Is kid a product that NVRTC may fuse into the add or subtract above it
 * (fma(a, b, c) for a*b + c, also with a negated product)? The fused
 * result skips the product's rounding: half an ulp of it. */
static double fusable(const wg_expr *e, const node *kid, const ev *val) {
  if (kid->kind == K_NEG) kid = &e->nodes[kid->kid[0]];
  if (kid->kind != K_BIN || kid->op != OP_MUL || !is_float((wg_value_type)kid->type))
    return 0;
  return 0.5 * ulp_of(num_of(val->v), (wg_value_type)kid->type);
}

static ev eval_node(const wg_expr *e, const node *n, const wg_expr_values *vars);

static ev eval_kid(const wg_expr *e, const node *n, int k, const wg_expr_values *vars) {
  return eval_node(e, &e->nodes[n->kid[k]], vars);
}

static ev eval_binary(const wg_expr *e, const node *n, const wg_expr_values *vars) {
  ev l = eval_kid(e, n, 0, vars), r = eval_kid(e, n, 1, vars);
  wg_value_type t = l.v.type; /* both sides have it, except for && and || */
  if (n->op == OP_AND || n->op == OP_OR) {
    /* either side known to be the deciding value decides; else an
     * unknown side leaves the result unknown */
    int a = truth(&l), b = truth(&r), decides = n->op == OP_OR;
    if (a == decides || b == decides) return (ev){bool_value(decides), 0};
    bool cpu = n->op == OP_OR ? is_true(l.v) || is_true(r.v) : is_true(l.v) && is_true(r.v);
    return (ev){bool_value(cpu), a < 0 || b < 0 ? INFINITY : 0};
  }
  double lx = num_of(l.v), rx = num_of(r.v), err = l.err + r.err;
  if (n->op >= OP_EQ && n->op <= OP_GE) {
    bool v = is_float(t) ? compare(n->op, lx, rx)
             : n->op == OP_EQ ? word_of(l.v) == word_of(r.v)
             : n->op == OP_NE ? word_of(l.v) != word_of(r.v)
             : n->op == OP_LT ? int_less(word_of(l.v), word_of(r.v), t)
             : n->op == OP_LE ? !int_less(word_of(r.v), word_of(l.v), t)
             : n->op == OP_GT ? int_less(word_of(r.v), word_of(l.v), t)
             : !int_less(word_of(l.v), word_of(r.v), t);
    /* an inexact comparison stands only when the sides are further apart
     * than their errors */
    bool sure = err == 0 || (is_float(t) && !isinf(err) && fabs(lx - rx) > err);
    return (ev){bool_value(v), sure ? 0 : INFINITY};
  }
  if (!is_float(t)) {
    uint64_t a = word_of(l.v), b = word_of(r.v), w;
    switch (n->op) {
    case OP_ADD: w = a + b; break;
    case OP_SUB: w = a - b; break;
    case OP_MUL: w = a * b; break;
    default: w = int_div(a, b, t, n->op == OP_MOD); break;
    }
    return (ev){int_value(t, w), err == 0 ? 0 : INFINITY};
  }
  ev out = {float_arith(n->op, t, lx, rx), 0};
  double z = num_of(out.v);
  /* An inexact operand keeps the result inexact even where the first-order
   * bound below comes to 0: fmin(-0.0, 0.0) (either zero) times 0 is -0 or
   * +0, a difference of 0 that a bound of 0, meaning "the same bits",
   * would reject. */
  const bool inexact = err != 0;
  if (n->op == OP_ADD || n->op == OP_SUB) {
    err += fusable(e, &e->nodes[n->kid[0]], &l) + fusable(e, &e->nodes[n->kid[1]], &r);
  } else if (err > 0 && n->op == OP_MUL) {
    err = fabs(lx) * r.err + fabs(rx) * l.err + l.err * r.err;
  } else if (err > 0) { /* division: the divisor must stay away from 0 */
    double room = fabs(rx) - r.err;
    err = room > 0 ? (l.err + fabs(z) * r.err) / room : INFINITY;
  }
  out.err = inexact || err != 0 ? err + ulp_of(z, t) : 0; /* a NaN bound stays NaN: settle */
  out.err = settle(&out);
  return out;
}

/* f(x) for the one-argument functions, in double. */
static double apply1(int fn, double x) {
  switch (fn) {
  case FN_SQRT: return sqrt(x);
  case FN_RSQRT: return 1 / sqrt(x);
  case FN_EXP: return exp(x);
  case FN_EXP2: return exp2(x);
  case FN_EXPM1: return expm1(x);
  case FN_LOG: return log(x);
  case FN_LOG2: return log2(x);
  case FN_LOG1P: return log1p(x);
  case FN_SIN: return sin(x);
  case FN_COS: return cos(x);
  case FN_TANH: return tanh(x);
  case FN_ERF: return erf(x);
  case FN_FLOOR: return floor(x);
  case FN_CEIL: return ceil(x);
  case FN_SIGMOID: return 1 / (1 + exp(-x));
  default: return fabs(x);
  }
}

/* The same in long double, where a double result overflowed: is the true
 * value clearly past the double range (so the GPU overflows too)? */
static bool clearly_infinite(int fn, double x, double y) {
  long double v;
  switch (fn) {
  case FN_EXP: v = expl(x); break;
  case FN_EXP2: v = exp2l(x); break;
  case FN_EXPM1: v = expm1l(x); break;
  case FN_POW: v = powl(x, y); break;
  default: return true; /* the others reach infinity only at exact poles */
  }
  return isinf(v) || fabsl(v) > (long double)DBL_MAX * (1 + 0x1p-40L);
}

static ev eval_call(const wg_expr *e, const node *n, const wg_expr_values *vars) {
  const struct fn_eval *f = &fn_eval[n->op];
  wg_value_type t = (wg_value_type)n->type;
  int arity = n->op == FN_MIN || n->op == FN_MAX || n->op == FN_FMIN || n->op == FN_FMAX ||
              n->op == FN_POW ? 2 : 1;
  ev a = eval_kid(e, n, 0, vars), b = arity == 2 ? eval_kid(e, n, 1, vars) : (ev){a.v, 0};
  double x = num_of(a.v), y = num_of(b.v), in_err = fmax(a.err, b.err);
  ev out = {.err = 0};
  if (!is_float(t)) { /* abs, min, max of integers */
    uint64_t p = word_of(a.v), q = word_of(b.v), w;
    if (n->op == FN_ABS) w = is_signed(t) && signed_of(p) < 0 ? 0 - p : p;
    else if (n->op == FN_MIN) w = int_less(p, q, t) ? p : q;
    else w = int_less(q, p, t) ? p : q;
    return (ev){int_value(t, w), in_err == 0 ? 0 : INFINITY};
  }
  /* CUDA's pow(x, 0) and pow(1, y) are exactly 1 for every x and y, a
   * signaling NaN included, where glibc answers NaN for a signaling one */
  bool pow_is_one = n->op == FN_POW && (y == 0 || x == 1);
  double z;
  switch (n->op) {
  /* wg_min/wg_max: NaN when the left is NaN, else the comparison decides
   * (a NaN on the right loses the comparison and is returned) */
  case FN_MIN: z = x < y || x != x ? x : y; break;
  case FN_MAX: z = x > y || x != x ? x : y; break;
  case FN_FMIN: z = fmin(x, y); break;
  case FN_FMAX: z = fmax(x, y); break;
  case FN_POW: z = pow_is_one ? 1 : pow(x, y); break;
  default: z = apply1(n->op, x); break;
  }
  out.v = float_value(t, z);
  /* abs, min and max only select or clear a sign bit, so a signaling NaN
   * passes through them unchanged on the GPU: keep the operand's bits */
  if (n->op == FN_MIN) out.v = x < y || x != x ? a.v : b.v;
  if (n->op == FN_MAX) out.v = x > y || x != x ? a.v : b.v;
  if (n->op == FN_ABS) {
    if (t == WG_VT_F32) out.v.as.f32 = fabsf(a.v.as.f32);
    else out.v.as.f64 = fabs(a.v.as.f64);
  }
  double v = num_of(out.v);
  double tol = pow_is_one ? 0 : t == WG_VT_F32 ? f->ulps_f32 : f->ulps_f64;
  /* Which zero fmin/fmax return for -0 and +0 is not specified, nor what
   * they make of a signaling NaN (glibc returns NaN, the GPU the number).
   * Nor which zero min/max return: wg_max's (a > b || a != a) ? a : b
   * gives +0 for max(-0.0, +0.0) as written, but clang 14 at -O1 (the
   * host emulation's compiler, LLVM as NVRTC is) folds it to -0.0. */
  bool fminmax = n->op == FN_FMIN || n->op == FN_FMAX;
  bool zeros = (fminmax || n->op == FN_MIN || n->op == FN_MAX) && x == 0 && y == 0;
  if (fminmax && (is_signaling(a.v) || is_signaling(b.v))) return (ev){out.v, INFINITY};
  double err = 0;
  if (in_err > 0) {
    if (isinf(in_err)) return (ev){out.v, INFINITY};
    switch (f->shape) {
    case EXACT_SELECT: err = in_err; break;
    case LIPSCHITZ1: err = fmin(in_err, 2); break;
    case MONOTONE: { /* the ends of the interval bound the values inside */
      double lo = fabs(apply1(n->op, x - a.err) - z), hi = fabs(apply1(n->op, x + a.err) - z);
      err = isnan(lo) || isnan(hi) ? INFINITY : lo > hi ? lo : hi; /* fmax would drop a NaN */
      break;
    }
    default: /* pow: monotone in each argument where the base is positive */
      err = x - a.err > 0 ? 0 : INFINITY;
      for (int c = 0; c < 4 && err < INFINITY; c++) {
        double d = fabs(pow(x + (c & 1 ? a.err : -a.err), y + (c & 2 ? b.err : -b.err)) - z);
        err = isnan(d) ? INFINITY : fmax(err, d);
      }
      break;
    }
    if (isnan(err)) err = INFINITY;
    if (f->shape != EXACT_SELECT) err += ulp_of(v, t); /* rounding of a moved value */
  }
  if (tol > 0 && isfinite(v)) {
    /* the function's own error; results below the normal range are only
     * promised to be tiny */
    double tiny = t == WG_VT_F32 ? FLT_MIN : DBL_MIN;
    err += fmax(tol * ulp_of(v, t), tol * tiny);
  } else if (tol > 0 && isinf(v) && in_err == 0) {
    /* overflow: certain only well past the range */
    bool sure = t == WG_VT_F32 ? !isfinite(z) || fabs(z) > FLT_MAX * (1 + 0x1p-20)
                               : clearly_infinite(n->op, x, y);
    err = sure ? 0 : INFINITY;
  }
  if (zeros) err = fmax(err, t == WG_VT_F32 ? 0x1p-149 : 0x1p-1074);
  out.err = err;
  out.err = settle(&out);
  return out;
}

static wg_value literal_value(const node *n) {
  wg_value_type t = (wg_value_type)n->type;
  if (t == WG_VT_BOOL) return bool_value(n->mag != 0);
  if (is_float(t)) return float_value(t, n->f);
  return int_value(t, n->neg ? 0 - n->mag : n->mag);
}

static wg_value variable_value(const node *n, const wg_expr_values *vars) {
  int v = n->op;
  if (v == V_I || v == V_N)
    return (wg_value){.type = WG_VT_I64, .as.i64 = v == V_I ? vars->i : vars->n};
  return v <= V_W ? vars->inputs[v] : v == V_A ? vars->a : v == V_B ? vars->b
         : v == V_R ? vars->r : vars->params[v - V_P0];
}

static ev eval_node(const wg_expr *e, const node *n, const wg_expr_values *vars) {
  wg_value_type t = (wg_value_type)n->type;
  switch (n->kind) {
  case K_LIT: return (ev){literal_value(n), 0};
  case K_VAR: return (ev){variable_value(n, vars), 0};
  case K_NOT: {
    ev a = eval_kid(e, n, 0, vars);
    int b = truth(&a);
    return (ev){bool_value(b == 0), b < 0 ? INFINITY : 0};
  }
  case K_NEG: {
    ev a = eval_kid(e, n, 0, vars);
    if (t == WG_VT_F32) a.v.as.f32 = -a.v.as.f32; /* a sign flip: NaN bits stay */
    else if (t == WG_VT_F64) a.v.as.f64 = -a.v.as.f64;
    else a.v = int_value(t, 0 - word_of(a.v));
    if (!is_float(t) && a.err > 0) a.err = INFINITY;
    return a;
  }
  case K_BIN: return eval_binary(e, n, vars);
  case K_COND: {
    ev c = eval_kid(e, n, 0, vars), yes = eval_kid(e, n, 1, vars), no = eval_kid(e, n, 2, vars);
    int b = truth(&c);
    if (b >= 0) return b ? yes : no;
    /* either branch may be taken: both must agree within the bound; the
     * value is the CPU's own choice */
    ev r = is_true(c.v) ? yes : no;
    if (is_float(t)) {
      double d = fabs(num_of(yes.v) - num_of(no.v));
      if (d == 0 && signbit(num_of(yes.v)) != signbit(num_of(no.v)))
        d = t == WG_VT_F32 ? 0x1p-149 : 0x1p-1074; /* -0 or +0: a tiny bound, not bits */
      r.err = fmax(yes.err, no.err) + (isnan(d) ? INFINITY : d);
    } else {
      r.err = yes.err == 0 && no.err == 0 && word_of(yes.v) == word_of(no.v) ? 0 : INFINITY;
    }
    r.err = settle(&r);
    return r;
  }
  case K_CALL: return eval_call(e, n, vars);
  default: return convert_ev(eval_kid(e, n, 0, vars), t); /* K_CAST */
  }
}

/* Every variable e reads has a value of its node's type. */
static bool values_fit(const wg_expr *e, const wg_expr_values *vars) {
  for (int k = 0; k < e->count; k++) {
    const node *n = &e->nodes[k];
    if (n->kind == K_VAR && variable_value(n, vars).type != (wg_value_type)n->type)
      return false;
  }
  return true;
}

int wg_expr_eval_bounded(wg_context *ctx, const wg_expr *e, const wg_expr_values *vars,
                         wg_value *out, double *tolerance) {
  if (!e || !vars || !out)
    return wg_fail(ctx, WG_EINVAL, "expression evaluation: a NULL argument");
  if (!values_fit(e, vars))
    return wg_fail(ctx, WG_EINVAL,
                   "expression evaluation: a variable's value has another type than its scope gave it");
  ev r = eval_node(e, &e->nodes[e->root], vars);
  *out = r.v;
  if (tolerance) *tolerance = r.err;
  return WG_OK;
}

int wg_expr_eval(wg_context *ctx, const wg_expr *e, const wg_expr_values *vars, wg_value *out) {
  return wg_expr_eval_bounded(ctx, e, vars, out, NULL);
}

bool wg_value_within(wg_value want, double tolerance, wg_value got) {
  if (want.type != got.type) return false;
  if (isinf(tolerance) && tolerance > 0) return true;
  if (!is_float(want.type)) return word_of(want) == word_of(got);
  double w = num_of(want), g = num_of(got);
  if (isnan(w) || isnan(g)) return isnan(w) && isnan(g);
  if (tolerance == 0)
    return want.type == WG_VT_F32 ? memcmp(&want.as.f32, &got.as.f32, sizeof(float)) == 0
                                  : memcmp(&want.as.f64, &got.as.f64, sizeof(double)) == 0;
  if (isinf(w) || isinf(g)) return w == g;
  return fabs(g - w) <= tolerance;
}

const char *wg_value_show(char *buf, size_t size, wg_value v) {
  switch (v.type) {
  case WG_VT_BOOL: snprintf(buf, size, "%s", v.as.b ? "true" : "false"); break;
  case WG_VT_I32: case WG_VT_I64:
    snprintf(buf, size, "%lld%s", (long long)signed_of(word_of(v)), wg_vt_name(v.type));
    break;
  case WG_VT_U32: case WG_VT_U64:
    snprintf(buf, size, "%llu%s", (unsigned long long)word_of(v), wg_vt_name(v.type));
    break;
  case WG_VT_F32: snprintf(buf, size, "%.9gf32", (double)v.as.f32); break;
  case WG_VT_F64: snprintf(buf, size, "%.17gf64", v.as.f64); break;
  default: snprintf(buf, size, "?"); break;
  }
  return buf;
}
