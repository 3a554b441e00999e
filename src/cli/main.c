/*
 * main.c - the `warpgen` command: dispatch to subcommands, help, and the
 * helpers every subcommand shares: failure messages, quoting user text,
 * strict numbers, and the check that standard output was really written.
 */
#include "cli.h"
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wg_cli_source(int argc, char **argv); /* cmd_gen.c */
int wg_cli_ptx(int argc, char **argv);
int wg_cli_cubin(int argc, char **argv);
int wg_cli_sass(int argc, char **argv);
int wg_cli_show(int argc, char **argv);
int wg_cli_list(int argc, char **argv);
int wg_cli_info(int argc, char **argv);

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
  {"show", wg_cli_show, "spec, source, PTX and SASS of one kernel (default: a sum)"},
  {"source", wg_cli_source, "print the CUDA source for SPEC"},
  {"ptx", wg_cli_ptx, "print the PTX for SPEC"},
  {"cubin", wg_cli_cubin, "write the cubin for SPEC to a file (-o FILE)"},
  {"sass", wg_cli_sass, "print the SASS for SPEC (needs nvdisasm or cuobjdump)"},
  {"list", wg_cli_list, "print every valid spec, filtered by words"},
  {"info", wg_cli_info, "versions, architectures, folders, devices"},
  {"run", wg_cli_run, "run SPEC on the GPU and check it against the CPU"},
  {"bench", wg_cli_bench, "time SPEC on the GPU"},
  {"cache", wg_cli_cache, "the disk cache: path, stats, clear, prune"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: warpgen COMMAND [ARGS]   (warpgen COMMAND --help for more)\n\n"
             "Writes GPU warp kernels at run time and shows what they compile to.\n\n"
             "commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nA SPEC is one quoted argument, e.g. 'reduce f32 sum width=16 "
             "variant=xor arch=sm_90'\n(see README.md, \"Specs\").\n");
}

const char *wg_cli_quote(char *buf, size_t size, const char *text) {
  return wg_escape(buf, size, text, text ? strlen(text) : 0, false);
}

int wg_cli_fail(wg_context *ctx, int status, const char *what) {
  const char *msg = ctx ? wg_errmsg(ctx) : "";
  if (!*msg) msg = wg_strerror(status);
  /* The message may quote a path or a whole NVRTC log: lines stay, raw
   * bytes do not, and nothing is cut (at most 4 bytes out per byte in). */
  size_t len = strlen(msg), size = 4 * len + 1;
  char small[1024], name[WG_CLI_QUOTE_MAX];
  char *safe = size <= sizeof small ? small : malloc(size);
  if (!safe) safe = small, size = sizeof small;
  fprintf(stderr, "warpgen: %s: %s\n", wg_cli_quote(name, sizeof name, what),
          wg_escape(safe, size, msg, len, true));
  if (safe != small) free(safe);
  switch (status) {
  case WG_ESPEC:
  case WG_EINVAL: return WG_EXIT_USAGE;
  case WG_ENODRIVER:
  case WG_ENODEVICE: return WG_EXIT_NOGPU;
  default: return WG_EXIT_FAIL;
  }
}

int wg_cli_context(wg_context **ctx) {
  int rc = wg_context_create(ctx, NULL);
  if (rc) fprintf(stderr, "warpgen: cannot create a context: %s\n", wg_strerror(rc));
  return rc;
}

int wg_cli_spec(wg_context *ctx, wg_spec *spec, const char *text) {
  int rc = wg_spec_parse(ctx, spec, text);
  if (rc) wg_cli_fail(ctx, rc, "bad spec");
  return rc;
}

/* "0x" hex or decimal digits at *p; a leading 0 before more digits is
 * refused, as C would read it in octal and people in decimal. */
static bool scan_number(const char **p, uint64_t *v) {
  const char *s = *p;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s += 2;
    if (!wg_scan_u64(&s, 16, v)) return false;
    *p = s;
    return true;
  }
  if (s[0] == '0' && s[1] >= '0' && s[1] <= '9') return false;
  return wg_scan_u64(p, 10, v);
}

/* The whole text as a number: N, 0xN, or 2^K with an optional +C. */
static bool parse_number(const char *text, uint64_t *out) {
  const char *p = text;
  uint64_t v, k, c;
  if (!scan_number(&p, &v)) return false;
  if (*p == '^') {
    p++;
    if (v != 2 || !wg_scan_u64(&p, 10, &k) || k > 63) return false;
    v = UINT64_C(1) << k;
    if (*p == '+') {
      p++;
      if (!scan_number(&p, &c) || c > UINT64_MAX - v) return false;
      v += c;
    }
  }
  if (*p) return false;
  *out = v;
  return true;
}

int wg_cli_number(const char *cmd, const char *option, const char *text,
                  uint64_t lo, uint64_t hi, uint64_t *out) {
  uint64_t v;
  if (text && parse_number(text, &v) && v >= lo && v <= hi) {
    *out = v;
    return 0;
  }
  char quoted[WG_CLI_QUOTE_MAX];
  fprintf(stderr, "warpgen %s: %s: '%s' is not a number from %llu to %llu "
          "(N, 0xN or 2^K+C)\n", cmd, option,
          text ? wg_cli_quote(quoted, sizeof quoted, text) : "",
          (unsigned long long)lo, (unsigned long long)hi);
  return WG_EXIT_USAGE;
}

int wg_cli_arch(const char *cmd, const char *option, const char *text, int *arch) {
  uint64_t v;
  const char *digits = text && !strncmp(text, "sm_", 3) ? text + 3 : text;
  int rc = wg_cli_number(cmd, option, digits, 1, 10000, &v);
  if (!rc) *arch = (int)v;
  return rc;
}

/* A command that printed its result into a full disk or a closed pipe has
 * failed, whatever it thinks: stdio only says so at the flush. */
static int finish_stdout(int code) {
  errno = 0;
  int err = fflush(stdout) != 0 || ferror(stdout) ? (errno ? errno : EIO) : 0;
  /* EBADF: standard output was closed and nothing was written to it. */
  if (fclose(stdout) != 0 && !err && errno != EBADF) err = errno;
  if (!err) return code;
  fprintf(stderr, "warpgen: writing standard output failed: %s\n", strerror(err));
  return code ? code : WG_EXIT_FAIL;
}

static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return WG_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return WG_EXIT_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("warpgen %s\n", wg_version());
    return WG_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  char quoted[WG_CLI_QUOTE_MAX];
  fprintf(stderr, "warpgen: unknown command '%s'\n",
          wg_cli_quote(quoted, sizeof quoted, argv[1]));
  usage(stderr);
  return WG_EXIT_USAGE;
}

int main(int argc, char **argv) {
  /* Past a file-size limit (ulimit -f) the kernel kills a process with
   * SIGXFSZ at the first write, before the library can see EFBIG. The tool,
   * not the library, owns its signals: ignoring it turns that into a failed
   * cache store (which only costs speed) while the result is still
   * printed. */
  signal(SIGXFSZ, SIG_IGN);
  return finish_stdout(dispatch(argc, argv));
}
