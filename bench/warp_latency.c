/*
 * warp_latency.c - latency and throughput of warpgen's warp reductions and
 * scans, for every variant at every width, on the current GPU.
 *
 * What is timed is the code warpgen generates: the bench asks the library
 * for each spec's source with one template replaced, the outer kernel
 * (warp_kernel.cu), by the harness below. The prelude (type, operator) and
 * the body (the shuffles, redux or shared-memory tree) are warpgen's own
 * templates, filled by warpgen's codegen. In the harness the body's `in`
 * and `out` are one register, so each repetition's result is the next
 * one's input: a dependent chain of warp reductions.
 *
 *   latency     one warp on the GPU, clock64() around `reps` repetitions:
 *               cycles per reduction (the whole chain divided by reps).
 *   throughput  as many warps as the GPU holds, CUDA events around the
 *               launch: warp reductions per second (a warp of logical
 *               width w does 32/w group reductions at once; counted as
 *               one warp reduction).
 *
 * usage: warp_latency [--compile-only | --source SPEC]
 * Prints a markdown table. --compile-only fills the disk cache
 * (WARPGEN_CACHE_DIR) without a GPU; --source prints the harnessed source
 * of one spec, to read what is timed.
 * Build: see bench/README or the command in the project README.
 */
#include "driver.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The harness: the same keys as warp_kernel.cu, a different outer loop. */
static const char harness[] =
    "/* ${spec}: warpgen ${version} body in the bench/warp_latency harness:\n"
    " * ${summary} */\n"
    "${prelude}\n"
    "#define WG_WIDTH ${width}\n"
    "#define WG_LANES WG_WIDTH\n"
    "/* The body reads in[i] and writes out[..]: both are one register. */\n"
    "struct wg_reg_in { wg_elem v;\n"
    "  __device__ wg_elem operator[](unsigned long long) const { return v; } };\n"
    "struct wg_reg_out { ${out_type} *p;\n"
    "  __device__ ${out_type} &operator[](unsigned long long) const { return *p; } };\n"
    "extern \"C\" __global__ void ${kernel}(const wg_elem *__restrict__ src,\n"
    "    wg_elem *__restrict__ sink, unsigned long long reps,\n"
    "    long long *__restrict__ cycles)\n"
    "{\n"
    "${shared}  const unsigned lane = threadIdx.x & 31u;\n"
    "  const unsigned glane = lane & (WG_WIDTH - 1u);\n"
    "  const unsigned gmask = ${group_mask};\n"
    "  const unsigned long long gid =\n"
    "      (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  wg_elem x = src[gid];\n"
    "  const long long start = clock64();\n"
    "  for (unsigned long long rep = 0; rep < reps; rep++) {\n"
    "    const unsigned long long i = lane;\n"
    "    const bool valid = true;\n"
    "    ${out_type} y = (${out_type})x;\n"
    "    const wg_reg_in in = {x};\n"
    "    const wg_reg_out out = {&y};\n"
    "${body}"
    "    x = (wg_elem)y;\n"
    "  }\n"
    "  const long long stop = clock64();\n"
    "  sink[gid] = x;\n"
    "  if (gid == 0) *cycles = stop - start;\n"
    "}\n";

#define REPS 4096ull
#define TIMINGS 5

static const wg_type types[] = {WG_F32, WG_I32, WG_F64, WG_I64};
static const int widths[] = {2, 4, 8, 16, 32};
static const struct {
  wg_primitive primitive;
  wg_variant variant;
} rows[] = {
    {WG_REDUCE, WG_VARIANT_DOWN},    {WG_REDUCE, WG_VARIANT_XOR},
    {WG_REDUCE, WG_VARIANT_IDX},     {WG_REDUCE, WG_VARIANT_REDUX},
    {WG_REDUCE, WG_VARIANT_SMEM},    {WG_ALLREDUCE, WG_VARIANT_DOWN},
    {WG_ALLREDUCE, WG_VARIANT_XOR},  {WG_ALLREDUCE, WG_VARIANT_IDX},
    {WG_ALLREDUCE, WG_VARIANT_REDUX}, {WG_ALLREDUCE, WG_VARIANT_SMEM},
    {WG_SCAN, WG_VARIANT_UP},        {WG_SCAN, WG_VARIANT_IDX},
    {WG_SCAN, WG_VARIANT_SMEM},
};

#define NTYPES (sizeof types / sizeof types[0])
#define NWIDTHS (sizeof widths / sizeof widths[0])
#define NROWS (sizeof rows / sizeof rows[0])

typedef struct result {
  bool valid;
  double cycles;     /* per reduction, one warp */
  double per_second; /* warp reductions, whole GPU */
} result;

static result results[NTYPES][NROWS][NWIDTHS];

static int die(wg_context *ctx, int rc, const char *what) {
  fprintf(stderr, "warp_latency: %s: %s: %s\n", what, wg_strerror(rc),
          ctx ? wg_errmsg(ctx) : "");
  return 1;
}

/* A folder with warpgen's templates and the harness as warp_kernel.cu. */
static int make_template_dir(char *dir, size_t size) {
  snprintf(dir, size, "%s/warp_latency-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir))
    return -1;
  for (size_t i = 0; i < wg_embedded_template_count; i++) {
    const wg_embedded_template *t = &wg_embedded_templates[i];
    bool outer = strcmp(t->name, "warp_kernel.cu") == 0;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, t->name);
    FILE *f = fopen(path, "w");
    if (!f)
      return -1;
    fputs(outer ? harness : t->text, f);
    fclose(f);
  }
  return 0;
}

static void remove_template_dir(const char *dir) {
  for (size_t i = 0; i < wg_embedded_template_count; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, wg_embedded_templates[i].name);
    unlink(path);
  }
  rmdir(dir);
}

#define CU(ctx, call)                                                  \
  do {                                                                 \
    int rc_ = wg_cuda_status((ctx), (call), #call);                    \
    if (rc_)                                                           \
      return rc_;                                                      \
  } while (0)

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Loads one cubin and measures it. Runs inside the CUDA context. */
static int measure(wg_context *ctx, const wg_driver_api *api,
                   const wg_spec *spec, const void *cubin, result *out) {
  const struct wg_device_state *dev = ctx->device;
  char name[128];
  wg_kernel_name(name, sizeof name, spec);
  CUmodule module;
  CUfunction fn;
  CU(ctx, api->ModuleLoadData(&module, cubin));
  CU(ctx, api->ModuleGetFunction(&fn, module, name));
  const unsigned block = 256;
  size_t shared = wg_codegen_shared_bytes(spec, block);
  int per_sm = 0;
  CU(ctx, api->OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, block,
                                                          shared));
  unsigned grid = (unsigned)(per_sm * dev->info.sm_count);
  size_t threads = (size_t)grid * block;
  size_t bytes = threads * wg_type_size(spec->type);
  CUdeviceptr src, sink, cycles;
  CU(ctx, api->MemAlloc(&src, bytes));
  CU(ctx, api->MemAlloc(&sink, bytes));
  CU(ctx, api->MemAlloc(&cycles, sizeof(long long)));
  /* Small non-zero values: products and sums stay finite over the chain's
   * length for every type (the bits, not the values, are timed). */
  unsigned char *host = malloc(bytes);
  for (size_t i = 0; i < bytes; i++)
    host[i] = (unsigned char)(i % wg_type_size(spec->type) == 0 ? 1 + i % 3
                                                                 : 0);
  CU(ctx, api->MemcpyHtoDAsync(src, host, bytes, NULL));
  free(host);
  unsigned long long reps = REPS;
  void *params[] = {&src, &sink, &reps, &cycles};

  /* Latency: one warp. */
  double lat[TIMINGS];
  for (int t = 0; t < TIMINGS; t++) {
    CU(ctx, api->LaunchKernel(fn, 1, 1, 1, 32, 1, 1, (unsigned)shared, NULL,
                              params, NULL));
    long long c = 0;
    CU(ctx, api->StreamSynchronize(NULL));
    CU(ctx, api->MemcpyDtoHAsync(&c, cycles, sizeof c, NULL));
    CU(ctx, api->StreamSynchronize(NULL));
    lat[t] = (double)c / (double)reps;
  }
  qsort(lat, TIMINGS, sizeof lat[0], compare_double);

  /* Throughput: the whole GPU, warm-up first. */
  CUevent start, stop;
  CU(ctx, api->EventCreate(&start, CU_EVENT_DEFAULT));
  CU(ctx, api->EventCreate(&stop, CU_EVENT_DEFAULT));
  double secs[TIMINGS];
  CU(ctx, api->LaunchKernel(fn, grid, 1, 1, block, 1, 1, (unsigned)shared,
                            NULL, params, NULL));
  for (int t = 0; t < TIMINGS; t++) {
    CU(ctx, api->EventRecord(start, NULL));
    CU(ctx, api->LaunchKernel(fn, grid, 1, 1, block, 1, 1, (unsigned)shared,
                              NULL, params, NULL));
    CU(ctx, api->EventRecord(stop, NULL));
    CU(ctx, api->EventSynchronize(stop));
    float ms = 0;
    CU(ctx, api->EventElapsedTime(&ms, start, stop));
    secs[t] = ms * 1e-3;
  }
  qsort(secs, TIMINGS, sizeof secs[0], compare_double);
  api->EventDestroy(start);
  api->EventDestroy(stop);
  api->MemFree(src);
  api->MemFree(sink);
  api->MemFree(cycles);
  api->ModuleUnload(module);
  out->valid = true;
  out->cycles = lat[TIMINGS / 2];
  out->per_second = (double)(threads / 32) * (double)reps / secs[TIMINGS / 2];
  return WG_OK;
}

static void spec_text(char *buf, size_t size, wg_primitive p, wg_type t,
                      wg_variant v, int width) {
  /* layout=lane: the harness replaces the lane layout's outer kernel */
  snprintf(buf, size, "%s %s sum width=%d variant=%s layout=lane arch=sm_90",
           wg_primitive_name(p), wg_type_name(t), width, wg_variant_name(v));
}

/* A markdown table head: primitive, `second`, then one column a width. */
static void print_header(const char *second) {
  printf("| primitive | %s |", second);
  for (size_t w = 0; w < NWIDTHS; w++)
    printf(" w=%d |", widths[w]);
  printf("\n|---|---|");
  for (size_t w = 0; w < NWIDTHS; w++)
    printf("---|");
  printf("\n");
}

static void print_tables(const wg_device_info *info) {
  printf("## Warp reduction latency and throughput (%s, sm_%d, %d SMs)\n\n",
         info->name, info->arch, info->sm_count);
  printf("Each cell: cycles for one reduction in a dependent chain (one "
         "warp, clock64) / warp reductions per second over the whole GPU "
         "(G/s; every resident warp runs its own chain). Operator: sum. "
         "Generated by `bench/warp_latency`.\n\n");
  for (size_t t = 0; t < NTYPES; t++) {
    printf("### %s\n\n", wg_type_name(types[t]));
    print_header("variant");
    for (size_t r = 0; r < NROWS; r++) {
      bool any = false;
      for (size_t w = 0; w < NWIDTHS; w++)
        any |= results[t][r][w].valid;
      if (!any)
        continue;
      printf("| %s | %s |", wg_primitive_name(rows[r].primitive),
             wg_variant_name(rows[r].variant));
      for (size_t w = 0; w < NWIDTHS; w++) {
        const result *x = &results[t][r][w];
        if (x->valid)
          printf(" %.0f / %.1f |", x->cycles, x->per_second * 1e-9);
        else
          printf(" - |");
      }
      printf("\n");
    }
    printf("\n");
  }
  /* The fastest variant by latency, and by throughput, per cell. */
  printf("### Fastest variant (latency / throughput)\n\n");
  print_header("type");
  static const wg_primitive prims[] = {WG_REDUCE, WG_ALLREDUCE, WG_SCAN};
  for (size_t p = 0; p < 3; p++)
    for (size_t t = 0; t < NTYPES; t++) {
      printf("| %s | %s |", wg_primitive_name(prims[p]),
             wg_type_name(types[t]));
      for (size_t w = 0; w < NWIDTHS; w++) {
        int best_lat = -1, best_thr = -1;
        for (size_t r = 0; r < NROWS; r++) {
          const result *x = &results[t][r][w];
          if (rows[r].primitive != prims[p] || !x->valid)
            continue;
          if (best_lat < 0 || x->cycles < results[t][best_lat][w].cycles)
            best_lat = (int)r;
          if (best_thr < 0 ||
              x->per_second > results[t][best_thr][w].per_second)
            best_thr = (int)r;
        }
        if (best_lat < 0)
          printf(" - |");
        else
          printf(" %s / %s |", wg_variant_name(rows[best_lat].variant),
                 wg_variant_name(rows[best_thr].variant));
      }
      printf("\n");
    }
}

int main(int argc, char **argv) {
  bool compile_only = argc > 1 && (!strcmp(argv[1], "--compile-only") ||
                                   !strcmp(argv[1], "--source"));
  char dir[512];
  if (make_template_dir(dir, sizeof dir)) {
    fprintf(stderr, "warp_latency: cannot write templates under %s\n", dir);
    return 1;
  }
  wg_options o = WG_OPTIONS_INIT;
  o.template_dir = dir;
  wg_context *ctx;
  int rc = wg_context_create(&ctx, &o);
  if (rc)
    return die(NULL, rc, "context");
  wg_device_info info = {0};
  wg_device_scope scope = {0};
  const wg_driver_api *api = NULL;
  if (!compile_only) {
    if ((rc = wg_device_get_info(ctx, &info)) != WG_OK ||
        (rc = wg_device_enter(ctx, &scope, &api)) != WG_OK) {
      remove_template_dir(dir);
      return die(ctx, rc, "device");
    }
  }
  if (argc > 2 && !strcmp(argv[1], "--source")) {
    wg_spec spec;
    char *source = NULL;
    rc = wg_spec_parse(ctx, &spec, argv[2]);
    if (!rc)
      rc = wg_source(ctx, &source, &spec);
    if (!rc)
      fputs(source, stdout);
    wg_free(source);
    wg_context_destroy(ctx);
    remove_template_dir(dir);
    return rc ? die(NULL, rc, argv[2]) : 0;
  }
  int status = 0;
  for (size_t t = 0; t < NTYPES; t++)
    for (size_t r = 0; r < NROWS; r++)
      for (size_t w = 0; w < NWIDTHS; w++) {
        char text[256];
        spec_text(text, sizeof text, rows[r].primitive, types[t],
                  rows[r].variant, widths[w]);
        wg_spec spec;
        if (wg_spec_parse(ctx, &spec, text) != WG_OK)
          continue; /* e.g. redux on f32: not a valid spec */
        void *cubin = NULL;
        size_t len = 0;
        rc = wg_cubin(ctx, &cubin, &len, &spec);
        if (rc) {
          status = die(ctx, rc, text);
          continue;
        }
        if (!compile_only) {
          rc = measure(ctx, api, &spec, cubin, &results[t][r][w]);
          if (rc)
            status = die(ctx, rc, text);
        }
        wg_free(cubin);
        fprintf(stderr, "%s: %.1f cycles, %.3g/s\n", text,
                results[t][r][w].cycles, results[t][r][w].per_second);
      }
  if (!compile_only) {
    wg_device_leave(ctx, &scope);
    print_tables(&info);
  }
  wg_context_destroy(ctx);
  remove_template_dir(dir);
  return status;
}
