/*
 * run_compact.c - `warpgen run` and `warpgen bench` of a compact spec
 * (stream compaction, wg_compact): random inputs, the parameters from
 * --param, and either one launch checked exactly against the host's
 * answer (compact.h, through the expression evaluator, and the oracle,
 * tests/oracle_compact.c), or timed launches. cmd_run.c hands compact
 * specs here.
 */
#include "cli.h"
#include "compact.h"
#include "oracle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The buffers of one run, host and device. */
typedef struct compact_run {
  int ninputs;
  void *host[WG_MAX_INPUTS];
  uint64_t dev[WG_MAX_INPUTS];
  unsigned char *keep;
  void *got_values;
  int64_t *got_indices;
  uint64_t values, indices, count;
  wg_scalar params[WG_MAX_PARAMS];
} compact_run;

static void run_free(wg_context *ctx, compact_run *r) {
  for (int k = 0; k < WG_MAX_INPUTS; k++) {
    free(r->host[k]);
    wg_mem_free(ctx, r->dev[k]);
  }
  free(r->keep);
  free(r->got_values);
  free(r->got_indices);
  wg_mem_free(ctx, r->values);
  wg_mem_free(ctx, r->indices);
  wg_mem_free(ctx, r->count);
}

/* Inputs (random, zeros mixed in), outputs, parameters (each --param,
 * a double, converted to its declared type). */
static int run_make(wg_context *ctx, compact_run *r, const wg_spec *spec, uint64_t n,
                    const double *params, size_t nparams, uint64_t seed) {
  memset(r, 0, sizeof *r);
  if (nparams != (size_t)spec->nparams)
    return wg_fail(ctx, WG_EINVAL, "the spec declares %d parameter%s; give each with "
                   "--param (%zu given)", spec->nparams, spec->nparams == 1 ? "" : "s",
                   nparams);
  for (size_t k = 0; k < nparams; k++) {
    const double v = params[k];
    switch (spec->params[k]) {
    case WG_F32: r->params[k].f32 = (float)v; break;
    case WG_F64: r->params[k].f64 = v; break;
    case WG_I32: r->params[k].i32 = (int32_t)v; break;
    case WG_U32: r->params[k].u32 = (uint32_t)v; break;
    case WG_I64: r->params[k].i64 = (int64_t)v; break;
    default: r->params[k].u64 = (uint64_t)v; break;
    }
  }
  r->ninputs = spec->ninputs < 1 ? 1 : spec->ninputs;
  const size_t size = wg_type_size(spec->type);
  if (n > SIZE_MAX / 8 - 1) return wg_fail(ctx, WG_ERANGE, "n = %" PRIu64 " is too large", n);
  int rc = WG_OK;
  for (int k = 0; k < r->ninputs && !rc; k++) {
    const wg_type t = k ? spec->inputs[k] : spec->type;
    r->host[k] = malloc((size_t)n * wg_type_size(t) + 1);
    if (!r->host[k]) return wg_fail(ctx, WG_ENOMEM, "out of host memory");
    wg_oracle_fill(t, WG_OP_COUNT_NONZERO, r->host[k], n, seed + (uint64_t)k);
    rc = wg_mem_alloc(ctx, &r->dev[k], (size_t)n * wg_type_size(t) + 1);
    if (!rc) rc = wg_memcpy_htod(ctx, r->dev[k], r->host[k], (size_t)n * wg_type_size(t), NULL);
  }
  if (!rc) rc = wg_mem_alloc(ctx, &r->values, (size_t)n * size + 1);
  if (!rc) rc = wg_mem_alloc(ctx, &r->indices, (size_t)n * 8 + 8);
  if (!rc) rc = wg_mem_alloc(ctx, &r->count, 8);
  return rc;
}

static int launch(wg_context *ctx, const compact_run *r, const wg_spec *spec, uint64_t n) {
  return wg_compact(ctx, spec, r->dev, (size_t)r->ninputs, n, r->params,
                    (size_t)spec->nparams, r->values, r->indices, r->count, NULL);
}

int wg_cli_compact(wg_context *ctx, const wg_spec *spec, uint64_t n, const double *params,
                   size_t nparams, uint64_t seed, int reps) {
  char text[1200];
  if (wg_spec_format(text, sizeof text, spec) < 0) snprintf(text, sizeof text, "compact");
  wg_device_info info;
  compact_run r;
  int rc = wg_device_get_info(ctx, &info);
  if (!rc) rc = run_make(ctx, &r, spec, n, params, nparams, seed);
  else memset(&r, 0, sizeof r);
  const size_t size = wg_type_size(spec->type);
  double t0 = 0, us = 0;
  if (!rc) rc = launch(ctx, &r, spec, n); /* compiles or loads */
  if (!rc) rc = wg_stream_sync(ctx, NULL);
  if (!rc && reps == 0) {
    /* run: poisoned outputs, one launch, checked exactly. */
    rc = wg_memset_d8(ctx, r.values, 0xa7, (size_t)n * size + 1, NULL);
    if (!rc) rc = wg_memset_d8(ctx, r.indices, 0xa7, (size_t)n * 8 + 8, NULL);
    if (!rc) rc = wg_stream_sync(ctx, NULL);
    t0 = seconds();
    if (!rc) rc = launch(ctx, &r, spec, n);
    if (!rc) rc = wg_stream_sync(ctx, NULL);
    us = (seconds() - t0) * 1e6;
    uint64_t count = 0;
    r.keep = malloc((size_t)n + 1);
    r.got_values = malloc((size_t)n * size + 1);
    r.got_indices = malloc((size_t)n * 8 + 8);
    if (!rc && (!r.keep || !r.got_values || !r.got_indices))
      rc = wg_fail(ctx, WG_ENOMEM, "out of host memory");
    if (!rc) rc = wg_memcpy_dtoh(ctx, &count, r.count, 8, NULL);
    if (!rc) rc = wg_memcpy_dtoh(ctx, r.got_values, r.values, (size_t)n * size, NULL);
    if (!rc) rc = wg_memcpy_dtoh(ctx, r.got_indices, r.indices, (size_t)n * 8, NULL);
    if (!rc)
      rc = wg_compact_keep_host(ctx, spec, (const void *const *)r.host, n, r.params, r.keep);
    if (!rc) {
      wg_oracle_report report;
      wg_oracle_report_init(&report);
      wg_oracle_compact_check(&report, spec->type, r.host[0], n, r.keep, r.got_values,
                              r.got_indices, count, 0xa7);
      const bool pass = report.mismatches == 0;
      printf("%s: %s  n=%" PRIu64 " kept=%" PRIu64 " seed=0x%016" PRIx64
             "  launch+wait %.3f us\n", pass ? "PASS" : "FAIL", text, n, count, seed, us);
      if (!pass) printf("  first difference: %s\n", report.first);
      run_free(ctx, &r);
      return pass ? WG_EXIT_OK : WG_EXIT_FAIL;
    }
  } else if (!rc) {
    /* bench: warm-up, then `reps` launches queued back to back and one
     * wait: the mean time a launch (launch gaps included). */
    for (int i = 0; !rc && i < 3; i++) rc = launch(ctx, &r, spec, n);
    if (!rc) rc = wg_stream_sync(ctx, NULL);
    t0 = seconds();
    for (int i = 0; !rc && i < reps; i++) rc = launch(ctx, &r, spec, n);
    if (!rc) rc = wg_stream_sync(ctx, NULL);
    us = (seconds() - t0) * 1e6 / reps;
    uint64_t count = 0;
    if (!rc) rc = wg_memcpy_dtoh(ctx, &count, r.count, 8, NULL);
    if (!rc) {
      printf("%s on %s (sm_%d), n=%" PRIu64 ", kept %" PRIu64 ", %d reps\n", text,
             info.name, info.arch, n, count, reps);
      printf("  mean %.3f us a launch  %.3f G elements/s  %.1f GB/s (read + kept values "
             "and indices written)\n", us, (double)n / us * 1e-3,
             ((double)n * (double)size + (double)count * ((double)size + 8)) / us * 1e-3);
    }
  }
  const int code = rc ? wg_cli_fail(ctx, rc, text) : WG_EXIT_OK;
  run_free(ctx, &r);
  return code;
}
