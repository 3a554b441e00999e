/*
 * generate.c - the public calls that make source, PTX and cubin without
 * launching anything: wg_source, wg_ptx, wg_cubin.
 *
 * The one place in this path that may start CUDA: a spec that leaves arch
 * unset is made for the context's device, asked for here once per context
 * (starting CUDA costs seconds on some machines, so a spec that names its
 * arch never asks). Everything below takes the architecture as an input.
 */
#include "internal.h"

#include <stdlib.h>

/* The architecture of ctx's device, or 0 without a driver or device. */
static int device_arch(wg_context *ctx) {
  if (ctx->device_arch < 0) {
    wg_device_info info;
    ctx->device_arch = wg_device_get_info(ctx, &info) == WG_OK ? info.arch : 0;
    wg_errmsg_clear(ctx); /* no device is not an error here */
  }
  return ctx->device_arch;
}

/* The device's architecture when spec needs it, else 0. */
static int arch_for(wg_context *ctx, const wg_spec *spec) {
  return ctx && spec && !spec->arch ? device_arch(ctx) : 0;
}

int wg_source(wg_context *ctx, char **out, const wg_spec *spec) {
  if (!out) return wg_fail(ctx, WG_EINVAL, "wg_source: NULL output");
  *out = NULL;
  /* Validated as asked before the device is asked about. */
  int rc = wg_spec_validate(ctx, spec);
  if (rc) return rc;
  wg_spec concrete;
  rc = wg_artifact_source(ctx, out, &concrete, spec, arch_for(ctx, spec));
  if (!rc) wg_errmsg_clear(ctx);
  return rc;
}

/* wg_ptx and wg_cubin hand one half of the binary to the caller. */
static int artifact_part(wg_context *ctx, const wg_spec *spec, wg_binary *bin) {
  if (!ctx) return WG_EINVAL;
  return wg_artifact_get(ctx, bin, NULL, spec, arch_for(ctx, spec));
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
