/*
 * test_cache.c - the Check suite `cache`: the disk cache end to end.
 *
 * Round trips (in one process and across two runs of the `warpgen` tool),
 * every kind of damaged entry (each must be a miss that recompiles, returns
 * the right binary and repairs the entry), many processes filling one empty
 * folder at once, folders that cannot be used, eviction under the cap, and
 * the settings (environment, options). NVRTC is needed, a GPU is not.
 *
 * Every test works in a fresh temporary folder and removes it. The "right
 * binary" is always the one compiled with the disk cache off.
 */
#include "cache.h"
#include "support.h"
#include "warpgen.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static const char *const test_specs[] = {
    "reduce f32 sum width=32 variant=down arch=sm_90",
    "reduce i32 max width=16 variant=xor arch=sm_90",
    "scan f32 sum width=32 variant=up arch=sm_90",
    "allreduce f64 min width=8 variant=xor arch=sm_90",
    "reduce u32 and width=32 variant=redux arch=sm_90",
    "broadcast f32 width=32 variant=idx arch=sm_90 lane=3",
};
#define SPEC_COUNT (sizeof test_specs / sizeof test_specs[0])

/* --- folders -------------------------------------------------------------- */

/* Paths here stay far below this; sized so that no snprintf can cut. */
#define PATH_CAP 1024

/* This test's own folder (support.c makes and removes it). */
static char *test_dir;

static void make_test_dir(void) {
  test_dir = wg_test_tmpdir();
  ck_assert_ptr_nonnull(test_dir);
}

static void remove_test_dir(void) {
  wg_test_rmtree(test_dir);
  free(test_dir);
  test_dir = NULL;
}

/* test_dir + "/" + name, in a static buffer per slot. */
static const char *in_dir(int slot, const char *name) {
  static char bufs[4][PATH_CAP];
  snprintf(bufs[slot], sizeof bufs[slot], "%s/%s", test_dir, name);
  return bufs[slot];
}

static void write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(data, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
}

/* The whole file in a malloc'd buffer (NULL if it cannot be read). */
static unsigned char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  *len = fread(buf, 1, (size_t)n, f);
  fclose(f);
  return buf;
}

/* Paths of every entry-named file ("ab/<hex>.wgc") under dir, whatever its
 * type; returns how many were found (paths beyond max are not kept). */
static size_t find_entries(const char *dir, char paths[][PATH_CAP], size_t max) {
  size_t n = 0;
  DIR *top = opendir(dir);
  if (!top) return 0;
  struct dirent *e;
  while ((e = readdir(top)) != NULL) {
    if (strlen(e->d_name) != 2 || e->d_name[0] == '.') continue;
    char sub[PATH_CAP / 2];
    snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
    DIR *d = opendir(sub);
    if (!d) continue;
    struct dirent *f;
    while ((f = readdir(d)) != NULL) {
      size_t len = strlen(f->d_name);
      if (len < 4 || strcmp(f->d_name + len - 4, ".wgc") != 0) continue;
      if (n < max) snprintf(paths[n], PATH_CAP, "%s/%s", sub, f->d_name);
      n++;
    }
    closedir(d);
  }
  closedir(top);
  return n;
}

/* How many names at the top of dir start with prefix. */
static int count_prefixed(const char *dir, const char *prefix) {
  int n = 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
  closedir(d);
  return n;
}

/* --- the library ---------------------------------------------------------- */

/* A context on dir (NULL: the disk cache off) with cap max_bytes. */
static wg_context *context_on(const char *dir, uint64_t max_bytes) {
  wg_options opt = WG_OPTIONS_INIT;
  opt.cache_dir = dir;
  opt.disk_cache = dir ? 1 : -1;
  opt.cache_max_bytes = max_bytes;
  wg_context *ctx = NULL;
  ck_assert_int_eq(wg_context_create(&ctx, &opt), WG_OK);
  return ctx;
}

typedef struct blob {
  void *data;
  size_t len;
} blob;

/* The cubin for spec text through ctx; the call must succeed whatever the
 * state of the cache. */
static blob cubin_via(wg_context *ctx, const char *text) {
  wg_spec spec;
  ck_assert_msg(wg_spec_parse(ctx, &spec, text) == WG_OK, "%s: %s", text,
                wg_errmsg(ctx));
  blob b = {NULL, 0};
  int rc = wg_cubin(ctx, &b.data, &b.len, &spec);
  ck_assert_msg(rc == WG_OK, "wg_cubin(%s): %s", text, wg_errmsg(ctx));
  ck_assert_uint_gt(b.len, 0);
  return b;
}

/* The cubin compiled with no disk cache at all. */
static blob reference_cubin(const char *text) {
  wg_context *ctx = context_on(NULL, 0);
  blob b = cubin_via(ctx, text);
  wg_context_destroy(ctx);
  return b;
}

static bool blob_equal(blob a, blob b) {
  return a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
}

static wg_cache_stats stats_of(wg_context *ctx) {
  wg_cache_stats st;
  ck_assert_int_eq(wg_cache_stats_get(ctx, &st), WG_OK);
  return st;
}

/* One request in a fresh context on test_dir: the cubin must equal ref;
 * returns the context's counters after it. */
static wg_cache_stats request_in_fresh_context(const char *text, blob ref) {
  wg_context *ctx = context_on(test_dir, 0);
  blob b = cubin_via(ctx, text);
  ck_assert_msg(blob_equal(b, ref), "%s: cubin differs from the reference",
                text);
  wg_free(b.data);
  wg_cache_stats st = stats_of(ctx);
  wg_context_destroy(ctx);
  return st;
}

/* Asserts that dir holds exactly `want` entries and all validate. */
static void assert_entries_valid(const char *dir, size_t want) {
  char paths[64][PATH_CAP];
  size_t n = find_entries(dir, paths, 64);
  ck_assert_uint_eq(n, want);
  for (size_t i = 0; i < n && i < 64; i++) {
    char why[128];
    ck_assert_msg(wg_cache_check_file(paths[i], why, sizeof why) == WG_OK,
                  "%s: %s", paths[i], why);
  }
}

/* --- the `warpgen` tool --------------------------------------------------- */

/* Runs WARPGEN_EXE with args (NULL-terminated, without the program) with
 * the cache in cache_dir; stdout goes to out_path when given. Exit status. */
static int run_tool(const char *const *args, const char *cache_dir,
                    const char *out_path) {
  const char *exe = getenv("WARPGEN_EXE");
  ck_assert_msg(exe && exe[0], "WARPGEN_EXE is not set");
  char *argv[16];
  int n = 0;
  argv[n++] = (char *)exe;
  for (; args[n - 1] && n < 15; n++) argv[n] = (char *)args[n - 1];
  argv[n] = NULL;
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    setenv("WARPGEN_CACHE_DIR", cache_dir, 1);
    unsetenv("WARPGEN_CACHE");
    if (out_path) {
      int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0 || dup2(fd, 1) < 0) _exit(126);
    }
    execv(exe, argv);
    _exit(127);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ========================================================================== */
/* Keys and settings                                                          */
/* ========================================================================== */

START_TEST(test_key_covers_every_field) {
  wg_cache_key base = wg_cache_key_make("src", "-opt", 90, "nv13");
  wg_cache_key same = wg_cache_key_make("src", "-opt", 90, "nv13");
  ck_assert_mem_eq(base.bytes, same.bytes, 16);
  wg_cache_key other[] = {
      wg_cache_key_make("src ", "-opt", 90, "nv13"),
      wg_cache_key_make("src", "-opt ", 90, "nv13"),
      wg_cache_key_make("src", "-opt", 80, "nv13"),
      wg_cache_key_make("src", "-opt", 90, "nv12"),
      wg_cache_key_make("src", "-opt", 90, "nv13 "),
      /* the same bytes split differently between source and options */
      wg_cache_key_make("sr", "c-opt", 90, "nv13"),
      wg_cache_key_make("src-opt", "", 90, "nv13"),
  };
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
    ck_assert_msg(memcmp(base.bytes, other[i].bytes, 16) != 0,
                  "key %zu collides", i);
}
END_TEST

START_TEST(test_size_syntax) {
  uint64_t v;
  ck_assert(wg_cache_parse_size("12345", &v) && v == 12345);
  ck_assert(wg_cache_parse_size("64K", &v) && v == 64u << 10);
  ck_assert(wg_cache_parse_size("256M", &v) && v == 256u << 20);
  ck_assert(wg_cache_parse_size("2GiB", &v) && v == 2ull << 30);
  ck_assert(wg_cache_parse_size("3mb", &v) && v == 3u << 20);
  ck_assert(!wg_cache_parse_size("", &v));
  ck_assert(!wg_cache_parse_size("-1", &v));
  ck_assert(!wg_cache_parse_size("12Q", &v));
  ck_assert(!wg_cache_parse_size("M", &v));
  ck_assert(!wg_cache_parse_size("99999999999999999999", &v));
  ck_assert(!wg_cache_parse_size("17179869184G", &v));
}
END_TEST

START_TEST(test_folder_from_environment) {
  wg_options opt = WG_OPTIONS_INIT;
  wg_context *ctx;
  unsetenv("WARPGEN_CACHE");
  unsetenv("WARPGEN_CACHE_DIR");
  setenv("HOME", "/home/someone", 1);
  setenv("XDG_CACHE_HOME", "relative/cache", 1); /* ignored: not absolute */
  ck_assert_int_eq(wg_context_create(&ctx, &opt), WG_OK);
  ck_assert_str_eq(wg_cache_dir(ctx), "/home/someone/.cache/warpgen");
  wg_context_destroy(ctx);

  setenv("XDG_CACHE_HOME", "/xdg", 1);
  ck_assert_int_eq(wg_context_create(&ctx, &opt), WG_OK);
  ck_assert_str_eq(wg_cache_dir(ctx), "/xdg/warpgen");
  wg_context_destroy(ctx);

  setenv("WARPGEN_CACHE_DIR", "/from/env/", 1);
  ck_assert_int_eq(wg_context_create(&ctx, &opt), WG_OK);
  ck_assert_str_eq(wg_cache_dir(ctx), "/from/env");
  wg_context_destroy(ctx);

  opt.cache_dir = "/from/options";
  ck_assert_int_eq(wg_context_create(&ctx, &opt), WG_OK);
  ck_assert_str_eq(wg_cache_dir(ctx), "/from/options");
  wg_context_destroy(ctx);

  /* Creating a context never creates the folder. */
  struct stat st;
  ck_assert_int_ne(stat("/from/options", &st), 0);
}
END_TEST

START_TEST(test_switched_off) {
  const char *offs[] = {"off", "OFF", "0", "false", "no"};
  wg_options opt = WG_OPTIONS_INIT;
  wg_context *ctx;
  for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
    setenv("WARPGEN_CACHE", offs[i], 1);
    ck_assert_int_eq(wg_context_create(&ctx, &opt), WG_OK);
    ck_assert_ptr_null(wg_cache_dir(ctx));
    ck_assert_int_eq(stats_of(ctx).enabled, 0);
    ck_assert_int_eq(wg_cache_clear(ctx), WG_ENOTFOUND);
    wg_context_destroy(ctx);
  }
  /* The option wins over the environment, both ways. */
  opt.cache_dir = "/somewhere";
  opt.disk_cache = 1;
  ck_assert_int_eq(wg_context_create(&ctx, &opt), WG_OK);
  ck_assert_ptr_nonnull(wg_cache_dir(ctx));
  wg_context_destroy(ctx);
  setenv("WARPGEN_CACHE", "on", 1);
  opt.disk_cache = -1;
  ck_assert_int_eq(wg_context_create(&ctx, &opt), WG_OK);
  ck_assert_ptr_null(wg_cache_dir(ctx));
  wg_context_destroy(ctx);
}
END_TEST

START_TEST(test_bad_size_is_recorded) {
  setenv("WARPGEN_CACHE_MAX", "lots", 1);
  wg_options opt = WG_OPTIONS_INIT;
  opt.cache_dir = "/somewhere";
  wg_context *ctx;
  ck_assert_int_eq(wg_context_create(&ctx, &opt), WG_OK);
  wg_cache_stats st = stats_of(ctx);
  ck_assert_int_eq(st.enabled, 1);
  ck_assert_ptr_nonnull(strstr(st.last_error, "WARPGEN_CACHE_MAX"));
  wg_context_destroy(ctx);
}
END_TEST

/* ========================================================================== */
/* Round trips                                                                */
/* ========================================================================== */

START_TEST(test_round_trip_in_process) {
  make_test_dir();
  const char *text = test_specs[0];
  blob ref = reference_cubin(text);

  wg_context *ctx = context_on(test_dir, 0);
  blob first = cubin_via(ctx, text);
  wg_cache_stats st = stats_of(ctx);
  ck_assert_uint_eq(st.compiles, 1);
  ck_assert_uint_eq(st.entries, 1);
  ck_assert_str_eq(st.last_error, "");
  /* The same context again: no second compile. */
  blob second = cubin_via(ctx, text);
  st = stats_of(ctx);
  ck_assert_uint_eq(st.compiles, 1);
  ck_assert_uint_eq(st.memory_hits + st.disk_hits, 1);
  ck_assert(blob_equal(first, ref) && blob_equal(second, ref));
  wg_context_destroy(ctx);

  /* A new context: from disk. */
  st = request_in_fresh_context(text, ref);
  ck_assert_uint_eq(st.compiles, 0);
  ck_assert_uint_eq(st.disk_hits, 1);
  ck_assert_uint_eq(st.disk_errors, 0);
  assert_entries_valid(test_dir, 1);

  /* The folder was made private. */
  struct stat sb;
  char paths[1][PATH_CAP];
  ck_assert_uint_eq(find_entries(test_dir, paths, 1), 1);
  *strrchr(paths[0], '/') = '\0';
  ck_assert_int_eq(stat(paths[0], &sb), 0);
  ck_assert_uint_eq(sb.st_mode & 0777, 0700);

  wg_free(first.data);
  wg_free(second.data);
  wg_free(ref.data);
  remove_test_dir();
}
END_TEST

/* Two runs of the tool: the second must be served from the entry the first
 * wrote (the entry is not rewritten: same inode, same mtime), with the same
 * bytes as an in-process compile. */
START_TEST(test_round_trip_two_processes) {
  make_test_dir();
  const char *text = test_specs[1];
  const char *out1 = in_dir(0, "first.cubin");
  const char *out2 = in_dir(1, "second.cubin");
  const char *a1[] = {"cubin", text, "-o", out1, NULL};
  const char *a2[] = {"cubin", text, "-o", out2, NULL};
  /* The tool's cache is a subfolder so that the outputs are not entries. */
  char cache[PATH_CAP];
  snprintf(cache, sizeof cache, "%s/cache", test_dir);
  ck_assert_int_eq(run_tool(a1, cache, NULL), 0);
  char paths[2][PATH_CAP];
  ck_assert_uint_eq(find_entries(cache, paths, 2), 1);
  struct stat before, after;
  ck_assert_int_eq(stat(paths[0], &before), 0);
  ck_assert_int_eq(run_tool(a2, cache, NULL), 0);
  ck_assert_int_eq(stat(paths[0], &after), 0);
  ck_assert_uint_eq(before.st_ino, after.st_ino);
  ck_assert_int_eq(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  ck_assert_int_eq(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);

  blob ref = reference_cubin(text);
  blob b1, b2;
  b1.data = read_file(out1, &b1.len);
  b2.data = read_file(out2, &b2.len);
  ck_assert_ptr_nonnull(b1.data);
  ck_assert_ptr_nonnull(b2.data);
  ck_assert(blob_equal(b1, ref));
  ck_assert(blob_equal(b2, ref));
  free(b1.data);
  free(b2.data);
  wg_free(ref.data);
  remove_test_dir();
}
END_TEST

START_TEST(test_tool_cache_command) {
  make_test_dir();
  blob b = {NULL, 0};
  wg_context *ctx = context_on(test_dir, 0);
  for (size_t i = 0; i < 3; i++) {
    b = cubin_via(ctx, test_specs[i]);
    wg_free(b.data);
  }
  wg_context_destroy(ctx);
  /* Outputs go beside the folder, not into it. */
  char out[PATH_CAP];
  snprintf(out, sizeof out, "%s.out", test_dir);
  const char *path[] = {"cache", "path", NULL};
  ck_assert_int_eq(run_tool(path, test_dir, out), 0);
  size_t len;
  char *text = (char *)read_file(out, &len);
  ck_assert_ptr_nonnull(text);
  ck_assert_uint_eq(len, strlen(test_dir) + 1);
  ck_assert_int_eq(memcmp(text, test_dir, len - 1), 0);
  free(text);

  const char *stats[] = {"cache", "stats", NULL};
  ck_assert_int_eq(run_tool(stats, test_dir, out), 0);
  text = (char *)read_file(out, &len);
  ck_assert_ptr_nonnull(strstr(text, "entries:     3"));
  free(text);

  const char *prune[] = {"cache", "prune", "--max", "1", NULL};
  ck_assert_int_eq(run_tool(prune, test_dir, out), 0);
  ck_assert_uint_eq(find_entries(test_dir, NULL, 0), 0);

  const char *bad[] = {"cache", "prune", "--max", "lots", NULL};
  ck_assert_int_eq(run_tool(bad, test_dir, out), 2);
  const char *unknown[] = {"cache", "explode", NULL};
  ck_assert_int_eq(run_tool(unknown, test_dir, out), 2);
  const char *help[] = {"cache", "--help", NULL};
  ck_assert_int_eq(run_tool(help, test_dir, out), 0);
  const char *clear[] = {"cache", "clear", NULL};
  ck_assert_int_eq(run_tool(clear, test_dir, out), 0);
  unlink(out);
  remove_test_dir();
}
END_TEST

/* ========================================================================== */
/* Damaged entries                                                            */
/* ========================================================================== */

typedef enum damage {
  DAMAGE_TRUNCATE_EMPTY,
  DAMAGE_TRUNCATE_HALF,
  DAMAGE_TRUNCATE_HEADER,
  DAMAGE_FLIP_PAYLOAD,
  DAMAGE_FLIP_HEADER,
  DAMAGE_MAGIC,
  DAMAGE_FUTURE_VERSION,
  DAMAGE_GARBAGE,
  DAMAGE_EXTRA_BYTES,
  DAMAGE_OTHER_KEY,
  DAMAGE_DIRECTORY,
  DAMAGE_SYMLINK,
  DAMAGE_FIFO,
  DAMAGE_HUGE,
  DAMAGE_COUNT
} damage;

static const char *const damage_names[DAMAGE_COUNT] = {
    "truncated to 0", "truncated to half", "truncated inside the header",
    "payload byte flipped", "header byte flipped", "wrong magic",
    "future format version", "garbage", "bytes appended",
    "another key's entry", "a directory", "a symbolic link", "a FIFO",
    "a valid header on a 2 GiB sparse file"};

/* A valid entry of another spec, for DAMAGE_OTHER_KEY and DAMAGE_SYMLINK. */
static void other_valid_entry(const char *into) {
  char dir[PATH_CAP];
  snprintf(dir, sizeof dir, "%s/other", test_dir);
  wg_context *ctx = context_on(dir, 0);
  blob b = cubin_via(ctx, test_specs[2]);
  wg_free(b.data);
  wg_context_destroy(ctx);
  char paths[1][PATH_CAP];
  ck_assert_uint_eq(find_entries(dir, paths, 1), 1);
  size_t len;
  unsigned char *data = read_file(paths[0], &len);
  write_file(into, data, len);
  free(data);
}

static void apply_damage(damage kind, const char *path) {
  size_t len;
  unsigned char *data = read_file(path, &len);
  ck_assert_ptr_nonnull(data);
  ck_assert_uint_gt(len, 64);
  switch (kind) {
  case DAMAGE_TRUNCATE_EMPTY: ck_assert_int_eq(truncate(path, 0), 0); break;
  case DAMAGE_TRUNCATE_HALF:
    ck_assert_int_eq(truncate(path, (off_t)len / 2), 0);
    break;
  case DAMAGE_TRUNCATE_HEADER: ck_assert_int_eq(truncate(path, 40), 0); break;
  case DAMAGE_FLIP_PAYLOAD:
    data[len - len / 3] ^= 0x01;
    write_file(path, data, len);
    break;
  case DAMAGE_FLIP_HEADER:
    data[33] ^= 0x80; /* the PTX length */
    write_file(path, data, len);
    break;
  case DAMAGE_MAGIC:
    memcpy(data, "notwarpg", 8);
    write_file(path, data, len);
    break;
  case DAMAGE_FUTURE_VERSION: {
    /* A well-formed header of a later format: only its version differs. */
    data[8] = 2;
    XXH64_hash_t h = XXH3_64bits(data, 56);
    for (int i = 0; i < 8; i++) data[56 + i] = (unsigned char)(h >> (8 * i));
    write_file(path, data, len);
    break;
  }
  case DAMAGE_GARBAGE:
    srand(42);
    for (size_t i = 0; i < len; i++) data[i] = (unsigned char)rand();
    write_file(path, data, len);
    break;
  case DAMAGE_EXTRA_BYTES: {
    FILE *f = fopen(path, "ab");
    ck_assert_ptr_nonnull(f);
    fputs("trailing", f);
    fclose(f);
    break;
  }
  case DAMAGE_OTHER_KEY: other_valid_entry(path); break;
  case DAMAGE_DIRECTORY: {
    unlink(path);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    char inner[PATH_CAP + 32];
    snprintf(inner, sizeof inner, "%s/inner", path);
    ck_assert_int_eq(mkdir(inner, 0700), 0);
    snprintf(inner, sizeof inner, "%s/inner/file", path);
    write_file(inner, "x", 1);
    break;
  }
  case DAMAGE_SYMLINK: {
    /* Even a link to a perfectly valid entry is refused. */
    const char *target = in_dir(2, "target.wgc");
    write_file(target, data, len);
    unlink(path);
    ck_assert_int_eq(symlink(target, path), 0);
    break;
  }
  case DAMAGE_FIFO:
    unlink(path);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    break;
  case DAMAGE_HUGE: {
    /* A header whose lengths add up to the file's size, its checksum right:
     * only the size tells it apart, and that must be enough to refuse it
     * before 2 GiB are allocated and read. Sparse: no disk is used. */
    uint64_t total = 2ull << 30, cubin_len = 0;
    for (int i = 7; i >= 0; i--) cubin_len = cubin_len << 8 | data[40 + i];
    uint64_t ptx_len = total - 64 - cubin_len;
    for (int i = 0; i < 8; i++) data[32 + i] = (unsigned char)(ptx_len >> (8 * i));
    XXH64_hash_t h = XXH3_64bits(data, 56);
    for (int i = 0; i < 8; i++) data[56 + i] = (unsigned char)(h >> (8 * i));
    write_file(path, data, 64);
    ck_assert_int_eq(truncate(path, (off_t)total), 0);
    break;
  }
  default: ck_abort();
  }
  free(data);
}

START_TEST(test_damaged_entry_is_repaired) {
  damage kind = (damage)_i;
  make_test_dir();
  const char *text = test_specs[0];
  blob ref = reference_cubin(text);
  wg_cache_stats st = request_in_fresh_context(text, ref);
  ck_assert_uint_eq(st.compiles, 1);
  char paths[2][PATH_CAP];
  ck_assert_uint_eq(find_entries(test_dir, paths, 2), 1);
  blob entry;
  entry.data = read_file(paths[0], &entry.len);

  apply_damage(kind, paths[0]);
  st = request_in_fresh_context(text, ref);
  ck_assert_msg(st.compiles == 1 && st.disk_hits == 0,
                "%s: not recompiled", damage_names[kind]);
  ck_assert_msg(st.disk_errors >= 1 && st.last_error[0],
                "%s: not recorded", damage_names[kind]);
  if (kind == DAMAGE_HUGE)
    ck_assert_msg(strstr(st.last_error, "larger than an entry may be"),
                  "huge entry: %s", st.last_error);
  assert_entries_valid(test_dir, 1);
  ck_assert_int_eq(count_prefixed(test_dir, ".trash-"), 0);

  /* Repaired: the next request is a plain hit. */
  st = request_in_fresh_context(text, ref);
  ck_assert_uint_eq(st.disk_hits, 1);
  ck_assert_uint_eq(st.compiles, 0);
  if (kind == DAMAGE_SYMLINK) {
    /* The link went, never what it pointed at. */
    size_t len;
    unsigned char *target = read_file(in_dir(0, "target.wgc"), &len);
    ck_assert_ptr_nonnull(target);
    ck_assert_uint_eq(len, entry.len);
    ck_assert_mem_eq(target, entry.data, len);
    free(target);
  }
  free(entry.data);
  wg_free(ref.data);
  remove_test_dir();
}
END_TEST

/* A file where an entry's subfolder belongs. */
START_TEST(test_file_in_place_of_subfolder) {
  make_test_dir();
  const char *text = test_specs[0];
  blob ref = reference_cubin(text);
  request_in_fresh_context(text, ref);
  char paths[1][PATH_CAP];
  ck_assert_uint_eq(find_entries(test_dir, paths, 1), 1);
  char sub[PATH_CAP];
  snprintf(sub, sizeof sub, "%s", paths[0]);
  *strrchr(sub, '/') = '\0';
  unlink(paths[0]);
  ck_assert_int_eq(rmdir(sub), 0);
  write_file(sub, "not a folder", 12);

  wg_cache_stats st = request_in_fresh_context(text, ref);
  ck_assert_uint_eq(st.compiles, 1);
  assert_entries_valid(test_dir, 1);
  wg_free(ref.data);
  remove_test_dir();
}
END_TEST

/* The driver refused the cubin: the entry goes, the next request compiles. */
START_TEST(test_remove_entry) {
  make_test_dir();
  wg_context *ctx = context_on(test_dir, 0);
  wg_cache_key key = wg_cache_key_make("source", "-opt", 90, "nv13");
  char ptx[] = "// ptx";
  unsigned char cubin[100] = {1, 2, 3};
  wg_binary bin = {ptx, strlen(ptx), cubin, sizeof cubin};
  wg_cache_store(ctx, &key, &bin);
  wg_binary got;
  ck_assert(wg_cache_lookup(ctx, &key, &got));
  ck_assert_str_eq(got.ptx, ptx);
  ck_assert_uint_eq(got.cubin_len, sizeof cubin);
  ck_assert_mem_eq(got.cubin, cubin, sizeof cubin);
  wg_binary_free(&got);
  wg_cache_remove(ctx, &key);
  ck_assert(!wg_cache_lookup(ctx, &key, &got));
  ck_assert_uint_eq(stats_of(ctx).disk_errors, 0);
  wg_context_destroy(ctx);
  remove_test_dir();
}
END_TEST

/* ========================================================================== */
/* Many processes at once                                                     */
/* ========================================================================== */

#define WORKERS 16
#define REQUESTS_PER_WORKER 4

/* Forked children below use no Check calls after the fork: Check keeps
 * its messages in a temporary file, which many writers at once (or a
 * file-size limit) would corrupt. */

static wg_context *plain_context_on(const char *dir) {
  wg_options opt = WG_OPTIONS_INIT;
  opt.cache_dir = dir;
  opt.disk_cache = 1;
  wg_context *ctx = NULL;
  return wg_context_create(&ctx, &opt) == WG_OK ? ctx : NULL;
}

/* 0 when ctx gives text's cubin and it equals the file at ref_path, else
 * a code for the exit status. */
static int cubin_matches_file(wg_context *ctx, const char *text,
                              const char *ref_path) {
  wg_spec spec;
  void *cubin;
  size_t len, ref_len;
  if (wg_spec_parse(ctx, &spec, text) != WG_OK ||
      wg_cubin(ctx, &cubin, &len, &spec) != WG_OK)
    return 12;
  unsigned char *ref = read_file(ref_path, &ref_len);
  int bad = !ref || ref_len != len || memcmp(ref, cubin, len) != 0 ? 13 : 0;
  free(ref);
  wg_free(cubin);
  return bad;
}

/* Worker w asks for REQUESTS_PER_WORKER specs starting at w, so that every
 * spec is wanted by several workers at the same moment. Exit 0 when every
 * cubin equals its reference (files ref-N in the parent of the cache). */
static int concurrency_worker(int w, int start_fd, const char *cache) {
  char go;
  if (read(start_fd, &go, 1) < 0) return 10;
  wg_context *ctx = plain_context_on(cache);
  if (!ctx) return 11;
  int bad = 0;
  for (int r = 0; r < REQUESTS_PER_WORKER && !bad; r++) {
    size_t s = (size_t)(w + r) % SPEC_COUNT;
    char name[64];
    snprintf(name, sizeof name, "ref-%zu", s);
    bad = cubin_matches_file(ctx, test_specs[s], in_dir(3, name));
  }
  wg_context_destroy(ctx);
  return bad;
}

START_TEST(test_concurrent_processes) {
  make_test_dir();
  /* References first, in a child, so that this process never loads NVRTC
   * before it forks the workers. */
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    for (size_t s = 0; s < SPEC_COUNT; s++) {
      blob ref = reference_cubin(test_specs[s]);
      char name[64];
      snprintf(name, sizeof name, "ref-%zu", s);
      write_file(in_dir(0, name), ref.data, ref.len);
      wg_free(ref.data);
    }
    _exit(0);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  char cache[PATH_CAP];
  snprintf(cache, sizeof cache, "%s/cache", test_dir);
  int start[2];
  ck_assert_int_eq(pipe(start), 0);
  pid_t pids[WORKERS];
  for (int w = 0; w < WORKERS; w++) {
    pids[w] = fork();
    ck_assert_int_ge(pids[w], 0);
    if (pids[w] == 0) {
      close(start[1]);
      _exit(concurrency_worker(w, start[0], cache));
    }
  }
  close(start[0]);
  close(start[1]); /* every worker's read returns now: go */
  for (int w = 0; w < WORKERS; w++) {
    ck_assert_int_eq(waitpid(pids[w], &status, 0), pids[w]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "worker %d failed with status %d", w, status);
  }
  assert_entries_valid(cache, SPEC_COUNT);
  /* No writer left a temporary behind. */
  ck_assert_int_eq(count_prefixed(cache, ".tmp-"), 0);
  remove_test_dir();
}
END_TEST

/* ========================================================================== */
/* Folders that cannot be used                                                */
/* ========================================================================== */

/* A request with the cache at dir: correct, and the problem recorded. */
static void assert_unusable(const char *dir, const char *reason_part) {
  const char *text = test_specs[0];
  blob ref = reference_cubin(text);
  for (int round = 0; round < 2; round++) {
    wg_context *ctx = context_on(dir, 0);
    blob b = cubin_via(ctx, text);
    ck_assert(blob_equal(b, ref));
    wg_cache_stats st = stats_of(ctx);
    ck_assert_uint_eq(st.compiles, 1);
    ck_assert_uint_ge(st.disk_errors, 1);
    ck_assert_msg(strstr(st.last_error, reason_part) != NULL,
                  "last_error \"%s\" does not say \"%s\"", st.last_error,
                  reason_part);
    wg_free(b.data);
    wg_context_destroy(ctx);
  }
  wg_free(ref.data);
}

START_TEST(test_folder_is_a_file) {
  make_test_dir();
  const char *file = in_dir(0, "file");
  write_file(file, "precious", 8);
  assert_unusable(file, "Not a directory");
  size_t len;
  char *data = (char *)read_file(file, &len);
  ck_assert_uint_eq(len, 8);
  ck_assert_int_eq(memcmp(data, "precious", 8), 0);
  free(data);
  remove_test_dir();
}
END_TEST

/* A parent that cannot be created: under a regular file. Permission bits
 * would not stop root, which CI runs as; this stops everybody. */
START_TEST(test_parent_cannot_be_created) {
  make_test_dir();
  write_file(in_dir(0, "file"), "x", 1);
  assert_unusable(in_dir(1, "file/sub/cache"), "Not a directory");
  remove_test_dir();
}
END_TEST

/* A folder everybody may write (like /tmp itself) could hold planted
 * kernels: it is not used at all, neither read nor written. */
START_TEST(test_world_writable_folder_refused) {
  make_test_dir();
  const char *dir = in_dir(0, "shared");
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  ck_assert_int_eq(chmod(dir, 01777), 0);
  assert_unusable(dir, "writable by everybody");
  wg_context *ctx = context_on(dir, 0);
  ck_assert_int_eq(stats_of(ctx).enabled, 0);
  wg_context_destroy(ctx);
  ck_assert_uint_eq(find_entries(dir, NULL, 0), 0);
  ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 0);
  /* Group-writable is refused too: anybody in the group could plant. */
  ck_assert_int_eq(chmod(dir, 0770), 0);
  assert_unusable(dir, "writable by its group");
  ck_assert_uint_eq(find_entries(dir, NULL, 0), 0);
  /* Private: used. */
  ck_assert_int_eq(chmod(dir, 0700), 0);
  ctx = context_on(dir, 0);
  blob b = cubin_via(ctx, test_specs[0]);
  wg_free(b.data);
  ck_assert_str_eq(stats_of(ctx).last_error, "");
  ck_assert_uint_eq(find_entries(dir, NULL, 0), 1);
  wg_context_destroy(ctx);
  remove_test_dir();
}
END_TEST

static void chown_path(const char *path, uid_t uid) {
  ck_assert_msg(lchown(path, uid, (gid_t)-1) == 0, "chown %s: %s", path,
                strerror(errno));
}

/* The reproducer of issue 10: a folder another user made and filled (here
 * with a perfectly valid entry, which proves nothing about who wrote it)
 * is not used; nor is a subfolder or an entry another user owns, in a
 * folder of ours. Root alone can hand files to another uid. */
START_TEST(test_foreign_owner_refused) {
  if (geteuid() != 0) {
    printf("test_foreign_owner_refused: skipped: needs root to chown\n");
    return;
  }
  const uid_t other = 65534; /* nobody */
  make_test_dir();
  const char *text = test_specs[0];
  const char *dir = test_dir; /* request_in_fresh_context's folder */
  blob ref = reference_cubin(text);
  wg_cache_stats st;
  wg_context *ctx = context_on(dir, 0);
  blob b = cubin_via(ctx, text);
  wg_free(b.data);
  wg_context_destroy(ctx);
  char paths[1][PATH_CAP], sub[PATH_CAP];
  ck_assert_uint_eq(find_entries(dir, paths, 1), 1);
  snprintf(sub, sizeof sub, "%s", paths[0]);
  *strrchr(sub, '/') = '\0';

  /* The whole folder theirs, not writable by us by its mode. */
  chown_path(dir, other);
  chown_path(sub, other);
  chown_path(paths[0], other);
  ck_assert_int_eq(chmod(dir, 0755), 0);
  assert_unusable(dir, "owned by another user");
  ctx = context_on(dir, 0);
  st = stats_of(ctx);
  ck_assert_int_eq(st.enabled, 0);
  ck_assert_ptr_nonnull(strstr(st.last_error, "uid 65534"));
  wg_context_destroy(ctx);

  /* The folder ours again, the subfolder still theirs: a miss, not
   * served, and nothing stored into their subfolder. */
  chown_path(dir, 0);
  ck_assert_int_eq(chmod(dir, 0700), 0);
  st = request_in_fresh_context(text, ref);
  ck_assert_uint_eq(st.disk_hits, 0);
  ck_assert_uint_eq(st.compiles, 1);
  ck_assert_ptr_nonnull(strstr(st.last_error, "owned by another user"));
  struct stat sb;
  ck_assert_int_eq(stat(paths[0], &sb), 0);
  ck_assert_uint_eq(sb.st_uid, other);

  /* The subfolder ours, the entry theirs: a miss; the store replaces it
   * with our own, which the next request is served. */
  chown_path(sub, 0);
  st = request_in_fresh_context(text, ref);
  ck_assert_uint_eq(st.disk_hits, 0);
  ck_assert_uint_eq(st.compiles, 1);
  ck_assert_ptr_nonnull(strstr(st.last_error, "cache entry"));
  ck_assert_ptr_nonnull(strstr(st.last_error, "owned by another user"));
  ck_assert_int_eq(stat(paths[0], &sb), 0);
  ck_assert_uint_eq(sb.st_uid, 0);
  st = request_in_fresh_context(text, ref);
  ck_assert_uint_eq(st.disk_hits, 1);
  ck_assert_str_eq(st.last_error, "");
  wg_free(ref.data);
  remove_test_dir();
}
END_TEST

/* A folder the process may not write: only meaningful for a non-root user. */
START_TEST(test_folder_not_writable) {
  if (geteuid() == 0) return; /* root writes anyway; covered above */
  make_test_dir();
  const char *dir = in_dir(0, "ro");
  ck_assert_int_eq(mkdir(dir, 0500), 0);
  assert_unusable(dir, "Permission denied");
  chmod(dir, 0700);
  remove_test_dir();
}
END_TEST

/* Writes fail with EFBIG under RLIMIT_FSIZE (the same path as a full disk).
 * SIGXFSZ must be ignored for write() to return EFBIG: a host that keeps
 * the default action is killed by the kernel at the first write past the
 * limit, before any library code can react. */
/* In a child under the limit: two contexts in turn each get the right
 * cubin, record the failed store, and leave nothing behind. */
static int file_size_limit_child(const char *text, const char *ref_path) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl = {1000, 1000};
  if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 3;
  const char *dir = in_dir(0, "cache");
  for (int round = 0; round < 2; round++) {
    wg_context *ctx = plain_context_on(dir);
    if (!ctx) return 4;
    int bad = cubin_matches_file(ctx, text, ref_path);
    wg_cache_stats st;
    if (!bad && wg_cache_stats_get(ctx, &st) != WG_OK) bad = 5;
    if (!bad && (st.compiles != 1 || st.disk_errors < 1)) bad = 6;
    if (!bad && !strstr(st.last_error, "too large")) bad = 7;
    wg_context_destroy(ctx);
    if (bad) return bad;
  }
  if (find_entries(dir, NULL, 0) != 0) return 8;
  if (count_prefixed(dir, ".tmp-") != 0) return 9;
  return 0;
}

START_TEST(test_file_size_limit) {
  make_test_dir();
  const char *text = test_specs[0];
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    /* The reference before the limit, while Check may still log. */
    blob ref = reference_cubin(text);
    write_file(in_dir(1, "ref"), ref.data, ref.len);
    wg_free(ref.data);
    _exit(file_size_limit_child(text, in_dir(1, "ref")));
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "child status %d", status);
  remove_test_dir();
}
END_TEST

/* ========================================================================== */
/* Size cap, eviction, sweeping                                               */
/* ========================================================================== */

static uint64_t folder_bytes(const char *dir) {
  char paths[64][PATH_CAP];
  size_t n = find_entries(dir, paths, 64);
  uint64_t total = 0;
  for (size_t i = 0; i < n && i < 64; i++) {
    struct stat st;
    if (stat(paths[i], &st) == 0) total += (uint64_t)st.st_size;
  }
  return total;
}

START_TEST(test_eviction_keeps_under_cap) {
  make_test_dir();
  /* Measure one entry, then allow about two and a half. */
  wg_context *ctx = context_on(test_dir, 0);
  blob b = cubin_via(ctx, test_specs[0]);
  wg_free(b.data);
  uint64_t one = folder_bytes(test_dir);
  wg_context_destroy(ctx);
  uint64_t cap = one * 5 / 2;

  ctx = context_on(test_dir, cap);
  for (size_t s = 1; s < SPEC_COUNT; s++) {
    b = cubin_via(ctx, test_specs[s]);
    wg_free(b.data);
    ck_assert_msg(folder_bytes(test_dir) <= cap, "over the cap after %zu", s);
  }
  wg_cache_stats st = stats_of(ctx);
  ck_assert_uint_gt(st.evictions, 0);
  ck_assert_uint_le(st.bytes, cap);
  ck_assert_uint_ge(st.entries, 1);
  wg_context_destroy(ctx);

  /* The newest entry survived. */
  blob ref = reference_cubin(test_specs[SPEC_COUNT - 1]);
  st = request_in_fresh_context(test_specs[SPEC_COUNT - 1], ref);
  ck_assert_uint_eq(st.disk_hits, 1);
  wg_free(ref.data);
  remove_test_dir();
}
END_TEST

/* Many short-lived contexts (as many processes would be), one store each:
 * the shared size estimate must keep the folder under the cap although no
 * context alone writes enough to trigger a scan. Synthetic binaries: no
 * NVRTC needed. */
START_TEST(test_cap_holds_across_contexts) {
  make_test_dir();
  const uint64_t cap = 20000; /* about 18 entries; a sixteenth > one entry */
  char ptx[] = "// ptx";
  unsigned char cubin[1000];
  uint64_t evictions = 0;
  for (int i = 0; i < 60; i++) {
    wg_context *ctx = context_on(test_dir, cap);
    memset(cubin, i, sizeof cubin);
    wg_cache_key key = wg_cache_key_make("source", "-opt", i, "nv13");
    wg_binary bin = {ptx, strlen(ptx), cubin, sizeof cubin};
    wg_cache_store(ctx, &key, &bin);
    ck_assert_msg(folder_bytes(test_dir) <= cap, "over the cap after %d", i);
    wg_cache_stats st = stats_of(ctx);
    ck_assert_str_eq(st.last_error, "");
    evictions += st.evictions;
    wg_context_destroy(ctx);
  }
  ck_assert_uint_ge(evictions, 60 - cap / 1000);
  remove_test_dir();
}
END_TEST

static void set_mtime(const char *path, time_t when) {
  struct timespec ts[2] = {{when, 0}, {when, 0}};
  ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

/* Prune removes the least recently used first, and a hit makes an entry
 * recent again. */
START_TEST(test_prune_is_lru) {
  make_test_dir();
  wg_context *ctx = context_on(test_dir, 0);
  char touched[PATH_CAP];
  char paths[4][PATH_CAP];
  blob b;
  time_t now = time(NULL);
  /* Three entries. */
  for (size_t s = 0; s < 3; s++) {
    b = cubin_via(ctx, test_specs[s]);
    wg_free(b.data);
  }
  wg_context_destroy(ctx);
  ck_assert_uint_eq(find_entries(test_dir, paths, 4), 3);
  /* Make all three old; a hit on spec 0 must make its entry the newest,
   * so pruning down to one entry keeps exactly that one. */
  for (int i = 0; i < 3; i++) set_mtime(paths[i], now - 3600 * (i + 2));
  blob ref0 = reference_cubin(test_specs[0]);
  wg_cache_stats st = request_in_fresh_context(test_specs[0], ref0);
  ck_assert_uint_eq(st.disk_hits, 1);
  size_t entry_size = 0;
  for (int i = 0; i < 3; i++) {
    struct stat sb;
    ck_assert_int_eq(stat(paths[i], &sb), 0);
    if (sb.st_mtime >= now) {
      memcpy(touched, paths[i], sizeof touched);
      entry_size = (size_t)sb.st_size;
    }
  }
  ck_assert_uint_gt(entry_size, 0);

  ctx = context_on(test_dir, 0);
  ck_assert_int_eq(wg_cache_prune(ctx, entry_size), WG_OK);
  st = stats_of(ctx);
  ck_assert_uint_eq(st.evictions, 2);
  ck_assert_uint_eq(st.entries, 1);
  wg_context_destroy(ctx);
  struct stat sb;
  ck_assert_int_eq(stat(touched, &sb), 0);
  st = request_in_fresh_context(test_specs[0], ref0);
  ck_assert_uint_eq(st.disk_hits, 1);
  wg_free(ref0.data);
  remove_test_dir();
}
END_TEST

START_TEST(test_prune_sweeps_stale_temporaries) {
  make_test_dir();
  write_file(in_dir(0, ".tmp-stale1"), "half", 4);
  write_file(in_dir(1, ".tmp-fresh1"), "half", 4);
  set_mtime(in_dir(0, ".tmp-stale1"), time(NULL) - 2 * 3600);
  wg_context *ctx = context_on(test_dir, 0);
  ck_assert_int_eq(wg_cache_prune(ctx, 0), WG_OK);
  struct stat st;
  ck_assert_int_ne(stat(in_dir(0, ".tmp-stale1"), &st), 0);
  ck_assert_int_eq(stat(in_dir(1, ".tmp-fresh1"), &st), 0);
  wg_context_destroy(ctx);
  remove_test_dir();
}
END_TEST

START_TEST(test_clear_keeps_foreign_files) {
  make_test_dir();
  wg_context *ctx = context_on(test_dir, 0);
  for (size_t s = 0; s < 2; s++) {
    blob b = cubin_via(ctx, test_specs[s]);
    wg_free(b.data);
  }
  write_file(in_dir(0, "notes.txt"), "mine", 4);
  ck_assert_uint_eq(stats_of(ctx).entries, 2);
  ck_assert_int_eq(wg_cache_clear(ctx), WG_OK);
  ck_assert_uint_eq(stats_of(ctx).entries, 0);
  struct stat st;
  ck_assert_int_eq(stat(in_dir(0, "notes.txt"), &st), 0);
  /* Stores work again after a clear. */
  blob b = cubin_via(ctx, test_specs[0]);
  wg_free(b.data);
  ck_assert_uint_eq(stats_of(ctx).entries, 1);
  wg_context_destroy(ctx);
  remove_test_dir();
}
END_TEST

/* The folder is made on the first store, not before, and again if someone
 * removes it while a context is alive. */
START_TEST(test_folder_made_lazily) {
  make_test_dir();
  const char *dir = in_dir(0, "a/b/c");
  wg_context *ctx = context_on(dir, 0);
  struct stat st;
  ck_assert_int_ne(stat(dir, &st), 0);
  wg_cache_stats s = stats_of(ctx);
  ck_assert_uint_eq(s.entries, 0);
  ck_assert_str_eq(s.last_error, "");
  blob b = cubin_via(ctx, test_specs[0]);
  wg_free(b.data);
  ck_assert_int_eq(stat(dir, &st), 0);
  ck_assert_uint_eq(st.st_mode & 0777, 0700);
  wg_test_rmtree(in_dir(1, "a"));
  b = cubin_via(ctx, test_specs[1]);
  wg_free(b.data);
  ck_assert_uint_eq(stats_of(ctx).entries, 1);
  wg_context_destroy(ctx);
  remove_test_dir();
}
END_TEST

/* The size estimate is a file anybody in the folder could have written:
 * out-of-range or malformed numbers are no estimate (a scan replaces them),
 * never arithmetic that overflows. */
START_TEST(test_bad_estimate_is_rescanned) {
  char now_text[32];
  snprintf(now_text, sizeof now_text, "%lld", (long long)time(NULL));
  char huge_now[64], future[64];
  snprintf(huge_now, sizeof huge_now, "18446744073709551615 %s\n", now_text);
  snprintf(future, sizeof future, "0 %lld\n", (long long)time(NULL) + 100000);
  const char *bad[] = {
      "0 -9223372036854775808\n", huge_now, future,
      "99999999999999999999 1\n", "5 12abc\n", "-5 1\n", " 5 1\n", "",
      "5 9223372036854775807\n", "5 18446744073709551615\n",
  };
  char ptx[] = "// ptx";
  unsigned char cubin[1000];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    make_test_dir();
    wg_context *ctx = context_on(test_dir, 1 << 20);
    /* One entry first, so that the folder exists and holds something. */
    memset(cubin, 1, sizeof cubin);
    wg_cache_key key = wg_cache_key_make("one", "-opt", 90, "nv13");
    wg_binary bin = {ptx, strlen(ptx), cubin, sizeof cubin};
    wg_cache_store(ctx, &key, &bin);
    write_file(in_dir(0, ".pruned"), bad[i], strlen(bad[i]));
    key = wg_cache_key_make("two", "-opt", 90, "nv13");
    wg_cache_store(ctx, &key, &bin);
    /* The store did not trust the file: it scanned and wrote the truth. */
    size_t len;
    char *text = (char *)read_file(in_dir(0, ".pruned"), &len);
    ck_assert_ptr_nonnull(text);
    unsigned long long bytes = strtoull(text, NULL, 10);
    ck_assert_msg(bytes == folder_bytes(test_dir), "'%s': estimate %llu, "
                  "folder %llu", bad[i], bytes,
                  (unsigned long long)folder_bytes(test_dir));
    free(text);
    ck_assert_str_eq(stats_of(ctx).last_error, "");
    wg_context_destroy(ctx);
    remove_test_dir();
  }
}
END_TEST

/* ========================================================================== */

static Suite *cache_suite(void) {
  Suite *s = suite_create("cache");
  TCase *tc = tcase_create("settings");
  tcase_add_test(tc, test_key_covers_every_field);
  tcase_add_test(tc, test_size_syntax);
  tcase_add_test(tc, test_folder_from_environment);
  tcase_add_test(tc, test_switched_off);
  tcase_add_test(tc, test_bad_size_is_recorded);
  suite_add_tcase(s, tc);

  tc = tcase_create("round trip");
  tcase_add_test(tc, test_round_trip_in_process);
  tcase_add_test(tc, test_round_trip_two_processes);
  tcase_add_test(tc, test_tool_cache_command);
  tcase_add_test(tc, test_folder_made_lazily);
  suite_add_tcase(s, tc);

  tc = tcase_create("damage");
  tcase_add_loop_test(tc, test_damaged_entry_is_repaired, 0, DAMAGE_COUNT);
  tcase_add_test(tc, test_file_in_place_of_subfolder);
  tcase_add_test(tc, test_remove_entry);
  suite_add_tcase(s, tc);

  tc = tcase_create("concurrency");
  tcase_add_test(tc, test_concurrent_processes);
  suite_add_tcase(s, tc);

  tc = tcase_create("unusable folders");
  tcase_add_test(tc, test_folder_is_a_file);
  tcase_add_test(tc, test_parent_cannot_be_created);
  tcase_add_test(tc, test_folder_not_writable);
  tcase_add_test(tc, test_world_writable_folder_refused);
  tcase_add_test(tc, test_foreign_owner_refused);
  tcase_add_test(tc, test_file_size_limit);
  suite_add_tcase(s, tc);

  tc = tcase_create("eviction");
  tcase_add_test(tc, test_eviction_keeps_under_cap);
  tcase_add_test(tc, test_cap_holds_across_contexts);
  tcase_add_test(tc, test_prune_is_lru);
  tcase_add_test(tc, test_prune_sweeps_stale_temporaries);
  tcase_add_test(tc, test_clear_keeps_foreign_files);
  tcase_add_test(tc, test_bad_estimate_is_rescanned);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  /* Tests choose their folders; the caller's settings must not leak in. */
  unsetenv("WARPGEN_CACHE");
  unsetenv("WARPGEN_CACHE_DIR");
  unsetenv("WARPGEN_CACHE_MAX");
  return wg_test_run_suite(cache_suite());
}
