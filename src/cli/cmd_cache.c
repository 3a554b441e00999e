/*
 * cmd_cache.c - `warpgen cache path|stats|clear|prune`: look at and tidy
 * the disk cache. Goes through the public API like any host would, plus
 * the size syntax WARPGEN_CACHE_MAX uses (cache.h) so that --max reads the
 * same way.
 */
#include "cli.h"

#include "cache.h"
#include "warpgen.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char cache_usage[] =
    "usage: warpgen cache path|stats|clear|prune [--max BYTES] [--dir DIR]\n"
    "\n"
    "  path    print the cache folder\n"
    "  stats   entries, bytes and the last problem with the folder\n"
    "  clear   remove every entry (files warpgen did not write are kept)\n"
    "  prune   evict least-recently-used entries until the folder holds at\n"
    "          most BYTES (default: the cap, WARPGEN_CACHE_MAX or 256M) and\n"
    "          remove temporaries left by crashed writers\n"
    "\n"
    "  --max BYTES  for prune: a size such as 100000, 64K, 200M or 1G\n"
    "  --dir DIR    use DIR instead of WARPGEN_CACHE_DIR,\n"
    "               $XDG_CACHE_HOME/warpgen or ~/.cache/warpgen\n"
    "\n"
    "WARPGEN_CACHE=off disables the disk cache.\n";

/* 123456789 -> "117.7 MiB", for people; the exact count is printed too. */
static const char *human_bytes(char *buf, size_t size, uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, size, "%" PRIu64 " B", bytes);
  else
    snprintf(buf, size, "%.1f %s", v, units[u]);
  return buf;
}

typedef struct cache_args {
  const char *action;
  const char *dir;
  uint64_t max_bytes;
  bool has_max;
} cache_args;

/* 0, or WG_EXIT_USAGE; *done after --help. */
static int parse_args(cache_args *a, int argc, char **argv, bool *done) {
  memset(a, 0, sizeof *a);
  *done = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(cache_usage, stdout);
      *done = true;
      return 0;
    } else if (strcmp(arg, "--max") == 0 || strcmp(arg, "--dir") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "warpgen cache: %s needs a value\n", arg);
        return WG_EXIT_USAGE;
      }
      const char *val = argv[++i];
      if (arg[2] == 'd') {
        a->dir = val;
      } else if (!wg_cache_parse_size(val, &a->max_bytes) ||
                 a->max_bytes == 0) {
        char quoted[WG_CLI_QUOTE_MAX];
        fprintf(stderr, "warpgen cache: --max %s: not a size (e.g. 64M)\n",
                wg_cli_quote(quoted, sizeof quoted, val));
        return WG_EXIT_USAGE;
      } else {
        a->has_max = true;
      }
    } else if (arg[0] == '-' || a->action) {
      char quoted[WG_CLI_QUOTE_MAX];
      fprintf(stderr, "warpgen cache: unexpected '%s'\n%s",
              wg_cli_quote(quoted, sizeof quoted, arg), cache_usage);
      return WG_EXIT_USAGE;
    } else {
      a->action = arg;
    }
  }
  if (!a->action) {
    fputs(cache_usage, stderr);
    return WG_EXIT_USAGE;
  }
  if (a->has_max && strcmp(a->action, "prune") != 0) {
    fprintf(stderr, "warpgen cache: --max goes with prune only\n");
    return WG_EXIT_USAGE;
  }
  return 0;
}

static int cache_stats_read(wg_context *ctx, wg_cache_stats *st) {
  int rc = wg_cache_stats_get(ctx, st);
  if (rc != WG_OK) wg_cli_fail(ctx, rc, "cache");
  return rc;
}

static int print_stats(wg_context *ctx) {
  wg_cache_stats st;
  char h[32];
  if (cache_stats_read(ctx, &st) != WG_OK) return WG_EXIT_FAIL;
  const char *dir = wg_cache_dir(ctx);
  char quoted[sizeof st.last_error * 4];
  printf("folder:      %s\n", dir ? wg_cli_quote(quoted, sizeof quoted, dir) : "(none)");
  printf("enabled:     %s\n", st.enabled ? "yes" : "no");
  printf("entries:     %" PRIu64 "\n", st.entries);
  printf("bytes:       %" PRIu64 " (%s)\n", st.bytes,
         human_bytes(h, sizeof h, st.bytes));
  printf("cap:         %" PRIu64 " (%s)\n", st.max_bytes,
         human_bytes(h, sizeof h, st.max_bytes));
  printf("last error:  %s\n", st.last_error[0]
             ? wg_cli_quote(quoted, sizeof quoted, st.last_error) : "none");
  return WG_EXIT_OK;
}

static int run_clear_or_prune(wg_context *ctx, const cache_args *a) {
  wg_cache_stats before, after;
  char h[32];
  if (cache_stats_read(ctx, &before) != WG_OK) return WG_EXIT_FAIL;
  bool prune = strcmp(a->action, "prune") == 0;
  int rc = prune ? wg_cache_prune(ctx, a->max_bytes) : wg_cache_clear(ctx);
  if (rc != WG_OK) {
    wg_cli_fail(ctx, rc, "cache");
    return WG_EXIT_FAIL;
  }
  if (cache_stats_read(ctx, &after) != WG_OK) return WG_EXIT_FAIL;
  uint64_t gone = before.entries > after.entries
                      ? before.entries - after.entries : 0;
  printf("removed %" PRIu64 " %s; %" PRIu64 " left, %" PRIu64 " bytes (%s)\n",
         gone, gone == 1 ? "entry" : "entries", after.entries, after.bytes,
         human_bytes(h, sizeof h, after.bytes));
  return WG_EXIT_OK;
}

int wg_cli_cache(int argc, char **argv) {
  cache_args a;
  bool done;
  int rc = parse_args(&a, argc, argv, &done);
  if (rc != 0 || done) return rc;
  bool known = strcmp(a.action, "path") == 0 ||
               strcmp(a.action, "stats") == 0 ||
               strcmp(a.action, "clear") == 0 ||
               strcmp(a.action, "prune") == 0;
  if (!known) {
    char quoted[WG_CLI_QUOTE_MAX];
    fprintf(stderr, "warpgen cache: unknown action '%s'\n%s",
            wg_cli_quote(quoted, sizeof quoted, a.action), cache_usage);
    return WG_EXIT_USAGE;
  }
  wg_options opt = WG_OPTIONS_INIT;
  opt.cache_dir = a.dir;
  wg_context *ctx = NULL;
  rc = wg_context_create(&ctx, &opt);
  if (rc != WG_OK) {
    fprintf(stderr, "warpgen cache: cannot create a context: %s\n",
            wg_strerror(rc));
    return WG_EXIT_FAIL;
  }
  if (strcmp(a.action, "stats") == 0) {
    rc = print_stats(ctx);
  } else if (!wg_cache_dir(ctx)) {
    wg_cache_stats st;
    wg_cache_stats_get(ctx, &st);
    char quoted[sizeof st.last_error * 4];
    fprintf(stderr, "warpgen cache: the disk cache is disabled%s%s\n",
            st.last_error[0] ? ": " : " (WARPGEN_CACHE=off)",
            wg_cli_quote(quoted, sizeof quoted, st.last_error));
    rc = WG_EXIT_FAIL;
  } else if (strcmp(a.action, "path") == 0) {
    printf("%s\n", wg_cache_dir(ctx));
    rc = WG_EXIT_OK;
  } else {
    rc = run_clear_or_prune(ctx, &a);
  }
  wg_context_destroy(ctx);
  return rc;
}
