/*
 * compact_harness.cc - runs a generated compact kernel (stream compaction)
 * on the host, without a GPU: each block is 256 std::threads meeting at
 * barriers for __syncthreads and each warp's intrinsics; blocks run one
 * after another (so a tile's look-back finds its predecessor's inclusive
 * prefix at once; the aggregate path is not exercised). Checks values,
 * indices, count and that nothing past the count is written, against a
 * plain loop. Used by tests/emulate/check_compact.sh.
 */
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __forceinline__
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)
struct emu_dim3 { unsigned x, y, z; };
static thread_local emu_dim3 threadIdx;
static emu_dim3 blockIdx = {0, 0, 0}, gridDim = {1, 1, 1};
struct uint4 { unsigned x, y, z, w; };
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
static std::barrier<> *emu_block_bar;
static std::barrier<> *emu_bar[8];
static uint64_t emu_slot[8][32];
static inline unsigned emu_lane() { return threadIdx.x & 31u; }
static inline unsigned emu_warp() { return threadIdx.x >> 5; }
static inline void emu_publish(uint64_t b, uint64_t all[32]) {
  emu_slot[emu_warp()][emu_lane()] = b;
  emu_bar[emu_warp()]->arrive_and_wait();
  memcpy(all, emu_slot[emu_warp()], sizeof(uint64_t) * 32);
  emu_bar[emu_warp()]->arrive_and_wait();
}
template <class T> static inline uint64_t emu_bits(T v) { uint64_t b = 0; memcpy(&b, &v, sizeof v); return b; }
template <class T> static inline T emu_from(uint64_t b) { T v; memcpy(&v, &b, sizeof v); return v; }
static void __syncthreads() { emu_block_bar->arrive_and_wait(); }
static unsigned __ballot_sync(unsigned, int p) {
  uint64_t all[32]; emu_publish(p ? 1 : 0, all); unsigned r = 0;
  for (int l = 0; l < 32; l++) if (all[l]) r |= 1u << l; return r;
}
template <class T> static T __shfl_up_sync(unsigned, T v, unsigned d) {
  uint64_t all[32]; emu_publish(emu_bits(v), all);
  unsigned lane = emu_lane(); return emu_from<T>(all[lane >= d ? lane - d : lane]);
}
template <class T> static T __shfl_xor_sync(unsigned, T v, int m) {
  uint64_t all[32]; emu_publish(emu_bits(v), all); return emu_from<T>(all[emu_lane() ^ (unsigned)m]);
}
template <class T> static T __shfl_sync(unsigned, T v, int src) {
  uint64_t all[32]; emu_publish(emu_bits(v), all); return emu_from<T>(all[src & 31]);
}
template <class T> static T __shfl_down_sync(unsigned, T v, unsigned, int) { return v; } /* unused */
static int __popc(unsigned x) { return __builtin_popcount(x); }
static int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static void __nanosleep(unsigned) { std::this_thread::yield(); }
static void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
static unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline float __int_as_float(int x) { return emu_from<float>((uint32_t)x); }
static inline float __uint_as_float(unsigned x) { return emu_from<float>(x); }
static inline unsigned __float_as_uint(float x) { return (unsigned)emu_bits(x); }
static inline int __float_as_int(float x) { return (int)emu_bits(x); }
static inline double __longlong_as_double(long long x) { return emu_from<double>((uint64_t)x); }
static inline long long __double_as_longlong(double x) { return (long long)emu_bits(x); }
template <class T, class F> static T emu_trunc_to(F x) { return (T)x; }
#define __float2int_rz emu_trunc_to<int>
#define __double2int_rz emu_trunc_to<int>
#define __float2uint_rz emu_trunc_to<unsigned>
#define __double2uint_rz emu_trunc_to<unsigned>
#define __float2ll_rz emu_trunc_to<long long>
#define __double2ll_rz emu_trunc_to<long long>
#define __float2ull_rz emu_trunc_to<unsigned long long>
#define __double2ull_rz emu_trunc_to<unsigned long long>
using std::fabs; using std::fmin; using std::fmax;
#include "kernel.inc"

int main(int argc, char **argv) {
  const unsigned long long n = strtoull(argv[1], nullptr, 0);
  const unsigned seed = (unsigned)strtoul(argv[2], nullptr, 0);
  const int with_pred = atoi(argv[3]);
  const unsigned offset = argc > 4 ? (unsigned)atoi(argv[4]) : 0; /* elements */
  const unsigned long long tile = WG_TILE;
  const unsigned grid = n == 0 ? 1 : (unsigned)((n + tile - 1) / tile);
  std::vector<wg_elem> storage(n + 1 + offset), values(n + 1);
  wg_elem *const in = storage.data() + offset; /* offset 1: not 16-byte aligned */
  std::vector<long long> indices(n + 1);
  srand(seed);
  for (unsigned long long i = 0; i < n; i++) {
    int r = rand() % 100;
    double x = (rand() % 2001 - 1000) / 100.0;
    if (r < 10) x = 0;
    if (r == 10) x = -0.0;
    if (r == 11) x = NAN;
    in[i] = (wg_elem)x;
  }
  memset(values.data(), 0xa7, values.size() * sizeof(wg_elem));
  memset(indices.data(), 0xa7, indices.size() * 8);
  unsigned long long count = 0xa7a7a7a7a7a7a7a7ull;
  std::vector<unsigned char> workspace(16 + 8 * (size_t)grid, 0);
  wg_inputs inputs;
  memset(&inputs, 0, sizeof inputs);
  inputs.x = in;
  wg_params params;
  memset(&params, 0, sizeof params);
  params.p[0].f32 = 0.5f;
  gridDim.x = grid;
  std::barrier<> block_bar(256);
  std::vector<std::barrier<> *> bars;
  for (int w = 0; w < 8; w++) emu_bar[w] = new std::barrier<>(32);
  emu_block_bar = &block_bar;
  for (unsigned b = 0; b < grid; b++) {
    blockIdx.x = b;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 256; t++)
      threads.emplace_back([&, t] {
        threadIdx.x = t;
        KERNEL(inputs, n, values.data(), indices.data(), &count, params,
               grid > 1 ? workspace.data() : nullptr);
      });
    for (auto &th : threads) th.join();
  }
  unsigned long long want = 0;
  int bad = 0;
  for (unsigned long long i = 0; i < n; i++) {
    const double x = (double)in[i];
    uint64_t bits = emu_bits(in[i]);
    if (std::is_floating_point<wg_elem>::value) bits &= ~(1ull << (sizeof(wg_elem) * 8 - 1));
    const bool keep = with_pred ? (x > 0.5 && x == x) : bits != 0;
    if (!keep) continue;
    if (memcmp(&values[want], &in[i], sizeof(wg_elem)) != 0 || indices[want] != (long long)i) {
      if (bad++ < 5) fprintf(stderr, "n=%llu output %llu: want element %llu (index got %lld)\n",
                             n, want, i, indices[want]);
    }
    want++;
  }
  if (count != want) { fprintf(stderr, "n=%llu count %llu want %llu\n", n, count, want); bad++; }
  for (unsigned long long j = want; j < n; j++) {
    unsigned char *p = (unsigned char *)&values[j];
    if (p[0] != 0xa7 || (indices[j] & 0xff) != 0xa7) { fprintf(stderr, "n=%llu past count written at %llu\n", n, j); bad++; break; }
  }
  for (size_t k = 0; k < workspace.size(); k++)
    if (workspace[k]) { fprintf(stderr, "n=%llu workspace byte %zu left %d\n", n, k, workspace[k]); bad++; break; }
  return bad ? 1 : 0;
}
