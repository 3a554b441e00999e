/*
 * test_axis.c - reductions over axes of strided N-d arrays (wg_reduce_axis,
 * wg_reduce_axis_spec; src/fam_axis.c, templates/axis_reduce.cu), checked
 * against the CPU oracle (tests/oracle_axis.c gathers each output's
 * elements into a row, oracle.c reduces it).
 *
 *   test_axis          the GPU cases: every type and operator on layouts
 *                      that take each path (rows, 16-byte columns, element
 *                      columns, split axis), negative strides, merged
 *                      axes, sizes 0 and 1 and around tile and grid
 *                      boundaries, the benchmark's shapes, expressions,
 *                      repeated runs giving the same bits, calls overlapping
 *                      on four streams and in a graph, 2^31 + 32768
 *                      elements (WARPGEN_GPU_LARGE=0 skips those). Exits 77
 *                      without a device.
 *   test_axis --specs  every spec the GPU cases launch, one a line.
 *   test_axis --nvrtc  no GPU: the kernels of every type compiled by NVRTC
 *                      (and the operators on the widest accumulators), and
 *                      the errors a caller can make, refused before any
 *                      launch.
 *
 * Outputs are poisoned before every launch with a poisoned guard after
 * them; inputs are fresh random data each run (the base seed is printed;
 * WARPGEN_TEST_SEED replays it). WARPGEN_AXIS_QUICK=1 keeps every case
 * but with small sizes (for compute-sanitizer).
 */
#include "internal.h"
#include "reduce.h"
#include "cuda_support.h"
#include "oracle.h"
#include "support.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_BYTES 256

/* Every operator, whatever the table holds: a new one is tested here
 * without an edit. */
#define FOR_EACH_OP(op) for (wg_operator op = WG_OP_SUM; op < WG_OPERATOR_COUNT; op++)

static bool quick(void) {
  const char *v = getenv("WARPGEN_AXIS_QUICK");
  return v && strcmp(v, "1") == 0;
}

#define OK(ctx, call) WG_TEST_OK(ctx, call)

/* --- layouts -------------------------------------------------------------- */

/* An N-d view of a pool of elements: the logical shape, the reduced axes,
 * and how it lies in memory: dims in `order` (outermost first), `pad`
 * extra elements after each dim's run, the innermost `step` apart, the
 * dims in `flip` walked backwards (negative strides). */
typedef struct layout {
  int ndim;
  int64_t shape[4];
  int naxes;
  int axes[3];
  int order[4];     /* all zero: 0, 1, 2, ... */
  int64_t pad, step; /* step 0: 1 */
  unsigned flip;
} layout;

typedef struct view {
  int64_t strides[4];
  uint64_t origin; /* element of the pool at index 0 */
  uint64_t span;   /* elements of the pool it needs */
} view;

static view view_of(const layout *L, uint64_t shift) {
  view v = {{0}, 0, 0};
  int order[4];
  bool ordered = false;
  for (int d = 0; d < L->ndim; d++) ordered = ordered || L->order[d] != 0;
  for (int d = 0; d < L->ndim; d++) order[d] = ordered ? L->order[d] : d;
  int64_t stride = L->step ? L->step : 1;
  for (int k = L->ndim - 1; k >= 0; k--) {
    const int d = order[k];
    v.strides[d] = stride;
    stride *= L->shape[d] + (L->shape[d] ? L->pad : 0);
    if (stride == 0) stride = 1;
  }
  int64_t far = 0;
  for (int d = 0; d < L->ndim; d++) {
    const int64_t reach = L->shape[d] > 0 ? (L->shape[d] - 1) * v.strides[d] : 0;
    if (L->flip >> d & 1u) {
      v.origin += (uint64_t)reach;
      v.strides[d] = -v.strides[d];
    }
    far += reach;
  }
  v.origin += shift;
  v.span = (uint64_t)far + 1 + shift;
  return v;
}

static void layout_text(char *buf, size_t size, const layout *L, const view *v) {
  size_t n = (size_t)snprintf(buf, size, "shape (");
  for (int d = 0; d < L->ndim; d++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? ", " : "", (long long)L->shape[d]);
  n += (size_t)snprintf(buf + n, size - n, ") strides (");
  for (int d = 0; d < L->ndim; d++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? ", " : "", (long long)v->strides[d]);
  n += (size_t)snprintf(buf + n, size - n, ") axes (");
  for (int a = 0; a < L->naxes; a++)
    n += (size_t)snprintf(buf + n, size - n, "%s%d", a ? ", " : "", L->axes[a]);
  snprintf(buf + n, size - n, ") origin %" PRIu64, v->origin);
}

/* --- the pool ------------------------------------------------------------- */

typedef struct pool {
  wg_type type;
  uint64_t cap;              /* elements */
  void *host;
  uint64_t dev;
  uint64_t out;              /* device output + guard */
  size_t out_cap;            /* bytes */
  void *host_out, *rows;     /* host copies */
  size_t rows_cap;           /* bytes */
} pool;

static void pool_make(wg_context *ctx, pool *p, wg_type t, uint64_t cap, size_t out_bytes) {
  memset(p, 0, sizeof *p);
  p->type = t;
  p->cap = cap;
  p->host = malloc(cap * wg_types[t].size);
  p->out_cap = out_bytes + GUARD_BYTES;
  p->host_out = malloc(p->out_cap);
  p->rows_cap = cap * wg_types[t].size;
  p->rows = malloc(p->rows_cap);
  ck_assert(p->host && p->host_out && p->rows);
  OK(ctx, wg_mem_alloc(ctx, &p->dev, cap * wg_types[t].size));
  OK(ctx, wg_mem_alloc(ctx, &p->out, p->out_cap));
}

static void pool_free(wg_context *ctx, pool *p) {
  wg_mem_free(ctx, p->dev);
  wg_mem_free(ctx, p->out);
  free(p->host);
  free(p->host_out);
  free(p->rows);
}

static void pool_fill(wg_context *ctx, pool *p, wg_operator op, uint64_t seed) {
  wg_oracle_fill(p->type, op, p->host, p->cap, seed);
  OK(ctx, wg_memcpy_htod(ctx, p->dev, p->host, p->cap * wg_types[p->type].size, NULL));
}

static unsigned char poison_of(wg_type out) { return wg_types[out].is_float ? 0xff : 0xa7; }

/* Poisons `count` outputs of type ot at out (p->out, or a buffer of as
 * many bytes) and the guard after them. */
static void poison(wg_context *ctx, pool *p, uint64_t out, wg_type ot, uint64_t count) {
  const size_t bytes = count * wg_types[ot].size + GUARD_BYTES;
  ck_assert(bytes <= p->out_cap);
  OK(ctx, wg_memset_d8(ctx, out, poison_of(ot), bytes, NULL));
}

/* Reads `count` outputs at out back and checks the guard. */
static void read_back(wg_context *ctx, pool *p, uint64_t out, wg_type ot, uint64_t count,
                      const char *what) {
  const size_t bytes = count * wg_types[ot].size;
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, p->host_out, out, bytes + GUARD_BYTES, NULL));
  const unsigned char *g = (const unsigned char *)p->host_out + bytes;
  for (size_t i = 0; i < GUARD_BYTES; i++)
    ck_assert_msg(g[i] == poison_of(ot), "%s: wrote past the outputs (guard byte %zu)", what,
                  i);
}

/* What a check of layout L names in its messages. */
static void layout_what(char *what, size_t size, const pool *p, wg_operator op,
                        const layout *L, const view *v) {
  char lt[300];
  layout_text(lt, sizeof lt, L, v);
  snprintf(what, size, "%s %s %s", wg_types[p->type].name, wg_operators[op].name, lt);
}

/* Reduces layout L of the pool (its view shifted by `shift` elements) with
 * op into out on `stream`; returns the call's status. rows, cols: the
 * outputs and the elements each reduces. */
static int launch_layout(wg_context *ctx, pool *p, wg_operator op, const layout *L,
                         uint64_t shift, uint64_t out, void *stream, uint64_t *rows,
                         uint64_t *cols) {
  const size_t size = wg_types[p->type].size;
  const view v = view_of(L, shift);
  ck_assert_msg(v.span <= p->cap, "test bug: the pool is too small");
  ck_assert(wg_oracle_axis_gather(NULL, NULL, size, L->ndim, L->shape, v.strides, L->axes,
                                  L->naxes, rows, cols));
  wg_reduction r = WG_REDUCTION_INIT;
  r.type = p->type;
  r.op = op;
  const uint64_t in = p->dev + v.origin * size;
  return wg_reduce_axis(ctx, &r, &in, 1, L->ndim, L->shape, v.strides, L->axes, L->naxes,
                        NULL, 0, out, stream);
}

/* Reads back the rows outputs of layout L at out and checks every one
 * against the oracle, and the guard after them. */
static void verify_layout(wg_context *ctx, pool *p, wg_operator op, const layout *L,
                          uint64_t shift, uint64_t out, const char *what) {
  const wg_type t = p->type, ot = (wg_type)wg_reduce_output_type(t, op);
  const size_t size = wg_types[t].size;
  const view v = view_of(L, shift);
  uint64_t rows = 0, cols = 0;
  ck_assert(wg_oracle_axis_gather(NULL, NULL, size, L->ndim, L->shape, v.strides, L->axes,
                                  L->naxes, &rows, &cols));
  read_back(ctx, p, out, ot, rows, what);
  ck_assert(rows * cols * size <= p->rows_cap);
  wg_oracle_axis_gather(p->rows, (const unsigned char *)p->host + v.origin * size, size,
                        L->ndim, L->shape, v.strides, L->axes, L->naxes, &rows, &cols);
  wg_oracle_report report;
  wg_oracle_report_init(&report);
  wg_oracle_rows_check(&report, t, op, p->rows, rows, cols, NULL, 0, p->host_out);
  ck_assert_msg(report.mismatches == 0, "%s: %" PRIu64 " of %" PRIu64 " outputs wrong; %s "
                "(seed 0x%016" PRIx64 ")", what, report.mismatches, report.checked,
                report.first, wg_test_seed());
}

/* Reduces layout L of the pool with op, checks every output against the
 * oracle (or that an operator with no empty answer is refused). */
static void check_layout(wg_context *ctx, pool *p, wg_operator op, const layout *L,
                         uint64_t shift) {
  const wg_type ot = (wg_type)wg_reduce_output_type(p->type, op);
  const view v = view_of(L, shift);
  char what[400];
  layout_what(what, sizeof what, p, op, L, &v);
  uint64_t rows = 0, cols = 0;
  ck_assert(wg_oracle_axis_gather(NULL, NULL, wg_types[p->type].size, L->ndim, L->shape,
                                  v.strides, L->axes, L->naxes, &rows, &cols));
  poison(ctx, p, p->out, ot, rows);
  const int rc = launch_layout(ctx, p, op, L, shift, p->out, NULL, &rows, &cols);
  if (rows > 0 && cols == 0 && wg_operators[op].needs_elements) {
    ck_assert_msg(rc == WG_EINVAL, "%s: returned %d, want WG_EINVAL", what, rc);
    read_back(ctx, p, p->out, ot, 0, what);
    return;
  }
  ck_assert_msg(rc == WG_OK, "%s: %s: %s", what, wg_strerror(rc), wg_errmsg(ctx));
  verify_layout(ctx, p, op, L, shift, p->out, what);
}

/* Float products of the oracle's inputs leave the range past a few
 * thousand factors, at a place that depends on the order. */
static bool prod_fits(wg_type t, wg_operator op, uint64_t len) {
  return op != WG_OP_PROD || !wg_types[t].is_float || len <= 2000;
}

static uint64_t reduced_len(const layout *L) {
  uint64_t n = 1;
  for (int a = 0; a < L->naxes; a++) n *= (uint64_t)L->shape[L->axes[a]];
  return n;
}

/* --- every type and operator ---------------------------------------------- */

/* One of each path and edge: rows (contiguous last axis, transposed
 * first axis), columns with 16-byte loads and with element loads,
 * negative strides, merged axes, empty and size-1 dims, a split axis. */
static const layout every_layout[] = {
  {2, {37, 45}, 1, {0}, {0}, 0, 0, 0},            /* columns, element loads */
  {2, {37, 45}, 1, {1}, {0}, 0, 0, 0},            /* rows */
  {2, {37, 45}, 1, {0}, {1, 0}, 0, 0, 0},         /* transposed: rows */
  {2, {200, 64}, 1, {0}, {0}, 0, 0, 0},           /* 16-byte columns */
  {3, {6, 50, 9}, 1, {1}, {0}, 0, 0, 0},          /* the middle axis */
  {3, {6, 50, 16}, 1, {1}, {0}, 0, 0, 3},         /* negative strides */
  {1, {300}, 1, {0}, {0}, 0, 3, 1},               /* 1-d, stride -3 */
  {3, {5, 7, 33}, 2, {0, 1}, {0}, 0, 0, 0},       /* two axes merged */
  {3, {4, 6, 8}, 2, {2, 1}, {0}, 0, 0, 0},        /* the last two: rows */
  {2, {0, 5}, 1, {0}, {0}, 0, 0, 0},              /* an empty axis */
  {2, {5, 0}, 1, {0}, {0}, 0, 0, 0},              /* no outputs */
  {2, {1, 1}, 1, {0}, {0}, 0, 0, 0},
  {3, {9, 1, 40}, 1, {1}, {0}, 0, 0, 0},          /* a size-1 axis */
  {2, {3000, 8}, 1, {0}, {0}, 0, 0, 0},           /* few columns: split */
  {2, {1500, 5}, 1, {0}, {0}, 3, 0, 2},           /* split, padded, flipped */
  {4, {3, 4, 5, 6}, 1, {2}, {0}, 0, 0, 0},        /* 4-d, kept dims merge */
};

START_TEST(every_type_and_operator) {
  const wg_type t = (wg_type)_i;
  wg_context *ctx = wg_test_context();
  pool p;
  pool_make(ctx, &p, t, 1u << 16, 1u << 14);
  FOR_EACH_OP(op) {
    if (!wg_operator_accepts(op, t)) continue;
    pool_fill(ctx, &p, op, wg_test_seed() + (uint64_t)t * 100 + (uint64_t)op);
    for (size_t k = 0; k < WG_COUNT_OF(every_layout); k++) {
      if (!prod_fits(t, op, reduced_len(&every_layout[k]))) continue;
      check_layout(ctx, &p, op, &every_layout[k], 0);
      check_layout(ctx, &p, op, &every_layout[k], 1); /* misaligned */
    }
  }
  pool_free(ctx, &p);
  wg_context_destroy(ctx);
}
END_TEST

/* --- sizes around tile and grid boundaries -------------------------------- */

typedef struct pair {
  wg_type type;
  wg_operator op;
} pair;
static const pair sweep_pairs[] = {
  {WG_F32, WG_OP_SUM}, {WG_I32, WG_OP_SUM}, {WG_F16, WG_OP_MAX},
  {WG_F64, WG_OP_ARGMIN}, {WG_BF16, WG_OP_VAR}, {WG_U64, WG_OP_XOR},
};

START_TEST(sizes_around_boundaries) {
  const pair pr = sweep_pairs[_i];
  static const int64_t inners[] = {1, 2, 3, 8, 31, 32, 33, 255, 256, 257, 1025, 8200, 70001};
  static const int64_t lens[] = {1, 2, 9, 255, 257, 4097, 100003};
  const uint64_t most = quick() ? (1u << 16) : (1u << 20);
  wg_context *ctx = wg_test_context();
  pool p;
  pool_make(ctx, &p, pr.type, 2 * most + 4096, 8 * 70001 * 4);
  pool_fill(ctx, &p, pr.op, wg_test_seed() ^ 0xb0d);
  for (size_t i = 0; i < WG_COUNT_OF(inners); i++)
    for (size_t l = 0; l < WG_COUNT_OF(lens); l++) {
      if ((uint64_t)(inners[i] * lens[l]) > most) continue;
      const layout plain = {2, {lens[l], inners[i]}, 1, {0}, {0}, 0, 0, 0};
      const layout padded = {2, {lens[l], inners[i]}, 1, {0}, {0}, 1, 0, 0};
      const layout outer3 = {3, {3, lens[l], inners[i]}, 1, {1}, {0}, 0, 0, 1};
      check_layout(ctx, &p, pr.op, &plain, 0);
      check_layout(ctx, &p, pr.op, &plain, 1);
      check_layout(ctx, &p, pr.op, &padded, 0);
      if ((uint64_t)(3 * inners[i] * lens[l]) <= most) check_layout(ctx, &p, pr.op, &outer3, 0);
    }
  pool_free(ctx, &p);
  wg_context_destroy(ctx);
}
END_TEST

/* The benchmark's shapes (bench/axis_peers.py), f32 and exact i32. */
START_TEST(benchmark_shapes) {
  if (quick()) return;
  static const layout shapes[] = {
    {2, {65536, 1024}, 1, {0}, {0}, 0, 0, 0},
    {2, {1024, 65536}, 1, {0}, {0}, 0, 0, 0},
    {3, {64, 4096, 256}, 1, {1}, {0}, 0, 0, 0},
  };
  const wg_type types[] = {WG_F32, WG_I32};
  wg_context *ctx = wg_test_context();
  for (int k = 0; k < 2; k++) {
    pool p;
    pool_make(ctx, &p, types[k], 1ull << 26, 65536 * 8);
    pool_fill(ctx, &p, WG_OP_SUM, wg_test_seed() ^ 0xbe7c4);
    for (size_t s = 0; s < WG_COUNT_OF(shapes); s++)
      check_layout(ctx, &p, WG_OP_SUM, &shapes[s], 0);
    pool_free(ctx, &p);
  }
  wg_context_destroy(ctx);
}
END_TEST

/* Calls overlapping on four streams, then captured into a graph replayed
 * twice beside eager calls on another stream (test_cuda_run_jobs): jobs
 * that split the reduced axis over blocks (which take the stream's
 * workspace), columns that do not, rows, and struct accumulators, each
 * output checked against the oracle. */
typedef struct axis_jobs {
  wg_context *ctx;
  pool *p;
  uint64_t out[8]; /* a buffer a job */
} axis_jobs;

static const struct {
  layout L;
  wg_operator op;
  uint64_t shift;
} stream_jobs[8] = {
  {{2, {3000, 8}, 1, {0}, {0}, 0, 0, 0}, WG_OP_SUM, 0},       /* few columns: split */
  {{2, {2048, 256}, 1, {0}, {0}, 0, 0, 0}, WG_OP_VAR, 1},     /* split, (count, mean, M2) */
  {{3, {6, 500, 64}, 1, {1}, {0}, 0, 0, 0}, WG_OP_MAX, 4},    /* the middle axis */
  {{2, {37, 4500}, 1, {1}, {0}, 0, 0, 0}, WG_OP_ARGMAX, 3},   /* rows */
  {{2, {20000, 16}, 1, {0}, {0}, 0, 0, 0}, WG_OP_SUM, 8},     /* split */
  {{3, {16, 512, 64}, 1, {1}, {0}, 0, 0, 0}, WG_OP_MEAN, 2},
  {{2, {1500, 5}, 1, {0}, {0}, 3, 0, 2}, WG_OP_ARGMIN, 5},    /* split, padded, flipped */
  {{2, {9, 70000}, 1, {1}, {0}, 0, 0, 0}, WG_OP_LOGSUMEXP, 7}, /* few long rows: split */
};

static void axis_job(void *arg, int j, CUstream stream) {
  const axis_jobs *a = arg;
  uint64_t rows = 0, cols = 0;
  OK(a->ctx, launch_layout(a->ctx, a->p, stream_jobs[j].op, &stream_jobs[j].L,
                           stream_jobs[j].shift, a->out[j], stream, &rows, &cols));
}

START_TEST(streams_and_graphs) {
  wg_context *ctx = wg_test_context();
  test_cuda cu;
  test_cuda_open(ctx, &cu);
  enum { STREAMS = 4 };
  pool p;
  pool_make(ctx, &p, WG_F32, 1u << 20, 1u << 16);
  pool_fill(ctx, &p, WG_OP_SUM, wg_test_seed() ^ 0x57a3);
  axis_jobs a = {.ctx = ctx, .p = &p};
  for (int j = 0; j < 8; j++) OK(ctx, wg_mem_alloc(ctx, &a.out[j], p.out_cap));
  CUstream streams[STREAMS];
  for (int k = 0; k < STREAMS; k++) CU(cu.StreamCreate(&streams[k], CU_STREAM_NON_BLOCKING));
  for (int round = 0; round < 2; round++) {
    for (int j = 0; j < 8; j++) {
      const wg_type ot = (wg_type)wg_reduce_output_type(WG_F32, stream_jobs[j].op);
      poison(ctx, &p, a.out[j], ot, (p.out_cap - GUARD_BYTES) / wg_types[ot].size);
    }
    OK(ctx, wg_stream_sync(ctx, NULL));
    test_cuda_run_jobs(&cu, streams, STREAMS, 8, round == 1, axis_job, &a);
    for (int j = 0; j < 8; j++) {
      char what[400];
      const view v = view_of(&stream_jobs[j].L, stream_jobs[j].shift);
      layout_what(what, sizeof what, &p, stream_jobs[j].op, &stream_jobs[j].L, &v);
      char tagged[440];
      snprintf(tagged, sizeof tagged, "%s round %d job %d", what, round, j);
      verify_layout(ctx, &p, stream_jobs[j].op, &stream_jobs[j].L, stream_jobs[j].shift,
                    a.out[j], tagged);
    }
  }
  for (int k = 0; k < STREAMS; k++) CU(cu.StreamDestroy(streams[k]));
  for (int j = 0; j < 8; j++) wg_mem_free(ctx, a.out[j]);
  pool_free(ctx, &p);
  wg_context_destroy(ctx);
}
END_TEST

/* 2^31 + 32768 f16 elements, reduced over the columns (dim 0 of 65537 x
 * 32768) and over the rows (dim 1 of 32768 x 65537): element offsets and
 * counts past 32 bits. The values are -1, 0 and 1 (wg_test_f16_sign),
 * so every sum is a random walk of at most 65537 steps, exact in f32 and,
 * far below 2048, in f16; the check is a plain loop over every element.
 * WARPGEN_GPU_LARGE=0 skips it. */
START_TEST(past_2_31_elements) {
  if (!wg_test_large_enabled() || quick()) return;
  wg_context *ctx = wg_test_context();
  const uint64_t a = 65537, b = 32768, n = a * b, bytes = n * 2;
  if (!wg_test_device_holds(ctx, bytes, "axis: past_2_31_elements")) {
    wg_context_destroy(ctx);
    return;
  }
  const uint64_t seed = wg_test_seed();
  uint16_t *host = malloc(bytes);
  uint16_t *got = malloc(a * 2 + GUARD_BYTES);
  ck_assert(host && got);
  for (uint64_t i = 0; i < n; i++) host[i] = wg_test_f16_sign(i, seed);
  uint64_t in = 0, out = 0;
  OK(ctx, wg_mem_alloc(ctx, &in, bytes));
  OK(ctx, wg_mem_alloc(ctx, &out, a * 2 + GUARD_BYTES));
  OK(ctx, wg_memcpy_htod(ctx, in, host, bytes, NULL));
  /* The same elements as (a, b) rows reduced over dim 0, then as (b, a)
   * reduced over dim 1: element i is row i / cols, column i % cols. */
  for (int dim = 0; dim < 2; dim++) {
    const int64_t rows = dim == 0 ? (int64_t)a : (int64_t)b, cols = dim == 0 ? (int64_t)b : (int64_t)a;
    const int64_t shape[2] = {rows, cols}, strides[2] = {cols, 1};
    const uint64_t outputs = dim == 0 ? (uint64_t)cols : (uint64_t)rows;
    OK(ctx, wg_memset_d8(ctx, out, 0xff, outputs * 2 + GUARD_BYTES, NULL));
    wg_reduction r = WG_REDUCTION_INIT;
    r.type = WG_F16;
    OK(ctx, wg_reduce_axis(ctx, &r, &in, 1, 2, shape, strides, &dim, 1, NULL, 0, out, NULL));
    OK(ctx, wg_stream_sync(ctx, NULL));
    OK(ctx, wg_memcpy_dtoh(ctx, got, out, outputs * 2 + GUARD_BYTES, NULL));
    int64_t *want = calloc(outputs, sizeof *want);
    ck_assert(want);
    for (uint64_t i = 0; i < n; i++) {
      want[dim == 0 ? i % (uint64_t)cols : i / (uint64_t)cols] +=
          wg_test_f16_sign_value(host[i]);
    }
    uint64_t wrong = 0, first = 0;
    for (uint64_t q = 0; q < outputs; q++) {
      uint16_t w = 0;
      wg_oracle_set(WG_F16, &w, 0, (double)want[q]);
      if (got[q] != w && wrong++ == 0) first = q;
    }
    const unsigned char *guard = (const unsigned char *)(got + outputs);
    for (int g = 0; g < GUARD_BYTES; g++) ck_assert_int_eq(guard[g], 0xff);
    ck_assert_msg(wrong == 0, "f16 sum dim %d of %" PRId64 " x %" PRId64 ": %" PRIu64
                  " of %" PRIu64 " wrong, first at %" PRIu64 " (got bits 0x%04x, want %"
                  PRId64 "; seed 0x%016" PRIx64 ")", dim, rows, cols, wrong, outputs, first,
                  got[first], want[first], wg_test_seed());
    free(want);
  }
  wg_mem_free(ctx, in);
  wg_mem_free(ctx, out);
  free(host);
  free(got);
  wg_context_destroy(ctx);
}
END_TEST

/* Split and unsplit launches give the same bits on every run. */
START_TEST(same_bits_every_run) {
  wg_context *ctx = wg_test_context();
  pool p;
  pool_make(ctx, &p, WG_F32, 1u << 20, 1u << 16);
  pool_fill(ctx, &p, WG_OP_SUM, wg_test_seed() ^ 0x5a3e);
  static const layout shapes[] = {
    {2, {32768, 32}, 1, {0}, {0}, 0, 0, 0},
    {2, {100000, 3}, 1, {0}, {0}, 0, 0, 0},
    {3, {16, 256, 256}, 1, {1}, {0}, 0, 0, 0},
  };
  for (size_t s = 0; s < WG_COUNT_OF(shapes); s++) {
    const view v = view_of(&shapes[s], 0);
    uint64_t rows, cols;
    wg_oracle_axis_gather(NULL, NULL, 4, shapes[s].ndim, shapes[s].shape, v.strides,
                          shapes[s].axes, shapes[s].naxes, &rows, &cols);
    unsigned char *first = malloc(rows * 4);
    ck_assert(first);
    for (int run = 0; run < 3; run++) {
      poison(ctx, &p, p.out, WG_F32, rows);
      wg_reduction r = WG_REDUCTION_INIT;
      OK(ctx, wg_reduce_axis(ctx, &r, &p.dev, 1, shapes[s].ndim, shapes[s].shape, v.strides,
                             shapes[s].axes, shapes[s].naxes, NULL, 0, p.out, NULL));
      read_back(ctx, &p, p.out, WG_F32, rows, "same bits");
      if (run == 0) memcpy(first, p.host_out, rows * 4);
      else ck_assert_msg(memcmp(first, p.host_out, rows * 4) == 0,
                         "shape %zu: run %d gave other bits", s, run);
    }
    free(first);
  }
  pool_free(ctx, &p);
  wg_context_destroy(ctx);
}
END_TEST

/* Every path once, small: the case compute-sanitizer runs
 * (tests/gpu_axis.sh: CK_RUN_CASE=sanitize). */
START_TEST(sanitize_paths) {
  static const layout paths[] = {
    {2, {200, 64}, 1, {0}, {0}, 0, 0, 0},    /* 16-byte columns */
    {2, {37, 45}, 1, {0}, {0}, 0, 0, 0},     /* element columns */
    {2, {37, 45}, 1, {1}, {0}, 0, 0, 0},     /* rows */
    {2, {3000, 8}, 1, {0}, {0}, 0, 0, 0},    /* split */
    {2, {1500, 5}, 1, {0}, {0}, 3, 0, 2},    /* split, padded, flipped */
    {3, {6, 50, 16}, 1, {1}, {0}, 0, 0, 3},  /* negative strides */
    {2, {0, 5}, 1, {0}, {0}, 0, 0, 0},       /* an empty axis */
  };
  static const pair pairs[] = {{WG_F32, WG_OP_SUM}, {WG_I64, WG_OP_ARGMIN},
                               {WG_F16, WG_OP_VAR}, {WG_F64, WG_OP_LOGSUMEXP}};
  wg_context *ctx = wg_test_context();
  for (size_t q = 0; q < WG_COUNT_OF(pairs); q++) {
    pool p;
    pool_make(ctx, &p, pairs[q].type, 1u << 15, 1u << 12);
    pool_fill(ctx, &p, pairs[q].op, wg_test_seed() + q);
    for (size_t k = 0; k < WG_COUNT_OF(paths); k++) check_layout(ctx, &p, pairs[q].op, &paths[k], 0);
    pool_free(ctx, &p);
  }
  wg_context_destroy(ctx);
}
END_TEST

/* --- expressions ---------------------------------------------------------- */

/* map over one input (the vector kernels), over two (the element kernel),
 * combine with identity, final with a parameter: exact i32 answers. */
START_TEST(expressions) {
  wg_context *ctx = wg_test_context();
  const uint64_t n = 1u << 18;
  pool x, y;
  pool_make(ctx, &x, WG_I32, n, 1u << 16);
  pool_make(ctx, &y, WG_I32, n, 8);
  pool_fill(ctx, &x, WG_OP_SUM, wg_test_seed() ^ 0xe1);
  pool_fill(ctx, &y, WG_OP_SUM, wg_test_seed() ^ 0xe2);
  wg_spec sq, prod, mx, fin;
  OK(ctx, wg_spec_parse(ctx, &sq, "reduce-axis i32 sum map=\"x * x + i32(i % 3)\""));
  OK(ctx, wg_spec_parse(ctx, &prod,
                        "reduce-axis i32 sum map=\"x * y - i32(i)\" inputs=i32,i32"));
  OK(ctx, wg_spec_parse(ctx, &mx, "reduce-axis i32 combine=\"max(a, b)\" identity=\"-7\""));
  OK(ctx, wg_spec_parse(ctx, &fin, "reduce-axis i32 sum final=\"i64(r) * p0 + n\" params=i64"));
  static const layout shapes[] = {
    {2, {300, 40}, 1, {0}, {0}, 0, 0, 0},
    {2, {3000, 4}, 1, {0}, {0}, 0, 0, 3},   /* split, negative strides */
    {3, {5, 77, 9}, 1, {1}, {0}, 0, 0, 2},
    {2, {40, 300}, 1, {1}, {0}, 0, 0, 0},   /* rows */
    {2, {0, 7}, 1, {0}, {0}, 0, 0, 0},      /* empty axis */
  };
  const int32_t *hx = x.host, *hy = y.host;
  for (size_t s = 0; s < WG_COUNT_OF(shapes); s++) {
    const layout *L = &shapes[s];
    const view v = view_of(L, 0);
    const int64_t len = L->shape[L->axes[0]];
    const int ax = L->axes[0];
    uint64_t rows, cols;
    wg_oracle_axis_gather(NULL, NULL, 4, L->ndim, L->shape, v.strides, L->axes, 1, &rows,
                          &cols);
    /* Output q's offset from the origin, walking the kept dims. */
    int64_t *base = malloc(rows * sizeof *base);
    ck_assert(base);
    for (uint64_t q = 0; q < rows; q++) {
      uint64_t rest = q;
      int64_t off = 0;
      for (int d = L->ndim - 1; d >= 0; d--) {
        if (d == ax) continue;
        off += (int64_t)(rest % (uint64_t)L->shape[d]) * v.strides[d];
        rest /= (uint64_t)L->shape[d];
      }
      base[q] = off + (int64_t)v.origin;
    }
    const uint64_t ins[2] = {x.dev + v.origin * 4, y.dev + v.origin * 4};
    const wg_spec *specs[4] = {&sq, &prod, &mx, &fin};
    for (int e = 0; e < 4; e++) {
      const wg_type ot = e == 3 ? WG_I64 : WG_I32;
      poison(ctx, &x, x.out, ot, rows);
      const wg_scalar p0 = {.i64 = -3};
      OK(ctx, wg_reduce_axis_spec(ctx, specs[e], ins, e == 1 ? 2 : 1, L->ndim, L->shape,
                                  v.strides, L->axes, 1, e == 3 ? &p0 : NULL, e == 3,
                                  x.out, NULL));
      read_back(ctx, &x, x.out, ot, rows, "expressions");
      for (uint64_t q = 0; q < rows; q++) {
        uint32_t acc = e == 2 ? (uint32_t)-7 : 0;
        for (int64_t k = 0; k < len; k++) {
          const int64_t at = base[q] + k * v.strides[ax];
          const uint32_t a = (uint32_t)hx[at], b = (uint32_t)hy[at];
          if (e == 0) acc += a * a + (uint32_t)(k % 3);
          else if (e == 1) acc += a * b - (uint32_t)k;
          else if (e == 2) acc = (int32_t)a > (int32_t)acc ? a : acc;
          else acc += a;
        }
        if (e == 3) {
          int64_t got, want = (int64_t)(int32_t)acc * -3 + len;
          memcpy(&got, (const unsigned char *)x.host_out + q * 8, 8);
          ck_assert_msg(got == want, "final, shape %zu, output %" PRIu64 ": %" PRId64
                        ", want %" PRId64, s, q, got, want);
        } else {
          int32_t got;
          memcpy(&got, (const unsigned char *)x.host_out + q * 4, 4);
          ck_assert_msg(got == (int32_t)acc, "expression %d, shape %zu, output %" PRIu64
                        ": %d, want %d", e, s, q, got, (int32_t)acc);
        }
      }
    }
    free(base);
  }
  pool_free(ctx, &x);
  pool_free(ctx, &y);
  wg_context_destroy(ctx);
}
END_TEST

/* --- no GPU: errors and NVRTC --------------------------------------------- */

/* Every refusal comes before the device is touched: a context that never
 * loads the driver answers them all. */
START_TEST(errors_before_launch) {
  wg_context *ctx = wg_test_context();
  wg_reduction r = WG_REDUCTION_INIT;
  const uint64_t in = 0x10000, out = 0x20000;
  const int64_t shape[3] = {4, 5, 6}, strides[3] = {30, 6, 1};
  const int ax0 = 0, ax1[2] = {0, 2}, ax_bad = 3, ax_twice[2] = {1, 1};
#define REFUSE(code, call, needle)                                                  \
  do {                                                                              \
    const int rc_ = (call);                                                         \
    ck_assert_msg(rc_ == (code), "%s: %d (%s), want %d", #call, rc_, wg_errmsg(ctx), \
                  (code));                                                          \
    ck_assert_msg(strstr(wg_errmsg(ctx), needle), "%s: message '%s' lacks '%s'",    \
                  #call, wg_errmsg(ctx), needle);                                   \
  } while (0)
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, shape, strides, &ax_bad, 1, NULL, 0,
                                   out, NULL), "out of range");
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, shape, strides, ax_twice, 2, NULL, 0,
                                   out, NULL), "twice");
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 0, shape, strides, &ax0, 1, NULL, 0,
                                   out, NULL), "ndim");
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, shape, strides, &ax0, 0, NULL, 0,
                                   out, NULL), "naxes");
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, NULL, strides, &ax0, 1, NULL, 0,
                                   out, NULL), "NULL");
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, shape, strides, ax1, 2, NULL, 0,
                                   out, NULL), "do not merge into one");
  const int64_t neg[3] = {4, -5, 6};
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, neg, strides, &ax0, 1, NULL, 0, out,
                                   NULL), "sizes are >= 0");
  /* Kept dims that do not merge into two: a 4-d array, memory order
   * (3, 1, 0, 2), reduce axis 2... keeps 0, 1, 3 at strides 5, 60, 300. */
  const int64_t s4[4] = {3, 4, 5, 6}, st4[4] = {5, 60, 1, 240};
  const int ax2 = 2;
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 4, s4, st4, &ax2, 1, NULL, 0, out, NULL),
         "kept dimensions");
  const int64_t huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40}, hs[2] = {1, 1};
  REFUSE(WG_ERANGE, wg_reduce_axis(ctx, &r, &in, 1, 2, huge, hs, &ax0, 1, NULL, 0, out,
                                   NULL), "overflow");
  const int64_t far[2] = {3, INT64_C(1) << 40}, fs[2] = {1, INT64_C(1) << 30};
  REFUSE(WG_ERANGE, wg_reduce_axis(ctx, &r, &in, 1, 2, far, fs, &ax0, 1, NULL, 0, out,
                                   NULL), "64 bits");
  const int64_t below[1] = {100}, bs[1] = {-(INT64_C(1) << 20)};
  REFUSE(WG_ERANGE, wg_reduce_axis(ctx, &r, &in, 1, 1, below, bs, &ax0, 1, NULL, 0, out,
                                   NULL), "below address 0");
  r.op = WG_OP_ARGMAX;
  const int64_t empty[2] = {0, 3}, es[2] = {3, 1};
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 2, empty, es, &ax0, 1, NULL, 0, out,
                                   NULL), "no answer");
  /* ... even with no output to write. */
  const int64_t empty2[2] = {0, 0};
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 2, empty2, es, &ax0, 1, NULL, 0, out,
                                   NULL), "no answer");
  r.op = WG_OP_SUM;
  /* Outputs inside an input's span: the kernel (axis 1, 4 x 5 x 6) and
   * rows (axis 2, the last), at the start, inside, and under a negative
   * stride's reach. */
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, shape, strides, &ax0 + 0, 1, NULL, 0,
                                   in + 4 * 100, NULL), "overlaps");
  const int ax1only = 1, ax_last = 2;
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, shape, strides, &ax1only, 1, NULL, 0,
                                   in, NULL), "overlaps");
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, shape, strides, &ax_last, 1, NULL, 0,
                                   in + 4 * 119, NULL), "overlaps");
  const int64_t back[2] = {10, 8}, bk[2] = {-8, 1}; /* rows read downwards from in */
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 2, back, bk, &ax0, 1, NULL, 0,
                                   in - 4 * 40, NULL), "overlaps");
  r.op = WG_OP_ARGMAX;
  r.op = WG_OP_MEAN;
  r.type = WG_I32;
  REFUSE(WG_ESPEC, wg_reduce_axis(ctx, &r, &in, 1, 3, shape, strides, &ax0, 1, NULL, 0,
                                  out, NULL), "floating");
  r = (wg_reduction)WG_REDUCTION_INIT;
  r.version = 99;
  REFUSE(WG_EINVAL, wg_reduce_axis(ctx, &r, &in, 1, 3, shape, strides, &ax0, 1, NULL, 0,
                                   out, NULL), "version");
  wg_spec rows;
  OK(ctx, wg_spec_parse(ctx, &rows, "reduce-rows f32 sum"));
  REFUSE(WG_EINVAL, wg_reduce_axis_spec(ctx, &rows, &in, 1, 3, shape, strides, &ax0, 1,
                                        NULL, 0, out, NULL), "reduce-rows");
  wg_spec two;
  OK(ctx, wg_spec_parse(ctx, &two, "reduce-axis f32 sum map=\"x * y\" inputs=f32,f32"));
  REFUSE(WG_EINVAL, wg_reduce_axis_spec(ctx, &two, &in, 1, 3, shape, strides, &ax0, 1, NULL,
                                        0, out, NULL), "2 inputs");
  wg_spec bad;
  REFUSE(WG_ESPEC, wg_spec_parse(ctx, &bad, "reduce-axis f32 sum cols=4"), "cols");
  /* No outputs: nothing to do, whatever the pointers. */
  const int64_t none[2] = {5, 0}, ns[2] = {1, 1};
  r = (wg_reduction)WG_REDUCTION_INIT;
  OK(ctx, wg_reduce_axis(ctx, &r, &in, 1, 2, none, ns, &ax0, 1, NULL, 0, 0, NULL));
  r.op = WG_OP_ARGMAX; /* the axis has 5 elements: only the outputs are none */
  OK(ctx, wg_reduce_axis(ctx, &r, &in, 1, 2, none, ns, &ax0, 1, NULL, 0, 0, NULL));
  wg_context_destroy(ctx);
#undef REFUSE
}
END_TEST

/* The spec text round-trips and names the kernel. */
START_TEST(spec_text) {
  wg_context *ctx = wg_test_context();
  wg_spec s;
  OK(ctx, wg_spec_parse(ctx, &s, "reduce-axis bf16 logsumexp"));
  ck_assert_int_eq(s.primitive, WG_REDUCE_AXIS);
  char buf[256];
  ck_assert_int_gt(wg_spec_format(buf, sizeof buf, &s), 0);
  ck_assert_str_eq(buf, "reduce-axis bf16 logsumexp");
  ck_assert_int_gt(wg_kernel_name(buf, sizeof buf, &s), 0);
  ck_assert_str_eq(buf, "wg_reduce_axis_bf16_logsumexp");
  ck_assert_int_eq(wg_reduce_spec_output_type(&s), WG_BF16);
  wg_context_destroy(ctx);
}
END_TEST

/* NVRTC compiles the kernel of every type (sum), every operator on the
 * widest accumulators (f16: 8 columns a thread; f64, i64) and the
 * expression kernels, for sm_90 (no GPU needed). */
START_TEST(nvrtc_compiles) {
  wg_context *ctx = wg_test_context();
  wg_spec specs[64];
  size_t n = 0;
  for (int t = 0; t < WG_TYPE_COUNT; t++) {
    wg_spec s = WG_SPEC_INIT;
    s.primitive = WG_REDUCE_AXIS;
    s.type = (wg_type)t;
    specs[n++] = s;
  }
  const wg_type wide[] = {WG_F16, WG_F64, WG_I64};
  for (size_t w = 0; w < WG_COUNT_OF(wide); w++)
    FOR_EACH_OP(op) {
      if (!wg_operator_accepts(op, wide[w]) || op == WG_OP_SUM) continue;
      wg_spec s = WG_SPEC_INIT;
      s.primitive = WG_REDUCE_AXIS;
      s.type = wide[w];
      s.op = op;
      specs[n++] = s;
    }
  static const char *const texts[] = {
    "reduce-axis f32 sum map=\"x * x\"",
    "reduce-axis f16 max map=\"abs(x - y)\" inputs=f16,f32",
    "reduce-axis i32 combine=\"max(a, b)\" identity=\"-7\"",
    "reduce-axis f64 sum map=\"x * p0 + f64(i)\" params=f64",
  };
  for (size_t k = 0; k < WG_COUNT_OF(texts); k++) OK(ctx, wg_spec_parse(ctx, &specs[n++], texts[k]));
  for (size_t k = 0; k < n; k++) {
    specs[k].arch = 90;
    void *bin = NULL;
    size_t len = 0;
    char text[512];
    wg_spec_format(text, sizeof text, &specs[k]);
    const int rc = wg_cubin(ctx, &bin, &len, &specs[k]);
    ck_assert_msg(rc == WG_OK, "%s: %s", text, wg_errmsg(ctx));
    ck_assert(len > 0);
    wg_free(bin);
  }
  wg_context_destroy(ctx);
}
END_TEST

/* --- the specs the suites launch (test_axis --specs) ---------------------- */

/* The specs, each as it is compiled: s itself, or when rows_cols >= 0 the
 * row kernel of rows of that length (views that are rows run
 * wg_reduce_rows_spec, which shapes its spec from the row length). */
typedef struct spec_list {
  wg_spec *specs;
  size_t count, cap;
} spec_list;

static void add_spec(spec_list *l, const wg_spec *s, int64_t rows_cols) {
  wg_spec c = *s;
  if (rows_cols >= 0) {
    c.primitive = WG_REDUCE_ROWS;
    c.cols = wg_spec_elementwise(&c) ? 0 : wg_rows_spec_cols(c.type, (uint64_t)rows_cols);
  }
  c.arch = 90; /* explicit: compiling them never starts CUDA */
  if (l->count == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 256;
    l->specs = realloc(l->specs, l->cap * sizeof *l->specs);
    if (!l->specs) abort();
  }
  l->specs[l->count++] = c;
}

/* Every spec the GPU suite and python/tests/test_gpu_axis.py launch (with
 * repeats); expression specs point at text interned in ctx. */
static void all_specs(wg_context *ctx, spec_list *l) {
  for (int t = 0; t < WG_TYPE_COUNT; t++)
    FOR_EACH_OP(op) {
      if (!wg_operator_accepts(op, (wg_type)t)) continue;
      wg_spec s = WG_SPEC_INIT;
      s.primitive = WG_REDUCE_AXIS;
      s.type = (wg_type)t;
      s.op = op;
      add_spec(l, &s, -1);
      add_spec(l, &s, 45); /* the layouts that are rows: 37 to 54 columns */
      add_spec(l, &s, 24); /* the Python copy of a 4-d permuted array */
      add_spec(l, &s, 100000); /* long rows: whole views whose axes merge */
      add_spec(l, &s, 256);
    }
  static const int64_t lens[] = {2, 9, 255, 257, 4097, 100003}; /* sizes_around_boundaries */
  for (size_t p = 0; p < WG_COUNT_OF(sweep_pairs); p++)
    for (size_t k = 0; k < WG_COUNT_OF(lens); k++) {
      wg_spec s = WG_SPEC_INIT;
      s.primitive = WG_REDUCE_AXIS;
      s.type = sweep_pairs[p].type;
      s.op = sweep_pairs[p].op;
      add_spec(l, &s, lens[k]);
    }
  static const char *const texts[] = {
    "reduce-axis i32 sum map=\"x * x + i32(i % 3)\"",
    "reduce-axis i32 sum map=\"x * y - i32(i)\" inputs=i32,i32",
    "reduce-axis i32 combine=\"max(a, b)\" identity=\"-7\"",
    "reduce-axis i32 sum final=\"i64(r) * p0 + n\" params=i64",
  };
  for (size_t k = 0; k < WG_COUNT_OF(texts); k++) {
    wg_spec s;
    if (wg_spec_parse(ctx, &s, texts[k]) != WG_OK) continue;
    add_spec(l, &s, -1);
    add_spec(l, &s, 300);
  }
}

/* test_axis --specs: the list, one a line, for filling a disk cache on a
 * machine without a GPU (tests/gpu_axis.sh --prepare). */
static void print_specs(void) {
  wg_context *ctx = NULL;
  if (wg_context_create(&ctx, NULL) != WG_OK) return;
  spec_list l = {0};
  all_specs(ctx, &l);
  for (size_t k = 0; k < l.count; k++) {
    char text[512];
    if (wg_spec_format(text, sizeof text, &l.specs[k]) > 0) printf("%s\n", text);
  }
  free(l.specs);
  wg_context_destroy(ctx);
}

static Suite *nvrtc_suite(void) {
  Suite *s = suite_create("axis-nvrtc");
  TCase *tc = tcase_create("nvrtc");
  tcase_set_timeout(tc, 1800);
  tcase_add_test(tc, errors_before_launch);
  tcase_add_test(tc, spec_text);
  tcase_add_test(tc, nvrtc_compiles);
  suite_add_tcase(s, tc);
  return s;
}

static Suite *gpu_suite(void) {
  Suite *s = suite_create("axis");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 1800);
  tcase_add_loop_test(tc, every_type_and_operator, 0, WG_TYPE_COUNT);
  tcase_add_loop_test(tc, sizes_around_boundaries, 0, (int)WG_COUNT_OF(sweep_pairs));
  tcase_add_test(tc, benchmark_shapes);
  tcase_add_test(tc, same_bits_every_run);
  tcase_add_test(tc, expressions);
  tcase_add_test(tc, streams_and_graphs);
  tcase_add_test(tc, past_2_31_elements);
  suite_add_tcase(s, tc);
  tc = tcase_create("sanitize");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, sanitize_paths);
  tcase_add_test(tc, expressions);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--specs") == 0) {
    print_specs();
    return 0;
  }
  const bool nvrtc = argc > 1 && strcmp(argv[1], "--nvrtc") == 0;
  if (!nvrtc) {
    int arch = 0;
    if (!wg_test_gpu_begin("axis", &arch)) return 77;
    /* Every kernel compiled (or found in the disk cache) on every core
     * first: the specs name their arch, so this starts no CUDA before
     * Check forks. */
    wg_context *ctx = NULL;
    if (arch == 90 && wg_context_create(&ctx, NULL) == WG_OK) {
      spec_list l = {0};
      all_specs(ctx, &l);
      wg_test_precompile(l.specs, l.count);
      free(l.specs);
      wg_context_destroy(ctx);
    }
  }
  return wg_test_run_suite(nvrtc ? nvrtc_suite() : gpu_suite());
}
