/*
 * cmd_gen.c - the subcommands that need no GPU: source, ptx, cubin, sass,
 * show, list and info.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_SPEC "reduce f32 sum width=32 variant=auto"

/* The spec is the words that are not options, joined: both
 * `warpgen ptx 'reduce f32 sum'` and `warpgen ptx reduce f32 sum` work.
 * `-o FILE` is taken out when out_file is not NULL. Returns 0, or an exit
 * code after printing the problem. */
static int spec_words(int argc, char **argv, char *spec, size_t size,
                      const char **out_file, const char *help) {
  size_t used = 0;
  spec[0] = '\0';
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(help, stdout);
      return -1;
    }
    if (out_file && !strcmp(argv[i], "-o")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "warpgen %s: -o needs a file name\n", argv[0]);
        return WG_EXIT_USAGE;
      }
      *out_file = argv[++i];
      continue;
    }
    if (argv[i][0] == '-') {
      char quoted[WG_CLI_QUOTE_MAX];
      fprintf(stderr, "warpgen %s: unknown option '%s'\n%s", argv[0],
              wg_cli_quote(quoted, sizeof quoted, argv[i]), help);
      return WG_EXIT_USAGE;
    }
    int n = snprintf(spec + used, size - used, "%s%s", used ? " " : "", argv[i]);
    if (n < 0 || (size_t)n >= size - used) {
      fprintf(stderr, "warpgen %s: spec too long\n", argv[0]);
      return WG_EXIT_USAGE;
    }
    used += (size_t)n;
  }
  if (!used) {
    fprintf(stderr, "warpgen %s: a SPEC is needed\n%s", argv[0], help);
    return WG_EXIT_USAGE;
  }
  return 0;
}

/* Sets up ctx and spec for a one-spec command; returns 0 or an exit code
 * (-1 means --help was printed). */
static int begin(int argc, char **argv, wg_context **ctx, wg_spec *spec,
                 const char **out_file, const char *help) {
  char text[512];
  int rc = spec_words(argc, argv, text, sizeof text, out_file, help);
  if (rc) return rc;
  if (wg_cli_context(ctx)) return WG_EXIT_FAIL;
  if (wg_cli_spec(*ctx, spec, text)) {
    wg_context_destroy(*ctx);
    return WG_EXIT_USAGE;
  }
  return 0;
}

static int finish(wg_context *ctx, int code) {
  wg_context_destroy(ctx);
  return code < 0 ? WG_EXIT_OK : code;
}

/* source and ptx differ only in which text they fetch. */
typedef int (*text_getter)(wg_context *ctx, char **out, const wg_spec *spec);

static int get_ptx(wg_context *ctx, char **out, const wg_spec *spec) {
  return wg_ptx(ctx, out, NULL, spec);
}

static int print_text(int argc, char **argv, const char *help, text_getter get) {
  wg_context *ctx;
  wg_spec spec;
  int rc = begin(argc, argv, &ctx, &spec, NULL, help);
  if (rc) return rc < 0 ? WG_EXIT_OK : rc;
  char *text;
  rc = get(ctx, &text, &spec);
  if (rc) return finish(ctx, wg_cli_fail(ctx, rc, argv[0]));
  fputs(text, stdout);
  wg_free(text);
  return finish(ctx, WG_EXIT_OK);
}

int wg_cli_source(int argc, char **argv) {
  return print_text(argc, argv,
                    "usage: warpgen source SPEC\n  Prints the CUDA source warpgen "
                    "generates for SPEC.\n",
                    wg_source);
}

int wg_cli_ptx(int argc, char **argv) {
  return print_text(argc, argv,
                    "usage: warpgen ptx SPEC\n  Prints the PTX NVRTC makes of "
                    "SPEC's source.\n",
                    get_ptx);
}

static int write_file(const char *path, const void *data, size_t len) {
  char quoted[WG_CLI_QUOTE_MAX];
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "warpgen: cannot write '%s': %s\n",
            wg_cli_quote(quoted, sizeof quoted, path), strerror(errno));
    return WG_EXIT_FAIL;
  }
  bool ok = fwrite(data, 1, len, f) == len;
  ok &= fclose(f) == 0;
  if (!ok)
    fprintf(stderr, "warpgen: writing '%s' failed\n",
            wg_cli_quote(quoted, sizeof quoted, path));
  return ok ? WG_EXIT_OK : WG_EXIT_FAIL;
}

int wg_cli_cubin(int argc, char **argv) {
  static const char help[] =
      "usage: warpgen cubin SPEC -o FILE\n  Writes the cubin (ELF) for SPEC to FILE "
      "('-' for standard output).\n";
  wg_context *ctx;
  wg_spec spec;
  const char *out = NULL;
  int rc = begin(argc, argv, &ctx, &spec, &out, help);
  if (rc) return rc < 0 ? WG_EXIT_OK : rc;
  if (!out) {
    fprintf(stderr, "warpgen cubin: -o FILE is needed\n%s", help);
    return finish(ctx, WG_EXIT_USAGE);
  }
  void *cubin;
  size_t len;
  rc = wg_cubin(ctx, &cubin, &len, &spec);
  if (rc) return finish(ctx, wg_cli_fail(ctx, rc, "cubin"));
  if (!strcmp(out, "-"))
    rc = fwrite(cubin, 1, len, stdout) == len ? WG_EXIT_OK : WG_EXIT_FAIL;
  else
    rc = write_file(out, cubin, len);
  wg_free(cubin);
  return finish(ctx, rc);
}

/* --- sass ----------------------------------------------------------------- */

static bool executable_at(char *out, size_t size, const char *dir, const char *name) {
  if (!dir || !*dir) return false;
  int n = snprintf(out, size, "%s/%s", dir, name);
  return n > 0 && (size_t)n < size && access(out, X_OK) == 0;
}

/* Finds nvdisasm (preferred: it prints SASS alone) or cuobjdump: first
 * WARPGEN_NVDISASM, then the toolkit's bin/, then PATH, then the one found
 * when warpgen was configured. */
static bool find_disassembler(char *out, size_t size, bool *is_nvdisasm) {
  const char *env = getenv("WARPGEN_NVDISASM");
  if (env && *env && access(env, X_OK) == 0) {
    snprintf(out, size, "%s", env);
    *is_nvdisasm = !strstr(env, "cuobjdump");
    return true;
  }
  static const char *const tools[] = {"nvdisasm", "cuobjdump"};
  for (int t = 0; t < 2; t++) {
    *is_nvdisasm = t == 0;
    const char *roots[] = {getenv("CUDA_PATH"), getenv("CUDA_HOME"), WG_CUDA_ROOT};
    for (int r = 0; r < 3; r++) {
      char dir[1024];
      if (!roots[r]) continue;
      snprintf(dir, sizeof dir, "%s/bin", roots[r]);
      if (executable_at(out, size, dir, tools[t])) return true;
    }
    const char *path = getenv("PATH");
    char *copy = path ? strdup(path) : NULL;
    for (char *save, *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
         dir = strtok_r(NULL, ":", &save))
      if (executable_at(out, size, dir, tools[t])) {
        free(copy);
        return true;
      }
    free(copy);
  }
  if (*WG_DISASSEMBLER && access(WG_DISASSEMBLER, X_OK) == 0) {
    snprintf(out, size, "%s", WG_DISASSEMBLER);
    *is_nvdisasm = !strstr(WG_DISASSEMBLER, "cuobjdump");
    return true;
  }
  return false;
}

static int print_sass(wg_context *ctx, const wg_spec *spec, bool quiet_missing) {
  char tool[1024];
  bool nvdisasm;
  if (!find_disassembler(tool, sizeof tool, &nvdisasm)) {
    fprintf(quiet_missing ? stdout : stderr,
            "%sno nvdisasm or cuobjdump found (looked at WARPGEN_NVDISASM, the CUDA "
            "toolkit's bin/ and PATH).\nInstall one: 'pip install nvidia-cuda-nvdisasm' "
            "and set WARPGEN_NVDISASM to its bin/nvdisasm,\nor add the CUDA toolkit's "
            "bin/ to PATH.\n", quiet_missing ? "" : "warpgen sass: ");
    return WG_EXIT_NOTOOL;
  }
  void *cubin;
  size_t len;
  int rc = wg_cubin(ctx, &cubin, &len, spec);
  if (rc) return wg_cli_fail(ctx, rc, "sass");
  char path[] = "/tmp/warpgen-sass-XXXXXX";
  int fd = mkstemp(path);
  bool ok = fd >= 0 && write(fd, cubin, len) == (ssize_t)len;
  if (fd >= 0) close(fd);
  wg_free(cubin);
  if (!ok) {
    fprintf(stderr, "warpgen sass: cannot write a temporary cubin: %s\n", strerror(errno));
    if (fd >= 0) unlink(path);
    return WG_EXIT_FAIL;
  }
  char *args[] = {tool, nvdisasm ? "-c" : "-sass", path, NULL};
  fflush(stdout);
  pid_t pid;
  int status = 0;
  rc = posix_spawn(&pid, tool, NULL, NULL, args, environ);
  if (rc == 0) waitpid(pid, &status, 0);
  unlink(path);
  if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "warpgen sass: %s failed\n", tool);
    return WG_EXIT_FAIL;
  }
  return WG_EXIT_OK;
}

int wg_cli_sass(int argc, char **argv) {
  static const char help[] =
      "usage: warpgen sass SPEC\n  Prints the SASS (machine code) of SPEC's cubin "
      "through nvdisasm or cuobjdump\n  (WARPGEN_NVDISASM, the CUDA toolkit, or PATH). "
      "Exit code 3 when neither exists.\n";
  wg_context *ctx;
  wg_spec spec;
  int rc = begin(argc, argv, &ctx, &spec, NULL, help);
  if (rc) return rc < 0 ? WG_EXIT_OK : rc;
  return finish(ctx, print_sass(ctx, &spec, false));
}

/* --- show ----------------------------------------------------------------- */

int wg_cli_show(int argc, char **argv) {
  static const char help[] =
      "usage: warpgen show [SPEC]\n  Shows one kernel end to end: its spec, the "
      "generated source, the PTX, the SASS\n  (when a disassembler exists) and, on a "
      "machine with a GPU, a checked run.\n  Default SPEC: '" DEFAULT_SPEC "'.\n";
  char *dflt[] = {argv[0], DEFAULT_SPEC, NULL};
  if (argc < 2) argc = 2, argv = dflt;
  wg_context *ctx;
  wg_spec spec;
  int rc = begin(argc, argv, &ctx, &spec, NULL, help);
  if (rc) return rc < 0 ? WG_EXIT_OK : rc;
  char text[256], name[128], *src = NULL, *ptx = NULL;
  wg_spec_format(text, sizeof text, &spec);
  wg_kernel_name(name, sizeof name, &spec);
  printf("spec:    %s\nvariant: %s\nkernel:  %s\n", text,
         wg_variant_name(wg_spec_resolve_variant(&spec)), name);
  if ((rc = wg_source(ctx, &src, &spec)) || (rc = wg_ptx(ctx, &ptx, NULL, &spec))) {
    wg_free(src);
    return finish(ctx, wg_cli_fail(ctx, rc, "show"));
  }
  printf("\n==== CUDA source ====\n%s\n==== PTX ====\n%s\n==== SASS ====\n", src, ptx);
  wg_free(src);
  wg_free(ptx);
  fflush(stdout);
  rc = print_sass(ctx, &spec, true);
  if (rc == WG_EXIT_NOTOOL) rc = WG_EXIT_OK;
  wg_device_info info;
  if (!rc && wg_device_get_info(ctx, &info) == WG_OK) {
    printf("\n==== run on %s (sm_%d) ====\n", info.name, info.arch);
    fflush(stdout);
    char *run_argv[] = {"run", text, "--n", "1000003", NULL};
    rc = wg_cli_run(4, run_argv);
  } else if (!rc) {
    printf("\n(no GPU here: %s; the kernel was generated and compiled only)\n",
           wg_errmsg(ctx));
  }
  return finish(ctx, rc);
}

/* --- list ----------------------------------------------------------------- */

/* Does every filter word equal one of the spec text's words? */
static bool matches(const char *text, char **filters, int nfilters) {
  for (int f = 0; f < nfilters; f++) {
    size_t len = strlen(filters[f]);
    bool found = false;
    for (const char *p = text; *p && !found;) {
      size_t w = strcspn(p, " ");
      found = w == len && !strncmp(p, filters[f], len);
      p += w + (p[w] == ' ');
    }
    if (!found) return false;
  }
  return true;
}

int wg_cli_list(int argc, char **argv) {
  static const char help[] =
      "usage: warpgen list [WORD...] [--arch sm_NN]\n  Prints every valid spec with an "
      "explicit variant, one per line; with WORDs,\n  only the specs that contain each "
      "word (e.g. 'warpgen list reduce f32 width=16').\n  --arch adds arch=sm_NN and "
      "keeps the specs valid there (e.g. no redux below sm_80).\n";
  char *filters[64];
  int nfilters = 0, arch = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(help, stdout);
      return WG_EXIT_OK;
    } else if (!strcmp(argv[i], "--arch") && i + 1 < argc) {
      if (wg_cli_arch("list", "--arch", argv[++i], &arch)) return WG_EXIT_USAGE;
    } else if (argv[i][0] == '-' || nfilters == 64) {
      char quoted[WG_CLI_QUOTE_MAX];
      fprintf(stderr, "warpgen list: unexpected '%s'\n%s",
              wg_cli_quote(quoted, sizeof quoted, argv[i]), help);
      return WG_EXIT_USAGE;
    } else {
      filters[nfilters++] = argv[i];
    }
  }
  wg_context *ctx;
  if (wg_cli_context(&ctx)) return WG_EXIT_FAIL;
  wg_spec *specs;
  size_t count;
  int rc = wg_spec_list(ctx, &specs, &count, arch);
  if (rc) return finish(ctx, wg_cli_fail(ctx, rc, "list"));
  for (size_t i = 0; i < count; i++) {
    char text[256];
    wg_spec_format(text, sizeof text, &specs[i]);
    if (matches(text, filters, nfilters)) puts(text);
  }
  wg_free(specs);
  return finish(ctx, WG_EXIT_OK);
}

/* --- info ----------------------------------------------------------------- */

int wg_cli_info(int argc, char **argv) {
  if (argc > 1) {
    fputs("usage: warpgen info\n  Prints versions, the architectures NVRTC supports, "
          "where templates, the cache\n  and the disassembler are, and the CUDA driver "
          "and devices when present.\n", strcmp(argv[1], "--help") ? stderr : stdout);
    return strcmp(argv[1], "--help") ? WG_EXIT_USAGE : WG_EXIT_OK;
  }
  wg_context *ctx;
  if (wg_cli_context(&ctx)) return WG_EXIT_FAIL;
  int major = 0, minor = 0;
  wg_nvrtc_version(ctx, &major, &minor);
  printf("warpgen   %s\nNVRTC     %d.%d\narchs    ", wg_version(), major, minor);
  int *archs;
  size_t n;
  if (wg_supported_archs(ctx, &archs, &n) == WG_OK) {
    for (size_t i = 0; i < n; i++) printf(" sm_%d", archs[i]);
    wg_free(archs);
  }
  const char *tdir = getenv("WARPGEN_TEMPLATE_DIR");
  const char *cdir = wg_cache_dir(ctx);
  char tool[1024];
  bool nvdisasm;
  printf("\ntemplates %s\ncache     %s\nsass      %s\n",
         tdir && *tdir ? tdir : "built into the library",
         cdir ? cdir : "off", find_disassembler(tool, sizeof tool, &nvdisasm)
                                  ? tool : "none (see 'warpgen sass --help')");
  wg_context_destroy(ctx);
  fflush(stdout);
  wg_cli_info_devices();
  return WG_EXIT_OK;
}
