// hist_peers.cu - warpgen's histograms (wg_histogram) against
// cub::DeviceHistogram::HistogramEven and the read ceiling, in one run, on
// the same buffers, timed with CUDA events: the cases of issue 12 at 2^28
// keys (256 and 65536 bins over uniform f32 keys; i32 keys with 255 in 256
// in one bin) and uniform i32 keys (torch.bincount's case; torch is timed
// by bench/hist_peers.py). Counts are u32 for both (CUB: unsigned int).
//
// Build (after `ninja -C build`; tests/gpu_hist.sh --build does this):
//   nvcc -arch=sm_90 -O3 -std=c++17 -Iinclude -Itests -o build/bench/hist_peers \
//       bench/hist_peers.cu tests/oracle.c tests/oracle_warp.c tests/oracle_hist.c \
//       build/libwarpgen.a -ldl -lpthread
// Run:  hist_peers [--n N] [--reps R] [--no-check]
//
// Method: the keys are made on the GPU (a hash of the index), 1 GiB of them
// at 2^28, far past the 60 MB L2, so every call streams them from memory.
// Each figure is the median of R timed calls after three warm-up calls;
// GB/s counts the keys read (4 bytes a key). The read ceiling is a kernel
// that reads the same buffer in 16-byte loads, 4 in flight a thread, and
// folds them into one word a block; the copy ceiling a device-to-device
// cudaMemcpyAsync (bytes read + written). Before timing, warpgen's counts
// are checked bin by bin against the CPU oracle (tests/oracle_hist.c) and
// CUB's against the same answer (exact for integer keys; CUB rounds float
// bins its own way, so its float mismatches are reported, not fatal).
// Exit: 0, or 1 when warpgen's counts are wrong.

#include "bench_harness.cuh"
#include "oracle.h"
#include "warpgen.h"

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static wg_context *g_ctx;

static __device__ __forceinline__ unsigned long long mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform f32 keys in [0, 1).
__global__ void make_f32(float *x, unsigned long long n, unsigned long long seed) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
       i < n; i += (unsigned long long)gridDim.x * blockDim.x)
    x[i] = (float)(mix(i ^ seed) >> 40) * 0x1.0p-24f;
}

// i32 keys in [0, bins): uniform, or 255 in 256 in bin bins / 3.
__global__ void make_i32(int *x, unsigned long long n, int bins, bool piled,
                         unsigned long long seed) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
       i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
    const unsigned long long r = mix(i ^ seed);
    x[i] = piled && (r & 255u) ? bins / 3 : (int)((r >> 32) % (unsigned)bins);
  }
}

// The read ceiling: every 16-byte vector loaded, 4 in flight, one word out
// a block (so the loads cannot be dropped).
__global__ void __launch_bounds__(256) read_all(const uint4 *v, unsigned long long n,
                                                unsigned *out) {
  unsigned acc = 0;
  const unsigned long long lanes = (unsigned long long)gridDim.x * 256;
  unsigned long long i = blockIdx.x * 256ull + threadIdx.x;
  for (; i + 3 * lanes < n; i += 4 * lanes) {
    uint4 a = __ldg(v + i), b = __ldg(v + i + lanes), c = __ldg(v + i + 2 * lanes),
          d = __ldg(v + i + 3 * lanes);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^
           d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += lanes) {
    uint4 a = __ldg(v + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  acc = __reduce_xor_sync(0xffffffffu, acc);
  if ((threadIdx.x & 31) == 0) atomicXor(out + blockIdx.x % 64, acc);
}

struct hist_case {
  const char *name;
  wg_type type;
  int bins;
  bool piled;
};

static const hist_case CASES[] = {
  {"256 bins, uniform f32", WG_F32, 256, false},
  {"65536 bins, uniform f32", WG_F32, 65536, false},
  {"256 bins, i32, 255/256 in one bin", WG_I32, 256, true},
  {"65536 bins, i32, 255/256 in one bin", WG_I32, 65536, true},
  {"256 bins, uniform i32", WG_I32, 256, false},
  {"65536 bins, uniform i32", WG_I32, 65536, false},
};

static void wg_check(int rc, const char *what) {
  if (rc != WG_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, wg_strerror(rc), wg_errmsg(g_ctx));
    exit(2);
  }
}

int main(int argc, char **argv) {
  unsigned long long n = 1ull << 28;
  int reps = 20;
  bool check = true;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc) n = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-check")) check = false;
    else {
      fprintf(stderr, "usage: hist_peers [--n N] [--reps R] [--no-check]\n");
      return 2;
    }
  }
  if (n < 1 || reps < 1) return 2;
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(0));  // the primary context, current: warpgen uses it too
  CHECK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&g_ev0));
  CHECK(cudaEventCreate(&g_ev1));
  if (wg_context_create(&g_ctx, NULL) != WG_OK) {
    fprintf(stderr, "wg_context_create failed\n");
    return 2;
  }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("hist_peers on %s (sm_%d%d), n = %llu keys, median of %d calls\n", prop.name,
         prop.major, prop.minor, n, reps);

  const size_t bytes = n * 4;
  void *keys = NULL;
  unsigned *cub_out = NULL, *wg_out = NULL, *sink = NULL;
  CHECK(cudaMalloc(&keys, bytes + 16));
  CHECK(cudaMalloc(&cub_out, 65536 * 4));
  CHECK(cudaMalloc(&wg_out, 65536 * 4));
  CHECK(cudaMalloc(&sink, 64 * 4));
  void *copy_dst = NULL;
  const bool copy_ok = cudaMalloc(&copy_dst, bytes) == cudaSuccess;

  // The ceilings, on the same buffer.
  make_f32<<<1024, 256, 0, g_stream>>>((float *)keys, n, 1);
  const double read_us = time_us([&](int) {
    read_all<<<prop.multiProcessorCount * 8, 256, 0, g_stream>>>((const uint4 *)keys,
                                                                 bytes / 16, sink);
  }, 1, reps);
  const double read_gbps = (double)bytes / read_us / 1e3;
  printf("read ceiling (16-byte loads): %.0f GB/s", read_gbps);
  if (copy_ok) {
    const double copy_us = time_us([&](int) {
      CHECK(cudaMemcpyAsync(copy_dst, keys, bytes, cudaMemcpyDeviceToDevice, g_stream));
    }, 1, reps);
    printf("   copy ceiling: %.0f GB/s (read + write)", 2.0 * (double)bytes / copy_us / 1e3);
    CHECK(cudaFree(copy_dst));
  }
  printf("\n\n%-38s %10s %7s %10s %7s %9s  %s\n", "case (GB/s of keys read)", "warpgen",
         "x read", "CUB", "x read", "wg / CUB", "check");

  std::vector<unsigned char> host(check ? bytes : 0);
  std::vector<uint64_t> want(65536);
  std::vector<unsigned> got(65536);
  int failures = 0;
  void *temp = NULL;
  size_t temp_bytes = 0;
  for (const hist_case &c : CASES) {
    if (c.type == WG_F32)
      make_f32<<<1024, 256, 0, g_stream>>>((float *)keys, n, 7);
    else
      make_i32<<<1024, 256, 0, g_stream>>>((int *)keys, n, c.bins, c.piled, 9);
    CHECK(cudaStreamSynchronize(g_stream));
    wg_spec spec = WG_SPEC_INIT;
    spec.primitive = WG_HISTOGRAM;
    spec.type = c.type;
    spec.op = WG_OP_NONE;
    spec.bins = c.bins;
    wg_scalar range[2];
    range[0].f64 = 0.0;
    range[1].f64 = 1.0;
    const size_t nparams = c.type == WG_F32 ? 2 : 0;
    auto run_wg = [&]() {
      wg_check(wg_histogram(g_ctx, &spec, (uint64_t)keys, n, range, nparams,
                            (uint64_t)wg_out, g_stream),
               "wg_histogram");
    };
    size_t need = 0;
    auto run_cub = [&](void *t, size_t &tb) {
      if (c.type == WG_F32)
        CHECK(cub::DeviceHistogram::HistogramEven(t, tb, (const float *)keys, cub_out,
                                                  c.bins + 1, 0.0f, 1.0f, (long long)n,
                                                  g_stream));
      else
        CHECK(cub::DeviceHistogram::HistogramEven(t, tb, (const int *)keys, cub_out,
                                                  c.bins + 1, 0, c.bins, (long long)n,
                                                  g_stream));
    };
    run_cub(NULL, need);
    if (need > temp_bytes) {
      CHECK(cudaFree(temp));
      CHECK(cudaMalloc(&temp, need));
      temp_bytes = need;
    }
    std::string verdict = "-";
    if (check) {
      CHECK(cudaMemsetAsync(wg_out, 0xa7, 65536 * 4, g_stream));
      run_wg();
      run_cub(temp, temp_bytes);
      CHECK(cudaStreamSynchronize(g_stream));
      CHECK(cudaMemcpy(host.data(), keys, bytes, cudaMemcpyDeviceToHost));
      wg_oracle_histogram(want.data(), c.type, c.bins, 0.0, 1.0, host.data(), n);
      wg_oracle_report r;
      wg_oracle_report_init(&r);
      CHECK(cudaMemcpy(got.data(), wg_out, (size_t)c.bins * 4, cudaMemcpyDeviceToHost));
      wg_oracle_hist_check(&r, WG_U32, c.bins, want.data(), got.data());
      wg_oracle_report rc;
      wg_oracle_report_init(&rc);
      CHECK(cudaMemcpy(got.data(), cub_out, (size_t)c.bins * 4, cudaMemcpyDeviceToHost));
      wg_oracle_hist_check(&rc, WG_U32, c.bins, want.data(), got.data());
      char text[400];
      snprintf(text, sizeof text, "warpgen %s%s; CUB %llu bins differ%s",
               r.mismatches ? "WRONG: " : "exact", r.mismatches ? r.first : "",
               (unsigned long long)rc.mismatches,
               rc.mismatches && c.type == WG_F32 ? " (its own float rounding)" : "");
      verdict = text;
      if (r.mismatches) failures++;
    }
    const double wg_us = time_us([&](int) { run_wg(); }, 1, reps);
    const double cub_us = time_us([&](int) { run_cub(temp, temp_bytes); }, 1, reps);
    const double wg_gbps = (double)bytes / wg_us / 1e3, cub_gbps = (double)bytes / cub_us / 1e3;
    printf("%-38s %10.0f %7.2f %10.0f %7.2f %9.2f  %s\n", c.name, wg_gbps,
           wg_gbps / read_gbps, cub_gbps, cub_gbps / read_gbps, wg_gbps / cub_gbps,
           verdict.c_str());
    fflush(stdout);
  }
  CHECK(cudaFree(temp));
  CHECK(cudaFree(keys));
  CHECK(cudaFree(cub_out));
  CHECK(cudaFree(wg_out));
  CHECK(cudaFree(sink));
  wg_context_destroy(g_ctx);
  return failures ? 1 : 0;
}
