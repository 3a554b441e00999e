/*
 * cli.h - what the subcommands of the `warpgen` tool share: exit codes and
 * each subcommand's entry point (argv[0] is the subcommand's name).
 */
#ifndef WG_CLI_H
#define WG_CLI_H

#include "warpgen.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
  WG_EXIT_OK = 0,
  WG_EXIT_FAIL = 1,   /* the library failed, or a result was wrong */
  WG_EXIT_USAGE = 2,  /* bad command line or bad spec */
  WG_EXIT_NOTOOL = 3, /* no nvdisasm or cuobjdump for `sass` */
  WG_EXIT_NOGPU = 4   /* the command needs a GPU and there is none */
};

/* Prints "warpgen: <what>: <message>" to stderr and returns the exit code
 * that suits status. */
int wg_cli_fail(wg_context *ctx, int status, const char *what);
/* Creates a context, printing the reason on failure. */
int wg_cli_context(wg_context **ctx);
/* Parses argv[i] as a spec, printing the reason on failure. */
int wg_cli_spec(wg_context *ctx, wg_spec *spec, const char *text);

/* User text for a message, in buf: every byte that is not printable ASCII
 * as \xNN, so that no argument reaches the terminal raw; cut with "..." to
 * fit. Returns buf. */
#define WG_CLI_QUOTE_MAX 256
const char *wg_cli_quote(char *buf, size_t size, const char *text);

/* The one parser of numbers on the command line: the whole of text must
 * be N (decimal), 0xN (hex) or 2^K with an optional +C (boundary sizes such
 * as 2^31+33), with no sign, space or overflow, and lie in [lo, hi].
 * Returns 0 with *out set, or WG_EXIT_USAGE after printing
 * "warpgen CMD: OPTION: 'TEXT' is not a number from LO to HI". */
int wg_cli_number(const char *cmd, const char *option, const char *text,
                  uint64_t lo, uint64_t hi, uint64_t *out);
/* An architecture: "sm_NN" or "NN", through wg_cli_number. */
int wg_cli_arch(const char *cmd, const char *option, const char *text, int *arch);

/* Histogram jobs of `run` and `bench` (run_hist.c). */
struct wg_oracle_report;
/* Float keys without map=: the range comes from --param (lo, hi). */
bool wg_cli_hist_range_form(const wg_spec *s);
/* The parameters of the call from --param's values: [0, 1] for the range
 * when none are given; a map's, each converted to its declared type.
 * Returns how many. */
size_t wg_cli_hist_params(const wg_spec *s, const wg_scalar *given, size_t ngiven,
                          wg_scalar out[WG_MAX_PARAMS]);
/* n keys for s: the oracle's edge mix (edges) or uniform keys. */
void wg_cli_hist_fill(const wg_spec *s, const wg_scalar *params, bool edges, void *in,
                      uint64_t n, uint64_t seed);
/* Checks the bins at `out` against the oracle; WG_OK or WG_ENOMEM. */
int wg_cli_hist_check(struct wg_oracle_report *report, const wg_spec *s,
                      const wg_scalar *params, const void *in, uint64_t n,
                      const void *out);

int wg_cli_run(int argc, char **argv);   /* cmd_run.c */
int wg_cli_bench(int argc, char **argv); /* cmd_run.c */
int wg_cli_info_devices(void);           /* cmd_run.c */
int wg_cli_cache(int argc, char **argv); /* cmd_cache.c */
/* `run` (reps 0: one checked launch) or `bench` (reps timed launches) of
 * a compact spec over n random elements; params: the --param values, one
 * a declared parameter. Returns an exit code. (run_compact.c) */
int wg_cli_compact(wg_context *ctx, const wg_spec *spec, uint64_t n, const double *params,
                   size_t nparams, uint64_t seed, int reps);

/* The fused row kernels for run and bench (run_rownorm.c): is the spec
 * one; one launch over rows x cols (no weight or bias, eps 1e-5, packed
 * rows); the oracle's report on every output element. */
struct wg_oracle_report;
bool wg_cli_rownorm_is(const wg_spec *spec);
int wg_cli_rownorm_launch(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t out,
                          uint64_t rows, uint64_t cols);
void wg_cli_rownorm_check(struct wg_oracle_report *report, const wg_spec *spec,
                          const void *in, uint64_t rows, uint64_t cols, const void *out);
/* The scans in run and bench (run_scan.c): 1 for scan-array and
 * exscan-array, 2 for scan-rows and exscan-rows, 0 for any other spec; the
 * output's element size (0: an invalid spec); why run cannot check a scan
 * spec (NULL: it can); one launch over rows x cols touching rows on the
 * default stream; the oracle's check of every output. */
struct wg_oracle_report;
int wg_cli_scan_kind(const wg_spec *spec);
size_t wg_cli_scan_out_size(const wg_spec *spec);
const char *wg_cli_scan_uncheckable(const wg_spec *spec);
int wg_cli_scan_launch(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t rows,
                       uint64_t cols, uint64_t out);
void wg_cli_scan_check(struct wg_oracle_report *report, const wg_spec *spec, const void *in,
                       uint64_t rows, uint64_t cols, const void *out);

#endif /* WG_CLI_H */
