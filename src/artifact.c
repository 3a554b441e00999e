/*
 * artifact.c - spec -> PTX + cubin, through the disk cache: generate the
 * source, key it, look it up, else compile and store. Also the public
 * wg_ptx / wg_cubin.
 */
#include "cache.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int wg_context_device_arch(wg_context *ctx) {
  if (ctx->device_arch < 0) {
    wg_device_info info;
    ctx->device_arch = wg_device_get_info(ctx, &info) == WG_OK ? info.arch : 0;
    wg_errmsg_clear(ctx); /* no device is not an error here */
  }
  return ctx->device_arch;
}

/* Validates spec as asked and as it will be compiled (an auto or arch-less
 * spec becomes concrete only here), then generates its source. */
static int concrete_source(wg_context *ctx, char **source, wg_spec *concrete,
                           const wg_spec *spec, int device_arch) {
  int rc = wg_spec_validate(ctx, spec);
  if (rc) return rc;
  *concrete = wg_spec_concrete(spec, device_arch);
  rc = wg_spec_validate(ctx, concrete);
  if (rc) return rc;
  return wg_codegen(ctx, source, concrete);
}

static wg_cache_key key_for(const char *source, int arch) {
  char options[256];
  int major = 0, minor = 0;
  wg_compile_options(options, sizeof options, arch);
  wg_nvrtc_version(NULL, &major, &minor);
  return wg_cache_key_make(source, options, arch, major, minor);
}

int wg_artifact_get(wg_context *ctx, wg_binary *out, char **source_out,
                    const wg_spec *spec, int device_arch) {
  *out = (wg_binary){0};
  if (source_out) *source_out = NULL;
  wg_spec c;
  char *source = NULL;
  int rc = concrete_source(ctx, &source, &c, spec, device_arch);
  if (rc) return rc;
  wg_cache_key key = key_for(source, c.arch);
  if (!wg_cache_lookup(ctx, &key, out)) {
    char name[128];
    wg_kernel_name(name, sizeof name, &c);
    rc = wg_compile(ctx, out, source, name, c.arch);
    if (!rc) {
      ctx->stats.compiles++;
      wg_cache_store(ctx, &key, out);
    }
  }
  if (!rc && source_out)
    *source_out = source;
  else
    free(source);
  if (!rc) wg_errmsg_clear(ctx);
  return rc;
}

void wg_artifact_forget(wg_context *ctx, const wg_spec *spec, int device_arch) {
  wg_spec c;
  char *source = NULL;
  if (concrete_source(ctx, &source, &c, spec, device_arch) == WG_OK) {
    wg_cache_key key = key_for(source, c.arch);
    wg_cache_remove(ctx, &key);
  }
  free(source);
}

/* wg_ptx and wg_cubin hand one half of the binary to the caller. The
 * device is asked only when the spec leaves the arch to it: starting CUDA
 * costs seconds on some machines. */
static int artifact_part(wg_context *ctx, const wg_spec *spec, wg_binary *bin) {
  if (!ctx) return WG_EINVAL;
  int device_arch = spec && spec->arch ? 0 : wg_context_device_arch(ctx);
  return wg_artifact_get(ctx, bin, NULL, spec, device_arch);
}

int wg_ptx(wg_context *ctx, char **out, size_t *len, const wg_spec *spec) {
  if (!out) return wg_fail(ctx, WG_EINVAL, "wg_ptx: NULL output");
  *out = NULL;
  wg_binary bin;
  int rc = artifact_part(ctx, spec, &bin);
  if (rc) return rc;
  *out = bin.ptx;
  if (len) *len = bin.ptx_len;
  free(bin.cubin);
  return WG_OK;
}

int wg_cubin(wg_context *ctx, void **out, size_t *len, const wg_spec *spec) {
  if (!out) return wg_fail(ctx, WG_EINVAL, "wg_cubin: NULL output");
  *out = NULL;
  wg_binary bin;
  int rc = artifact_part(ctx, spec, &bin);
  if (rc) return rc;
  *out = bin.cubin;
  if (len) *len = bin.cubin_len;
  free(bin.ptx);
  return WG_OK;
}
