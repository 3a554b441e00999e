/*
 * stream_cost.c - what right answers on every stream cost: the time per
 * wg_reduce call at 2^10, 2^20 and 2^28 f32 elements (and a split row
 * reduction), on the GPU and on the host, plus a check that calls
 * overlapping on 2 and 8 streams give the bits the same calls give alone.
 *
 *   stream_cost [--quick]
 *
 * Uses only the public API and the driver (dlopen), so the same file builds
 * against today's library and against an older one; bench/old_vs_new.sh
 * builds both and runs them one after the other on a GPU machine.
 *
 * GPU time: batches of calls back to back on one stream between two events
 * (time / calls; launch costs included, as a loop of calls sees them), the
 * median of 15 batches after a warm-up. Host time: the wall time to queue
 * one batch of calls, per call (the stream is held by a spin kernel, so
 * queueing never blocks on the GPU). Inputs stay the same (warm); only the
 * per-call overhead differs between the versions.
 *
 * Not a test: numbers depend on the machine.
 */
#include "warpgen.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*StreamCreate)(CUstream *, unsigned);
  CUresult (*EventCreate)(CUevent *, unsigned);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **, void **);
} cu;

static wg_context *ctx;
static CUfunction spin_fn;

#define CU(call)                                                    \
  do {                                                              \
    CUresult r_ = (call);                                           \
    if (r_ != CUDA_SUCCESS) {                                       \
      fprintf(stderr, "%s:%d: %s: CUDA error %d\n", __FILE__,       \
              __LINE__, #call, (int)r_);                            \
      exit(2);                                                      \
    }                                                               \
  } while (0)
#define WG(call)                                                    \
  do {                                                              \
    int rc_ = (call);                                               \
    if (rc_ != WG_OK) {                                             \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__,    \
              #call, wg_strerror(rc_), wg_errmsg(ctx));             \
      exit(2);                                                      \
    }                                                               \
  } while (0)

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void load_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "no CUDA driver: %s\n", dlerror());
    exit(77);
  }
  const struct {
    void *fn;
    const char *name;
  } syms[] = {
      {&cu.Init, "cuInit"},
      {&cu.DeviceGet, "cuDeviceGet"},
      {&cu.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {&cu.CtxSetCurrent, "cuCtxSetCurrent"},
      {&cu.CtxSynchronize, "cuCtxSynchronize"},
      {&cu.StreamCreate, "cuStreamCreate"},
      {&cu.EventCreate, "cuEventCreate"},
      {&cu.EventRecord, "cuEventRecord"},
      {&cu.EventSynchronize, "cuEventSynchronize"},
      {&cu.EventElapsedTime, "cuEventElapsedTime"},
      {&cu.ModuleLoadData, "cuModuleLoadData"},
      {&cu.ModuleGetFunction, "cuModuleGetFunction"},
      {&cu.LaunchKernel, "cuLaunchKernel"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    if (!(*(void **)syms[i].fn = dlsym(lib, syms[i].name))) {
      fprintf(stderr, "libcuda.so.1 lacks %s\n", syms[i].name);
      exit(2);
    }
  CUdevice dev;
  CUcontext c;
  CU(cu.Init(0));
  CU(cu.DeviceGet(&dev, 0));
  CU(cu.PrimaryCtxRetain(&c, dev));
  CU(cu.CtxSetCurrent(c)); /* warpgen adopts it */
}

/* A one-thread kernel that spins for `cycles`, compiled by the driver from
 * PTX for whatever device this is (sm_75 PTX runs on every later one). */
static void load_spin(void) {
  static const char ptx[] =
      ".version 6.4\n.target sm_75\n.address_size 64\n"
      ".visible .entry spin(.param .u64 cycles)\n{\n"
      "  .reg .pred %p;\n  .reg .b64 %r<5>;\n"
      "  ld.param.u64 %r1, [cycles];\n  mov.u64 %r2, %clock64;\n"
      "LOOP:\n  mov.u64 %r3, %clock64;\n  sub.s64 %r4, %r3, %r2;\n"
      "  setp.lt.s64 %p, %r4, %r1;\n  @%p bra LOOP;\n  ret;\n}\n";
  CUmodule m;
  CU(cu.ModuleLoadData(&m, ptx));
  CU(cu.ModuleGetFunction(&spin_fn, m, "spin"));
}

static void spin(CUstream s, double ms) {
  long long cycles = (long long)(ms * 2e6);
  void *params[] = {&cycles};
  CU(cu.LaunchKernel(spin_fn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
}

/* One call of a case: a whole-array f32 sum of n, or `rows` f32 rows of n. */
typedef struct bench_case {
  const char *name;
  uint64_t n, rows;
  int batch;
} bench_case;

static void call(const bench_case *c, uint64_t in, uint64_t out, CUstream s) {
  if (c->rows)
    WG(wg_reduce_rows(ctx, WG_F32, WG_OP_SUM, in, c->rows, c->n, c->n, out, s));
  else
    WG(wg_reduce(ctx, WG_F32, WG_OP_SUM, in, c->n, out, s));
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define BATCHES 15

static void time_case(const bench_case *c, uint64_t in, uint64_t out, CUstream s) {
  CUevent start, stop;
  CU(cu.EventCreate(&start, 0));
  CU(cu.EventCreate(&stop, 0));
  for (int i = 0; i < c->batch; i++) call(c, in, out, s); /* warm-up */
  CU(cu.CtxSynchronize());
  double gpu[BATCHES], host[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    CU(cu.EventRecord(start, s));
    for (int i = 0; i < c->batch; i++) call(c, in, out, s);
    CU(cu.EventRecord(stop, s));
    CU(cu.EventSynchronize(stop));
    float ms = 0;
    CU(cu.EventElapsedTime(&ms, start, stop));
    gpu[b] = ms * 1e3 / c->batch;
    /* Host side: the stream held, so queueing never waits. */
    spin(s, 20);
    const double t0 = now_us();
    for (int i = 0; i < c->batch; i++) call(c, in, out, s);
    host[b] = (now_us() - t0) / c->batch;
    CU(cu.CtxSynchronize());
  }
  qsort(gpu, BATCHES, sizeof gpu[0], cmp_double);
  qsort(host, BATCHES, sizeof host[0], cmp_double);
  printf("%-22s %10.2f %10.2f %10.2f %12.2f\n", c->name, gpu[BATCHES / 2], gpu[0],
         gpu[BATCHES - 1], host[BATCHES / 2]);
}

/* 64 calls a stream on `nstreams` streams held behind spins, each on its
 * own slice into its own output; returns how many differ from the same
 * calls run alone. */
static int overlap_check(int nstreams, uint64_t in, uint64_t out, CUstream *streams) {
  enum { PER = 64 };
  const int count = nstreams * PER;
  const uint64_t n = 1u << 17;
  uint32_t *alone = malloc((size_t)count * 4), *got = malloc((size_t)count * 4);
  for (int j = 0; j < count; j++)
    WG(wg_reduce(ctx, WG_F32, WG_OP_SUM, in + (uint64_t)j * 4096, n, out + (uint64_t)j * 4,
                 NULL));
  CU(cu.CtxSynchronize());
  WG(wg_memcpy_dtoh(ctx, alone, out, (size_t)count * 4, NULL));
  WG(wg_memset_d8(ctx, out, 0xff, (size_t)count * 4, NULL));
  CU(cu.CtxSynchronize());
  for (int s = 0; s < nstreams; s++) spin(streams[s], 30);
  for (int k = 0; k < PER; k++)
    for (int s = 0; s < nstreams; s++) {
      const int j = k * nstreams + s;
      WG(wg_reduce(ctx, WG_F32, WG_OP_SUM, in + (uint64_t)j * 4096, n,
                   out + (uint64_t)j * 4, streams[s]));
    }
  CU(cu.CtxSynchronize());
  WG(wg_memcpy_dtoh(ctx, got, out, (size_t)count * 4, NULL));
  int wrong = 0;
  for (int j = 0; j < count; j++) wrong += alone[j] != got[j];
  free(alone);
  free(got);
  return wrong;
}

int main(int argc, char **argv) {
  const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  load_driver();
  load_spin();
  WG(wg_context_create(&ctx, NULL));
  wg_device_info info;
  WG(wg_device_get_info(ctx, &info));
  const uint64_t most = quick ? (1ull << 24) : (1ull << 28);
  uint64_t in = 0, out = 0;
  WG(wg_mem_alloc(ctx, &in, most * 4));
  WG(wg_mem_alloc(ctx, &out, 1 << 16));
  /* Values that make every sum exact-ish and every call do real work. */
  WG(wg_memset_d8(ctx, in, 0x3c, most * 4, NULL));
  CUstream streams[8];
  for (int s = 0; s < 8; s++) CU(cu.StreamCreate(&streams[s], CU_STREAM_NON_BLOCKING));

  printf("warpgen %s on %s (sm_%d, %d SMs)\n", wg_version(), info.name, info.arch,
         info.sm_count);
  const bench_case cases[] = {
      {"f32 sum 2^10", 1u << 10, 0, 200},
      {"f32 sum 2^20", 1u << 20, 0, 100},
      {quick ? "f32 sum 2^24" : "f32 sum 2^28", most, 0, quick ? 20 : 10},
      {"rows 4 x 2^20 (split)", 1u << 20, 4, 50},
  };
  printf("%-22s %10s %10s %10s %12s\n", "per call", "GPU us", "fastest", "slowest",
         "host us");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    time_case(&cases[i], in, out, streams[0]);
  /* Random-ish data for the overlap check: each slice sums differently. */
  uint32_t *host = malloc(1u << 22);
  for (uint32_t i = 0; i < (1u << 20); i++) {
    const uint32_t h = i * 2654435761u;
    float f = (float)(h >> 8) / (float)(1u << 24) - 0.5f;
    memcpy(&host[i], &f, 4);
  }
  WG(wg_memcpy_htod(ctx, in, host, 1u << 22, NULL));
  free(host);
  for (int ns = 2; ns <= 8; ns *= 4)
    printf("overlap %d streams x 64 calls of 2^17: %d wrong\n", ns,
           overlap_check(ns, in, out, streams));
  wg_mem_free(ctx, in);
  wg_mem_free(ctx, out);
  wg_context_destroy(ctx);
  return 0;
}
