/*
 * run_scan.c - what `warpgen run` and `warpgen bench` do differently for
 * the scans (scan-array, exscan-array, scan-rows, exscan-rows): the kind of
 * spec, the output's size, the launch through the public calls, and the
 * check of every output against the scan oracle (tests/oracle_scan.c).
 * cmd_run.c keeps the shape, the buffers and the timing, as for the
 * reductions.
 */
#include "cli.h"
#include "oracle.h"

int wg_cli_scan_kind(const wg_spec *spec) {
  switch (spec->primitive) {
  case WG_SCAN_ARRAY:
  case WG_EXSCAN_ARRAY: return 1;
  case WG_SCAN_ROWS:
  case WG_EXSCAN_ROWS: return 2;
  default: return 0;
  }
}

size_t wg_cli_scan_out_size(const wg_spec *spec) {
  const int t = wg_scan_spec_output_type(spec);
  return t < 0 ? 0 : wg_type_size((wg_type)t);
}

const char *wg_cli_scan_uncheckable(const wg_spec *spec) {
  if (spec->map || spec->combine)
    return "run checks scans of the built-in operators; a map= or combine= "
           "scan can be timed with bench";
  return NULL;
}

int wg_cli_scan_launch(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t rows,
                       uint64_t cols, uint64_t out) {
  if (wg_cli_scan_kind(spec) == 1) return wg_scan_array_spec(ctx, spec, in, cols, out, NULL);
  return wg_scan_rows_spec(ctx, spec, in, rows, cols, cols, out, cols, NULL);
}

void wg_cli_scan_check(wg_oracle_report *report, const wg_spec *spec, const void *in,
                       uint64_t rows, uint64_t cols, const void *out) {
  wg_oracle_report_init(report);
  const bool exclusive =
      spec->primitive == WG_EXSCAN_ARRAY || spec->primitive == WG_EXSCAN_ROWS;
  wg_oracle_scan_check(report, spec->type, spec->op, exclusive, in, rows, cols, cols, out,
                       cols);
}
