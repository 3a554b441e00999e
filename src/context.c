/*
 * context.c - creating and destroying a context, and its options.
 *
 * Creating a context touches neither NVRTC nor the driver: an interpreter
 * can make one per thread or per call cheaply; the expensive parts load on
 * first use.
 */
#include "cache.h"
#include "internal.h"
#include "workspace.h"

#include <stdlib.h>
#include <string.h>

const char *wg_version(void) { return WG_VERSION_STRING; }
int wg_version_number(void) { return WG_VERSION_NUMBER; }

void wg_options_init(wg_options *options) {
  if (options) *options = (wg_options)WG_OPTIONS_INIT;
}

int wg_context_create(wg_context **out, const wg_options *options) {
  if (!out) return WG_EINVAL;
  *out = NULL;
  wg_options o = WG_OPTIONS_INIT;
  if (options) {
    if (options->version != WG_OPTIONS_VERSION) return WG_EINVAL;
    o = *options;
  }
  if (o.device < 0 || o.disk_cache < -1 || o.disk_cache > 1) return WG_EINVAL;
  wg_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return WG_ENOMEM;
  ctx->device_ordinal = o.device;
  ctx->device_arch = -1;
  ctx->cache_enabled = o.disk_cache != -1;
  ctx->cache_option = o.disk_cache;
  ctx->cache_max_bytes = o.cache_max_bytes;
  const char *tdir = o.template_dir ? o.template_dir : getenv("WARPGEN_TEMPLATE_DIR");
  bool oom = false;
  if (tdir && *tdir) oom |= !(ctx->template_dir = wg_strdup(tdir));
  if (o.cache_dir) oom |= !(ctx->cache_dir = wg_strdup(o.cache_dir));
  if (oom) {
    free(ctx->template_dir);
    free(ctx->cache_dir);
    free(ctx);
    return WG_ENOMEM;
  }
  wg_cache_init(ctx); /* resolves the folder and WARPGEN_CACHE* */
  *out = ctx;
  return WG_OK;
}

void wg_context_destroy(wg_context *ctx) {
  if (!ctx) return;
  /* Modules and workspaces live in the CUDA context: free them before the
   * device state (and the primary context it retained) goes. */
  wg_kernel_table_free(ctx);
  wg_workspace_pool_free(ctx);
  wg_device_release(ctx);
  wg_cache_close(ctx);
  wg_spec_memo_free(ctx);
  wg_intern_free(ctx);
  free(ctx->template_dir);
  free(ctx->cache_dir);
  free(ctx->errmsg);
  free(ctx);
}
