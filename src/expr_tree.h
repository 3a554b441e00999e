/*
 * expr_tree.h - the layout of a parsed expression, private to the files
 * that walk it: expr.c builds, prints and renders trees, expr_eval.c
 * evaluates them. Nothing outside src/expr*.c includes this; everyone else
 * sees wg_expr as an opaque type through expr.h.
 *
 * The tree is an array of nodes; kids are indexes into it and always come
 * before their parent, so the array is built bottom-up and every node's
 * depth is bounded by WG_EXPR_MAX_DEPTH.
 */
#ifndef WG_EXPR_TREE_H
#define WG_EXPR_TREE_H

#include "expr.h"

#include <math.h>

/* Binary operators, in expr.c's table `binops`. */
enum { OP_OR, OP_AND, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_ADD,
       OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_COUNT };

/* Functions, the rows of expr.c's table `fns`. */
enum { FN_ABS, FN_MIN, FN_MAX, FN_FMIN, FN_FMAX, FN_POW, FN_SQRT, FN_RSQRT,
       FN_EXP, FN_EXP2, FN_EXPM1, FN_LOG, FN_LOG2, FN_LOG1P, FN_SIN, FN_COS,
       FN_TANH, FN_ERF, FN_FLOOR, FN_CEIL, FN_SIGMOID, FN_COUNT };

/* Variables: the id is also the bit of wg_expr_uses. */
enum { V_X, V_Y, V_Z, V_W, V_I, V_N, V_A, V_B, V_R, V_P0, V_COUNT = V_P0 + 8 };

enum { K_LIT, K_VAR, K_NEG, K_NOT, K_BIN, K_COND, K_CALL, K_CAST };
enum { SPELL_TYPED, SPELL_PLAIN }; /* a literal with or without a suffix */

typedef struct node {
  unsigned char kind;
  unsigned char type;     /* wg_value_type */
  unsigned char op;       /* binop, variable id or function index */
  unsigned char spelling; /* literals */
  unsigned char implicit; /* casts the type rules inserted */
  unsigned char depth;
  unsigned pos;           /* byte offset, for messages */
  int kid[3];
  /* literal value: integers as sign and magnitude, floats as a double
   * holding exactly the value (rounded to float for a typed f32) */
  bool neg;
  uint64_t mag;
  double f;
} node;

struct wg_expr {
  node *nodes;
  int count, cap;
  int root;
  unsigned uses;
};

/* v rounded to float; infinite past the float range (a plain conversion
 * of an out-of-range double is undefined in C). Doubles below 2^128 - 2^103
 * round to a finite float. */
static inline float wg_expr_to_f32(double v) {
  return fabs(v) < 0x1.ffffffp+127 || isnan(v) ? (float)v : (float)copysign(INFINITY, v);
}

#endif /* WG_EXPR_TREE_H */
