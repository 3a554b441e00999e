/*
 * kernel.c - from a spec to a loaded CUDA function, once per context.
 *
 * The first wg_kernel_get for a spec validates it, checks its architecture
 * against the device, takes the cubin from artifact.c (disk cache or NVRTC),
 * loads it as a module and looks up the entry point. The result lives in a
 * small open-addressing hash table keyed by the canonical spec, so that a
 * repeated request costs one hash and one compare. An `auto` spec
 * and its explicit twin are two keys with two modules: simpler than sharing,
 * and a module is a few kilobytes.
 */
#include "kernel.h"

#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default block size: 8 warps, enough for the scheduler to hide the
 * shuffle latency, small enough that a grid of resident blocks spreads over
 * every multiprocessor even for short inputs. */
#define WG_DEFAULT_BLOCK 256u

struct wg_kernel_table {
  wg_kernel **slots; /* capacity entries, NULL where free */
  size_t capacity;   /* a power of two */
  size_t count;
};

static wg_kernel *table_find(const struct wg_kernel_table *t,
                             const wg_spec *spec, uint64_t hash) {
  if (!t)
    return NULL;
  size_t mask = t->capacity - 1;
  for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
    wg_kernel *k = t->slots[i];
    if (!k)
      return NULL;
    if (k->hash == hash && wg_spec_same(&k->requested, spec))
      return k;
  }
}

/* Places k in a table known to have room. */
static void table_place(wg_kernel **slots, size_t capacity, wg_kernel *k) {
  size_t mask = capacity - 1;
  size_t i = (size_t)k->hash & mask;
  while (slots[i])
    i = (i + 1) & mask;
  slots[i] = k;
}

/* Inserts k, growing the table to keep it at most half full. */
static int table_insert(wg_context *ctx, wg_kernel *k) {
  struct wg_kernel_table *t = ctx->kernels;
  if (!t) {
    t = calloc(1, sizeof *t);
    if (!t)
      return wg_fail(ctx, WG_ENOMEM, "out of memory for the kernel table");
    ctx->kernels = t;
  }
  if ((t->count + 1) * 2 > t->capacity) {
    size_t capacity = t->capacity ? t->capacity * 2 : 16;
    wg_kernel **slots = calloc(capacity, sizeof *slots);
    if (!slots)
      return wg_fail(ctx, WG_ENOMEM, "out of memory for the kernel table");
    for (size_t i = 0; i < t->capacity; i++)
      if (t->slots[i])
        table_place(slots, capacity, t->slots[i]);
    free(t->slots);
    t->slots = slots;
    t->capacity = capacity;
  }
  table_place(t->slots, t->capacity, k);
  t->count++;
  return WG_OK;
}

void wg_kernel_table_free(wg_context *ctx) {
  if (!ctx || !ctx->kernels)
    return;
  struct wg_kernel_table *t = ctx->kernels;
  /* A module can only be unloaded from its own context; an unload that
   * fails (a context already broken by a kernel fault) is ignored, the
   * memory is freed all the same. */
  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  bool entered = t->count > 0 && ctx->device &&
                 wg_device_enter(ctx, &scope, &api) == WG_OK;
  for (size_t i = 0; i < t->capacity; i++) {
    wg_kernel *k = t->slots[i];
    if (!k)
      continue;
    if (entered && k->module)
      api->ModuleUnload(k->module);
    free(k);
  }
  if (entered)
    wg_device_leave(ctx, &scope);
  free(t->slots);
  free(t);
  ctx->kernels = NULL;
}

/* Errors with which the driver refuses an image: the cached cubin is bad
 * (or for another device) and is worth compiling again once. */
static bool is_refused_image(CUresult r) {
  return r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_NO_BINARY_FOR_GPU ||
         r == CUDA_ERROR_INVALID_PTX || r == CUDA_ERROR_INVALID_SOURCE ||
         r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION ||
         r == CUDA_ERROR_JIT_COMPILER_NOT_FOUND;
}

/* Loads the cubin for k->spec into k->module, compiling again once if the
 * driver refuses what the cache held. Runs inside ctx's CUDA context. */
static int load_module(wg_context *ctx, const wg_driver_api *api,
                       wg_kernel *k) {
  int arch = k->spec.arch;
  for (int attempt = 0;; attempt++) {
    wg_binary bin = {0};
    int status = wg_artifact_get(ctx, &bin, NULL, &k->spec, arch);
    if (status != WG_OK)
      return status;
    CUresult r = api->ModuleLoadData(&k->module, bin.cubin);
    if (r != CUDA_SUCCESS && attempt == 0 && is_refused_image(r)) {
      /* The cached cubin is bad or for another device: drop it, so the
       * next wg_artifact_get compiles it afresh. */
      wg_artifact_forget(ctx, &k->spec, arch);
      ctx->stats.disk_errors++;
      wg_binary_free(&bin);
      continue;
    }
    wg_binary_free(&bin);
    if (r != CUDA_SUCCESS)
      k->module = NULL;
    return wg_cuda_status(ctx, r, "cuModuleLoadData");
  }
}

int wg_kernel_allow_shared(wg_context *ctx, const wg_driver_api *api, wg_kernel *k,
                           size_t dynamic) {
  const size_t total = dynamic + (size_t)k->static_shared_bytes;
  if (total <= 48u * 1024u || dynamic <= (size_t)k->shared_optin_bytes) return WG_OK;
  const size_t most = (size_t)ctx->device->max_shared_per_block_optin;
  if (total > most)
    return wg_fail(ctx, WG_ERANGE, "%s needs %zu bytes of shared memory a block (%d "
                   "static); the device allows %zu", k->name, total,
                   k->static_shared_bytes, most);
  const int status = wg_cuda_status(ctx, api->FuncSetAttribute(k->function,
                                        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)dynamic), "cuFuncSetAttribute");
  if (status == WG_OK) k->shared_optin_bytes = (int)dynamic;
  return status;
}

/* The block size and resident grid launch.c uses when not told. */
static int choose_defaults(wg_context *ctx, const wg_driver_api *api,
                           wg_kernel *k) {
  unsigned block = WG_DEFAULT_BLOCK;
  if ((int)block > k->max_block_size)
    block = (unsigned)k->max_block_size / 32u * 32u;
  if (block == 0)
    return wg_fail(ctx, WG_ECUDA, "kernel %s allows only %d threads a block",
                   k->name, k->max_block_size);
  int per_sm = 0;
  size_t shared = wg_codegen_shared_bytes(&k->spec, block);
  int status = wg_cuda_status(ctx, api->FuncGetAttribute(&k->static_shared_bytes,
                                  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->function),
                              "cuFuncGetAttribute");
  /* The opt-in comes before the occupancy question, which otherwise counts
   * shared memory past 48 KiB as unavailable. */
  if (status == WG_OK) status = wg_kernel_allow_shared(ctx, api, k, shared);
  if (status != WG_OK) return status;
  status = wg_cuda_status(
      ctx,
      api->OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->function,
                                                     (int)block, shared),
      "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (status != WG_OK)
    return status;
  if (per_sm < 1)
    per_sm = 1;
  k->default_block = block;
  k->default_grid = (unsigned)per_sm * (unsigned)ctx->device->info.sm_count;
  return WG_OK;
}

/* The miss path: everything from the spec (valid, canonical) to a table
 * entry. */
static int kernel_create(wg_context *ctx, wg_kernel **out, const wg_spec *spec,
                         uint64_t hash) {
  const struct wg_device_state *dev = NULL;
  int status = wg_device_state_get(ctx, &dev);
  if (status != WG_OK)
    return status;
  if (spec->arch != 0 && spec->arch != dev->info.arch) {
    char text[256];
    if (wg_spec_format(text, sizeof text, spec) < 0)
      text[0] = '\0';
    return wg_fail(ctx, WG_EARCH,
                   "the spec \"%s\" is for sm_%d but device %d (%s) is "
                   "sm_%d; leave arch unset (0) to use the device's",
                   text, spec->arch, dev->info.ordinal, dev->info.name,
                   dev->info.arch);
  }

  wg_kernel *k = calloc(1, sizeof *k);
  if (!k)
    return wg_fail(ctx, WG_ENOMEM, "out of memory for a kernel");
  k->requested = *spec;
  k->hash = hash;
  k->spec = wg_spec_concrete(spec, dev->info.arch);
  if (wg_kernel_name(k->name, sizeof k->name, &k->spec) < 0) {
    free(k);
    return wg_fail(ctx, WG_ESPEC, "no kernel name for this spec");
  }

  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  status = wg_device_enter(ctx, &scope, &api);
  if (status != WG_OK) {
    free(k);
    return status;
  }
  status = load_module(ctx, api, k);
  if (status == WG_OK)
    status = wg_cuda_status(
        ctx, api->ModuleGetFunction(&k->function, k->module, k->name),
        "cuModuleGetFunction");
  if (status == WG_OK)
    status = wg_cuda_status(
        ctx,
        api->FuncGetAttribute(&k->max_block_size,
                              CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                              k->function),
        "cuFuncGetAttribute");
  if (status == WG_OK)
    status = choose_defaults(ctx, api, k);
  if (status == WG_OK)
    status = table_insert(ctx, k);
  if (status != WG_OK && k->module)
    api->ModuleUnload(k->module);
  wg_device_leave(ctx, &scope);
  if (status != WG_OK) {
    free(k);
    return status;
  }
  *out = k;
  return WG_OK;
}

int wg_kernel_for(wg_context *ctx, wg_kernel **out, const wg_spec_facts *facts) {
  *out = table_find(ctx->kernels, &facts->canonical, facts->hash);
  if (*out) {
    ctx->stats.memory_hits++;
    wg_errmsg_clear(ctx);
    return WG_OK;
  }
  wg_kernel *k = NULL;
  const int status = kernel_create(ctx, &k, &facts->canonical, facts->hash);
  if (status != WG_OK)
    return status;
  *out = k;
  wg_errmsg_clear(ctx);
  return WG_OK;
}

int wg_kernel_get(wg_context *ctx, wg_kernel **out, const wg_spec *spec) {
  if (!ctx || !out || !spec)
    return wg_fail(ctx, WG_EINVAL, "wg_kernel_get: NULL argument");
  *out = NULL;
  /* The table holds specs in canonical form, their texts owned by ctx: a
   * caller's text may be freed after the call, and two spellings of one
   * expression are one kernel. A spec seen before resolves without a
   * parse (spec_expr.c's memo). */
  wg_spec_facts facts;
  const int status = wg_spec_facts_get(ctx, spec, &facts);
  return status != WG_OK ? status : wg_kernel_for(ctx, out, &facts);
}
