/*
 * rownorm_harness.cc - runs one generated fused row kernel (softmax-rows,
 * log-softmax-rows, layernorm-rows, rmsnorm-rows) on the host, one block
 * of 64 threads (shim.h), and checks every output row against the float64
 * oracle (tests/oracle_rownorm.c): tests/emulate/check_rownorm.sh builds
 * it with the kernel's source included (WG_BLOCK made 64).
 *
 * usage: harness OP(0..3: softmax, log_softmax, layernorm, rmsnorm) TYPE ROWS COLS IN_PAD OUT_PAD OFFSET WEIGHT BIAS SEED [INPLACE]
 * INPLACE 1: out == in (OUT_PAD is IN_PAD's), checked against a copy of
 * the input taken before the launch.
 */
#include "shim.h"
#include <cstdio>
#include <cstdlib>
#include <vector>
extern "C" {
#include "oracle.h"
}
static std::barrier<> *emu_block_bar;
static inline void __syncthreads() { emu_block_bar->arrive_and_wait(); }
#undef __shared__
#define __shared__ static
#define __launch_bounds__(a, b)
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
static inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
#include <math.h>
/* The block's dynamic shared memory (a kept row, weight and bias). */
#define WG_EMU_DYNAMIC_BYTES (1u << 18)
alignas(16) unsigned char wg_dynamic_bytes[WG_EMU_DYNAMIC_BYTES];

#include KERNEL_SOURCE

int main(int argc, char **argv) {
  if (argc != 11 && argc != 12) return 2;
  const bool inplace = argc == 12 && atoi(argv[11]);
  const wg_primitive p = (wg_primitive)(WG_SOFTMAX_ROWS + atoi(argv[1])); /* 0..3 */
  const wg_type t = (wg_type)atoi(argv[2]);
  const uint64_t rows = strtoull(argv[3], 0, 10), cols = strtoull(argv[4], 0, 10);
  const uint64_t in_stride = cols + strtoull(argv[5], 0, 10), out_stride = inplace ? in_stride : cols + strtoull(argv[6], 0, 10);
  const uint64_t offset = strtoull(argv[7], 0, 10);
  const bool use_w = atoi(argv[8]), use_b = atoi(argv[9]);
  const uint64_t seed = strtoull(argv[10], 0, 0);
  const size_t size = wg_type_size(t);
  const uint64_t in_total = (rows ? (rows - 1) * in_stride + cols : 0) + offset + 8;
  const uint64_t out_total = (rows ? (rows - 1) * out_stride + cols : 0) + 8;
  /* 16-byte aligned buffers, as cudaMalloc gives. */
  unsigned char *in = (unsigned char *)aligned_alloc(16, (in_total * size + 15) / 16 * 16);
  unsigned char *out = (unsigned char *)aligned_alloc(16, (out_total * size + 15) / 16 * 16);
  unsigned char *w = (unsigned char *)aligned_alloc(16, ((cols + 8) * size + 15) / 16 * 16);
  unsigned char *b = (unsigned char *)aligned_alloc(16, ((cols + 8) * size + 15) / 16 * 16);
  for (uint64_t i = 0; i < in_total; i++)
    wg_oracle_set(t, in, i, ((double)(wg_oracle_random(seed, 9, i) >> 11) * 0x1p-53 - 0.5) * 8.0);
  unsigned char *rows0 = in + offset * size;
  wg_oracle_rownorm_fill(t, rows0, rows, cols, in_stride, seed, true);
  for (uint64_t j = 0; j < cols + 8; j++) {
    wg_oracle_set(t, w, j, ((double)(wg_oracle_random(seed, 4, j) >> 11) * 0x1p-53 - 0.5) * 4.0);
    wg_oracle_set(t, b, j, ((double)(wg_oracle_random(seed, 5, j) >> 11) * 0x1p-53 - 0.5) * 4.0);
  }
  memset(out, 0x7B, out_total * size);
  /* In place: the oracle reads a copy of the input, the kernel writes the
   * input itself. */
  std::vector<unsigned char> copy(in, in + in_total * size);
  unsigned char *const source = inplace ? copy.data() + offset * size : rows0;
  unsigned char *const dest = inplace ? rows0 : out;
  std::barrier<> bar0(32), bar1(32), block(64);
  emu_bar[0] = &bar0;
  emu_bar[1] = &bar1;
  emu_block_bar = &block;
  const bool norm = p == WG_LAYERNORM_ROWS || p == WG_RMSNORM_ROWS;
  const wg_elem *wp = norm && use_w ? (const wg_elem *)w : nullptr;
  const wg_elem *bp = p == WG_LAYERNORM_ROWS && use_b ? (const wg_elem *)b : nullptr;
  std::vector<std::thread> threads;
  for (unsigned tid = 0; tid < 64; tid++)
    threads.emplace_back([&, tid] {
      threadIdx = {tid, 0, 0};
      KERNEL_NAME((const wg_elem *)rows0, wp, bp, (wg_elem *)dest, rows, cols, in_stride, out_stride, 1e-5);
    });
  for (auto &th : threads) th.join();
  std::vector<double> value(cols + 1), scale(cols + 1);
  wg_rownorm_want want = {cols, value.data(), scale.data()};
  int bad = 0;
  for (uint64_t r = 0; r < rows && bad < 5; r++) {
    wg_oracle_rownorm_row(&want, p, t, source, r * in_stride, cols, wp ? w : nullptr, bp ? b : nullptr, 1e-5);
    uint64_t col = 0;
    char why[320];
    if (!wg_oracle_rownorm_check(&want, t, dest, r * out_stride, &col, why, sizeof why)) {
      printf("row %llu: %s\n", (unsigned long long)r, why);
      bad++;
    }
    for (uint64_t j = cols; r + 1 < rows && j < out_stride; j++)
      for (size_t byte = 0; byte < size; byte++)
        if (dest[(r * out_stride + j) * size + byte] != (inplace ? source[(r * in_stride + j) * size + byte] : 0x7B)) { printf("row %llu: gap written\n", (unsigned long long)r); bad++; j = out_stride; break; }
    if (rows > 4 && r == 4 && p == WG_LAYERNORM_ROWS)
      for (uint64_t j = 0; j < cols; j++)
        if (wg_oracle_elem(t, dest, r * out_stride + j) != (bp ? wg_oracle_elem(t, b, j) : 0.0)) { printf("row 4: variance not 0\n"); bad++; break; }
  }
  for (size_t byte = 0; byte < size && rows; byte++)
    if (dest[((rows - 1) * out_stride + cols) * size + byte] !=
        (inplace ? source[((rows - 1) * in_stride + cols) * size + byte] : 0x7B)) { printf("wrote past the end\n"); bad++; break; }
  return bad ? 1 : 0;
}
