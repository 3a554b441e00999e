/*
 * hist_harness.cc - runs a generated histogram kernel (templates/histogram.cu,
 * made with WG_BLOCK 64 by check_hist.sh) on the host with shim.h's warp
 * emulation: each block's 64 threads are std::threads, blocks one after
 * another, shared memory and atomics emulated; then compares the bins with
 * the oracle (tests/oracle_hist.c). Checks the kernel's logic (head, tail,
 * loops, votes, 16-bit wraps, merges) on a machine without a GPU.
 *   usage: PROGRAM TYPE BINS N GRID SHIFT KIND COUNTS(4|8) SEED [WIDE]
 * WIDE 1: float keys over [-2e30, 2e30], a range too wide for the
 * reciprocal, so every key divides (the kernel's slow path); WIDE 2: over
 * [-1e38, 1e38] (f64: [-5e307, 5e307]), where (x - lo) * bins overflows
 * and the kernel divides first; else [-3, 5].
 * KIND: the oracle's (0 uniform, 1 piled, 2 one bin, 3 edges), or 4 and 5:
 * integer keys on two bins of one 16-bit word (alternating; or the high
 * bin's 65535 first, so that the low bin's carry wraps the whole word).
 * Prints PASS or FAIL with the first wrong bin; exit 0 on PASS.
 */
#include "shim.h"
#include <atomic>
#include <cstdio>
#include <cstdlib>
static std::barrier<> *emu_block_bar;
static inline void __syncthreads() { emu_block_bar->arrive_and_wait(); }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
template <class T> static inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
/* The kernel's shared address is unused on the host (no shared window). */
static inline size_t __cvta_generic_to_shared(const void *p) { return (size_t)p; }
#define __launch_bounds__(x)
/* The truncating conversions come from shim.h (expr_shim.h). */
extern "C" { unsigned wg_hist[1 << 17]; } /* the kernel's extern __shared__ array */
#include EMU_SOURCE
extern "C" {
#include "oracle.h"
}
int main(int argc, char **argv) {
  if (argc < 9) return 2;
  const wg_type type = (wg_type)atoi(argv[1]);
  const long long bins = atoll(argv[2]);
  const unsigned long long n = strtoull(argv[3], 0, 10);
  const unsigned grid = (unsigned)atoi(argv[4]), shift = (unsigned)atoi(argv[5]);
  const int kind = atoi(argv[6]), csize = atoi(argv[7]);
  const unsigned long long seed = strtoull(argv[8], 0, 10);
  const size_t esize = wg_type_size(type);
  std::vector<unsigned __int128> store((n + shift + 8) * esize / 16 + 2);
  unsigned char *in = (unsigned char *)store.data() + shift * esize;
  const int wide = argc > 9 ? atoi(argv[9]) : 0;
  const double far = type == WG_F64 ? 5e307 : 1e38;
  const double lo = wide == 2 ? -far : wide ? -2e30 : -3.0, hi = wide == 2 ? far : wide ? 2e30 : 5.0;
  if (kind >= 4) { /* integer keys on two bins that share a 16-bit word */
    for (unsigned long long i = 0; i < n; i++) {
      /* 4: alternating; 5: 65535 keys of the high bin first (its counter at
       * 0xffff), then the low bin, whose carries then wrap the word */
      const unsigned long long k = (unsigned long long)((bins / 3) & ~1ll) +
                                   (kind == 4 ? (i & 1) : i < 65535);
      memcpy(in + i * esize, &k, esize);
    }
  } else {
    wg_oracle_hist_fill(type, bins, lo, hi, kind, in, n, seed);
  }
  std::vector<unsigned char> out((size_t)bins * csize + 64, 0);
  memset(out.data() + bins * csize, 0xa5, 64);
  wg_params params;
  memset(&params, 0, sizeof params);
  params.p[0].f64 = lo;
  params.p[1].f64 = hi;
  std::barrier<> b0(32), b1(32), bb(64);
  emu_bar[0] = &b0; emu_bar[1] = &b1; emu_block_bar = &bb;
  gridDim = {grid, 1, 1};
  for (unsigned blk = 0; blk < grid; blk++) {
    blockIdx = {blk, 0, 0};
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < 64; t++)
      ts.emplace_back([&, t] { threadIdx = {t, 0, 0};
        EMU_KERNEL((const wg_elem *)in, n, (wg_count *)out.data(), bins, params); });
    for (auto &t : ts) t.join();
  }
  for (int k = 0; k < 64; k++)
    if (out[bins * csize + k] != 0xa5) { printf("FAIL: wrote past the bins\n"); return 1; }
  std::vector<uint64_t> want(bins);
  wg_oracle_histogram(want.data(), type, bins, lo, hi, in, n);
  /* The oracle bins as the kernel does: uniform keys must also give the
   * last bin no more than about its share (a range's overflow once sent
   * every key past FLT_MAX / bins there, kernel and oracle alike). */
  if (kind == 0 && want[bins - 1] > 4 * n / (unsigned long long)bins + 50) {
    printf("FAIL: the oracle put %llu uniform keys in the last bin\n",
           (unsigned long long)want[bins - 1]);
    return 1;
  }
  wg_oracle_report r;
  wg_oracle_report_init(&r);
  wg_oracle_hist_check(&r, csize == 8 ? WG_U64 : WG_U32, bins, want.data(), out.data());
  printf("%s: %s bins=%lld n=%llu grid=%u shift=%u kind=%d seed=%llu%s%s%s\n",
         r.mismatches ? "FAIL" : "PASS",
         wg_type_size(type) ? argv[1] : "?", bins, n, grid, shift, kind, seed,
         wide == 2 ? " wider" : wide ? " wide" : "",
         r.mismatches ? ": " : "", r.mismatches ? r.first : "");
  return r.mismatches ? 1 : 0;
}
