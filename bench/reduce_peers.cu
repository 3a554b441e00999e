// reduce_peers.cu - whole-array and row reductions on one GPU: the kernel
// designs warpgen generates (written here as C++ templates over a type table
// and an operator table, the same shape as templates/array_reduce.cu and
// templates/rows_reduce.cu) against cub::DeviceReduce,
// cub::DeviceSegmentedReduce and the bandwidth ceilings (a device-to-device
// copy and a plain 16-byte-load read), all on the same buffers, timed with
// CUDA events (warm-up, then the median of many timed batches).
//
// Build (after `ninja -C build`, for the oracle's library calls):
//   nvcc -arch=sm_90 -O3 -std=c++17 -Iinclude -Itests -o bench/out/reduce_peers \
//       bench/reduce_peers.cu tests/oracle.c tests/oracle_warp.c build/libwarpgen.a \
//       -ldl -lpthread
// Run:    bench/out/reduce_peers [--csv FILE] [--quick]
//
// Cold buffers: every timed call of a size that fits in L2 several times over
// reads a different slice of a 2 GiB arena (the offset moves by the size each
// call), so that no call finds its input in the 60 MB L2 left there by an
// earlier one; both the peers and the candidates get the same sequence of
// slices. "warm" rows reuse one slice (L2-resident for small sizes).
// Small sizes are timed as batches of back-to-back calls on one stream
// (time / calls): that is what a caller issuing reductions in a loop sees,
// launch gaps included, without host-side timer noise.
//
// Every candidate is checked against the CPU oracle (tests/oracle.h) on
// hashed random inputs (integers and min/max exact, float sums within the
// oracle's bound from the count and the type), outputs poisoned first,
// unaligned starting pointers and strides included.

#include "bench_harness.cuh"
#include "oracle.h"

#include <cub/cub.cuh>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>


// ---------------------------------------------------------------------------
// Types and operators as tables (what warpgen's prelude provides as wg_elem,
// wg_acc, wg_load, wg_store, wg_combine, wg_identity).
// ---------------------------------------------------------------------------

template <class T> struct elem;
template <> struct elem<float> {
  typedef float acc;
  static const char *name() { return "f32"; }
  static constexpr wg_type oracle_type = WG_F32;
  __host__ __device__ static acc load(float x) { return x; }
  __host__ __device__ static float store(acc v) { return v; }
};
template <> struct elem<double> {
  typedef double acc;
  static const char *name() { return "f64"; }
  static constexpr wg_type oracle_type = WG_F64;
  __host__ __device__ static acc load(double x) { return x; }
  __host__ __device__ static double store(acc v) { return v; }
};
template <> struct elem<int> {
  typedef int acc;
  static const char *name() { return "i32"; }
  static constexpr wg_type oracle_type = WG_I32;
  __host__ __device__ static acc load(int x) { return x; }
  __host__ __device__ static int store(acc v) { return v; }
};
// Halves accumulate in f32 and are rounded once when stored.
template <> struct elem<__half> {
  typedef float acc;
  static const char *name() { return "f16"; }
  static constexpr wg_type oracle_type = WG_F16;
  __host__ __device__ static acc load(__half x) { return __half2float(x); }
  __host__ __device__ static __half store(acc v) { return __float2half_rn(v); }
};

template <class A> struct num;
template <> struct num<float> {
  __host__ __device__ static float lowest() { return -INFINITY; }
  __host__ __device__ static float highest() { return INFINITY; }
};
template <> struct num<double> {
  __host__ __device__ static double lowest() { return -INFINITY; }
  __host__ __device__ static double highest() { return INFINITY; }
};
template <> struct num<int> {
  __host__ __device__ static int lowest() { return INT_MIN; }
  __host__ __device__ static int highest() { return INT_MAX; }
};

// Integer sums wrap modulo 2^32: add as unsigned so that the wrap is defined.
__host__ __device__ inline float add_wrap(float a, float b) { return a + b; }
__host__ __device__ inline double add_wrap(double a, double b) { return a + b; }
__host__ __device__ inline int add_wrap(int a, int b) {
  return (int)((unsigned)a + (unsigned)b);
}
// fmin/fmax semantics for floats: a NaN loses against a number.
__host__ __device__ inline float min2(float a, float b) { return fminf(a, b); }
__host__ __device__ inline double min2(double a, double b) { return fmin(a, b); }
__host__ __device__ inline int min2(int a, int b) { return a < b ? a : b; }
__host__ __device__ inline float max2(float a, float b) { return fmaxf(a, b); }
__host__ __device__ inline double max2(double a, double b) { return fmax(a, b); }
__host__ __device__ inline int max2(int a, int b) { return a > b ? a : b; }

struct op_sum {
  static const char *name() { return "sum"; }
  static constexpr wg_operator oracle_op = WG_OP_SUM;
  template <class A> __host__ __device__ static A identity() { return A(0); }
  template <class A> __host__ __device__ static A combine(A a, A b) {
    return add_wrap(a, b);
  }
};
struct op_min {
  static const char *name() { return "min"; }
  static constexpr wg_operator oracle_op = WG_OP_MIN;
  template <class A> __host__ __device__ static A identity() {
    return num<A>::highest();
  }
  template <class A> __host__ __device__ static A combine(A a, A b) {
    return min2(a, b);
  }
};
struct op_max {
  static const char *name() { return "max"; }
  static constexpr wg_operator oracle_op = WG_OP_MAX;
  template <class A> __host__ __device__ static A identity() {
    return num<A>::lowest();
  }
  template <class A> __host__ __device__ static A combine(A a, A b) {
    return max2(a, b);
  }
};

// ---------------------------------------------------------------------------
// Device building blocks
// ---------------------------------------------------------------------------

// 16-byte loads: CACHE 0 = read-only path (ld.global.nc), 1 = streaming
// (evict-first; the data is read once).
template <int CACHE> __device__ __forceinline__ uint4 load16(const uint4 *p) {
  if (CACHE == 1) return __ldcs(p);
  if (CACHE == 2) {  // read-only, no L1 allocation, 256-byte L2 prefetch
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
  }
  return __ldg(p);
}

// Folds the 16/sizeof(T) elements of one 16-byte vector into acc.
template <class T, class Op>
__device__ __forceinline__ typename elem<T>::acc
combine_vec(typename elem<T>::acc acc, uint4 v) {
  constexpr int VEC = 16 / sizeof(T);
  T e[VEC];
  memcpy(e, &v, 16);
#pragma unroll
  for (int j = 0; j < VEC; j++) acc = Op::combine(acc, elem<T>::load(e[j]));
  return acc;
}

// The same as a pairwise tree (short dependency chains; fixed order).
template <class T, class Op>
__device__ __forceinline__ typename elem<T>::acc fold_vec(uint4 v) {
  typedef typename elem<T>::acc A;
  constexpr int VEC = 16 / sizeof(T);
  T e[VEC];
  memcpy(e, &v, 16);
  A t[VEC];
#pragma unroll
  for (int j = 0; j < VEC; j++) t[j] = elem<T>::load(e[j]);
#pragma unroll
  for (int w = 1; w < VEC; w *= 2)
#pragma unroll
    for (int j = 0; j + w < VEC; j += 2 * w) t[j] = Op::combine(t[j], t[j + w]);
  return t[0];
}

// Reduction over the `width` lanes of a logical warp (lane 0 of each group
// holds the result). Every lane of the hardware warp must take part.
template <class Op, int WIDTH, class A>
__device__ __forceinline__ A group_reduce(A v) {
#pragma unroll
  for (int off = WIDTH / 2; off > 0; off /= 2)
    v = Op::combine(v, __shfl_down_sync(0xffffffffu, v, off, WIDTH));
  return v;
}

// Block reduction: warps, then shared memory, then one warp. Thread 0 holds
// the result. Ends with a barrier so that the caller may call it again.
template <class Op, int BLOCK, class A>
__device__ __forceinline__ A block_reduce(A v) {
  __shared__ A warp_sums[BLOCK / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = group_reduce<Op, 32>(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < BLOCK / 32 ? warp_sums[lane] : Op::template identity<A>();
    v = group_reduce<Op, 32>(v);
  }
  __syncthreads();
  return v;
}

// Elements of a row before its first 16-byte boundary (0 when aligned).
template <class T>
__device__ __forceinline__ u64 head_count(const T *p, u64 n) {
  u64 h = ((16 - ((uintptr_t)p & 15)) & 15) / sizeof(T);
  return h < n ? h : n;
}

// ---------------------------------------------------------------------------
// Whole array: one launch. The blocks walk the 16-byte vectors in one of
// three orders (MAP), each thread keeping U loads in flight:
//   0 sweep   vector v of the grid's round r is r * grid_threads + tid: the
//             whole grid streams one contiguous window of memory;
//   1 tiles   tiles of BLOCK * U vectors dealt to blocks round-robin; thread
//             t loads U consecutive vectors (t * U ...) of the tile;
//   2 tiles   the same tiles, thread t loads vectors t, t + BLOCK, ...
// Each block writes a partial; the last block to arrive (fence + atomic
// ticket) folds the partials in block order and resets the ticket for the
// next launch. The same grid for the same n and device -> the same bits on
// every run.
template <class T, class Op, int BLOCK, int U, int MAP, int CACHE>
__global__ void __launch_bounds__(BLOCK)
array_reduce(const T *__restrict__ in, u64 n, T *__restrict__ out,
             typename elem<T>::acc *partials, unsigned *ticket) {
  typedef typename elem<T>::acc A;
  constexpr int VEC = 16 / sizeof(T);
  const u64 head = head_count(in, n);
  const u64 nvec = (n - head) / VEC;
  const u64 tail_start = head + nvec * VEC;
  const uint4 *body = reinterpret_cast<const uint4 *>(in + head);
  const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;

  A acc = Op::template identity<A>();
  // The scalar head and tail (fewer than VEC elements each).
  if (tid < head) acc = Op::combine(acc, elem<T>::load(in[tid]));
  if (tid < n - tail_start)
    acc = Op::combine(acc, elem<T>::load(in[tail_start + tid]));

  if (MAP == 0) {
    const u64 lanes = (u64)gridDim.x * BLOCK;
    u64 v = tid;
    for (; v + (U - 1) * lanes < nvec; v += U * lanes) {
      uint4 x[U];
#pragma unroll
      for (int u = 0; u < U; u++) x[u] = load16<CACHE>(body + v + u * lanes);
      A t[U];
#pragma unroll
      for (int u = 0; u < U; u++) t[u] = fold_vec<T, Op>(x[u]);
#pragma unroll
      for (int w = 1; w < U; w *= 2)
#pragma unroll
        for (int j = 0; j + w < U; j += 2 * w) t[j] = Op::combine(t[j], t[j + w]);
      acc = Op::combine(acc, t[0]);
    }
    for (; v < nvec; v += lanes) acc = Op::combine(acc, fold_vec<T, Op>(load16<CACHE>(body + v)));
  } else {
    constexpr u64 TILE = (u64)BLOCK * U;
    const u64 tiles = (nvec + TILE - 1) / TILE;
    for (u64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const u64 base = tile * TILE;
      uint4 x[U];
      A t[U];
      if (base + TILE <= nvec) {
#pragma unroll
        for (int u = 0; u < U; u++)
          x[u] = load16<CACHE>(body + base + (MAP == 1 ? threadIdx.x * U + u
                                                       : u * BLOCK + threadIdx.x));
#pragma unroll
        for (int u = 0; u < U; u++) t[u] = fold_vec<T, Op>(x[u]);
      } else {
#pragma unroll
        for (int u = 0; u < U; u++) {
          const u64 v = base + (MAP == 1 ? threadIdx.x * U + u : u * BLOCK + threadIdx.x);
          t[u] = v < nvec ? fold_vec<T, Op>(load16<CACHE>(body + v))
                          : Op::template identity<A>();
        }
      }
#pragma unroll
      for (int w = 1; w < U; w *= 2)
#pragma unroll
        for (int j = 0; j + w < U; j += 2 * w) t[j] = Op::combine(t[j], t[j + w]);
      acc = Op::combine(acc, t[0]);
    }
  }

  acc = block_reduce<Op, BLOCK>(acc);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = elem<T>::store(acc);
    return;
  }
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();
    is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  // All of a round's partial loads are issued before any is folded: the
  // combine costs one L2 round trip per 8 * BLOCK partials, not one each.
  acc = Op::template identity<A>();
  for (unsigned b0 = 0; b0 < gridDim.x; b0 += 8 * BLOCK) {
    A p[8];
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const unsigned b = b0 + j * BLOCK + threadIdx.x;
      p[j] = b < gridDim.x ? __ldcg(partials + b) : Op::template identity<A>();
    }
#pragma unroll
    for (int j = 0; j < 8; j++) acc = Op::combine(acc, p[j]);
  }
  acc = block_reduce<Op, BLOCK>(acc);
  if (threadIdx.x == 0) {
    *out = elem<T>::store(acc);
    *ticket = 0;
  }
}

// The plain-read ceiling: the sweep walk, 16-byte loads folded with xor, a
// store that never happens in practice (keeps the loads alive).
template <int BLOCK, int U, bool CONTIG, int CACHE>
__global__ void __launch_bounds__(BLOCK)
read_ceiling(const uint4 *__restrict__ in, u64 nvec, unsigned *sink) {
  const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;
  u64 v, end, lanes;
  if (CONTIG) {
    v = nvec * blockIdx.x / gridDim.x + threadIdx.x;
    end = nvec * (blockIdx.x + 1) / gridDim.x;
    lanes = BLOCK;
  } else {
    v = tid;
    end = nvec;
    lanes = (u64)gridDim.x * BLOCK;
  }
  unsigned acc = 0;
  for (; v + (U - 1) * lanes < end; v += lanes * U) {
    uint4 x[U];
#pragma unroll
    for (int u = 0; u < U; u++) x[u] = load16<CACHE>(in + v + u * lanes);
#pragma unroll
    for (int u = 0; u < U; u++) acc ^= x[u].x ^ x[u].y ^ x[u].z ^ x[u].w;
  }
  for (; v < end; v += lanes) {
    uint4 x = load16<CACHE>(in + v);
    acc ^= x.x ^ x.y ^ x.z ^ x.w;
  }
  if (acc == 0x9e3779b9u) sink[tid % 1024] = acc;
}

// ---------------------------------------------------------------------------
// Rows. Every row: a scalar head up to its first 16-byte boundary, 16-byte
// vectors, a scalar tail; so any base, stride and column count work.
// ---------------------------------------------------------------------------

// Short rows: a logical warp of G lanes per row, each lane at most MAXV
// vectors of it, R rows per group per round; all loads of a round are
// predicated and unrolled so that R * MAXV loads are in flight per lane.
// The block walks tiles of (BLOCK / G) * R consecutive rows.
template <class T, class Op, int G, int MAXV, int R, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
rows_short(const T *__restrict__ in, u64 rows, u64 cols, u64 stride,
           T *__restrict__ out) {
  typedef typename elem<T>::acc A;
  constexpr int VEC = 16 / sizeof(T);
  constexpr int GROUPS = BLOCK / G;
  constexpr int SCALARS = (VEC - 1 + G - 1) / G;  // head/tail slots per lane
  const int lane = threadIdx.x % G, group = threadIdx.x / G;
  for (u64 tile = (u64)blockIdx.x * GROUPS * R; tile < rows;
       tile += (u64)gridDim.x * GROUPS * R) {
    uint4 x[R][MAXV];
    T hs[R][SCALARS], ts[R][SCALARS];
    // Short rows: per-row counts fit in 32 bits (fewer registers).
    unsigned nv[R], h[R], nt[R];
#pragma unroll
    for (int k = 0; k < R; k++) {
      const u64 row = tile + (u64)k * GROUPS + group;
      const bool live = row < rows;
      const T *p = in + (live ? row : 0) * stride;
      h[k] = live ? (unsigned)head_count(p, cols) : 0;
      nv[k] = live ? (unsigned)(cols - h[k]) / VEC : 0;
      nt[k] = live ? (unsigned)cols - h[k] - nv[k] * VEC : 0;
      const uint4 *body = reinterpret_cast<const uint4 *>(p + h[k]);
#pragma unroll
      for (int m = 0; m < MAXV; m++)
        if ((unsigned)(lane + m * G) < nv[k]) x[k][m] = load16<0>(body + lane + m * G);
#pragma unroll
      for (int s = 0; s < SCALARS; s++) {
        const unsigned e = lane + s * G;
        if (e < h[k]) hs[k][s] = p[e];
        if (e < nt[k]) ts[k][s] = p[h[k] + nv[k] * VEC + e];
      }
    }
#pragma unroll
    for (int k = 0; k < R; k++) {
      A acc = Op::template identity<A>();
#pragma unroll
      for (int m = 0; m < MAXV; m++)
        if ((unsigned)(lane + m * G) < nv[k]) acc = combine_vec<T, Op>(acc, x[k][m]);
#pragma unroll
      for (int s = 0; s < SCALARS; s++) {
        const unsigned e = lane + s * G;
        if (e < h[k]) acc = Op::combine(acc, elem<T>::load(hs[k][s]));
        if (e < nt[k]) acc = Op::combine(acc, elem<T>::load(ts[k][s]));
      }
      acc = group_reduce<Op, G>(acc);
      const u64 row = tile + (u64)k * GROUPS + group;
      if (lane == 0 && row < rows) out[row] = elem<T>::store(acc);
    }
  }
}

// Medium rows: one warp per row, U predicated vector loads per lane a round.
template <class T, class Op, int U, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
rows_warp(const T *__restrict__ in, u64 rows, u64 cols, u64 stride,
          T *__restrict__ out) {
  typedef typename elem<T>::acc A;
  constexpr int VEC = 16 / sizeof(T);
  const int lane = threadIdx.x % 32;
  const u64 warps = (u64)gridDim.x * (BLOCK / 32);
  for (u64 row = (u64)blockIdx.x * (BLOCK / 32) + threadIdx.x / 32;
       row < rows; row += warps) {
    const T *p = in + row * stride;
    const u64 h = head_count(p, cols);
    const u64 nv = (cols - h) / VEC;
    const u64 tail = h + nv * VEC;
    A acc = Op::template identity<A>();
    if (lane < h) acc = Op::combine(acc, elem<T>::load(p[lane]));
    if (lane < cols - tail)
      acc = Op::combine(acc, elem<T>::load(p[tail + lane]));
    const uint4 *body = reinterpret_cast<const uint4 *>(p + h);
    for (u64 v = lane; v < nv; v += 32 * U) {
      uint4 x[U];
#pragma unroll
      for (int u = 0; u < U; u++)
        if (v + u * 32 < nv) x[u] = load16<0>(body + v + u * 32);
#pragma unroll
      for (int u = 0; u < U; u++)
        if (v + u * 32 < nv) acc = combine_vec<T, Op>(acc, x[u]);
    }
    acc = group_reduce<Op, 32>(acc);
    if (lane == 0) out[row] = elem<T>::store(acc);
  }
}

// Long rows: `split` blocks per row, each a contiguous share of the row's
// vectors; with split > 1 the last block of a row (ticket per row, reset by
// it) folds the row's partials in order.
template <class T, class Op, int U, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
rows_block(const T *__restrict__ in, u64 rows, u64 cols, u64 stride,
           T *__restrict__ out, unsigned split,
           typename elem<T>::acc *partials, unsigned *tickets) {
  typedef typename elem<T>::acc A;
  constexpr int VEC = 16 / sizeof(T);
  for (u64 item = blockIdx.x; item < rows * split; item += gridDim.x) {
    const u64 row = item / split;
    const unsigned chunk = (unsigned)(item % split);
    const T *p = in + row * stride;
    const u64 h = head_count(p, cols);
    const u64 nv = (cols - h) / VEC;
    const u64 tail = h + nv * VEC;
    A acc = Op::template identity<A>();
    if (chunk == 0) {
      if (threadIdx.x < h) acc = Op::combine(acc, elem<T>::load(p[threadIdx.x]));
      if (threadIdx.x < cols - tail)
        acc = Op::combine(acc, elem<T>::load(p[tail + threadIdx.x]));
    }
    const uint4 *body = reinterpret_cast<const uint4 *>(p + h);
    const u64 end = nv * (chunk + 1) / split;
    for (u64 v = nv * chunk / split + threadIdx.x; v < end; v += BLOCK * U) {
      uint4 x[U];
#pragma unroll
      for (int u = 0; u < U; u++)
        if (v + u * BLOCK < end) x[u] = load16<0>(body + v + u * BLOCK);
#pragma unroll
      for (int u = 0; u < U; u++)
        if (v + u * BLOCK < end) acc = combine_vec<T, Op>(acc, x[u]);
    }
    acc = block_reduce<Op, BLOCK>(acc);
    if (split == 1) {
      if (threadIdx.x == 0) out[row] = elem<T>::store(acc);
      continue;
    }
    if (threadIdx.x == 0) {
      partials[item] = acc;
      __threadfence();
      const bool is_last = atomicAdd(&tickets[row], 1u) == split - 1;
      if (is_last) {
        __threadfence();
        A total = Op::template identity<A>();
        for (unsigned c = 0; c < split; c++)
          total = Op::combine(total, ((volatile A *)partials)[row * split + c]);
        out[row] = elem<T>::store(total);
        tickets[row] = 0;
      }
    }
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------
// Host side: device facts, workspace, launch planning
// ---------------------------------------------------------------------------

static int g_sms;
static void *g_ws;          // partials
static unsigned *g_tickets; // zero-initialised once; kernels reset them
static const size_t WS_BYTES = 64 << 20;
static const size_t TICKETS = 1 << 20;

template <class K> static int blocks_per_sm(K kernel, int block) {
  int n = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block, 0));
  return n > 0 ? n : 1;
}

struct array_cfg {
  int map;      // 0 sweep, 1 tiles (thread-contiguous), 2 tiles (coalesced)
  int block;    // threads a block (256, 512, 1024)
  int u;        // loads in flight per thread
  int cache;    // 0 ldg, 1 ldcs, 2 ld.nc + L1::no_allocate + L2::256B
  int oversub;  // blocks = resident blocks * oversub (at most)
  int minv;     // at least this many vectors per thread before adding blocks
};

template <class T, class Op, int MAP, int U, int CACHE, int BLOCK = 256>
static void launch_array_t(const array_cfg &c, const T *in, u64 n, T *out,
                           cudaStream_t s) {
  constexpr int VEC = 16 / sizeof(T);
  auto kernel = array_reduce<T, Op, BLOCK, U, MAP, CACHE>;
  static int resident = 0;
  if (!resident) resident = g_sms * blocks_per_sm(kernel, BLOCK);
  const u64 nvec = n / VEC + 1;
  u64 grid = (nvec + (u64)BLOCK * c.minv - 1) / ((u64)BLOCK * c.minv);
  if (grid > (u64)resident * c.oversub) grid = (u64)resident * c.oversub;
  if (grid < 1) grid = 1;
  kernel<<<(unsigned)grid, BLOCK, 0, s>>>(
      in, n, out, (typename elem<T>::acc *)g_ws, g_tickets);
}

template <class T, class Op>
static void launch_array(const array_cfg &c, const T *in, u64 n, T *out,
                         cudaStream_t s) {
#define ARRAY_CASE(M_, U_, K_)                                             \
  if (c.map == M_ && c.u == U_ && c.cache == K_ && c.block == 256)         \
    return launch_array_t<T, Op, M_, U_, K_>(c, in, n, out, s);
  if (c.map == 0 && c.u == 4 && c.cache == 0 && c.block == 512)
    return launch_array_t<T, Op, 0, 4, 0, 512>(c, in, n, out, s);
  if (c.map == 0 && c.u == 4 && c.cache == 0 && c.block == 1024)
    return launch_array_t<T, Op, 0, 4, 0, 1024>(c, in, n, out, s);
  if (c.map == 0 && c.u == 8 && c.cache == 0 && c.block == 1024)
    return launch_array_t<T, Op, 0, 8, 0, 1024>(c, in, n, out, s);
  ARRAY_CASE(0, 4, 0) ARRAY_CASE(0, 4, 2) ARRAY_CASE(0, 8, 0)
  ARRAY_CASE(1, 4, 0) ARRAY_CASE(1, 4, 2) ARRAY_CASE(2, 4, 0)
#undef ARRAY_CASE
  fprintf(stderr, "no array kernel for this config\n");
  exit(2);
}

// The row plan: which kernel and shape for a (cols, type size) pair.
struct rows_plan {
  char kind;  // 's' short, 'w' warp per row, 'b' block(s) per row
  int g, maxv, r, u;
  unsigned split;
  std::string name() const {
    char buf[64];
    if (kind == 's') snprintf(buf, sizeof buf, "short g%d v%d r%d", g, maxv, r);
    else if (kind == 'w') snprintf(buf, sizeof buf, "warp u%d", u);
    else snprintf(buf, sizeof buf, "block u%d split%u", u, split);
    return buf;
  }
};

static int pow2_at_least(u64 x) {
  int p = 1;
  while ((u64)p < x && p < 32) p *= 2;
  return p;
}

// The heuristic warpgen uses, from the first H200 run (2026-11-29):
//   <= 2 vectors a row    one lane per row, R = 1 (more rows per thread
//                         cost registers and lost: 3851 vs 2753 GB/s at r4)
//   <= 32 vectors         half as many lanes as vectors, 2 vectors a lane,
//                         2 rows a round (g4 v2 r2 / g16 v2 r2 were best)
//   <= 256 vectors        a full warp, up to 8 vectors a lane, 1 row a round
//   longer, many rows     a warp per row, 4 loads in flight a lane
//   longer, fewer rows    a block per row (8 loads a thread); several
//                         blocks per row only when rows cannot fill the GPU
static rows_plan plan_rows(u64 rows, u64 cols, size_t size) {
  const u64 vec = 16 / size;
  const u64 nv = (cols + vec - 1) / vec;  // vectors in a row
  rows_plan p = {'s', 1, 1, 1, 4, 1};
  if (nv <= 2) {
    p.g = 1;
    p.maxv = (int)(nv < 1 ? 1 : nv);
    p.r = 1;
    return p;
  }
  if (nv <= 32) {
    p.g = pow2_at_least(nv) / 2;
    p.maxv = 2;
    p.r = 2;
    return p;
  }
  if (nv <= 256) {
    p.g = 32;
    p.maxv = pow2_at_least((nv + 31) / 32);
    p.r = 1;
    return p;
  }
  const u64 resident_warps = (u64)g_sms * 64;
  if (rows >= resident_warps) {
    p.kind = 'w';
    p.u = 4;
    return p;
  }
  p.kind = 'b';
  p.u = 8;
  p.split = 1;
  if (rows < (u64)g_sms * 4) {
    u64 split = ((u64)g_sms * 8 + rows - 1) / rows;
    const u64 max_split = (nv + 256 * 32 - 1) / (256 * 32);  // >= 32 vec/thread
    if (split > max_split) split = max_split;
    if (split < 1) split = 1;
    if (split > 1024) split = 1024;
    p.split = (unsigned)split;
  }
  return p;
}

template <class T, class Op, int G, int MAXV, int R>
static void launch_short_t(const T *in, u64 rows, u64 cols, u64 stride, T *out,
                           cudaStream_t s) {
  constexpr int BLOCK = 256;
  auto kernel = rows_short<T, Op, G, MAXV, R, BLOCK>;
  static int max_grid = 0;
  if (!max_grid) max_grid = g_sms * blocks_per_sm(kernel, BLOCK);
  const u64 tiles = (rows + (u64)(BLOCK / G) * R - 1) / ((u64)(BLOCK / G) * R);
  const unsigned grid = (unsigned)std::min<u64>(tiles, (u64)max_grid);
  kernel<<<grid, BLOCK, 0, s>>>(in, rows, cols, stride, out);
}

template <class T, class Op, int U>
static void launch_warp_t(const T *in, u64 rows, u64 cols, u64 stride, T *out,
                          cudaStream_t s) {
  constexpr int BLOCK = 256;
  auto kernel = rows_warp<T, Op, U, BLOCK>;
  static int max_grid = 0;
  if (!max_grid) max_grid = g_sms * blocks_per_sm(kernel, BLOCK);
  const u64 blocks = (rows + BLOCK / 32 - 1) / (BLOCK / 32);
  kernel<<<(unsigned)std::min<u64>(blocks, (u64)max_grid), BLOCK, 0, s>>>(
      in, rows, cols, stride, out);
}

template <class T, class Op, int U>
static void launch_block_t(const T *in, u64 rows, u64 cols, u64 stride, T *out,
                           unsigned split, cudaStream_t s) {
  constexpr int BLOCK = 256;
  auto kernel = rows_block<T, Op, U, BLOCK>;
  static int max_grid = 0;
  if (!max_grid) max_grid = g_sms * blocks_per_sm(kernel, BLOCK);
  if (split > 1 && (rows * split * sizeof(typename elem<T>::acc) > WS_BYTES ||
                    rows > TICKETS)) {
    fprintf(stderr, "rows_block: workspace too small\n");
    exit(2);
  }
  const unsigned grid = (unsigned)std::min<u64>(rows * split, (u64)max_grid * 4);
  kernel<<<grid, BLOCK, 0, s>>>(in, rows, cols, stride, out, split,
                                (typename elem<T>::acc *)g_ws, g_tickets);
}

template <class T, class Op>
static void launch_rows(const rows_plan &p, const T *in, u64 rows, u64 cols,
                        u64 stride, T *out, cudaStream_t s) {
  if (rows == 0) return;
#define SHORT_CASE(G_, V_, R_)                                             \
  if (p.g == G_ && p.maxv == V_ && p.r == R_)                              \
    return launch_short_t<T, Op, G_, V_, R_>(in, rows, cols, stride, out, s);
  if (p.kind == 's') {
    SHORT_CASE(1, 1, 1) SHORT_CASE(1, 1, 2) SHORT_CASE(1, 1, 4)
    SHORT_CASE(1, 1, 8) SHORT_CASE(2, 1, 4) SHORT_CASE(4, 1, 4)
    SHORT_CASE(8, 1, 1) SHORT_CASE(8, 1, 2) SHORT_CASE(8, 1, 4)
    SHORT_CASE(4, 2, 2) SHORT_CASE(2, 4, 1) SHORT_CASE(16, 1, 4)
    SHORT_CASE(32, 1, 1) SHORT_CASE(32, 1, 2) SHORT_CASE(32, 1, 4)
    SHORT_CASE(16, 2, 2) SHORT_CASE(8, 4, 1) SHORT_CASE(32, 2, 2)
    SHORT_CASE(32, 4, 1) SHORT_CASE(32, 8, 1) SHORT_CASE(1, 2, 1)
    SHORT_CASE(2, 2, 2) SHORT_CASE(8, 2, 2) SHORT_CASE(32, 2, 1)
  }
#undef SHORT_CASE
  if (p.kind == 'w') {
    if (p.u == 4) return launch_warp_t<T, Op, 4>(in, rows, cols, stride, out, s);
    if (p.u == 8) return launch_warp_t<T, Op, 8>(in, rows, cols, stride, out, s);
  }
  if (p.kind == 'b') {
    if (p.u == 4)
      return launch_block_t<T, Op, 4>(in, rows, cols, stride, out, p.split, s);
    if (p.u == 8)
      return launch_block_t<T, Op, 8>(in, rows, cols, stride, out, p.split, s);
  }
  fprintf(stderr, "no rows kernel for plan %s\n", p.name().c_str());
  exit(2);
}

// ---------------------------------------------------------------------------
// Inputs: hashed random values, the same on the device and the CPU
// ---------------------------------------------------------------------------

__host__ __device__ inline uint32_t hash32(u64 i, uint32_t seed) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 32;
  return (uint32_t)x;
}

// f32: [-1, 1) in steps of 2^-23; f64: [-1, 1) in steps of 2^-31; i32: any;
// f16: [-1, 1) in steps of 2^-10 (exact in half).
template <class T> __host__ __device__ inline T value_at(u64 i, uint32_t seed);
template <> __host__ __device__ inline float value_at<float>(u64 i, uint32_t s) {
  return (float)(hash32(i, s) >> 8) * (1.0f / 8388608.0f) - 1.0f;
}
template <> __host__ __device__ inline double value_at<double>(u64 i, uint32_t s) {
  return (double)hash32(i, s) * (1.0 / 2147483648.0) - 1.0;
}
template <> __host__ __device__ inline int value_at<int>(u64 i, uint32_t s) {
  return (int)hash32(i, s);
}
template <> __host__ __device__ inline __half value_at<__half>(u64 i, uint32_t s) {
  return __float2half_rn((float)(hash32(i, s) >> 21) * (1.0f / 1024.0f) - 1.0f);
}

template <class T>
__global__ void fill_kernel(T *p, u64 n, uint32_t seed) {
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (u64)gridDim.x * blockDim.x)
    p[i] = value_at<T>(i, seed);
}

// Does `got` meet the CPU oracle (tests/oracle.h: integers and min/max
// exactly, float sums within its bound from the count and the type) for
// elements [first, first + n) of the hashed sequence? The elements are made
// again on the host, on every core for large spans. On false, why says how.
template <class T, class Op>
static bool oracle_agrees(u64 first, u64 n, uint32_t seed, const T &got, char *why,
                          size_t why_size) {
  std::vector<T> host(n);
  const int nthreads = n > (1u << 22) ? 16 : 1;
  std::vector<std::thread> pool;
  for (int t = 0; t < nthreads; t++)
    pool.emplace_back([&, t] {
      for (u64 i = n * t / nthreads, end = n * (t + 1) / nthreads; i < end; i++)
        host[i] = value_at<T>(first + i, seed);
    });
  for (auto &th : pool) th.join();
  wg_oracle want;
  wg_oracle_reduce(&want, elem<T>::oracle_type, Op::oracle_op, host.data(), 0, n,
                   nullptr, 0);
  return wg_oracle_check(&want, &got, why, why_size);
}

// ---------------------------------------------------------------------------
// Buffers
// ---------------------------------------------------------------------------

static void *g_copy_dst;
static void *g_out;  // outputs (rows results, scalars)
static const size_t OUT_BYTES = (size_t)1 << 30;

// ---------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------

static int g_failures;

static const array_cfg ARRAY_CFGS[] = {
    {0, 256, 4, 0, 1, 4}, {0, 256, 4, 2, 1, 4}, {0, 256, 8, 0, 1, 4},
    {0, 256, 4, 0, 1, 2}, {1, 256, 4, 0, 1, 4}, {1, 256, 4, 0, 4, 4},
    {1, 256, 4, 2, 4, 4}, {2, 256, 4, 0, 1, 4}, {2, 256, 4, 0, 4, 4},
};
// --mid: fewer, bigger blocks (fewer partials and fewer tickets taken at
// the end of a launch) for the sizes where the final combine shows.
static const array_cfg MID_CFGS[] = {
    {0, 256, 4, 0, 1, 4}, {0, 512, 4, 0, 1, 4}, {0, 1024, 4, 0, 1, 4},
    {0, 1024, 8, 0, 1, 4}, {0, 256, 4, 0, 1, 8}, {0, 1024, 4, 0, 1, 2},
};
static std::string cfg_name(const array_cfg &c) {
  static const char *maps[] = {"sweep", "tileT", "tileC"};
  static const char *caches[] = {"ldg", "ldcs", "L2pf"};
  char buf[64];
  snprintf(buf, sizeof buf, "%s b%d u%d %s x%d minv%d", maps[c.map], c.block, c.u,
           caches[c.cache], c.oversub, c.minv);
  return buf;
}

template <class T, class Op>
static void check_array(const array_cfg &c, u64 n, u64 offset_elems,
                        uint32_t seed) {
  T *in = (T *)g_arena + offset_elems;
  T *out = (T *)g_out;
  CHECK(cudaMemsetAsync(out, 0xA5, 64, g_stream));  // poison
  launch_array<T, Op>(c, in, n, out, g_stream);
  CHECK(cudaGetLastError());
  T got;
  CHECK(cudaMemcpyAsync(&got, out, sizeof(T), cudaMemcpyDeviceToHost, g_stream));
  CHECK(cudaStreamSynchronize(g_stream));
  char why[200];
  if (!oracle_agrees<T, Op>(offset_elems, n, seed, got, why, sizeof why)) {
    g_failures++;
    printf("FAIL array %s %s n=%llu off=%llu cfg=%s: %s\n", elem<T>::name(),
           Op::name(), n, offset_elems, cfg_name(c).c_str(), why);
  }
  // Same bits on a second run (the ticket was reset by the last block).
  T again;
  CHECK(cudaMemsetAsync(out, 0x5A, 64, g_stream));
  launch_array<T, Op>(c, in, n, out, g_stream);
  CHECK(cudaMemcpyAsync(&again, out, sizeof(T), cudaMemcpyDeviceToHost, g_stream));
  CHECK(cudaStreamSynchronize(g_stream));
  if (memcmp(&got, &again, sizeof(T)) != 0) {
    g_failures++;
    printf("FAIL array %s %s n=%llu: second run differs\n", elem<T>::name(),
           Op::name(), n);
  }
}

template <class T> static void fill_arena(uint32_t seed) {
  fill_kernel<T><<<g_sms * 16, 256, 0, g_stream>>>((T *)g_arena,
                                                   ARENA_BYTES / sizeof(T), seed);
  CHECK(cudaStreamSynchronize(g_stream));
  CHECK(cudaGetLastError());
}

template <class T> static void array_section(bool quick, int max_log) {
  const uint32_t seed = 0x1234u + (uint32_t)sizeof(T) * 77u;
  fill_arena<T>(seed);
  const array_cfg def = ARRAY_CFGS[0];
  // Correctness: sizes around each boundary, aligned and unaligned starts.
  const u64 vec = 16 / sizeof(T);
  const u64 sizes[] = {0, 1, 2, 3, vec - 1, vec, vec + 1, 255, 256 * vec,
                       256 * vec + 1, 1000, 4 * 256 * vec * 3 + 7, 65536 + 5,
                       (1u << 20) + 1, (1u << 24) + 3};
  for (u64 n : sizes)
    for (u64 off : {0ull, 1ull, 3ull}) {
      check_array<T, op_sum>(def, n, off, seed);
      check_array<T, op_min>(def, n, off, seed);
      check_array<T, op_max>(def, n, off, seed);
    }
  for (const array_cfg &c : ARRAY_CFGS) check_array<T, op_sum>(c, 1000003, 1, seed);
  check_array<T, op_sum>(def, (u64)1 << max_log, 0, seed);
  check_array<T, op_max>(def, (u64)1 << max_log, 0, seed);

  // Timing.
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, (T *)g_arena, (T *)g_out,
                               (int64_t)1 << max_log, g_stream));
  void *temp;
  CHECK(cudaMalloc(&temp, temp_bytes + 256));
  printf("\n%s sum: us per call (cold = rotating slices), GB/s, ratio\n",
         elem<T>::name());
  printf("%6s %5s %9s %9s %9s %9s %7s %7s  %s\n", "log2n", "mode", "cub_us",
         "best_us", "best_GBs", "read_GBs", "xCUB", "xread", "best cfg");
  for (int lg = 10; lg <= max_log; lg += quick ? 3 : 1) {
    const u64 n = (u64)1 << lg;
    const size_t bytes = n * sizeof(T);
    for (int cold = 1; cold >= 0; cold--) {
      if (!cold && bytes > ((size_t)32 << 20)) continue;
      const int batch = batch_for(bytes), reps = bytes >= ((size_t)256 << 20) ? 15 : 25;
      const char *mode = cold ? "cold" : "warm";
      // The largest sizes: three interleaved passes, the median of each
      // kernel's three medians (DRAM state drifts between passes).
      const int passes = bytes >= ((size_t)512 << 20) ? 3 : 1;
      const int ncfg = (int)(sizeof ARRAY_CFGS / sizeof ARRAY_CFGS[0]);
      std::vector<std::vector<double>> t(ncfg + 3);
      for (int pass = 0; pass < passes; pass++) {
        t[0].push_back(time_us(
            [&](int i) {
              cub::DeviceReduce::Sum(temp, temp_bytes,
                                     (T *)(g_arena + rotate(bytes, i, cold)),
                                     (T *)g_out, (int64_t)n, g_stream);
            },
            batch, reps));
        t[1].push_back(time_us(
            [&](int i) {
              read_ceiling<256, 4, false, 0><<<g_sms * 8, 256, 0, g_stream>>>(
                  (const uint4 *)(g_arena + rotate(bytes, i, cold)), bytes / 16,
                  (unsigned *)g_out + 64);
            },
            batch, reps));
        t[2].push_back(time_us(
            [&](int i) {
              read_ceiling<256, 4, false, 2><<<g_sms * 8, 256, 0, g_stream>>>(
                  (const uint4 *)(g_arena + rotate(bytes, i, cold)), bytes / 16,
                  (unsigned *)g_out + 64);
            },
            batch, reps));
        for (int k = 0; k < ncfg; k++)
          t[3 + k].push_back(time_us(
              [&](int i) {
                launch_array<T, op_sum>(ARRAY_CFGS[k],
                                        (T *)(g_arena + rotate(bytes, i, cold)),
                                        n, (T *)g_out, g_stream);
              },
              batch, reps));
      }
      std::vector<double> med(t.size());
      for (size_t k = 0; k < t.size(); k++) {
        std::sort(t[k].begin(), t[k].end());
        med[k] = t[k][t[k].size() / 2];
      }
      csv("array", "cub", elem<T>::name(), mode, n, 0, (double)bytes, med[0]);
      csv("array", "read sweep ldg", elem<T>::name(), mode, n, 0, (double)bytes, med[1]);
      csv("array", "read sweep L2pf", elem<T>::name(), mode, n, 0, (double)bytes, med[2]);
      const double read_us = std::min(med[1], med[2]);
      double best = 1e30;
      std::string best_name;
      for (int k = 0; k < ncfg; k++) {
        csv("array", ("wg " + cfg_name(ARRAY_CFGS[k])).c_str(), elem<T>::name(),
            mode, n, 0, (double)bytes, med[3 + k]);
        if (med[3 + k] < best) best = med[3 + k], best_name = cfg_name(ARRAY_CFGS[k]);
      }
      printf("%6d %5s %9.2f %9.2f %9.1f %9.1f %7.2f %7.3f  %s (default %.2f us)\n",
             lg, mode, med[0], best, bytes / best / 1e3, bytes / read_us / 1e3,
             med[0] / best, read_us / best, best_name.c_str(), med[3]);
    }
  }
  CHECK(cudaFree(temp));
}

template <class T, class Op>
static void check_rows(const rows_plan &p, u64 rows, u64 cols, u64 stride,
                       u64 offset, uint32_t seed) {
  T *out = (T *)g_out;
  CHECK(cudaMemsetAsync(out, 0xA5, rows * sizeof(T) + 64, g_stream));
  launch_rows<T, Op>(p, (T *)g_arena + offset, rows, cols, stride, out, g_stream);
  CHECK(cudaGetLastError());
  std::vector<T> got(rows + 1);
  CHECK(cudaMemcpyAsync(got.data(), out, (rows + 1) * sizeof(T),
                        cudaMemcpyDeviceToHost, g_stream));
  CHECK(cudaStreamSynchronize(g_stream));
  int bad = 0;
  for (u64 r = 0; r < rows && bad < 3; r++) {
    char why[200];
    if (!oracle_agrees<T, Op>(offset + r * stride, cols, seed, got[r], why, sizeof why)) {
      bad++;
      g_failures++;
      printf("FAIL rows %s %s %s rows=%llu cols=%llu stride=%llu off=%llu row %llu: %s\n",
             elem<T>::name(), Op::name(), p.name().c_str(), rows, cols, stride,
             offset, r, why);
    }
  }
  // the element after the last row must still hold the poison
  unsigned char *pb = (unsigned char *)&got[rows];
  for (size_t i = 0; i < sizeof(T); i++)
    if (pb[i] != 0xA5) {
      g_failures++;
      printf("FAIL rows %s: wrote past the last row\n", p.name().c_str());
      break;
    }
}

static void rows_section(bool quick) {
  typedef float T;
  const uint32_t seed = 777;
  fill_arena<T>(seed);
  // Correctness over column counts, strides, offsets, with the heuristic
  // plan and with every candidate that fits the row.
  const u64 cols_list[] = {1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 100, 127, 128,
                           129, 1000, 1023, 1025, 4097, 65537, 100000};
  for (u64 cols : cols_list) {
    const u64 rows = std::max<u64>(1, std::min<u64>(3000, (1u << 22) / cols));
    for (u64 pad : {0ull, 1ull, 3ull})
      for (u64 off : {0ull, 1ull}) {
        rows_plan p = plan_rows(rows, cols, sizeof(T));
        check_rows<T, op_sum>(p, rows, cols, cols + pad, off, seed);
        check_rows<T, op_max>(p, rows, cols, cols + pad, off, seed);
        rows_plan w = {'w', 32, 1, 1, 4, 1};
        check_rows<T, op_sum>(w, rows, cols, cols + pad, off, seed);
        rows_plan b = {'b', 32, 1, 1, 4, 3};
        check_rows<T, op_sum>(b, rows, cols, cols + pad, off, seed);
      }
  }
  {  // few rows, many blocks per row
    rows_plan p = plan_rows(7, 1 << 20, sizeof(T));
    check_rows<T, op_sum>(p, 7, 1 << 20, (1 << 20) + 1, 1, seed);
    check_rows<T, op_min>(p, 7, 1 << 20, (1 << 20) + 1, 1, seed);
    check_rows<T, op_sum>(p, 7, 1 << 20, (1 << 20) + 1, 1, seed);  // tickets reset
  }

  // Timing over 2^26 f32 elements.
  const auto &shapes = ROW_SHAPES;
  int *offsets;
  CHECK(cudaMalloc(&offsets, ((1u << 24) + 1) * sizeof(int)));
  size_t temp_bytes = 0;
  void *temp = nullptr;
  const size_t total_bytes = ((size_t)1 << 26) * sizeof(T);
  double read_us = time_us(
      [&](int) {
        read_ceiling<256, 4, true, 0><<<g_sms * 8, 256, 0, g_stream>>>(
            (const uint4 *)g_arena, total_bytes / 16, (unsigned *)g_out + 64);
      },
      1, 30);
  const double read_gbs = total_bytes / read_us / 1e3;
  csv("rows", "read", "f32", "sum", 1 << 26, 0, (double)total_bytes, read_us);
  printf("\nrows f32 sum over 2^26 elements (GB/s counts input + output bytes; "
         "plain read of the same 256 MiB: %.1f GB/s)\n", read_gbs);
  printf("%8s %6s %8s %8s %8s %7s %7s  %s | others\n", "rows", "cols", "cub_GBs",
         "wg_us", "wg_GBs", "xread", "xCUB", "plan");
  for (const row_shape &s : shapes) {
    std::vector<int> h(s.rows + 1);
    for (u64 r = 0; r <= s.rows; r++) h[r] = (int)(r * s.cols);
    CHECK(cudaMemcpy(offsets, h.data(), (s.rows + 1) * sizeof(int),
                     cudaMemcpyHostToDevice));
    size_t need = 0;
    CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, need, (T *)g_arena, (T *)g_out,
                                          (int)s.rows, offsets, offsets + 1, g_stream));
    if (need > temp_bytes) {
      if (temp) CHECK(cudaFree(temp));
      CHECK(cudaMalloc(&temp, need));
      temp_bytes = need;
    }
    const double bytes = (double)(s.rows * s.cols + s.rows) * sizeof(T);
    double cub_us = time_us(
        [&](int) {
          size_t tb = temp_bytes;
          cub::DeviceSegmentedReduce::Sum(temp, tb, (T *)g_arena, (T *)g_out,
                                          (int)s.rows, offsets, offsets + 1, g_stream);
        },
        1, quick ? 5 : 15);
    csv("rows", "cub", "f32", "sum", s.rows, s.cols, bytes, cub_us);
    // The heuristic plan, then alternatives.
    std::vector<rows_plan> cands;
    const rows_plan plan = plan_rows(s.rows, s.cols, sizeof(T));
    cands.push_back(plan);
    const u64 nv = (s.cols + 3) / 4;
    if (nv == 1) {
      cands.push_back({'s', 1, 1, 2, 4, 1});
    } else if (nv == 8) {
      cands.push_back({'s', 8, 1, 2, 4, 1});
      cands.push_back({'s', 8, 1, 1, 4, 1});
      cands.push_back({'s', 2, 4, 1, 4, 1});
    } else if (nv == 32) {
      cands.push_back({'s', 8, 4, 1, 4, 1});
      cands.push_back({'s', 32, 1, 2, 4, 1});
    } else if (nv <= 256) {
      cands.push_back({'w', 32, 1, 1, 4, 1});
    } else {
      cands.push_back({'w', 32, 1, 1, 4, 1});
      cands.push_back({'b', 32, 1, 1, 4, 1});
      cands.push_back({'b', 32, 1, 1, 8, 1});
      cands.push_back({'b', 32, 1, 1, 8, 2});
    }
    double plan_us = 0;
    std::string others;
    for (size_t i = 0; i < cands.size(); i++) {
      double us = time_us(
          [&](int) {
            launch_rows<T, op_sum>(cands[i], (T *)g_arena, s.rows, s.cols,
                                   s.cols, (T *)g_out, g_stream);
          },
          1, quick ? 5 : 15);
      csv("rows", ("wg " + cands[i].name()).c_str(), "f32", "sum", s.rows, s.cols,
          bytes, us);
      if (i == 0) plan_us = us;
      else {
        char buf[96];
        snprintf(buf, sizeof buf, " [%s %.0f]", cands[i].name().c_str(),
                 bytes / us / 1e3);
        others += buf;
      }
    }
    {
      const double us = time_us(
          [&](int) {
            launch_rows<T, op_sum>(plan, (T *)g_arena + 1, s.rows, s.cols, s.cols,
                                   (T *)g_out, g_stream);
          },
          1, quick ? 5 : 15);
      csv("rows", ("wg " + plan.name() + " unaligned").c_str(), "f32", "sum",
          s.rows, s.cols, bytes, us);
      char buf[96];
      snprintf(buf, sizeof buf, " [plan@+1elem %.0f]", bytes / us / 1e3);
      others += buf;
    }
    printf("%8llu %6llu %8.0f %8.2f %8.0f %7.3f %7.1f  %s |%s\n", s.rows, s.cols,
           bytes / cub_us / 1e3, plan_us, bytes / plan_us / 1e3,
           bytes / plan_us / 1e3 / read_gbs, cub_us / plan_us, plan.name().c_str(),
           others.c_str());
  }
  if (temp) CHECK(cudaFree(temp));
  CHECK(cudaFree(offsets));
}

// Only the mid sizes, f32 and f64: the block size of the one-launch kernel.
template <class T> static void mid_section() {
  const uint32_t seed = 0x1234u + (uint32_t)sizeof(T) * 77u;
  fill_arena<T>(seed);
  for (const array_cfg &c : MID_CFGS) {
    check_array<T, op_sum>(c, 1000003, 1, seed);
    check_array<T, op_max>(c, (1u << 22) + 3, 3, seed);
  }
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, (T *)g_arena, (T *)g_out,
                               (int64_t)1 << 24, g_stream));
  void *temp;
  CHECK(cudaMalloc(&temp, temp_bytes + 256));
  printf("\nmid sizes, %s sum, cold: us per call\n%6s %8s %8s", elem<T>::name(), "log2n",
         "cub", "read");
  for (const array_cfg &c : MID_CFGS) printf(" | %s", cfg_name(c).c_str());
  printf("\n");
  for (int lg = 16; lg <= 24; lg++) {
    const u64 n = (u64)1 << lg;
    const size_t bytes = n * sizeof(T);
    const int batch = batch_for(bytes), reps = 25;
    const double cub_us = time_us(
        [&](int i) {
          cub::DeviceReduce::Sum(temp, temp_bytes, (T *)(g_arena + rotate(bytes, i, true)),
                                 (T *)g_out, (int64_t)n, g_stream);
        },
        batch, reps);
    const double read_us = time_us(
        [&](int i) {
          read_ceiling<256, 4, false, 0><<<g_sms * 8, 256, 0, g_stream>>>(
              (const uint4 *)(g_arena + rotate(bytes, i, true)), bytes / 16,
              (unsigned *)g_out + 64);
        },
        batch, reps);
    csv("mid", "cub", elem<T>::name(), "cold", n, 0, (double)bytes, cub_us);
    csv("mid", "read", elem<T>::name(), "cold", n, 0, (double)bytes, read_us);
    printf("%6d %8.2f %8.2f", lg, cub_us, read_us);
    for (const array_cfg &c : MID_CFGS) {
      const double us = time_us(
          [&](int i) {
            launch_array<T, op_sum>(c, (T *)(g_arena + rotate(bytes, i, true)), n,
                                    (T *)g_out, g_stream);
          },
          batch, reps);
      csv("mid", ("wg " + cfg_name(c)).c_str(), elem<T>::name(), "cold", n, 0,
          (double)bytes, us);
      printf(" %8.2f", us);
    }
    printf("\n");
  }
  CHECK(cudaFree(temp));
}

static void ceilings_section() {
  printf("\nceilings (1 GiB unless noted)\n");
  const size_t bytes = (size_t)1 << 30;
  double copy_us = time_us(
      [&](int) {
        CHECK(cudaMemcpyAsync(g_copy_dst, g_arena, bytes, cudaMemcpyDeviceToDevice,
                              g_stream));
      },
      1, 20);
  printf("  copy d2d            %8.1f us  %7.1f GB/s (read + write)\n", copy_us,
         2.0 * bytes / copy_us / 1e3);
  csv("ceiling", "copy", "-", "-", bytes, 0, 2.0 * bytes, copy_us);
#define READ_VARIANT(BPS, U, C, K, NAME)                                      \
  {                                                                          \
    double us = time_us(                                                     \
        [&](int) {                                                           \
          read_ceiling<256, U, C, K><<<g_sms * BPS, 256, 0, g_stream>>>(     \
              (const uint4 *)g_arena, bytes / 16, (unsigned *)g_out + 64);   \
        },                                                                   \
        1, 20);                                                              \
    printf("  read %-14s %8.1f us  %7.1f GB/s\n", NAME, us, bytes / us / 1e3); \
    csv("ceiling", "read " NAME, "-", "-", bytes, 0, (double)bytes, us);     \
  }
  for (int pass = 0; pass < 2; pass++) {
  READ_VARIANT(8, 4, false, 0, "sweep u4 ldg")
  READ_VARIANT(8, 4, false, 2, "sweep u4 L2pf")
  READ_VARIANT(8, 8, false, 0, "sweep u8 ldg")
  READ_VARIANT(8, 8, false, 2, "sweep u8 L2pf")
  READ_VARIANT(4, 8, false, 0, "sweep u8 4/SM")
  READ_VARIANT(8, 4, true, 0, "contig u4 ldg")
  }
#undef READ_VARIANT
}

int main(int argc, char **argv) {
  bool quick = false, mid = false;
  const char *csv_path = "reduce_peers.csv";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = true;
    else if (!strcmp(argv[i], "--mid")) mid = true;
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
  }
  if (!open_csv(csv_path, "kernel")) return 2;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  printf("%s, %d SMs, L2 %d MB\n", prop.name, g_sms, prop.l2CacheSize >> 20);
  CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&g_ev0));
  CHECK(cudaEventCreate(&g_ev1));
  CHECK(cudaMalloc(&g_arena, ARENA_BYTES + 4096));
  CHECK(cudaMalloc(&g_copy_dst, (size_t)1 << 30));
  CHECK(cudaMalloc(&g_out, OUT_BYTES));
  CHECK(cudaMalloc(&g_ws, WS_BYTES));
  CHECK(cudaMalloc(&g_tickets, TICKETS * sizeof(unsigned)));
  CHECK(cudaMemset(g_tickets, 0, TICKETS * sizeof(unsigned)));

  if (mid) {
    mid_section<float>();
    mid_section<double>();
    fclose(g_csv);
    printf("\n%s: %d failures\n", g_failures ? "FAILED" : "ok", g_failures);
    return g_failures ? 1 : 0;
  }
  fill_arena<float>(1);
  ceilings_section();
  rows_section(quick);
  array_section<float>(quick, 28);
  array_section<int>(quick, 28);
  array_section<double>(quick, 28);
  array_section<__half>(quick, 28);
  fclose(g_csv);
  printf("\n%s: %d failures\n", g_failures ? "FAILED" : "ok", g_failures);
  return g_failures ? 1 : 0;
}
