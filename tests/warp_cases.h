/*
 * warp_cases.h - warp-primitive specs with expressions, inputs and
 * parameters that `warpgen list` does not hold: run and checked on the GPU
 * (test_gpu.c) and compiled by NVRTC with no GPU (test_nvrtc.c), so the
 * two suites see the same kernels.
 */
#ifndef WG_WARP_CASES_H
#define WG_WARP_CASES_H

#include "warpgen.h"

/* Specs the list does not hold: maps (with the element's global index, the
 * group's count, other inputs, parameters), combine=/identity=, final=, and
 * the operators' own parameter (var/std's correction) through the _ex
 * call; checked by wg_oracle_warp_check_ex. */
static const struct warp_case {
  const char *text;
  size_t nparams;
  wg_scalar params[1];
} expr_cases[] = {
  {"reduce i32 sum map=\"x * y + p0 * i32(i % 5) + i32(n)\" inputs=i32,i32 params=i32 "
   "width=8", 1, {{.i32 = 7}}},
  {"allreduce f32 argmax map=\"abs(x - y)\" inputs=f32,f32 width=16 variant=xor", 0, {{0}}},
  {"reduce f64 argmin map=\"x * p0\" params=f64 width=32 variant=smem", 1, {{.f64 = -1.5}}},
  {"scan i32 combine=\"max(a, b)\" identity=\"-2147483648\" layout=lane", 0,
   {{0}}},
  {"exscan u32 combine=\"a + b\" identity=\"0\" width=16 variant=idx", 0, {{0}}},
  {"scan u64 combine=\"min(a, b)\" identity=\"18446744073709551615\" width=8", 0, {{0}}},
  {"reduce u32 combine=\"a + b\" identity=\"0\" final=\"f64(r) / f64(n)\" width=16", 0,
   {{0}}},
  {"allreduce i64 max final=\"r * 2 + n\" width=4 variant=down layout=lane", 0, {{0}}},
  {"reduce f32 count_nonzero map=\"x > p0\" params=f32 layout=lane", 1, {{.f32 = 0.25f}}},
  {"allreduce i32 sum map=\"x * x\" width=32 variant=down layout=lane", 0, {{0}}},
  {"exscan f32 sum map=\"x * x\" width=8 variant=up", 0, {{0}}},
  {"reduce f16 mean map=\"x * 2.0\" width=16 variant=idx", 0, {{0}}},
  {"allreduce bf16 logsumexp map=\"x - y\" inputs=bf16,f32 width=8 variant=smem", 0, {{0}}},
  {"reduce i32 norm2 map=\"f32(x % 100)\" width=32 variant=xor", 0, {{0}}},
  {"reduce f32 var width=8", 1, {{.f64 = 0.0}}},
  {"allreduce f64 std width=32 variant=xor layout=lane", 1, {{.f64 = 2.0}}},
  {"allreduce f16 var width=16 variant=down", 0, {{0}}},
};

#endif /* WG_WARP_CASES_H */
