// bench_harness.cuh - what the reduction benchmarks (reduce_peers.cu,
// reduce_bench.cu) share: a checked CUDA call, the event timer (warm-up,
// batches of calls, median), the slice rotation that keeps inputs out of L2,
// the batch size for a size, and one CSV line.
//
// Each program is one translation unit: the stream, the events, the arena
// and the CSV file are this header's statics, set up by the program.
#ifndef WG_BENCH_HARNESS_CUH
#define WG_BENCH_HARNESS_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                        \
  do {                                                                     \
    cudaError_t err_ = (call);                                             \
    if (err_ != cudaSuccess) {                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
              cudaGetErrorString(err_));                                   \
      exit(2);                                                             \
    }                                                                      \
  } while (0)

typedef unsigned long long u64;

static cudaStream_t g_stream;
static cudaEvent_t g_ev0, g_ev1;
static char *g_arena;                                 // the inputs
static const size_t ARENA_BYTES = (size_t)2 << 30;    // 2 GiB: many times L2
static FILE *g_csv;

// Median microseconds per call of launch(i), i counting calls (for the
// rotation below); `batch` calls between a pair of events, after a warm-up.
// The row shapes of issue 5 (2^26 elements each, plus 2^24 x 4 and
// 2^16 x 1000), shared by the library benchmark and the design probes.
struct row_shape { unsigned long long rows, cols; };
static const row_shape ROW_SHAPES[] = {
    {1u << 24, 4},    {1u << 21, 32},   {1u << 19, 128}, {1u << 16, 1000},
    {1u << 16, 1024}, {1u << 13, 8192}, {1u << 10, 65536}};

// Opens the CSV every row goes to and writes its header; false (after
// saying why) when it cannot be written.
static bool open_csv(const char *path, const char *impl_column) {
  g_csv = fopen(path, "w");
  if (!g_csv) {
    perror(path);
    return false;
  }
  fprintf(g_csv, "section,%s,type,mode,n_or_rows,cols,bytes,us,GBps\n", impl_column);
  return true;
}

template <class F> static double time_us(F launch, int batch, int reps) {
  int call = 0;
  for (int i = 0; i < batch * 2 + 3; i++) launch(call++);
  CHECK(cudaStreamSynchronize(g_stream));
  CHECK(cudaGetLastError());
  std::vector<float> t;
  for (int r = 0; r < reps; r++) {
    CHECK(cudaEventRecord(g_ev0, g_stream));
    for (int b = 0; b < batch; b++) launch(call++);
    CHECK(cudaEventRecord(g_ev1, g_stream));
    CHECK(cudaEventSynchronize(g_ev1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, g_ev0, g_ev1));
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * 1000.0 / batch;
}

// The arena offset of call i's input: "cold" calls read a different slice
// each time when the input is small enough that L2 could keep it between
// calls; "warm" calls (and large inputs) always the first.
static size_t rotate(size_t bytes, int call, bool cold) {
  if (!cold || bytes * 4 > ARENA_BYTES) return 0;
  const size_t step = (bytes + 4095) / 4096 * 4096;
  const size_t slots = (ARENA_BYTES - bytes) / step;
  return (size_t)(call % (int)std::max<size_t>(slots, 1)) * step;
}

// Calls a timed batch: one for large inputs, more for small ones (so that
// the events time the calls, not themselves).
static int batch_for(size_t bytes) {
  return bytes >= ((size_t)64 << 20) ? 1 : bytes >= ((size_t)4 << 20) ? 10 : 50;
}

// One CSV line: section, implementation, type, mode, n (or rows), cols,
// bytes, microseconds, GB/s.
static void csv(const char *section, const char *impl, const char *type,
                const char *mode, u64 a, u64 b, double bytes, double us) {
  fprintf(g_csv, "%s,%s,%s,%s,%llu,%llu,%.0f,%.4f,%.2f\n", section, impl, type,
          mode, a, b, bytes, us, bytes / us / 1e3);
  fflush(g_csv);
}

#endif  // WG_BENCH_HARNESS_CUH
