/*
 * main.c - the `warpgen` command: dispatch to subcommands, help, and the
 * helpers every subcommand shares.
 */
#include "cli.h"

#include <stdio.h>
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

int wg_cli_fail(wg_context *ctx, int status, const char *what) {
  const char *msg = ctx ? wg_errmsg(ctx) : "";
  fprintf(stderr, "warpgen: %s: %s\n", what, *msg ? msg : wg_strerror(status));
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

int main(int argc, char **argv) {
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
  fprintf(stderr, "warpgen: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return WG_EXIT_USAGE;
}
