/*
 * test_partial.c - sharded reductions: the accumulator layout
 * (wg_reduce_accumulator), one shard's accumulator (wg_reduce_partial) and
 * k of them combined (wg_reduce_combine).
 *
 *   test_partial       no GPU (the unit suite): the published layouts, and
 *                      the CPU accumulators (tests/oracle_acc.c) of unequal
 *                      shards, one empty, combined in rank order, against
 *                      the oracle on the whole array, for every operator
 *                      row and type; argmin/argmax ties and NaNs across
 *                      shards (the lower global index wins).
 *   test_partial nvrtc the published layout is NVRTC's (the nvrtc suite):
 *                      every operator's wg_acc, for every type and a user
 *                      combine, compiled with static_asserts of its size,
 *                      alignment and field offsets (one compile, no GPU).
 *   test_partial gpu   the same on the device (the gpu suite; 77 without
 *                      one): shards of one array on one GPU reduced with
 *                      wg_reduce_partial, combined with wg_reduce_combine,
 *                      against the oracle; the same bits twice; CPU-made
 *                      accumulators combined on the device (the layout
 *                      agrees); a user map; argmax across the boundary.
 *
 * Inputs are fresh random data each run; WARPGEN_TEST_SEED replays one.
 */
#include "internal.h"
#include "oracle.h"
#include "support.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHARDS 4
#define ACC_MAX 32

static uint64_t seed_for(uint64_t salt) { return wg_test_seed() ^ (salt * 0x9e3779b97f4a7c15ull); }

/* Cuts n elements into `shards` unequal shards, shard `empty` (when
 * < shards) with none: cut[s]..cut[s+1]. */
static void cuts_for(uint64_t cut[MAX_SHARDS + 1], uint64_t n, int shards, int empty,
                     uint64_t seed) {
  cut[0] = 0;
  cut[shards] = n;
  for (int s = 1; s < shards; s++) { /* sorted random cut points */
    uint64_t at = n ? wg_oracle_random(seed, 7, (uint64_t)s) % (n + 1) : 0;
    int k = s;
    while (k > 1 && cut[k - 1] > at) cut[k] = cut[k - 1], k--;
    cut[k] = at;
  }
  if (empty >= 0 && empty + 1 < shards) cut[empty + 1] = cut[empty];
  else if (empty + 1 == shards) cut[empty] = n; /* the last shard empty */
}

static wg_spec array_spec(wg_type type, wg_operator op) {
  wg_spec s;
  wg_spec_init(&s);
  s.primitive = WG_REDUCE_ARRAY;
  s.type = type;
  s.op = op;
  return s;
}

/* --- without a GPU --------------------------------------------------------- */

START_TEST(layouts) {
  wg_accumulator_layout l;
  wg_spec s = array_spec(WG_F32, WG_OP_ARGMAX);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_uint_eq(l.size, 16);
  ck_assert_uint_eq(l.align, 8);
  ck_assert_int_eq(l.nfields, 2);
  ck_assert_str_eq(l.fields[0].name, "v");
  ck_assert_int_eq(l.fields[0].type, WG_F32);
  ck_assert_str_eq(l.fields[1].name, "i");
  ck_assert_int_eq(l.fields[1].type, WG_I64);
  ck_assert_uint_eq(l.fields[1].offset, 8);
  ck_assert_int_eq(l.native, WG_OP_NONE);
  s = array_spec(WG_F64, WG_OP_VAR);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_uint_eq(l.size, 24);
  ck_assert_int_eq(l.nfields, 3);
  ck_assert_str_eq(l.fields[2].name, "m2");
  ck_assert_uint_eq(l.fields[2].offset, 16);
  s = array_spec(WG_BF16, WG_OP_STD); /* (u64, f32, f32) */
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_uint_eq(l.size, 16);
  ck_assert_int_eq(l.fields[1].type, WG_F32);
  ck_assert_uint_eq(l.fields[2].offset, 12);
  s = array_spec(WG_F16, WG_OP_LOGSUMEXP);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_uint_eq(l.size, 8);
  ck_assert_uint_eq(l.align, 4);
  s = array_spec(WG_I32, WG_OP_SUM);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_uint_eq(l.size, 4);
  ck_assert_int_eq(l.native, WG_OP_SUM);
  ck_assert_str_eq(l.fields[0].name, "");
  s = array_spec(WG_U32, WG_OP_MAX);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_int_eq(l.native, WG_OP_NONE); /* unsigned min/max: gathered */
  s = array_spec(WG_I64, WG_OP_MIN);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_int_eq(l.native, WG_OP_MIN);
  s = array_spec(WG_F32, WG_OP_COUNT_NONZERO);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_uint_eq(l.size, 8);
  ck_assert_int_eq(l.native, WG_OP_SUM);
  s = array_spec(WG_F32, WG_OP_SUM);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_int_eq(l.native, WG_OP_NONE); /* float sums depend on the order */
  /* a user combine: a scalar of the map's type */
  wg_context *ctx = wg_test_context();
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-array f32 combine=\"fmax(a, b)\" "
                                          "identity=\"-1e30\""), WG_OK);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_OK);
  ck_assert_uint_eq(l.size, 4);
  ck_assert_int_eq(l.fields[0].type, WG_F32);
  wg_context_destroy(ctx);
  /* errors */
  ck_assert_int_eq(wg_reduce_accumulator(NULL, &s), WG_EINVAL);
  s = array_spec(WG_F32, WG_OP_SUM);
  s.primitive = WG_REDUCE;
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_EINVAL);
  s = array_spec(WG_F32, WG_OP_AND);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &s), WG_ESPEC);
}
END_TEST

/* CPU partials of the shards combined in order vs the oracle on all. */
static void check_cpu_shards(wg_type type, wg_operator op, uint64_t n, int shards,
                             int empty, uint64_t seed) {
  const size_t size = wg_type_size(type);
  unsigned char *in = malloc(n * size + 1);
  ck_assert_ptr_nonnull(in);
  wg_oracle_fill(type, op, in, n, seed);
  uint64_t cut[MAX_SHARDS + 1];
  cuts_for(cut, n, shards, empty, seed);
  unsigned char accs[MAX_SHARDS * ACC_MAX], out[8];
  wg_accumulator_layout l;
  wg_spec spec = array_spec(type, op);
  ck_assert_int_eq(wg_reduce_accumulator(&l, &spec), WG_OK);
  for (int s = 0; s < shards; s++)
    ck_assert_int_eq(wg_oracle_partial(accs + s * l.size, type, op, in, cut[s],
                                       cut[s + 1] - cut[s], (int64_t)cut[s]), WG_OK);
  wg_oracle want;
  wg_oracle_reduce(&want, type, op, in, 0, n, NULL, 0);
  if (!want.must_fail) {
    ck_assert_int_eq(wg_oracle_combine(out, type, op, accs, (uint64_t)shards, n, NULL, 0),
                     WG_OK);
    char why[256];
    ck_assert_msg(wg_oracle_check(&want, out, why, sizeof why),
                  "%s %s n=%llu shards=%d empty=%d seed=%llu: %s", wg_type_name(type),
                  wg_operator_name(op), (unsigned long long)n, shards, empty,
                  (unsigned long long)seed, why);
  }
  free(in);
}

START_TEST(cpu_shards) {
  static const uint64_t sizes[] = {0, 1, 2, 37, 1000, 4099};
  for (int op = 1; op < WG_OPERATOR_COUNT; op++)
    for (int t = 0; t < WG_TYPE_COUNT; t++) {
      if (wg_reduce_output_type((wg_type)t, (wg_operator)op) < 0) continue;
      for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int shards = 1; shards <= MAX_SHARDS; shards++)
          check_cpu_shards((wg_type)t, (wg_operator)op, sizes[z], shards,
                           shards > 1 ? (int)(z % (size_t)shards) : shards,
                           seed_for((uint64_t)(op * 131 + t * 17) + z * 7 + (uint64_t)shards));
    }
}
END_TEST

/* Ties and NaNs across shards: the lower global index wins. */
START_TEST(cpu_ties) {
  float x[12];
  for (int k = 0; k < 12; k++) x[k] = 1.0f;
  const uint64_t cut[] = {0, 0, 5, 9, 12}; /* first shard empty */
  unsigned char accs[4 * 16];
  int64_t got;
  for (int op = WG_OP_ARGMIN; op <= WG_OP_ARGMAX; op++) {
    for (int s = 0; s < 4; s++)
      wg_oracle_partial(accs + s * 16, WG_F32, (wg_operator)op, x, cut[s],
                        cut[s + 1] - cut[s], (int64_t)cut[s]);
    wg_oracle_combine(&got, WG_F32, (wg_operator)op, accs, 4, 12, NULL, 0);
    ck_assert_int_eq(got, 0); /* all equal: the first */
  }
  x[6] = 5, x[10] = 5; /* the max twice, in shards 2 and 3 */
  x[7] = NAN;          /* ... and a NaN, which wins */
  x[11] = NAN;
  for (int s = 0; s < 4; s++)
    wg_oracle_partial(accs + s * 16, WG_F32, WG_OP_ARGMAX, x, cut[s], cut[s + 1] - cut[s],
                      (int64_t)cut[s]);
  wg_oracle_combine(&got, WG_F32, WG_OP_ARGMAX, accs, 4, 12, NULL, 0);
  ck_assert_int_eq(got, 7);
  x[7] = x[11] = 1;
  for (int s = 0; s < 4; s++)
    wg_oracle_partial(accs + s * 16, WG_F32, WG_OP_ARGMAX, x, cut[s], cut[s + 1] - cut[s],
                      (int64_t)cut[s]);
  wg_oracle_combine(&got, WG_F32, WG_OP_ARGMAX, accs, 4, 12, NULL, 0);
  ck_assert_int_eq(got, 6);
  /* the order of the combine does not matter for argmax: reversed */
  unsigned char rev[4 * 16];
  for (int s = 0; s < 4; s++) memcpy(rev + s * 16, accs + (3 - s) * 16, 16);
  wg_oracle_combine(&got, WG_F32, WG_OP_ARGMAX, rev, 4, 12, NULL, 0);
  ck_assert_int_eq(got, 6);
}
END_TEST

/* --- the layout is the compiler's ------------------------------------------ */

/* One source: each spec's prelude (its wg_acc) in a namespace of its own,
 * its size and alignment asserted; NVRTC has no offsetof, so each named
 * field gets a kernel that stores to it, whose PTX store shows the offset
 * (check_offsets). */
static void add_layout_asserts(wg_context *ctx, wg_buf *src, const wg_spec *spec, int k) {
  wg_accumulator_layout l;
  ck_assert_int_eq(wg_reduce_accumulator(&l, spec), WG_OK);
  wg_buf_printf(src, "namespace s%d {\n", k);
  WG_TEST_OK(ctx, wg_codegen_prelude(ctx, src, spec));
  wg_buf_printf(src, "static_assert(sizeof(wg_acc) == %zu, \"size %d\");\n"
                     "static_assert(alignof(wg_acc) == %zu, \"align %d\");\n",
                l.size, k, l.align, k);
  for (int f = 0; f < l.nfields; f++)
    if (l.fields[f].name[0])
      wg_buf_printf(src, "static_assert(sizeof(((wg_acc *)0)->%s) == %zu, \"%s %d\");\n"
                         "extern \"C\" __global__ void wg_off_%d_%s(wg_acc *p) "
                         "{ p->%s = (decltype(p->%s))1; }\n",
                    l.fields[f].name, wg_type_size(l.fields[f].type), l.fields[f].name,
                    k, k, l.fields[f].name, l.fields[f].name, l.fields[f].name);
  wg_buf_puts(src, "}\n");
}

/* The offset of the one global store in kernel `name`'s PTX, or -1. */
static long store_offset(const char *ptx, const char *name) {
  char entry[96];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  const char *at = strstr(ptx, entry);
  if (!at) return -1;
  const char *end = strstr(at + 1, ".entry");
  const char *st = strstr(at, "st.global");
  if (!st || (end && st > end)) return -1;
  const char *open = strchr(st, '['), *close = open ? strchr(open, ']') : NULL;
  if (!close) return -1;
  const char *plus = memchr(open, '+', (size_t)(close - open));
  return plus ? strtol(plus + 1, NULL, 10) : 0;
}

static void check_offsets(const char *ptx, const wg_spec *spec, int k) {
  wg_accumulator_layout l;
  ck_assert_int_eq(wg_reduce_accumulator(&l, spec), WG_OK);
  for (int f = 0; f < l.nfields; f++) {
    if (!l.fields[f].name[0]) continue;
    char name[64];
    snprintf(name, sizeof name, "wg_off_%d_%s", k, l.fields[f].name);
    const long got = store_offset(ptx, name);
    ck_assert_msg(got == (long)l.fields[f].offset, "%s %s field %s: NVRTC puts it at %ld, "
                  "wg_reduce_accumulator says %zu", wg_type_name(spec->type),
                  wg_operator_name(spec->op), l.fields[f].name, got, l.fields[f].offset);
  }
}

START_TEST(layouts_compile) {
  wg_context *ctx = wg_test_context();
  wg_buf src = {0};
  wg_spec specs[WG_OPERATOR_COUNT * WG_TYPE_COUNT + 1];
  int k = 0;
  for (int op = 1; op < WG_OPERATOR_COUNT; op++)
    for (int t = 0; t < WG_TYPE_COUNT; t++) {
      if (wg_reduce_output_type((wg_type)t, (wg_operator)op) < 0) continue;
      specs[k] = array_spec((wg_type)t, (wg_operator)op);
      specs[k].arch = 90;
      add_layout_asserts(ctx, &src, &specs[k], k);
      k++;
    }
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &specs[k], "reduce-array bf16 map=\"x * y\" "
                                                "combine=\"fmax(a, b)\" identity=\"-1e30\" "
                                                "inputs=bf16,f64 arch=sm_90"));
  add_layout_asserts(ctx, &src, &specs[k], k);
  k++;
  ck_assert(!src.failed);
  wg_binary bin;
  const int rc = wg_compile(ctx, &bin, src.data, "wg_off_0_x", 90);
  ck_assert_msg(rc == WG_OK, "%.3000s", wg_errmsg(ctx)); /* Check's message cap */
  ck_assert_int_gt(k, 100);
  for (int j = 0; j < k; j++) check_offsets(bin.ptx, &specs[j], j);
  wg_binary_free(&bin);
  wg_buf_free(&src);
  wg_context_destroy(ctx);
}
END_TEST

/* --- on the device ---------------------------------------------------------- */

static const wg_type gpu_types[] = {WG_F32, WG_BF16, WG_F16, WG_F64, WG_I32, WG_U64};

/* Shards of one device array: partial each, combine, vs the oracle; twice
 * the same bits; CPU accumulators combined on the device agree. */
static void check_gpu(wg_context *ctx, const wg_spec *spec, uint64_t n, const uint64_t *cut,
                      int shards, const void *host, uint64_t d_in) {
  const wg_type type = spec->type;
  const wg_operator op = spec->op;
  const size_t size = wg_type_size(type);
  wg_accumulator_layout l;
  ck_assert_int_eq(wg_reduce_accumulator(&l, spec), WG_OK);
  const wg_type out_type = (wg_type)wg_reduce_spec_output_type(spec);
  uint64_t d_accs = 0, d_out = 0;
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_accs, (size_t)shards * l.size));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_out, 8));
  unsigned char got[2][8];
  for (int run = 0; run < 2; run++) {
    WG_TEST_OK(ctx, wg_memset_d8(ctx, d_accs, 0xa5, (size_t)shards * l.size, NULL));
    WG_TEST_OK(ctx, wg_memset_d8(ctx, d_out, 0xff, 8, NULL));
    for (int s = 0; s < shards; s++) {
      const uint64_t in_s = d_in + cut[s] * size;
      WG_TEST_OK(ctx, wg_reduce_partial(ctx, spec, &in_s, 1, cut[s + 1] - cut[s],
                                        (int64_t)cut[s], n, NULL, 0, d_accs + s * l.size,
                                        NULL));
    }
    WG_TEST_OK(ctx, wg_reduce_combine(ctx, spec, d_accs, (uint64_t)shards, n, NULL, 0,
                                      d_out, NULL));
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got[run], d_out, 8, NULL));
  }
  const size_t osize = wg_type_size(out_type);
  ck_assert_msg(memcmp(got[0], got[1], osize) == 0, "%s %s: two runs differ",
                wg_type_name(type), wg_operator_name(op));
  wg_oracle want;
  wg_oracle_reduce(&want, type, op, host, 0, n, NULL, 0);
  char why[256];
  ck_assert_msg(wg_oracle_check(&want, got[0], why, sizeof why),
                "GPU %s %s n=%llu shards=%d: %s", wg_type_name(type), wg_operator_name(op),
                (unsigned long long)n, shards, why);
  /* The CPU's accumulators in the published layout, combined on the GPU. */
  unsigned char cpu[MAX_SHARDS * ACC_MAX];
  for (int s = 0; s < shards; s++)
    ck_assert_int_eq(wg_oracle_partial(cpu + s * l.size, type, op, host, cut[s],
                                       cut[s + 1] - cut[s], (int64_t)cut[s]), WG_OK);
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_accs, cpu, (size_t)shards * l.size, NULL));
  WG_TEST_OK(ctx, wg_reduce_combine(ctx, spec, d_accs, (uint64_t)shards, n, NULL, 0, d_out,
                                    NULL));
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got[1], d_out, 8, NULL));
  ck_assert_msg(wg_oracle_check(&want, got[1], why, sizeof why),
                "CPU accumulators combined on the GPU, %s %s: %s", wg_type_name(type),
                wg_operator_name(op), why);
  wg_mem_free(ctx, d_accs);
  wg_mem_free(ctx, d_out);
}

START_TEST(gpu_shards) {
  wg_context *ctx = wg_test_context();
  static const uint64_t sizes[] = {1, 1000, 300007};
  for (size_t t = 0; t < sizeof gpu_types / sizeof *gpu_types; t++)
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
      const wg_type type = gpu_types[t];
      const uint64_t n = sizes[z];
      for (int op = 1; op < WG_OPERATOR_COUNT; op++) {
        if (wg_reduce_output_type(type, (wg_operator)op) < 0) continue;
        const size_t size = wg_type_size(type);
        unsigned char *host = malloc(n * size);
        const uint64_t seed = seed_for(t * 1000 + z * 100 + (uint64_t)op);
        wg_oracle_fill(type, (wg_operator)op, host, n, seed);
        uint64_t d_in = 0;
        WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_in, n * size));
        WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_in, host, n * size, NULL));
        uint64_t cut[MAX_SHARDS + 1];
        cuts_for(cut, n, 4, 2, seed); /* shard 2 empty */
        const wg_spec spec = array_spec(type, (wg_operator)op);
        check_gpu(ctx, &spec, n, cut, 4, host, d_in);
        wg_mem_free(ctx, d_in);
        free(host);
      }
    }
  wg_context_destroy(ctx);
}
END_TEST

/* argmax across the boundary and ties, on the device; an empty total is
 * refused; a user map sees global indices. */
START_TEST(gpu_edges) {
  wg_context *ctx = wg_test_context();
  const uint64_t n = 100000;
  float *x = malloc(n * sizeof *x);
  for (uint64_t k = 0; k < n; k++) x[k] = (float)(k % 97) * 0.25f;
  x[49999] = 1000, x[50000] = 1000, x[70000] = 1000; /* ties across the cut at 50000 */
  uint64_t d_in = 0, d_accs = 0, d_out = 0;
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_in, n * 4));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_in, x, n * 4, NULL));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_accs, 4 * 16));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_out, 8));
  const uint64_t cut[] = {50000, 50000, 100000}; /* shard 1 (50000..) first, then empty */
  const wg_spec spec = array_spec(WG_F32, WG_OP_ARGMAX);
  /* shards given in rank order 0: [0,50000), 1: [50000, 50000), 2: [50000, n) */
  const uint64_t starts[] = {0, cut[0], cut[1]}, ends[] = {cut[0], cut[1], cut[2]};
  for (int s = 0; s < 3; s++) {
    const uint64_t in_s = d_in + starts[s] * 4;
    WG_TEST_OK(ctx, wg_reduce_partial(ctx, &spec, &in_s, 1, ends[s] - starts[s],
                                      (int64_t)starts[s], n, NULL, 0, d_accs + 16u * s, NULL));
  }
  int64_t got = -1;
  WG_TEST_OK(ctx, wg_reduce_combine(ctx, &spec, d_accs, 3, n, NULL, 0, d_out, NULL));
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, &got, d_out, 8, NULL));
  ck_assert_int_eq(got, 49999);
  /* only the later shards: the first of their ties */
  WG_TEST_OK(ctx, wg_reduce_combine(ctx, &spec, d_accs + 16, 2, n, NULL, 0, d_out, NULL));
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, &got, d_out, 8, NULL));
  ck_assert_int_eq(got, 50000);
  /* errors */
  ck_assert_int_eq(wg_reduce_combine(ctx, &spec, d_accs, 0, 0, NULL, 0, d_out, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_reduce_partial(ctx, &spec, &d_in, 1, 10, 95, 100, NULL, 0, d_accs,
                                     NULL), WG_EINVAL);
  ck_assert_int_eq(wg_reduce_partial(ctx, &spec, &d_in, 1, 10, 0, 100, NULL, 0, d_accs + 4,
                                     NULL), WG_EALIGN);
  /* User maps see the global index and count: x * i runs in the vector
   * kernel, x * i / n (it reads n) in the element kernel. */
  double *y = malloc(n * sizeof *y);
  long double want = 0;
  for (uint64_t k = 0; k < n; k++) y[k] = (double)(k % 13), want += (long double)y[k] * k;
  uint64_t d_y = 0;
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_y, n * 8));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_y, y, n * 8, NULL));
  static const char *const maps[] = {"reduce-array f64 sum map=\"x * f64(i)\"",
                                     "reduce-array f64 sum map=\"x * f64(i) / f64(n)\""};
  for (int m = 0; m < 2; m++) {
    wg_spec user;
    WG_TEST_OK(ctx, wg_spec_parse(ctx, &user, maps[m]));
    for (int s = 0; s < 3; s++) {
      const uint64_t in_s = d_y + starts[s] * 8;
      WG_TEST_OK(ctx, wg_reduce_partial(ctx, &user, &in_s, 1, ends[s] - starts[s],
                                        (int64_t)starts[s], n, NULL, 0, d_accs + 8u * s,
                                        NULL));
    }
    double sum = 0;
    WG_TEST_OK(ctx, wg_reduce_combine(ctx, &user, d_accs, 3, n, NULL, 0, d_out, NULL));
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, &sum, d_out, 8, NULL));
    const double w = m ? (double)(want / n) : (double)want;
    ck_assert_msg(fabs(sum - w) <= 1e-12 * w, "%s: %.17g vs %.17g", maps[m], sum, w);
  }
  wg_mem_free(ctx, d_y);
  wg_mem_free(ctx, d_in);
  wg_mem_free(ctx, d_accs);
  wg_mem_free(ctx, d_out);
  free(x);
  free(y);
  wg_context_destroy(ctx);
}
END_TEST

int main(int argc, char **argv) {
  const bool gpu = argc > 1 && strcmp(argv[1], "gpu") == 0;
  const bool nvrtc = argc > 1 && strcmp(argv[1], "nvrtc") == 0;
  Suite *s = suite_create("partial");
  TCase *tc = tcase_create(gpu ? "gpu" : nvrtc ? "nvrtc" : "cpu");
  tcase_set_timeout(tc, 600);
  if (nvrtc) {
    tcase_add_test(tc, layouts_compile);
  } else if (gpu) {
    if (!wg_test_gpu_begin("partial", NULL)) return 77;
    tcase_add_test(tc, gpu_shards);
    tcase_add_test(tc, gpu_edges);
  } else {
    tcase_add_test(tc, layouts);
    tcase_add_test(tc, cpu_shards);
    tcase_add_test(tc, cpu_ties);
  }
  suite_add_tcase(s, tc);
  if (!gpu) /* wg_test_gpu_begin printed it */
    printf("seed %llu (WARPGEN_TEST_SEED replays it)\n", (unsigned long long)wg_test_seed());
  return wg_test_run_suite(s);
}
