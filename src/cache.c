/*
 * cache.c - the on-disk cache of compiled kernels: the key, the entry
 * format, lookups, atomic stores, repair of bad entries, size-capped
 * least-recently-used eviction, and the public wg_cache_* calls.
 *
 * A cache folder holds:
 *   ab/<32 hex digits>.wgc  one entry per key, spread over 256 subfolders
 *                           named by the key's first byte
 *   .tmp-XXXXXX             a store in progress, or one a crashed writer
 *                           left behind (swept after an hour)
 *   .trash-XXXXXX           a bad entry that was a folder, being removed
 *   .pruned                 the size estimate: "<bytes> <time of the last
 *                           scan>", bytes kept up to date by every store
 *
 * An entry is a 64-byte header, then the PTX (without its NUL), then the
 * cubin. The header, little-endian:
 *   0  magic "warpgen" 0x1a     8  format version (u32)  12 header size (u32)
 *   16 key (16 bytes)           32 PTX length (u64)      40 cubin length (u64)
 *   48 XXH3-64 of PTX + cubin   56 XXH3-64 of bytes 0..55
 *
 * Anything that does not match exactly is a miss: the entry is removed and
 * the caller compiles and stores again. An entry is at most
 * WG_CACHE_MAX_ENTRY_BYTES, checked against fstat before anything is
 * allocated, so a header that claims gigabytes costs nothing.
 *
 * An entry is code that will run on the GPU, so the cache trusts only what
 * this user could have written (as git's safe.directory and ssh's
 * StrictModes do): a folder owned by another user, or that its group or
 * others may write, is not used at all; a subfolder or entry owned by
 * another user is a miss and is never served. No fsync: a store that a power cut
 * leaves half on disk fails its checksum and is repaired like any other bad
 * entry, so durability is not worth a flush per compile.
 *
 * The hot path (a lookup) is one open, one fstat, two reads and a close (and
 * once per subfolder and context an lstat); no folder is listed there. Folders are listed only by stats, clear and
 * prune, and after a store when the size estimate nears the cap.
 */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define WG_CACHE_FORMAT_VERSION 1u
#define WG_CACHE_HEADER_SIZE 64u
#define WG_CACHE_DEFAULT_MAX (256ull << 20)
/* Automatic eviction goes down to this share of the cap, so that the next
 * few stores do not each trigger a scan. */
#define WG_CACHE_PRUNE_TARGET_PERCENT 90u
/* The size estimate is replaced by a real scan at least this often, so
 * that updates lost to racing writers or entries deleted by hand do not
 * linger. */
#define WG_CACHE_PRUNE_INTERVAL_S 3600
/* A temporary older than this belongs to a writer that died. */
#define WG_CACHE_STALE_TMP_S 3600
/* A hit refreshes the entry's mtime (the LRU clock) at most this often. */
#define WG_CACHE_TOUCH_AFTER_S 60
/* Nested folders found in place of an entry are removed to this depth. */
#define WG_CACHE_REMOVE_DEPTH 16
/* Entries hold one kernel's PTX and cubin: tens of kilobytes. A file larger
 * than this is not an entry, whatever its header says. */
#define WG_CACHE_MAX_ENTRY_BYTES (64ull << 20)

static const unsigned char wg_cache_magic[8] = {'w', 'a', 'r', 'p',
                                                'g', 'e', 'n', 0x1a};

/* "ab/" + 32 hex digits + ".wgc" */
#define WG_ENTRY_NAME_LEN (3 + 32 + 4)

struct wg_disk_cache {
  char *path;             /* "<dir>/ab/<hex>.wgc", rewritten per key */
  size_t dir_len;         /* length of <dir> in path */
  uint64_t max_bytes;
  bool folder_ready;      /* the folder exists (made or seen by a store) */
  bool folder_trusted;    /* checked: ours, and only we may write it */
  bool folder_refused;    /* checked: somebody else's or writable by
                             others; never used */
  uint8_t subfolder_ok[32]; /* bit b: subfolder of first key byte b was
                               checked to be ours */
  bool folder_noted;      /* a folder problem is already counted */
  uint64_t written;       /* bytes this context stored since its last
                             scan */
};

/* --- small helpers -------------------------------------------------------- */

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool is_subfolder_name(const char *name) {
  return is_hex_digit(name[0]) && is_hex_digit(name[1]) && name[2] == '\0';
}

static bool is_entry_file_name(const char *name) {
  for (int i = 0; i < 32; i++)
    if (!is_hex_digit(name[i])) return false;
  return strcmp(name + 32, ".wgc") == 0;
}

static bool has_prefix(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Records a cache problem: counted and kept as the last reason. */
static void cache_note(wg_context *ctx, const char *fmt, ...) WG_PRINTF(2, 3);
static void cache_note(wg_context *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->stats.last_error, sizeof ctx->stats.last_error, fmt, ap);
  va_end(ap);
  ctx->stats.disk_errors++;
}

/* A folder-level problem (missing permission, a file in place of the
 * folder) would repeat on every call; it is counted once per context. */
static void cache_note_folder(wg_context *ctx, struct wg_disk_cache *c,
                              const char *what, int err) {
  if (c->folder_noted) return;
  c->folder_noted = true;
  cache_note(ctx, "cache folder %.*s: %s: %s", (int)c->dir_len, c->path, what,
             strerror(err));
}

static const char *cache_dir_of(const struct wg_disk_cache *c,
                                char *buf, size_t size) {
  snprintf(buf, size, "%.*s", (int)c->dir_len, c->path);
  return buf;
}

/* --- the key -------------------------------------------------------------- */

/* Each field goes in as a tag, its length and its bytes, so that no two
 * different field lists hash the same byte stream. */
static void key_field(XXH3_state_t *st, char tag, const void *data,
                      size_t len) {
  unsigned char prefix[9];
  prefix[0] = (unsigned char)tag;
  put_u64(prefix + 1, (uint64_t)len);
  XXH3_128bits_update(st, prefix, sizeof prefix);
  if (len > 0) XXH3_128bits_update(st, data, len);
}

wg_cache_key wg_cache_key_make(const char *source, const char *options,
                               int arch, int nvrtc_major, int nvrtc_minor) {
  char nums[64];
  XXH3_state_t st;
  XXH3_INITSTATE(&st);
  XXH3_128bits_reset(&st);
  key_field(&st, 'K', "warpgen-cache-key", 17);
  key_field(&st, 'W', WG_VERSION_STRING, strlen(WG_VERSION_STRING));
  int n = snprintf(nums, sizeof nums, "%d.%d", nvrtc_major, nvrtc_minor);
  key_field(&st, 'N', nums, (size_t)n);
  n = snprintf(nums, sizeof nums, "%d", arch);
  key_field(&st, 'A', nums, (size_t)n);
  key_field(&st, 'O', options ? options : "", options ? strlen(options) : 0);
  key_field(&st, 'S', source ? source : "", source ? strlen(source) : 0);
  XXH128_canonical_t canon;
  XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(&st));
  wg_cache_key key;
  memcpy(key.bytes, canon.digest, sizeof key.bytes);
  return key;
}

/* Writes the entry's path for key into c->path and returns it. */
static const char *entry_path(struct wg_disk_cache *c,
                              const wg_cache_key *key) {
  static const char hex[] = "0123456789abcdef";
  char *p = c->path + c->dir_len;
  *p++ = '/';
  *p++ = hex[key->bytes[0] >> 4];
  *p++ = hex[key->bytes[0] & 15];
  *p++ = '/';
  for (size_t i = 0; i < sizeof key->bytes; i++) {
    *p++ = hex[key->bytes[i] >> 4];
    *p++ = hex[key->bytes[i] & 15];
  }
  memcpy(p, ".wgc", 5);
  return c->path;
}

/* --- settings ------------------------------------------------------------- */

static bool env_says_off(const char *v) {
  return v && (strcasecmp(v, "off") == 0 || strcmp(v, "0") == 0 ||
               strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0);
}

bool wg_cache_parse_size(const char *text, uint64_t *out) {
  if (!text) return false;
  char *end;
  errno = 0;
  if (*text < '0' || *text > '9') return false;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno) return false;
  unsigned shift = 0;
  switch (*end) {
  case 'k': case 'K': shift = 10; end++; break;
  case 'm': case 'M': shift = 20; end++; break;
  case 'g': case 'G': shift = 30; end++; break;
  case 't': case 'T': shift = 40; end++; break;
  default: break;
  }
  /* "64M", "64MB" and "64MiB" all mean 64 * 2^20. */
  if (shift && *end == 'i') end++;
  if (*end == 'B' || *end == 'b') end++;
  if (*end != '\0') return false;
  if (shift && v > (UINT64_MAX >> shift)) return false;
  *out = (uint64_t)v << shift;
  return true;
}

/* The folder the settings name, malloc'd, or NULL with the reason noted. */
static char *resolve_dir(wg_context *ctx) {
  if (ctx->cache_dir && ctx->cache_dir[0]) return wg_strdup(ctx->cache_dir);
  const char *env = getenv("WARPGEN_CACHE_DIR");
  if (env && env[0]) return wg_strdup(env);
  wg_buf b = {0};
  /* The XDG rules ignore a relative XDG_CACHE_HOME. */
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  if (xdg && xdg[0] == '/') {
    wg_buf_puts(&b, xdg);
    wg_buf_puts(&b, "/warpgen");
  } else if (home && home[0] == '/') {
    wg_buf_puts(&b, home);
    wg_buf_puts(&b, "/.cache/warpgen");
  } else {
    cache_note(ctx, "no cache folder: set WARPGEN_CACHE_DIR, "
                    "XDG_CACHE_HOME or HOME to an absolute path");
    return NULL;
  }
  if (b.failed) {
    wg_buf_free(&b);
    return NULL;
  }
  return b.data;
}

static uint64_t resolve_max_bytes(wg_context *ctx) {
  if (ctx->cache_max_bytes) return ctx->cache_max_bytes;
  const char *env = getenv("WARPGEN_CACHE_MAX");
  if (!env || !env[0]) return WG_CACHE_DEFAULT_MAX;
  uint64_t v;
  if (!wg_cache_parse_size(env, &v) || v == 0) {
    cache_note(ctx, "WARPGEN_CACHE_MAX=\"%.64s\" is not a size (bytes, "
                    "with an optional K, M or G); using 256M", env);
    return WG_CACHE_DEFAULT_MAX;
  }
  return v;
}

static void cache_disable(wg_context *ctx) {
  free(ctx->cache_dir);
  ctx->cache_dir = NULL;
  ctx->cache_enabled = false;
  ctx->stats.enabled = 0;
}

void wg_cache_init(wg_context *ctx) {
  if (!ctx) return;
  ctx->cache = NULL;
  /* options.disk_cache: 1 on, -1 off, 0 ask WARPGEN_CACHE. */
  if (ctx->cache_option < 0 ||
      (ctx->cache_option == 0 && env_says_off(getenv("WARPGEN_CACHE")))) {
    cache_disable(ctx);
    return;
  }
  uint64_t max_bytes = resolve_max_bytes(ctx);
  char *dir = resolve_dir(ctx);
  if (!dir) {
    cache_disable(ctx);
    return;
  }
  /* "/x/" and "/x" are the same folder; keep one spelling in the paths. */
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/') dir[--len] = '\0';
  struct wg_disk_cache *c = calloc(1, sizeof *c);
  char *path = c ? malloc(len + 1 + WG_ENTRY_NAME_LEN + 1) : NULL;
  if (!path) {
    free(c);
    free(dir);
    cache_note(ctx, "no memory for the disk cache");
    cache_disable(ctx);
    return;
  }
  memcpy(path, dir, len + 1);
  c->path = path;
  c->dir_len = len;
  c->max_bytes = max_bytes;
  free(ctx->cache_dir);
  ctx->cache_dir = dir;
  ctx->cache_max_bytes = max_bytes;
  ctx->cache_enabled = true;
  ctx->cache = c;
  ctx->stats.enabled = 1;
}

void wg_cache_close(wg_context *ctx) {
  if (!ctx || !ctx->cache) return;
  free(ctx->cache->path);
  free(ctx->cache);
  ctx->cache = NULL;
}

/* --- removing things safely ----------------------------------------------- */

static void remove_tree_at(int parent, const char *name, int depth);

/* Opens name under parent as a folder to list, never through a symbolic
 * link; NULL with errno set on failure. */
static DIR *folder_open_at(int parent, const char *name) {
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return NULL;
  DIR *d = fdopendir(fd);
  if (!d) {
    int err = errno;
    close(fd);
    errno = err;
  }
  return d;
}

/* Removes name (relative to parent) whatever it is; a folder with all it
 * holds. Symbolic links are removed, never followed. */
static void remove_tree_at(int parent, const char *name, int depth) {
  if (unlinkat(parent, name, 0) == 0 || errno == ENOENT) return;
  if (depth >= WG_CACHE_REMOVE_DEPTH) return;
  DIR *d = folder_open_at(parent, name);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    remove_tree_at(dirfd(d), e->d_name, depth + 1);
  }
  closedir(d);
  unlinkat(parent, name, AT_REMOVEDIR);
}

/* Removes the bad entry at c->path. A folder is first renamed away (so the
 * entry's name is free at once and no second process walks the same tree),
 * then removed. When `seen` is given, only the very file that was found
 * bad is removed: a good entry that another process renamed into place
 * meanwhile is left alone. */
static void remove_bad_entry(struct wg_disk_cache *c, const struct stat *seen) {
  struct stat now;
  if (lstat(c->path, &now) != 0) return;
  if (seen && (now.st_dev != seen->st_dev || now.st_ino != seen->st_ino))
    return;
  if (!S_ISDIR(now.st_mode)) {
    unlink(c->path);
    return;
  }
  char trash[4096];
  int n = snprintf(trash, sizeof trash, "%.*s/.trash-XXXXXX",
                   (int)c->dir_len, c->path);
  if (n > 0 && (size_t)n < sizeof trash && mkdtemp(trash) &&
      rename(c->path, trash) == 0) {
    remove_tree_at(AT_FDCWD, trash, 0);
    return;
  }
  if (n > 0 && (size_t)n < sizeof trash) rmdir(trash);
  remove_tree_at(AT_FDCWD, c->path, 0);
}

/* --- trust ----------------------------------------------------------------- */

/* The folder must be ours and writable by us alone: anybody else who may
 * write it could plant a kernel under a key they can compute. One stat per
 * context; until the folder exists there is nothing to check (and the
 * first store makes it 0700). */
static bool folder_usable(wg_context *ctx, struct wg_disk_cache *c) {
  if (c->folder_trusted) return true;
  if (c->folder_refused) return false;
  char dir[4096];
  struct stat st;
  if (stat(cache_dir_of(c, dir, sizeof dir), &st) != 0 ||
      !S_ISDIR(st.st_mode))
    return true; /* missing or not a folder: lookups and stores say why */
  uid_t me = geteuid();
  unsigned mode = (unsigned)st.st_mode & 07777;
  const char *who = st.st_uid != me           ? "owned by another user"
                    : (st.st_mode & S_IWOTH) ? "writable by everybody"
                    : (st.st_mode & S_IWGRP) ? "writable by its group"
                                             : NULL;
  if (!who) {
    c->folder_trusted = true;
    return true;
  }
  c->folder_refused = true;
  ctx->stats.enabled = 0;
  cache_note(ctx, "cache folder %s: %s (uid %u, mode %04o; this user is uid "
                  "%u), so others could plant kernels there; not used",
             dir, who, (unsigned)st.st_uid, mode, (unsigned)me);
  return false;
}

/* The subfolder of key's entry must be ours too (checked once per context
 * and subfolder; only we can replace it later, as the folder above is
 * ours). A missing one is fine: a store makes it. */
static bool subfolder_usable(wg_context *ctx, struct wg_disk_cache *c,
                             const wg_cache_key *key) {
  unsigned b = key->bytes[0];
  if (c->subfolder_ok[b >> 3] & (1u << (b & 7))) return true;
  entry_path(c, key);
  char *slash = c->path + c->dir_len + 3;
  *slash = '\0';
  struct stat st;
  bool exists = lstat(c->path, &st) == 0;
  bool ok = !exists || !S_ISDIR(st.st_mode) || st.st_uid == geteuid();
  if (!ok)
    cache_note(ctx, "cache folder %s: owned by another user (uid %u); its "
                    "entries are not used", c->path, (unsigned)st.st_uid);
  else if (exists && S_ISDIR(st.st_mode))
    c->subfolder_ok[b >> 3] |= (uint8_t)(1u << (b & 7));
  *slash = '/';
  return ok;
}

/* --- lookup --------------------------------------------------------------- */

static bool read_full_at(int fd, void *buf, size_t len, off_t off) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = pread(fd, p, len, off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= (size_t)n;
    off += n;
  }
  return true;
}

static uint64_t payload_hash(const void *ptx, size_t ptx_len,
                             const void *cubin, size_t cubin_len) {
  XXH3_state_t st;
  XXH3_INITSTATE(&st);
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, ptx, ptx_len);
  XXH3_64bits_update(&st, cubin, cubin_len);
  return XXH3_64bits_digest(&st);
}

static void header_build(unsigned char h[WG_CACHE_HEADER_SIZE],
                         const wg_cache_key *key, const wg_binary *bin) {
  memcpy(h, wg_cache_magic, 8);
  put_u32(h + 8, WG_CACHE_FORMAT_VERSION);
  put_u32(h + 12, WG_CACHE_HEADER_SIZE);
  memcpy(h + 16, key->bytes, 16);
  put_u64(h + 32, bin->ptx_len);
  put_u64(h + 40, bin->cubin_len);
  put_u64(h + 48, payload_hash(bin->ptx, bin->ptx_len, bin->cubin,
                               bin->cubin_len));
  put_u64(h + 56, XXH3_64bits(h, 56));
}

/* NULL when the header is good for key and a file of file_size bytes, else
 * why not. */
static const char *header_check(const unsigned char h[WG_CACHE_HEADER_SIZE],
                                const wg_cache_key *key, uint64_t file_size) {
  if (memcmp(h, wg_cache_magic, 8) != 0) return "bad magic";
  if (get_u32(h + 8) != WG_CACHE_FORMAT_VERSION) return "other format version";
  if (get_u32(h + 12) != WG_CACHE_HEADER_SIZE) return "bad header size";
  if (get_u64(h + 56) != XXH3_64bits(h, 56)) return "bad header checksum";
  if (memcmp(h + 16, key->bytes, 16) != 0) return "key mismatch";
  uint64_t ptx_len = get_u64(h + 32), cubin_len = get_u64(h + 40);
  if (cubin_len == 0) return "empty cubin";
  if (ptx_len > file_size || cubin_len > file_size ||
      WG_CACHE_HEADER_SIZE + ptx_len + cubin_len != file_size)
    return "length mismatch";
  return NULL;
}

/* Reads and checks the entry open as fd; NULL and *out filled when good. */
static const char *entry_read(int fd, const struct stat *st,
                              const wg_cache_key *key, wg_binary *out) {
  unsigned char h[WG_CACHE_HEADER_SIZE];
  if (!S_ISREG(st->st_mode)) return "not a regular file";
  /* Before any allocation: the lengths below are bounded by this. */
  if ((uint64_t)st->st_size > WG_CACHE_MAX_ENTRY_BYTES)
    return "larger than an entry may be";
  if ((uint64_t)st->st_size < WG_CACHE_HEADER_SIZE ||
      !read_full_at(fd, h, sizeof h, 0))
    return "shorter than its header";
  const char *why = header_check(h, key, (uint64_t)st->st_size);
  if (why) return why;
  size_t ptx_len = (size_t)get_u64(h + 32), cubin_len = (size_t)get_u64(h + 40);
  out->ptx = malloc(ptx_len + 1);
  out->cubin = malloc(cubin_len);
  if (!out->ptx || !out->cubin) return "no memory to read it";
  struct iovec iov[2] = {{out->ptx, ptx_len}, {out->cubin, cubin_len}};
  ssize_t n;
  do {
    n = preadv(fd, iov, 2, WG_CACHE_HEADER_SIZE);
  } while (n < 0 && errno == EINTR);
  if (n < 0 || (size_t)n != ptx_len + cubin_len) {
    /* A short read from preadv is legal; finish piecewise. */
    if (!read_full_at(fd, out->ptx, ptx_len, WG_CACHE_HEADER_SIZE) ||
        !read_full_at(fd, out->cubin, cubin_len,
                      (off_t)(WG_CACHE_HEADER_SIZE + ptx_len)))
      return "read failed";
  }
  if (payload_hash(out->ptx, ptx_len, out->cubin, cubin_len) != get_u64(h + 48))
    return "bad payload checksum";
  out->ptx[ptx_len] = '\0';
  out->ptx_len = ptx_len;
  out->cubin_len = cubin_len;
  return NULL;
}

/* The mtime is the LRU clock; refresh it on a hit, but rarely, so that a
 * hot entry does not cost a metadata write per lookup. */
static void entry_touch(int fd, const struct stat *st) {
  struct timespec now;
  if (clock_gettime(CLOCK_REALTIME, &now) != 0) return;
  if (now.tv_sec - st->st_mtim.tv_sec >= WG_CACHE_TOUCH_AFTER_S)
    futimens(fd, NULL);
}

bool wg_cache_lookup(wg_context *ctx, const wg_cache_key *key,
                     wg_binary *out) {
  if (!out) return false;
  memset(out, 0, sizeof *out);
  struct wg_disk_cache *c = ctx ? ctx->cache : NULL;
  if (!c || !key || !folder_usable(ctx, c) || !subfolder_usable(ctx, c, key))
    return false;
  const char *path = entry_path(c, key);
  /* O_NONBLOCK: a FIFO planted in place of an entry must not hang us. */
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return false; /* an ordinary miss */
    if (err == ELOOP) {
      cache_note(ctx, "cache entry %s: a symbolic link; removed", path);
      remove_bad_entry(c, NULL);
    } else if (err == ENOTDIR) {
      cache_note_folder(ctx, c, "a file stands where a folder should be",
                        err);
    } else {
      cache_note(ctx, "cache entry %s: %s", path, strerror(err));
    }
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    cache_note(ctx, "cache entry %s: %s", path, strerror(errno));
    close(fd);
    return false;
  }
  /* Somebody else's file is a miss, never served; our next store replaces
   * it. */
  if (st.st_uid != geteuid()) {
    cache_note(ctx, "cache entry %s: owned by another user (uid %u); not used",
               path, (unsigned)st.st_uid);
    close(fd);
    return false;
  }
  const char *why = entry_read(fd, &st, key, out);
  if (why) {
    wg_binary_free(out);
    memset(out, 0, sizeof *out);
    cache_note(ctx, "cache entry %s: %s; removed", path, why);
    remove_bad_entry(c, &st);
    close(fd);
    return false;
  }
  entry_touch(fd, &st);
  close(fd);
  ctx->stats.disk_hits++;
  return true;
}

/* --- store ---------------------------------------------------------------- */

/* mkdir -p with mode 0700 for every folder it makes. */
static int make_folders(const char *dir) {
  char *p = wg_strdup(dir);
  if (!p) return ENOMEM;
  int err = 0;
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s != '\0') continue;
    char saved = *s;
    *s = '\0';
    if (mkdir(p, 0700) != 0 && errno != EEXIST) err = errno;
    *s = saved;
    if (err || saved == '\0') break;
  }
  struct stat st;
  if (!err && stat(p, &st) != 0) err = errno;
  if (!err && !S_ISDIR(st.st_mode)) err = ENOTDIR;
  free(p);
  return err;
}

static bool write_all(int fd, struct iovec *iov, int cnt, int *err) {
  while (cnt > 0) {
    ssize_t n = writev(fd, iov, cnt);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = n < 0 ? errno : EIO;
      return false;
    }
    size_t done = (size_t)n;
    while (cnt > 0 && done >= iov->iov_len) {
      done -= iov->iov_len;
      iov++;
      cnt--;
    }
    if (cnt > 0) {
      iov->iov_base = (char *)iov->iov_base + done;
      iov->iov_len -= done;
    }
  }
  return true;
}

/* Makes the entry's subfolder (c->path up to its last '/'), replacing a
 * non-folder found there. */
static int make_subfolder(struct wg_disk_cache *c) {
  char *slash = c->path + c->dir_len + 3;
  *slash = '\0';
  int err = 0;
  if (mkdir(c->path, 0700) != 0 && errno != EEXIST) err = errno;
  struct stat st;
  if (!err && lstat(c->path, &st) == 0 && !S_ISDIR(st.st_mode)) {
    unlink(c->path);
    if (mkdir(c->path, 0700) != 0 && errno != EEXIST) err = errno;
  }
  *slash = '/';
  return err;
}

/* Moves the finished temporary into place; 0 or an errno. */
static int entry_publish(struct wg_disk_cache *c, const char *tmp) {
  if (rename(tmp, c->path) == 0) return 0;
  int err = errno;
  if (err == ENOENT || err == ENOTDIR) {
    err = make_subfolder(c);
    if (!err && rename(tmp, c->path) == 0) return 0;
    if (!err) err = errno;
  }
  /* A folder planted where the entry goes: clear it and try once more. */
  if (err == EISDIR || err == ENOTEMPTY || err == EEXIST) {
    remove_bad_entry(c, NULL);
    if (rename(tmp, c->path) == 0) return 0;
    err = errno;
  }
  return err;
}

static void cache_after_store(wg_context *ctx, struct wg_disk_cache *c,
                              uint64_t bytes);

/* Opens a new temporary in the cache folder, making the folder if needed;
 * fd, or -1 with the reason noted. */
static int temp_open(wg_context *ctx, struct wg_disk_cache *c, char *tmp,
                     size_t size) {
  snprintf(tmp, size, "%.*s/.tmp-XXXXXX", (int)c->dir_len, c->path);
  for (int attempt = 0; attempt < 2; attempt++) {
    if (!c->folder_ready) {
      char dir[4096];
      int err = make_folders(cache_dir_of(c, dir, sizeof dir));
      if (err) {
        cache_note_folder(ctx, c, "cannot be created", err);
        return -1;
      }
      c->folder_ready = true;
      /* It may have existed already, made by somebody else. */
      if (!folder_usable(ctx, c)) return -1;
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0) return fd;
    int err = errno;
    /* The folder was removed since we made it: make it again, once. */
    if (err == ENOENT && attempt == 0) {
      c->folder_ready = false;
      snprintf(tmp, size, "%.*s/.tmp-XXXXXX", (int)c->dir_len, c->path);
      continue;
    }
    cache_note(ctx, "cache folder %s: cannot create a temporary: %s",
               cache_dir_of(c, tmp, size), strerror(err));
    return -1;
  }
  return -1;
}

void wg_cache_store(wg_context *ctx, const wg_cache_key *key,
                    const wg_binary *bin) {
  struct wg_disk_cache *c = ctx ? ctx->cache : NULL;
  if (!c || !key || !bin || !bin->cubin || bin->cubin_len == 0) return;
  if (!bin->ptx && bin->ptx_len) return;
  if (!folder_usable(ctx, c) || !subfolder_usable(ctx, c, key)) return;
  uint64_t bytes = WG_CACHE_HEADER_SIZE + (uint64_t)bin->ptx_len + bin->cubin_len;
  if (bytes > WG_CACHE_MAX_ENTRY_BYTES) {
    cache_note(ctx, "an entry of %llu bytes is larger than an entry may be; "
                    "not stored", (unsigned long long)bytes);
    return;
  }
  char tmp[4096];
  if (c->dir_len + 16 >= sizeof tmp) {
    cache_note_folder(ctx, c, "path too long", ENAMETOOLONG);
    return;
  }
  int fd = temp_open(ctx, c, tmp, sizeof tmp);
  if (fd < 0) return;
  unsigned char h[WG_CACHE_HEADER_SIZE];
  header_build(h, key, bin);
  struct iovec iov[3] = {{h, sizeof h},
                         {bin->ptx, bin->ptx_len},
                         {bin->cubin, bin->cubin_len}};
  int err = 0;
  bool ok = write_all(fd, iov, 3, &err);
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  entry_path(c, key);
  if (ok) {
    err = entry_publish(c, tmp);
    ok = err == 0;
  }
  if (!ok) {
    /* EFBIG (RLIMIT_FSIZE), ENOSPC, EDQUOT, EROFS...: costs speed only. */
    cache_note(ctx, "cache entry %s: not stored: %s", c->path, strerror(err));
    unlink(tmp);
    return;
  }
  cache_after_store(ctx, c, sizeof h + bin->ptx_len + bin->cubin_len);
}

void wg_cache_remove(wg_context *ctx, const wg_cache_key *key) {
  struct wg_disk_cache *c = ctx ? ctx->cache : NULL;
  if (!c || !key) return;
  entry_path(c, key);
  remove_bad_entry(c, NULL);
}

/* --- scanning, eviction --------------------------------------------------- */

typedef struct wg_cache_item {
  struct timespec mtime;
  uint64_t size;
  char name[WG_ENTRY_NAME_LEN + 1]; /* "ab/<hex>.wgc" */
} wg_cache_item;

typedef struct wg_cache_scan {
  wg_cache_item *items; /* when collecting */
  size_t count, cap;
  uint64_t bytes;
  bool failed;          /* out of memory while collecting */
} wg_cache_scan;

static void scan_add(wg_cache_scan *s, bool collect, const char *sub,
                     const char *name, const struct stat *st) {
  s->bytes += (uint64_t)st->st_size;
  if (!collect) {
    s->count++;
    return;
  }
  if (s->count == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    wg_cache_item *items = realloc(s->items, cap * sizeof *items);
    if (!items) {
      s->failed = true;
      return;
    }
    s->items = items;
    s->cap = cap;
  }
  wg_cache_item *it = &s->items[s->count++];
  it->mtime = st->st_mtim;
  it->size = (uint64_t)st->st_size;
  /* Both names were checked: "ab" and 36 characters of "<hex>.wgc". */
  memcpy(it->name, sub, 2);
  it->name[2] = '/';
  memcpy(it->name + 3, name, WG_ENTRY_NAME_LEN - 3 + 1);
}

static void scan_subfolder(int topfd, const char *sub, wg_cache_scan *s,
                           bool collect) {
  DIR *d = folder_open_at(topfd, sub);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    struct stat st;
    if (!is_entry_file_name(e->d_name)) continue;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode)) scan_add(s, collect, sub, e->d_name, &st);
  }
  closedir(d);
}

/* Removes what writers and repairs left behind at the top of the folder. */
static void sweep_leftover(int topfd, const char *name, time_t now) {
  struct stat st;
  if (has_prefix(name, ".trash-")) {
    remove_tree_at(topfd, name, 0);
  } else if (has_prefix(name, ".tmp-") &&
             fstatat(topfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
             now - st.st_mtim.tv_sec > WG_CACHE_STALE_TMP_S) {
    unlinkat(topfd, name, 0);
  }
}

/* Opens the cache folder for a scan; -1 with errno set when it cannot. */
static int open_top(const struct wg_disk_cache *c) {
  char dir[4096];
  return open(cache_dir_of(c, dir, sizeof dir),
              O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Lists the entries (sizes summed; collected when asked) and, when sweep
 * is set, removes stale leftovers. 0, or an errno from opening the folder
 * (ENOENT: no folder yet, which is an empty cache). */
static int cache_scan(struct wg_disk_cache *c, wg_cache_scan *s, bool collect,
                      bool sweep, int *topfd_out) {
  memset(s, 0, sizeof *s);
  *topfd_out = -1;
  int topfd = open_top(c);
  if (topfd < 0) return errno;
  DIR *d = folder_open_at(topfd, ".");
  if (!d) {
    int err = errno;
    close(topfd);
    return err;
  }
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (is_subfolder_name(e->d_name))
      scan_subfolder(topfd, e->d_name, s, collect);
    else if (sweep)
      sweep_leftover(topfd, e->d_name, now);
  }
  closedir(d);
  *topfd_out = topfd;
  return 0;
}

static int item_older(const void *a, const void *b) {
  const wg_cache_item *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec)
    return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec)
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* The shared size estimate: "<bytes> <unix time of the last scan>\n". A
 * reader that catches it half-written sees no estimate and scans, which is
 * only slower; two stores racing may lose one's bytes until the next scan. */
typedef struct wg_cache_estimate {
  uint64_t bytes;
  long long scanned_at;
} wg_cache_estimate;

static void estimate_write(int topfd, const wg_cache_estimate *e) {
  int fd = openat(topfd, ".pruned",
                  O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  char text[64];
  int n = snprintf(text, sizeof text, "%llu %lld\n",
                   (unsigned long long)e->bytes, e->scanned_at);
  bool ok = write(fd, text, (size_t)n) == n;
  close(fd);
  if (!ok) unlinkat(topfd, ".pruned", 0);
}

/* false when there is no estimate or its scan is too old to trust. The
 * file is anybody's bytes: exactly "<digits> <digits>\n" is read, each
 * number range-checked, and a time in the future is no estimate. */
static bool estimate_read(int topfd, wg_cache_estimate *e) {
  int fd = openat(topfd, ".pruned", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  char text[64];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  const char *p = text;
  uint64_t bytes, when;
  if (!wg_scan_u64(&p, 10, &bytes) || *p++ != ' ' ||
      !wg_scan_u64(&p, 10, &when) || strcmp(p, "\n") != 0)
    return false;
  time_t now = time(NULL);
  if (now < 0 || when > (uint64_t)now) return false;
  e->bytes = bytes;
  e->scanned_at = (long long)when;
  return (uint64_t)now - when <= WG_CACHE_PRUNE_INTERVAL_S;
}

/* Scans, sweeps and evicts oldest-first until at most `target` bytes.
 * 0 or an errno (ENOENT for a folder not made yet). */
static int cache_evict(wg_context *ctx, struct wg_disk_cache *c,
                       uint64_t target) {
  wg_cache_scan s;
  int topfd;
  int err = cache_scan(c, &s, true, true, &topfd);
  if (err) return err;
  if (s.bytes > target && !s.failed) {
    qsort(s.items, s.count, sizeof *s.items, item_older);
    for (size_t i = 0; i < s.count && s.bytes > target; i++) {
      /* ENOENT: another process evicted it first; it is gone either way. */
      if (unlinkat(topfd, s.items[i].name, 0) == 0 || errno == ENOENT) {
        s.bytes -= s.items[i].size;
        ctx->stats.evictions++;
      }
    }
  }
  wg_cache_estimate e = {s.bytes, (long long)time(NULL)};
  estimate_write(topfd, &e);
  close(topfd);
  free(s.items);
  c->written = 0;
  return s.failed ? ENOMEM : 0;
}

/* After a store of `bytes`: scan (and evict) only when the folder may be
 * over its cap by the shared estimate, when there is no recent scan, or
 * when this context alone wrote a sixteenth of the cap since its last scan
 * (a bound on what racing estimate updates can lose). Otherwise add the
 * entry to the estimate: a few small syscalls after a compile of tens of
 * milliseconds. */
static void cache_after_store(wg_context *ctx, struct wg_disk_cache *c,
                              uint64_t bytes) {
  c->written += bytes;
  int topfd = open_top(c);
  if (topfd < 0) return;
  wg_cache_estimate e;
  bool due = !estimate_read(topfd, &e) ||
             e.bytes > c->max_bytes || bytes > c->max_bytes - e.bytes ||
             c->written >= c->max_bytes / 16;
  if (!due) {
    e.bytes += bytes;
    estimate_write(topfd, &e);
  }
  close(topfd);
  if (!due) return;
  uint64_t target = c->max_bytes / 100 * WG_CACHE_PRUNE_TARGET_PERCENT;
  int err = cache_evict(ctx, c, target);
  if (err && err != ENOENT) {
    char dir[4096];
    cache_note(ctx, "cache folder %s: cannot prune: %s",
               cache_dir_of(c, dir, sizeof dir), strerror(err));
  }
}

/* --- public calls --------------------------------------------------------- */

const char *wg_cache_dir(wg_context *ctx) {
  return ctx && ctx->cache ? ctx->cache_dir : NULL;
}

int wg_cache_stats_get(wg_context *ctx, wg_cache_stats *out) {
  if (!ctx) return WG_EINVAL;
  if (!out) return wg_fail(ctx, WG_EINVAL, "wg_cache_stats_get: out is NULL");
  struct wg_disk_cache *c = ctx->cache;
  if (c) {
    folder_usable(ctx, c); /* so that a refused folder says why */
    wg_cache_scan s;
    int topfd;
    int err = cache_scan(c, &s, false, false, &topfd);
    if (err == 0) {
      /* Root writes anyway, but a user's read-only folder is worth naming:
       * it is why nothing gets stored. */
      if (faccessat(topfd, ".", W_OK | X_OK, AT_EACCESS) != 0)
        cache_note_folder(ctx, c, "not writable", errno);
      close(topfd);
      ctx->stats.entries = s.count;
      ctx->stats.bytes = s.bytes;
    } else {
      ctx->stats.entries = 0;
      ctx->stats.bytes = 0;
      if (err != ENOENT)
        cache_note_folder(ctx, c, "cannot be read", err);
    }
  }
  ctx->stats.enabled = c && !c->folder_refused;
  ctx->stats.max_bytes = c ? c->max_bytes : 0;
  *out = ctx->stats;
  wg_errmsg_clear(ctx);
  return WG_OK;
}

/* Removes every entry, temporary and leftover, and the emptied subfolders.
 * Files that warpgen did not name are left alone: the folder may be one
 * the user shares with other things. */
int wg_cache_clear(wg_context *ctx) {
  if (!ctx) return WG_EINVAL;
  struct wg_disk_cache *c = ctx->cache;
  if (!c) return wg_fail(ctx, WG_ENOTFOUND, "the disk cache is disabled");
  char dir[4096];
  cache_dir_of(c, dir, sizeof dir);
  int topfd = open_top(c);
  if (topfd < 0) {
    if (errno == ENOENT) {
      wg_errmsg_clear(ctx);
      return WG_OK; /* nothing was ever stored */
    }
    return wg_fail(ctx, WG_EIO, "cache folder %s: %s", dir, strerror(errno));
  }
  DIR *d = folder_open_at(topfd, ".");
  if (!d) {
    int err = errno;
    close(topfd);
    return wg_fail(ctx, WG_EIO, "cache folder %s: %s", dir, strerror(err));
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    const char *name = e->d_name;
    if (is_subfolder_name(name)) {
      DIR *sd = folder_open_at(topfd, name);
      if (!sd) continue;
      struct dirent *se;
      while ((se = readdir(sd)) != NULL)
        if (is_entry_file_name(se->d_name))
          remove_tree_at(dirfd(sd), se->d_name, 0);
      closedir(sd);
      unlinkat(topfd, name, AT_REMOVEDIR); /* fails if not empty: fine */
    } else if (has_prefix(name, ".tmp-") || has_prefix(name, ".trash-") ||
               strcmp(name, ".pruned") == 0) {
      remove_tree_at(topfd, name, 0);
    }
  }
  closedir(d);
  close(topfd);
  c->written = 0;
  wg_errmsg_clear(ctx);
  return WG_OK;
}

int wg_cache_prune(wg_context *ctx, uint64_t max_bytes) {
  if (!ctx) return WG_EINVAL;
  struct wg_disk_cache *c = ctx->cache;
  if (!c) return wg_fail(ctx, WG_ENOTFOUND, "the disk cache is disabled");
  int err = cache_evict(ctx, c, max_bytes ? max_bytes : c->max_bytes);
  if (err && err != ENOENT) {
    char dir[4096];
    return wg_fail(ctx, WG_EIO, "cache folder %s: cannot prune: %s",
                   cache_dir_of(c, dir, sizeof dir), strerror(err));
  }
  wg_errmsg_clear(ctx);
  return WG_OK;
}

/* --- for tests and tools -------------------------------------------------- */

int wg_cache_entry_path(wg_context *ctx, char *buf, size_t size,
                        const wg_cache_key *key) {
  struct wg_disk_cache *c = ctx ? ctx->cache : NULL;
  if (!c || !key) return WG_ENOTFOUND;
  int n = snprintf(buf, size, "%s", entry_path(c, key));
  return n;
}

int wg_cache_check_file(const char *path, char *why, size_t why_size) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, why_size, "%s", strerror(errno));
    return WG_EIO;
  }
  struct stat st;
  unsigned char h[WG_CACHE_HEADER_SIZE];
  wg_cache_key key;
  const char *err = NULL;
  wg_binary bin = {0};
  if (fstat(fd, &st) != 0) err = "fstat failed";
  else if (!S_ISREG(st.st_mode)) err = "not a regular file";
  else if (!read_full_at(fd, h, sizeof h, 0)) err = "shorter than its header";
  if (!err) {
    /* The entry must carry the key its name says. */
    char hex[33];
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    memcpy(key.bytes, h + 16, 16);
    for (int i = 0; i < 16; i++)
      snprintf(hex + 2 * i, 3, "%02x", key.bytes[i]);
    if (!is_entry_file_name(base) || memcmp(base, hex, 32) != 0)
      err = "name does not match its key";
    else
      err = entry_read(fd, &st, &key, &bin);
  }
  wg_binary_free(&bin);
  close(fd);
  if (err) {
    snprintf(why, why_size, "%s", err);
    return WG_EIO;
  }
  if (why_size) why[0] = '\0';
  return WG_OK;
}
