/*
 * expr.h - the expression language (expr.c): user-written operators such as
 * map="x*x" or combine="fmax(a, b)", parsed into a typed tree, printed back
 * as canonical text (the identity of the expression, for specs and the
 * cache key) and rendered as a CUDA expression over fixed internal names.
 * No text the user typed ever reaches generated source: names become
 * wg_x, wg_p0, ...; functions come from a table; numbers are printed again
 * from their parsed values. docs/expressions.md is the user's manual.
 *
 * One stage, no CUDA, no NVRTC: it needs only util.c and error.c.
 */
#ifndef WG_EXPR_H
#define WG_EXPR_H

#include "internal.h"

/* Where an expression appears; it decides which names are in scope.
 *   MAP        inputs x y z w (the first `ninputs`), i (element index, i64),
 *              n (length of the reduced dimension, i64), p0..p7
 *   COMBINE    a, b (two accumulators, type `acc`), p0..p7
 *   FINAL      r (the accumulator, type `acc`), n (the count, i64), p0..p7
 *   PREDICATE  as MAP; any result type (non-zero is true)
 *   IDENTITY   no variables: literals and p0..p7 only */
typedef enum {
  WG_EXPR_MAP,
  WG_EXPR_COMBINE,
  WG_EXPR_FINAL,
  WG_EXPR_PREDICATE,
  WG_EXPR_IDENTITY,
  WG_EXPR_ROLE_COUNT
} wg_expr_role;

/* The value types of expressions, in the order of C's usual arithmetic
 * conversions (a binary operator computes in the later of its two sides'
 * types; bool becomes i32 first). f16 and bf16 data arrive as f32. */
typedef enum {
  WG_VT_BOOL,
  WG_VT_I32,
  WG_VT_U32,
  WG_VT_I64,
  WG_VT_U64,
  WG_VT_F32,
  WG_VT_F64,
  WG_VT_COUNT
} wg_value_type;

/* What the caller binds. inputs[k] is the type of input k (k < ninputs,
 * ninputs 0..4), params[k] the type of p<k> (k < nparams, nparams 0..8),
 * acc the accumulator type of a, b and r (COMBINE and FINAL only). */
typedef struct wg_expr_scope {
  wg_expr_role role;
  int ninputs;
  wg_value_type inputs[4];
  int nparams;
  wg_value_type params[8];
  wg_value_type acc;
} wg_expr_scope;

/* Caps: bytes of text, and depth of the tree (every operator, call and
 * cast is a level; a chain x+x+...+x of k terms is k levels deep).
 * Parentheses and prefix operators may nest twice as deep in the text. */
#define WG_EXPR_MAX_LEN 4096
#define WG_EXPR_MAX_DEPTH 64

typedef struct wg_expr wg_expr;

/* Parses text[0..len) (no NUL needed; an embedded NUL is an error) in
 * scope, type-checks it and stores the tree in *out (free it with
 * wg_expr_free). Returns WG_OK; WG_ESPEC for text that is not a valid
 * expression (the message, set on ctx, reads "map expression: at 5:
 * expected ')' or an operator, found 'y'": byte offsets count from 0, and
 * bytes that are not printable ASCII are shown as \xNN); WG_EINVAL for a
 * NULL argument or a scope out of range; WG_ENOMEM. ctx may be NULL (no
 * message). *out is NULL on failure. The tree does not point into text
 * or scope. Thread-safe: touches nothing global (the decimal point of the
 * C locale is read, never set). */
int wg_expr_parse(wg_context *ctx, wg_expr **out, const char *text, size_t len,
                  const wg_expr_scope *scope);

/* The type of the expression's value. */
wg_value_type wg_expr_type(const wg_expr *e);

/* Appends the canonical text: the tree printed with single spaces around
 * binary operators and after commas, the fewest parentheses C's precedence
 * needs and numbers in one spelling. Parsing it again (same scope) gives
 * the same tree, so equal expressions share text, kernel and cache entry.
 * Returns WG_OK or WG_ENOMEM (out->failed). */
int wg_expr_format(const wg_expr *e, wg_buf *out);

/* Appends one fully parenthesised CUDA C++ expression of type
 * wg_vt_ctype(wg_expr_type(e)). It reads the variables as wg_x wg_y wg_z
 * wg_w (inputs, of their scope types), wg_i and wg_n (long long), wg_a,
 * wg_b, wg_r (the accumulator's type) and wg_p0..wg_p7: the caller declares
 * those it uses (wg_expr_uses), and puts wg_expr_helpers() once in the
 * source before it. Returns WG_OK or WG_ENOMEM (out->failed). */
int wg_expr_render(const wg_expr *e, wg_buf *out);

/* CUDA device functions that rendered expressions call: integer division
 * and remainder that are defined for every operand (x/0 = x%0 = 0; the
 * most negative value / -1 wraps to itself, % -1 is 0), integer abs,
 * min and max (for floats min/max return NaN when either side is NaN).
 * A constant string, safe to include more than once. */
const char *wg_expr_helpers(void);

/* Which names the expression reads: a bit mask of the WG_EXPR_USES_*. */
#define WG_EXPR_USES_INPUT(k) (1u << (k))      /* x y z w: k = 0..3 */
#define WG_EXPR_USES_I (1u << 4)
#define WG_EXPR_USES_N (1u << 5)
#define WG_EXPR_USES_A (1u << 6)
#define WG_EXPR_USES_B (1u << 7)
#define WG_EXPR_USES_R (1u << 8)
#define WG_EXPR_USES_PARAM(k) (1u << (9 + (k))) /* p0..p7 */
unsigned wg_expr_uses(const wg_expr *e);

/* --- evaluation on the CPU (expr_eval.c) --------------------------------- */

/* One value of an expression type: `type` says which member holds it. */
typedef struct wg_value {
  wg_value_type type;
  union {
    bool b;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
  } as;
} wg_value;

/* What the variables hold for one evaluation. Only the variables the
 * expression reads are looked at; each must have the type its scope gave
 * it (inputs[k] for x y z w, a b r for the accumulator, params[k] for p<k>).
 * i and n are i64 by definition. */
typedef struct wg_expr_values {
  wg_value inputs[4];
  int64_t i, n;
  wg_value a, b, r;
  wg_value params[8];
} wg_expr_values;

/* Evaluates e on the CPU with the semantics the rendered CUDA has (see
 * docs/expressions.md): integers wrap, x/0 = x%0 = 0, MIN/-1 = MIN,
 * float->integer casts truncate, saturate and send NaN to 0, f32 arithmetic
 * rounds to f32 at every step, min/max propagate NaN while fmin/fmax do
 * not. Math functions of f32 are computed in f64 and rounded once, the
 * closest value the CPU can offer; the GPU's may differ by a few ulp, which
 * wg_expr_eval_bounded quantifies. *out gets a value of wg_expr_type(e).
 * Returns WG_OK, or WG_EINVAL (message on ctx, which may be NULL) for a
 * NULL argument or a variable whose value has the wrong type. Thread-safe;
 * e is only read. */
int wg_expr_eval(wg_context *ctx, const wg_expr *e, const wg_expr_values *vars,
                 wg_value *out);

/* wg_expr_eval plus how far the GPU's result may lie from *out, in
 * *tolerance: 0 when the GPU must give exactly *out (integers, booleans,
 * and floats built only from correctly rounded steps); a positive number
 * when |gpu - *out| <= *tolerance is all that can be promised (math
 * functions carry CUDA's documented ulp error plus the CPU's, and errors
 * are propagated through every later operation, including a multiply-add
 * that NVRTC may fuse); INFINITY when nothing can be promised (a
 * comparison, cast or branch that the error could flip; an inexact
 * infinity or NaN). wg_value_within compares with it. */
int wg_expr_eval_bounded(wg_context *ctx, const wg_expr *e, const wg_expr_values *vars,
                         wg_value *out, double *tolerance);

/* Does `got` agree with `want` within `tolerance` (as wg_expr_eval_bounded
 * gives it)? Both of want's type. At tolerance 0: the same bits, except
 * that any NaN equals any NaN; above 0: |got - want| <= tolerance, where
 * infinities must match exactly and a NaN only matches a NaN; INFINITY:
 * anything. */
bool wg_value_within(wg_value want, double tolerance, wg_value got);

/* The value as a number or word, for messages: "-1.5f32", "7u32", "true",
 * "nan". Returns buf. */
const char *wg_value_show(char *buf, size_t size, wg_value v);

/* Parses the spec's expression of `role` (which it must have) in the
 * scope the spec gives it (spec_expr.c), as wg_expr_parse. */
int wg_spec_expr_parse(wg_context *ctx, wg_expr **out, const wg_spec *spec,
                       wg_expr_role role);

/* Frees e (NULL is fine). */
void wg_expr_free(wg_expr *e);

/* The value type in which a kernel computes on elements of type t: f16,
 * bf16 and f32 give WG_VT_F32; each other type its own. WG_VT_COUNT for a
 * t out of range. */
wg_value_type wg_value_type_of(wg_type t);
/* "f32", "i64", "bool"...; NULL out of range. */
const char *wg_vt_name(wg_value_type t);
/* The CUDA type: "float", "long long", "bool"...; NULL out of range. */
const char *wg_vt_ctype(wg_value_type t);
/* "map", "combine"...; NULL out of range. */
const char *wg_expr_role_name(wg_expr_role role);

#endif /* WG_EXPR_H */
