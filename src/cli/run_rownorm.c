/*
 * run_rownorm.c - `warpgen run` and `warpgen bench` of the fused row
 * kernels (softmax-rows, log-softmax-rows, layernorm-rows, rmsnorm-rows):
 * the launch through wg_rownorm_spec, so the spec's cols= picks the shape,
 * and the check of every output element against the float64 oracle
 * (tests/oracle_rownorm.c). cmd_run.c makes the job, buffers and timing.
 */
#include "cli.h"
#include "oracle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define CLI_EPS 1e-5

bool wg_cli_rownorm_is(const wg_spec *spec) {
  return spec->primitive == WG_SOFTMAX_ROWS || spec->primitive == WG_LOG_SOFTMAX_ROWS ||
         spec->primitive == WG_LAYERNORM_ROWS || spec->primitive == WG_RMSNORM_ROWS;
}

int wg_cli_rownorm_launch(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t out,
                          uint64_t rows, uint64_t cols) {
  return wg_rownorm_spec(ctx, spec, in, 0, 0, out, rows, cols, cols, cols, CLI_EPS, NULL);
}

void wg_cli_rownorm_check(wg_oracle_report *report, const wg_spec *spec, const void *in,
                          uint64_t rows, uint64_t cols, const void *out) {
  double *value = malloc((cols + 1) * sizeof *value);
  double *scale = malloc((cols + 1) * sizeof *scale);
  if (!value || !scale) {
    snprintf(report->first, sizeof report->first, "out of host memory for the oracle");
    report->mismatches = 1;
    free(value);
    free(scale);
    return;
  }
  wg_rownorm_want want = {cols, value, scale};
  for (uint64_t r = 0; r < rows; r++) {
    wg_oracle_rownorm_row(&want, spec->primitive, spec->type, in, r * cols, cols, NULL, NULL,
                          CLI_EPS);
    uint64_t col = 0;
    char why[256];
    if (!wg_oracle_rownorm_check(&want, spec->type, out, r * cols, &col, why, sizeof why)) {
      if (!report->mismatches) {
        report->first_index = r * cols + col;
        snprintf(report->first, sizeof report->first, "row %" PRIu64 ", %s", r, why);
      }
      report->mismatches++;
    }
    report->checked += cols;
  }
  free(value);
  free(scale);
}
