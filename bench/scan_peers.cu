// scan_peers.cu - warpgen's whole-array and row scans against
// cub::DeviceScan::InclusiveSum and the copy ceiling (cudaMemcpyAsync device
// to device of the same bytes), on one GPU, in one run, on the same buffers,
// timed with CUDA events (three warm-up calls, then the median of 15).
//
// Prints GB/s as bytes read + written (2 x n x size) and the fraction of the
// copy ceiling measured in the same run; arrays of 2^28 elements (1 to 2 GiB,
// far past the 60 MB L2). Every warpgen result is compared with CUB's (the
// integers exactly; floats within 1e-5 of the running sum of |x|, sampled),
// and the deterministic mode is run five times and must give the same bits.
//
// Build (after `ninja -C build`; CUB comes with the toolkit):
//   nvcc -arch=sm_90 -O3 -std=c++17 -Iinclude -Ibench -o build/bench/scan_peers \
//       bench/scan_peers.cu build/libwarpgen.a -ldl -lpthread
// Run:    build/bench/scan_peers [--log2n 28] [--csv FILE] [--no-rows]
//         (--no-rows: the whole-array scans only)
// Exit: 0, or 1 when a result is wrong.

#include "bench_harness.cuh"
#include "warpgen.h"

#include <cub/cub.cuh>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>

#define WG(call)                                                                 \
  do {                                                                           \
    int s_ = (call);                                                             \
    if (s_ != WG_OK) {                                                           \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,          \
              wg_strerror(s_), wg_errmsg(g_ctx));                                \
      exit(2);                                                                   \
    }                                                                            \
  } while (0)

static wg_context *g_ctx;
static int g_failures;
static double g_copy_gbs; // the ceiling, GB/s

// Median microseconds of one call (bench_harness.cuh: warm-up, then the
// median of 15 timed calls).
static double time_us(const std::function<void()> &call) {
  return time_us([&](int) { call(); }, 1, 15);
}

static void report(const char *workload, const char *impl, double bytes, double us) {
  const double gbs = bytes / us / 1e3;
  printf("  %-30s %-26s %10.1f us %8.1f GB/s  %5.2f of copy\n", workload, impl, us, gbs,
         gbs / g_copy_gbs);
  if (g_csv) fprintf(g_csv, "%s,%s,%.0f,%.3f,%.1f,%.3f\n", workload, impl, bytes, us, gbs,
                     gbs / g_copy_gbs);
}

template <class T> struct type_of;
template <> struct type_of<float> { static constexpr wg_type t = WG_F32; static const char *name() { return "f32"; } };
template <> struct type_of<int> { static constexpr wg_type t = WG_I32; static const char *name() { return "i32"; } };
template <> struct type_of<double> { static constexpr wg_type t = WG_F64; static const char *name() { return "f64"; } };

template <class T> __global__ void fill_kernel(T *x, unsigned long long n, unsigned seed) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned long long h = (i + seed) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    // Integers -1, 0, 1 (no sum wraps); floats in [-1, 1].
    x[i] = (T)0.5 == 0 ? (T)((long long)(h % 3) - 1)
                       : (T)((long long)(h % 2001) - 1000) / (T)1000;
  }
}

// warpgen's outputs against CUB's: integers exactly, floats sampled within
// 1e-5 (f32) / 1e-12 (f64) of the running sum of |x| (bounded by i + 1).
template <class T>
static bool same_as_cub(const T *want, const T *got, unsigned long long n, const char *what) {
  const unsigned long long samples = 1 << 16;
  std::vector<T> a(samples), b(samples);
  std::vector<unsigned long long> at(samples);
  for (unsigned long long k = 0; k < samples; k++) at[k] = (k * 0x9e3779b97f4a7c15ull) % n;
  at[0] = 0;
  at[1] = n - 1;
  for (unsigned long long k = 0; k < samples; k++) {
    CHECK(cudaMemcpy(&a[k], want + at[k], sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&b[k], got + at[k], sizeof(T), cudaMemcpyDeviceToHost));
  }
  const double rel = sizeof(T) == 8 ? 1e-12 : 1e-5;
  for (unsigned long long k = 0; k < samples; k++) {
    const bool integral = (T)0.5 == 0;
    const bool ok = integral ? a[k] == b[k]
                             : std::fabs((double)a[k] - (double)b[k]) <= rel * (double)(at[k] + 1);
    if (!ok) {
      printf("  WRONG: %s: element %llu is %.17g, CUB says %.17g\n", what, at[k],
             (double)b[k], (double)a[k]);
      g_failures++;
      return false;
    }
  }
  return true;
}

template <class T> static void array_section(unsigned long long n, T *in, T *out, T *ref) {
  const wg_type t = type_of<T>::t;
  const double bytes = 2.0 * (double)n * sizeof(T);
  char workload[64];
  snprintf(workload, sizeof workload, "scan %s 2^%d", type_of<T>::name(), (int)std::log2((double)n));
  fill_kernel<T><<<1024, 256, 0, g_stream>>>(in, n, 7);
  CHECK(cudaGetLastError());
  size_t temp_bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, ref, (long long)n, g_stream));
  void *temp = nullptr;
  CHECK(cudaMalloc(&temp, temp_bytes));
  const double cub_us = time_us([&] {
    CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, ref, (long long)n, g_stream));
  });
  report(workload, "cub::DeviceScan", bytes, cub_us);
  wg_spec fast = WG_SPEC_INIT;
  fast.primitive = WG_SCAN_ARRAY;
  fast.type = t;
  fast.deterministic = 0;
  const uint64_t din = (uint64_t)(uintptr_t)in, dout = (uint64_t)(uintptr_t)out;
  const double fast_us = time_us([&] {
    WG(wg_scan_array_spec(g_ctx, &fast, din, n, dout, g_stream));
  });
  CHECK(cudaStreamSynchronize(g_stream));
  same_as_cub(ref, out, n, "warpgen deterministic=0");
  report(workload, "warpgen deterministic=0", bytes, fast_us);
  const double det_us = time_us([&] {
    WG(wg_scan_array(g_ctx, t, WG_OP_SUM, 0, din, n, dout, g_stream));
  });
  CHECK(cudaStreamSynchronize(g_stream));
  same_as_cub(ref, out, n, "warpgen deterministic=1");
  report(workload, "warpgen deterministic=1", bytes, det_us);
  printf("  %-30s warpgen / CUB: %.2fx (fast), %.2fx (deterministic)\n", "", cub_us / fast_us,
         cub_us / det_us);
  // The deterministic mode's bits, five runs.
  std::vector<T> first(n), again(n);
  CHECK(cudaMemcpy(first.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
  for (int r = 0; r < 4; r++) {
    CHECK(cudaMemsetAsync(out, 0xff, n * sizeof(T), g_stream));
    WG(wg_scan_array(g_ctx, t, WG_OP_SUM, 0, din, n, dout, g_stream));
    CHECK(cudaStreamSynchronize(g_stream)); /* g_stream does not wait for cudaMemcpy */
    CHECK(cudaMemcpy(again.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    if (memcmp(first.data(), again.data(), n * sizeof(T)) != 0) {
      printf("  WRONG: %s deterministic=1 run %d differs from the first\n", workload, r + 2);
      g_failures++;
      break;
    }
  }
  CHECK(cudaFree(temp));
}

static void rows_section(float *in, float *out, unsigned long long total) {
  const unsigned long long cols_list[] = {32, 128, 1024, 8192, 65536};
  for (unsigned long long cols : cols_list) {
    const unsigned long long rows = total / cols;
    char workload[64];
    snprintf(workload, sizeof workload, "scan-rows f32 %llux%llu", rows, cols);
    const double bytes = 2.0 * (double)(rows * cols) * 4;
    const uint64_t din = (uint64_t)(uintptr_t)in, dout = (uint64_t)(uintptr_t)out;
    for (int det = 1; det >= 0; det--) {
      wg_spec s = WG_SPEC_INIT;
      s.primitive = WG_SCAN_ROWS;
      s.type = WG_F32;
      s.deterministic = det;
      const double us = time_us([&] {
        WG(wg_scan_rows_spec(g_ctx, &s, din, rows, cols, cols, dout, cols, g_stream));
      });
      report(workload, det ? "warpgen deterministic=1" : "warpgen deterministic=0", bytes, us);
    }
  }
}

int main(int argc, char **argv) {
  int log2n = 28;
  bool rows = true;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--log2n") && i + 1 < argc) log2n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-rows")) rows = false;
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc) g_csv = fopen(argv[++i], "w");
  }
  if (g_csv) fprintf(g_csv, "workload,impl,bytes,us,GBps,of_copy\n");
  (void)g_arena;
  const unsigned long long n = 1ull << log2n;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  CHECK(cudaFree(0)); // the primary context, current: warpgen adopts it
  CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&g_ev0));
  CHECK(cudaEventCreate(&g_ev1));
  if (wg_context_create(&g_ctx, nullptr) != WG_OK) return 2;
  printf("%s, %d SMs, L2 %d MB; n = 2^%d\n", prop.name, prop.multiProcessorCount,
         prop.l2CacheSize >> 20, log2n);
  const size_t bytes = n * 8;
  char *in, *out, *ref;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMalloc(&ref, bytes));
  CHECK(cudaMemset(in, 0, bytes));
  // The ceiling: a device-to-device copy of 2^n f32 (read + write).
  const double copy_us = time_us([&] {
    CHECK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice, g_stream));
  });
  g_copy_gbs = 2.0 * (double)n * 4 / copy_us / 1e3;
  printf("  %-30s %-26s %10.1f us %8.1f GB/s  (the ceiling)\n", "copy 4 x 2^n bytes",
         "cudaMemcpyAsync D2D", copy_us, g_copy_gbs);
  array_section<float>(n, (float *)in, (float *)out, (float *)ref);
  array_section<int>(n, (int *)in, (int *)out, (int *)ref);
  array_section<double>(n, (double *)in, (double *)out, (double *)ref);
  if (rows) {
    fill_kernel<float><<<1024, 256, 0, g_stream>>>((float *)in, n, 3);
    rows_section((float *)in, (float *)out, n / 4);
  }
  wg_context_destroy(g_ctx);
  if (g_csv) fclose(g_csv);
  printf("\n%s: %d failures\n", g_failures ? "FAILED" : "ok", g_failures);
  return g_failures ? 1 : 0;
}
