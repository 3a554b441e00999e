/*
 * warp_bandwidth.c - how close each warp primitive comes to the memory
 * bandwidth ceiling: every primitive x type x variant at width 32, in both
 * layouts, over 2^28 elements, as GB/s (bytes read + written) and as a
 * fraction of a copy ceiling measured in the same run (a 16-byte-vector
 * copy kernel over the same 2^28 x 4 bytes: read + written).
 *
 * What is timed is what a user gets: wg_kernel_get + wg_warp_launch with
 * the default block and grid, CUDA events around each launch, one warm-up
 * then the median of REPS. The input is pseudo-random bytes (0..63 each, so
 * floats stay finite), written once by a small kernel.
 *
 * usage: warp_bandwidth [--compile-only] [--n N] [--width W] [--op OP]
 *   --op OP         the operator of reduce, allreduce and the scans (default
 *                   sum); another one (argmax, var, logsumexp...) times
 *                   only the primitives and types that take it: its
 *                   struct accumulator shuffled field by field
 *   --compile-only  compiles every kernel into the disk cache
 *                   (WARPGEN_CACHE_DIR) without a GPU, so that the GPU
 *                   machine compiles nothing; see tests/gpu_all.sh.
 * Prints a markdown table (docs/warp-bandwidth.md) on stdout and one line
 * per kernel on stderr.
 */
#include "driver.h"
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 7

/* The copy ceiling and the input fill, compiled with NVRTC here. */
static const char helpers[] =
    "extern \"C\" __global__ void wg_bench_copy16(const uint4 *__restrict__ in,\n"
    "    uint4 *__restrict__ out, unsigned long long n) {\n"
    "  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = in[i];\n"
    "}\n"
    "extern \"C\" __global__ void wg_bench_fill(unsigned *out, unsigned long long n) {\n"
    "  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  unsigned x = (unsigned)i * 0x9e3779b9u ^ (unsigned)(i >> 32);\n"
    "  x ^= x >> 15; x *= 0x2c1b3c6du; x ^= x >> 12;\n"
    "  out[i] = x & 0x3f3f3f3fu;\n"
    "}\n";

typedef struct bench {
  wg_context *ctx;
  const wg_driver_api *api;
  CUevent start, stop;
  uint64_t in, out;
  uint64_t n;
} bench;

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int cuda(bench *b, CUresult r, const char *what) {
  return wg_cuda_status(b->ctx, r, what);
}

/* Median milliseconds of REPS launches of fn (after one warm-up). */
static int time_function(bench *b, CUfunction fn, unsigned grid, void **params,
                         double *ms_out) {
  double ms[REPS];
  int rc = cuda(b, b->api->LaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, NULL, params, NULL),
                "warm-up");
  for (int i = 0; !rc && i < REPS; i++) {
    float t = 0;
    rc = cuda(b, b->api->EventRecord(b->start, NULL), "cuEventRecord");
    if (!rc)
      rc = cuda(b, b->api->LaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, NULL, params, NULL),
                "cuLaunchKernel");
    if (!rc) rc = cuda(b, b->api->EventRecord(b->stop, NULL), "cuEventRecord");
    if (!rc) rc = cuda(b, b->api->EventSynchronize(b->stop), "cuEventSynchronize");
    if (!rc) rc = cuda(b, b->api->EventElapsedTime(&t, b->start, b->stop), "cuEventElapsedTime");
    ms[i] = t;
  }
  qsort(ms, REPS, sizeof ms[0], compare_double);
  *ms_out = ms[REPS / 2];
  return rc;
}

/* Median milliseconds of REPS launches of a warp-primitive spec. */
static int time_spec(bench *b, const wg_spec *spec, double *ms_out) {
  wg_kernel *k = NULL;
  double ms[REPS];
  int rc = wg_kernel_get(b->ctx, &k, spec);
  if (!rc) rc = wg_warp_launch(b->ctx, k, b->in, b->out, b->n, NULL, NULL);
  for (int i = 0; !rc && i < REPS; i++) {
    float t = 0;
    rc = cuda(b, b->api->EventRecord(b->start, NULL), "cuEventRecord");
    if (!rc) rc = wg_warp_launch(b->ctx, k, b->in, b->out, b->n, NULL, NULL);
    if (!rc) rc = cuda(b, b->api->EventRecord(b->stop, NULL), "cuEventRecord");
    if (!rc) rc = cuda(b, b->api->EventSynchronize(b->stop), "cuEventSynchronize");
    if (!rc) rc = cuda(b, b->api->EventElapsedTime(&t, b->start, b->stop), "cuEventElapsedTime");
    ms[i] = t;
  }
  qsort(ms, REPS, sizeof ms[0], compare_double);
  *ms_out = ms[REPS / 2];
  return rc;
}

/* The copy ceiling in GB/s (read + written), after filling the input. */
static int ceiling(bench *b, int arch, double *gbs) {
  wg_binary bin = {0};
  CUmodule module = NULL;
  CUfunction copy, fill;
  int rc = wg_compile(b->ctx, &bin, helpers, "warp_bandwidth_helpers", arch);
  if (!rc) rc = cuda(b, b->api->ModuleLoadData(&module, bin.cubin), "cuModuleLoadData");
  if (!rc) rc = cuda(b, b->api->ModuleGetFunction(&copy, module, "wg_bench_copy16"), "copy");
  if (!rc) rc = cuda(b, b->api->ModuleGetFunction(&fill, module, "wg_bench_fill"), "fill");
  wg_binary_free(&bin);
  /* The input: every 32-bit word of the largest element size's buffer. */
  unsigned long long words = b->n * 2, vectors = b->n / 4; /* 2^28 x 4 bytes */
  void *fill_params[] = {&b->in, &words};
  if (!rc)
    rc = cuda(b, b->api->LaunchKernel(fill, (unsigned)((words + 255) / 256), 1, 1, 256, 1, 1,
                                      0, NULL, fill_params, NULL), "fill");
  double ms = 0;
  void *copy_params[] = {&b->in, &b->out, &vectors};
  if (!rc) rc = time_function(b, copy, (unsigned)((vectors + 255) / 256), copy_params, &ms);
  if (module) b->api->ModuleUnload(module);
  *gbs = ms > 0 ? 2.0 * (double)vectors * 16 / (ms * 1e-3) * 1e-9 : 0;
  return rc;
}

static const wg_primitive prims[] = {WG_REDUCE, WG_ALLREDUCE, WG_SCAN,   WG_EXSCAN, WG_BROADCAST,
                                     WG_BALLOT, WG_ANY,       WG_ALL,    WG_MATCH};

/* The spec of one table cell, or false when that combination is not valid. */
static bool cell_spec(wg_spec *s, wg_primitive p, wg_type t, wg_variant v, wg_layout l,
                      int width, wg_operator op) {
  if (op != WG_OP_SUM && !wg_primitives[p].takes_operator) return false;
  wg_spec_init(s);
  s->primitive = p;
  s->type = t;
  s->op = wg_primitives[p].takes_operator ? op : WG_OP_NONE;
  s->variant = v;
  s->layout = l;
  s->width = width;
  s->arch = 90;
  return wg_spec_validate(NULL, s) == WG_OK;
}

int main(int argc, char **argv) {
  bool compile_only = false;
  uint64_t n = UINT64_C(1) << 28;
  int width = 32;
  wg_operator op = WG_OP_SUM;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--compile-only")) compile_only = true;
    else if (!strcmp(argv[i], "--op") && i + 1 < argc) {
      const char *name = argv[++i];
      op = WG_OP_NONE;
      for (int o = 1; o < WG_OPERATOR_COUNT; o++)
        if (!strcmp(wg_operator_name((wg_operator)o), name)) op = (wg_operator)o;
      if (op == WG_OP_NONE) {
        fprintf(stderr, "warp_bandwidth: unknown operator '%s'\n", name);
        return 2;
      }
    }
    else if (!strcmp(argv[i], "--n") && i + 1 < argc) n = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--width") && i + 1 < argc) width = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: warp_bandwidth [--compile-only] [--n N] [--width W] [--op OP]\n");
      return 2;
    }
  }
  n &= ~UINT64_C(3); /* the copy moves whole 16-byte vectors of 4-byte words */
  bench b = {0};
  b.n = n;
  int rc = wg_context_create(&b.ctx, NULL);
  wg_device_scope scope = {0};
  wg_device_info info = {0};
  double copy_gbs = 0;
  if (!rc && !compile_only) {
    rc = wg_device_get_info(b.ctx, &info);
    if (!rc) rc = wg_device_enter(b.ctx, &scope, &b.api);
    if (!rc) rc = wg_mem_alloc(b.ctx, &b.in, n * 8);
    if (!rc) rc = wg_mem_alloc(b.ctx, &b.out, n * 8);
    if (!rc) rc = cuda(&b, b.api->EventCreate(&b.start, CU_EVENT_DEFAULT), "cuEventCreate");
    if (!rc) rc = cuda(&b, b.api->EventCreate(&b.stop, CU_EVENT_DEFAULT), "cuEventCreate");
    if (!rc) rc = ceiling(&b, info.arch, &copy_gbs);
    if (rc) {
      fprintf(stderr, "warp_bandwidth: %s\n", wg_errmsg(b.ctx));
      wg_context_destroy(b.ctx);
      return 1;
    }
    printf("# Warp primitives against the bandwidth ceiling\n\n"
           "%s (sm_%d), n = %" PRIu64 ", width %d, operator %s; median of %d launches.\n"
           "GB/s counts bytes read + written; x = fraction of the copy ceiling, "
           "%.0f GB/s,\nmeasured in the same run (16-byte copy kernel). "
           "`bench/warp_bandwidth` regenerates this table.\n\n"
           "| primitive | type | variant | vec GB/s | vec x | lane GB/s | lane x |\n"
           "|---|---|---|---|---|---|---|\n",
           info.name, info.arch, n, width, wg_operator_name(op), REPS, copy_gbs);
  }
  int failures = 0;
  for (size_t p = 0; p < WG_COUNT_OF(prims); p++)
    for (int t = 0; t < WG_TYPE_COUNT; t++)
      for (int v = WG_VARIANT_DOWN; v < WG_VARIANT_COUNT; v++) {
        if (v == WG_VARIANT_SMEM) continue; /* the baseline: lane only, not a target */
        double gbs[WG_LAYOUT_COUNT] = {0};
        bool any = false;
        for (int l = 0; l < WG_LAYOUT_COUNT; l++) {
          wg_spec s;
          char text[256];
          if (!cell_spec(&s, prims[p], (wg_type)t, (wg_variant)v, (wg_layout)l, width, op))
            continue;
          any = true;
          wg_spec_format(text, sizeof text, &s);
          if (compile_only) {
            void *cubin = NULL;
            size_t len = 0;
            if (wg_cubin(b.ctx, &cubin, &len, &s) != WG_OK) {
              fprintf(stderr, "%s: %s\n", text, wg_errmsg(b.ctx));
              failures++;
            }
            wg_free(cubin);
            continue;
          }
          double ms = 0;
          if (time_spec(&b, &s, &ms) != WG_OK) {
            fprintf(stderr, "%s: %s\n", text, wg_errmsg(b.ctx));
            failures++;
            continue;
          }
          uint64_t count = 0;
          size_t size = 0;
          wg_output_shape(&count, &size, &s, n);
          double bytes = (double)n * (double)wg_type_size(s.type) + (double)count * (double)size;
          gbs[l] = bytes / (ms * 1e-3) * 1e-9;
          fprintf(stderr, "%s: %.3f ms, %.0f GB/s, %.2f of copy\n", text, ms, gbs[l],
                  gbs[l] / copy_gbs);
        }
        if (!any || compile_only) continue;
        printf("| %s | %s | %s |", wg_primitive_name(prims[p]), wg_type_name((wg_type)t),
               wg_variant_name((wg_variant)v));
        for (int l = 0; l < WG_LAYOUT_COUNT; l++)
          if (gbs[l] > 0)
            printf(" %.0f | %s%.2f%s |", gbs[l], gbs[l] < 0.85 * copy_gbs ? "" : "**",
                   gbs[l] / copy_gbs, gbs[l] < 0.85 * copy_gbs ? "" : "**");
          else
            printf(" - | - |");
        printf("\n");
      }
  if (!compile_only) {
    printf("\nBold: at least 0.85 of the copy ceiling, the target of issue 10.\n");
    wg_mem_free(b.ctx, b.in);
    wg_mem_free(b.ctx, b.out);
    b.api->EventDestroy(b.start);
    b.api->EventDestroy(b.stop);
    wg_device_leave(b.ctx, &scope);
  }
  wg_context_destroy(b.ctx);
  return failures ? 1 : 0;
}
