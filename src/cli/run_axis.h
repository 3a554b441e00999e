/*
 * run_axis.h - what `warpgen run` and `warpgen bench` need for reduce-axis
 * specs (run_axis.c): the --shape and --axis options, the launch over a
 * contiguous random array of that shape, and the oracle's check.
 */
#ifndef WG_CLI_RUN_AXIS_H
#define WG_CLI_RUN_AXIS_H

#include "oracle.h"
#include "warpgen.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct wg_run_axis {
  int ndim, naxes;
  int64_t shape[WG_MAX_DIMS], strides[WG_MAX_DIMS]; /* strides: contiguous */
  int axes[WG_MAX_DIMS];
  bool have_shape, have_axis;
} wg_run_axis;

/* Parses --shape A,B,... (sizes) or --axis K[,K...] (negative from the end)
 * into a; 0, or WG_EXIT_USAGE after printing why. */
int wg_run_axis_option(wg_run_axis *a, const char *cmd, const char *option,
                       const char *value);
/* Resolves a (contiguous strides, negative axes, the default axis 0) and
 * the job's counts: n elements in, `outputs` rows of `len` elements. NULL,
 * or why the options do not make a shape. */
const char *wg_run_axis_shape(wg_run_axis *a, uint64_t *n, uint64_t *outputs,
                              uint64_t *len);
/* One wg_reduce_axis launch on the default stream. */
int wg_run_axis_launch(wg_context *ctx, const wg_run_axis *a, const wg_reduction *r,
                       uint64_t in, const wg_scalar *params, size_t nparams, uint64_t out);
/* Checks the outputs against the oracle (the elements gathered into rows). */
void wg_run_axis_check(wg_oracle_report *report, const wg_run_axis *a, wg_type type,
                       wg_operator op, const void *in, const wg_scalar *params,
                       size_t nparams, const void *out);

#endif /* WG_CLI_RUN_AXIS_H */
