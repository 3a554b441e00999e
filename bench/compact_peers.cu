// compact_peers.cu - stream compaction at 2^28 f32 on one GPU: warpgen's
// wg_compact against cub::DeviceSelect::If with the same predicate
// (x > threshold) and the copy ceiling (a device-to-device copy), on the
// same buffers in the same run, timed with CUDA events (warm-up, then the
// median of 20 calls). Kept fractions 50% and 1% of uniform [0, 1) inputs.
//
// GB/s counts what a compaction must move: the input read plus the kept
// values written (plus 8 bytes a kept element for the "+indices" row); the
// copy ceiling counts its read and its write. Every warpgen result is
// compared with CUB's (count and every kept value, in order) and with the
// count on the host.
//
// Build (after `ninja -C build`):
//   nvcc -arch=sm_90 -O3 -std=c++17 -Iinclude -Ibench -o build/compact_peers \
//       bench/compact_peers.cu build/libwarpgen.a -ldl -lpthread
// Run:    build/compact_peers [--log2n 28]
// Prints one line per (kept, implementation); exits 1 when a check fails.

#include "bench_harness.cuh"
#include "warpgen.h"

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct above {
  float threshold;
  __host__ __device__ bool operator()(float x) const { return x > threshold; }
};

__global__ void fill_uniform(float *x, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
       i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned long long z = i * 0x9e3779b97f4a7c15ull + 12345;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x[i] = (float)(z >> 40) * (1.0f / 16777216.0f); /* [0, 1) */
  }
}

int main(int argc, char **argv) {
  int log2n = 28;
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--log2n")) log2n = atoi(argv[++i]);
  const unsigned long long n = 1ull << log2n;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(0)); /* the primary context, which warpgen then uses */
  CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&g_ev0));
  CHECK(cudaEventCreate(&g_ev1));
  float *x, *out_cub, *out_wg, *copy;
  long long *idx;
  int *count_cub;
  unsigned long long *count_wg;
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&out_cub, n * 4));
  CHECK(cudaMalloc(&out_wg, n * 4));
  CHECK(cudaMalloc(&copy, n * 4));
  CHECK(cudaMalloc(&idx, n * 8));
  CHECK(cudaMalloc(&count_cub, sizeof(int)));
  CHECK(cudaMalloc(&count_wg, 8));
  fill_uniform<<<prop.multiProcessorCount * 8, 256, 0, g_stream>>>(x, n);
  CHECK(cudaStreamSynchronize(g_stream));
  std::vector<float> host(n);
  CHECK(cudaMemcpy(host.data(), x, n * 4, cudaMemcpyDeviceToHost));

  wg_context *ctx = NULL;
  wg_spec spec;
  if (wg_context_create(&ctx, NULL) ||
      wg_spec_parse(ctx, &spec, "compact f32 pred=\"x > p0\" params=f32")) {
    fprintf(stderr, "warpgen: %s\n", ctx ? wg_errmsg(ctx) : "no context");
    return 2;
  }

  const double copy_us = time_us([&](int) {
    CHECK(cudaMemcpyAsync(copy, x, n * 4, cudaMemcpyDeviceToDevice, g_stream));
  }, 1, 20);
  const double ceiling = 2.0 * n * 4 / copy_us / 1e3;
  printf("%s, 2^%d f32 (%.0f MB), copy ceiling %.0f GB/s (read + write)\n", prop.name,
         log2n, n * 4 / 1e6, ceiling);
  printf("%-6s %-22s %10s %9s %9s %9s\n", "kept", "implementation", "us", "GB/s",
         "x copy", "x CUB");

  int failures = 0;
  const float thresholds[] = {0.5f, 0.99f};
  for (float threshold : thresholds) {
    unsigned long long want = 0;
    for (unsigned long long i = 0; i < n; i++) want += host[i] > threshold;
    const double kept_pct = 100.0 * (double)want / (double)n;

    size_t temp_bytes = 0;
    CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, x, out_cub, count_cub, (int)n,
                                above{threshold}, g_stream));
    void *temp = nullptr;
    CHECK(cudaMalloc(&temp, temp_bytes));
    const double cub_us = time_us([&](int) {
      CHECK(cub::DeviceSelect::If(temp, temp_bytes, x, out_cub, count_cub, (int)n,
                                  above{threshold}, g_stream));
    }, 1, 20);
    const double bytes = (double)n * 4 + (double)want * 4;
    const double cub_gbs = bytes / cub_us / 1e3;
    char label[16];
    snprintf(label, sizeof label, "%.0f%%", kept_pct);
    printf("%-6s %-22s %10.1f %9.0f %9.3f %9s\n", label, "cub::DeviceSelect::If", cub_us,
           cub_gbs, cub_gbs / ceiling, "1.000");

    wg_scalar p;
    p.f32 = threshold;
    const uint64_t in = (uint64_t)(uintptr_t)x;
    for (int with_indices = 0; with_indices < 2; with_indices++) {
      const uint64_t indices = with_indices ? (uint64_t)(uintptr_t)idx : 0;
      int rc = WG_OK;
      const double us = time_us([&](int) {
        if (rc == WG_OK)
          rc = wg_compact(ctx, &spec, &in, 1, n, &p, 1, (uint64_t)(uintptr_t)out_wg,
                          indices, (uint64_t)(uintptr_t)count_wg, g_stream);
      }, 1, 20);
      if (rc != WG_OK) {
        fprintf(stderr, "wg_compact: %s: %s\n", wg_strerror(rc), wg_errmsg(ctx));
        return 2;
      }
      const double b = bytes + (with_indices ? (double)want * 8 : 0);
      const double gbs = b / us / 1e3;
      printf("%-6s %-22s %10.1f %9.0f %9.3f %9.3f\n", label,
             with_indices ? "warpgen +indices" : "warpgen", us, gbs, gbs / ceiling,
             with_indices ? gbs / cub_gbs * bytes / b : gbs / cub_gbs);
      /* The same count and values as CUB, in the same order. */
      int got_cub = 0;
      unsigned long long got_wg = 0;
      CHECK(cudaMemcpy(&got_cub, count_cub, sizeof got_cub, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(&got_wg, count_wg, 8, cudaMemcpyDeviceToHost));
      bool ok = got_wg == want && (unsigned long long)got_cub == want;
      if (ok) {
        std::vector<float> a(want), c(want);
        CHECK(cudaMemcpy(a.data(), out_wg, want * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(c.data(), out_cub, want * 4, cudaMemcpyDeviceToHost));
        ok = memcmp(a.data(), c.data(), want * 4) == 0;
        if (ok && with_indices) {
          std::vector<long long> ix(want);
          CHECK(cudaMemcpy(ix.data(), idx, want * 8, cudaMemcpyDeviceToHost));
          for (unsigned long long k = 0; ok && k < want; k++)
            ok = ix[k] >= 0 && (unsigned long long)ix[k] < n && host[ix[k]] == a[k] &&
                 (k == 0 || ix[k] > ix[k - 1]);
        }
      }
      if (!ok) {
        printf("  CHECK FAILED: counts host %llu, CUB %d, warpgen %llu\n", want, got_cub,
               got_wg);
        failures++;
      }
    }
    CHECK(cudaFree(temp));
  }
  printf("GB/s: input read + kept values written (+indices: + 8 bytes a kept "
         "element; its x CUB compares time for the values' bytes)\n");
  printf("%s: %d check failures\n", failures ? "FAILED" : "ok", failures);
  wg_context_destroy(ctx);
  return failures ? 1 : 0;
}
