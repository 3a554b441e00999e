/*
 * support.c - shared helpers of the Check suites (see support.h).
 */
#include "support.h"

#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

wg_context *wg_test_context(void) {
  wg_context *ctx = NULL;
  int rc = wg_context_create(&ctx, NULL);
  ck_assert_msg(rc == WG_OK, "wg_context_create: %s", wg_strerror(rc));
  return ctx;
}

uint64_t wg_test_seed(void) {
  static uint64_t seed;
  static bool chosen;
  if (!chosen) {
    const char *env = getenv("WARPGEN_TEST_SEED");
    seed = env && *env ? strtoull(env, NULL, 0) : wg_oracle_fresh_seed();
    chosen = true;
  }
  return seed;
}

/* What the probe child reports through its pipe. */
typedef struct probe_result {
  int status;
  int arch;
  char why[256];
} probe_result;

bool wg_test_has_gpu(char *why, size_t why_size, int *arch) {
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(why, why_size, "pipe: %s", strerror(errno));
    return false;
  }
  fflush(NULL); /* the child must not repeat buffered output */
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(why, why_size, "fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    probe_result r = {0};
    wg_context *ctx = NULL;
    r.status = wg_context_create(&ctx, NULL);
    wg_device_info info;
    if (r.status == WG_OK)
      r.status = wg_device_get_info(ctx, &info);
    if (r.status == WG_OK)
      r.arch = info.arch;
    else
      snprintf(r.why, sizeof r.why, "%s", ctx ? wg_errmsg(ctx) : "no context");
    wg_context_destroy(ctx);
    ssize_t unused = write(fds[1], &r, sizeof r);
    (void)unused;
    _exit(0);
  }
  close(fds[1]);
  probe_result r = {.status = WG_EINVAL};
  ssize_t got = read(fds[0], &r, sizeof r);
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (got != (ssize_t)sizeof r) {
    snprintf(why, why_size, "the GPU probe process died (status %d)", wstatus);
    return false;
  }
  if (r.status != WG_OK) {
    snprintf(why, why_size, "%s: %s", wg_strerror(r.status), r.why);
    return false;
  }
  if (arch)
    *arch = r.arch;
  return true;
}

bool wg_test_gpu_begin(const char *name, int *arch) {
  char why[512];
  int found = 0;
  if (!wg_test_has_gpu(why, sizeof why, &found)) {
    printf("%s: skipped: %s\n", name, why);
    return false;
  }
  if (arch) *arch = found;
  printf("%s: device sm_%d, base seed 0x%016" PRIx64 " (WARPGEN_TEST_SEED=0x%016" PRIx64
         " replays this run)\n", name, found, wg_test_seed(), wg_test_seed());
  fflush(stdout); /* before Check forks */
  return true;
}

int wg_test_run_suite(Suite *s) {
  SRunner *runner = srunner_create(s);
  srunner_run_all(runner, CK_ENV);
  const int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed ? 1 : 0;
}

char *wg_test_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base)
    base = "/tmp";
  size_t len = strlen(base) + 32;
  char *path = malloc(len);
  if (!path)
    return NULL;
  snprintf(path, len, "%s/warpgen-test-XXXXXX", base);
  if (!mkdtemp(path)) {
    free(path);
    return NULL;
  }
  return path;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

void wg_test_rmtree(const char *path) {
  if (path)
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

double wg_test_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void wg_test_nvrtc_sample(unsigned *every, unsigned *offset) {
  const char *every_text = getenv("WARPGEN_NVRTC_EVERY");
  const char *offset_text = getenv("WARPGEN_NVRTC_OFFSET");
  *every = every_text && atoi(every_text) > 0 ? (unsigned)atoi(every_text) : 1u;
  const unsigned long long at = offset_text && atoi(offset_text) >= 0
                                    ? (unsigned long long)atoi(offset_text)
                                    : (unsigned long long)(time(NULL) / 86400);
  *offset = (unsigned)(at % *every);
}

/* --- work split over threads ---------------------------------------------- */

#define MAX_THREADS 32
/* Below this many elements one thread is quicker than starting more. */
#define PARALLEL_MIN (UINT64_C(1) << 16)

typedef struct slice {
  const wg_spec *spec;
  void *in;
  const void *out;
  uint64_t n, seed, begin, end; /* elements for fill, groups for check */
  wg_oracle_report report;
} slice;

static void *fill_slice(void *arg) {
  slice *s = arg;
  wg_oracle_warp_fill(s->spec, s->in, s->begin, s->end, s->seed);
  return NULL;
}

static void *check_slice(void *arg) {
  slice *s = arg;
  wg_oracle_warp_check(&s->report, s->spec, s->in, s->n, s->out, s->begin, s->end);
  return NULL;
}

/* wg_test_on_cores: worker w of n runs fn(arg, w, n). */
typedef struct core_job {
  void (*fn)(void *arg, int worker, int workers);
  void *arg;
  int worker, workers;
} core_job;

static void *core_job_run(void *p) {
  core_job *j = p;
  j->fn(j->arg, j->worker, j->workers);
  return NULL;
}

int wg_test_on_cores(int most, void (*fn)(void *arg, int worker, int workers), void *arg) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int n = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;
  if (most < n) n = most < 1 ? 1 : most;
  core_job jobs[MAX_THREADS];
  pthread_t ids[MAX_THREADS];
  bool started[MAX_THREADS] = {false};
  for (int w = 0; w < n; w++) {
    jobs[w] = (core_job){fn, arg, w, n};
    if (w > 0) started[w] = pthread_create(&ids[w], NULL, core_job_run, &jobs[w]) == 0;
  }
  fn(arg, 0, n);
  for (int w = 1; w < n; w++) {
    if (started[w])
      pthread_join(ids[w], NULL);
    else
      fn(arg, w, n); /* a thread that did not start: its share runs here */
  }
  return n;
}

void wg_test_share(uint64_t total, int worker, int workers, uint64_t *begin, uint64_t *end) {
  const uint64_t per = (total + (uint64_t)workers - 1) / (uint64_t)workers;
  *begin = per * (uint64_t)worker < total ? per * (uint64_t)worker : total;
  *end = per * (uint64_t)(worker + 1) < total ? per * (uint64_t)(worker + 1) : total;
}

/* split's worker: slice w of the slices, its share of [0, total). */
typedef struct slicing {
  slice *slices;
  slice proto; /* slices[0] as the caller set it, copied before any worker starts */
  uint64_t total;
  void *(*fn)(void *);
} slicing;

static void slice_worker(void *arg, int w, int workers) {
  slicing *c = arg;
  slice *s = &c->slices[w];
  *s = c->proto;
  wg_oracle_report_init(&s->report);
  wg_test_share(c->total, w, workers, &s->begin, &s->end);
  c->fn(s);
}

/* Runs fn over [0, total) cut into one slice a core (wg_test_on_cores);
 * one slice where total units of `unit` elements are too few to share. */
static void split(slice *slices, int *count, uint64_t total, uint64_t unit,
                  void *(*fn)(void *)) {
  slicing c = {slices, slices[0], total, fn};
  *count = wg_test_on_cores(total * unit < PARALLEL_MIN ? 1 : MAX_THREADS, slice_worker, &c);
}

bool wg_test_large_enabled(void) {
  const char *v = getenv("WARPGEN_GPU_LARGE");
  return !(v && strcmp(v, "0") == 0);
}

bool wg_test_device_holds(wg_context *ctx, uint64_t bytes, const char *what) {
  wg_device_info info;
  WG_TEST_OK(ctx, wg_device_get_info(ctx, &info));
  if (info.memory_bytes >= bytes + (2ull << 30)) return true;
  printf("%s skipped: %.1f GB of device memory\n", what, (double)info.memory_bytes / 1e9);
  return false;
}

uint16_t wg_test_f16_sign(uint64_t i, uint64_t seed) {
  static const uint16_t bits[3] = {0xbc00, 0x0000, 0x3c00}; /* -1, 0, 1 */
  uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
  h = (h ^ h >> 31) * 0xbf58476d1ce4e5b9ull;
  return bits[(h ^ h >> 29) % 3];
}

void wg_test_fill(const wg_spec *spec, void *in, uint64_t n, uint64_t seed) {
  slice slices[MAX_THREADS] = {{spec, in, NULL, n, seed, 0, 0, {0}}};
  int count = 0;
  split(slices, &count, n, 1, fill_slice);
}

void wg_test_check(wg_oracle_report *report, const wg_spec *spec, const void *in,
                   uint64_t n, const void *out) {
  slice slices[MAX_THREADS] = {{spec, (void *)(uintptr_t)in, out, n, 0, 0, 0,
                                {0}}};
  int count = 0;
  split(slices, &count, wg_oracle_group_count(spec, n), (uint64_t)spec->width,
        check_slice);
  for (int t = 0; t < count; t++)
    wg_oracle_report_merge(report, &slices[t].report);
}

/* --- compiling ahead, in parallel -------------------------------------------- */

typedef struct compile_share {
  const wg_spec *specs;
  size_t count;
} compile_share;

/* Worker w of n compiles specs w, w + n, ... */
static void compile_some(void *arg, int worker, int workers) {
  const compile_share *share = arg;
  wg_context *ctx = NULL;
  if (wg_context_create(&ctx, NULL) != WG_OK)
    return;
  /* Failures are left for the caller's own wg_kernel_get to report. */
  for (size_t i = (size_t)worker; i < share->count; i += (size_t)workers) {
    void *cubin = NULL;
    size_t len = 0;
    if (wg_cubin(ctx, &cubin, &len, &share->specs[i]) == WG_OK)
      wg_free(cubin);
  }
  wg_context_destroy(ctx);
}

static void precompile_here(const wg_spec *specs, size_t count);

/* In a child process: whatever compiling touches (a context, the driver
 * if a path asks the device) stays out of the parent, which Check forks
 * after; a CUDA started before fork() is unusable in the children. The
 * kernels reach the children through the disk cache. */
void wg_test_precompile(const wg_spec *specs, size_t count) {
  fflush(NULL);
  const pid_t pid = fork();
  if (pid == 0) {
    precompile_here(specs, count);
    _exit(0);
  }
  if (pid > 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return;
  }
  precompile_here(specs, count); /* no fork: compile here */
}

static void precompile_here(const wg_spec *specs, size_t count) {
  compile_share share = {specs, count};
  wg_test_on_cores(count > MAX_THREADS ? MAX_THREADS : count ? (int)count : 1, compile_some,
                   &share);
}
