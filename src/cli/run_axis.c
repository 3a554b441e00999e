/*
 * run_axis.c - reduce-axis specs in `warpgen run` and `warpgen bench`: the
 * input is a contiguous random array of --shape (default: the 1-d array of
 * --n), reduced over --axis (default 0) with wg_reduce_axis, and checked
 * by gathering each output's elements into a row for the row oracle.
 */
#include "run_axis.h"

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A comma-separated list of integers into out[0..*count). */
static int parse_list(const char *cmd, const char *option, const char *value,
                      int64_t *out, int *count, int64_t lo) {
  *count = 0;
  const char *p = value;
  char quoted[WG_CLI_QUOTE_MAX];
  while (p && *p) {
    char *end = NULL;
    const long long v = strtoll(p, &end, 10);
    if (end == p || (*end && *end != ',') || v < lo || *count == WG_MAX_DIMS) {
      fprintf(stderr, "warpgen %s: %s: '%s' is not a list of up to %d integers%s\n", cmd,
              option, wg_cli_quote(quoted, sizeof quoted, value), WG_MAX_DIMS,
              lo == 0 ? " >= 0" : "");
      return WG_EXIT_USAGE;
    }
    out[(*count)++] = v;
    p = *end ? end + 1 : end;
  }
  if (*count == 0) {
    fprintf(stderr, "warpgen %s: %s needs a value\n", cmd, option);
    return WG_EXIT_USAGE;
  }
  return 0;
}

int wg_run_axis_option(wg_run_axis *a, const char *cmd, const char *option,
                       const char *value) {
  int64_t list[WG_MAX_DIMS];
  int count = 0;
  if (!strcmp(option, "--shape")) {
    const int bad = parse_list(cmd, option, value, a->shape, &a->ndim, 0);
    a->have_shape = !bad;
    return bad;
  }
  const int bad = parse_list(cmd, option, value, list, &count, INT64_MIN);
  for (int k = 0; k < count; k++) a->axes[k] = list[k] < -WG_MAX_DIMS || list[k] > WG_MAX_DIMS
                                                   ? WG_MAX_DIMS : (int)list[k];
  a->naxes = count;
  a->have_axis = !bad;
  return bad;
}

const char *wg_run_axis_shape(wg_run_axis *a, uint64_t *n, uint64_t *outputs,
                              uint64_t *len) {
  if (!a->have_shape) {
    a->ndim = 1;
    a->shape[0] = (int64_t)(*n > INT64_MAX ? INT64_MAX : *n);
  }
  if (!a->have_axis) {
    a->naxes = 1;
    a->axes[0] = 0;
  }
  bool reduced[WG_MAX_DIMS] = {false};
  for (int k = 0; k < a->naxes; k++) {
    if (a->axes[k] < 0) a->axes[k] += a->ndim;
    if (a->axes[k] < 0 || a->axes[k] >= a->ndim) return "--axis is outside --shape";
    if (reduced[a->axes[k]]) return "--axis names a dimension twice";
    reduced[a->axes[k]] = true;
  }
  uint64_t total = 1, out = 1, red = 1;
  int64_t step = 1;
  for (int d = a->ndim - 1; d >= 0; d--) {
    const uint64_t s = (uint64_t)a->shape[d];
    if (s && (total > UINT64_MAX / s || (uint64_t)step > INT64_MAX / (s ? s : 1)))
      return "--shape is past 2^63 elements";
    a->strides[d] = step;
    step *= (int64_t)(s ? s : 1);
    total *= s;
    if (reduced[d]) red *= s;
    else out *= s;
  }
  *n = total;
  *outputs = out;
  *len = red;
  return NULL;
}

int wg_run_axis_launch(wg_context *ctx, const wg_run_axis *a, const wg_reduction *r,
                       uint64_t in, const wg_scalar *params, size_t nparams, uint64_t out) {
  return wg_reduce_axis(ctx, r, &in, 1, a->ndim, a->shape, a->strides, a->axes, a->naxes,
                        params, nparams, out, NULL);
}

void wg_run_axis_check(wg_oracle_report *report, const wg_run_axis *a, wg_type type,
                       wg_operator op, const void *in, const wg_scalar *params,
                       size_t nparams, const void *out) {
  wg_oracle_report_init(report);
  uint64_t rows = 0, cols = 0;
  const size_t size = wg_type_size(type);
  wg_oracle_axis_gather(NULL, in, size, a->ndim, a->shape, a->strides, a->axes, a->naxes,
                        &rows, &cols);
  void *gathered = malloc(rows * cols * size + 1);
  if (!gathered) {
    report->mismatches = 1;
    snprintf(report->first, sizeof report->first, "out of host memory for the check");
    return;
  }
  wg_oracle_axis_gather(gathered, in, size, a->ndim, a->shape, a->strides, a->axes,
                        a->naxes, &rows, &cols);
  wg_oracle_rows_check(report, type, op, gathered, rows, cols, params, nparams, out);
  free(gathered);
}
