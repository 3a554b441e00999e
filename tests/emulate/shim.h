/*
 * shim.h - the CUDA names a generated warp kernel uses, emulated on the
 * host, so that the kernels can be checked against the CPU reference on a
 * machine without a GPU (tests/emulate/check_specs.py).
 *
 * One block of 64 threads (two warps), each thread a std::thread; the lanes
 * of a warp meet at a barrier at every warp intrinsic, which is faithful
 * because the generated kernels call each intrinsic on every lane of a warp
 * (no lane leaves a loop early). Shuffles follow the CUDA documentation's
 * rules for `width` segments; redux, ballot, any, all and match combine the
 * lanes named in the mask. uint4 and __ldg serve the vec layout's 16-byte
 * loads and stores. Not emulated: timing, memory ordering beyond the
 * barriers, more than one block.
 */
#ifndef WG_EMULATE_SHIM_H
#define WG_EMULATE_SHIM_H
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>
#include <algorithm>
#define __global__
#define __device__
#define __forceinline__
#define __restrict__ __restrict
#define __shared__
struct emu_dim3 { unsigned x, y, z; };
static thread_local emu_dim3 threadIdx;
struct uint4 { unsigned x, y, z, w; };
template <class T> static inline T __ldg(const T *p) { return *p; }
/* The prelude's wg_ldcg (cache-global loads of partials) names it. */
template <class T> static inline T __ldcg(const T *p) { return *p; }
static emu_dim3 blockIdx = {0, 0, 0}, blockDim = {64, 1, 1}, gridDim = {1, 1, 1};
static std::barrier<> *emu_bar[2];
static uint64_t emu_slot[2][32];
static inline unsigned emu_lane() { return threadIdx.x & 31u; }
static inline unsigned emu_warp() { return threadIdx.x >> 5; }
template <class T> static inline uint64_t emu_bits(T v) { uint64_t b = 0; memcpy(&b, &v, sizeof v); return b; }
template <class T> static inline T emu_from(uint64_t b) { T v; memcpy(&v, &b, sizeof v); return v; }
// Exchange: every lane publishes a value, then reads all.
static inline void emu_publish(uint64_t b, uint64_t all[32]) {
  emu_slot[emu_warp()][emu_lane()] = b;
  emu_bar[emu_warp()]->arrive_and_wait();
  memcpy(all, emu_slot[emu_warp()], sizeof(uint64_t) * 32);
  emu_bar[emu_warp()]->arrive_and_wait();
}
static inline void __syncwarp(unsigned = 0xffffffffu) { emu_bar[emu_warp()]->arrive_and_wait(); }
template <class T> static T emu_shfl(T v, int src) {
  uint64_t all[32]; emu_publish(emu_bits(v), all); return emu_from<T>(all[src]);
}
template <class T> static T __shfl_sync(unsigned, T v, int src, int width = 32) {
  unsigned lane = emu_lane(); int s = (int)(lane & ~(unsigned)(width - 1)) + (src & (width - 1));
  return emu_shfl(v, s);
}
template <class T> static T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32) {
  unsigned lane = emu_lane(); int s = ((lane & (width - 1)) + d < (unsigned)width) ? (int)(lane + d) : (int)lane;
  return emu_shfl(v, s);
}
template <class T> static T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32) {
  unsigned lane = emu_lane(); int s = ((lane & (width - 1)) >= d) ? (int)(lane - d) : (int)lane;
  return emu_shfl(v, s);
}
template <class T> static T __shfl_xor_sync(unsigned, T v, int m, int width = 32) {
  unsigned lane = emu_lane(); unsigned s = lane ^ (unsigned)m;
  if ((s & ~(unsigned)(width - 1)) != (lane & ~(unsigned)(width - 1))) s = lane;
  return emu_shfl(v, (int)s);
}
static unsigned __ballot_sync(unsigned mask, int p) {
  uint64_t all[32]; emu_publish(p ? 1 : 0, all); unsigned r = 0;
  for (int l = 0; l < 32; l++) if ((mask >> l & 1) && all[l]) r |= 1u << l; return r;
}
static int __any_sync(unsigned mask, int p) { return __ballot_sync(mask, p) != 0; }
static int __all_sync(unsigned mask, int p) { return __ballot_sync(mask, p) == mask; }
template <class T> static unsigned __match_any_sync(unsigned mask, T v) {
  uint64_t all[32]; uint64_t me = emu_bits(v); emu_publish(me, all); unsigned r = 0;
  for (int l = 0; l < 32; l++) if ((mask >> l & 1) && all[l] == me) r |= 1u << l; return r;
}
#define EMU_REDUX(name, T, expr)                                             \
  static T name(unsigned mask, T v) {                                         \
    uint64_t all[32]; emu_publish(emu_bits(v), all); bool first = true; T a = 0; \
    for (int l = 0; l < 32; l++) if (mask >> l & 1) { T b = emu_from<T>(all[l]); a = first ? b : (expr); first = false; } \
    return a; }
EMU_REDUX(__reduce_add_sync, unsigned, a + b)
EMU_REDUX(__reduce_add_sync, int, (int)((unsigned)a + (unsigned)b))
EMU_REDUX(__reduce_min_sync, unsigned, std::min(a, b))
EMU_REDUX(__reduce_min_sync, int, std::min(a, b))
EMU_REDUX(__reduce_max_sync, unsigned, std::max(a, b))
EMU_REDUX(__reduce_max_sync, int, std::max(a, b))
EMU_REDUX(__reduce_and_sync, unsigned, a & b)
EMU_REDUX(__reduce_or_sync, unsigned, a | b)
EMU_REDUX(__reduce_xor_sync, unsigned, a ^ b)
static inline float __int_as_float(int x) { return emu_from<float>((uint32_t)x); }
static inline float __uint_as_float(unsigned x) { return emu_from<float>(x); }
static inline unsigned __float_as_uint(float x) { return (unsigned)emu_bits(x); }
static inline int __float_as_int(float x) { return (int)emu_bits(x); }
static inline double __longlong_as_double(long long x) { return emu_from<double>((uint64_t)x); }
static inline long long __double_as_longlong(double x) { return (long long)emu_bits(x); }
static inline float emu_h2f(unsigned short h) { _Float16 f; memcpy(&f, &h, 2); return (float)f; }
static inline unsigned short emu_f2h(float x) { _Float16 f = (_Float16)x; unsigned short h; memcpy(&h, &f, 2); return h; }
#include "expr_shim.h"

#endif /* WG_EMULATE_SHIM_H */
