/*
 * cache_bench.c - what the disk cache buys: cold compile, disk hit in a
 * fresh process, in-memory hit, and NVRTC alone on the same source, in one
 * table (medians over several runs).
 *
 *   cache_bench [--runs N] [--spec TEXT] [--dir DIR]
 *
 * "Fresh process" is this program exec'd again (--child), timing from just
 * before wg_context_create to the kernel in hand: a launchable function
 * from wg_kernel_get where a GPU is present, else the cubin in memory from
 * wg_cubin. On a GPU the child first brings the driver up through a context
 * it keeps alive, as a host that already uses CUDA would have done; that
 * time is reported on its own row and is not warpgen's.
 *
 * Not a test: numbers depend on the machine. docs/cache.md has a table.
 */
#include "cache.h"
#include "internal.h"
#include "warpgen.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SPEC "reduce f32 sum width=32 variant=down arch=sm_90"
#define MAX_RUNS 101
#define MEMORY_HIT_CALLS 1000
/* Calls timed one by one for a repeat or a lookup; their median counts. */
#define REPEAT_CALLS 15

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what, wg_context *ctx, int rc) {
  fprintf(stderr, "cache_bench: %s: %s\n", what,
          ctx && *wg_errmsg(ctx) ? wg_errmsg(ctx) : wg_strerror(rc));
  exit(1);
}

static wg_context *context_on(const char *dir) {
  wg_options opt = WG_OPTIONS_INIT;
  opt.cache_dir = dir;
  opt.disk_cache = dir ? 1 : -1;
  wg_context *ctx = NULL;
  int rc = wg_context_create(&ctx, &opt);
  if (rc) die("wg_context_create", NULL, rc);
  return ctx;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct series {
  double v[MAX_RUNS];
  int n;
} series;

static double median(series *s) {
  qsort(s->v, (size_t)s->n, sizeof s->v[0], cmp_double);
  return s->n % 2 ? s->v[s->n / 2]
                  : (s->v[s->n / 2 - 1] + s->v[s->n / 2]) / 2;
}

/* --- the child: one fresh-process measurement ------------------------------ */

/* Spec text to kernel (GPU) or cubin (no GPU) through ctx. */
static void get_once(wg_context *ctx, const char *text, bool gpu) {
  wg_spec spec;
  int rc = wg_spec_parse(ctx, &spec, text);
  if (rc) die("wg_spec_parse", ctx, rc);
  if (gpu) {
    wg_kernel *k;
    rc = wg_kernel_get(ctx, &k, &spec);
    if (rc) die("wg_kernel_get", ctx, rc);
  } else {
    void *cubin;
    size_t len;
    rc = wg_cubin(ctx, &cubin, &len, &spec);
    if (rc) die("wg_cubin", ctx, rc);
    wg_free(cubin);
  }
}

/* Prints "<first ns> <repeat ns> <driver-up ns> <gpu> <disk hits>
 * <compiles>": the first request in this process (context creation
 * included), a repeated request (median), and the time the driver took to
 * come up before any of that. */
static int child_main(const char *dir, const char *text) {
  double t0 = now_ns();
  wg_context *host = context_on(NULL);
  wg_device_info info;
  bool gpu = wg_device_get_info(host, &info) == WG_OK;
  double driver_ns = now_ns() - t0;

  t0 = now_ns();
  wg_context *ctx = context_on(dir);
  get_once(ctx, text, gpu);
  double first_ns = now_ns() - t0;

  /* The repeat: a kernel comes from the context's table (per call over a
   * batch: far too short for the clock alone); without a GPU wg_cubin goes
   * to the disk cache again, timed per call. */
  double repeat_ns;
  if (gpu) {
    t0 = now_ns();
    for (int i = 0; i < MEMORY_HIT_CALLS; i++) get_once(ctx, text, gpu);
    repeat_ns = (now_ns() - t0) / MEMORY_HIT_CALLS;
  } else {
    series calls = {.n = REPEAT_CALLS};
    for (int i = 0; i < calls.n; i++) {
      double s = now_ns();
      get_once(ctx, text, gpu);
      calls.v[i] = now_ns() - s;
    }
    repeat_ns = median(&calls);
  }
  wg_cache_stats st;
  wg_cache_stats_get(ctx, &st);
  printf("%.0f %.0f %.0f %d %llu %llu\n", first_ns, repeat_ns, driver_ns,
         gpu ? 1 : 0, (unsigned long long)st.disk_hits,
         (unsigned long long)st.compiles);
  wg_context_destroy(ctx);
  wg_context_destroy(host);
  return 0;
}

/* --- the parent ------------------------------------------------------------ */

typedef struct child_result {
  double first_ns, repeat_ns, driver_ns;
  int gpu;
  unsigned long long disk_hits, compiles;
} child_result;

static child_result run_child(const char *self, const char *dir,
                              const char *text) {
  int fds[2];
  if (pipe(fds) != 0) die("pipe", NULL, WG_EIO);
  pid_t pid = fork();
  if (pid < 0) die("fork", NULL, WG_EIO);
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execl(self, self, "--child", dir, text, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  FILE *f = fdopen(fds[0], "r");
  child_result r = {0};
  int n = f ? fscanf(f, "%lf %lf %lf %d %llu %llu", &r.first_ns, &r.repeat_ns,
                     &r.driver_ns, &r.gpu, &r.disk_hits, &r.compiles)
            : 0;
  if (f) fclose(f);
  int status;
  waitpid(pid, &status, 0);
  if (n != 6 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    die("the child process failed", NULL, WG_EIO);
  return r;
}

static void print_row(const char *what, series *s) {
  double med = median(s);
  double lo = s->v[0], hi = s->v[s->n - 1];
  const char *unit = "ms";
  double scale = 1e6;
  if (med < 1e6) {
    unit = "us";
    scale = 1e3;
  }
  printf("| %-58s | %10.3f %s | %10.3f | %10.3f |\n", what, med / scale, unit,
         lo / scale, hi / scale);
}

/* NVRTC alone: create, compile with warpgen's options, fetch the cubin. */
static double raw_nvrtc_ns(const char *source, int arch) {
  char options[256];
  wg_compile_options(options, sizeof options, arch);
  const char *argv[16];
  int argc = 0;
  for (char *tok = strtok(options, " "); tok && argc < 16;
       tok = strtok(NULL, " "))
    argv[argc++] = tok;
  double t0 = now_ns();
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source, "bench.cu", 0, NULL, NULL) !=
      NVRTC_SUCCESS)
    die("nvrtcCreateProgram", NULL, WG_ECOMPILE);
  if (nvrtcCompileProgram(prog, argc, argv) != NVRTC_SUCCESS)
    die("nvrtcCompileProgram", NULL, WG_ECOMPILE);
  size_t size = 0;
  nvrtcGetCUBINSize(prog, &size);
  char *cubin = malloc(size);
  if (!cubin || nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS)
    die("nvrtcGetCUBIN", NULL, WG_ECOMPILE);
  double ns = now_ns() - t0;
  free(cubin);
  nvrtcDestroyProgram(&prog);
  return ns;
}

/* The disk cache's own share of a hit: wg_cache_lookup (open, fstat, two
 * reads, checksum, close) with the key artifact.c would use, median of a
 * few calls. Negative when the entry is not where that key says. */
static double lookup_ns(wg_context *cache, const char *source, int arch) {
  char options[256];
  wg_compile_options(options, sizeof options, arch);
  wg_cache_key key =
      wg_cache_key_make(source, options, arch, wg_nvrtc_identity());
  series calls = {.n = REPEAT_CALLS};
  for (int i = 0; i < calls.n; i++) {
    wg_binary bin;
    double t0 = now_ns();
    bool hit = wg_cache_lookup(cache, &key, &bin);
    calls.v[i] = now_ns() - t0;
    wg_binary_free(&bin);
    if (!hit) return -1;
  }
  return median(&calls);
}

static double warm_compile_ns(wg_context *off, const char *text) {
  double t0 = now_ns();
  get_once(off, text, false);
  return now_ns() - t0;
}

static void usage(FILE *f) {
  fprintf(f, "usage: cache_bench [--runs N] [--spec TEXT] [--dir DIR]\n"
             "  --runs N     measurements per row (default 7, at most %d)\n"
             "  --spec TEXT  the kernel (default '%s')\n"
             "  --dir DIR    an empty folder for the cache (default: a new "
             "temporary one, removed at the end)\n",
          MAX_RUNS, DEFAULT_SPEC);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child") == 0)
    return child_main(argv[2], argv[3]);
  int runs = 7;
  const char *text = DEFAULT_SPEC;
  const char *dir_arg = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--spec") == 0 && i + 1 < argc) {
      text = argv[++i];
    } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
      dir_arg = argv[++i];
    } else {
      usage(strcmp(argv[i], "--help") == 0 ? stdout : stderr);
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (runs < 1 || runs > MAX_RUNS) {
    usage(stderr);
    return 2;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) die("readlink /proc/self/exe", NULL, WG_EIO);
  self[n] = '\0';
  char tmp[] = "/tmp/warpgen-bench-XXXXXX";
  const char *dir = dir_arg ? dir_arg : mkdtemp(tmp);
  if (!dir) die("mkdtemp", NULL, WG_EIO);

  wg_context *cache = context_on(dir);
  series cold = {.n = runs}, hit = {.n = runs}, repeat = {.n = runs},
         driver = {.n = runs}, raw = {.n = runs}, warm = {.n = runs},
         lookup = {.n = runs};
  int gpu = 0;
  for (int i = 0; i < runs; i++) {
    int rc = wg_cache_clear(cache);
    if (rc) die("wg_cache_clear", cache, rc);
    child_result c = run_child(self, dir, text);
    if (c.compiles != 1) die("a cold run did not compile", NULL, WG_EIO);
    child_result h = run_child(self, dir, text);
    if (h.disk_hits < 1 || h.compiles != 0)
      die("a warm run did not hit the disk cache", NULL, WG_EIO);
    cold.v[i] = c.first_ns;
    hit.v[i] = h.first_ns;
    repeat.v[i] = h.repeat_ns;
    driver.v[i] = h.driver_ns;
    gpu = h.gpu;
  }

  /* In this process: NVRTC alone and warpgen with the cache off, both with
   * NVRTC already warm (one compile first, not counted). */
  wg_context *off = context_on(NULL);
  wg_spec spec;
  char *source = NULL;
  int rc = wg_spec_parse(off, &spec, text);
  if (!rc) rc = wg_source(off, &source, &spec);
  if (rc) die("wg_source", off, rc);
  int arch = wg_spec_arch(&spec, 0);
  raw_nvrtc_ns(source, arch);
  for (int i = 0; i < runs; i++) {
    raw.v[i] = raw_nvrtc_ns(source, arch);
    warm.v[i] = warm_compile_ns(off, text);
    lookup.v[i] = lookup_ns(cache, source, arch);
  }
  wg_free(source);
  wg_context_destroy(off);

  int nmaj = 0, nmin = 0;
  wg_nvrtc_version(NULL, &nmaj, &nmin);
  printf("warpgen %s, NVRTC %d.%d, spec '%s', %d runs, %s\n\n",
         wg_version(), nmaj, nmin, text, runs,
         gpu ? "GPU: up to a launchable function (wg_kernel_get)"
             : "no GPU: up to the cubin in memory (wg_cubin)");
  printf("| %-58s | %13s | %10s | %10s |\n", "what", "median", "min", "max");
  printf("|%s|%s|%s|%s|\n", "------------------------------------------------------------",
         "---------------", "------------", "------------");
  print_row("cold: fresh process, empty cache, compile + store", &cold);
  print_row(gpu ? "disk hit: fresh process, spec to launchable function"
                : "disk hit: fresh process, spec to cubin in memory",
            &hit);
  print_row(gpu ? "memory hit: same context, wg_kernel_get again"
                : "repeat: same context, wg_cubin again (disk hit, warm)",
            &repeat);
  if (median(&lookup) >= 0)
    print_row("of which the cache: wg_cache_lookup, warm process", &lookup);
  print_row("NVRTC alone, warm process (create..GetCUBIN)", &raw);
  print_row("warpgen compile, warm process, cache off", &warm);
  if (gpu)
    print_row("(host's cost, before timing: CUDA driver up)", &driver);

  if (!dir_arg) wg_cache_clear(cache);
  wg_context_destroy(cache);
  if (!dir_arg) rmdir(dir);
  return 0;
}
