/*
 * expr_gen.h - random expressions from the grammar of docs/expressions.md
 * (expr_gen.c), for property tests, the GPU check of the renderer and the
 * fuzzer's seeds. Seeded and deterministic: the same state gives the same
 * text. Needs nothing of the library but the types of src/expr.h.
 */
#ifndef WG_EXPR_GEN_H
#define WG_EXPR_GEN_H

#include "expr.h"

#include <stddef.h>
#include <stdint.h>

/* The next number of a splitmix64 sequence; *state moves on. */
uint64_t wg_gen_next(uint64_t *state);

/* A random role and random types for its variables: 0..4 inputs, 0..8
 * parameters, any accumulator type. */
void wg_gen_scope(uint64_t *state, wg_expr_scope *scope);

/* Writes a random expression that parses in `scope` into out (NUL
 * terminated) and returns its length; 0 when it did not fit in size.
 * Trees are at most max_depth levels deep (1..16). Every operator, unary
 * operator, ?:, function, cast, literal spelling (decimal, hex, fractions,
 * exponents, every suffix, true/false, the most negative integers, values
 * at the edges of f32) and every variable of the scope can appear, with
 * random spaces and redundant parentheses. */
size_t wg_gen_expr(uint64_t *state, const wg_expr_scope *scope, int max_depth,
                   char *out, size_t size);

/* A random value of type t: a third of the time an edge (0, -0, +-1,
 * +-inf, NaN, the extremes, subnormals, the most negative integer...),
 * else a small number or any bit pattern. */
wg_value wg_gen_value(uint64_t *state, wg_value_type t);

/* Random values for every variable scope has; i is any i64, n one >= 0. */
void wg_gen_values(uint64_t *state, const wg_expr_scope *scope, wg_expr_values *vars);

#endif /* WG_EXPR_GEN_H */
