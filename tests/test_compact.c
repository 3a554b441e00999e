/*
 * test_compact.c - stream compaction (wg_compact, the "compact" spec).
 *
 * Two parts, one executable:
 *   --nvrtc   no GPU: the spec text (pred= round trips, the keys compact
 *             refuses), overlapping buffers refused before any device
 *             work, and the cubin of every type with and without
 *             predicates, extra inputs and parameters, so that a machine
 *             without a device catches compile errors;
 *   (none)    on the device, checked exactly against the CPU oracle
 *             (tests/oracle_compact.c) with the predicate evaluated by the
 *             expression evaluator (expr_eval.c): every type; sizes 0, 1,
 *             around a tile and many tiles (so the look-back goes past its
 *             window of 64 tiles, and past 500 tiles, where it sleeps
 *             between polls); all kept, none kept; NaN, inf,
 *             -0.0 and zeros in the input; parameters; extra inputs;
 *             unaligned inputs; with and without values and indices; the
 *             same bits on a second run and after the workspace grows; bad
 *             arguments and overlapping buffers; and 2^31 + 4099 elements (WARPGEN_GPU_LARGE=0
 *             skips it). Without a device it exits 77 (Meson's skip).
 * Outputs are poisoned before every launch and must stay poisoned past
 * the count. WARPGEN_COMPACT_QUICK=1 keeps only small sizes (for
 * compute-sanitizer). The base seed is printed; WARPGEN_TEST_SEED replays.
 */
#include "compact.h"
#include "oracle.h"
#include "support.h"
#include "cuda_support.h"

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xa7

static bool quick(void) {
  const char *q = getenv("WARPGEN_COMPACT_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

/* Elements a tile, as fam_compact.c makes them (256 threads x 128 bytes,
 * 64 for 16-bit types). */
static uint64_t tile_of(wg_type t) {
  return wg_type_size(t) == 2 ? 8192u : 32768u / wg_type_size(t);
}

/* Random elements with the awkward values mixed in: zeros, -0.0, NaN and
 * infinities for floats, zeros and extremes for integers. */
static void fill(wg_type t, void *in, uint64_t n, uint64_t seed) {
  const bool is_float = t == WG_F16 || t == WG_BF16 || t == WG_F32 || t == WG_F64;
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t r = wg_oracle_random(seed, 7, i);
    const unsigned pick = (unsigned)(r % 100);
    double x = (double)((int64_t)((r >> 8) % 2001) - 1000) / 100.0;
    if (!is_float) x = (double)((int64_t)((r >> 8) % 201) - 100);
    if (t == WG_U32 || t == WG_U64) x = fabs(x); /* a negative double has no unsigned value */
    if (pick < 8) x = 0.0;
    if (is_float && pick == 8) x = -0.0;
    if (is_float && pick == 9) x = NAN;
    if (is_float && pick == 10) x = (r & 1) ? INFINITY : -INFINITY;
    wg_oracle_set(t, in, i, x);
    if (!is_float && pick == 11) /* an extreme: all ones */
      memset((unsigned char *)in + i * wg_type_size(t), 0xff, wg_type_size(t));
  }
}

/* keep[i] for every element: the predicate on the host (expr_eval.c), or
 * non-zero. */
static void keep_mask(wg_context *ctx, const wg_spec *spec, void *const *host, uint64_t n,
                      const wg_scalar *params, unsigned char *keep) {
  WG_TEST_OK(ctx, wg_compact_keep_host(ctx, spec, (const void *const *)host, n, params,
                                       keep));
}

typedef struct run_opts {
  bool values, indices;
  unsigned offset; /* elements the inputs start past an aligned base */
  int repeat;      /* launches; each must give the same outputs */
} run_opts;

/* One compaction of n elements under `text` with `params`, checked. */
static void run_one(wg_context *ctx, const char *text, uint64_t n, const wg_scalar *params,
                    run_opts o) {
  wg_spec spec;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &spec, text));
  const int ninputs = spec.ninputs < 1 ? 1 : spec.ninputs;
  void *host[WG_MAX_INPUTS] = {0};
  uint64_t dev[WG_MAX_INPUTS] = {0}, ptrs[WG_MAX_INPUTS] = {0};
  const uint64_t seed = wg_test_seed() ^ (n * 0x9e3779b97f4a7c15ull);
  for (int k = 0; k < ninputs; k++) {
    const wg_type t = k ? spec.inputs[k] : spec.type;
    const size_t size = wg_type_size(t);
    host[k] = malloc((n ? n : 1) * size);
    ck_assert_ptr_nonnull(host[k]);
    fill(t, host[k], n, seed + (uint64_t)k);
    WG_TEST_OK(ctx, wg_mem_alloc(ctx, &dev[k], (n + o.offset + 1) * size));
    ptrs[k] = dev[k] + o.offset * size;
    WG_TEST_OK(ctx, wg_memcpy_htod(ctx, ptrs[k], host[k], n * size, NULL));
  }
  unsigned char *keep = malloc(n ? n : 1);
  ck_assert_ptr_nonnull(keep);
  keep_mask(ctx, &spec, host, n, params, keep);

  const size_t size = wg_type_size(spec.type);
  uint64_t values = 0, indices = 0, count = 0;
  if (o.values) WG_TEST_OK(ctx, wg_mem_alloc(ctx, &values, (n ? n : 1) * size));
  if (o.indices) WG_TEST_OK(ctx, wg_mem_alloc(ctx, &indices, (n ? n : 1) * 8));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &count, 8));
  void *got_values = malloc((n ? n : 1) * size);
  int64_t *got_indices = malloc((n ? n : 1) * 8);
  ck_assert(got_values && got_indices);
  for (int r = 0; r < (o.repeat ? o.repeat : 1); r++) {
    if (values) WG_TEST_OK(ctx, wg_memset_d8(ctx, values, POISON, (n ? n : 1) * size, NULL));
    if (indices) WG_TEST_OK(ctx, wg_memset_d8(ctx, indices, POISON, (n ? n : 1) * 8, NULL));
    WG_TEST_OK(ctx, wg_memset_d8(ctx, count, POISON, 8, NULL));
    WG_TEST_OK(ctx, wg_compact(ctx, &spec, ptrs, (size_t)ninputs, n, params,
                               (size_t)spec.nparams, values, indices, count, NULL));
    uint64_t got_count = 0;
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, &got_count, count, 8, NULL));
    if (values) WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got_values, values, n * size, NULL));
    if (indices) WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got_indices, indices, n * 8, NULL));
    wg_oracle_report report;
    wg_oracle_report_init(&report);
    wg_oracle_compact_check(&report, spec.type, host[0], n, keep,
                            values ? got_values : NULL, indices ? got_indices : NULL,
                            got_count, POISON);
    ck_assert_msg(report.mismatches == 0,
                  "'%s' n=%" PRIu64 " offset=%u values=%d indices=%d run %d: %" PRIu64
                  " mismatches; first: %s (seed 0x%016" PRIx64 ")",
                  text, n, o.offset, o.values, o.indices, r, report.mismatches,
                  report.first, wg_test_seed());
  }
  for (int k = 0; k < ninputs; k++) {
    wg_mem_free(ctx, dev[k]);
    free(host[k]);
  }
  wg_mem_free(ctx, values);
  wg_mem_free(ctx, indices);
  wg_mem_free(ctx, count);
  free(keep);
  free(got_values);
  free(got_indices);
}

static const run_opts both = {true, true, 0, 1};

/* --- on the device -------------------------------------------------------- */

/* Sizes around 0, 1, a warp, a tile and many tiles for each type. */
START_TEST(every_type_and_size) {
  const wg_type t = (wg_type)_i;
  wg_context *ctx = wg_test_context();
  const uint64_t tile = tile_of(t);
  const uint64_t sizes[] = {0, 1, 2, 31, 33, tile - 1, tile, tile + 1, 2 * tile + 7,
                            33 * tile + 5, 100 * tile - 1, 1000003, 5u << 20};
  char text[160];
  snprintf(text, sizeof text, "compact %s", wg_type_name(t));
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    if (quick() && sizes[s] > 40 * tile) continue;
    run_one(ctx, text, sizes[s], NULL, both);
  }
  /* A predicate with a parameter, each of the integer and float kinds. */
  const bool is_float = t == WG_F16 || t == WG_BF16 || t == WG_F32 || t == WG_F64;
  snprintf(text, sizeof text, "compact %s pred=\"x > p0 && x == x\" params=%s",
           wg_type_name(t), is_float ? "f32" : "i64");
  wg_scalar p = {0};
  if (is_float) p.f32 = 2.5f;
  else p.i64 = -3;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    if (quick() && sizes[s] > 40 * tile) continue;
    run_one(ctx, text, sizes[s], &p, both);
  }
  wg_context_destroy(ctx);
}
END_TEST

/* All kept, none kept, every other, on many tiles. */
START_TEST(all_none_and_patterns) {
  wg_context *ctx = wg_test_context();
  const uint64_t n = quick() ? 40 * 4096 + 3 : 3000017;
  const char *texts[] = {
    "compact f32 pred=\"i >= 0\"", "compact f32 pred=\"i < 0\"",
    "compact f32 pred=\"i % 2 == 1\"", "compact f32 pred=\"i % 4096 == 4095\"",
    "compact f32 pred=\"i == n - 1\"", "compact f32 pred=\"i == 0\"",
    "compact f32 pred=\"x != x\"", "compact f32 pred=\"x\"",
    "compact f64 pred=\"x != x || abs(x) > 1e300\"",
    "compact i32 pred=\"x % 3 == 0\"", "compact u64 pred=\"x > 50\"",
    "compact f16 pred=\"x < 0.5\"", "compact bf16 pred=\"x >= -1\"",
  };
  for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) run_one(ctx, texts[k], n, NULL, both);
  wg_context_destroy(ctx);
}
END_TEST

/* Outputs wanted or not, unaligned inputs, extra inputs, parameters. */
START_TEST(outputs_alignment_inputs) {
  wg_context *ctx = wg_test_context();
  const uint64_t sizes[] = {1, 4097, 70001, quick() ? 80000 : 1234567};
  const run_opts opts[] = {{true, false, 0, 1}, {false, true, 0, 1}, {false, false, 0, 1},
                           {true, true, 1, 1},  {true, true, 3, 1},  {true, true, 0, 3}};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t o = 0; o < sizeof opts / sizeof *opts; o++) {
      run_one(ctx, "compact f32 pred=\"x > 0\"", sizes[s], NULL, opts[o]);
      run_one(ctx, "compact f16", sizes[s], NULL, opts[o]);
    }
  wg_scalar p[2];
  p[0].f32 = 0.25f;
  p[1].f64 = 1e-6;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    run_one(ctx, "compact f32 pred=\"y > 0.5\" inputs=f32,f16", sizes[s], NULL, both);
    run_one(ctx, "compact i64 pred=\"x + z > p1 * n || y < p0\" inputs=i64,bf16,f32 "
            "params=f32,f64", sizes[s], p, both);
    run_one(ctx, "compact u32 pred=\"w != 0 && i % 3 != 0\" inputs=u32,i32,f64,u64",
            sizes[s], NULL, (run_opts){true, true, 1, 1});
  }
  wg_context_destroy(ctx);
}
END_TEST

/* Small, large (past 8192 tiles: the workspace grows past its first
 * 64 KiB), small again: the workspace is left ready every time. */
START_TEST(workspace_reuse) {
  wg_context *ctx = wg_test_context();
  const uint64_t sizes[] = {5000, 100, quick() ? 200000 : 40000000, 9000, 3, 300001};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    run_one(ctx, "compact f32 pred=\"x > 1\"", sizes[s], NULL, (run_opts){true, true, 0, 2});
  wg_context_destroy(ctx);
}
END_TEST

/* Compactions on four streams at once, queued behind a spin so that they
 * start together (each stream its own workspace), then four of them
 * captured in a graph and replayed twice beside eager calls on a second
 * stream; fresh inputs each round, every output poisoned first and checked.
 * A workspace shared across streams shows as wrong counts or order. */
START_TEST(streams_and_graphs) {
  wg_context *ctx = wg_test_context();
  test_cuda cu;
  test_cuda_open(ctx, &cu);
  enum { JOBS = 8, STREAMS = 4 };
  const uint64_t n = quick() ? 50000 : (1u << 21) + 77, size = 4;
  wg_spec spec;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &spec, "compact f32 pred=\"x > p0\" params=f32"));
  wg_scalar p = {0};
  uint64_t in, values, indices, counts;
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &in, JOBS * n * size));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &values, JOBS * n * size));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &indices, JOBS * n * 8));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &counts, JOBS * 8));
  unsigned char *host = malloc(JOBS * n * size), *keep = malloc(n);
  unsigned char *got_values = malloc(JOBS * n * size);
  int64_t *got_indices = malloc(JOBS * n * 8);
  uint64_t got_counts[JOBS];
  ck_assert(host && keep && got_values && got_indices);
  CUstream streams[STREAMS];
  for (int s = 0; s < STREAMS; s++) CU(cu.StreamCreate(&streams[s], CU_STREAM_NON_BLOCKING));
  /* Job j compacts slice j: its input, values, indices and count. */
#define JOB(j, stream)                                                                   \
  do {                                                                                   \
    const uint64_t in_j = in + (uint64_t)(j) * n * size;                                 \
    WG_TEST_OK(ctx, wg_compact(ctx, &spec, &in_j, 1, n, &p, 1,                           \
                               values + (uint64_t)(j) * n * size,                        \
                               indices + (uint64_t)(j) * n * 8, counts + (uint64_t)(j) * 8, \
                               (stream)));                                               \
  } while (0)
  for (int round = 0; round < 4; round++) {
    p.f32 = round == 1 ? 9.5f : (float)round - 1.0f; /* 40-55 % kept; 3 % in round 1 */
    for (int j = 0; j < JOBS; j++)
      fill(WG_F32, host + (size_t)j * n * size, n, wg_test_seed() + 70000 + 100u * round + j);
    WG_TEST_OK(ctx, wg_memcpy_htod(ctx, in, host, JOBS * n * size, NULL));
    WG_TEST_OK(ctx, wg_memset_d8(ctx, values, POISON, JOBS * n * size, NULL));
    WG_TEST_OK(ctx, wg_memset_d8(ctx, indices, POISON, JOBS * n * 8, NULL));
    WG_TEST_OK(ctx, wg_memset_d8(ctx, counts, POISON, JOBS * 8, NULL));
    WG_TEST_OK(ctx, wg_stream_sync(ctx, NULL));
    if (round < 2) { /* eager, on four streams that start together */
      for (int s = 0; s < STREAMS; s++) test_cuda_hold_stream(&cu, streams[s], 20);
      for (int j = 0; j < JOBS; j++) JOB(j, streams[j % STREAMS]);
    } else { /* jobs 0..3 captured on stream 0, 4..7 eager on stream 1 */
      CUgraph graph;
      CUgraphExec exec;
      CU(cu.StreamBeginCapture(streams[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
      for (int j = 0; j < JOBS / 2; j++) JOB(j, streams[0]);
      CU(cu.StreamEndCapture(streams[0], &graph));
      CU(cu.GraphInstantiate(&exec, graph, 0));
      for (int replay = 0; replay < 2; replay++) {
        test_cuda_hold_stream(&cu, streams[1], 5);
        CU(cu.GraphLaunch(exec, streams[0]));
        for (int j = JOBS / 2; j < JOBS; j++) JOB(j, streams[1]);
      }
      CU(cu.api->CtxSynchronize());
      CU(cu.GraphExecDestroy(exec));
      CU(cu.GraphDestroy(graph));
    }
    CU(cu.api->CtxSynchronize());
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got_values, values, JOBS * n * size, NULL));
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got_indices, indices, JOBS * n * 8, NULL));
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got_counts, counts, JOBS * 8, NULL));
    for (int j = 0; j < JOBS; j++) {
      void *const one[1] = {host + (size_t)j * n * size};
      keep_mask(ctx, &spec, one, n, &p, keep);
      wg_oracle_report report;
      wg_oracle_report_init(&report);
      wg_oracle_compact_check(&report, WG_F32, one[0], n, keep,
                              got_values + (size_t)j * n * size, got_indices + (size_t)j * n,
                              got_counts[j], POISON);
      ck_assert_msg(report.mismatches == 0, "round %d job %d: %" PRIu64 " wrong, first %s "
                    "(seed 0x%016" PRIx64 ")", round, j, report.mismatches, report.first,
                    wg_test_seed());
    }
  }
#undef JOB
  for (int s = 0; s < STREAMS; s++) CU(cu.StreamDestroy(streams[s]));
  wg_mem_free(ctx, in);
  wg_mem_free(ctx, values);
  wg_mem_free(ctx, indices);
  wg_mem_free(ctx, counts);
  free(host);
  free(keep);
  free(got_values);
  free(got_indices);
  wg_context_destroy(ctx);
}
END_TEST

START_TEST(errors) {
  wg_context *ctx = wg_test_context();
  wg_spec spec;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &spec, "compact f32 pred=\"x > p0\" params=f32"));
  uint64_t buf = 0, out = 0, count = 0;
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &buf, 4096));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &out, 4096));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &count, 8));
  wg_scalar p = {.f32 = 1};
  ck_assert_int_eq(wg_compact(NULL, &spec, &buf, 1, 10, &p, 1, out, 0, count, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, NULL, &buf, 1, 10, &p, 1, out, 0, count, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, NULL, 1, 10, &p, 1, out, 0, count, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 2, 10, &p, 1, out, 0, count, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, NULL, 0, out, 0, count, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, out, 0, 0, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, out + 1, 0, count, NULL),
                   WG_EALIGN);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, out, out + 4, count, NULL),
                   WG_EALIGN);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, UINT64_MAX / 2, &p, 1, out, 0, count,
                              NULL), WG_ERANGE);
  wg_spec other;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &other, "reduce-array f32 sum"));
  ck_assert_int_eq(wg_compact(ctx, &other, &buf, 1, 10, NULL, 0, out, 0, count, NULL),
                   WG_EINVAL);
  /* Not in place: no output may overlap an input or another output. */
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, buf, 0, count, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, buf + 36, 0, count, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, 0, buf + 32, count, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, out, 0, buf + 8, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, out, out + 32, count, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, out, out + 40, out + 32, NULL),
                   WG_EINVAL);
  /* Adjacent is not overlapping; with n == 0 nothing but the count is. */
  WG_TEST_OK(ctx, wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, buf + 40, buf + 80, buf + 160,
                             NULL));
  WG_TEST_OK(ctx, wg_compact(ctx, &spec, &buf, 1, 0, &p, 1, buf, buf, count, NULL));
  uint64_t got = 7;
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, &got, count, sizeof got, NULL));
  ck_assert_uint_eq(got, 0);
  spec.version = 1;
  ck_assert_int_eq(wg_compact(ctx, &spec, &buf, 1, 10, &p, 1, out, 0, count, NULL), WG_ESPEC);
  wg_mem_free(ctx, buf);
  wg_mem_free(ctx, out);
  wg_mem_free(ctx, count);
  wg_context_destroy(ctx);
}
END_TEST

/* 2^31 + 4099 f16 elements: tiles past 2^31 elements and indices past
 * 2^31. The predicate reads i only, so the CPU side is a loop. */
START_TEST(past_2_31_elements) {
  if (!wg_test_large_enabled() || quick()) return;
  wg_context *ctx = wg_test_context();
  const uint64_t n = (1ull << 31) + 4099;
  wg_spec spec;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &spec, "compact f16 pred=\"i % 5 == 3 || i == n - 1\""));
  uint16_t *host = malloc(n * 2);
  unsigned char *keep = malloc(n);
  ck_assert(host && keep);
  for (uint64_t i = 0; i < n; i++) {
    host[i] = (uint16_t)(i * 2654435761u >> 7);
    keep[i] = i % 5 == 3 || i == n - 1;
  }
  const uint64_t want = wg_oracle_compact_count(keep, n);
  uint64_t in = 0, values = 0, indices = 0, count = 0;
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &in, n * 2));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &values, n * 2));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &indices, n * 8));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &count, 8));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, in, host, n * 2, NULL));
  WG_TEST_OK(ctx, wg_memset_d8(ctx, values, POISON, n * 2, NULL));
  WG_TEST_OK(ctx, wg_memset_d8(ctx, indices, POISON, n * 8, NULL));
  WG_TEST_OK(ctx, wg_compact(ctx, &spec, &in, 1, n, NULL, 0, values, indices, count, NULL));
  uint64_t got = 0;
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, &got, count, 8, NULL));
  ck_assert_uint_eq(got, want);
  uint16_t *got_values = malloc(n * 2);
  int64_t *got_indices = malloc(n * 8);
  ck_assert(got_values && got_indices);
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got_values, values, n * 2, NULL));
  WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got_indices, indices, n * 8, NULL));
  wg_oracle_report report;
  wg_oracle_report_init(&report);
  wg_oracle_compact_check(&report, WG_F16, host, n, keep, got_values, got_indices, got,
                          POISON);
  ck_assert_msg(report.mismatches == 0, "%" PRIu64 " mismatches; first: %s",
                report.mismatches, report.first);
  free(host);
  free(keep);
  free(got_values);
  free(got_indices);
  wg_mem_free(ctx, in);
  wg_mem_free(ctx, values);
  wg_mem_free(ctx, indices);
  wg_mem_free(ctx, count);
  wg_context_destroy(ctx);
}
END_TEST

/* --- without a device ----------------------------------------------------- */

/* The overlap checks come before anything touches a device: they run
 * without one, on addresses no device has given. */
START_TEST(overlap_refused) {
  wg_context *ctx = wg_test_context();
  wg_spec spec;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &spec, "compact f32 pred=\"x > p0\" params=f32"));
  wg_scalar p = {.f32 = 0};
  const uint64_t in = 1ull << 40, n = 1000; /* input: 4000 bytes */
  const struct { uint64_t values, indices, count; } cases[] = {
    {in, 0, 1ull << 41},                       /* values on the input */
    {in + 3996, 0, 1ull << 41},                /* its last element */
    {0, in - 7992, 1ull << 41},                /* indices ending inside the input */
    {1ull << 41, 0, in + 8},                   /* the count inside the input */
    {1ull << 41, (1ull << 41) + 3992, 1ull << 42}, /* values and indices */
    {1ull << 41, (1ull << 42), (1ull << 42) + 7992}, /* indices and count */
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    ck_assert_int_eq(wg_compact(ctx, &spec, &in, 1, n, &p, 1, cases[k].values,
                                cases[k].indices, cases[k].count, NULL),
                     WG_EINVAL);
    ck_assert_msg(strstr(wg_errmsg(ctx), "overlaps"), "case %zu: '%s'", k, wg_errmsg(ctx));
  }
  wg_context_destroy(ctx);
}
END_TEST

START_TEST(spec_text) {
  wg_context *ctx = wg_test_context();
  const char *const round_trips[][2] = {
    {"compact f32", "compact f32"},
    {"compact f32 pred=\"x>p0&&x==x\" params=f32",
     "compact f32 pred=\"x > p0 && x == x\" params=f32"},
    {"compact i64 pred=\"y<0.5\" inputs=i64,f16", "compact i64 pred=\"y < 0.5\" inputs=i64,f16"},
  };
  for (size_t k = 0; k < sizeof round_trips / sizeof *round_trips; k++) {
    wg_spec s;
    WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, round_trips[k][0]));
    char text[256];
    ck_assert_int_gt(wg_spec_format(text, sizeof text, &s), 0);
    ck_assert_str_eq(text, round_trips[k][1]);
    ck_assert_int_eq(s.primitive, WG_COMPACT);
  }
  const char *const refused[][2] = {
    {"compact f32 map=\"x > 0\"", "pred="},
    {"reduce-array f32 sum pred=\"x > 0\"", "only compact"},
    {"compact f32 sum", "takes no operator"},
    {"compact f32 pred=\"x > 0\" final=\"r\"", "final"},
    {"compact f32 combine=\"a + b\" identity=\"0\"", "combine"},
    {"compact f32 pred=\"q > 0\"", "predicate"},
    {"compact f32 width=16", "width"},
    {"compact f32 bins=4", "bins"},
    {"compact f32 variant=down", "variant"},
  };
  for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
    wg_spec s;
    ck_assert_int_eq(wg_spec_parse(ctx, &s, refused[k][0]), WG_ESPEC);
    ck_assert_msg(strstr(wg_errmsg(ctx), refused[k][1]), "'%s': message '%s' lacks '%s'",
                  refused[k][0], wg_errmsg(ctx), refused[k][1]);
  }
  wg_context_destroy(ctx);
}
END_TEST

/* The host's answer that the device is checked against (compact.h). */
START_TEST(host_keep) {
  wg_context *ctx = wg_test_context();
  wg_spec s;
  const float x[] = {0.0f, -0.0f, NAN, 1.0f, 0.5f, -2.0f, INFINITY};
  const uint16_t h[] = {0x0000, 0x8000, 0x7e00, 0x3c00, 0x3800, 0xc000, 0x7c00};
  const unsigned char nonzero[] = {0, 0, 1, 1, 1, 1, 1};
  const unsigned char above[] = {0, 0, 0, 1, 0, 0, 1}; /* x > 0.75 */
  unsigned char keep[7];
  const void *in[2] = {x, h};
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, "compact f32"));
  WG_TEST_OK(ctx, wg_compact_keep_host(ctx, &s, in, 7, NULL, keep));
  ck_assert_mem_eq(keep, nonzero, 7);
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, "compact f16"));
  WG_TEST_OK(ctx, wg_compact_keep_host(ctx, &s, in + 1, 7, NULL, keep));
  ck_assert_mem_eq(keep, nonzero, 7);
  wg_scalar p = {.f64 = 0.75};
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, "compact f32 pred=\"y > p0\" inputs=f32,f16 "
                                "params=f64"));
  WG_TEST_OK(ctx, wg_compact_keep_host(ctx, &s, in, 7, &p, keep));
  ck_assert_mem_eq(keep, above, 7);
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, "compact f32 pred=\"x\""));
  WG_TEST_OK(ctx, wg_compact_keep_host(ctx, &s, in, 7, NULL, keep));
  ck_assert_mem_eq(keep, nonzero, 7); /* a NaN result keeps, -0.0 does not */
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, "compact f32 pred=\"i % 3 == 1 || i == n - 1\""));
  WG_TEST_OK(ctx, wg_compact_keep_host(ctx, &s, in, 7, NULL, keep));
  const unsigned char pattern[] = {0, 1, 0, 0, 1, 0, 1};
  ck_assert_mem_eq(keep, pattern, 7);
  wg_context_destroy(ctx);
}
END_TEST

/* Every type with each kind of predicate compiles (NVRTC, no GPU). */
START_TEST(every_shape_compiles) {
  const wg_type t = (wg_type)_i;
  wg_context *ctx = wg_test_context();
  const char *const preds[] = {
    "", " pred=\"x > p0 && x == x\" params=f64",
    " pred=\"y != 0 || i %% 3 == 0\" inputs=%s,f16",
    " pred=\"x + z > p1 * n\" inputs=%s,i64,bf16 params=f32,f64",
    " pred=\"w\" inputs=%s,u32,bf16,i64",
  };
  for (size_t k = 0; k < sizeof preds / sizeof *preds; k++) {
    char tail[160], text[200];
    snprintf(tail, sizeof tail, preds[k], wg_type_name(t));
    snprintf(text, sizeof text, "compact %s%s arch=sm_90", wg_type_name(t), tail);
    wg_spec s;
    WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, text));
    void *cubin = NULL;
    size_t len = 0;
    const int rc = wg_cubin(ctx, &cubin, &len, &s);
    ck_assert_msg(rc == WG_OK, "%s: %s", text, wg_errmsg(ctx));
    ck_assert_uint_gt(len, 0);
    wg_free(cubin);
  }
  wg_context_destroy(ctx);
}
END_TEST

int main(int argc, char **argv) {
  const bool nvrtc = argc > 1 && strcmp(argv[1], "--nvrtc") == 0;
  Suite *s = suite_create("compact");
  TCase *tc;
  if (nvrtc) {
    tc = tcase_create("text");
    tcase_add_test(tc, spec_text);
    tcase_add_test(tc, host_keep);
    tcase_add_test(tc, overlap_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("nvrtc");
    tcase_set_timeout(tc, 600); /* 5 NVRTC compiles an iteration */
    tcase_add_loop_test(tc, every_shape_compiles, 0, WG_TYPE_COUNT);
    suite_add_tcase(s, tc);
  } else {
    if (!wg_test_gpu_begin("compact", NULL)) return 77;
    tc = tcase_create("device");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, every_type_and_size, 0, WG_TYPE_COUNT);
    tcase_add_test(tc, all_none_and_patterns);
    tcase_add_test(tc, outputs_alignment_inputs);
    tcase_add_test(tc, workspace_reuse);
    tcase_add_test(tc, streams_and_graphs);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, past_2_31_elements);
    suite_add_tcase(s, tc);
  }
  return wg_test_run_suite(s);
}
