/*
 * cache.h - the on-disk cache of compiled kernels (cache.c).
 *
 * An entry is keyed by a 128-bit hash of everything that changes the
 * binary. A cache that cannot be used costs speed, never a failed call:
 * lookups then miss and stores do nothing, and the reason is kept in
 * ctx->stats.last_error with ctx->stats.disk_errors counted.
 */
#ifndef WG_CACHE_H
#define WG_CACHE_H

#include "internal.h"

typedef struct wg_cache_key {
  uint8_t bytes[16];
} wg_cache_key;

/* The key for one compile: warpgen's version, the full source, NVRTC's
 * version, the compile options and the architecture. */
wg_cache_key wg_cache_key_make(const char *source, const char *options,
                               int arch, int nvrtc_major, int nvrtc_minor);

/* Sets up ctx's cache from its settings (ctx->cache_dir etc.); called once
 * at context creation. Never fails the context: a bad folder is recorded. */
void wg_cache_init(wg_context *ctx);
/* Releases what wg_cache_init made. */
void wg_cache_close(wg_context *ctx);

/* true and *out filled (caller frees with wg_binary_free) on a valid entry;
 * false on any miss. A bad entry is removed and counted. */
bool wg_cache_lookup(wg_context *ctx, const wg_cache_key *key, wg_binary *out);
/* Stores bin under key (temporary file + rename); failures are recorded,
 * not returned. */
void wg_cache_store(wg_context *ctx, const wg_cache_key *key,
                    const wg_binary *bin);
/* Removes the entry (e.g. a cubin the driver refused). */
void wg_cache_remove(wg_context *ctx, const wg_cache_key *key);

#endif /* WG_CACHE_H */
