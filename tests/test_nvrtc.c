/*
 * test_nvrtc.c - the `nvrtc` suite: every valid spec compiles with NVRTC for
 * the architecture given as argv[1] (default sm_90), and its PTX holds the
 * instruction its variant promises. No GPU needed. WARPGEN_NVRTC_EVERY=K
 * compiles every K-th spec only (a quick look while editing templates);
 * WARPGEN_NVRTC_FILTER=REGEX (POSIX extended) only the specs whose text
 * matches, e.g. '^(ballot|any|all) ' for the vote primitives.
 */
#include "internal.h"
#include "support.h"
#include "warp_cases.h"

#include <check.h>
#include <time.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_arch = 90;

/* The instruction each variant promises in PTX; smem promises shared-memory
 * traffic and no shuffle at all. (The array and row kernels promise
 * 16-byte loads: has_16_byte_load.) */
static const char *promised(const wg_spec *s) {
  if (!wg_primitives[s->primitive].is_warp) return NULL;
  switch (s->variant) {
  case WG_VARIANT_DOWN: return "shfl.sync.down";
  case WG_VARIANT_XOR: return "shfl.sync.bfly";
  case WG_VARIANT_UP: return "shfl.sync.up";
  case WG_VARIANT_IDX: return "shfl.sync.idx";
  case WG_VARIANT_REDUX: return "redux.sync";
  case WG_VARIANT_SMEM: return "st.shared";
  case WG_VARIANT_VOTE:
    return s->primitive == WG_BALLOT ? "vote.sync.ballot"
           : s->primitive == WG_ANY  ? "vote.sync.any"
           : s->primitive == WG_ALL  ? "vote.sync.all"
                                     : "match.any.sync";
  default: return NULL;
  }
}

/* Outputs one per element: written with 16-byte stores in the vec layout,
 * unless a lane's outputs of a trip are narrower than 16 bytes (logsumexp
 * of 64-bit integers writes two f32). */
static bool per_element_vector_output(const wg_spec *s) {
  uint64_t count;
  size_t size;
  if (wg_output_shape(&count, &size, s, 1) != WG_OK || size * 16 / wg_type_size(s->type) < 16)
    return false;
  return s->primitive == WG_ALLREDUCE || s->primitive == WG_SCAN ||
         s->primitive == WG_EXSCAN || s->primitive == WG_BROADCAST;
}

/* A 16-byte store: four 32-bit words, or two 64-bit ones (the compiler
 * writes a word of doubles as st.global.v2.f64). */
static bool has_16_byte_store(const char *ptx) {
  static const char *const forms[] = {"st.global.v4.", "st.global.v2.f64", "st.global.v2.u64",
                                      "st.global.v2.b64", "st.global.v2.s64"};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
    if (strstr(ptx, forms[i])) return true;
  return false;
}

/* A 16-byte read-only load: plain, or with an L2 eviction hint (the
 * streamed rows of templates/rownorm.cu). */
static bool has_16_byte_load(const char *ptx) {
  return strstr(ptx, "ld.global.nc.v4") || strstr(ptx, "ld.global.nc.L2::cache_hint.v4");
}

/* Checks one PTX text; returns NULL or what is wrong. */
static const char *check_ptx(const wg_spec *s, const char *ptx, const char *name) {
  static char why[256];
  const char *want = promised(s);
  if (!strstr(ptx, name)) return "the kernel's entry point is missing";
  if (wg_primitives[s->primitive].is_warp) {
    const wg_spec c = wg_spec_concrete(s, test_arch);
    if (c.layout == WG_LAYOUT_VEC && c.primitive != WG_MATCH) {
      if (!strstr(ptx, "ld.global.nc.v4")) return "the vec layout must load 16 bytes at a time";
      if (per_element_vector_output(&c) && !has_16_byte_store(ptx))
        return "the vec layout must store per-element outputs 16 bytes at a time";
    }
    /* A group that lives in one lane is folded in the thread: nothing may
     * cross lanes. Every other group needs the named instruction. */
    if (wg_spec_group_lanes(&c) == 1) {
      if (strstr(ptx, "shfl.sync") || strstr(ptx, "vote.sync") || strstr(ptx, "redux.sync") ||
          strstr(ptx, "match.any"))
        return "a group held by one lane must not exchange across lanes";
      return NULL;
    }
  }
  if (!wg_primitives[s->primitive].is_warp && !has_16_byte_load(ptx))
    return "the array and row kernels must load 16 bytes at a time";
  if (want && !strstr(ptx, want)) {
    snprintf(why, sizeof why, "no '%s' in the PTX", want);
    return why;
  }
  if (s->variant == WG_VARIANT_SMEM && (strstr(ptx, "shfl.sync") || !strstr(ptx, "ld.shared")))
    return "smem must load shared memory and never shuffle";
  if (s->variant == WG_VARIANT_REDUX && strstr(ptx, "shfl.sync"))
    return "redux must not shuffle";
  return NULL;
}

START_TEST(every_spec_compiles) {
  wg_options o = WG_OPTIONS_INIT;
  o.disk_cache = -1; /* measure NVRTC, not the cache */
  wg_context *ctx;
  ck_assert_int_eq(wg_context_create(&ctx, &o), WG_OK);
  wg_spec *list;
  size_t n, failures = 0;
  ck_assert_int_eq(wg_spec_list(ctx, &list, &n, test_arch), WG_OK);
  /* WARPGEN_NVRTC_EVERY and _OFFSET pick an interleaved sample. */
  unsigned every_u, offset_u;
  wg_test_nvrtc_sample(&every_u, &offset_u);
  const size_t every = every_u, offset = offset_u;
  const char *filter_text = getenv("WARPGEN_NVRTC_FILTER");
  regex_t filter;
  const bool filtered = filter_text && *filter_text;
  if (filtered)
    ck_assert_msg(regcomp(&filter, filter_text, REG_EXTENDED | REG_NOSUB) == 0,
                  "WARPGEN_NVRTC_FILTER is not a regular expression");
  size_t compiled = 0;
  for (size_t i = offset; i < n; i += every) {
    char text[256], name[128];
    wg_spec_format(text, sizeof text, &list[i]);
    if (filtered && regexec(&filter, text, 0, NULL, 0) != 0) continue;
    compiled++;
    wg_kernel_name(name, sizeof name, &list[i]);
    char *ptx;
    const char *why = NULL;
    if (wg_ptx(ctx, &ptx, NULL, &list[i]) != WG_OK) {
      why = wg_errmsg(ctx);
    } else {
      why = check_ptx(&list[i], ptx, name);
      wg_free(ptx);
    }
    if (why && failures++ < 10) fprintf(stderr, "FAIL %s: %s\n", text, why);
  }
  printf("nvrtc sm_%d: %zu of %zu specs compiled (every %zu from %zu: "
         "WARPGEN_NVRTC_OFFSET=%zu replays), %zu failed\n", test_arch, compiled, n, every,
         offset, offset,
         failures);
  ck_assert_msg(failures == 0, "%zu of %zu specs failed for sm_%d", failures, compiled,
                test_arch);
  ck_assert_msg(compiled > 0, "no spec was compiled: the filter matches none");
  if (filtered) regfree(&filter);
  wg_free(list);
  wg_context_destroy(ctx);
}
END_TEST

/* A compile error comes back with NVRTC's log in the message. */
START_TEST(compile_error_has_log) {
  wg_context *ctx;
  ck_assert_int_eq(wg_context_create(&ctx, NULL), WG_OK);
  wg_binary bin;
  int rc = wg_compile(ctx, &bin, "extern \"C\" __global__ void k() { undeclared_thing(); }",
                      "broken", test_arch);
  ck_assert_int_eq(rc, WG_ECOMPILE);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "NVRTC log"));
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "undeclared_thing"));
  wg_context_destroy(ctx);
}
END_TEST

/* The cubin is an ELF image for the asked architecture. */
START_TEST(cubin_is_elf) {
  wg_options o = WG_OPTIONS_INIT;
  o.disk_cache = -1;
  wg_context *ctx;
  ck_assert_int_eq(wg_context_create(&ctx, &o), WG_OK);
  wg_spec s;
  char text[64];
  snprintf(text, sizeof text, "allreduce f16 max width=4 arch=sm_%d", test_arch);
  ck_assert_int_eq(wg_spec_parse(ctx, &s, text), WG_OK);
  void *cubin;
  size_t len;
  ck_assert_int_eq(wg_cubin(ctx, &cubin, &len, &s), WG_OK);
  ck_assert_uint_gt(len, 64);
  ck_assert_int_eq(memcmp(cubin, "\177ELF", 4), 0);
  wg_free(cubin);
  int major, minor;
  ck_assert_int_eq(wg_nvrtc_version(ctx, &major, &minor), WG_OK);
  ck_assert_int_ge(major, 12);
  int *archs;
  size_t n;
  ck_assert_int_eq(wg_supported_archs(ctx, &archs, &n), WG_OK);
  ck_assert_uint_gt(n, 3);
  ck_assert_int_eq(wg_nvrtc_check_arch(ctx, 90), WG_OK);
  ck_assert_int_eq(wg_nvrtc_check_arch(ctx, 52), WG_ESPEC);
  wg_free(archs);
  wg_context_destroy(ctx);
}
END_TEST

/* A handful of expression specs (map, several inputs, parameters, a new
 * accumulator, final) compile, in both kernels and both primitives, and
 * the PTX holds the kernel of the expression's name; then the warp
 * primitives' cases of the GPU suite (warp_cases.h). */
START_TEST(expression_specs_compile) {
  static const char *const specs[] = {
    "reduce-array f32 sum map=\"x * x\"",
    "reduce-rows f32 max map=\"abs(x - y)\" inputs=f32,f32",
    "reduce-array f64 sum map=\"(x - y) * (x - y) * p0 + f64(i % n)\" inputs=f64,f32 params=f64",
    "reduce-rows f16 argmax map=\"x * y + z + w\" inputs=f16,bf16,i32,u64 cols=33",
    "reduce-array i32 combine=\"a > b ? a : b\" identity=\"-7\" final=\"i64(r) * p0 + n\" params=i64",
    "reduce-rows u64 count_nonzero map=\"x % 3u64\"",
    "reduce-array bf16 var map=\"x * 2.0\"",
  };
  wg_options o = WG_OPTIONS_INIT;
  o.disk_cache = -1;
  wg_context *ctx;
  ck_assert_int_eq(wg_context_create(&ctx, &o), WG_OK);
  const size_t ntexts = sizeof specs / sizeof specs[0];
  for (size_t k = 0; k < ntexts + sizeof expr_cases / sizeof expr_cases[0]; k++) {
    char text[512], name[128];
    snprintf(text, sizeof text, "%s arch=sm_%d",
             k < ntexts ? specs[k] : expr_cases[k - ntexts].text, test_arch);
    wg_spec s;
    ck_assert_msg(wg_spec_parse(ctx, &s, text) == WG_OK, "%s: %s", text, wg_errmsg(ctx));
    char *ptx;
    ck_assert_msg(wg_ptx(ctx, &ptx, NULL, &s) == WG_OK, "%s: %s", text, wg_errmsg(ctx));
    wg_kernel_name(name, sizeof name, &s);
    ck_assert_msg(strstr(ptx, name), "%s: no kernel %s in the PTX", text, name);
    wg_free(ptx);
  }
  wg_context_destroy(ctx);
}
END_TEST

int main(int argc, char **argv) {
  if (argc > 1) test_arch = atoi(argv[1]);
  Suite *s = suite_create("nvrtc");
  TCase *tc = tcase_create("compile");
  tcase_add_test(tc, compile_error_has_log);
  tcase_add_test(tc, cubin_is_elf);
  tcase_add_test(tc, expression_specs_compile);
  tcase_add_test(tc, every_spec_compiles);
  tcase_set_timeout(tc, 1800);
  suite_add_tcase(s, tc);
  return wg_test_run_suite(s);
}
