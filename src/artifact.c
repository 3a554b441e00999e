/*
 * artifact.c - spec -> PTX + cubin, through the disk cache: generate the
 * source, key it, look it up, else compile and store.
 *
 * The architecture a spec leaves unset comes in from the caller; nothing
 * here touches the device. The key names the NVRTC that would compile
 * (wg_nvrtc_identity), which is found without loading it: a hit never
 * loads NVRTC.
 */
#include "cache.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int wg_artifact_source(wg_context *ctx, char **source, wg_spec *concrete,
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
  wg_compile_options(options, sizeof options, arch);
  return wg_cache_key_make(source, options, arch, wg_nvrtc_identity());
}

int wg_artifact_get(wg_context *ctx, wg_binary *out, char **source_out,
                    const wg_spec *spec, int device_arch) {
  *out = (wg_binary){0};
  if (source_out) *source_out = NULL;
  wg_spec c;
  char *source = NULL;
  int rc = wg_artifact_source(ctx, &source, &c, spec, device_arch);
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
  if (wg_artifact_source(ctx, &source, &c, spec, device_arch) == WG_OK) {
    wg_cache_key key = key_for(source, c.arch);
    wg_cache_remove(ctx, &key);
  }
  free(source);
}
