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

/* The key for one compile: warpgen's version, the full source, the
 * identity of the NVRTC that compiles it (wg_nvrtc_identity), the compile
 * options and the architecture. */
wg_cache_key wg_cache_key_make(const char *source, const char *options,
                               int arch, const char *nvrtc_identity);

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

/* For tests and tools. */

/* "12345", "64K", "256M", "2GiB" (powers of 1024) -> bytes; false when the
 * text is not a size. The syntax of WARPGEN_CACHE_MAX. */
bool wg_cache_parse_size(const char *text, uint64_t *out);
/* Writes the path key's entry has (or would have) into buf, like snprintf;
 * WG_ENOTFOUND when the disk cache is disabled. */
int wg_cache_entry_path(wg_context *ctx, char *buf, size_t size,
                        const wg_cache_key *key);
/* WG_OK when the file at path is a complete, valid entry whose name
 * matches its key; else WG_EIO and why (at most why_size bytes). */
int wg_cache_check_file(const char *path, char *why, size_t why_size);

#endif /* WG_CACHE_H */
