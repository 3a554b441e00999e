/*
 * test_hist.c - histograms (wg_histogram, templates/histogram.cu) checked
 * against the CPU oracle (tests/oracle_hist.c), in three modes:
 *
 *   test_hist unit    spec text, validation and argument errors: no CUDA,
 *                     no NVRTC (suite unit);
 *   test_hist nvrtc   the cubin of every method (32-bit shared, per warp
 *                     or per block; 16-bit shared; global) for every key
 *                     type and both count types, and the maps, for sm_80
 *                     and sm_90 (suite nvrtc; no GPU);
 *   test_hist         on the device (suite gpu; 77 without one): bins 1,
 *                     2, 255, 256, 257, 4096, 28672, 28673, 65536,
 *                     114688, 114689 and 200000 (each method and the
 *                     edges between them on sm_90), sizes 0, 1 and around the vector, warp,
 *                     block and grid boundaries, unaligned starts, uniform
 *                     keys, keys piled in one bin (16-bit counters wrap
 *                     many times, low and high halves and whole words),
 *                     and keys out of range, negative, NaN, +-inf, lo, hi
 *                     and on bin edges; u32 and u64 counts; maps; every
 *                     output poisoned first with a guard after it.
 *
 * `test_hist --specs` prints every spec the GPU mode launches, one a line.
 * WARPGEN_HIST_QUICK=1 keeps every case with small sizes (for
 * compute-sanitizer). The base seed is printed; WARPGEN_TEST_SEED replays.
 */
#include "cuda_support.h"
#include "oracle.h"
#include "support.h"

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_BYTES 256
#define WG_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#define POISON 0xa7

static bool quick(void) {
  const char *v = getenv("WARPGEN_HIST_QUICK");
  return v && strcmp(v, "1") == 0;
}

/* The range float keys are counted over. */
static const double range_lo = -3.0, range_hi = 5.0;

/* Bins every key type gets, and the extra ones f32 and i32 get: the edges
 * between methods on sm_90 (kernels are made for bins rounded up to 8
 * steps an octave: up to 256 a histogram a warp, up to 28672 one a block
 * in 32 bits, up to 114688 in 16 bits, then global). */
static const int64_t common_bins[] = {1, 2, 255, 256, 65536, 200000};
static const int64_t edge_bins[] = {257, 4096, 28672, 28673, 114688, 114689};

static wg_spec hist_spec(wg_type type, int64_t bins, wg_type counts) {
  wg_spec s = WG_SPEC_INIT;
  s.primitive = WG_HISTOGRAM;
  s.type = type;
  s.op = WG_OP_NONE;
  s.bins = bins;
  s.counts = counts;
  return s;
}

/* Every plain spec the GPU mode runs. */
static size_t plain_specs(wg_spec *out) {
  size_t n = 0;
  for (int t = 0; t < WG_TYPE_COUNT; t++) {
    for (size_t b = 0; b < WG_COUNT_OF(common_bins); b++) {
      out[n++] = hist_spec((wg_type)t, common_bins[b], WG_U32);
      if (t == WG_F32 || t == WG_I32 || t == WG_I64 || t == WG_F16)
        out[n++] = hist_spec((wg_type)t, common_bins[b], WG_U64);
    }
    if (t == WG_F32 || t == WG_I32)
      for (size_t b = 0; b < WG_COUNT_OF(edge_bins); b++)
        out[n++] = hist_spec((wg_type)t, edge_bins[b], t == WG_I32 ? WG_U64 : WG_U32);
  }
  return n;
}
#define MAX_PLAIN 128

/* The maps: their text, and what they compute, written again in C. */
typedef struct map_case {
  const char *text;
  wg_scalar param;
} map_case;
static const map_case maps[] = {
  {"histogram f32 bins=100 map=\"i32(x * p0)\" params=f32", {.f32 = 10.0f}},
  {"histogram i32 bins=65 map=\"x % 64 + i32(i % 2)\"", {0}},
  {"histogram u64 bins=1000 map=\"x / 3\"", {0}},
  {"histogram f16 bins=2 map=\"x > p0\" params=f64", {.f64 = 1.0}},
  {"histogram i64 bins=7 counts=u64 map=\"i % 7\"", {0}},
};

/* f32 -> i32 as the expression language casts: truncate, saturate, NaN 0. */
static int64_t cast_i32(double v) {
  if (v != v) return 0;
  if (v >= 2147483647.0) return INT32_MAX;
  if (v <= -2147483648.0) return INT32_MIN;
  return (int64_t)v;
}

/* The bin map k gives key i of `in`. */
static int64_t map_bin(int k, const void *in, uint64_t i, const wg_scalar *p) {
  switch (k) {
  case 0: {
    const float x = ((const float *)in)[i];
    return cast_i32((double)(x * p->f32));
  }
  case 1: {
    const int32_t x = ((const int32_t *)in)[i];
    return (int64_t)(int32_t)((uint32_t)(x % 64) + (uint32_t)(i % 2));
  }
  case 2: {
    const uint64_t x = ((const uint64_t *)in)[i] / 3;
    return x > INT64_MAX ? -1 : (int64_t)x;
  }
  case 3: return wg_oracle_elem(WG_F16, in, i) > p->f64;
  default: return (int64_t)(i % 7);
  }
}

static void print_specs(void) {
  wg_spec specs[MAX_PLAIN];
  const size_t n = plain_specs(specs);
  char text[256];
  for (size_t i = 0; i < n; i++)
    if (wg_spec_format(text, sizeof text, &specs[i]) > 0) printf("%s\n", text);
  for (size_t k = 0; k < WG_COUNT_OF(maps); k++) printf("%s\n", maps[k].text);
}

/* --- unit: spec text, validation, argument errors -------------------------- */

START_TEST(spec_text_and_validation) {
  wg_context *ctx = wg_test_context();
  static const struct {
    const char *in, *out;
  } good[] = {
    {"histogram i32 bins=256", "histogram i32 bins=256"},
    {"histogram f32 bins=65536 counts=u64", "histogram f32 bins=65536 counts=u64"},
    {"histogram u8x bins=1", NULL},
    {"histogram f16 counts=u32 bins=1", "histogram f16 bins=1"},
    {"histogram f32 bins=10 map=\"i32(x*p0)\" params=f32",
     "histogram f32 map=\"i32(x * p0)\" params=f32 bins=10"},
  };
  for (size_t k = 0; k < WG_COUNT_OF(good); k++) {
    wg_spec s;
    const int rc = wg_spec_parse(ctx, &s, good[k].in);
    if (!good[k].out) {
      ck_assert_int_eq(rc, WG_ESPEC);
      continue;
    }
    ck_assert_msg(rc == WG_OK, "%s: %s", good[k].in, wg_errmsg(ctx));
    char text[256];
    ck_assert_int_gt(wg_spec_format(text, sizeof text, &s), 0);
    ck_assert_str_eq(text, good[k].out);
    wg_spec again;
    WG_TEST_OK(ctx, wg_spec_parse(ctx, &again, text));
    char name[160];
    ck_assert_int_gt(wg_kernel_name(name, sizeof name, &s), 0);
    ck_assert_msg(strstr(name, "wg_histogram_") == name, "%s", name);
  }
  static const struct {
    const char *text, *key;
  } bad[] = {
    {"histogram i32", "bins"},
    {"histogram i32 bins=0", "bins"},
    {"histogram i32 bins=2147483648", "bins"},
    {"histogram i32 bins=4 counts=f32", "counts"},
    {"histogram i32 bins=4 counts=i64", "counts"},
    {"histogram i32 bins=4 deterministic=0", "deterministic"},
    {"histogram f32 bins=4 map=\"x * 2\"", "map"},
    {"histogram f32 bins=4 params=f32", "params"},
    {"histogram i32 bins=4 combine=\"a + b\" identity=\"0\"", "combine"},
    {"histogram i32 bins=4 final=\"r\"", "final"},
    {"histogram i32 bins=4 inputs=i32,i32", "inputs"},
    {"histogram i32 bins=4 width=16", "width"},
    {"histogram i32 bins=4 cols=5", "cols"},
    {"histogram i32 bins=4 lane=1", "lane"},
    {"histogram i32 bins=4 layout=lane", "layout"},
    {"histogram i32 bins=4 variant=down", "variant"},
    {"histogram i32 sum bins=4", "operator"},
    {"reduce-array f32 sum bins=4", "bins"},
    {"reduce-array f32 sum counts=u64", "counts"},
  };
  for (size_t k = 0; k < WG_COUNT_OF(bad); k++) {
    wg_spec s;
    const int rc = wg_spec_parse(ctx, &s, bad[k].text);
    ck_assert_msg(rc == WG_ESPEC, "%s: %d", bad[k].text, rc);
    ck_assert_msg(strstr(wg_errmsg(ctx), bad[k].key), "%s: message '%s' does not name %s",
                  bad[k].text, wg_errmsg(ctx), bad[k].key);
  }
  /* Structs filled by hand: counts out of range; a map with more
   * parameters than there are slots, or of a type out of range. */
  wg_spec s = hist_spec(WG_I32, 4, (wg_type)99);
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_ESPEC);
  s = hist_spec(WG_F32, 4, WG_U32);
  s.map = "i32(x)";
  s.nparams = 100;
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_ESPEC);
  s.nparams = 1;
  s.params[0] = (wg_type)77;
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_ESPEC);
  s.params[0] = WG_F32;
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_OK);
  wg_context_destroy(ctx);
}
END_TEST

/* Errors found before the GPU is touched (fake but aligned pointers). */
START_TEST(argument_errors) {
  wg_context *ctx = wg_test_context();
  const uint64_t in = 0x100000, out = 0x200000;
  wg_spec f = hist_spec(WG_F32, 16, WG_U32), i = hist_spec(WG_I32, 16, WG_U64);
  wg_scalar range[3] = {{.f64 = 0}, {.f64 = 1}, {.f64 = 2}};
  ck_assert_int_eq(wg_histogram(NULL, &f, in, 10, range, 2, out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_histogram(ctx, NULL, in, 10, range, 2, out, NULL), WG_EINVAL);
  wg_spec r = WG_SPEC_INIT;
  r.primitive = WG_REDUCE_ARRAY;
  ck_assert_int_eq(wg_histogram(ctx, &r, in, 10, range, 2, out, NULL), WG_EINVAL);
  ck_assert_msg(strstr(wg_errmsg(ctx), "histogram"), "%s", wg_errmsg(ctx));
  /* The output over the keys: the call's memset would clear them. */
  ck_assert_int_eq(wg_histogram(ctx, &i, in, 10, NULL, 0, in + 32, NULL), WG_EINVAL);
  ck_assert_msg(strstr(wg_errmsg(ctx), "overlaps"), "%s", wg_errmsg(ctx));
  ck_assert_int_eq(wg_histogram(ctx, &f, in, 10, range, 2, in - 60, NULL), WG_EINVAL);
  ck_assert_msg(strstr(wg_errmsg(ctx), "overlaps"), "%s", wg_errmsg(ctx));
  /* the range: two values, finite, lo < hi, hi - lo finite in f32 */
  ck_assert_int_eq(wg_histogram(ctx, &f, in, 10, range, 1, out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_histogram(ctx, &f, in, 10, range, 3, out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_histogram(ctx, &f, in, 10, NULL, 2, out, NULL), WG_EINVAL);
  const double ranges[][2] = {{1, 1}, {2, 1}, {NAN, 1}, {0, INFINITY}, {-3e38, 3e38},
                              {1, 1 + 1e-9}, {0, 1e39}};
  for (size_t k = 0; k < WG_COUNT_OF(ranges); k++) {
    wg_scalar p[2] = {{.f64 = ranges[k][0]}, {.f64 = ranges[k][1]}};
    ck_assert_msg(wg_histogram(ctx, &f, in, 10, p, 2, out, NULL) == WG_EINVAL,
                  "range %g %g", ranges[k][0], ranges[k][1]);
    ck_assert_msg(strstr(wg_errmsg(ctx), "range"), "%s", wg_errmsg(ctx));
  }
  /* f64 keys keep the range in f64: 1 .. 1 + 1e-9 is fine there, so the
   * call goes on to the pointers (here: a misaligned input). */
  wg_spec d = hist_spec(WG_F64, 16, WG_U32);
  wg_scalar fine[2] = {{.f64 = 1}, {.f64 = 1 + 1e-9}};
  ck_assert_int_eq(wg_histogram(ctx, &d, in + 4, 10, fine, 2, out, NULL), WG_EALIGN);
  /* integer keys take no parameters */
  ck_assert_int_eq(wg_histogram(ctx, &i, in, 10, range, 2, out, NULL), WG_EINVAL);
  /* pointers */
  ck_assert_int_eq(wg_histogram(ctx, &i, in + 2, 10, NULL, 0, out, NULL), WG_EALIGN);
  ck_assert_int_eq(wg_histogram(ctx, &i, in, 10, NULL, 0, out + 4, NULL), WG_EALIGN);
  ck_assert_int_eq(wg_histogram(ctx, &i, in, 10, NULL, 0, 0, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_histogram(ctx, &i, 0, 10, NULL, 0, out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_histogram(ctx, &i, UINT64_MAX - 15, 10, NULL, 0, out, NULL),
                   WG_ERANGE);
  /* a map's declared parameters, exactly */
  wg_spec m;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &m, maps[0].text));
  ck_assert_int_eq(wg_histogram(ctx, &m, in, 10, NULL, 0, out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_histogram(ctx, &m, in, 10, range, 2, out, NULL), WG_EINVAL);
  wg_context_destroy(ctx);
}
END_TEST

/* --- nvrtc: every method and type compiles --------------------------------- */

START_TEST(every_shape_compiles) {
  static const int archs[] = {90, 80};
  const int arch = archs[_i];
  wg_context *ctx = wg_test_context();
  static const int64_t bins[] = {256, 4096, 65536, 200000};
  /* A sample of the shapes where WARPGEN_NVRTC_EVERY says (tools/test.sh:
   * a third, a 16th in the sanitizer pass); the maps always. */
  unsigned every, offset;
  wg_test_nvrtc_sample(&every, &offset);
  int compiled = 0, shapes = 0, wanted = 0;
  for (int t = 0; t < WG_TYPE_COUNT; t++)
    for (size_t b = 0; b < WG_COUNT_OF(bins); b++)
      for (int c = 0; c < 2; c++) {
        if ((unsigned)shapes++ % every != offset) continue;
        wanted++;
        wg_spec s = hist_spec((wg_type)t, bins[b], c ? WG_U64 : WG_U32);
        s.arch = arch;
        void *cubin = NULL;
        size_t len = 0;
        const int rc = wg_cubin(ctx, &cubin, &len, &s);
        ck_assert_msg(rc == WG_OK, "%s bins=%" PRId64 " sm_%d: %s", wg_type_name(s.type),
                      bins[b], arch, wg_errmsg(ctx));
        wg_free(cubin);
        compiled++;
      }
  for (size_t k = 0; k < WG_COUNT_OF(maps); k++) {
    wg_spec s;
    WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, maps[k].text));
    s.arch = arch;
    void *cubin = NULL;
    size_t len = 0;
    ck_assert_msg(wg_cubin(ctx, &cubin, &len, &s) == WG_OK, "%s: %s", maps[k].text,
                  wg_errmsg(ctx));
    wg_free(cubin);
    compiled++;
  }
  ck_assert_int_eq(shapes, WG_TYPE_COUNT * 8);
  ck_assert_int_eq(compiled, wanted + (int)WG_COUNT_OF(maps));
  printf("hist nvrtc sm_%d: %d of %d shapes (1 in %u, offset %u: WARPGEN_NVRTC_OFFSET=%u "
         "replays) and %d maps compiled\n", arch, wanted, shapes, every, offset, offset,
         (int)WG_COUNT_OF(maps));
  wg_context_destroy(ctx);
}
END_TEST

/* --- gpu --------------------------------------------------------------------- */

typedef struct buffers {
  void *host_in, *host_out;
  uint64_t *want;
  uint64_t dev_in, dev_out;
  size_t in_bytes, out_bytes;
} buffers;

static void buffers_make(wg_context *ctx, buffers *b, size_t in_bytes, int64_t most_bins) {
  memset(b, 0, sizeof *b);
  b->in_bytes = in_bytes;
  b->out_bytes = (size_t)most_bins * 8 + GUARD_BYTES;
  b->host_in = malloc(in_bytes);
  b->host_out = malloc(b->out_bytes);
  b->want = malloc((size_t)most_bins * sizeof *b->want);
  ck_assert(b->host_in && b->host_out && b->want);
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &b->dev_in, in_bytes));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &b->dev_out, b->out_bytes));
}

static void buffers_free(wg_context *ctx, buffers *b) {
  wg_mem_free(ctx, b->dev_in);
  wg_mem_free(ctx, b->dev_out);
  free(b->host_in);
  free(b->host_out);
  free(b->want);
}

/* Runs spec over n keys at element `offset` of the uploaded input (already
 * in b->host_in from element 0), the output poisoned first, and checks
 * every bin against b->want and the guard after the last bin. */
static void run_and_check(wg_context *ctx, buffers *b, const wg_spec *s, uint64_t offset,
                          uint64_t n, const wg_scalar *params, size_t nparams,
                          const char *what) {
  const size_t esize = wg_type_size(s->type), csize = wg_type_size(s->counts);
  const size_t out_bytes = (size_t)s->bins * csize;
  WG_TEST_OK(ctx, wg_memset_d8(ctx, b->dev_out, POISON, out_bytes + GUARD_BYTES, NULL));
  const int rc = wg_histogram(ctx, s, b->dev_in + offset * esize, n, params, nparams,
                              b->dev_out, NULL);
  char text[256];
  wg_spec_format(text, sizeof text, s);
  ck_assert_msg(rc == WG_OK, "%s n=%" PRIu64 " (%s): %s: %s", text, n, what,
                wg_strerror(rc), wg_errmsg(ctx));
  WG_TEST_OK(ctx, wg_stream_sync(ctx, NULL));
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, b->host_out, b->dev_out, out_bytes + GUARD_BYTES,
                                 NULL));
  wg_oracle_report report;
  wg_oracle_report_init(&report);
  wg_oracle_hist_check(&report, s->counts, s->bins, b->want, b->host_out);
  ck_assert_msg(report.mismatches == 0,
                "%s n=%" PRIu64 " offset %" PRIu64 " (%s): %" PRIu64 " bins wrong, first %s "
                "(seed 0x%016" PRIx64 ")", text, n, offset, what, report.mismatches,
                report.first, wg_test_seed());
  const unsigned char *guard = (const unsigned char *)b->host_out + out_bytes;
  for (size_t k = 0; k < GUARD_BYTES; k++)
    ck_assert_msg(guard[k] == POISON, "%s n=%" PRIu64 ": wrote past the last bin (byte %zu)",
                  text, n, k);
}

static const char *const kind_names[] = {"uniform", "piled", "one bin", "edges"};

/* Each plain spec over sizes around every boundary, each kind of keys. */
START_TEST(bins_sizes_and_keys) {
  wg_spec specs[MAX_PLAIN];
  const size_t count = plain_specs(specs);
  wg_test_precompile(specs, count);
  wg_context *ctx = wg_test_context();
  const uint64_t big = quick() ? 70001 : (1u << 22) + 77;
  static const uint64_t small_sizes[] = {0, 1, 2, 3, 7, 8, 9, 31, 32, 33, 63, 65, 1000,
                                         4095, 4096, 4097, 16389, 65537};
  buffers b;
  buffers_make(ctx, &b, (big + 8) * 8, 200000);
  for (size_t k = 0; k < count; k++) {
    const wg_spec *s = &specs[k];
    const size_t esize = wg_type_size(s->type);
    for (int kind = 0; kind < 4; kind++) {
      const uint64_t seed = wg_test_seed() ^ (k * 131 + (uint64_t)kind);
      const uint64_t most = kind == WG_ORACLE_HIST_EDGES || s->bins >= 65536 ? big : 70001;
      wg_oracle_hist_fill(s->type, s->bins, range_lo, range_hi, kind, b.host_in, most + 8,
                          seed);
      WG_TEST_OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, (most + 8) * esize, NULL));
      wg_scalar range[2] = {{.f64 = range_lo}, {.f64 = range_hi}};
      const size_t nparams = s->type <= WG_F64 ? 2 : 0;
      for (size_t z = 0; z <= WG_COUNT_OF(small_sizes); z++) {
        const uint64_t n = z < WG_COUNT_OF(small_sizes) ? small_sizes[z] : most;
        if (n > most) continue;
        /* Aligned, and one element on (a scalar head before the vectors). */
        for (uint64_t offset = 0; offset < 2; offset++) {
          if (offset && n > 4097 && n != most) continue;
          wg_oracle_histogram(b.want, s->type, s->bins, range_lo, range_hi,
                              (const unsigned char *)b.host_in + offset * esize, n);
          run_and_check(ctx, &b, s, offset, n, range, nparams, kind_names[kind]);
        }
      }
    }
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* Ranges so wide that (x - lo) * bins overflows the value type (f32, or
 * f64): each key still goes to its own bin, where before the fix every key
 * from FLT_MAX / bins up went to the last one. The oracle bins as the
 * kernel does, so beside it the uniform keys' last bin must hold about its
 * share. */
START_TEST(wide_ranges) {
  static const struct {
    const char *text;
    double lo, hi;
  } cases[] = {
    {"histogram f32 bins=1000", 0, 1e36},
    {"histogram f32 bins=65536", -1e38, 1e38},
    {"histogram f64 bins=1000", 0, 1e306},
    {"histogram f64 bins=256", -5e307, 5e307},
  };
  wg_context *ctx = wg_test_context();
  const uint64_t n = 100003;
  buffers b;
  buffers_make(ctx, &b, (n + 8) * 8, 65536);
  for (size_t k = 0; k < WG_COUNT_OF(cases); k++) {
    wg_spec s;
    WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, cases[k].text));
    const wg_scalar range[2] = {{.f64 = cases[k].lo}, {.f64 = cases[k].hi}};
    for (int kind = 0; kind < 4; kind++) {
      wg_oracle_hist_fill(s.type, s.bins, cases[k].lo, cases[k].hi, kind, b.host_in, n,
                          wg_test_seed() ^ (k * 7 + (uint64_t)kind));
      WG_TEST_OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, n * wg_type_size(s.type), NULL));
      wg_oracle_histogram(b.want, s.type, s.bins, cases[k].lo, cases[k].hi, b.host_in, n);
      if (kind == 0)
        ck_assert_msg(b.want[s.bins - 1] < 4 * n / (uint64_t)s.bins + 50,
                      "%s: the oracle put %" PRIu64 " uniform keys in the last bin",
                      cases[k].text, b.want[s.bins - 1]);
      run_and_check(ctx, &b, &s, 0, n, range, 2, kind_names[kind]);
    }
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* 16-bit counters wrap, exactly: every key in one bin, in a low half, a
 * high half, and two neighbours sharing a word (whole-word wraps), with
 * far more than 65535 keys a block; and many more keys than one block
 * counts in 32 bits would be too slow here, so the grid's own limit is
 * documented rather than tested. */
START_TEST(counters_wrap) {
  wg_context *ctx = wg_test_context();
  const uint64_t n = quick() ? 300001 : (1u << 24) + 3;
  buffers b;
  buffers_make(ctx, &b, n * 4, 65536);
  static const int64_t bins[] = {30000, 65536, 256};
  for (size_t k = 0; k < WG_COUNT_OF(bins); k++)
    for (int layout = 0; layout < 3; layout++) {
      const int64_t base = bins[k] / 3 & ~(int64_t)1; /* a low half */
      int32_t *keys = b.host_in;
      for (uint64_t i = 0; i < n; i++)
        keys[i] = (int32_t)(layout == 0 ? base : layout == 1 ? base + 1
                                                              : base + (int64_t)(i & 1));
      WG_TEST_OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, n * 4, NULL));
      for (int c = 0; c < 2; c++) {
        const wg_spec s = hist_spec(WG_I32, bins[k], c ? WG_U64 : WG_U32);
        wg_oracle_histogram(b.want, WG_I32, bins[k], 0, 0, b.host_in, n);
        run_and_check(ctx, &b, &s, 0, n, NULL, 0, "wrapping counters");
      }
    }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

START_TEST(map_expressions) {
  wg_context *ctx = wg_test_context();
  const uint64_t most = quick() ? 20011 : 1000003;
  static const uint64_t sizes[] = {0, 1, 5, 33, 4097};
  buffers b;
  buffers_make(ctx, &b, (most + 8) * 8, 1000);
  for (size_t k = 0; k < WG_COUNT_OF(maps); k++) {
    wg_spec s;
    WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, maps[k].text));
    const size_t esize = wg_type_size(s.type);
    /* Keys across and beyond the bins: floats in [-1, 11), integers from
     * about -100 to bins * 4, NaN and edges mixed in by the edge fill. */
    wg_oracle_hist_fill(s.type, s.bins * 4, -1.0, 11.0, WG_ORACLE_HIST_EDGES, b.host_in,
                        most + 8, wg_test_seed() ^ k);
    WG_TEST_OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, (most + 8) * esize, NULL));
    const size_t nparams = (size_t)s.nparams;
    for (size_t z = 0; z <= WG_COUNT_OF(sizes); z++) {
      const uint64_t n = z < WG_COUNT_OF(sizes) ? sizes[z] : most;
      for (uint64_t offset = 0; offset < 2; offset++) {
        const void *keys = (const unsigned char *)b.host_in + offset * esize;
        memset(b.want, 0, (size_t)s.bins * sizeof *b.want);
        for (uint64_t i = 0; i < n; i++)
          wg_oracle_hist_add(b.want, s.bins, map_bin((int)k, keys, i, &maps[k].param));
        run_and_check(ctx, &b, &s, offset, n, &maps[k].param, nparams, maps[k].text);
      }
    }
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* n == 0 zeroes the output and compiles nothing; calls in a row give the
 * same counts (the call zeroes its own output). */
START_TEST(zero_keys_and_repeats) {
  wg_context *ctx = wg_test_context();
  buffers b;
  buffers_make(ctx, &b, 1 << 20, 4096);
  const wg_spec s = hist_spec(WG_U32, 4096, WG_U32);
  wg_oracle_hist_fill(WG_U32, 4096, 0, 0, WG_ORACLE_HIST_EDGES, b.host_in, 1 << 18, 7);
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, 1 << 20, NULL));
  memset(b.want, 0, 4096 * sizeof *b.want);
  run_and_check(ctx, &b, &s, 0, 0, NULL, 0, "no keys");
  wg_oracle_histogram(b.want, WG_U32, 4096, 0, 0, b.host_in, 1 << 18);
  for (int r = 0; r < 3; r++) {
    /* no poison in between: the call must zero the output itself */
    WG_TEST_OK(ctx, wg_histogram(ctx, &s, b.dev_in, 1 << 18, NULL, 0, b.dev_out, NULL));
  }
  WG_TEST_OK(ctx, wg_stream_sync(ctx, NULL));
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, b.host_out, b.dev_out, 4096 * 4, NULL));
  wg_oracle_report report;
  wg_oracle_report_init(&report);
  wg_oracle_hist_check(&report, WG_U32, 4096, b.want, b.host_out);
  ck_assert_msg(report.mismatches == 0, "repeated calls: %s", report.first);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* The jobs of streams_and_graphs: job j counts slice j of the keys into
 * its own output, with specs[j % 2]. */
typedef struct hist_jobs {
  wg_context *ctx;
  const buffers *b;
  wg_spec specs[2];
  uint64_t n;
  size_t out_stride; /* bytes between two jobs' outputs */
  wg_scalar range[2];
} hist_jobs;

static void hist_job(void *arg, int j, CUstream stream) {
  const hist_jobs *h = arg;
  const bool ranged = j % 2 == 0;
  WG_TEST_OK(h->ctx, wg_histogram(h->ctx, &h->specs[j % 2], h->b->dev_in + (uint64_t)j * h->n * 4,
                                  h->n, ranged ? h->range : NULL, ranged ? 2 : 0,
                                  h->b->dev_out + (uint64_t)j * h->out_stride, stream));
}

/* Calls overlapping on four streams, and captured into a graph replayed
 * twice beside eager calls on another stream (test_cuda_run_jobs): every
 * job's counts are its own keys' (the call's memset of its output, a graph
 * node under capture, keeps a replay from adding to the last one's
 * counts). Jobs alternate 256 f32 bins over the range (per-warp 32-bit
 * counters) and 65536 i32 bins (16-bit ones). */
START_TEST(streams_and_graphs) {
  wg_context *ctx = wg_test_context();
  test_cuda cu;
  test_cuda_open(ctx, &cu);
  enum { JOBS = 8, STREAMS = 4, MOST_BINS = 65536 };
  buffers b;
  hist_jobs h = {ctx, &b, {hist_spec(WG_F32, 256, WG_U32), hist_spec(WG_I32, MOST_BINS, WG_U32)},
                 quick() ? 40003 : (1u << 22) + 3, (size_t)MOST_BINS * 4,
                 {{.f64 = range_lo}, {.f64 = range_hi}}};
  buffers_make(ctx, &b, (size_t)JOBS * h.n * 4, (int64_t)JOBS * MOST_BINS / 2);
  uint64_t *want = malloc((size_t)JOBS * MOST_BINS * sizeof *want);
  ck_assert(want);
  wg_test_precompile(h.specs, 2);
  CUstream streams[STREAMS];
  for (int k = 0; k < STREAMS; k++) CU(cu.StreamCreate(&streams[k], CU_STREAM_NON_BLOCKING));
  for (int round = 0; round < 4; round++) {
    for (int j = 0; j < JOBS; j++) {
      const wg_spec *s = &h.specs[j % 2];
      void *keys = (unsigned char *)b.host_in + (size_t)j * h.n * 4;
      wg_oracle_hist_fill(s->type, s->bins, range_lo, range_hi, (round + j) % 4, keys, h.n,
                          wg_test_seed() ^ (0x5157u + 100u * (unsigned)round + (unsigned)j));
      wg_oracle_histogram(want + (size_t)j * MOST_BINS, s->type, s->bins, range_lo, range_hi,
                          keys, h.n);
    }
    WG_TEST_OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, (size_t)JOBS * h.n * 4, NULL));
    WG_TEST_OK(ctx, wg_memset_d8(ctx, b.dev_out, POISON, (size_t)JOBS * h.out_stride, NULL));
    WG_TEST_OK(ctx, wg_stream_sync(ctx, NULL));
    test_cuda_run_jobs(&cu, streams, STREAMS, JOBS, round >= 2, hist_job, &h);
    for (int j = 0; j < JOBS; j++) {
      const wg_spec *s = &h.specs[j % 2];
      WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, b.host_out, b.dev_out + (uint64_t)j * h.out_stride,
                                     (size_t)s->bins * 4, NULL));
      wg_oracle_report report;
      wg_oracle_report_init(&report);
      wg_oracle_hist_check(&report, WG_U32, s->bins, want + (size_t)j * MOST_BINS, b.host_out);
      ck_assert_msg(report.mismatches == 0, "round %d job %d (%s bins=%" PRId64 "): %" PRIu64
                    " bins wrong, first %s (seed 0x%016" PRIx64 ")", round, j,
                    wg_type_name(s->type), s->bins, report.mismatches, report.first,
                    wg_test_seed());
    }
  }
  for (int k = 0; k < STREAMS; k++) CU(cu.StreamDestroy(streams[k]));
  free(want);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

static Suite *unit_suite(void) {
  Suite *s = suite_create("hist-unit");
  TCase *tc = tcase_create("spec");
  tcase_add_test(tc, spec_text_and_validation);
  tcase_add_test(tc, argument_errors);
  suite_add_tcase(s, tc);
  return s;
}

static Suite *nvrtc_suite(void) {
  Suite *s = suite_create("hist-nvrtc");
  TCase *tc = tcase_create("compile");
  tcase_set_timeout(tc, 1200);
  tcase_add_loop_test(tc, every_shape_compiles, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

static Suite *gpu_suite(void) {
  Suite *s = suite_create("hist");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 1200);
  tcase_add_test(tc, bins_sizes_and_keys);
  tcase_add_test(tc, wide_ranges);
  tcase_add_test(tc, counters_wrap);
  tcase_add_test(tc, map_expressions);
  tcase_add_test(tc, zero_keys_and_repeats);
  tcase_add_test(tc, streams_and_graphs);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  Suite *suite;
  if (argc > 1 && strcmp(argv[1], "--specs") == 0) {
    print_specs();
    return 0;
  } else if (argc > 1 && strcmp(argv[1], "unit") == 0) {
    suite = unit_suite();
  } else if (argc > 1 && strcmp(argv[1], "nvrtc") == 0) {
    suite = nvrtc_suite();
  } else {
    if (!wg_test_gpu_begin("hist", NULL)) return 77;
    suite = gpu_suite();
  }
  return wg_test_run_suite(suite);
}
