/*
 * test_nvrtc_load.c - in the `cache` suite: when NVRTC is loaded and what
 * of it keys the disk cache (src/nvrtc.c).
 *
 * A process served from the disk cache never maps libnvrtc (read from
 * /proc/self/maps, which the same test shows does list it after a miss),
 * and a miss that compiles for a named arch never maps libcuda;
 * the NVRTC file's identity is part of every key (same file through a link:
 * same key; another file, another size or mtime: another key); NVRTC that
 * is missing, not a library, or replaced after the process keyed on it is a
 * clear WG_ECOMPILE on a miss, never a crash. NVRTC is found once per
 * process, so every case that sets WARPGEN_NVRTC runs in a child of its
 * own; the test process Check forks from never touches NVRTC.
 */
#include "cache.h"
#include "support.h"
#include "internal.h"

#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPEC "reduce f32 sum width=32 variant=down arch=sm_90"
#define OTHER_SPEC "reduce i32 max width=16 variant=xor arch=sm_90"
#define PATH_CAP 1024

static char *dir;       /* this test's folder */
static char cache[PATH_CAP];

static void setup(void) {
  dir = wg_test_tmpdir();
  ck_assert_ptr_nonnull(dir);
  snprintf(cache, sizeof cache, "%s/cache", dir);
  setenv("WARPGEN_CACHE_DIR", cache, 1);
  unsetenv("WARPGEN_NVRTC");
}

static void teardown(void) {
  wg_test_rmtree(dir);
  free(dir);
}

/* Whether this process has a file whose name holds `name` mapped. */
static bool mapped(const char *name) {
  FILE *f = fopen("/proc/self/maps", "r");
  ck_assert_ptr_nonnull(f);
  char line[4096];
  bool found = false;
  while (fgets(line, sizeof line, f))
    if (strstr(line, name)) found = true;
  fclose(f);
  return found;
}

static bool nvrtc_mapped(void) { return mapped("libnvrtc"); }

/* The status of wg_cubin(text) in a fresh context; *stats (may be NULL)
 * gets the context's counters, msg (may be NULL) its message. */
static int cubin_status(const char *text, wg_cache_stats *stats, char *msg,
                        size_t msg_size) {
  wg_context *ctx = wg_test_context();
  wg_spec spec;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &spec, text));
  void *cubin = NULL;
  size_t len = 0;
  int rc = wg_cubin(ctx, &cubin, &len, &spec);
  if (rc == WG_OK) ck_assert_uint_gt(len, 64);
  else ck_assert_ptr_null(cubin);
  wg_free(cubin);
  if (msg) snprintf(msg, msg_size, "%s", wg_errmsg(ctx));
  if (stats) WG_TEST_OK(ctx, wg_cache_stats_get(ctx, stats));
  wg_context_destroy(ctx);
  return rc;
}

/* Runs fn in a child with WARPGEN_NVRTC set to nvrtc (NULL: unset) and
 * returns its exit status (0: every check passed). */
static int in_child(const char *nvrtc, void (*fn)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    if (nvrtc) setenv("WARPGEN_NVRTC", nvrtc, 1);
    else unsetenv("WARPGEN_NVRTC");
    fn();
    _exit(0);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* In children: exit 1 on the first failed expectation, saying which. */
#define CHILD_EXPECT(cond)                                             \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      _exit(1);                                                        \
    }                                                                  \
  } while (0)

static void warm(void) {
  CHILD_EXPECT(cubin_status(SPEC, NULL, NULL, 0) == WG_OK);
}

/* A hit through the same file, whatever path reaches it. */
static void hit_without_compiling(void) {
  wg_cache_stats st;
  CHILD_EXPECT(cubin_status(SPEC, &st, NULL, 0) == WG_OK);
  CHILD_EXPECT(st.compiles == 0 && st.disk_hits == 1);
  CHILD_EXPECT(!nvrtc_mapped());
}

/* Another identity: a miss, and the file cannot compile. */
static void miss_then_clear_error(void) {
  wg_cache_stats st;
  char msg[1024];
  CHILD_EXPECT(cubin_status(SPEC, &st, msg, sizeof msg) == WG_ECOMPILE);
  CHILD_EXPECT(st.disk_hits == 0 && st.compiles == 0);
  CHILD_EXPECT(strstr(msg, "NVRTC") != NULL);
  fprintf(stderr, "(expected) %s\n", msg);
}

START_TEST(warm_cache_never_loads_nvrtc) {
  ck_assert_int_eq(in_child(NULL, warm), 0);
  /* Here, in the test's own process: a hit leaves NVRTC unloaded ... */
  ck_assert(!nvrtc_mapped());
  wg_cache_stats st;
  ck_assert_int_eq(cubin_status(SPEC, &st, NULL, 0), WG_OK);
  ck_assert_uint_eq(st.disk_hits, 1);
  ck_assert_uint_eq(st.compiles, 0);
  ck_assert_msg(!nvrtc_mapped(), "a disk-cache hit loaded NVRTC");
  /* ... and a miss loads it: the check above can fail. */
  ck_assert_int_eq(cubin_status(OTHER_SPEC, &st, NULL, 0), WG_OK);
  ck_assert_uint_eq(st.compiles, 1);
  ck_assert(nvrtc_mapped());
  /* A compile for a named arch never starts CUDA: NVRTC 13 itself loads
   * libcuda and calls cuInit for its own cache unless told --no-cache
   * (src/compile.c). Meaningful where a driver is installed. */
  ck_assert_msg(!mapped("libcuda"), "a compile for sm_90 loaded the CUDA driver");
}
END_TEST

/* The same file through a link, or through a folder holding a link, is
 * the same NVRTC: the warm entries serve it. */
START_TEST(same_file_same_key) {
  ck_assert_int_eq(in_child(NULL, warm), 0);
  const char *real = wg_nvrtc_path();
  ck_assert_msg(*real, "no NVRTC found for this test");
  char link[PATH_CAP], folder[PATH_CAP], inner[PATH_CAP + 16];
  snprintf(link, sizeof link, "%s/my-nvrtc.so", dir);
  ck_assert_int_eq(symlink(real, link), 0);
  ck_assert_int_eq(in_child(link, hit_without_compiling), 0);
  snprintf(folder, sizeof folder, "%s/lib", dir);
  ck_assert_int_eq(mkdir(folder, 0755), 0);
  snprintf(inner, sizeof inner, "%s/libnvrtc.so", folder);
  ck_assert_int_eq(symlink(real, inner), 0);
  ck_assert_int_eq(in_child(folder, hit_without_compiling), 0);
}
END_TEST

static void set_mtime(const char *path, time_t when) {
  struct timeval tv[2] = {{when, 0}, {when, 0}};
  ck_assert_int_eq(utimes(path, tv), 0);
}

/* The identity text, and so the key, follows the file's name, size and
 * mtime, and nothing else. */
START_TEST(identity_follows_name_size_mtime) {
  char fake[PATH_CAP], renamed[PATH_CAP], link[PATH_CAP];
  char a[512], b[512];
  snprintf(fake, sizeof fake, "%s/libnvrtc.so.13", dir);
  FILE *f = fopen(fake, "wb");
  ck_assert_ptr_nonnull(f);
  fputs("not a library", f);
  fclose(f);
  set_mtime(fake, 1700000000);
  ck_assert_int_gt(wg_nvrtc_describe(a, sizeof a, fake), 0);
  ck_assert_str_eq(a, "libnvrtc.so.13 size=13 mtime=1700000000");
  snprintf(link, sizeof link, "%s/libnvrtc.so", dir);
  ck_assert_int_eq(symlink(fake, link), 0);
  ck_assert_int_gt(wg_nvrtc_describe(b, sizeof b, link), 0);
  ck_assert_str_eq(a, b); /* a link is its target */
  set_mtime(fake, 1700000001);
  ck_assert_int_gt(wg_nvrtc_describe(b, sizeof b, fake), 0);
  ck_assert_str_ne(a, b);
  set_mtime(fake, 1700000000);
  f = fopen(fake, "ab");
  fputc('!', f);
  fclose(f);
  set_mtime(fake, 1700000000);
  ck_assert_int_gt(wg_nvrtc_describe(b, sizeof b, fake), 0);
  ck_assert_str_eq(b, "libnvrtc.so.13 size=14 mtime=1700000000");
  snprintf(renamed, sizeof renamed, "%s/libnvrtc.so.12", dir);
  ck_assert_int_eq(rename(fake, renamed), 0);
  ck_assert_int_gt(wg_nvrtc_describe(b, sizeof b, renamed), 0);
  ck_assert_str_eq(b, "libnvrtc.so.12 size=14 mtime=1700000000");
  ck_assert_int_eq(wg_nvrtc_describe(b, sizeof b, fake), WG_ENOTFOUND);
  ck_assert_int_eq(wg_nvrtc_describe(b, sizeof b, dir), WG_ENOTFOUND);
  wg_cache_key k1 = wg_cache_key_make("src", "-o", 90, a);
  wg_cache_key k2 = wg_cache_key_make("src", "-o", 90, b);
  ck_assert(memcmp(k1.bytes, k2.bytes, sizeof k1.bytes) != 0);

  /* End to end: a warm cache does not serve another NVRTC file. */
  ck_assert_int_eq(in_child(NULL, warm), 0);
  ck_assert_int_eq(in_child(renamed, miss_then_clear_error), 0);
}
END_TEST

static void nvrtc_missing(void) {
  miss_then_clear_error();
  wg_context *ctx = wg_test_context();
  int major = -1, minor = -1, *archs = NULL;
  size_t n = 9;
  CHILD_EXPECT(wg_nvrtc_version(ctx, &major, &minor) == WG_ECOMPILE);
  CHILD_EXPECT(strstr(wg_errmsg(ctx), "WARPGEN_NVRTC=/nonexistent/libnvrtc.so.13"));
  CHILD_EXPECT(wg_supported_archs(ctx, &archs, &n) == WG_ECOMPILE);
  CHILD_EXPECT(archs == NULL && n == 0);
  /* What needs no compiler still works. */
  wg_spec spec;
  char *source = NULL;
  CHILD_EXPECT(wg_spec_parse(ctx, &spec, SPEC) == WG_OK);
  CHILD_EXPECT(wg_source(ctx, &source, &spec) == WG_OK && source);
  wg_free(source);
  CHILD_EXPECT(strcmp(wg_nvrtc_identity(), "none") == 0);
  CHILD_EXPECT(!nvrtc_mapped());
  wg_context_destroy(ctx);
}

START_TEST(missing_nvrtc_is_a_clear_error) {
  ck_assert_int_eq(in_child("/nonexistent/libnvrtc.so.13", nvrtc_missing), 0);
}
END_TEST

/* A shared library that is not NVRTC, copied to where NVRTC is looked for:
 * libm, which this test links. */
static char solib[PATH_CAP];

static void copy_libm_to(const char *to) {
  double (*fn)(double) = cos;
  Dl_info info;
  ck_assert(dladdr(*(void **)&fn, &info) && info.dli_fname);
  FILE *in = fopen(info.dli_fname, "rb"), *out = fopen(to, "wb");
  ck_assert_ptr_nonnull(in);
  ck_assert_ptr_nonnull(out);
  char buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, in)) > 0)
    ck_assert_uint_eq(fwrite(buf, 1, got, out), got);
  fclose(in);
  ck_assert_int_eq(fclose(out), 0);
}

static void not_nvrtc(void) {
  char msg[1024];
  CHILD_EXPECT(cubin_status(OTHER_SPEC, NULL, msg, sizeof msg) == WG_ECOMPILE);
  CHILD_EXPECT(strstr(msg, "lacks nvrtc"));
}

/* Keyed on one file, then the file changes before NVRTC is loaded (an
 * upgrade while the process runs): refused, never compiled under the old
 * key. */
static void replaced_after_keying(void) {
  const char *before = wg_nvrtc_identity();
  CHILD_EXPECT(strstr(before, "libnvrtc.so.13 size="));
  set_mtime(solib, 1600000000);
  char msg[1024];
  CHILD_EXPECT(cubin_status(OTHER_SPEC, NULL, msg, sizeof msg) == WG_ECOMPILE);
  CHILD_EXPECT(strstr(msg, "changed after this process first used it"));
}

START_TEST(wrong_or_replaced_library) {
  snprintf(solib, sizeof solib, "%s/libnvrtc.so.13", dir);
  copy_libm_to(solib);
  ck_assert_int_eq(in_child(solib, not_nvrtc), 0);
  ck_assert_int_eq(in_child(solib, replaced_after_keying), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("nvrtc-load");
  TCase *tc = tcase_create("nvrtc-load");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, warm_cache_never_loads_nvrtc);
  tcase_add_test(tc, same_file_same_key);
  tcase_add_test(tc, identity_follows_name_size_mtime);
  tcase_add_test(tc, missing_nvrtc_is_a_clear_error);
  tcase_add_test(tc, wrong_or_replaced_library);
  suite_add_tcase(s, tc);
  return wg_test_run_suite(s);
}
