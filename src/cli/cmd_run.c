/*
 * cmd_run.c - the subcommands that need a GPU: `warpgen run` (one launch
 * checked against the CPU oracle, tests/oracle.h), `warpgen bench` (timing
 * with CUDA events) and the device lines of `warpgen info`.
 *
 * A run is a job: the spec, the shape of its input (n elements; rows of
 * cols for the reductions) and one launch function, so that the warp
 * primitives (wg_warp_launch) and the whole-array and row reductions
 * (wg_reduce_ex, wg_reduce_rows_ex) share the buffers, the timing and the
 * verdict. They use the library's public calls for everything but CUDA
 * events, which the public API does not offer; those come from the driver
 * table (driver.h), which the tool can reach because it links the static
 * library.
 */
#include "cli.h"
#include "driver.h"
#include "oracle.h"
#include "run_axis.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* --- arguments -------------------------------------------------------------- */

typedef struct run_args {
  char spec_text[1024]; /* the words of SPEC, joined by spaces */
  const char *spec_file; /* --specs FILE: one spec a line ('-': stdin) */
  uint64_t n;
  bool have_n;
  uint64_t seed;
  bool have_seed;
  uint64_t rows, cols;   /* reduce-rows: --rows, --cols */
  bool have_rows, have_cols;
  wg_run_axis axis;      /* reduce-axis: --shape, --axis */
  wg_scalar params[WG_MAX_PARAMS]; /* reductions: --param, in order */
  size_t nparams;
  bool have_launch;      /* --block or --grid given */
  int reps;              /* bench: timed launches */
  wg_launch_config config;
} run_args;

/* A finite decimal number for --param; 0, or WG_EXIT_USAGE after printing
 * why. */
static int parse_param(const char *cmd, const char *text, double *out) {
  char *end = NULL;
  errno = 0;
  double v = text && *text && *text != ' ' ? strtod(text, &end) : NAN;
  if (end && !*end && errno == 0 && isfinite(v)) {
    *out = v;
    return 0;
  }
  char quoted[WG_CLI_QUOTE_MAX];
  fprintf(stderr, "warpgen %s: --param: '%s' is not a finite number\n", cmd,
          text ? wg_cli_quote(quoted, sizeof quoted, text) : "");
  return WG_EXIT_USAGE;
}

/* Returns 0, or WG_EXIT_USAGE after printing why. */
static int parse_args(run_args *a, int argc, char **argv, const char *usage,
                      uint64_t default_n) {
  memset(a, 0, sizeof *a);
  a->n = default_n;
  a->reps = 50;
  a->config = (wg_launch_config)WG_LAUNCH_CONFIG_INIT;
  size_t len = 0;
  char quoted[WG_CLI_QUOTE_MAX];
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t v = 0;
    int bad = 0;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      fputs(usage, stdout);
      return -1;
    } else if (!strcmp(arg, "--n")) {
      bad = wg_cli_number(argv[0], arg, value, 0, UINT64_MAX, &a->n);
      a->have_n = true;
    } else if (!strcmp(arg, "--seed")) {
      bad = wg_cli_number(argv[0], arg, value, 0, UINT64_MAX, &a->seed);
      a->have_seed = true;
    } else if (!strcmp(arg, "--rows")) {
      bad = wg_cli_number(argv[0], arg, value, 0, UINT64_MAX, &a->rows);
      a->have_rows = true;
    } else if (!strcmp(arg, "--cols")) {
      bad = wg_cli_number(argv[0], arg, value, 0, UINT64_MAX, &a->cols);
      a->have_cols = true;
    } else if (!strcmp(arg, "--shape") || !strcmp(arg, "--axis")) {
      bad = wg_run_axis_option(&a->axis, argv[0], arg, value);
    } else if (!strcmp(arg, "--param")) {
      if (a->nparams == WG_MAX_PARAMS) {
        fprintf(stderr, "warpgen %s: more than %d --param\n", argv[0], WG_MAX_PARAMS);
        return WG_EXIT_USAGE;
      }
      bad = parse_param(argv[0], value, &a->params[a->nparams].f64);
      a->nparams++;
    } else if (!strcmp(arg, "--reps")) {
      bad = wg_cli_number(argv[0], arg, value, 1, 100000, &v);
      a->reps = (int)v;
    } else if (!strcmp(arg, "--block")) {
      bad = wg_cli_number(argv[0], arg, value, 0, 1024, &v);
      a->config.block_size = (unsigned)v;
      a->have_launch = true;
    } else if (!strcmp(arg, "--grid")) {
      bad = wg_cli_number(argv[0], arg, value, 0, 0x7fffffff, &v);
      a->config.grid_size = (unsigned)v;
      a->have_launch = true;
    } else if (!strcmp(arg, "--specs")) {
      if (!value) {
        fprintf(stderr, "warpgen %s: --specs needs a file\n%s", argv[0], usage);
        return WG_EXIT_USAGE;
      }
      a->spec_file = value;
    } else if (arg[0] == '-' && arg[1] == '-') {
      fprintf(stderr, "warpgen: unknown option '%s'\n%s",
              wg_cli_quote(quoted, sizeof quoted, arg), usage);
      return WG_EXIT_USAGE;
    } else {
      /* A spec may come as one quoted argument or as several words. */
      size_t add = strlen(arg);
      if (len + add + 2 > sizeof a->spec_text) {
        fprintf(stderr, "warpgen: the spec is too long\n");
        return WG_EXIT_USAGE;
      }
      if (len)
        a->spec_text[len++] = ' ';
      memcpy(a->spec_text + len, arg, add + 1);
      len += add;
      continue;
    }
    if (bad)
      return bad;
    i++; /* the option's value */
  }
  if (!len && !a->spec_file) {
    fprintf(stderr, "warpgen: no SPEC given\n%s", usage);
    return WG_EXIT_USAGE;
  }
  if (len && a->spec_file) {
    fprintf(stderr, "warpgen: give a SPEC or --specs, not both\n%s", usage);
    return WG_EXIT_USAGE;
  }
  return 0;
}

/* --- jobs ------------------------------------------------------------------- */

/* One spec's run: what to launch over which shape. */
typedef struct run_job {
  const wg_spec *spec;
  bool reduction;        /* reduce-array or reduce-rows */
  bool rownorm;          /* a fused row kernel (run_rownorm.c): rows as reduce-rows */
  uint64_t n;            /* input elements */
  uint64_t rows, cols;   /* reductions: rows of cols (reduce-array: 1 x n) */
  wg_reduction reduce;   /* reductions: what wg_reduce_ex is asked */
  const wg_scalar *params;
  size_t nparams;
  wg_kernel *kernel;     /* warp primitives */
  wg_launch_config config;
  bool histogram;        /* histogram (run_hist.c): wg_histogram */
  bool edge_keys;        /* histogram: the oracle's edge mix (run), else uniform */
  wg_scalar hist_params[WG_MAX_PARAMS];
  wg_run_axis axis;      /* reduce-axis: the shape (rows: outputs, cols: len) */
} run_job;

/* Resolves the job's shape from the options and the spec. reduce-rows:
 * cols from --cols or the spec's cols= (both: they must agree), rows from
 * --rows or n / cols (the n / cols full rows of n elements). Returns 0, or
 * WG_EXIT_USAGE after printing why. */
static int job_make(run_job *job, const wg_spec *spec, const run_args *a,
                    const char *cmd) {
  memset(job, 0, sizeof *job);
  job->spec = spec;
  job->rownorm = wg_cli_rownorm_is(spec);
  const int scan = wg_cli_scan_kind(spec); /* 1: array, 2: rows (run_scan.c) */
  const bool rows_wise = spec->primitive == WG_REDUCE_ROWS || job->rownorm || scan == 2;
  job->reduction = spec->primitive == WG_REDUCE_ARRAY ||
                   spec->primitive == WG_REDUCE_ROWS || job->rownorm ||
                   spec->primitive == WG_REDUCE_AXIS || scan;
  job->n = a->n;
  job->config = a->config;
  const char *why = NULL;
  if (spec->primitive != WG_REDUCE_AXIS && (a->axis.have_shape || a->axis.have_axis)) {
    fprintf(stderr, "warpgen %s: --shape and --axis are for reduce-axis\n", cmd);
    return WG_EXIT_USAGE;
  }
  if (spec->primitive == WG_HISTOGRAM) {
    job->histogram = true;
    job->edge_keys = strcmp(cmd, "run") == 0;
    job->nparams = wg_cli_hist_params(spec, a->params, a->nparams, job->hist_params);
    job->params = job->hist_params;
    if (a->have_rows || a->have_cols || a->have_launch) {
      fprintf(stderr, "warpgen %s: --rows, --cols, --block and --grid are not for "
              "histograms\n", cmd);
      return WG_EXIT_USAGE;
    }
    return 0;
  }
  if (!job->reduction) {
    if (a->have_rows || a->have_cols)
      why = "--rows and --cols are for reduce-rows";
    else if (a->nparams)
      why = "--param is for reduce-array and reduce-rows";
    if (why) {
      fprintf(stderr, "warpgen %s: %s\n", cmd, why);
      return WG_EXIT_USAGE;
    }
    return 0;
  }
  if (a->have_launch)
    why = "--block and --grid are for the warp primitives (the reductions "
          "choose their own launch)";
  else if (!job->rownorm && !scan && wg_reduce_output_type(spec->type, spec->op) < 0)
    why = "this operator does not take this type"; /* the parser refuses first */
  else if (!rows_wise && (a->have_rows || a->have_cols))
    why = "--rows and --cols are for reduce-rows and scan-rows (the arrays take --n)";
  else if (scan && a->nparams)
    why = "--param is for reduce-array and reduce-rows";
  else if (scan && !strcmp(cmd, "run") && wg_cli_scan_uncheckable(spec))
    why = wg_cli_scan_uncheckable(spec);
  job->reduce = (wg_reduction)WG_REDUCTION_INIT;
  job->reduce.type = spec->type;
  job->reduce.op = spec->op;
  job->params = a->params;
  job->nparams = a->nparams;
  job->rows = 1;
  job->cols = a->n;
  if (!why && spec->primitive == WG_REDUCE_AXIS) {
    job->axis = a->axis;
    if (a->have_rows || a->have_cols)
      why = "--rows and --cols are for reduce-rows (reduce-axis takes --shape, --axis)";
    else if (a->axis.have_shape && a->have_n)
      why = "give --shape or --n, not both";
    else
      why = wg_run_axis_shape(&job->axis, &job->n, &job->rows, &job->cols);
  }
  if (!why && rows_wise) {
    const uint64_t spec_cols = (uint64_t)spec->cols;
    job->cols = a->have_cols ? a->cols : spec_cols;
    if (a->have_cols && spec_cols && a->cols != spec_cols)
      why = "--cols differs from the spec's cols=";
    else if (!a->have_cols && !spec_cols)
      why = job->rownorm ? "a row kernel needs --cols C (or cols=C in the spec)"
            : scan       ? "scan-rows needs --cols C (or cols=C in the spec)"
                         : "reduce-rows needs --cols C (or cols=C in the spec)";
    else if (a->have_rows && a->have_n)
      why = "give --rows or --n, not both";
    else if (a->have_rows)
      job->rows = a->rows;
    else if (job->cols == 0)
      why = "--cols 0 needs --rows";
    else
      job->rows = a->n / job->cols;
    if (!why && job->cols && job->rows > UINT64_MAX / job->cols)
      why = "--rows times --cols is past 2^64";
    job->n = job->rows * job->cols;
  }
  if (why) {
    fprintf(stderr, "warpgen %s: %s\n", cmd, why);
    return WG_EXIT_USAGE;
  }
  return 0;
}

/* The output elements of a job and their size. */
static int job_output_shape(const run_job *job, uint64_t *count, size_t *size) {
  if (job->histogram) {
    *count = (uint64_t)job->spec->bins;
    *size = wg_type_size(job->spec->counts);
    return WG_OK;
  }
  if (!job->reduction)
    return wg_output_shape(count, size, job->spec, job->n);
  if (wg_cli_scan_kind(job->spec)) {
    *count = job->rows * job->cols;
    *size = wg_cli_scan_out_size(job->spec);
    return *size ? WG_OK : WG_ESPEC;
  }
  *count = job->rownorm ? job->rows * job->cols : job->rows;
  *size = job->rownorm ? wg_type_size(job->spec->type) : wg_type_size((wg_type)wg_reduce_output_type(job->spec->type, job->spec->op));
  return WG_OK;
}

/* --- device buffers and timing ------------------------------------------------ */

/* The buffers of one spec's run, host and device. */
typedef struct run_buffers {
  void *host_in, *host_out;
  uint64_t dev_in, dev_out;
  size_t in_bytes, out_bytes;
  uint64_t out_count;
} run_buffers;

static void buffers_free(wg_context *ctx, run_buffers *b) {
  free(b->host_in);
  free(b->host_out);
  wg_mem_free(ctx, b->dev_in);
  wg_mem_free(ctx, b->dev_out);
  memset(b, 0, sizeof *b);
}

/* Allocates and fills the input (random, from the oracle, uploaded) and
 * the output. */
static int buffers_make(wg_context *ctx, run_buffers *b, const run_job *job,
                        uint64_t seed) {
  memset(b, 0, sizeof *b);
  size_t out_size = 0;
  const wg_spec *spec = job->spec;
  int rc = job_output_shape(job, &b->out_count, &out_size);
  if (rc)
    return wg_fail(ctx, rc, "no output shape for this spec");
  size_t in_size = wg_type_size(spec->type);
  uint64_t n = job->n;
  if (n > SIZE_MAX / in_size || b->out_count > SIZE_MAX / out_size)
    return wg_fail(ctx, WG_ERANGE, "n = %" PRIu64 " is too large", n);
  b->in_bytes = (size_t)n * in_size;
  b->out_bytes = (size_t)b->out_count * out_size;
  /* One extra byte keeps malloc(0) from returning NULL for n = 0. */
  b->host_in = malloc(b->in_bytes + 1);
  b->host_out = malloc(b->out_bytes + 1);
  if (!b->host_in || !b->host_out)
    return wg_fail(ctx, WG_ENOMEM, "out of host memory for %zu + %zu bytes",
                   b->in_bytes, b->out_bytes);
  if (job->histogram)
    wg_cli_hist_fill(spec, job->params, job->edge_keys, b->host_in, n, seed);
  else if (job->reduction)
    wg_oracle_fill(spec->type, job->rownorm ? WG_OP_SUM : spec->op, b->host_in, n, seed);
  else
    wg_oracle_warp_fill(spec, b->host_in, 0, n, seed);
  rc = wg_mem_alloc(ctx, &b->dev_in, b->in_bytes);
  if (!rc)
    rc = wg_mem_alloc(ctx, &b->dev_out, b->out_bytes);
  if (!rc)
    rc = wg_memcpy_htod(ctx, b->dev_in, b->host_in, b->in_bytes, NULL);
  return rc;
}

/* One launch of the job (asynchronous, on the default stream). */
static int job_launch(wg_context *ctx, const run_job *job, const run_buffers *b) {
  if (job->rownorm)
    return wg_cli_rownorm_launch(ctx, job->spec, b->dev_in, b->dev_out, job->rows, job->cols);
  switch (job->spec->primitive) {
  case WG_REDUCE_ARRAY:
    return wg_reduce_ex(ctx, &job->reduce, &b->dev_in, 1, job->n, job->params,
                        job->nparams, b->dev_out, NULL);
  case WG_REDUCE_ROWS:
    return wg_reduce_rows_ex(ctx, &job->reduce, &b->dev_in, 1, job->rows, job->cols,
                             job->cols, job->params, job->nparams, b->dev_out, NULL);
  case WG_HISTOGRAM:
    return wg_histogram(ctx, job->spec, b->dev_in, job->n, job->params, job->nparams,
                        b->dev_out, NULL);
  case WG_REDUCE_AXIS:
    return wg_run_axis_launch(ctx, &job->axis, &job->reduce, b->dev_in, job->params,
                              job->nparams, b->dev_out);
  default:
    if (wg_cli_scan_kind(job->spec))
      return wg_cli_scan_launch(ctx, job->spec, b->dev_in, job->rows, job->cols, b->dev_out);
    return wg_warp_launch(ctx, job->kernel, b->dev_in, b->dev_out, job->n, NULL,
                          &job->config);
  }
}

/* Compares the outputs with the oracle. */
static void job_check(wg_oracle_report *report, const run_job *job,
                      const run_buffers *b) {
  wg_oracle_report_init(report);
  if (job->rownorm)
    wg_cli_rownorm_check(report, job->spec, b->host_in, job->rows, job->cols, b->host_out);
  else if (job->histogram)
    wg_cli_hist_check(report, job->spec, job->params, b->host_in, job->n, b->host_out);
  else if (job->spec->primitive == WG_REDUCE_AXIS)
    wg_run_axis_check(report, &job->axis, job->spec->type, job->spec->op, b->host_in,
                      job->params, job->nparams, b->host_out);
  else if (wg_cli_scan_kind(job->spec))
    wg_cli_scan_check(report, job->spec, b->host_in, job->rows, job->cols, b->host_out);
  else if (job->reduction)
    wg_oracle_rows_check(report, job->spec->type, job->spec->op, b->host_in, job->rows,
                         job->cols, job->params, job->nparams, b->host_out);
  else /* expressions too (one input, the operator's default parameters) */
    wg_oracle_warp_check_ex(report, job->spec, (const void *const[]){b->host_in}, job->n,
                            NULL, 0, b->host_out, 0,
                            wg_oracle_group_count(job->spec, job->n));
}
/* A pair of CUDA events around some launches. */
typedef struct timer {
  CUevent start, stop;
} timer;

static int timer_make(wg_context *ctx, timer *t) {
  wg_device_scope scope;
  const wg_driver_api *api;
  int rc = wg_device_enter(ctx, &scope, &api);
  if (rc)
    return rc;
  rc = wg_cuda_status(ctx, api->EventCreate(&t->start, CU_EVENT_DEFAULT),
                      "cuEventCreate");
  if (!rc)
    rc = wg_cuda_status(ctx, api->EventCreate(&t->stop, CU_EVENT_DEFAULT),
                        "cuEventCreate");
  wg_device_leave(ctx, &scope);
  return rc;
}

static void timer_free(wg_context *ctx, timer *t) {
  wg_device_scope scope;
  const wg_driver_api *api;
  if (wg_device_enter(ctx, &scope, &api) == WG_OK) {
    if (t->start)
      api->EventDestroy(t->start);
    if (t->stop)
      api->EventDestroy(t->stop);
    wg_device_leave(ctx, &scope);
  }
}

static int timer_mark(wg_context *ctx, CUevent event) {
  wg_device_scope scope;
  const wg_driver_api *api;
  int rc = wg_device_enter(ctx, &scope, &api);
  if (rc)
    return rc;
  rc = wg_cuda_status(ctx, api->EventRecord(event, NULL), "cuEventRecord");
  wg_device_leave(ctx, &scope);
  return rc;
}

/* Milliseconds between the two marks, once the second has happened. */
static int timer_read(wg_context *ctx, timer *t, double *ms) {
  wg_device_scope scope;
  const wg_driver_api *api;
  int rc = wg_device_enter(ctx, &scope, &api);
  if (rc)
    return rc;
  float elapsed = 0;
  rc = wg_cuda_status(ctx, api->EventSynchronize(t->stop),
                      "cuEventSynchronize");
  if (!rc)
    rc = wg_cuda_status(ctx, api->EventElapsedTime(&elapsed, t->start, t->stop),
                        "cuEventElapsedTime");
  wg_device_leave(ctx, &scope);
  *ms = elapsed;
  return rc;
}

/* One launch between the timer's marks. */
static int timed_launch(wg_context *ctx, timer *t, const run_job *job,
                        const run_buffers *b, double *ms) {
  int rc = timer_mark(ctx, t->start);
  if (!rc)
    rc = job_launch(ctx, job, b);
  if (!rc)
    rc = timer_mark(ctx, t->stop);
  if (!rc)
    rc = timer_read(ctx, t, ms);
  return rc;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The job's first launch and its wait. *load_ms gets the time to get
 * the kernel ready: wg_kernel_get for the warp primitives; the first call
 * for the reductions, which compile or load on it. The buffers come first,
 * so that a machine without a GPU is told so before anything compiles. */
static int job_warm_up(wg_context *ctx, run_job *job, const run_buffers *b,
                       double *load_ms) {
  double t0 = now_seconds();
  const bool own_call = job->reduction || job->histogram; /* compiles on first call */
  int rc = own_call ? WG_OK : wg_kernel_get(ctx, &job->kernel, job->spec);
  if (!own_call)
    *load_ms = 1e3 * (now_seconds() - t0);
  if (!rc)
    rc = job_launch(ctx, job, b);
  if (!rc)
    rc = wg_stream_sync(ctx, NULL);
  if (own_call)
    *load_ms = 1e3 * (now_seconds() - t0);
  return rc;
}

/* A reduction the library must refuse (argmin, argmax, norminf of empty
 * rows): the oracle of the first row says so. */
static bool job_must_fail(const run_job *job, const run_buffers *b) {
  if (!job->reduction || job->rownorm || job->rows == 0 || wg_cli_scan_kind(job->spec))
    return false;
  wg_oracle want;
  wg_oracle_reduce(&want, job->spec->type, job->spec->op, b->host_in, 0, job->cols,
                   job->params, job->nparams);
  return want.must_fail;
}

/* The spec's text, saying what auto stood for, so a reader knows which
 * kernel ran (reduce-rows: with the cols it ran with). */
static void job_name(char *text, size_t size, const run_job *job) {
  wg_spec spec = *job->spec;
  if (((spec.primitive == WG_REDUCE_ROWS && !job->rownorm) || wg_cli_scan_kind(&spec) == 2) &&
      job->cols <= INT64_MAX)
    spec.cols = (int64_t)job->cols;
  int len = wg_spec_format(text, size, &spec);
  if (!job->reduction && !job->histogram && spec.variant == WG_VARIANT_AUTO && len > 0 && (size_t)len < size)
    snprintf(text + len, size - (size_t)len, " (auto: %s)",
             wg_variant_name(wg_spec_resolve_variant(&spec)));
}

/* --- run -------------------------------------------------------------------- */

static const char run_usage[] =
    "usage: warpgen run SPEC [--n N] [--seed S] [--block B] [--grid G]\n"
    "       warpgen run REDUCE-SPEC [--n N | --rows R] [--cols C] [--param V]...\n"
    "       warpgen run HISTOGRAM-SPEC [--n N] [--param LO --param HI]\n"
    "       warpgen run COMPACT-SPEC [--n N] [--seed S] [--param V]...\n"
    "       warpgen run AXIS-SPEC [--shape A,B,... | --n N] [--axis K,...] [--param V]...\n"
    "       warpgen run SCAN-SPEC [--n N | --rows R] [--cols C]\n"
    "       warpgen run --specs FILE [--n N] [--seed S]\n"
    "  Runs the kernel for SPEC on the GPU over N random elements (default\n"
    "  1000000; '2^31+33' is accepted), checks every output against the CPU\n"
    "  oracle and prints the verdict and the kernel time. reduce-array\n"
    "  reduces the N elements to one value; reduce-rows reduces R rows of C\n"
    "  (C from --cols or the spec's cols=, R from --rows or N / C) and\n"
    "  --param gives the operator's parameters (var/std: the correction).\n"
    "  A histogram counts N keys (floats: over [LO, HI], default [0, 1]; a\n"
    "  map's params=: --param, in order) into its bins=.\n"
    "  compact keeps what its pred= keeps of N elements, --param giving\n"
    "  p0, p1... in order, and is checked exactly.\n"
    "  reduce-axis reduces the dims --axis (default 0; negative from the\n"
    "  end) of a contiguous array of --shape (default: N elements).\n"
    "  scan-array and scan-rows (and exscan-) take the same shapes and write\n"
    "  every prefix; run checks those of the built-in operators.\n"
    "  --specs runs each spec in FILE ('-': standard input), one per line.\n"
    "  The seed is fresh each run unless given. Exit: 0 all match, 1 a\n"
    "  mismatch or an error, 2 bad usage or spec, 4 no GPU.\n";

/* A compact spec runs in run_compact.c (reps 0: checked, else timed). */
static int run_compact(wg_context *ctx, const wg_spec *spec, const run_args *a, int reps,
                       const char *cmd) {
  if (a->have_launch || a->have_rows || a->have_cols) {
    fprintf(stderr, "warpgen %s: compact takes --n, --seed and --param\n", cmd);
    return WG_EXIT_USAGE;
  }
  double params[WG_MAX_PARAMS];
  for (size_t k = 0; k < a->nparams; k++) params[k] = a->params[k].f64;
  return wg_cli_compact(ctx, spec, a->n, params, a->nparams,
                        a->have_seed ? a->seed : wg_oracle_fresh_seed(), reps);
}

/* Runs and checks one spec; returns an exit code. */
static int run_one(wg_context *ctx, const wg_spec *spec, const run_args *a) {
  if (spec->primitive == WG_COMPACT) return run_compact(ctx, spec, a, 0, "run");
  run_job job;
  int code = job_make(&job, spec, a, "run");
  if (code)
    return code;
  char text[300];
  job_name(text, sizeof text, &job);
  uint64_t seed = a->have_seed ? a->seed : wg_oracle_fresh_seed();
  run_buffers b = {0};
  timer t = {0};
  double ms = 0, load_ms = 0;
  /* No GPU is said before the input is made or anything compiles. */
  wg_device_info info;
  int rc = wg_device_get_info(ctx, &info);
  if (!rc)
    rc = buffers_make(ctx, &b, &job, seed);
  if (!rc && job_must_fail(&job, &b)) {
    rc = job_launch(ctx, &job, &b);
    bool pass = rc == WG_EINVAL;
    printf("%s: %s  n=%" PRIu64 "  %s%s\n", pass ? "PASS" : "FAIL", text, job.n,
           pass ? "refused, as it must: " : "should have been refused",
           pass ? wg_errmsg(ctx) : "");
    buffers_free(ctx, &b);
    return pass ? WG_EXIT_OK : WG_EXIT_FAIL;
  }
  if (!rc)
    rc = timer_make(ctx, &t);
  /* A first launch warms the kernel up; the checked one is timed. */
  if (!rc)
    rc = job_warm_up(ctx, &job, &b, &load_ms);
  if (!rc)
    rc = wg_memset_d8(ctx, b.dev_out, wg_oracle_poison_byte(spec), b.out_bytes,
                      NULL);
  if (!rc)
    rc = timed_launch(ctx, &t, &job, &b, &ms);
  if (!rc)
    rc = wg_memcpy_dtoh(ctx, b.host_out, b.dev_out, b.out_bytes, NULL);
  if (rc) {
    code = wg_cli_fail(ctx, rc, text);
    timer_free(ctx, &t);
    buffers_free(ctx, &b);
    return code;
  }
  wg_oracle_report report;
  job_check(&report, &job, &b);
  bool pass = report.mismatches == 0 && report.checked == b.out_count;
  printf("%s: %s  n=%" PRIu64, pass ? "PASS" : "FAIL", text, job.n);
  if (spec->primitive == WG_REDUCE_ROWS || job.rownorm || spec->primitive == WG_REDUCE_AXIS ||
      wg_cli_scan_kind(spec) == 2)
    printf(" (%" PRIu64 " x %" PRIu64 ")", job.rows, job.cols);
  printf(" outputs=%" PRIu64 " seed=0x%016" PRIx64 "  kernel %.3f us  (load %.1f ms)",
         report.checked, seed, ms * 1e3, load_ms);
  if (report.worst_ratio > 0)
    printf("  worst error %.2f of bound", report.worst_ratio);
  putchar('\n');
  if (!pass) {
    if (report.mismatches)
      printf("  %" PRIu64 " of %" PRIu64 " outputs differ; first: %s\n",
             report.mismatches, report.checked, report.first);
    else
      printf("  checked %" PRIu64 " outputs, expected %" PRIu64 "\n",
             report.checked, b.out_count);
  }
  timer_free(ctx, &t);
  buffers_free(ctx, &b);
  return pass ? WG_EXIT_OK : WG_EXIT_FAIL;
}

/* A specs file is a few thousand short lines at most; these bounds turn
 * /dev/zero, a runaway pipe or a binary file into a clear error instead of
 * a loop that never ends. */
#define SPECS_LINE_MAX 1023
#define SPECS_FILE_MAX (4u << 20)

/* Opens the specs file ('-': standard input), which must be a regular file,
 * a pipe or a terminal; NULL after printing why. */
static FILE *specs_open(const char *path) {
  char quoted[WG_CLI_QUOTE_MAX];
  wg_cli_quote(quoted, sizeof quoted, path);
  bool is_stdin = !strcmp(path, "-");
  /* O_NONBLOCK: opening a FIFO nobody writes must not wait forever. */
  int fd = is_stdin ? dup(0) : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    fprintf(stderr, "warpgen run: cannot read %s: %s\n", quoted, strerror(errno));
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !isatty(fd)) {
    fprintf(stderr, "warpgen run: %s is not a regular file, a pipe or a "
            "terminal\n", quoted);
    close(fd);
    return NULL;
  }
  /* Reads wait for a pipe's writer like any reader of standard input. */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  FILE *f = fdopen(fd, "r");
  if (!f) {
    fprintf(stderr, "warpgen run: cannot read %s: %s\n", quoted, strerror(errno));
    close(fd);
  }
  return f;
}

/* The next line of f into line (without its end of line): 1, or 0 at the
 * end, or WG_EXIT_USAGE after printing why (a line over SPECS_LINE_MAX, a
 * NUL byte, a file over SPECS_FILE_MAX, a read error). */
static int specs_next(FILE *f, const char *path, char line[SPECS_LINE_MAX + 1],
                      unsigned *lineno, size_t *total) {
  char quoted[WG_CLI_QUOTE_MAX];
  size_t len = 0;
  int c;
  const char *why = NULL;
  ++*lineno;
  while ((c = getc(f)) != EOF && c != '\n') {
    if (++*total > SPECS_FILE_MAX) why = "the file is longer than 4 MiB";
    else if (c == '\0') why = "a NUL byte";
    else if (len == SPECS_LINE_MAX) why = "longer than 1023 bytes";
    if (why)
      break;
    line[len++] = (char)c;
  }
  if (!why && ferror(f))
    why = strerror(errno);
  if (why) {
    fprintf(stderr, "warpgen run: %s line %u: %s\n",
            wg_cli_quote(quoted, sizeof quoted, path), *lineno, why);
    return WG_EXIT_USAGE;
  }
  *total += c == '\n';
  if (len && line[len - 1] == '\r')
    len--;
  line[len] = '\0';
  return c == EOF && len == 0 ? 0 : 1;
}

/* Runs every spec of a file; the worst exit code wins. */
static int run_file(wg_context *ctx, const run_args *a) {
  FILE *f = specs_open(a->spec_file);
  if (!f)
    return WG_EXIT_USAGE;
  char line[SPECS_LINE_MAX + 1];
  unsigned lineno = 0;
  size_t total = 0;
  int worst = WG_EXIT_OK, count = 0, failed = 0, more;
  while ((more = specs_next(f, a->spec_file, line, &lineno, &total)) == 1) {
    if (!line[0] || line[0] == '#')
      continue;
    wg_spec spec;
    int code = wg_cli_spec(ctx, &spec, line) ? WG_EXIT_USAGE
                                             : run_one(ctx, &spec, a);
    count++;
    failed += code != WG_EXIT_OK;
    if (code == WG_EXIT_NOGPU || (code > worst && worst != WG_EXIT_NOGPU))
      worst = code;
    if (code == WG_EXIT_NOGPU)
      break;
  }
  fclose(f);
  if (more > 1 && worst != WG_EXIT_NOGPU)
    worst = more;
  printf("%d specs, %d passed, %d failed\n", count, count - failed, failed);
  return worst;
}

int wg_cli_run(int argc, char **argv) {
  run_args a;
  int code = parse_args(&a, argc, argv, run_usage, 1000000);
  if (code)
    return code < 0 ? WG_EXIT_OK : code;
  wg_context *ctx;
  if (wg_cli_context(&ctx))
    return WG_EXIT_FAIL;
  if (a.spec_file) {
    code = run_file(ctx, &a);
  } else {
    wg_spec spec;
    code = wg_cli_spec(ctx, &spec, a.spec_text) ? WG_EXIT_USAGE
                                                : run_one(ctx, &spec, &a);
  }
  wg_context_destroy(ctx);
  return code;
}

/* --- bench ------------------------------------------------------------------ */

static const char bench_usage[] =
    "usage: warpgen bench SPEC [--n N] [--reps R] [--block B] [--grid G]\n"
    "       warpgen bench REDUCE-SPEC [--n N | --rows R] [--cols C] [--param V]...\n"
    "       warpgen bench HISTOGRAM-SPEC [--n N] [--param LO --param HI]\n"
    "       warpgen bench COMPACT-SPEC [--n N] [--reps R] [--param V]...\n"
    "       warpgen bench AXIS-SPEC [--shape A,B,... | --n N] [--axis K,...]\n"
    "  Times the kernel for SPEC over N random elements (default 2^26) with\n"
    "  CUDA events: three warm-up launches, then R timed ones (default 50);\n"
    "  prints the median and fastest time, elements and groups (rows) per\n"
    "  second and the bandwidth (bytes read + written). The reductions and\n"
    "  the scans take their shape as `run` does; histograms count uniform\n"
    "  keys and also print the GB/s of keys read.\n";

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int wg_cli_bench(int argc, char **argv) {
  run_args a;
  int code = parse_args(&a, argc, argv, bench_usage, UINT64_C(1) << 26);
  if (code)
    return code < 0 ? WG_EXIT_OK : code;
  if (a.spec_file) {
    fprintf(stderr, "warpgen bench: --specs is for run\n");
    return WG_EXIT_USAGE;
  }
  wg_context *ctx;
  if (wg_cli_context(&ctx))
    return WG_EXIT_FAIL;
  wg_spec spec;
  run_job job;
  if (wg_cli_spec(ctx, &spec, a.spec_text)) {
    wg_context_destroy(ctx);
    return WG_EXIT_USAGE;
  }
  if (spec.primitive == WG_COMPACT) {
    code = run_compact(ctx, &spec, &a, a.reps, "bench");
    wg_context_destroy(ctx);
    return code;
  }
  code = job_make(&job, &spec, &a, "bench");
  if (code) {
    wg_context_destroy(ctx);
    return code;
  }
  char text[300];
  job_name(text, sizeof text, &job);
  run_buffers b = {0};
  timer t = {0};
  double load_ms = 0;
  double *times = calloc((size_t)a.reps, sizeof *times);
  wg_device_info info;
  int rc = times ? WG_OK : wg_fail(ctx, WG_ENOMEM, "out of memory");
  if (!rc)
    rc = wg_device_get_info(ctx, &info);
  if (!rc)
    rc = buffers_make(ctx, &b, &job, wg_oracle_fresh_seed());
  if (!rc && job_must_fail(&job, &b))
    rc = wg_fail(ctx, WG_EINVAL, "the library refuses this shape (empty rows)");
  if (!rc)
    rc = timer_make(ctx, &t);
  for (int i = 0; !rc && i < 3; i++)
    rc = i == 0 ? job_warm_up(ctx, &job, &b, &load_ms) : job_launch(ctx, &job, &b);
  for (int i = 0; !rc && i < a.reps; i++)
    rc = timed_launch(ctx, &t, &job, &b, &times[i]);
  if (rc) {
    code = wg_cli_fail(ctx, rc, text);
  } else {
    qsort(times, (size_t)a.reps, sizeof *times, compare_double);
    double median = times[a.reps / 2] * 1e-3, best = times[0] * 1e-3;
    double groups = (double)(job.reduction ? job.rows : wg_oracle_group_count(&spec, job.n));
    printf("%s on %s (sm_%d), n=%" PRIu64, text, info.name, info.arch, job.n);
    if (spec.primitive == WG_REDUCE_ROWS || job.rownorm || spec.primitive == WG_REDUCE_AXIS ||
        wg_cli_scan_kind(&spec) == 2)
      printf(" (%" PRIu64 " x %" PRIu64 ")", job.rows, job.cols);
    printf(", %d reps\n", a.reps);
    printf("  median %.3f us  fastest %.3f us\n", median * 1e6, best * 1e6);
    if (median > 0)
      printf("  %.3f G elements/s  %.3f G %s/s  %.1f GB/s\n",
             (double)job.n / median * 1e-9, groups / median * 1e-9,
             job.reduction ? "rows" : "groups",
             (double)(b.in_bytes + b.out_bytes) / median * 1e-9);
    if (median > 0 && job.histogram)
      printf("  %.1f GB/s of keys read\n", (double)b.in_bytes / median * 1e-9);
    code = WG_EXIT_OK;
  }
  free(times);
  timer_free(ctx, &t);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
  return code;
}

/* --- info ------------------------------------------------------------------- */

/* Prints the driver and each device. No driver or no device is reported as
 * a fact, not a failure: the return value is 0 either way. */
int wg_cli_info_devices(void) {
  wg_context *ctx;
  if (wg_context_create(&ctx, NULL) != WG_OK)
    return WG_EXIT_FAIL;
  wg_device_info info;
  int rc = wg_device_info_at(ctx, &info, 0);
  if (rc == WG_ENODRIVER || rc == WG_ENODEVICE) {
    printf("driver    none: %s\n", wg_errmsg(ctx));
    wg_context_destroy(ctx);
    return WG_EXIT_OK;
  }
  if (rc) {
    printf("driver    error: %s\n", wg_errmsg(ctx));
    wg_context_destroy(ctx);
    return WG_EXIT_FAIL;
  }
  printf("driver    CUDA %d.%d\ndevices   %d\n", info.driver_version / 1000,
         info.driver_version % 1000 / 10, info.device_count);
  for (int i = 0; i < info.device_count; i++) {
    if (i > 0 && wg_device_info_at(ctx, &info, i) != WG_OK) {
      printf("  %d: %s\n", i, wg_errmsg(ctx));
      continue;
    }
    printf("  %d: %s, sm_%d, %d SMs, %.1f GiB\n", i, info.name, info.arch,
           info.sm_count, (double)info.memory_bytes / (1024.0 * 1024 * 1024));
  }
  wg_context_destroy(ctx);
  return WG_EXIT_OK;
}
