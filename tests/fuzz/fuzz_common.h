/*
 * fuzz_common.h - what the fuzz targets share: the names the expression
 * renderer (expr.c) may print (fuzz_expr.c checks that rendered CUDA names
 * nothing else, fuzz_spec.c allows them in a kernel's source) and the test
 * that a message is safe to print.
 */
#ifndef WG_FUZZ_COMMON_H
#define WG_FUZZ_COMMON_H

#include <stdbool.h>

/* Whether s is printable ASCII throughout (no control byte, nothing past
 * 126): what every message of the library must be. */
static inline bool wg_fuzz_printable(const char *s) {
  for (; *s; s++)
    if (*s < 32 || *s > 126) return false;
  return true;
}

/* The names the renderer may print: the fixed variables, its helpers, the
 * CUDA math functions of the table, conversion intrinsics, types and
 * boolean literals. Written out here, not taken from expr.c, so that a
 * renderer that starts printing something new fails. */
static const char *const wg_fuzz_expr_names[] = {
  "wg_x", "wg_y", "wg_z", "wg_w", "wg_i", "wg_n", "wg_a", "wg_b", "wg_r",
  "wg_p0", "wg_p1", "wg_p2", "wg_p3", "wg_p4", "wg_p5", "wg_p6", "wg_p7",
  "wg_div", "wg_mod", "wg_abs", "wg_min", "wg_max",
  "fabsf", "fabs", "fminf", "fmin", "fmaxf", "fmax", "powf", "pow",
  "sqrtf", "sqrt", "rsqrtf", "rsqrt", "expf", "exp", "exp2f", "exp2",
  "expm1f", "expm1", "logf", "log", "log2f", "log2", "log1pf", "log1p",
  "sinf", "sin", "cosf", "cos", "tanhf", "tanh", "erff", "erf",
  "floorf", "floor", "ceilf", "ceil",
  "wg_f32_to_i32", "wg_f32_to_u32", "wg_f32_to_i64", "wg_f32_to_u64",
  "wg_f64_to_i32", "wg_f64_to_u32", "wg_f64_to_i64", "wg_f64_to_u64",
  "bool", "int", "unsigned", "long", "float", "double", "true", "false",
};

#endif
