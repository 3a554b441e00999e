/*
 * compile.c - CUDA source -> PTX and cubin through NVRTC.
 *
 * Works with no GPU and no driver. NVRTC is loaded (nvrtc.c) by the first
 * compile, which is also where an architecture NVRTC does not know is
 * refused: a spec is never checked against NVRTC earlier, so that a process
 * served from the disk cache never loads it. The options are fixed per architecture
 * and are part of the cache key, so that a change here can never serve a
 * binary built with other options.
 */
#include "nvrtc_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wg_binary_free(wg_binary *bin) {
  if (!bin) return;
  free(bin->ptx);
  free(bin->cubin);
  *bin = (wg_binary){0};
}

/* -lineinfo lets SASS be read against the source without changing the
 * code that is generated. The options after it never change the code
 * either, and an older NVRTC that refuses one is retried without them
 * (wg_compile), so they stay last:
 * - -minimal (NVRTC 12.4 and newer) skips the built-in headers the
 *   generated source never includes: about a quarter less compile time
 *   (measured on the array kernels).
 * - --no-cache turns off NVRTC's own cache of programs, which lives in the
 *   driver's compute cache: to reach it NVRTC 13 loads libcuda and calls
 *   cuInit in the middle of a compile (about 0.15 s in a process that has
 *   not started CUDA, on the H200's host), and it would serve binaries that
 *   warpgen's own cache, keyed and checked, never vetted. */
#define WG_OPTIONAL_OPTIONS 2

int wg_compile_options(char *buf, size_t size, int arch) {
  return snprintf(buf, size,
                  "--gpu-architecture=sm_%d -std=c++17 -lineinfo -minimal --no-cache", arch);
}

static int nvrtc_fail(wg_context *ctx, const wg_nvrtc_api *api, nvrtcResult r,
                      const char *what, const char *name) {
  return wg_fail(ctx, WG_ECOMPILE, "%s for kernel %s: %s", what, name,
                 api->GetErrorString(r));
}

/* Splits the options string into argv form (no quoting needed: fixed). */
static int split_options(char *text, const char **argv, int max) {
  int n = 0;
  for (char *tok = strtok(text, " "); tok && n < max; tok = strtok(NULL, " "))
    argv[n++] = tok;
  return n;
}

int wg_compile(wg_context *ctx, wg_binary *out, const char *source, const char *name,
               int arch) {
  *out = (wg_binary){0};
  const wg_nvrtc_api *api;
  int rc = wg_nvrtc_load(ctx, &api);
  if (!rc) rc = wg_nvrtc_check_arch(ctx, arch);
  if (rc) return rc;
  char options[256];
  wg_compile_options(options, sizeof options, arch);
  const char *argv[16];
  int argc = split_options(options, argv, (int)WG_COUNT_OF(argv));

  char file[160];
  snprintf(file, sizeof file, "%s.cu", name);
  nvrtcProgram prog;
  nvrtcResult r = api->CreateProgram(&prog, source, file, 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) return nvrtc_fail(ctx, api, r, "nvrtcCreateProgram", name);

  r = api->CompileProgram(prog, argc, argv);
  /* An NVRTC that refuses an optional option: the last one dropped, again. */
  for (int dropped = 1; r == NVRTC_ERROR_INVALID_OPTION && dropped <= WG_OPTIONAL_OPTIONS;
       dropped++) {
    api->DestroyProgram(&prog);
    r = api->CreateProgram(&prog, source, file, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) return nvrtc_fail(ctx, api, r, "nvrtcCreateProgram", name);
    r = api->CompileProgram(prog, argc - dropped, argv);
  }
  if (r != NVRTC_SUCCESS) {
    size_t log_len = 0;
    rc = nvrtc_fail(ctx, api, r, "nvrtcCompileProgram", name);
    if (api->GetProgramLogSize(prog, &log_len) == NVRTC_SUCCESS && log_len > 1) {
      char *log = malloc(log_len);
      if (log && api->GetProgramLog(prog, log) == NVRTC_SUCCESS) {
        wg_errmsg_append(ctx, "\nNVRTC log:\n");
        wg_errmsg_append(ctx, log);
      }
      free(log);
    }
    api->DestroyProgram(&prog);
    return rc;
  }

  size_t ptx_size = 0, cubin_size = 0;
  if ((r = api->GetPTXSize(prog, &ptx_size)) != NVRTC_SUCCESS ||
      (r = api->GetCUBINSize(prog, &cubin_size)) != NVRTC_SUCCESS) {
    rc = nvrtc_fail(ctx, api, r, "nvrtcGet*Size", name);
  } else if (!(out->ptx = malloc(ptx_size + 1)) || !(out->cubin = malloc(cubin_size))) {
    rc = wg_fail(ctx, WG_ENOMEM, "out of memory for the compiled %s", name);
  } else if ((r = api->GetPTX(prog, out->ptx)) != NVRTC_SUCCESS ||
             (r = api->GetCUBIN(prog, out->cubin)) != NVRTC_SUCCESS) {
    rc = nvrtc_fail(ctx, api, r, "nvrtcGetPTX/CUBIN", name);
  } else {
    out->ptx[ptx_size] = '\0';
    out->ptx_len = strlen(out->ptx);
    out->cubin_len = cubin_size;
  }
  api->DestroyProgram(&prog);
  if (rc) wg_binary_free(out);
  return rc;
}
