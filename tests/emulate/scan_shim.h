/*
 * scan_shim.h - the CUDA names the scan kernels (templates/scan.cu) use,
 * emulated on the host for tests/emulate/check_scan.sh: each block is a
 * process (forked by scan_harness.cc, so that __shared__ statics are the
 * block's own) and each thread a std::thread; global memory is shared
 * between the processes (MAP_SHARED), so blocks really run side by side and
 * the look-back sees other blocks' statuses appear. Warp intrinsics meet
 * at a barrier of the warp's 32 threads (the kernels call them on every
 * lane), __syncthreads at one of the block's. Not emulated: f16/bf16 (their
 * conversions are PTX), timing.
 */
#ifndef WG_SCAN_SHIM_H
#define WG_SCAN_SHIM_H
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#define WG_HOST_EMULATION 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
struct emu_dim3 { unsigned x, y, z; };
static thread_local emu_dim3 threadIdx;
static emu_dim3 blockIdx = {0, 0, 0}, blockDim = {256, 1, 1}, gridDim = {1, 1, 1};
struct uint4 { unsigned x, y, z, w; };
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
static inline void __stcs(uint4 *p, uint4 v) { *p = v; }
static std::barrier<> *emu_block_bar;
static std::barrier<> *emu_warp_bar[32]; /* up to 1024 threads a block */
static uint64_t emu_slot[32][32];
static inline unsigned emu_lane() { return threadIdx.x & 31u; }
static inline unsigned emu_warp() { return threadIdx.x >> 5; }
static inline void __syncthreads() { emu_block_bar->arrive_and_wait(); }
static inline void __nanosleep(unsigned) { std::this_thread::yield(); }
static inline void __syncwarp(unsigned = 0xffffffffu) { emu_warp_bar[emu_warp()]->arrive_and_wait(); }
template <class T> static inline uint64_t emu_bits(T v) { uint64_t b = 0; memcpy(&b, &v, sizeof v); return b; }
template <class T> static inline T emu_from(uint64_t b) { T v; memcpy(&v, &b, sizeof v); return v; }
static inline void emu_publish(uint64_t b, uint64_t all[32]) {
  emu_slot[emu_warp()][emu_lane()] = b;
  emu_warp_bar[emu_warp()]->arrive_and_wait();
  memcpy(all, emu_slot[emu_warp()], sizeof(uint64_t) * 32);
  emu_warp_bar[emu_warp()]->arrive_and_wait();
}
template <class T> static T emu_shfl(T v, int src) {
  uint64_t all[32]; emu_publish(emu_bits(v), all); return emu_from<T>(all[src]);
}
template <class T> static T __shfl_sync(unsigned, T v, int src, int width = 32) {
  unsigned lane = emu_lane(); int s = (int)(lane & ~(unsigned)(width - 1)) + (src & (width - 1));
  return emu_shfl(v, s);
}
template <class T> static T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32) {
  unsigned lane = emu_lane(); int s = ((lane & (width - 1)) >= d) ? (int)(lane - d) : (int)lane;
  return emu_shfl(v, s);
}
template <class T> static T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32) {
  unsigned lane = emu_lane(); int s = ((lane & (width - 1)) + d < (unsigned)width) ? (int)(lane + d) : (int)lane;
  return emu_shfl(v, s);
}
static unsigned __ballot_sync(unsigned mask, int p) {
  uint64_t all[32]; emu_publish(p ? 1 : 0, all); unsigned r = 0;
  for (int l = 0; l < 32; l++) if ((mask >> l & 1) && all[l]) r |= 1u << l; return r;
}
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
/* The memory-order functions of templates/scan.cu. */
static inline void wg_st_relaxed(unsigned long long *p, unsigned long long v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline unsigned long long wg_ld_relaxed(const unsigned long long *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void wg_cas_relaxed(unsigned long long *p, unsigned long long v) {
  unsigned long long zero = 0;
  __atomic_compare_exchange_n(p, &zero, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
static inline void wg_copy16(uint4 *dst, const uint4 *src) { *dst = *src; }
static inline void wg_copy_wait() {}
static inline float __int_as_float(int x) { return emu_from<float>((uint32_t)x); }
static inline float __uint_as_float(unsigned x) { return emu_from<float>(x); }
static inline unsigned __float_as_uint(float x) { return (unsigned)emu_bits(x); }
static inline double __longlong_as_double(long long x) { return emu_from<double>((uint64_t)x); }
static inline long long __double_as_longlong(double x) { return (long long)emu_bits(x); }
#include "expr_shim.h" /* the conversions of expression casts */
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
static inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
#endif /* WG_SCAN_SHIM_H */
