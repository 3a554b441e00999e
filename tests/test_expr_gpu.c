/*
 * test_expr_gpu.c - the renderer checked on the GPU against the CPU
 * evaluator (gpu suite): several hundred random expressions (random role,
 * types and text from tests/expr_gen.c), 32 to a kernel, each rendered as
 * a device function called elementwise:
 *     out_k[j] = <expr>(inputs_k[j], i = i_base_k + j, n_k, params_k)
 * compiled with the library's NVRTC stage and options (compile.c), loaded
 * and launched through its driver table (driver.h), on fresh random inputs
 * (NaN, infinities, zeros of both signs, subnormals, the integer extremes,
 * small and arbitrary bit patterns), outputs poisoned first. Every output
 * is compared with wg_expr_eval_bounded: bit for bit where it promises
 * exactness, within its tolerance otherwise, not at all where it cannot
 * say (those are counted). Each failure prints the expression, its scope,
 * the values it read, the expected value with its tolerance and the GPU's.
 *
 * Without a driver or device it exits 77 (skipped). CUDA starts only in
 * the process Check forks for the test. The base seed is printed;
 * WARPGEN_TEST_SEED replays a run. WARPGEN_EXPR_GPU_COUNT sets how many
 * expressions (default 512). `test_expr_gpu --compile-only [BATCHES]`
 * needs no GPU: it generates and compiles BATCHES kernels (default 1) for
 * sm_90 and checks nothing else, to try the source here.
 */
#include "driver.h"
#include "expr.h"
#include "expr_gen.h"
#include "internal.h"
#include "support.h"

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PER_KERNEL 32
#define ELEMENTS 2048 /* per expression */
#define SLOTS 4       /* input words per element: x y z w, or a b, or r */
#define MAX_PRINTED 40

typedef struct case_ {
  wg_expr_scope scope;
  wg_expr *e;
  char *canon;
  wg_value params[8];
  int64_t i_base, n;
} case_;

typedef struct run {
  case_ *cases;
  int count;
  int arch;
  wg_binary *bins; /* one per kernel */
  char **errors;   /* compile errors per kernel */
  uint64_t *in, *out, *params, *meta; /* host copies */
  wg_value *inputs; /* [case][element][slot], the values behind `in` */
  /* results of checking, per case */
  uint64_t *exact, *bounded, *unknown, *failed;
  int printed;
  pthread_mutex_t lock;
  int next;         /* work queue of threads */
} run;

static int kernel_count(const run *r) { return (r->count + PER_KERNEL - 1) / PER_KERNEL; }

/* --- values as 64-bit words (what the kernel reads and writes) ----------- */

static uint64_t encode(wg_value v) {
  uint32_t b32;
  uint64_t b64;
  switch (v.type) {
  case WG_VT_BOOL: return v.as.b;
  case WG_VT_I32: return (uint32_t)v.as.i32;
  case WG_VT_U32: return v.as.u32;
  case WG_VT_I64: return (uint64_t)v.as.i64;
  case WG_VT_U64: return v.as.u64;
  case WG_VT_F32: memcpy(&b32, &v.as.f32, 4); return b32;
  default: memcpy(&b64, &v.as.f64, 8); return b64;
  }
}

static wg_value decode(wg_value_type t, uint64_t w) {
  wg_value v = {.type = t};
  uint32_t b32 = (uint32_t)w;
  switch (t) {
  case WG_VT_BOOL: v.as.b = w != 0; break;
  case WG_VT_I32: v.as.i32 = (int32_t)b32; break;
  case WG_VT_U32: v.as.u32 = b32; break;
  case WG_VT_I64: v.as.i64 = (int64_t)w; break;
  case WG_VT_U64: v.as.u64 = w; break;
  case WG_VT_F32: memcpy(&v.as.f32, &b32, 4); break;
  default: memcpy(&v.as.f64, &w, 8); break;
  }
  return v;
}

/* The variables that live in the input slots, per role. */
static int slot_count(const wg_expr_scope *sc) {
  switch (sc->role) {
  case WG_EXPR_MAP: case WG_EXPR_PREDICATE: return sc->ninputs;
  case WG_EXPR_COMBINE: return 2;
  case WG_EXPR_FINAL: return 1;
  default: return 0;
  }
}
static wg_value_type slot_type(const wg_expr_scope *sc, int s) {
  return sc->role == WG_EXPR_MAP || sc->role == WG_EXPR_PREDICATE ? sc->inputs[s] : sc->acc;
}
static const char *slot_name(const wg_expr_scope *sc, int s) {
  static const char *const inputs[] = {"x", "y", "z", "w"};
  return sc->role == WG_EXPR_COMBINE ? (s ? "b" : "a")
         : sc->role == WG_EXPR_FINAL ? "r" : inputs[s];
}

static wg_expr_values values_of(const run *r, int c, int64_t j) {
  const case_ *k = &r->cases[c];
  wg_expr_values v = {0};
  const wg_value *in = &r->inputs[((size_t)c * ELEMENTS + (size_t)j) * SLOTS];
  for (int s = 0; s < slot_count(&k->scope); s++) {
    if (k->scope.role == WG_EXPR_COMBINE) *(s ? &v.b : &v.a) = in[s];
    else if (k->scope.role == WG_EXPR_FINAL) v.r = in[s];
    else v.inputs[s] = in[s];
  }
  memcpy(v.params, k->params, sizeof v.params);
  v.i = (int64_t)((uint64_t)k->i_base + (uint64_t)j);
  v.n = k->n;
  return v;
}

/* --- the source of one kernel -------------------------------------------- */

static const char *const prologue =
  "template <class T> __device__ __forceinline__ T wg_in(unsigned long long b);\n"
  "template <> __device__ __forceinline__ bool wg_in<bool>(unsigned long long b) { return b != 0; }\n"
  "template <> __device__ __forceinline__ int wg_in<int>(unsigned long long b) { return (int)(unsigned)b; }\n"
  "template <> __device__ __forceinline__ unsigned wg_in<unsigned>(unsigned long long b) { return (unsigned)b; }\n"
  "template <> __device__ __forceinline__ long long wg_in<long long>(unsigned long long b) { return (long long)b; }\n"
  "template <> __device__ __forceinline__ unsigned long long wg_in<unsigned long long>(unsigned long long b) { return b; }\n"
  "template <> __device__ __forceinline__ float wg_in<float>(unsigned long long b) { return __uint_as_float((unsigned)b); }\n"
  "template <> __device__ __forceinline__ double wg_in<double>(unsigned long long b) { return __longlong_as_double((long long)b); }\n"
  "__device__ __forceinline__ unsigned long long wg_out(bool v) { return v ? 1ULL : 0ULL; }\n"
  "__device__ __forceinline__ unsigned long long wg_out(int v) { return (unsigned)v; }\n"
  "__device__ __forceinline__ unsigned long long wg_out(unsigned v) { return v; }\n"
  "__device__ __forceinline__ unsigned long long wg_out(long long v) { return (unsigned long long)v; }\n"
  "__device__ __forceinline__ unsigned long long wg_out(unsigned long long v) { return v; }\n"
  "__device__ __forceinline__ unsigned long long wg_out(float v) { return __float_as_uint(v); }\n"
  "__device__ __forceinline__ unsigned long long wg_out(double v) { return (unsigned long long)__double_as_longlong(v); }\n";

/* WARPGEN_EXPR_DUMP=DIR writes each kernel's source to DIR/NAME.cu, to
 * study a failure with the disassembler (a replayed seed makes the same
 * kernels). */
static void dump_source(const char *name, const wg_buf *src) {
  const char *dir = getenv("WARPGEN_EXPR_DUMP");
  if (!dir || !*dir || src->failed) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.cu", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) return;
  fwrite(src->data, 1, src->len, f);
  fclose(f);
}

static void kernel_source(const run *r, int kernel, wg_buf *src) {
  wg_buf_puts(src, wg_expr_helpers());
  wg_buf_puts(src, prologue);
  int first = kernel * PER_KERNEL, last = first + PER_KERNEL;
  if (last > r->count) last = r->count;
  for (int c = first; c < last; c++) {
    const case_ *k = &r->cases[c];
    const wg_expr_scope *sc = &k->scope;
    wg_buf_printf(src, "static __device__ __forceinline__ %s wg_e%d(",
                  wg_vt_ctype(wg_expr_type(k->e)), c - first);
    for (int s = 0; s < slot_count(sc); s++)
      wg_buf_printf(src, "%s wg_%s, ", wg_vt_ctype(slot_type(sc, s)), slot_name(sc, s));
    for (int p = 0; p < sc->nparams; p++)
      wg_buf_printf(src, "%s wg_p%d, ", wg_vt_ctype(sc->params[p]), p);
    wg_buf_puts(src, "long long wg_i, long long wg_n) {\n  return ");
    wg_expr_render(k->e, src);
    wg_buf_puts(src, ";\n}\n");
  }
  wg_buf_puts(src,
              "extern \"C\" __global__ void wg_expr_batch(const unsigned long long *in,\n"
              "    const unsigned long long *params, const long long *meta,\n"
              "    unsigned long long *out, long long count) {\n"
              "  long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
              "  if (j >= count) return;\n");
  for (int c = first; c < last; c++) {
    const case_ *k = &r->cases[c];
    const wg_expr_scope *sc = &k->scope;
    int local = c - first;
    wg_buf_printf(src, "  { const unsigned long long *v = in + (%dLL * count + j) * %d, *p = params + %d;\n"
                  "    long long i = (long long)((unsigned long long)meta[%d] + (unsigned long long)j);\n"
                  "    out[%dLL * count + j] = wg_out(wg_e%d(",
                  local, SLOTS, local * 8, local * 2, local, local);
    for (int s = 0; s < slot_count(sc); s++)
      wg_buf_printf(src, "wg_in<%s>(v[%d]), ", wg_vt_ctype(slot_type(sc, s)), s);
    for (int p = 0; p < sc->nparams; p++)
      wg_buf_printf(src, "wg_in<%s>(p[%d]), ", wg_vt_ctype(sc->params[p]), p);
    wg_buf_printf(src, "i, meta[%d])); }\n", local * 2 + 1);
  }
  wg_buf_puts(src, "}\n");
}

/* --- making the cases ---------------------------------------------------- */

static void make_cases(run *r, uint64_t seed, int count) {
  r->count = count;
  r->cases = calloc((size_t)count, sizeof *r->cases);
  ck_assert(r->cases);
  uint64_t rng = seed;
  static char text[WG_EXPR_MAX_LEN];
  static const int64_t i_bases[] = {0, 2147483647 - ELEMENTS / 2, INT64_MAX - ELEMENTS / 2,
                                    -ELEMENTS / 2, 4294967296 - 7};
  for (int c = 0; c < count; c++) {
    case_ *k = &r->cases[c];
    size_t len = 0;
    /* a text that parses (the generator nearly always gives one) and
     * reads at least one variable, else the outputs say little */
    for (int tries = 0;; tries++) {
      wg_gen_scope(&rng, &k->scope);
      len = wg_gen_expr(&rng, &k->scope, 4 + (int)(wg_gen_next(&rng) % 5), text, sizeof text);
      if (!len || wg_expr_parse(NULL, &k->e, text, len, &k->scope) != WG_OK) continue;
      if (wg_expr_uses(k->e) || tries > 20) break;
      wg_expr_free(k->e);
    }
    wg_buf b = {0};
    wg_expr_format(k->e, &b);
    ck_assert(!b.failed);
    k->canon = b.data;
    wg_expr_values v;
    wg_gen_values(&rng, &k->scope, &v);
    memcpy(k->params, v.params, sizeof k->params);
    k->n = v.n;
    uint64_t pick = wg_gen_next(&rng) % 8;
    k->i_base = pick < 5 ? i_bases[pick] : v.i;
  }
}

/* Inputs: fresh values per element, in the slots of each case's role. */
static void make_inputs(run *r, uint64_t seed) {
  size_t words = (size_t)r->count * ELEMENTS * SLOTS;
  r->inputs = calloc(words, sizeof *r->inputs);
  r->in = calloc(words, sizeof *r->in);
  r->params = calloc((size_t)r->count * 8, sizeof *r->params);
  r->meta = calloc((size_t)r->count * 2, sizeof *r->meta);
  r->out = malloc((size_t)r->count * ELEMENTS * sizeof *r->out);
  ck_assert(r->inputs && r->in && r->params && r->meta && r->out);
  uint64_t rng = seed ^ 0x5eed;
  for (int c = 0; c < r->count; c++) {
    const case_ *k = &r->cases[c];
    for (int p = 0; p < 8; p++) r->params[(size_t)c * 8 + p] = encode(k->params[p]);
    r->meta[(size_t)c * 2] = (uint64_t)k->i_base;
    r->meta[(size_t)c * 2 + 1] = (uint64_t)k->n;
    for (size_t j = 0; j < ELEMENTS; j++)
      for (int s = 0; s < slot_count(&k->scope); s++) {
        size_t at = ((size_t)c * ELEMENTS + j) * SLOTS + (size_t)s;
        r->inputs[at] = wg_gen_value(&rng, slot_type(&k->scope, s));
        r->in[at] = encode(r->inputs[at]);
      }
  }
}

/* --- compiling, many kernels at once ------------------------------------- */

static int next_job(run *r) {
  pthread_mutex_lock(&r->lock);
  int job = r->next++;
  pthread_mutex_unlock(&r->lock);
  return job;
}

static void *compile_worker(void *arg) {
  run *r = arg;
  wg_context *ctx = NULL;
  int made = wg_context_create(&ctx, NULL);
  for (int k; (k = next_job(r)) < kernel_count(r);) {
    if (made != WG_OK) {
      r->errors[k] = strdup("no context to compile with");
      continue;
    }
    wg_buf src = {0};
    kernel_source(r, k, &src);
    char name[32];
    snprintf(name, sizeof name, "wg_expr_batch_%d", k);
    dump_source(name, &src);
    if (src.failed || wg_compile(ctx, &r->bins[k], src.data, name, r->arch) != WG_OK) {
      char *msg = malloc(strlen(wg_errmsg(ctx)) + 64);
      if (msg) sprintf(msg, "kernel %d: %s", k, wg_errmsg(ctx));
      r->errors[k] = msg;
    }
    wg_buf_free(&src);
  }
  wg_context_destroy(ctx);
  return NULL;
}

/* Runs worker on min(cores, jobs) threads, the caller's among them. */
static void on_threads(run *r, int jobs, void *(*worker)(void *)) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int threads = cores < 1 ? 1 : cores > 32 ? 32 : (int)cores;
  if (threads > jobs) threads = jobs < 1 ? 1 : jobs;
  pthread_t ids[32];
  bool started[32] = {false};
  r->next = 0;
  for (int t = 1; t < threads; t++) started[t] = pthread_create(&ids[t], NULL, worker, r) == 0;
  worker(r);
  for (int t = 1; t < threads; t++)
    if (started[t]) pthread_join(ids[t], NULL);
}

static void compile_all(run *r, int kernels) {
  r->bins = calloc((size_t)kernels, sizeof *r->bins);
  r->errors = calloc((size_t)kernels, sizeof *r->errors);
  ck_assert(r->bins && r->errors);
  on_threads(r, kernels, compile_worker);
  for (int k = 0; k < kernels; k++)
    ck_assert_msg(!r->errors[k] && r->bins[k].cubin_len, "%s",
                  r->errors[k] ? r->errors[k] : "no cubin");
}

/* --- checking ------------------------------------------------------------ */

static void print_failure(run *r, int c, int64_t j, const wg_expr_values *v, wg_value want,
                          double tol, uint64_t got_word) {
  const case_ *k = &r->cases[c];
  char a[64], b[64], line[2048];
  size_t used = 0;
  unsigned uses = wg_expr_uses(k->e);
  for (int s = 0; s < slot_count(&k->scope); s++) {
    const char *name = slot_name(&k->scope, s);
    wg_value x = k->scope.role == WG_EXPR_COMBINE ? (s ? v->b : v->a)
                 : k->scope.role == WG_EXPR_FINAL ? v->r : v->inputs[s];
    used += (size_t)snprintf(line + used, sizeof line - used, "%s=%s ", name,
                             wg_value_show(a, sizeof a, x));
  }
  for (int p = 0; p < k->scope.nparams && used < sizeof line; p++)
    if (uses & WG_EXPR_USES_PARAM(p))
      used += (size_t)snprintf(line + used, sizeof line - used, "p%d=%s ", p,
                               wg_value_show(a, sizeof a, v->params[p]));
  if (used < sizeof line)
    snprintf(line + used, sizeof line - used, "i=%" PRId64 " n=%" PRId64, v->i, v->n);
  wg_value got = decode(want.type, got_word);
  printf("FAIL %s expression (case %d, element %" PRId64 "): %s\n  with %s\n"
         "  expected %s (tolerance %g), got %s (word 0x%016" PRIx64 ")\n",
         wg_expr_role_name(k->scope.role), c, j, k->canon, line,
         wg_value_show(a, sizeof a, want), tol, wg_value_show(b, sizeof b, got), got_word);
}

static void *check_worker(void *arg) {
  run *r = arg;
  for (int c; (c = next_job(r)) < r->count;) {
    const case_ *k = &r->cases[c];
    wg_value_type t = wg_expr_type(k->e);
    for (int64_t j = 0; j < ELEMENTS; j++) {
      wg_expr_values v = values_of(r, c, j);
      wg_value want;
      double tol;
      if (wg_expr_eval_bounded(NULL, k->e, &v, &want, &tol) != WG_OK) {
        r->failed[c]++;
        continue;
      }
      uint64_t word = r->out[(size_t)c * ELEMENTS + (size_t)j];
      /* narrow results must come back zero-extended: no poison left */
      bool ok = encode(decode(t, word)) == word && wg_value_within(want, tol, decode(t, word));
      if (isinf(tol)) r->unknown[c]++;
      else if (tol > 0) r->bounded[c]++;
      else r->exact[c]++;
      if (ok) continue;
      r->failed[c]++;
      pthread_mutex_lock(&r->lock);
      bool show = r->printed < MAX_PRINTED && r->failed[c] <= 2;
      if (show) {
        r->printed++;
        print_failure(r, c, j, &v, want, tol, word);
      }
      pthread_mutex_unlock(&r->lock);
    }
  }
  return NULL;
}

/* --- the device side ----------------------------------------------------- */

static void launch_all(wg_context *ctx, run *r) {
  size_t n_in = (size_t)r->count * ELEMENTS * SLOTS, n_out = (size_t)r->count * ELEMENTS;
  uint64_t d_in, d_out, d_params, d_meta;
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_in, n_in * 8));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_out, n_out * 8));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_params, (size_t)r->count * 8 * 8));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_meta, (size_t)r->count * 2 * 8));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_in, r->in, n_in * 8, NULL));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_params, r->params, (size_t)r->count * 64, NULL));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_meta, r->meta, (size_t)r->count * 16, NULL));
  WG_TEST_OK(ctx, wg_memset_d8(ctx, d_out, 0xA5, n_out * 8, NULL)); /* poison */

  wg_device_scope scope;
  const wg_driver_api *api;
  WG_TEST_OK(ctx, wg_device_enter(ctx, &scope, &api));
  for (int k = 0; k < kernel_count(r); k++) {
    CUmodule module;
    CUfunction fn;
    int rc = wg_cuda_status(ctx, api->ModuleLoadData(&module, r->bins[k].cubin), "cuModuleLoadData");
    if (rc == WG_OK)
      rc = wg_cuda_status(ctx, api->ModuleGetFunction(&fn, module, "wg_expr_batch"),
                          "cuModuleGetFunction");
    if (rc == WG_OK) {
      size_t first = (size_t)k * PER_KERNEL;
      CUdeviceptr in = d_in + first * ELEMENTS * SLOTS * 8, out = d_out + first * ELEMENTS * 8,
                  params = d_params + first * 64, meta = d_meta + first * 16;
      long long count = ELEMENTS;
      void *args[] = {&in, &params, &meta, &out, &count};
      rc = wg_cuda_status(ctx, api->LaunchKernel(fn, (ELEMENTS + 127) / 128, 1, 1, 128, 1, 1, 0,
                                                 NULL, args, NULL), "cuLaunchKernel");
      if (rc == WG_OK) rc = wg_cuda_status(ctx, api->CtxSynchronize(), "cuCtxSynchronize");
      api->ModuleUnload(module);
    }
    if (rc != WG_OK) wg_device_leave(ctx, &scope);
    ck_assert_msg(rc == WG_OK, "kernel %d: %s", k, wg_errmsg(ctx));
  }
  wg_device_leave(ctx, &scope);
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, r->out, d_out, n_out * 8, NULL));
  wg_mem_free(ctx, d_in);
  wg_mem_free(ctx, d_out);
  wg_mem_free(ctx, d_params);
  wg_mem_free(ctx, d_meta);
}

static int expression_count(void) {
  const char *env = getenv("WARPGEN_EXPR_GPU_COUNT");
  int n = env && *env ? atoi(env) : 512;
  return n < 1 ? 1 : n > 100000 ? 100000 : n;
}

static void run_free(run *r) {
  for (int c = 0; c < r->count; c++) {
    wg_expr_free(r->cases[c].e);
    free(r->cases[c].canon);
  }
  for (int k = 0; r->bins && k < kernel_count(r); k++) {
    wg_binary_free(&r->bins[k]);
    free(r->errors[k]);
  }
  free(r->bins);
  free(r->errors);
  free(r->cases);
  free(r->inputs);
  free(r->in);
  free(r->out);
  free(r->params);
  free(r->meta);
  free(r->exact);
  free(r->bounded);
  free(r->unknown);
  free(r->failed);
}

/* Compares every output with the CPU evaluator, prints the counts and
 * the first failures, frees the run and fails the test on any failure. */
static void check_and_report(run *r, const char *where, double start, double t_gen,
                             double t_compile, double t_launch) {
  r->exact = calloc((size_t)r->count, 8);
  r->bounded = calloc((size_t)r->count, 8);
  r->unknown = calloc((size_t)r->count, 8);
  r->failed = calloc((size_t)r->count, 8);
  ck_assert(r->exact && r->bounded && r->unknown && r->failed);
  on_threads(r, r->count, check_worker);
  uint64_t exact = 0, bounded = 0, unknown = 0, failed = 0, failing_cases = 0;
  for (int c = 0; c < r->count; c++) {
    exact += r->exact[c];
    bounded += r->bounded[c];
    unknown += r->unknown[c];
    failed += r->failed[c];
    failing_cases += r->failed[c] != 0;
  }
  printf("expr-gpu (%s): %d expressions in %d kernels, %" PRIu64 " outputs: %" PRIu64
         " exact, %" PRIu64 " within a tolerance, %" PRIu64 " not determined; %" PRIu64
         " failed in %" PRIu64 " expressions; generate %.1f s, compile %.1f s, run %.1f s, "
         "check %.1f s\n",
         where, r->count, kernel_count(r), (uint64_t)r->count * ELEMENTS, exact, bounded,
         unknown, failed, failing_cases, t_gen - start, t_compile - t_gen, t_launch - t_compile,
         wg_test_now() - t_launch);
  fflush(stdout);
  run_free(r);
  ck_assert_msg(failed == 0, "%" PRIu64 " outputs differ from the CPU evaluator (printed above)",
                failed);
  /* a check that could not fail would be vacuous: most outputs must be
   * decided */
  ck_assert_msg(unknown * 4 < exact + bounded, "too many undetermined outputs");
}

START_TEST(random_expressions_on_gpu) {
  double start = wg_test_now();
  wg_context *ctx = wg_test_context();
  wg_device_info info;
  WG_TEST_OK(ctx, wg_device_get_info(ctx, &info));
  run r = {.arch = info.arch, .lock = PTHREAD_MUTEX_INITIALIZER};
  make_cases(&r, wg_test_seed(), expression_count());
  make_inputs(&r, wg_test_seed());
  double t_gen = wg_test_now();
  compile_all(&r, kernel_count(&r));
  double t_compile = wg_test_now();
  launch_all(ctx, &r);
  double t_launch = wg_test_now();
  check_and_report(&r, "GPU", start, t_gen, t_compile, t_launch);
  wg_context_destroy(ctx);
}
END_TEST

/* Generates and compiles compile_only_kernels kernels for sm_90, no GPU
 * needed. */
static int compile_only_kernels;
START_TEST(compile_only) {
  int kernels = compile_only_kernels;
  run r = {.arch = 90, .lock = PTHREAD_MUTEX_INITIALIZER};
  make_cases(&r, wg_test_seed(), kernels * PER_KERNEL);
  double start = wg_test_now();
  r.bins = calloc((size_t)kernels, sizeof *r.bins);
  r.errors = calloc((size_t)kernels, sizeof *r.errors);
  ck_assert(r.bins && r.errors);
  on_threads(&r, kernels, compile_worker);
  int bad = 0;
  for (int k = 0; k < kernels; k++)
    if (!r.errors[k] && !r.bins[k].cubin_len) r.errors[k] = strdup("no cubin");
  for (int k = 0; k < kernels; k++)
    if (r.errors[k]) {
      printf("%s\n", r.errors[k]);
      bad++;
    }
  size_t bytes = 0;
  for (int k = 0; k < kernels; k++) bytes += r.bins[k].cubin_len;
  printf("expr-gpu: compiled %d kernels of %d expressions (%zu bytes of cubin) in %.1f s, "
         "%d failed\n", kernels, PER_KERNEL, bytes, wg_test_now() - start, bad);
  const char *dump = getenv("WARPGEN_EXPR_GPU_DUMP"); /* a file for kernel 0's source */
  FILE *f = dump && *dump ? fopen(dump, "w") : NULL;
  if (f) {
    wg_buf src = {0};
    kernel_source(&r, 0, &src);
    fputs(src.data ? src.data : "", f);
    fclose(f);
    wg_buf_free(&src);
  }
  run_free(&r);
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* --- the same kernels on the host ---------------------------------------- */

/* The CUDA the kernels use, for a host C++ compiler: conversion intrinsics
 * that truncate, saturate and send NaN to 0, bit casts, rsqrt, the thread
 * indexes. With the host's libm for the math functions, a difference from
 * the evaluator beyond its tolerance is a bug in one of the two (or in
 * the renderer), found without a GPU. */
static const char *const host_shim =
  "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
  "#define __device__\n#define __global__\n#define __forceinline__ inline\n"
  "struct emu_dim { unsigned x, y, z; };\n"
  "static emu_dim blockIdx, blockDim, threadIdx;\n"
  "static float __uint_as_float(unsigned b) { float f; memcpy(&f, &b, 4); return f; }\n"
  "static unsigned __float_as_uint(float f) { unsigned b; memcpy(&b, &f, 4); return b; }\n"
  "static double __longlong_as_double(long long b) { double d; memcpy(&d, &b, 8); return d; }\n"
  "static long long __double_as_longlong(double d) { long long b; memcpy(&b, &d, 8); return b; }\n"
  "#define EMU_SAT(NAME, T, LO, HI) static T NAME(double d) { if (d != d) return 0;"
  " d = trunc(d); if (d <= (double)(LO)) return (T)(LO); if (d >= (double)(HI)) return (T)(HI);"
  " return (T)d; }\n"
  "EMU_SAT(emu_i32, int, -2147483648.0, 2147483647.0)\n"
  "EMU_SAT(emu_u32, unsigned, 0.0, 4294967295.0)\n"
  "static long long emu_i64(double d) { if (d != d) return 0; d = trunc(d);"
  " if (d <= -0x1p63) return (-9223372036854775807LL - 1); if (d >= 0x1p63) return 9223372036854775807LL;"
  " return (long long)d; }\n"
  "static unsigned long long emu_u64(double d) { if (d != d) return 0; d = trunc(d);"
  " if (d <= 0) return 0; if (d >= 0x1p64) return 18446744073709551615ULL;"
  " return (unsigned long long)d; }\n"
  "#define __float2int_rz emu_i32\n#define __double2int_rz emu_i32\n"
  "#define __float2uint_rz emu_u32\n#define __double2uint_rz emu_u32\n"
  "#define __float2ll_rz emu_i64\n#define __double2ll_rz emu_i64\n"
  "#define __float2ull_rz emu_u64\n#define __double2ull_rz emu_u64\n"
  "static float rsqrtf(float x) { return 1.0f / sqrtf(x); }\n"
  "static double rsqrt(double x) { return 1.0 / sqrt(x); }\n"
  /* CUDA's pow(x, +-0) is 1 for every x, a signaling NaN too (as the
   * evaluator's, which widens x and so quiets it); glibc's is NaN for a
   * signaling NaN (seed 0x066774036bd8cd1b: pow(z, 0) with z the bits
   * 0xff806852). */
  "static float emu_powf(float x, float y) { return y == 0 ? 1.0f : powf(x, y); }\n"
  "static double emu_pow(double x, double y) { return y == 0 ? 1.0 : pow(x, y); }\n"
  "#define powf emu_powf\n#define pow emu_pow\n";

static const char *const host_main =
  "static void *emu_read(const char *path, size_t *size) {\n"
  "  FILE *f = fopen(path, \"rb\"); if (!f) exit(2);\n"
  "  fseek(f, 0, SEEK_END); *size = (size_t)ftell(f); fseek(f, 0, SEEK_SET);\n"
  "  void *p = malloc(*size + 8); if (!p || fread(p, 1, *size, f) != *size) exit(2);\n"
  "  fclose(f); return p; }\n"
  "int main(int argc, char **argv) {\n"
  "  if (argc != 6) return 2;\n"
  "  size_t a, b, c; long long count = atoll(argv[5]);\n"
  "  unsigned long long *in = (unsigned long long *)emu_read(argv[1], &a);\n"
  "  unsigned long long *params = (unsigned long long *)emu_read(argv[2], &b);\n"
  "  long long *meta = (long long *)emu_read(argv[3], &c);\n"
  "  unsigned long long *out = (unsigned long long *)malloc(40 * count * 8);\n"
  "  memset(out, 0xA5, 40 * count * 8);\n"
  "  blockDim.x = 128;\n"
  "  for (long long j = 0; j < count; j++) {\n"
  "    blockIdx.x = (unsigned)(j / 128); threadIdx.x = (unsigned)(j % 128);\n"
  "    wg_expr_batch(in, params, meta, out, count);\n"
  "  }\n"
  "  FILE *f = fopen(argv[4], \"wb\"); if (!f) return 2;\n"
  "  fwrite(out, 8, 32 * count, f); fclose(f); return 0; }\n";

static bool write_file(const char *path, const void *data, size_t bytes) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, bytes, f) == bytes;
  return fclose(f) == 0 && ok;
}

/* Builds kernel k with the host compiler and runs it over its inputs,
 * leaving its outputs in r->out. */
static void emulate_kernel(run *r, int k, const char *dir, const char *cxx) {
  char path[1024], cmd[4096];
  wg_buf src = {0};
  wg_buf_puts(&src, host_shim);
  kernel_source(r, k, &src);
  wg_buf_puts(&src, host_main);
  ck_assert(!src.failed);
  snprintf(path, sizeof path, "%s/k%d.cc", dir, k);
  ck_assert(write_file(path, src.data, src.len));
  wg_buf_free(&src);
  size_t first = (size_t)k * PER_KERNEL;
  size_t cases = (size_t)r->count - first < PER_KERNEL ? (size_t)r->count - first : PER_KERNEL;
  snprintf(path, sizeof path, "%s/in%d", dir, k);
  ck_assert(write_file(path, r->in + first * ELEMENTS * SLOTS, cases * ELEMENTS * SLOTS * 8));
  snprintf(path, sizeof path, "%s/params%d", dir, k);
  ck_assert(write_file(path, r->params + first * 8, cases * 64));
  snprintf(path, sizeof path, "%s/meta%d", dir, k);
  ck_assert(write_file(path, r->meta + first * 2, cases * 16));
  /* no contraction, no fast math: the host computes step by step */
  snprintf(cmd, sizeof cmd,
           "%s -std=c++17 -O1 -ffp-contract=off -w -o %s/k%d %s/k%d.cc -lm && "
           "%s/k%d %s/in%d %s/params%d %s/meta%d %s/out%d %d",
           cxx, dir, k, dir, k, dir, k, dir, k, dir, k, dir, k, dir, k, ELEMENTS);
  ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
  snprintf(path, sizeof path, "%s/out%d", dir, k);
  FILE *f = fopen(path, "rb");
  ck_assert(f);
  ck_assert(fread(r->out + first * ELEMENTS, 8, cases * ELEMENTS, f) == cases * ELEMENTS);
  fclose(f);
}

static int emulate_kernels;
/* clang++: g++ folds 0.0 - (double)b into -(double)b, which is -0 where
 * the GPU gives +0 */
static const char *emulate_cxx = "clang++";

START_TEST(emulated_on_host) {
  double start = wg_test_now();
  run r = {.arch = 90, .lock = PTHREAD_MUTEX_INITIALIZER};
  make_cases(&r, wg_test_seed(), emulate_kernels * PER_KERNEL);
  make_inputs(&r, wg_test_seed());
  char *dir = wg_test_tmpdir();
  ck_assert(dir);
  double t_gen = wg_test_now();
  for (int k = 0; k < kernel_count(&r); k++) emulate_kernel(&r, k, dir, emulate_cxx);
  double t_run = wg_test_now();
  wg_test_rmtree(dir);
  free(dir);
  check_and_report(&r, "host", start, t_gen, t_run, t_run);
}
END_TEST

int main(int argc, char **argv) {
  bool only_compile = argc > 1 && strcmp(argv[1], "--compile-only") == 0;
  bool emulate = argc > 1 && strcmp(argv[1], "--emulate") == 0;
  compile_only_kernels = emulate_kernels = argc > 2 ? atoi(argv[2]) : 1;
  if (compile_only_kernels < 1) compile_only_kernels = emulate_kernels = 1;
  if (argc > 3) emulate_cxx = argv[3];
  if (only_compile || emulate) {
    printf("expr-gpu: base seed 0x%016" PRIx64 " (WARPGEN_TEST_SEED=0x%016" PRIx64
           " replays this run)\n", wg_test_seed(), wg_test_seed());
    fflush(stdout);
  } else if (!wg_test_gpu_begin("expr-gpu", NULL)) {
    return 77;
  }
  Suite *s = suite_create("expr-gpu");
  TCase *tc = tcase_create("renderer");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, only_compile ? compile_only : emulate ? emulated_on_host
                                                         : random_expressions_on_gpu);
  suite_add_tcase(s, tc);
  return wg_test_run_suite(s);
}
