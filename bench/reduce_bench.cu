// reduce_bench.cu - warpgen's whole-array and row reductions (wg_reduce,
// wg_reduce_rows) against cub::DeviceReduce, cub::DeviceSegmentedReduce and
// the bandwidth ceilings (a device-to-device copy and a plain 16-byte-load
// read), in one run, on the same buffers, timed with CUDA events. PyTorch
// is timed by bench/torch_reduce.py in the same format; bench/reduce_report.py
// turns the CSVs into the tables and plots of docs/performance.md.
//
// Build (after `meson setup build && ninja -C build`):
//   nvcc -arch=sm_90 -O3 -std=c++17 -Iinclude -Itests -o bench/out/reduce_bench \
//        bench/reduce_bench.cu tests/oracle.c tests/oracle_warp.c build/libwarpgen.a \
//        -L/usr/local/cuda/lib64 -lnvrtc -ldl -lpthread
// Run:  bench/out/reduce_bench --csv reduce_bench.csv [--quick]
//       [--rows-extremes: only the ceilings and the rows of 2, 4 and 8
//        columns and 64 x 2^20]
//
// Method (the same for every implementation):
//  - whole arrays of 2^10 .. 2^28 elements (f32, f64, i32, f16), sums;
//    "cold": every timed call reads another slice of a 2 GiB arena, so L2
//    (60 MB) never holds a call's input from an earlier call; "warm": one
//    slice, reused (up to 32 MiB);
//  - rows: f32 sums over 2^26 elements in the issue's shapes; GB/s counts
//    the bytes read plus the bytes written;
//  - small calls are timed in batches on one stream (time / calls): what a
//    caller issuing reductions back to back sees, launch costs included;
//  - each figure is the median of many batches after a warm-up (which also
//    loads warpgen's kernels); the 1 GiB+ arrays take three interleaved
//    passes and report the median of the three medians.
// Results are checked first: warpgen's against the CPU oracle (tests/oracle.h).

#include "bench_harness.cuh"
#include "oracle.h"
#include "warpgen.h"

#include <cub/cub.cuh>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define WG_CHECK(call)                                                     \
  do {                                                                     \
    int rc_ = (call);                                                      \
    if (rc_ != WG_OK) {                                                    \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,    \
              wg_strerror(rc_), wg_errmsg(g_ctx));                         \
      exit(2);                                                             \
    }                                                                      \
  } while (0)

static wg_context *g_ctx;
static int g_sms;
static void *g_copy_dst;
static char *g_out;
static int g_failures;

// The types benchmarked: warpgen's name for each and the C++ type CUB gets.
template <class T> struct bench_type;
template <> struct bench_type<float> {
  static wg_type wg() { return WG_F32; }
  static const char *name() { return "f32"; }
};
template <> struct bench_type<double> {
  static wg_type wg() { return WG_F64; }
  static const char *name() { return "f64"; }
};
template <> struct bench_type<int> {
  static wg_type wg() { return WG_I32; }
  static const char *name() { return "i32"; }
};
template <> struct bench_type<__half> {
  static wg_type wg() { return WG_F16; }
  static const char *name() { return "f16"; }
};

// Random bits shaped into values: floats in [-1, 1), ints anything.
__device__ inline uint32_t hash32(u64 i) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull + 0x5bd1e995u;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return (uint32_t)(x >> 16);
}
template <class T> __device__ inline T value_at(u64 i);
template <> __device__ inline float value_at<float>(u64 i) {
  return (float)(hash32(i) >> 8) * (1.0f / 8388608.0f) - 1.0f;
}
template <> __device__ inline double value_at<double>(u64 i) {
  return (double)hash32(i) * (1.0 / 2147483648.0) - 1.0;
}
template <> __device__ inline int value_at<int>(u64 i) { return (int)hash32(i); }
template <> __device__ inline __half value_at<__half>(u64 i) {
  return __float2half_rn((float)(hash32(i) >> 21) * (1.0f / 1024.0f) - 1.0f);
}
template <class T> __global__ void fill_kernel(T *p, u64 n) {
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (u64)gridDim.x * blockDim.x)
    p[i] = value_at<T>(i);
}
template <class T> static void fill_arena() {
  fill_kernel<T><<<g_sms * 16, 256, 0, g_stream>>>((T *)g_arena,
                                                   ARENA_BYTES / sizeof(T));
  CHECK(cudaStreamSynchronize(g_stream));
  CHECK(cudaGetLastError());
}

// The plain-read ceiling: the grid sweeps the buffer with 16-byte loads,
// four in flight a thread, folded with xor; the store never happens.
__global__ void __launch_bounds__(256)
read_ceiling(const uint4 *__restrict__ in, u64 nvec, unsigned *sink) {
  const u64 lanes = (u64)gridDim.x * 256;
  u64 v = (u64)blockIdx.x * 256 + threadIdx.x;
  unsigned acc = 0;
  for (; v + 3 * lanes < nvec; v += 4 * lanes) {
    uint4 x[4];
#pragma unroll
    for (int u = 0; u < 4; u++) x[u] = __ldg(in + v + u * lanes);
#pragma unroll
    for (int u = 0; u < 4; u++) acc ^= x[u].x ^ x[u].y ^ x[u].z ^ x[u].w;
  }
  for (; v < nvec; v += lanes) {
    uint4 x = __ldg(in + v);
    acc ^= x.x ^ x.y ^ x.z ^ x.w;
  }
  if (acc == 0x9e3779b9u) sink[threadIdx.x] = acc;
}
static void launch_read(const void *p, size_t bytes) {
  read_ceiling<<<g_sms * 8, 256, 0, g_stream>>>((const uint4 *)p, bytes / 16,
                                                (unsigned *)(g_out + 4096));
}

// warpgen's sum must meet the CPU oracle (tests/oracle.h: integers exact,
// floats within its bound from the count and the type) on n elements from
// element 1 (an unaligned start); CUB's sum of the same input is held to
// the same bound but only reported, as CUB accumulates halves in half.
template <class T> static void check_against_oracle(u64 n, void *temp, size_t temp_bytes) {
  T *in = (T *)g_arena + 1;
  T *out = (T *)g_out;
  CHECK(cudaMemsetAsync(g_out, 0xff, 64, g_stream));
  WG_CHECK(wg_reduce(g_ctx, bench_type<T>::wg(), WG_OP_SUM, (uint64_t)(uintptr_t)in, n,
                     (uint64_t)(uintptr_t)out, g_stream));
  size_t tb = temp_bytes;
  CHECK(cub::DeviceReduce::Sum(temp, tb, in, out + 1, (int64_t)n, g_stream));
  T got[2];
  std::vector<T> host(n);
  CHECK(cudaMemcpyAsync(got, out, sizeof got, cudaMemcpyDeviceToHost, g_stream));
  CHECK(cudaMemcpyAsync(host.data(), in, n * sizeof(T), cudaMemcpyDeviceToHost, g_stream));
  CHECK(cudaStreamSynchronize(g_stream));
  wg_oracle want;
  wg_oracle_reduce(&want, bench_type<T>::wg(), WG_OP_SUM, host.data(), 0, n, nullptr, 0);
  char why[200];
  if (!wg_oracle_check(&want, &got[0], why, sizeof why)) {
    g_failures++;
    printf("MISMATCH %s sum n=%llu: warpgen %s\n", bench_type<T>::name(), n, why);
  }
  if (!wg_oracle_check(&want, &got[1], why, sizeof why))
    printf("note: %s sum n=%llu: cub %s\n", bench_type<T>::name(), n, why);
}

template <class T> static void array_section(bool quick) {
  fill_arena<T>();
  const int max_log = 28;
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, (T *)g_arena, (T *)g_out,
                               (int64_t)1 << max_log, g_stream));
  void *temp;
  CHECK(cudaMalloc(&temp, temp_bytes + 256));
  check_against_oracle<T>((1u << 20) + 3, temp, temp_bytes);
  check_against_oracle<T>((1u << 26) + 5, temp, temp_bytes);

  const char *tn = bench_type<T>::name();
  printf("\n%s sum, cold (each call reads another slice of a 2 GiB arena)\n", tn);
  printf("%6s %9s %9s %9s %9s %9s %7s %7s\n", "log2n", "wg_us", "cub_us", "read_us",
         "wg_GBs", "read_GBs", "xCUB", "xread");
  for (int lg = 10; lg <= max_log; lg += quick ? 3 : 1) {
    const u64 n = (u64)1 << lg;
    const size_t bytes = n * sizeof(T);
    for (int cold = 1; cold >= 0; cold--) {
      if (!cold && bytes > ((size_t)32 << 20)) continue;
      const char *mode = cold ? "cold" : "warm";
      const int batch = batch_for(bytes), reps = bytes >= ((size_t)256 << 20) ? 15 : 25;
      const int passes = bytes >= ((size_t)512 << 20) ? 3 : 1;
      std::vector<double> tw, tc, tr;
      for (int pass = 0; pass < passes; pass++) {
        tc.push_back(time_us(
            [&](int i) {
              size_t tb = temp_bytes;
              cub::DeviceReduce::Sum(temp, tb, (T *)(g_arena + rotate(bytes, i, cold)),
                                     (T *)g_out, (int64_t)n, g_stream);
            },
            batch, reps));
        tr.push_back(time_us([&](int i) { launch_read(g_arena + rotate(bytes, i, cold), bytes); },
                             batch, reps));
        tw.push_back(time_us(
            [&](int i) {
              wg_reduce(g_ctx, bench_type<T>::wg(), WG_OP_SUM,
                        (uint64_t)(uintptr_t)(g_arena + rotate(bytes, i, cold)), n,
                        (uint64_t)(uintptr_t)g_out, g_stream);
            },
            batch, reps));
      }
      std::sort(tw.begin(), tw.end());
      std::sort(tc.begin(), tc.end());
      std::sort(tr.begin(), tr.end());
      const double w = tw[tw.size() / 2], c = tc[tc.size() / 2], r = tr[tr.size() / 2];
      csv("array", "warpgen", tn, mode, n, 0, (double)bytes, w);
      csv("array", "cub", tn, mode, n, 0, (double)bytes, c);
      csv("array", "read", tn, mode, n, 0, (double)bytes, r);
      if (cold)
        printf("%6d %9.2f %9.2f %9.2f %9.1f %9.1f %7.2f %7.3f\n", lg, w, c, r,
               bytes / w / 1e3, bytes / r / 1e3, c / w, r / w);
    }
  }
  CHECK(cudaFree(temp));
}

// The shapes of issue 10 where rows fell short: 2 to 8 columns, and few,
// very long rows (--rows-extremes).
static const row_shape EXTREME_SHAPES[] = {
    {1u << 25, 2}, {1u << 24, 4}, {1u << 23, 8}, {64, 1u << 20}};

template <size_t N>
static void rows_section(bool quick, const row_shape (&shapes)[N]) {
  typedef float T;
  fill_arena<T>();
  int *offsets;
  u64 most_rows = 0;
  for (const row_shape &s : shapes) most_rows = std::max(most_rows, (u64)s.rows);
  CHECK(cudaMalloc(&offsets, (most_rows + 1) * sizeof(int)));
  size_t temp_bytes = 0;
  void *temp = nullptr;
  const size_t total = ((size_t)1 << 26) * sizeof(T);
  const double read_us = time_us([&](int) { launch_read(g_arena, total); }, 1, 30);
  csv("rows", "read", "f32", "sum", 1 << 26, 0, (double)total, read_us);
  const double read_gbs = total / read_us / 1e3;
  printf("\nrows, f32 sum, 2^26 elements (GB/s = (input + output bytes) / time; "
         "plain read of the same 256 MiB: %.0f GB/s)\n", read_gbs);
  printf("%8s %6s %9s %8s %8s %8s %7s %7s\n", "rows", "cols", "wg_us", "wg_GBs",
         "wg+1_GBs", "cub_GBs", "xread", "xCUB");
  const int reps = quick ? 5 : 15;
  for (const row_shape &s : shapes) {
    std::vector<int> h(s.rows + 1);
    for (u64 r = 0; r <= s.rows; r++) h[r] = (int)(r * s.cols);
    CHECK(cudaMemcpy(offsets, h.data(), (s.rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
    size_t need = 0;
    CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, need, (T *)g_arena, (T *)g_out,
                                          (int)s.rows, offsets, offsets + 1, g_stream));
    if (need > temp_bytes) {
      if (temp) CHECK(cudaFree(temp));
      CHECK(cudaMalloc(&temp, need));
      temp_bytes = need;
    }
    // Check warpgen's row sums against CUB's first.
    T *wg_out = (T *)g_out, *cub_out = (T *)g_out + s.rows;
    CHECK(cudaMemsetAsync(g_out, 0xff, 2 * s.rows * sizeof(T), g_stream));
    WG_CHECK(wg_reduce_rows(g_ctx, WG_F32, WG_OP_SUM, (uint64_t)(uintptr_t)g_arena, s.rows,
                            s.cols, s.cols, (uint64_t)(uintptr_t)wg_out, g_stream));
    size_t tb = temp_bytes;
    CHECK(cub::DeviceSegmentedReduce::Sum(temp, tb, (T *)g_arena, cub_out, (int)s.rows,
                                          offsets, offsets + 1, g_stream));
    std::vector<T> a(s.rows), b(s.rows);
    CHECK(cudaMemcpyAsync(a.data(), wg_out, s.rows * sizeof(T), cudaMemcpyDeviceToHost, g_stream));
    CHECK(cudaMemcpyAsync(b.data(), cub_out, s.rows * sizeof(T), cudaMemcpyDeviceToHost, g_stream));
    CHECK(cudaStreamSynchronize(g_stream));
    for (u64 r = 0; r < s.rows; r++)
      if (!(std::fabs(a[r] - b[r]) <= 1e-5f * (float)s.cols)) {
        g_failures++;
        printf("MISMATCH rows %llux%llu row %llu: warpgen %.9g cub %.9g\n", s.rows, s.cols,
               r, a[r], b[r]);
        break;
      }
    const double bytes = (double)(s.rows * s.cols + s.rows) * sizeof(T);
    const double cub_us = time_us(
        [&](int) {
          size_t tb2 = temp_bytes;
          cub::DeviceSegmentedReduce::Sum(temp, tb2, (T *)g_arena, (T *)g_out, (int)s.rows,
                                          offsets, offsets + 1, g_stream);
        },
        1, reps);
    const double wg_us = time_us(
        [&](int) {
          wg_reduce_rows(g_ctx, WG_F32, WG_OP_SUM, (uint64_t)(uintptr_t)g_arena, s.rows,
                         s.cols, s.cols, (uint64_t)(uintptr_t)g_out, g_stream);
        },
        1, reps);
    // The same rows from one element in: no row is 16-byte aligned.
    const double wg1_us = time_us(
        [&](int) {
          wg_reduce_rows(g_ctx, WG_F32, WG_OP_SUM, (uint64_t)(uintptr_t)g_arena + 4, s.rows,
                         s.cols, s.cols, (uint64_t)(uintptr_t)g_out, g_stream);
        },
        1, reps);
    csv("rows", "warpgen", "f32", "sum", s.rows, s.cols, bytes, wg_us);
    csv("rows", "warpgen unaligned", "f32", "sum", s.rows, s.cols, bytes, wg1_us);
    csv("rows", "cub", "f32", "sum", s.rows, s.cols, bytes, cub_us);
    printf("%8llu %6llu %9.2f %8.0f %8.0f %8.0f %7.3f %7.1f\n", s.rows, s.cols, wg_us,
           bytes / wg_us / 1e3, bytes / wg1_us / 1e3, bytes / cub_us / 1e3,
           bytes / wg_us / 1e3 / read_gbs, cub_us / wg_us);
  }
  if (temp) CHECK(cudaFree(temp));
  CHECK(cudaFree(offsets));
}

static void ceilings() {
  const size_t bytes = (size_t)1 << 30;
  fill_arena<float>();
  const double copy_us = time_us(
      [&](int) {
        CHECK(cudaMemcpyAsync(g_copy_dst, g_arena, bytes, cudaMemcpyDeviceToDevice, g_stream));
      },
      1, 20);
  const double read_us = time_us([&](int) { launch_read(g_arena, bytes); }, 1, 20);
  csv("ceiling", "copy", "-", "-", bytes, 0, 2.0 * bytes, copy_us);
  csv("ceiling", "read", "-", "-", bytes, 0, (double)bytes, read_us);
  printf("ceilings, 1 GiB: copy %.1f GB/s (read + write), plain read %.1f GB/s\n",
         2.0 * bytes / copy_us / 1e3, bytes / read_us / 1e3);
}

int main(int argc, char **argv) {
  bool quick = false, extremes = false;
  const char *csv_path = "reduce_bench.csv";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = true;
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
    else if (!strcmp(argv[i], "--rows-extremes")) extremes = true;
  }
  if (!open_csv(csv_path, "impl")) return 2;
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(0));  // the primary context, current: warpgen uses it too
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  g_sms = prop.multiProcessorCount;
  if (wg_context_create(&g_ctx, NULL) != WG_OK) {
    fprintf(stderr, "wg_context_create failed\n");
    return 2;
  }
  printf("%s, %d SMs, L2 %d MB; warpgen %s\n", prop.name, g_sms, prop.l2CacheSize >> 20,
         wg_version());
  CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&g_ev0));
  CHECK(cudaEventCreate(&g_ev1));
  CHECK(cudaMalloc(&g_arena, ARENA_BYTES + 4096));
  CHECK(cudaMalloc(&g_copy_dst, (size_t)1 << 30));
  CHECK(cudaMalloc(&g_out, (size_t)256 << 20));
  ceilings();
  if (extremes) {
    rows_section(quick, EXTREME_SHAPES);
  } else {
    rows_section(quick, ROW_SHAPES);
    array_section<float>(quick);
    array_section<int>(quick);
    array_section<double>(quick);
    array_section<__half>(quick);
  }
  fclose(g_csv);
  wg_context_destroy(g_ctx);
  printf("\n%s: %d mismatches\n", g_failures ? "FAILED" : "ok", g_failures);
  return g_failures ? 1 : 0;
}
