/*
 * test_reduce.c - whole-array (wg_reduce) and row (wg_reduce_rows)
 * reductions run on the device and checked against a CPU reference: every
 * type and operator; sizes around each boundary of the launch logic (0, 1,
 * a vector, one block's share, one block's share + 1, millions, and
 * 2^31 + 33 elements); column counts from 1 to 100 000 with strides that
 * leave rows unaligned; unaligned starting pointers; packed tiny rows;
 * several blocks per row; repeated runs giving the same bits; and the errors a caller can
 * make; and many calls overlapping on two and eight streams, from one
 * context and from two, and calls captured in CUDA graphs and replayed
 * beside eager ones, all giving the bits the same calls give alone.
 *
 * Without a driver or a device it prints why and exits 77 (Meson's skip).
 * CUDA is only initialised inside the processes Check forks. Outputs are
 * poisoned before every launch (a NaN for floats) with a poisoned guard
 * after them. Inputs are fresh random data (wg_oracle_fill) each run; the base
 * seed is printed and WARPGEN_TEST_SEED replays it.
 *
 * `test_reduce --specs` prints every spec the suite launches, one a line,
 * so that a disk cache can be filled ahead (warpgen cubin) on a machine
 * without a GPU. WARPGEN_GPU_LARGE=0 skips the 2^31 + 33-element tests;
 * WARPGEN_REDUCE_QUICK=1 keeps every case but with small sizes (for runs
 * under compute-sanitizer, which makes each launch far slower).
 */
#include "driver.h"
#include "internal.h"
#include "reduce.h"
#include "oracle.h"
#include "support.h"
#include "cuda_support.h"

#include <check.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_BYTES 256
#define MB (1024ull * 1024ull)

/* Every operator of the array and row reductions: all of the table's rows,
 * so that a new operator row is tested without touching this file. */
#define FOR_EACH_OP(op) for (wg_operator op = WG_OP_SUM; op < WG_OPERATOR_COUNT; op++)

/* Row lengths: every shape and the edges between them, for 2- to 8-byte
 * elements, up to 100 000. */
static const uint64_t sweep_cols[] = {
    0,   1,   2,   3,   4,    5,    7,    8,    9,    15,   16,    17,
    31,  32,  33,  63,  64,   65,   100,  127,  128,  129,  255,   256,
    257, 511, 513, 1000, 1023, 1024, 1025, 2047, 2049, 4097, 65537, 100000};

/* The (type, operator) pairs that get the whole sweep of row lengths; every
 * other pair gets a few lengths, one of each shape. */
typedef struct pair {
  wg_type type;
  wg_operator op;
} pair;
static const pair sweep_pairs[] = {
    {WG_F32, WG_OP_SUM}, {WG_F32, WG_OP_MAX}, {WG_F16, WG_OP_SUM},
    {WG_BF16, WG_OP_MAX}, {WG_F64, WG_OP_MIN}, {WG_I32, WG_OP_XOR},
    {WG_U64, WG_OP_SUM}, {WG_I64, WG_OP_MIN},
};
static const uint64_t few_cols[] = {1, 6, 33, 300, 1000, 5000};

static bool pair_valid(wg_type type, wg_operator op) {
  return wg_operator_accepts(op, type);
}

/* Float products of the reference's inputs (magnitudes 0.8 to 1.25) grow
 * about e^0.02 an element: past a few thousand they leave f32's range, and
 * where the overflow happens depends on the order of the products. Integer
 * products wrap and have no such limit. */
static bool prod_fits(wg_type type, wg_operator op, uint64_t n) {
  return op != WG_OP_PROD || !wg_types[type].is_float || n <= 2000;
}

static bool quick(void) {
  const char *v = getenv("WARPGEN_REDUCE_QUICK");
  return v && strcmp(v, "1") == 0;
}

/* The expected results come from the oracle (tests/oracle.h), which also
 * documents the float bounds. */

/* --- device buffers ------------------------------------------------------- */

static wg_context *new_context(void) {
  wg_context *ctx = NULL;
  ck_assert_int_eq(wg_context_create(&ctx, NULL), WG_OK);
  return ctx;
}

#define OK(ctx, call)                                                       \
  do {                                                                      \
    int rc_ = (call);                                                       \
    ck_assert_msg(rc_ == WG_OK, "%s: %s: %s", #call, wg_strerror(rc_),     \
                  wg_errmsg(ctx));                                          \
  } while (0)

typedef struct buffers {
  void *host_in, *host_out;
  uint64_t dev_in, dev_out;
  size_t in_bytes, out_bytes;
} buffers;

static void buffers_make(wg_context *ctx, buffers *b, size_t in_bytes, size_t out_bytes) {
  memset(b, 0, sizeof *b);
  b->in_bytes = in_bytes;
  b->out_bytes = out_bytes + GUARD_BYTES;
  b->host_in = malloc(in_bytes ? in_bytes : 1);
  b->host_out = malloc(b->out_bytes);
  ck_assert(b->host_in && b->host_out);
  OK(ctx, wg_mem_alloc(ctx, &b->dev_in, in_bytes ? in_bytes : 16));
  OK(ctx, wg_mem_alloc(ctx, &b->dev_out, b->out_bytes));
}

static void buffers_free(wg_context *ctx, buffers *b) {
  wg_mem_free(ctx, b->dev_in);
  wg_mem_free(ctx, b->dev_out);
  free(b->host_in);
  free(b->host_out);
}

/* Random inputs suited to (type, op), uploaded. */
static void fill_input(wg_context *ctx, buffers *b, wg_type t, wg_operator op,
                       uint64_t n, uint64_t seed) {
  wg_oracle_fill(t, op, b->host_in, n, seed);
  OK(ctx, wg_memcpy_htod(ctx, b->dev_in, b->host_in, n * wg_types[t].size, NULL));
}

/* The output poison: a NaN for float outputs, an unlikely pattern else. */
static unsigned char poison_byte(wg_type out) {
  return wg_types[out].is_float ? 0xff : 0xa7;
}

static wg_type out_type(wg_type t, wg_operator op) {
  return (wg_type)wg_reduce_output_type(t, op);
}

/* Reads back `count` outputs and the guard after them; asserts the guard
 * still holds the poison. */
static void read_outputs(wg_context *ctx, buffers *b, wg_type t, uint64_t count,
                         const char *what) {
  const size_t bytes = count * wg_types[t].size;
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, b->host_out, b->dev_out, bytes + GUARD_BYTES, NULL));
  const unsigned char *guard = (const unsigned char *)b->host_out + bytes;
  for (size_t i = 0; i < GUARD_BYTES; i++)
    ck_assert_msg(guard[i] == poison_byte(t), "%s: wrote past the end (guard byte %zu)",
                  what, i);
}

/* --- whole arrays --------------------------------------------------------- */

/* Runs wg_reduce_ex on n elements from element `offset` of the input and
 * checks the result (or that an empty argmax is refused and writes
 * nothing). */
static void check_array_with(wg_context *ctx, buffers *b, wg_type t, wg_operator op,
                             uint64_t n, uint64_t offset, const wg_scalar *params,
                             size_t nparams) {
  const size_t size = wg_types[t].size;
  const wg_type ot = out_type(t, op);
  OK(ctx, wg_memset_d8(ctx, b->dev_out, poison_byte(ot), wg_types[ot].size + GUARD_BYTES,
                       NULL));
  wg_oracle want;
  wg_oracle_reduce(&want, t, op, b->host_in, offset, n, params, nparams);
  wg_reduction r = WG_REDUCTION_INIT;
  r.type = t;
  r.op = op;
  const uint64_t in = b->dev_in + offset * size;
  const int rc = wg_reduce_ex(ctx, &r, &in, 1, n, params, nparams, b->dev_out, NULL);
  char what[160], why[200];
  snprintf(what, sizeof what, "reduce-array %s %s n=%" PRIu64 " offset=%" PRIu64,
           wg_types[t].name, wg_operators[op].name, n, offset);
  if (want.must_fail) {
    ck_assert_msg(rc == WG_EINVAL, "%s: returned %d, want WG_EINVAL", what, rc);
    read_outputs(ctx, b, ot, 0, what);
    return;
  }
  ck_assert_msg(rc == WG_OK, "%s: %s", what, wg_errmsg(ctx));
  read_outputs(ctx, b, ot, 1, what);
  ck_assert_msg(wg_oracle_check(&want, b->host_out, why, sizeof why), "%s: %s (seed 0x%016"
                PRIx64 ")", what, why, wg_test_seed());
}

static void check_array(wg_context *ctx, buffers *b, wg_type t, wg_operator op,
                        uint64_t n, uint64_t offset) {
  check_array_with(ctx, b, t, op, n, offset, NULL, 0);
}

START_TEST(array_every_type_and_operator) {
  const wg_type t = (wg_type)_i;
  wg_context *ctx = new_context();
  const uint64_t vec = 16 / wg_types[t].size;
  /* One block's share of the array: its threads times the vectors each
   * takes before the launch adds a block. */
  const uint64_t block_share = WG_REDUCE_BLOCK * WG_REDUCE_VECTORS_PER_THREAD * vec;
  const uint64_t sizes[] = {0, 1, 2, vec - 1, vec + 1, 1000, block_share,
                            block_share + 1, 3 * block_share + vec + 1,
                            (1u << 20) + 7, 5000011};
  const uint64_t most = 5000011 + 8;
  buffers b;
  buffers_make(ctx, &b, most * wg_types[t].size, 64);
  FOR_EACH_OP(op) {
    if (!pair_valid(t, op)) continue;
    fill_input(ctx, &b, t, op, most, wg_test_seed() + 31 * _i + (op - WG_OP_SUM));
    for (size_t s = 0; s < WG_COUNT_OF(sizes); s++)
      for (uint64_t offset = 0; offset < 4; offset += 3) {
        if (!prod_fits(t, op, sizes[s])) continue;
        if (quick() && sizes[s] > 100000) continue;
        check_array(ctx, &b, t, op, sizes[s], offset);
      }
    check_array(ctx, &b, t, op, 12345, 1); /* unaligned by one element */
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

START_TEST(array_same_bits_every_run) {
  wg_context *ctx = new_context();
  const uint64_t n = quick() ? 300001 : (1u << 24) + 5;
  buffers b;
  buffers_make(ctx, &b, n * 4, 64);
  fill_input(ctx, &b, WG_F32, WG_OP_SUM, n, wg_test_seed() + 7);
  uint32_t first = 0;
  for (int run = 0; run < 5; run++) {
    OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xff, 4 + GUARD_BYTES, NULL));
    OK(ctx, wg_reduce(ctx, WG_F32, WG_OP_SUM, b.dev_in + 4, n - 1, b.dev_out, NULL));
    read_outputs(ctx, &b, WG_F32, 1, "reduce-array f32 sum, repeated");
    uint32_t bits;
    memcpy(&bits, b.host_out, 4);
    if (run == 0) first = bits;
    ck_assert_msg(bits == first, "run %d gave 0x%08x, run 0 gave 0x%08x", run, bits, first);
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

static bool large_enabled(void) { return wg_test_large_enabled() && !quick(); }

/* wg_reduce of n f16 elements at `in` must give the bits `want`. */
static void expect_f16(wg_context *ctx, wg_operator op, uint64_t in, uint64_t n,
                       uint64_t out, uint16_t want) {
  uint16_t got = 0;
  OK(ctx, wg_reduce(ctx, WG_F16, op, in, n, out, NULL));
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, &got, out, 2, NULL));
  ck_assert_msg(got == want, "f16 %s of %" PRIu64 " elements: got 0x%04x, want 0x%04x",
                wg_operators[op].name, n, got, want);
}

/* 2^31 + 33 elements: 64-bit indexing in the sweep, the head and the tail.
 * The input is a constant byte pattern with a few planted values, so that
 * the reference is known without reading billions of elements on the CPU. */
START_TEST(array_past_2_31_elements) {
  if (!large_enabled()) return;
  wg_context *ctx = new_context();
  const uint64_t n = (1ull << 31) + 33;
  uint64_t in = 0, out = 0;
  OK(ctx, wg_mem_alloc(ctx, &in, (n + 8) * 4));
  OK(ctx, wg_mem_alloc(ctx, &out, 64));
  /* i32 sum: every element is 0x01010101; from element 1 (unaligned). */
  OK(ctx, wg_memset_d8(ctx, in, 0x01, (n + 8) * 4, NULL));
  OK(ctx, wg_memset_d8(ctx, out, 0xa5, 64, NULL));
  OK(ctx, wg_reduce(ctx, WG_I32, WG_OP_SUM, in + 4, n, out, NULL));
  uint32_t got32 = 0;
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, &got32, out, 4, NULL));
  const uint32_t want32 = (uint32_t)(n * 0x01010101ull);
  ck_assert_msg(got32 == want32, "i32 sum of 2^31+33: got 0x%08x want 0x%08x", got32,
                want32);
  /* f16 max and min: zeros with extremes planted past element 2^31 (in the
   * sweep), in the head and in the tail. */
  OK(ctx, wg_memset_d8(ctx, in, 0x00, (n + 8) * 2, NULL));
  const uint16_t big = 0x3e00 /* 1.5 */, small = 0xc000 /* -2 */;
  const uint16_t bigger = 0x4100 /* 2.5 */, smaller = 0xc200 /* -3 */;
  OK(ctx, wg_memcpy_htod(ctx, in + ((1ull << 31) + 20) * 2, &big, 2, NULL));
  OK(ctx, wg_memcpy_htod(ctx, in + 2 * 2, &small, 2, NULL));
  expect_f16(ctx, WG_OP_MAX, in + 2, n, out, big);
  expect_f16(ctx, WG_OP_MIN, in + 2, n, out, small);
  /* The very last element (the scalar tail) and the first (the head) win. */
  OK(ctx, wg_memcpy_htod(ctx, in + 2 + (n - 1) * 2, &bigger, 2, NULL));
  OK(ctx, wg_memcpy_htod(ctx, in + 2, &smaller, 2, NULL));
  expect_f16(ctx, WG_OP_MAX, in + 2, n, out, bigger);
  expect_f16(ctx, WG_OP_MIN, in + 2, n, out, smaller);
  wg_mem_free(ctx, in);
  wg_mem_free(ctx, out);
  wg_context_destroy(ctx);
}
END_TEST

/* --- rows ----------------------------------------------------------------- */

/* rows x cols from element `offset`, rows `stride` apart, into outputs
 * from element `out_offset`; checks each row (or that empty rows of argmax
 * are refused and nothing is written). */
static void check_rows_with(wg_context *ctx, buffers *b, wg_type t, wg_operator op,
                            uint64_t rows, uint64_t cols, uint64_t stride,
                            uint64_t offset, uint64_t out_offset,
                            const wg_scalar *params, size_t nparams) {
  const size_t size = wg_types[t].size;
  const wg_type ot = out_type(t, op);
  const size_t osize = wg_types[ot].size;
  OK(ctx, wg_memset_d8(ctx, b->dev_out, poison_byte(ot),
                       (rows + out_offset) * osize + GUARD_BYTES, NULL));
  wg_reduction red = WG_REDUCTION_INIT;
  red.type = t;
  red.op = op;
  const uint64_t in = b->dev_in + offset * size;
  const int rc = wg_reduce_rows_ex(ctx, &red, &in, 1, rows, cols, stride, params, nparams,
                                   b->dev_out + out_offset * osize, NULL);
  char what[200], why[200];
  snprintf(what, sizeof what,
           "reduce-rows %s %s rows=%" PRIu64 " cols=%" PRIu64 " stride=%" PRIu64
           " offset=%" PRIu64 " out_offset=%" PRIu64, wg_types[t].name,
           wg_operators[op].name, rows, cols, stride, offset, out_offset);
  wg_oracle want;
  wg_oracle_reduce(&want, t, op, b->host_in, offset, cols, params, nparams);
  if (rows > 0 && want.must_fail) {
    ck_assert_msg(rc == WG_EINVAL, "%s: returned %d, want WG_EINVAL", what, rc);
    read_outputs(ctx, b, ot, 0, what);
    return;
  }
  ck_assert_msg(rc == WG_OK, "%s: %s", what, wg_errmsg(ctx));
  read_outputs(ctx, b, ot, rows + out_offset, what);
  for (uint64_t r = 0; r < rows; r++) {
    wg_oracle_reduce(&want, t, op, b->host_in, offset + r * stride, cols, params, nparams);
    const unsigned char *got = (const unsigned char *)b->host_out + (out_offset + r) * osize;
    ck_assert_msg(wg_oracle_check(&want, got, why, sizeof why), "%s, row %" PRIu64
                  ": %s (seed 0x%016" PRIx64 ")", what, r, why, wg_test_seed());
  }
}

static void check_rows(wg_context *ctx, buffers *b, wg_type t, wg_operator op,
                       uint64_t rows, uint64_t cols, uint64_t stride, uint64_t offset) {
  check_rows_with(ctx, b, t, op, rows, cols, stride, offset, 0, NULL, 0);
}

static void check_rows_out(wg_context *ctx, buffers *b, wg_type t, wg_operator op,
                           uint64_t rows, uint64_t cols, uint64_t stride, uint64_t offset,
                           uint64_t out_offset) {
  check_rows_with(ctx, b, t, op, rows, cols, stride, offset, out_offset, NULL, 0);
}

/* Rows for a sweep: about 2^18 elements, at least 3 rows, at most 3000. */
static uint64_t rows_for(uint64_t cols) {
  const uint64_t elements = quick() ? (1u << 14) : (1u << 18);
  uint64_t rows = cols ? elements / cols : 3000;
  return rows < 3 ? 3 : rows > 3000 ? 3000 : rows;
}

static void rows_case(const pair *p, const uint64_t *cols_list, size_t ncols,
                      uint64_t seed) {
  wg_context *ctx = new_context();
  const size_t size = wg_types[p->type].size;
  uint64_t most = 0, most_rows = 0;
  for (size_t c = 0; c < ncols; c++) {
    const uint64_t rows = rows_for(cols_list[c]);
    const uint64_t span = rows * (cols_list[c] + 5) + 8;
    if (span > most) most = span;
    if (rows > most_rows) most_rows = rows;
  }
  buffers b;
  buffers_make(ctx, &b, most * size, most_rows * 8); /* outputs up to i64 */
  fill_input(ctx, &b, p->type, p->op, most, seed);
  for (size_t c = 0; c < ncols; c++) {
    const uint64_t cols = cols_list[c], rows = rows_for(cols);
    if (!prod_fits(p->type, p->op, cols)) continue;
    const uint64_t strides[] = {cols, cols + 1, cols + 5};
    for (size_t s = 0; s < WG_COUNT_OF(strides); s++)
      for (uint64_t offset = 0; offset < 2; offset++)
        check_rows(ctx, &b, p->type, p->op, rows, cols, strides[s], offset);
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}

START_TEST(rows_sweep_of_lengths) {
  rows_case(&sweep_pairs[_i], sweep_cols, WG_COUNT_OF(sweep_cols),
            wg_test_seed() + 1000 + _i);
}
END_TEST

START_TEST(rows_every_type_and_operator) {
  const wg_type t = (wg_type)_i;
  FOR_EACH_OP(op) {
    if (!pair_valid(t, op)) continue;
    const pair p = {t, op};
    rows_case(&p, few_cols, WG_COUNT_OF(few_cols), wg_test_seed() + 2000 + 31 * _i + (op - WG_OP_SUM));
  }
}
END_TEST

/* Few long rows: several blocks per row, their partials combined by the
 * last block of each row; run twice (the tickets are reset). */
START_TEST(rows_few_and_long) {
  wg_context *ctx = new_context();
  const pair pairs[] = {{WG_F32, WG_OP_SUM}, {WG_I32, WG_OP_XOR}, {WG_F64, WG_OP_MAX}};
  const uint64_t cols = (quick() ? (1u << 17) : (1u << 20)) + 3, rows = 5, stride = cols + 1;
  /* Also 300 rows of 4100: a block per row, no split. */
  const uint64_t more_rows = 300, more_cols = 4100;
  uint64_t elements = rows * stride + 8;
  if (elements < more_rows * more_cols + 8) elements = more_rows * more_cols + 8;
  for (size_t i = 0; i < WG_COUNT_OF(pairs); i++) {
    const size_t size = wg_types[pairs[i].type].size;
    buffers b;
    buffers_make(ctx, &b, elements * size, more_rows * 8);
    fill_input(ctx, &b, pairs[i].type, pairs[i].op, elements, wg_test_seed() + 3000 + i);
    for (int run = 0; run < 2; run++) {
      check_rows(ctx, &b, pairs[i].type, pairs[i].op, 64, cols / 16, cols / 16 + 3, 1);
      check_rows(ctx, &b, pairs[i].type, pairs[i].op, rows, cols, stride, 1);
      check_rows(ctx, &b, pairs[i].type, pairs[i].op, 1, cols, cols, 0);
      check_rows(ctx, &b, pairs[i].type, pairs[i].op, more_rows, more_cols, more_cols, 0);
    }
    buffers_free(ctx, &b);
  }
  /* One row split over more blocks than a block has threads: the last
   * block's fold of the partials loops. */
  if (!quick()) {
    const uint64_t n = (1u << 23) + (1u << 21) + 5;
    buffers b;
    buffers_make(ctx, &b, (n + 8) * 4, 64);
    fill_input(ctx, &b, WG_F32, WG_OP_SUM, n + 8, wg_test_seed() + 3100);
    check_rows(ctx, &b, WG_F32, WG_OP_SUM, 1, n, n, 2);
    fill_input(ctx, &b, WG_I32, WG_OP_XOR, n + 8, wg_test_seed() + 3101);
    check_rows(ctx, &b, WG_I32, WG_OP_XOR, 1, n, n, 0);
    buffers_free(ctx, &b);
  }
  wg_context_destroy(ctx);
}
END_TEST

/* Packed tiny rows (stride == cols, 16-byte aligned base): every row
 * length up to 32 bytes; row counts around one chunk (pack_rows rows) and
 * past one sweep of the grid; outputs aligned for the wide stores and not;
 * the same rows strided and from a misaligned base (the general path). */
static const pair packed_pairs[] = {
    {WG_F32, WG_OP_SUM}, {WG_F16, WG_OP_MAX}, {WG_BF16, WG_OP_SUM},
    {WG_F64, WG_OP_SUM}, {WG_I32, WG_OP_XOR}, {WG_U64, WG_OP_MIN},
};

START_TEST(rows_packed) {
  const pair p = packed_pairs[_i];
  const size_t size = wg_types[p.type].size;
  const uint64_t most_cols = WG_PACK_MAX_ROW_BYTES / size;
  const uint64_t big = quick() ? (1u << 16) : (1u << 23);
  wg_context *ctx = new_context();
  buffers b;
  buffers_make(ctx, &b, (big + 64) * size, (big + 8) * size);
  fill_input(ctx, &b, p.type, p.op, big + 64, wg_test_seed() + 7000 + _i);
  for (uint64_t cols = 1; cols <= most_cols; cols++) {
    if (!prod_fits(p.type, p.op, cols)) continue;
    const wg_rows_shape shape = wg_rows_shape_for(p.type, (int64_t)cols);
    ck_assert_int_gt(shape.pack_rows, 0);
    const uint64_t r = (uint64_t)shape.pack_rows;
    /* The whole buffer for the longest and shortest rows: several sweeps. */
    const uint64_t many = (cols <= 2 || cols == most_cols ? big : big / 8) / cols;
    const uint64_t counts[] = {1, r + 1, 2 * r - 1, 3 * r * 256 + 1, 100003 / cols, many};
    for (size_t c = 0; c < WG_COUNT_OF(counts); c++) {
      const uint64_t rows = counts[c];
      check_rows_out(ctx, &b, p.type, p.op, rows, cols, cols, 0, 0);
      if (c == 2 || c == 4) {
        check_rows_out(ctx, &b, p.type, p.op, rows, cols, cols, 0, 1); /* narrow stores */
        check_rows(ctx, &b, p.type, p.op, rows, cols, cols, 1);        /* misaligned */
        check_rows(ctx, &b, p.type, p.op, rows, cols, cols + 1, 0);    /* strided */
      }
    }
    check_rows(ctx, &b, p.type, p.op, 1, cols, cols + 3, 0); /* one row, any stride */
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* One launch of each kernel shape, small: for compute-sanitizer's racecheck
 * and synccheck, which are too slow for the whole suite
 * (CK_RUN_CASE=shapes). */
START_TEST(one_of_each_shape) {
  wg_context *ctx = new_context();
  buffers b;
  const uint64_t n = 2500000;
  buffers_make(ctx, &b, n * 4, 4096 * 8);
  /* A scalar accumulator and the struct ones: (value, index), Welford's
   * (count, mean, M2) and (max, sum of exp) move through shared memory and
   * the workspace field by field. */
  static const wg_operator ops[] = {WG_OP_SUM, WG_OP_ARGMAX, WG_OP_VAR, WG_OP_LOGSUMEXP};
  for (size_t k = 0; k < WG_COUNT_OF(ops); k++) {
    const wg_operator op = ops[k];
    fill_input(ctx, &b, WG_F32, op, n, wg_test_seed() + 4000 + k);
    check_array(ctx, &b, WG_F32, op, 100, 1);        /* one block */
    check_array(ctx, &b, WG_F32, op, n - 3, 3);      /* many blocks */
    check_rows(ctx, &b, WG_F32, op, 1000, 3, 4, 1);  /* a lane a row */
    check_rows(ctx, &b, WG_F32, op, 4001, 3, 3, 0);  /* packed */
    check_rows(ctx, &b, WG_F32, op, 1000, 33, 35, 0); /* groups */
    check_rows(ctx, &b, WG_F32, op, 500, 1000, 1001, 1); /* a warp */
    check_rows(ctx, &b, WG_F32, op, 2200, 1100, 1100, 0); /* long: warps */
    check_rows(ctx, &b, WG_F32, op, 100, 5000, 5001, 1); /* long: blocks */
    check_rows(ctx, &b, WG_F32, op, 2, 200000, 200001, 0); /* split */
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* --- the operators' own edges ------------------------------------------- */

/* Writes x to element i of the host input and the device input. */
static void plant(wg_context *ctx, buffers *b, wg_type t, uint64_t i, double x) {
  wg_oracle_set(t, b->host_in, i, x);
  const size_t size = wg_types[t].size;
  OK(ctx, wg_memcpy_htod(ctx, b->dev_in + i * size,
                         (const unsigned char *)b->host_in + i * size, size, NULL));
}

/* Ties (few distinct values), NaNs planted in the head, the vectors and
 * the tail, infinities, the correction of var/std as a parameter, and the
 * empty cases: argmin/argmax/norminf refuse, mean/var NaN, logsumexp -inf. */
START_TEST(operators_nan_ties_params_empty) {
  const wg_type t = (wg_type)_i;
  wg_context *ctx = new_context();
  const uint64_t n = 70001, rows = 37, cols = 1500;
  buffers b;
  buffers_make(ctx, &b, (n + 8) * wg_types[t].size, rows * 8);
  static const wg_operator ops[] = {WG_OP_ARGMIN, WG_OP_ARGMAX, WG_OP_NORMINF,
                                    WG_OP_LOGSUMEXP, WG_OP_MEAN, WG_OP_VAR, WG_OP_STD,
                                    WG_OP_NORM1, WG_OP_NORM2, WG_OP_COUNT_NONZERO,
                                    WG_OP_MIN, WG_OP_MAX, WG_OP_SUM};
  for (size_t o = 0; o < WG_COUNT_OF(ops); o++) {
    const wg_operator op = ops[o];
    if (!wg_operator_accepts(op, t)) continue;
    /* Ties: argmin/argmax inputs draw from 17 values. */
    fill_input(ctx, &b, t, op, n + 8, wg_test_seed() + 5000 + 31 * _i + o);
    for (uint64_t size = 0; size < 4; size++) check_array(ctx, &b, t, op, size, 1);
    check_array(ctx, &b, t, op, n, 3);
    check_rows(ctx, &b, t, op, rows, cols, cols + 1, 1);
    check_rows(ctx, &b, t, op, 5, 0, 0, 0);
    if (!wg_types[t].is_float) continue;
    /* NaNs: in the tail, in a vector, in the head (the first wins). */
    const uint64_t at[] = {n + 1, n / 2 + 3, 2};
    for (size_t k = 0; k < WG_COUNT_OF(at); k++) {
      plant(ctx, &b, t, at[k], NAN);
      check_array(ctx, &b, t, op, n, 1);
      check_rows(ctx, &b, t, op, rows, cols, cols + 1, 1);
    }
    /* Infinities of both signs. */
    fill_input(ctx, &b, t, op, n + 8, wg_test_seed() + 6000 + 31 * _i + o);
    plant(ctx, &b, t, 700, INFINITY);
    plant(ctx, &b, t, 9000, -INFINITY);
    check_array(ctx, &b, t, op, n, 0);
    check_rows(ctx, &b, t, op, rows, cols, cols, 0);
  }
  if (wg_operator_accepts(WG_OP_VAR, t)) {
    fill_input(ctx, &b, t, WG_OP_VAR, n + 8, wg_test_seed() + 7000 + _i);
    const double corrections[] = {0.0, 1.0, 2.5, 1e9};
    for (size_t c = 0; c < WG_COUNT_OF(corrections); c++) {
      wg_scalar p;
      p.f64 = corrections[c];
      for (int op = WG_OP_VAR; op <= WG_OP_STD; op++) {
        check_array_with(ctx, &b, t, (wg_operator)op, n, 1, &p, 1);
        check_array_with(ctx, &b, t, (wg_operator)op, 1, 1, &p, 1);
        check_array_with(ctx, &b, t, (wg_operator)op, 2, 0, &p, 1);
        check_rows_with(ctx, &b, t, (wg_operator)op, rows, cols, cols + 3, 0, 0, &p, 1);
      }
    }
    /* All equal: M2 is exactly 0. */
    for (uint64_t i = 0; i < 100; i++) plant(ctx, &b, t, i, 1.5);
    check_array(ctx, &b, t, WG_OP_VAR, 100, 0);
    check_array(ctx, &b, t, WG_OP_VAR, 1, 0);
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* --- concurrent streams and graph capture --------------------------------- */

/* Each test below queues many reductions on several streams held behind a
 * spin kernel, so that they start together and overlap, with grids that do
 * not fill the GPU (2^17-element arrays: about 32 blocks; three split rows
 * of 2^18 columns: 24 blocks). Every call reads its own slice and writes
 * its own output slot. The expected bits come from the same calls run one
 * at a time (checked against the CPU reference); concurrent results must
 * be those bits exactly: wrong ones mean a shared workspace. */

/* One call: an f32 or i32 sum of an array, or an f32 sum of three split
 * rows; `slot` is its output's index (4 elements a slot). */
typedef struct job {
  int kind; /* 0: array f32, 1: array i32, 2: rows f32 */
  uint64_t offset, n, cols;
} job;

#define SLOT_BYTES 16
#define JOB_ROWS 3

static job job_for(int j) {
  job b;
  b.kind = j % 3;
  b.offset = (uint64_t)(j * 13 % 64);
  b.n = (1u << 17) + (uint64_t)(37 * j % 1000);
  b.cols = (1u << 18) + 5 + (uint64_t)(j % 50);
  return b;
}

static uint64_t jobs_span(void) { return 64 + JOB_ROWS * ((1u << 18) + 64) + 8; }

static int run_job(wg_context *ctx, const buffers *b, int j, uint64_t out, void *stream) {
  const job w = job_for(j);
  const uint64_t in = b->dev_in + w.offset * 4;
  switch (w.kind) {
  case 0: return wg_reduce(ctx, WG_F32, WG_OP_SUM, in, w.n, out, stream);
  case 1: return wg_reduce(ctx, WG_I32, WG_OP_SUM, in, w.n, out, stream);
  default:
    return wg_reduce_rows(ctx, WG_F32, WG_OP_SUM, in, JOB_ROWS, w.cols, w.cols + 1,
                          out, stream);
  }
}

/* Checks the outputs of jobs [0, count) in `host` (slot j at j *
 * SLOT_BYTES) against the CPU reference. */
static void check_jobs_reference(const buffers *b, const unsigned char *host, int count) {
  char why[200];
  for (int j = 0; j < count; j++) {
    const job w = job_for(j);
    const unsigned char *got = host + (size_t)j * SLOT_BYTES;
    if (w.kind < 2) {
      const wg_type t = w.kind == 0 ? WG_F32 : WG_I32;
      wg_oracle want;
      wg_oracle_reduce(&want, t, WG_OP_SUM, b->host_in, w.offset, w.n, NULL, 0);
      ck_assert_msg(wg_oracle_check(&want, got, why, sizeof why),
                    "job %d (array %s n=%" PRIu64 "): %s (seed 0x%016" PRIx64 ")", j,
                    wg_types[t].name, w.n, why, wg_test_seed());
      continue;
    }
    for (uint64_t row = 0; row < JOB_ROWS; row++) {
      wg_oracle want;
      wg_oracle_reduce(&want, WG_F32, WG_OP_SUM, b->host_in, w.offset + row * (w.cols + 1),
                       w.cols, NULL, 0);
      ck_assert_msg(wg_oracle_check(&want, got + row * 4, why, sizeof why),
                    "job %d (rows, cols=%" PRIu64 ") row %" PRIu64 ": %s (seed 0x%016"
                    PRIx64 ")", j, w.cols, row, why, wg_test_seed());
    }
  }
}

static void read_slots(wg_context *ctx, unsigned char *host, uint64_t dev, int count) {
  OK(ctx, wg_memcpy_dtoh(ctx, host, dev, (size_t)count * SLOT_BYTES, NULL));
}

/* Fresh input, then every job run alone into `expected` (checked against
 * the CPU reference). */
static void expected_bits(wg_context *ctx, buffers *b, unsigned char *expected, int count,
                          uint64_t seed) {
  fill_input(ctx, b, WG_F32, WG_OP_SUM, jobs_span(), seed);
  OK(ctx, wg_memset_d8(ctx, b->dev_out, 0xff, (size_t)count * SLOT_BYTES, NULL));
  for (int j = 0; j < count; j++) {
    OK(ctx, run_job(ctx, b, j, b->dev_out + (uint64_t)j * SLOT_BYTES, NULL));
    OK(ctx, wg_stream_sync(ctx, NULL));
  }
  read_slots(ctx, expected, b->dev_out, count);
  check_jobs_reference(b, expected, count);
}

static void expect_same_bits(const unsigned char *got, const unsigned char *expected,
                             int count, const char *what) {
  int wrong = 0, first = -1;
  for (int j = 0; j < count; j++)
    if (memcmp(got + (size_t)j * SLOT_BYTES, expected + (size_t)j * SLOT_BYTES,
               job_for(j).kind == 2 ? JOB_ROWS * 4 : 4) != 0) {
      wrong++;
      if (first < 0) first = j;
    }
  ck_assert_msg(wrong == 0, "%s: %d of %d results differ from the same calls run alone "
                "(first: job %d, kind %d) (seed 0x%016" PRIx64 ")", what, wrong, count,
                first, first >= 0 ? job_for(first).kind : -1, wg_test_seed());
}

/* _i: 0: two streams, 1: eight streams, 2: eight streams shared by two
 * wg_contexts on one CUDA context. 64 calls a stream, twice. */
START_TEST(streams_overlap) {
  const int nstreams = _i == 0 ? 2 : 8, per_stream = 64, count = nstreams * per_stream;
  wg_context *ctx[2] = {new_context(), NULL};
  test_cuda cu;
  test_cuda_open(ctx[0], &cu);
  if (_i == 2) ctx[1] = new_context(); /* adopts the current CUDA context */
  buffers b;
  buffers_make(ctx[0], &b, jobs_span() * 4, (size_t)count * SLOT_BYTES);
  unsigned char *expected = malloc((size_t)count * SLOT_BYTES);
  unsigned char *got = malloc((size_t)count * SLOT_BYTES);
  ck_assert(expected && got);
  expected_bits(ctx[0], &b, expected, count, wg_test_seed() + 5000 + _i);
  CUstream streams[8];
  for (int s = 0; s < nstreams; s++) CU(cu.StreamCreate(&streams[s], CU_STREAM_NON_BLOCKING));
  for (int round = 0; round < 2; round++) {
    OK(ctx[0], wg_memset_d8(ctx[0], b.dev_out, 0xff, (size_t)count * SLOT_BYTES, NULL));
    OK(ctx[0], wg_stream_sync(ctx[0], NULL));
    for (int s = 0; s < nstreams; s++) test_cuda_hold_stream(&cu, streams[s], 30);
    /* Stream s gets jobs s, s + nstreams, ...: the streams' calls are
     * queued in turn, so they start together once the spins end. */
    for (int k = 0; k < per_stream; k++)
      for (int s = 0; s < nstreams; s++) {
        const int j = k * nstreams + s;
        wg_context *c = ctx[_i == 2 ? s % 2 : 0];
        OK(c, run_job(c, &b, j, b.dev_out + (uint64_t)j * SLOT_BYTES, streams[s]));
      }
    CU(cu.api->CtxSynchronize());
    read_slots(ctx[0], got, b.dev_out, count);
    char what[96];
    snprintf(what, sizeof what, "%d streams, %s, round %d", nstreams,
             _i == 2 ? "two contexts" : "one context", round);
    expect_same_bits(got, expected, count, what);
  }
  for (int s = 0; s < nstreams; s++) CU(cu.StreamDestroy(streams[s]));
  free(expected);
  free(got);
  buffers_free(ctx[0], &b);
  wg_context_destroy(ctx[1]);
  wg_context_destroy(ctx[0]);
}
END_TEST

/* Two graphs capture the same calls (each its own outputs) on two streams;
 * their replays run at the same time as eager calls on a third stream, on
 * fresh inputs each round. */
START_TEST(graph_capture_and_replay) {
  const int count = 24;
  wg_context *ctx = new_context();
  test_cuda cu;
  test_cuda_open(ctx, &cu);
  buffers b;
  buffers_make(ctx, &b, jobs_span() * 4, 4 * (size_t)count * SLOT_BYTES);
  unsigned char *expected = malloc((size_t)count * SLOT_BYTES);
  unsigned char *got = malloc((size_t)count * SLOT_BYTES);
  ck_assert(expected && got);
  CUstream streams[3];
  for (int s = 0; s < 3; s++) CU(cu.StreamCreate(&streams[s], CU_STREAM_NON_BLOCKING));
  /* Warm up (loads the kernels: nothing to load while capturing). */
  for (int j = 0; j < 3; j++) OK(ctx, run_job(ctx, &b, j, b.dev_out, streams[0]));
  CU(cu.api->CtxSynchronize());
  CUgraphExec exec[2];
  CUgraph graph[2];
  for (int g = 0; g < 2; g++) {
    CU(cu.StreamBeginCapture(streams[g], CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (int j = 0; j < count; j++)
      OK(ctx, run_job(ctx, &b, j,
                      b.dev_out + ((uint64_t)g * count + (uint64_t)j) * SLOT_BYTES,
                      streams[g]));
    CU(cu.StreamEndCapture(streams[g], &graph[g]));
    CU(cu.GraphInstantiate(&exec[g], graph[g], 0));
  }
  const uint64_t eager_out = b.dev_out + 2ull * count * SLOT_BYTES;
  for (int round = 0; round < 3; round++) {
    expected_bits(ctx, &b, expected, count, wg_test_seed() + 6000 + round);
    OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xff, 3 * (size_t)count * SLOT_BYTES, NULL));
    OK(ctx, wg_stream_sync(ctx, NULL));
    for (int s = 0; s < 3; s++) test_cuda_hold_stream(&cu, streams[s], 20);
    CU(cu.GraphLaunch(exec[0], streams[0]));
    CU(cu.GraphLaunch(exec[1], streams[1]));
    for (int j = 0; j < count; j++)
      OK(ctx, run_job(ctx, &b, j, eager_out + (uint64_t)j * SLOT_BYTES, streams[2]));
    CU(cu.api->CtxSynchronize());
    for (int g = 0; g < 3; g++) {
      read_slots(ctx, got, b.dev_out + (uint64_t)g * count * SLOT_BYTES, count);
      char what[64];
      snprintf(what, sizeof what, "%s, round %d", g < 2 ? "graph replay" : "eager beside",
               round);
      expect_same_bits(got, expected, count, what);
    }
  }
  for (int g = 0; g < 2; g++) {
    CU(cu.GraphExecDestroy(exec[g]));
    CU(cu.GraphDestroy(graph[g]));
  }
  for (int s = 0; s < 3; s++) CU(cu.StreamDestroy(streams[s]));
  free(expected);
  free(got);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* argmax and argmin past 2^31 elements: 64-bit indices. f16 zeros with
 * planted extremes (the reference is known without a CPU pass). */
START_TEST(arg_past_2_31_elements) {
  if (!large_enabled()) return;
  wg_context *ctx = new_context();
  const uint64_t n = (1ull << 31) + 33;
  uint64_t in = 0, out = 0;
  OK(ctx, wg_mem_alloc(ctx, &in, (n + 8) * 2));
  OK(ctx, wg_mem_alloc(ctx, &out, 64));
  OK(ctx, wg_memset_d8(ctx, in, 0x00, (n + 8) * 2, NULL));
  const uint16_t two = 0x4000, minus = 0xc000, nan = 0x7e00;
  const uint64_t far = (1ull << 31) + 20;
  wg_reduction r = WG_REDUCTION_INIT;
  r.type = WG_F16;
  /* The maximum twice past 2^31: the first wins; the minimum once. */
  OK(ctx, wg_memcpy_htod(ctx, in + far * 2, &two, 2, NULL));
  OK(ctx, wg_memcpy_htod(ctx, in + (far + 5) * 2, &two, 2, NULL));
  OK(ctx, wg_memcpy_htod(ctx, in + (n - 1) * 2, &minus, 2, NULL));
  const struct { wg_operator op; int64_t want; } cases[] = {
    {WG_OP_ARGMAX, (int64_t)far}, {WG_OP_ARGMIN, (int64_t)(n - 1)}};
  for (size_t c = 0; c < WG_COUNT_OF(cases); c++) {
    r.op = cases[c].op;
    int64_t got = -1;
    OK(ctx, wg_memset_d8(ctx, out, 0xa7, 64, NULL));
    OK(ctx, wg_reduce_ex(ctx, &r, &in, 1, n, NULL, 0, out, NULL));
    OK(ctx, wg_stream_sync(ctx, NULL));
    OK(ctx, wg_memcpy_dtoh(ctx, &got, out, 8, NULL));
    ck_assert_msg(got == cases[c].want, "f16 %s of 2^31+33: got %" PRId64 ", want %" PRId64,
                  wg_operators[cases[c].op].name, got, cases[c].want);
  }
  /* A NaN past 2^31 beats the maximum before it. */
  OK(ctx, wg_memcpy_htod(ctx, in + (far + 3) * 2, &nan, 2, NULL));
  r.op = WG_OP_ARGMAX;
  int64_t got = -1;
  OK(ctx, wg_reduce_ex(ctx, &r, &in, 1, n, NULL, 0, out, NULL));
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, &got, out, 8, NULL));
  ck_assert_msg(got == (int64_t)(far + 3), "f16 argmax with a NaN: got %" PRId64, got);
  wg_mem_free(ctx, in);
  wg_mem_free(ctx, out);
  wg_context_destroy(ctx);
}
END_TEST

/* --- errors and edges ----------------------------------------------------- */

START_TEST(errors_and_edges) {
  wg_context *ctx = new_context();
  buffers b;
  buffers_make(ctx, &b, 4096, 4096);
  /* rows == 0 writes nothing. */
  OK(ctx, wg_memset_d8(ctx, b.dev_out, poison_byte(WG_F32), GUARD_BYTES, NULL));
  OK(ctx, wg_reduce_rows(ctx, WG_F32, WG_OP_SUM, b.dev_in, 0, 10, 10, b.dev_out, NULL));
  read_outputs(ctx, &b, WG_F32, 0, "rows == 0");
  /* cols == 0 writes the identity to every row. */
  OK(ctx, wg_reduce_rows(ctx, WG_I32, WG_OP_MIN, b.dev_in, 5, 0, 0, b.dev_out, NULL));
  OK(ctx, wg_stream_sync(ctx, NULL));
  int32_t ids[5];
  OK(ctx, wg_memcpy_dtoh(ctx, ids, b.dev_out, sizeof ids, NULL));
  for (int i = 0; i < 5; i++) ck_assert_int_eq(ids[i], INT32_MAX);
  /* n == 0 writes the identity. */
  OK(ctx, wg_reduce(ctx, WG_F32, WG_OP_PROD, b.dev_in, 0, b.dev_out, NULL));
  float one = 0;
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, &one, b.dev_out, 4, NULL));
  ck_assert(one == 1.0f);
  /* Misaligned, NULL, short strides, bitwise floats, bad enums. */
  ck_assert_int_eq(wg_reduce(ctx, WG_F32, WG_OP_SUM, b.dev_in + 2, 10, b.dev_out, NULL),
                   WG_EALIGN);
  ck_assert_int_eq(wg_reduce(ctx, WG_F32, WG_OP_SUM, b.dev_in, 10, b.dev_out + 1, NULL),
                   WG_EALIGN);
  ck_assert_int_eq(wg_reduce(ctx, WG_F32, WG_OP_SUM, 0, 10, b.dev_out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_reduce(ctx, WG_F32, WG_OP_SUM, b.dev_in, 10, 0, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_reduce(ctx, WG_F32, WG_OP_XOR, b.dev_in, 10, b.dev_out, NULL),
                   WG_ESPEC);
  ck_assert_int_eq(wg_reduce(ctx, (wg_type)99, WG_OP_SUM, b.dev_in, 10, b.dev_out, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_reduce_rows(ctx, WG_F32, WG_OP_SUM, b.dev_in, 4, 10, 9, b.dev_out,
                                  NULL), WG_EINVAL);
  ck_assert_int_eq(wg_reduce_rows(ctx, WG_F64, WG_OP_SUM, b.dev_in + 4, 4, 10, 10,
                                  b.dev_out, NULL), WG_EALIGN);
  ck_assert_int_eq(wg_reduce_rows(ctx, WG_F32, WG_OP_SUM, b.dev_in, UINT64_MAX / 2, 10,
                                  UINT64_MAX / 4, b.dev_out, NULL), WG_ERANGE);
  /* Row sums written over rows other blocks still read. */
  ck_assert_int_eq(wg_reduce_rows(ctx, WG_F32, WG_OP_SUM, b.dev_in, 4, 10, 10, b.dev_in + 8,
                                  NULL), WG_EINVAL);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "overlaps"));
  ck_assert_int_eq(wg_reduce(NULL, WG_F32, WG_OP_SUM, b.dev_in, 10, b.dev_out, NULL),
                   WG_EINVAL);
  /* The plain calls write the input's type: argmax of f32 needs _ex. */
  ck_assert_int_eq(wg_reduce(ctx, WG_F32, WG_OP_ARGMAX, b.dev_in, 10, b.dev_out, NULL),
                   WG_EINVAL);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "wg_reduce_ex"));
  ck_assert_int_eq(wg_reduce_rows(ctx, WG_I32, WG_OP_LOGSUMEXP, b.dev_in, 2, 4, 4,
                                  b.dev_out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_reduce(ctx, WG_I32, WG_OP_MEAN, b.dev_in, 10, b.dev_out, NULL),
                   WG_ESPEC);
  /* _ex: version, inputs, parameters. */
  wg_reduction red = WG_REDUCTION_INIT;
  red.op = WG_OP_VAR;
  wg_scalar p[2] = {{.f64 = 1}, {.f64 = 2}};
  ck_assert_int_eq(wg_reduce_ex(ctx, &red, &b.dev_in, 1, 10, p, 2, b.dev_out, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_reduce_ex(ctx, &red, &b.dev_in, 2, 10, p, 1, b.dev_out, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_reduce_ex(ctx, &red, NULL, 1, 10, p, 1, b.dev_out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_reduce_ex(ctx, &red, &b.dev_in, 1, 10, NULL, 1, b.dev_out, NULL),
                   WG_EINVAL);
  red.version = 0;
  ck_assert_int_eq(wg_reduce_ex(ctx, &red, &b.dev_in, 1, 10, p, 1, b.dev_out, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_reduce_ex(ctx, NULL, &b.dev_in, 1, 10, p, 1, b.dev_out, NULL),
                   WG_EINVAL);
  wg_reduction_init(&red);
  red.op = WG_OP_ARGMAX;
  ck_assert_int_eq(wg_reduce_ex(ctx, &red, &b.dev_in, 1, 0, NULL, 0, b.dev_out, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_reduce_rows_ex(ctx, &red, &b.dev_in, 1, 3, 0, 0, NULL, 0, b.dev_out,
                                     NULL), WG_EINVAL);
  /* The output is checked at the output type's alignment (i64). */
  ck_assert_int_eq(wg_reduce_ex(ctx, &red, &b.dev_in, 1, 10, NULL, 0, b.dev_out + 4, NULL),
                   WG_EALIGN);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* --- the spec list, for filling a disk cache ahead ----------------------- */

static void print_spec(wg_primitive prim, wg_type t, wg_operator op, int64_t cols) {
  wg_spec s = WG_SPEC_INIT;
  s.primitive = prim;
  s.type = t;
  s.op = op;
  s.cols = prim == WG_REDUCE_ROWS ? cols : 0;
  char text[256];
  wg_spec_format(text, sizeof text, &s);
  printf("%s\n", text);
}

static void print_specs(void) {
  for (int t = 0; t < WG_TYPE_COUNT; t++)
    FOR_EACH_OP(op) {
      if (!pair_valid((wg_type)t, op)) continue;
      print_spec(WG_REDUCE_ARRAY, (wg_type)t, op, 0);
      for (size_t c = 0; c < WG_COUNT_OF(few_cols); c++)
        print_spec(WG_REDUCE_ROWS, (wg_type)t, op,
                   wg_rows_spec_cols((wg_type)t, few_cols[c]));
      /* operators_nan_ties_params_empty's rows */
      print_spec(WG_REDUCE_ROWS, (wg_type)t, op, wg_rows_spec_cols((wg_type)t, 1500));
      print_spec(WG_REDUCE_ROWS, (wg_type)t, op, wg_rows_spec_cols((wg_type)t, 0));
    }
  for (size_t p = 0; p < WG_COUNT_OF(sweep_pairs); p++)
    for (size_t c = 0; c < WG_COUNT_OF(sweep_cols); c++)
      print_spec(WG_REDUCE_ROWS, sweep_pairs[p].type, sweep_pairs[p].op,
                 wg_rows_spec_cols(sweep_pairs[p].type, sweep_cols[c]));
  for (size_t p = 0; p < WG_COUNT_OF(packed_pairs); p++)
    for (uint64_t c = 1; c <= WG_PACK_MAX_ROW_BYTES / wg_types[packed_pairs[p].type].size; c++)
      print_spec(WG_REDUCE_ROWS, packed_pairs[p].type, packed_pairs[p].op,
                 wg_rows_spec_cols(packed_pairs[p].type, c));
  print_spec(WG_REDUCE_ROWS, WG_F32, WG_OP_SUM, wg_rows_spec_cols(WG_F32, 10));
  print_spec(WG_REDUCE_ROWS, WG_I32, WG_OP_XOR, wg_rows_spec_cols(WG_I32, 1u << 20));
  print_spec(WG_REDUCE_ROWS, WG_F64, WG_OP_MAX, wg_rows_spec_cols(WG_F64, 1u << 20));
  print_spec(WG_REDUCE_ROWS, WG_I32, WG_OP_MIN, wg_rows_spec_cols(WG_I32, 0));
}

/* --- expressions (spec_expr.c): map=, combine=/identity=, final=, params -- */

/* Reduces n i32 elements (array) or rows x cols (rows > 0) from spec text;
 * the oracle is exact wrapping u32 arithmetic of the same expression. */
START_TEST(expressions_map_combine_final_params) {
  wg_context *ctx = new_context();
  static const uint64_t sizes[] = {0, 1, 3, 4, 5, 127, 128, 129, 4095, 4096, 4097, 300001};
  const uint64_t most = 300001;
  buffers b;
  buffers_make(ctx, &b, most * 4, 64 * 8);
  int32_t *x = b.host_in;
  uint64_t seed = wg_test_seed() ^ 0x5eed;
  for (uint64_t i = 0; i < most; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (int32_t)(seed >> 33) - (1 << 30);
  }
  OK(ctx, wg_memcpy_htod(ctx, b.dev_in, x, most * 4, NULL));
  wg_spec sq, mx, fin;
  OK(ctx, wg_spec_parse(ctx, &sq, "reduce-array i32 sum map=\"x * x + i32(i % 3)\""));
  OK(ctx, wg_spec_parse(ctx, &mx, "reduce-array i32 combine=\"max(a, b)\" identity=\"-7\""));
  OK(ctx, wg_spec_parse(ctx, &fin,
                        "reduce-array i32 sum final=\"i64(r) * p0 + n\" params=i64"));
  for (size_t k = 0; k < WG_COUNT_OF(sizes); k++) {
    const uint64_t n = sizes[k];
    uint32_t want_sq = 0;
    int32_t want_mx = -7;
    for (uint64_t i = 0; i < n; i++) {
      want_sq += (uint32_t)x[i] * (uint32_t)x[i] + (uint32_t)(i % 3);
      if (x[i] > want_mx) want_mx = x[i];
    }
    int32_t got32;
    OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xa7, 8 + GUARD_BYTES, NULL));
    OK(ctx, wg_reduce_spec(ctx, &sq, &b.dev_in, 1, n, NULL, 0, b.dev_out, NULL));
    read_outputs(ctx, &b, WG_I32, 1, "map");
    memcpy(&got32, b.host_out, 4);
    ck_assert_msg((uint32_t)got32 == want_sq, "map n=%" PRIu64 ": %d, want %d", n, got32,
                  (int32_t)want_sq);
    OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xa7, 8 + GUARD_BYTES, NULL));
    OK(ctx, wg_reduce_spec(ctx, &mx, &b.dev_in, 1, n, NULL, 0, b.dev_out, NULL));
    read_outputs(ctx, &b, WG_I32, 1, "combine");
    memcpy(&got32, b.host_out, 4);
    ck_assert_msg(got32 == want_mx, "combine n=%" PRIu64 ": %d, want %d", n, got32, want_mx);
    /* rows: the same data as `n` rows of 1..5 columns */
    for (uint64_t cols = 1; cols <= 5 && n && n / cols <= 64; cols++) {
      wg_spec rs = sq;
      rs.primitive = WG_REDUCE_ROWS;
      const uint64_t rows = n / cols;
      OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xa7, 64 * 4 + GUARD_BYTES, NULL));
      OK(ctx, wg_reduce_rows_spec(ctx, &rs, &b.dev_in, 1, rows, cols, cols, NULL, 0,
                                  b.dev_out, NULL));
      read_outputs(ctx, &b, WG_I32, rows, "rows map");
      for (uint64_t r = 0; r < rows; r++) {
        uint32_t w = 0;
        for (uint64_t j = 0; j < cols; j++)
          w += (uint32_t)x[r * cols + j] * (uint32_t)x[r * cols + j] + (uint32_t)(j % 3);
        memcpy(&got32, (char *)b.host_out + r * 4, 4);
        ck_assert_msg((uint32_t)got32 == w, "rows map row %" PRIu64 " cols %" PRIu64, r,
                      cols);
      }
    }
  }
  /* Two inputs, n and a parameter in the map: the element kernel, arrays
   * and rows. y is x some elements on: 1 (not 16-byte aligned where x is:
   * the scalar loop), 4 (aligned: 16-byte chunks of both), and both one
   * element off x's 16-byte boundary (chunks after a scalar head). */
  wg_spec two;
  OK(ctx, wg_spec_parse(ctx, &two, "reduce-array i32 sum map=\"x * y + p0 * i32(i % 5) + "
                        "i32(n)\" inputs=i32,i32 params=i32"));
  static const uint64_t offsets[][2] = {{0, 1}, {0, 4}, {1, 5}}; /* of x, y */
  for (size_t k = 0; k < WG_COUNT_OF(sizes) * WG_COUNT_OF(offsets); k++) {
    const uint64_t xo = offsets[k % 3][0], yo = offsets[k % 3][1];
    const uint64_t n = sizes[k / 3] < most - 5 ? sizes[k / 3] : most - 5;
    const uint64_t ins[2] = {b.dev_in + 4 * xo, b.dev_in + 4 * yo};
    wg_scalar p0 = {0};
    p0.i32 = (int32_t)(k * 7919 + 3);
    uint32_t want = 0;
    for (uint64_t i = 0; i < n; i++)
      want += (uint32_t)x[xo + i] * (uint32_t)x[yo + i] +
              (uint32_t)p0.i32 * (uint32_t)(i % 5) + (uint32_t)n;
    int32_t got32;
    OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xa7, 8 + GUARD_BYTES, NULL));
    OK(ctx, wg_reduce_spec(ctx, &two, ins, 2, n, &p0, 1, b.dev_out, NULL));
    read_outputs(ctx, &b, WG_I32, 1, "two inputs");
    memcpy(&got32, b.host_out, 4);
    ck_assert_msg((uint32_t)got32 == want, "two inputs n=%" PRIu64 " at +%" PRIu64 ", +%"
                  PRIu64 ": %d, want %d", n, xo, yo, got32, (int32_t)want);
    wg_spec rs = two;
    rs.primitive = WG_REDUCE_ROWS;
    for (uint64_t cols = 1; cols <= 70 && n; cols += 23) {
      const uint64_t stride = cols + 2, rows = n > cols ? (n - cols) / stride + 1 : 0;
      if (rows == 0 || rows > 64) continue;
      OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xa7, 64 * 4 + GUARD_BYTES, NULL));
      OK(ctx, wg_reduce_rows_spec(ctx, &rs, ins, 2, rows, cols, stride, &p0, 1, b.dev_out,
                                  NULL));
      read_outputs(ctx, &b, WG_I32, rows, "rows two inputs");
      for (uint64_t r = 0; r < rows; r++) {
        uint32_t w = 0;
        for (uint64_t j = 0; j < cols; j++) {
          const uint64_t at = r * stride + j;
          w += (uint32_t)x[xo + at] * (uint32_t)x[yo + at] +
               (uint32_t)p0.i32 * (uint32_t)(j % 5) + (uint32_t)cols;
        }
        memcpy(&got32, (char *)b.host_out + r * 4, 4);
        ck_assert_msg((uint32_t)got32 == w, "rows two inputs row %" PRIu64 " cols %" PRIu64,
                      r, cols);
      }
    }
  }
  /* Wrong counts are errors, not reads past an array. */
  const uint64_t one = b.dev_in;
  ck_assert_int_eq(wg_reduce_spec(ctx, &two, &one, 1, 5, NULL, 0, b.dev_out, NULL), WG_EINVAL);
  /* 100 parameter values: one kernel, loaded once (the rest memory hits). */
  wg_cache_stats before, after;
  OK(ctx, wg_cache_stats_get(ctx, &before));
  const uint64_t n = 4097;
  uint32_t sum = 0;
  for (uint64_t i = 0; i < n; i++) sum += (uint32_t)x[i];
  for (int v = 0; v < 100; v++) {
    wg_scalar p = {0};
    p.i64 = v * 1000003ll - 17;
    OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xa7, 8 + GUARD_BYTES, NULL));
    OK(ctx, wg_reduce_spec(ctx, &fin, &b.dev_in, 1, n, &p, 1, b.dev_out, NULL));
    read_outputs(ctx, &b, WG_I64, 1, "final");
    int64_t got;
    memcpy(&got, b.host_out, 8);
    ck_assert_int_eq(got, (int64_t)(int32_t)sum * p.i64 + (int64_t)n);
  }
  OK(ctx, wg_cache_stats_get(ctx, &after));
  ck_assert_uint_eq(after.compiles + after.disk_hits - before.compiles - before.disk_hits, 1);
  ck_assert_uint_eq(after.memory_hits - before.memory_hits, 99);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* The map reductions of bench/expr_peers.py in f32 against a float64 sum,
 * within the oracle's bound for a sum of n terms (wg_oracle_growth) of the
 * terms' magnitudes: sum of x*x, dot(x, y), sum of (x-y)^2 (the element
 * kernel, y aligned with x and not) and max of abs(x) (exact). The
 * built-in operators of the benchmark (mean, var, argmax, logsumexp, norm2,
 * norminf) are array_every_type_and_operator's. */
START_TEST(expressions_of_the_benchmark) {
  wg_context *ctx = new_context();
  static const uint64_t sizes[] = {1, 3, 4, 5, 15, 16, 17, 1023, 1025, 65537, 1000003};
  const uint64_t most = 1000003 + 8;
  buffers b;
  buffers_make(ctx, &b, most * 4, 64);
  float *x = b.host_in;
  uint64_t seed = wg_test_seed() ^ 0xbe4c;
  for (uint64_t i = 0; i < most; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 4.0 - 2.0);
  }
  OK(ctx, wg_memcpy_htod(ctx, b.dev_in, x, most * 4, NULL));
  static const char *const texts[] = {
    "reduce-array f32 sum map=\"x*x\"",
    "reduce-array f32 sum map=\"x*y\" inputs=f32,f32",
    "reduce-array f32 sum map=\"(x-y)*(x-y)\" inputs=f32,f32",
    "reduce-array f32 max map=\"abs(x)\"",
  };
  static const uint64_t offsets[][2] = {{0, 4}, {1, 5}, {0, 3}, {2, 8}}; /* of x, y */
  for (size_t t = 0; t < WG_COUNT_OF(texts); t++) {
    wg_spec spec;
    OK(ctx, wg_spec_parse(ctx, &spec, texts[t]));
    for (size_t k = 0; k < WG_COUNT_OF(sizes) * WG_COUNT_OF(offsets); k++) {
      const uint64_t n = sizes[k / 4], xo = offsets[k % 4][0], yo = offsets[k % 4][1];
      const uint64_t ins[2] = {b.dev_in + 4 * xo, b.dev_in + 4 * yo};
      double want = 0, scale = 0;
      for (uint64_t i = 0; i < n; i++) {
        /* each term as the map forms it, in f32 */
        const float a = x[xo + i], c = x[yo + i];
        const double term = t == 0 ? (float)(a * a) : t == 1 ? (float)(a * c)
                          : t == 2 ? (float)((a - c) * (a - c)) : fabs((double)a);
        if (t == 3) want = term > want ? term : want;
        else want += term;
        scale += fabs(term);
      }
      float got;
      OK(ctx, wg_memset_d8(ctx, b.dev_out, poison_byte(WG_F32), 8 + GUARD_BYTES, NULL));
      OK(ctx, wg_reduce_spec(ctx, &spec, ins, spec.ninputs > 1 ? 2 : 1, n, NULL, 0,
                             b.dev_out, NULL));
      read_outputs(ctx, &b, WG_F32, 1, texts[t]);
      memcpy(&got, b.host_out, 4);
      const double bound = t == 3 ? 0 : wg_oracle_growth(WG_F32, n) * scale +
                                            wg_oracle_store_error(WG_F32, want);
      ck_assert_msg(fabs((double)got - want) <= bound, "%s n=%" PRIu64 " at +%" PRIu64
                    ", +%" PRIu64 ": %.9g, want %.9g (bound %.3g)", texts[t], n, xo, yo,
                    (double)got, want, bound);
    }
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

static Suite *reduce_suite(void) {
  Suite *s = suite_create("reduce");
  TCase *tc = tcase_create("array");
  tcase_set_timeout(tc, 1800);
  tcase_add_loop_test(tc, array_every_type_and_operator, 0, WG_TYPE_COUNT);
  tcase_add_test(tc, array_same_bits_every_run);
  tcase_add_test(tc, array_past_2_31_elements);
  suite_add_tcase(s, tc);
  tc = tcase_create("rows");
  tcase_set_timeout(tc, 1800);
  tcase_add_loop_test(tc, rows_sweep_of_lengths, 0, (int)WG_COUNT_OF(sweep_pairs));
  tcase_add_loop_test(tc, rows_every_type_and_operator, 0, WG_TYPE_COUNT);
  tcase_add_test(tc, rows_few_and_long);
  tcase_add_loop_test(tc, rows_packed, 0, (int)WG_COUNT_OF(packed_pairs));
  suite_add_tcase(s, tc);
  tc = tcase_create("operators");
  tcase_set_timeout(tc, 1800);
  tcase_add_loop_test(tc, operators_nan_ties_params_empty, 0, WG_TYPE_COUNT);
  tcase_add_test(tc, arg_past_2_31_elements);
  suite_add_tcase(s, tc);
  tc = tcase_create("shapes");
  tcase_set_timeout(tc, 1800);
  tcase_add_test(tc, one_of_each_shape);
  suite_add_tcase(s, tc);
  tc = tcase_create("streams");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, streams_overlap, 0, 3);
  tcase_add_test(tc, graph_capture_and_replay);
  suite_add_tcase(s, tc);
  tc = tcase_create("expressions");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, expressions_map_combine_final_params);
  tcase_add_test(tc, expressions_of_the_benchmark);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_test(tc, errors_and_edges);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--specs") == 0) {
    print_specs();
    return 0;
  }
  if (!wg_test_gpu_begin("reduce", NULL)) return 77;
  return wg_test_run_suite(reduce_suite());
}
