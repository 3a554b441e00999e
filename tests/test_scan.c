/*
 * test_scan.c - whole-array (wg_scan_array) and row (wg_scan_rows) scans
 * run on the device and checked, every output, against the CPU oracle
 * (tests/oracle_scan.c): every type and scan operator, inclusive and
 * exclusive, deterministic and not; sizes 0, 1, around a vector, a tile
 * (1024 vectors) and the resident grid, millions, and 2^31 + 777; row
 * lengths of every shape with strides that leave rows unaligned and output
 * strides with gaps (which must keep their poison), and rows past 2^31
 * elements in and out; in place; user
 * combine= and map= specs (an output type other than the input's); the
 * same bits on every run; scans overlapping on streams and in captured
 * graphs; and the errors a caller can make.
 *
 * Without a driver or a device it prints why and exits 77 (Meson's skip).
 * Outputs are poisoned before every launch (a NaN for floats) with a
 * poisoned guard after them. Inputs are fresh random data each run; the
 * base seed is printed and WARPGEN_TEST_SEED replays it.
 *
 *   test_scan            the GPU cases
 *   test_scan --nvrtc A  compiles specs of every shape for sm_A (no GPU):
 *                        a sample, or every one with WARPGEN_SCAN_ALL=1
 *   test_scan --specs    prints every spec the GPU cases launch, one a line
 *   test_scan --precompile A  compiles those for sm_A into the disk cache on
 *                        every core, in this process (no GPU needed)
 * WARPGEN_GPU_LARGE=0 skips the 2^31-element cases; WARPGEN_SCAN_QUICK=1
 * keeps every case but with small sizes (for compute-sanitizer).
 */
#include "driver.h"
#include "internal.h"
#include "oracle.h"
#include "support.h"
#include "cuda_support.h"

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GUARD_BYTES 256
#define TILE_VECTORS 2048u /* fam_scan.c, tile_shape_for: whole arrays, 256 x 8 */

static const wg_operator scan_ops[] = {WG_OP_SUM, WG_OP_PROD, WG_OP_MIN, WG_OP_MAX,
                                       WG_OP_AND, WG_OP_OR,   WG_OP_XOR};

static bool env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}
static bool quick(void) { return env_is("WARPGEN_SCAN_QUICK", "1"); }
static bool large_enabled(void) { return wg_test_large_enabled() && !quick(); }

static uint64_t vec_of(wg_type t) { return 16u / wg_types[t].size; }
static uint64_t tile_of(wg_type t) { return TILE_VECTORS * vec_of(t); }

#define OK(ctx, call)                                                       \
  do {                                                                      \
    int rc_ = (call);                                                       \
    ck_assert_msg(rc_ == WG_OK, "%s: %s: %s", #call, wg_strerror(rc_),     \
                  wg_errmsg(ctx));                                          \
  } while (0)

static wg_context *new_context(void) {
  wg_context *ctx = NULL;
  ck_assert_int_eq(wg_context_create(&ctx, NULL), WG_OK);
  return ctx;
}

/* Float products of the oracle's inputs leave f32's range past a few
 * thousand elements, where the overflow depends on the order. */
static bool prod_fits(wg_type t, wg_operator op, uint64_t n) {
  return op != WG_OP_PROD || !wg_types[t].is_float || n <= 2000;
}

static unsigned char poison_byte(wg_type t) { return wg_types[t].is_float ? 0xff : 0xa7; }

/* --- one call, checked ---------------------------------------------------- */

/* What a case varies. rows 0: an array call of `cols` elements. */
typedef struct scan_case {
  wg_type type;
  wg_operator op;
  bool exclusive;
  int deterministic;
  uint64_t rows, cols, in_stride, out_stride;
  uint64_t offset; /* the input's first element within the buffer */
  bool in_place;
} scan_case;

/* Device and host buffers large enough for the cases of one test. */
typedef struct buffers {
  unsigned char *host_in, *host_out, *host_copy;
  uint64_t dev_in, dev_out;
  size_t bytes; /* of each */
} buffers;

static void buffers_make(wg_context *ctx, buffers *b, size_t bytes) {
  memset(b, 0, sizeof *b);
  b->bytes = bytes + GUARD_BYTES;
  b->host_in = malloc(b->bytes);
  b->host_out = malloc(b->bytes);
  b->host_copy = malloc(b->bytes);
  ck_assert(b->host_in && b->host_out && b->host_copy);
  OK(ctx, wg_mem_alloc(ctx, &b->dev_in, b->bytes));
  OK(ctx, wg_mem_alloc(ctx, &b->dev_out, b->bytes));
}

static void buffers_free(wg_context *ctx, buffers *b) {
  wg_mem_free(ctx, b->dev_in);
  wg_mem_free(ctx, b->dev_out);
  free(b->host_in);
  free(b->host_out);
  free(b->host_copy);
}

static wg_primitive primitive_of(bool rows, bool exclusive) {
  return rows ? (exclusive ? WG_EXSCAN_ROWS : WG_SCAN_ROWS)
              : (exclusive ? WG_EXSCAN_ARRAY : WG_SCAN_ARRAY);
}

/* The call: deterministic ones through the plain calls, the others
 * through the spec calls. */
static int call_scan(wg_context *ctx, const scan_case *c, uint64_t in, uint64_t out,
                     void *stream) {
  if (c->deterministic) {
    if (!c->rows) return wg_scan_array(ctx, c->type, c->op, c->exclusive, in, c->cols, out, stream);
    return wg_scan_rows(ctx, c->type, c->op, c->exclusive, in, c->rows, c->cols,
                        c->in_stride, out, c->out_stride, stream);
  }
  wg_spec s = WG_SPEC_INIT;
  s.primitive = primitive_of(c->rows != 0, c->exclusive);
  s.type = c->type;
  s.op = c->op;
  s.deterministic = c->deterministic;
  if (!c->rows) return wg_scan_array_spec(ctx, &s, in, c->cols, out, stream);
  return wg_scan_rows_spec(ctx, &s, in, c->rows, c->cols, c->in_stride, out, c->out_stride,
                           stream);
}

static void describe(char *buf, size_t size, const scan_case *c) {
  snprintf(buf, size, "%s%s %s %s deterministic=%d rows=%" PRIu64 " cols=%" PRIu64
           " strides %" PRIu64 "/%" PRIu64 " offset %" PRIu64 "%s",
           c->exclusive ? "ex" : "", c->rows ? "scan-rows" : "scan-array",
           wg_types[c->type].name, wg_operators[c->op].name, c->deterministic, c->rows,
           c->cols, c->in_stride, c->out_stride, c->offset, c->in_place ? " in place" : "");
}

/* Elements of a matrix of `rows` rows of `cols`, `stride` apart. */
static uint64_t span(uint64_t rows, uint64_t cols, uint64_t stride) {
  return rows && cols ? (rows - 1) * stride + cols : 0;
}

/* Runs case c on fresh inputs (already in b->host_in when `filled`) and
 * checks every output, the gaps between output rows and the guard. */
static void check_case(wg_context *ctx, buffers *b, scan_case c, uint64_t seed, bool filled) {
  const size_t size = wg_types[c.type].size;
  const uint64_t rows = c.rows ? c.rows : 1;
  if (!c.rows) c.in_stride = c.out_stride = c.cols;
  if (c.in_place) {
    c.out_stride = c.in_stride;
    c.offset = 0;
  }
  const uint64_t in_elems = c.offset + span(rows, c.cols, c.in_stride);
  const uint64_t out_elems = span(rows, c.cols, c.out_stride);
  ck_assert(in_elems * size + GUARD_BYTES <= b->bytes && out_elems * size + GUARD_BYTES <= b->bytes);
  char what[256];
  describe(what, sizeof what, &c);
  if (!filled) wg_oracle_fill(c.type, c.op, b->host_in, in_elems, seed);
  OK(ctx, wg_memcpy_htod(ctx, b->dev_in, b->host_in, in_elems * size, NULL));
  const uint64_t out = c.in_place ? b->dev_in : b->dev_out;
  if (c.in_place) {
    memcpy(b->host_copy, b->host_in, in_elems * size);
    memset(b->host_copy + in_elems * size, poison_byte(c.type), GUARD_BYTES);
    OK(ctx, wg_memset_d8(ctx, b->dev_in + in_elems * size, poison_byte(c.type), GUARD_BYTES,
                         NULL));
  } else {
    OK(ctx, wg_memset_d8(ctx, out, poison_byte(c.type), out_elems * size + GUARD_BYTES, NULL));
  }
  const int rc = call_scan(ctx, &c, b->dev_in + c.offset * size, out, NULL);
  ck_assert_msg(rc == WG_OK, "%s: %s: %s", what, wg_strerror(rc), wg_errmsg(ctx));
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, b->host_out, out, out_elems * size + GUARD_BYTES, NULL));
  for (size_t i = 0; i < GUARD_BYTES; i++)
    ck_assert_msg(b->host_out[out_elems * size + i] == poison_byte(c.type),
                  "%s: wrote past the end (guard byte %zu)", what, i);
  /* The gaps between output rows are untouched (in place: the input). */
  for (uint64_t r = 0; r + 1 < rows; r++)
    for (uint64_t k = c.cols; k < c.out_stride; k++) {
      const unsigned char *g = b->host_out + ((r * c.out_stride) + k) * size;
      const unsigned char *want = c.in_place ? b->host_copy + ((r * c.out_stride) + k) * size : NULL;
      for (size_t j = 0; j < size; j++)
        ck_assert_msg(want ? g[j] == want[j] : g[j] == poison_byte(c.type),
                      "%s: wrote into the gap after row %" PRIu64 " (element %" PRIu64 ")",
                      what, r, k);
    }
  wg_oracle_report report;
  wg_oracle_report_init(&report);
  wg_oracle_scan_check(&report, c.type, c.op, c.exclusive,
                       (c.in_place ? b->host_copy : b->host_in) + c.offset * size, rows,
                       c.cols, c.in_stride, b->host_out, c.out_stride);
  ck_assert_msg(report.mismatches == 0, "%s: %" PRIu64 " of %" PRIu64 " outputs wrong, first "
                "%s (seed 0x%016" PRIx64 ")", what, report.mismatches, report.checked,
                report.first, seed);
}

/* --- whole arrays --------------------------------------------------------- */

/* Sizes around every boundary of the array launch: vectors, tiles (one
 * block alone, two tiles, the look-back's windows of 128 tiles); the
 * millions of the big case pass 500 tiles, where the look-back sleeps. */
static size_t array_sizes(wg_type t, uint64_t *n) {
  const uint64_t v = vec_of(t), T = tile_of(t);
  const uint64_t sizes[] = {0,         1,         2,           3,          v - 1,
                            v,         v + 1,     31,          33,         T - 1,
                            T,         T + 1,     2 * T - 1,   2 * T + 1,  3 * T + v + 1,
                            33 * T + 5, 129 * T + 5, 130 * T - 3};
  size_t k = 0;
  for (size_t i = 0; i < WG_COUNT_OF(sizes); i++)
    if (!quick() || sizes[i] <= 3 * T + v + 1) n[k++] = sizes[i];
  return k;
}

START_TEST(array_every_type_and_operator) {
  const wg_type t = (wg_type)_i;
  wg_context *ctx = new_context();
  buffers b;
  const uint64_t big = quick() ? 3 * tile_of(t) : (1ull << 22) + 1000;
  buffers_make(ctx, &b, (big + 2 * tile_of(t) * 130) * wg_types[t].size);
  uint64_t n[32];
  const size_t count = array_sizes(t, n);
  uint64_t seed = wg_test_seed() + 100u * (unsigned)t;
  int op_index = 0;
  for (size_t o = 0; o < WG_COUNT_OF(scan_ops); o++) {
    const wg_operator op = scan_ops[o];
    if (!wg_operator_accepts(op, t)) continue;
    for (int ex = 0; ex < 2; ex++)
      for (int det = 1; det >= 0; det--)
        for (size_t k = 0; k < count; k++)
          for (uint64_t offset = 0; offset < 2; offset++) {
            if (!prod_fits(t, op, n[k])) continue;
            /* The many-tile sizes: the first two operators, one offset. */
            if (n[k] > 3 * tile_of(t) + vec_of(t) + 1 && (op_index >= 2 || offset != (uint64_t)ex))
              continue;
            const scan_case c = {t, op, ex, det, 0, n[k], 0, 0, offset, false};
            check_case(ctx, &b, c, seed++, false);
          }
    /* Millions, for the first two operators of each type (and never a
     * float product). */
    if (op_index++ < 2 && prod_fits(t, op, big))
      for (int ex = 0; ex < 2; ex++)
        for (int det = 1; det >= 0; det--) {
          const scan_case c = {t, op, ex, det, 0, big, 0, 0, (uint64_t)ex, false};
          check_case(ctx, &b, c, seed++, false);
        }
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* The same input gives the same bits, five times over, for floating sums
 * (deterministic=1), and an integer sum with deterministic=0 too. */
START_TEST(array_same_bits_every_run) {
  wg_context *ctx = new_context();
  const uint64_t n = quick() ? 100000 : (1ull << 24) + 12345;
  buffers b;
  buffers_make(ctx, &b, n * 8);
  unsigned char *first = malloc(n * 8);
  ck_assert(first);
  const struct {
    wg_type type;
    int deterministic;
  } runs[] = {{WG_F32, 1}, {WG_F64, 1}, {WG_F16, 1}, {WG_BF16, 1}, {WG_I32, 0}, {WG_U64, 0}};
  for (size_t r = 0; r < WG_COUNT_OF(runs); r++) {
    const wg_type t = runs[r].type;
    const size_t bytes = n * wg_types[t].size;
    const scan_case c = {t, WG_OP_SUM, r % 2 == 1, runs[r].deterministic, 0, n, 0, 0, 0, false};
    check_case(ctx, &b, c, wg_test_seed() + 7000 + r, false);
    memcpy(first, b.host_out, bytes);
    for (int again = 0; again < 4; again++) {
      OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xff, bytes, NULL));
      OK(ctx, call_scan(ctx, &c, b.dev_in, b.dev_out, NULL));
      OK(ctx, wg_stream_sync(ctx, NULL));
      OK(ctx, wg_memcpy_dtoh(ctx, b.host_out, b.dev_out, bytes, NULL));
      uint64_t differ = 0, at = 0;
      for (uint64_t i = 0; i < n; i++)
        if (memcmp(first + i * wg_types[t].size, b.host_out + i * wg_types[t].size,
                   wg_types[t].size) != 0 && differ++ == 0)
          at = i;
      ck_assert_msg(differ == 0, "scan-array %s sum deterministic=%d n=%" PRIu64 ": run %d "
                    "differs from the first in %" PRIu64 " outputs (first at %" PRIu64 ")",
                    wg_types[t].name, runs[r].deterministic, n, again + 2, differ, at);
    }
  }
  free(first);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* 2^31 + 777 i32 elements: 64-bit counts and indices everywhere. The
 * check is a plain running sum (wrapping), every output. */
START_TEST(array_past_2_31_elements) {
  if (!large_enabled()) return;
  wg_context *ctx = new_context();
  const uint64_t n = (1ull << 31) + 777, bytes = n * 4;
  if (!wg_test_device_holds(ctx, 2 * bytes, "scan: array_past_2_31_elements")) {
    wg_context_destroy(ctx);
    return;
  }
  int32_t *host = malloc(bytes);
  ck_assert(host);
  wg_spec fill = WG_SPEC_INIT;
  fill.type = WG_I32;
  fill.op = WG_OP_SUM;
  wg_test_fill(&fill, host, n, wg_test_seed() + 31);
  uint64_t in = 0, out = 0;
  OK(ctx, wg_mem_alloc(ctx, &in, bytes));
  OK(ctx, wg_mem_alloc(ctx, &out, bytes + GUARD_BYTES));
  OK(ctx, wg_memcpy_htod(ctx, in, host, bytes, NULL));
  for (int ex = 0; ex < 2; ex++) {
    OK(ctx, wg_memset_d8(ctx, out, 0xa7, bytes + GUARD_BYTES, NULL));
    OK(ctx, wg_scan_array(ctx, WG_I32, WG_OP_SUM, ex, in, n, out, NULL));
    OK(ctx, wg_stream_sync(ctx, NULL));
    int32_t *got = malloc(bytes + GUARD_BYTES);
    ck_assert(got);
    OK(ctx, wg_memcpy_dtoh(ctx, got, out, bytes + GUARD_BYTES, NULL));
    uint32_t run = 0;
    uint64_t wrong = 0, first = 0;
    for (uint64_t i = 0; i < n; i++) {
      if (!ex) run += (uint32_t)host[i];
      if ((uint32_t)got[i] != run && wrong++ == 0) first = i;
      if (ex) run += (uint32_t)host[i];
    }
    const unsigned char *guard = (const unsigned char *)(got + n);
    for (int g = 0; g < GUARD_BYTES; g++) ck_assert_int_eq(guard[g], 0xa7);
    ck_assert_msg(wrong == 0, "%sscan-array i32 sum n=2^31+777: %" PRIu64 " wrong, first "
                  "at %" PRIu64 " (seed 0x%016" PRIx64 ")", ex ? "ex" : "", wrong, first,
                  wg_test_seed());
    free(got);
  }
  wg_mem_free(ctx, in);
  wg_mem_free(ctx, out);
  free(host);
  wg_context_destroy(ctx);
}
END_TEST

/* Rows past 2^31 elements, in and out: 2^21 + 60000 f16 rows of 1000, 1024
 * apart (a group of lanes a row, the kernel's 64-bit row offsets on both
 * sides). Values -1, 0 and 1 (wg_test_f16_sign), so every prefix is a
 * small integer, exact in f16; the check is a running sum, every output. */
START_TEST(rows_past_2_31_elements) {
  if (!large_enabled()) return;
  wg_context *ctx = new_context();
  const uint64_t rows = (1ull << 21) + 60000, cols = 1000, in_stride = 1024;
  const uint64_t in_n = rows * in_stride, out_n = rows * cols;
  if (!wg_test_device_holds(ctx, 2 * (in_n + out_n), "scan: rows_past_2_31_elements")) {
    wg_context_destroy(ctx);
    return;
  }
  uint16_t *host = malloc(in_n * 2), *got = malloc(out_n * 2 + GUARD_BYTES);
  ck_assert(host && got);
  const uint64_t seed = wg_test_seed();
  for (uint64_t i = 0; i < in_n; i++) host[i] = wg_test_f16_sign(i, seed);
  uint64_t in = 0, out = 0;
  OK(ctx, wg_mem_alloc(ctx, &in, in_n * 2));
  OK(ctx, wg_mem_alloc(ctx, &out, out_n * 2 + GUARD_BYTES));
  OK(ctx, wg_memcpy_htod(ctx, in, host, in_n * 2, NULL));
  OK(ctx, wg_memset_d8(ctx, out, 0xff, out_n * 2 + GUARD_BYTES, NULL));
  OK(ctx, wg_scan_rows(ctx, WG_F16, WG_OP_SUM, 0, in, rows, cols, in_stride, out, cols, NULL));
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, got, out, out_n * 2 + GUARD_BYTES, NULL));
  /* The f16 bits of every prefix a row of 1000 can reach. */
  static uint16_t f16_of[2 * 1000 + 1];
  for (int v = -1000; v <= 1000; v++) wg_oracle_set(WG_F16, f16_of, (uint64_t)(v + 1000), v);
  uint64_t wrong = 0, first = 0;
  for (uint64_t r = 0; r < rows; r++) {
    int run = 0;
    for (uint64_t c = 0; c < cols; c++) {
      run += wg_test_f16_sign_value(host[r * in_stride + c]);
      if (got[r * cols + c] != f16_of[run + 1000] && wrong++ == 0) first = r * cols + c;
    }
  }
  const unsigned char *guard = (const unsigned char *)(got + out_n);
  for (int g = 0; g < GUARD_BYTES; g++) ck_assert_int_eq(guard[g], 0xff);
  ck_assert_msg(wrong == 0, "scan-rows f16 sum, %" PRIu64 " rows of %" PRIu64 " (stride %"
                PRIu64 "): %" PRIu64 " wrong, first at %" PRIu64 " (seed 0x%016" PRIx64 ")",
                rows, cols, in_stride, wrong, first, wg_test_seed());
  wg_mem_free(ctx, in);
  wg_mem_free(ctx, out);
  free(host);
  free(got);
  wg_context_destroy(ctx);
}
END_TEST

/* --- rows ----------------------------------------------------------------- */

static const uint64_t sweep_cols[] = {
    1,   2,   3,   4,   5,   7,    8,    9,    15,   16,   17,   31,   32,    33,
    63,  64,  65,  127, 128, 129,  255,  256,  257,  511,  513,  1000, 1023,  1024,
    1025, 2047, 2049, 4097, 5000, 16385, 65537};

typedef struct pair {
  wg_type type;
  wg_operator op;
} pair;
static const pair sweep_pairs[] = {
    {WG_F32, WG_OP_SUM}, {WG_F16, WG_OP_SUM}, {WG_F64, WG_OP_MAX}, {WG_I32, WG_OP_XOR},
    {WG_U64, WG_OP_SUM}, {WG_BF16, WG_OP_MIN}, {WG_I64, WG_OP_PROD}, {WG_U32, WG_OP_AND},
};

START_TEST(rows_sweep_of_lengths) {
  const pair p = sweep_pairs[_i];
  wg_context *ctx = new_context();
  buffers b;
  buffers_make(ctx, &b, (size_t)4 << 20 << 3);
  uint64_t seed = wg_test_seed() + 20000 + 1000u * (unsigned)_i;
  const uint64_t v = vec_of(p.type);
  for (size_t k = 0; k < WG_COUNT_OF(sweep_cols); k++) {
    const uint64_t cols = sweep_cols[k];
    if (quick() && cols > 2049) continue;
    const uint64_t row_counts[] = {1, 7, cols <= 1025 ? 300 : 20};
    for (size_t r = 0; r < WG_COUNT_OF(row_counts); r++) {
      const uint64_t rows = row_counts[r];
      /* Strides: touching rows, rows off 16-byte alignment, rows a vector
       * apart; outputs touching or with a gap of 3. */
      const uint64_t in_stride = cols + (r == 0 ? 0 : r == 1 ? 1 : v);
      const uint64_t out_stride = cols + (r == 1 ? 3 : 0);
      for (int ex = 0; ex < 2; ex++) {
        const scan_case c = {p.type, p.op, ex, (int)((k + r) % 2), rows, cols, in_stride,
                             out_stride, (uint64_t)(k % 3 == 0), false};
        if (!prod_fits(p.type, p.op, cols)) continue;
        check_case(ctx, &b, c, seed++, false);
      }
    }
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* Every type and operator, a short, a mid and a long row length. */
START_TEST(rows_every_type_and_operator) {
  const wg_type t = (wg_type)_i;
  wg_context *ctx = new_context();
  buffers b;
  buffers_make(ctx, &b, (size_t)1 << 20 << 3);
  uint64_t seed = wg_test_seed() + 30000 + 1000u * (unsigned)t;
  const uint64_t cols[] = {6, 333, 1500, 9000};
  for (size_t o = 0; o < WG_COUNT_OF(scan_ops); o++) {
    if (!wg_operator_accepts(scan_ops[o], t)) continue;
    for (size_t k = 0; k < WG_COUNT_OF(cols); k++)
      for (int ex = 0; ex < 2; ex++) {
        if (!prod_fits(t, scan_ops[o], cols[k])) continue;
        const scan_case c = {t, scan_ops[o], ex, ex, 9, cols[k], cols[k] + 1, cols[k], 1, false};
        check_case(ctx, &b, c, seed++, false);
      }
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* Each launch shape of long rows: few long rows (tiles with look-back
 * that stops at each row's start), many long rows (a warp per row), one
 * row; and in place. */
START_TEST(rows_long_shapes_and_in_place) {
  wg_context *ctx = new_context();
  buffers b;
  const uint64_t most = quick() ? 1u << 16 : 20000ull * 1104;
  buffers_make(ctx, &b, (most + 64) * 8);
  uint64_t seed = wg_test_seed() + 40000;
  const struct {
    wg_type type;
    wg_operator op;
    uint64_t rows, cols;
  } shapes[] = {
      {WG_F32, WG_OP_SUM, 2, quick() ? 30000 : 3000007},
      {WG_I32, WG_OP_SUM, 3, quick() ? 20000 : 1000003},
      {WG_F64, WG_OP_SUM, 50, quick() ? 700 : 20000},
      {WG_F32, WG_OP_SUM, quick() ? 30 : 20000, 1100},
      {WG_F16, WG_OP_MAX, quick() ? 30 : 4000, 2500},
      {WG_U32, WG_OP_XOR, 1, quick() ? 9000 : 5000000},
      /* Rows of exactly one whole-array tile (8192 f32), many of them:
       * every tile starts a row. */
      {WG_F32, WG_OP_SUM, quick() ? 9 : 600, 8192},
  };
  for (size_t s = 0; s < WG_COUNT_OF(shapes); s++)
    for (int det = 1; det >= 0; det--)
      for (int ex = 0; ex < 2; ex++) {
        const scan_case c = {shapes[s].type, shapes[s].op, ex, det, shapes[s].rows,
                             shapes[s].cols, shapes[s].cols + (uint64_t)ex,
                             shapes[s].cols + 2 * (uint64_t)det, (uint64_t)ex, false};
        check_case(ctx, &b, c, seed++, false);
      }
  /* In place: an array and rows. */
  const scan_case in_place[] = {
      {WG_F32, WG_OP_SUM, false, 1, 0, quick() ? 50000 : 3000001, 0, 0, 0, true},
      {WG_I64, WG_OP_MAX, true, 0, 0, quick() ? 50000 : 1000001, 0, 0, 0, true},
      {WG_F32, WG_OP_SUM, false, 1, 100, 1000, 1003, 1003, 0, true},
      {WG_I32, WG_OP_SUM, true, 1, 4, 70000, 70000, 70000, 0, true},
  };
  for (size_t k = 0; k < WG_COUNT_OF(in_place); k++)
    check_case(ctx, &b, in_place[k], seed++, false);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* --- expressions ------------------------------------------------------------ */

/* Runs spec text over n elements of b's (already uploaded) input as an
 * array, or rows x cols (touching) when rows > 0, into b's output. */
static void run_text(wg_context *ctx, buffers *b, const char *text, uint64_t rows,
                     uint64_t cols, wg_type out_type) {
  wg_spec s;
  OK(ctx, wg_spec_parse(ctx, &s, text));
  ck_assert_int_eq(wg_scan_spec_output_type(&s), (int)out_type);
  const uint64_t outs = (rows ? rows : 1) * cols;
  const size_t osize = wg_types[out_type].size;
  OK(ctx, wg_memset_d8(ctx, b->dev_out, poison_byte(out_type), outs * osize + GUARD_BYTES,
                       NULL));
  if (rows)
    OK(ctx, wg_scan_rows_spec(ctx, &s, b->dev_in, rows, cols, cols, b->dev_out, cols, NULL));
  else
    OK(ctx, wg_scan_array_spec(ctx, &s, b->dev_in, cols, b->dev_out, NULL));
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, b->host_out, b->dev_out, outs * osize + GUARD_BYTES, NULL));
  for (int g = 0; g < GUARD_BYTES; g++)
    ck_assert_msg(b->host_out[outs * osize + (size_t)g] == poison_byte(out_type),
                  "%s: wrote past the end", text);
}

/* The outputs in b->host_out against the oracle of `op` over b->host_copy
 * (the inputs as the expression's values, of type t). */
static void expect_scan(buffers *b, const char *text, wg_type t, wg_operator op, bool ex,
                        uint64_t rows, uint64_t cols) {
  wg_oracle_report report;
  wg_oracle_report_init(&report);
  wg_oracle_scan_check(&report, t, op, ex, b->host_copy, rows ? rows : 1, cols, cols,
                       b->host_out, cols);
  ck_assert_msg(report.mismatches == 0, "%s: %" PRIu64 " wrong, first %s (seed 0x%016" PRIx64
                ")", text, report.mismatches, report.first, wg_test_seed());
}

START_TEST(expressions_combine_and_map) {
  wg_context *ctx = new_context();
  const uint64_t n = quick() ? 20000 : 1000003;
  buffers b;
  buffers_make(ctx, &b, n * 8);
  /* combine= a + b with identity 0: the sum, on i32 (exact) and f64. */
  wg_oracle_fill(WG_I32, WG_OP_SUM, b.host_in, n, wg_test_seed() + 50);
  OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, n * 4, NULL));
  memcpy(b.host_copy, b.host_in, n * 4);
  for (int det = 0; det < 2; det++) {
    char text[160];
    snprintf(text, sizeof text, "scan-array i32 combine=\"a + b\" identity=\"0\" "
             "deterministic=%d", det);
    run_text(ctx, &b, text, 0, n, WG_I32);
    expect_scan(&b, text, WG_I32, WG_OP_SUM, false, 0, n);
  }
  run_text(ctx, &b, "exscan-rows i32 combine=\"a > b ? a : b\" identity=\"-2147483648\"", 3, n / 3, WG_I32);
  expect_scan(&b, "exscan-rows i32 combine=max", WG_I32, WG_OP_MAX, true, 3, n / 3);
  /* map= x * x on i64: the oracle scans the squares. */
  wg_oracle_fill(WG_I64, WG_OP_SUM, b.host_in, n, wg_test_seed() + 51);
  OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, n * 8, NULL));
  for (uint64_t i = 0; i < n; i++) {
    int64_t x;
    memcpy(&x, b.host_in + i * 8, 8);
    const int64_t sq = (int64_t)((uint64_t)x * (uint64_t)x);
    memcpy(b.host_copy + i * 8, &sq, 8);
  }
  run_text(ctx, &b, "scan-array i64 sum map=\"x * x\"", 0, n, WG_I64);
  expect_scan(&b, "scan-array i64 sum map=x*x", WG_I64, WG_OP_SUM, false, 0, n);
  /* map= to another type: i32 inputs, f64 outputs (element stores). */
  wg_oracle_fill(WG_I32, WG_OP_SUM, b.host_in, n, wg_test_seed() + 52);
  OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, n * 4, NULL));
  for (uint64_t i = 0; i < n; i++) {
    int32_t x;
    memcpy(&x, b.host_in + i * 4, 4);
    const double h = (double)x * 0.5;
    memcpy(b.host_copy + i * 8, &h, 8);
  }
  run_text(ctx, &b, "exscan-array i32 sum map=\"x * 0.5\"", 0, n, WG_F64);
  expect_scan(&b, "exscan-array i32 sum map=x*0.5", WG_F64, WG_OP_SUM, true, 0, n);
  run_text(ctx, &b, "scan-rows i32 max map=\"x * 0.5\"", 7, n / 7, WG_F64);
  expect_scan(&b, "scan-rows i32 max map=x*0.5", WG_F64, WG_OP_MAX, false, 7, n / 7);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* --- streams and graphs ------------------------------------------------------- */

/* Scans on four streams at once (each its own workspace, grown by the
 * first large call), then the same calls captured in a graph and replayed
 * twice beside eager calls on another stream: every output checked. */
START_TEST(streams_and_graphs) {
  wg_context *ctx = new_context();
  test_cuda cu;
  test_cuda_open(ctx, &cu);
  enum { JOBS = 8 };
  const uint64_t n = quick() ? 40000 : (1ull << 22) + 3; /* f32 and i32 */
  buffers b;
  buffers_make(ctx, &b, (size_t)JOBS * n * 4);
  unsigned char *want = malloc((size_t)JOBS * n * 4);
  ck_assert(want);
  CUstream streams[4];
  for (int s = 0; s < 4; s++) CU(cu.StreamCreate(&streams[s], CU_STREAM_NON_BLOCKING));
  /* Job j: sum over slice j (f32 for even j, i32 for odd) into slot j. */
  for (int round = 0; round < 5; round++) {
    for (int j = 0; j < JOBS; j++)
      wg_oracle_fill(j % 2 ? WG_I32 : WG_F32, WG_OP_SUM, b.host_in + (size_t)j * n * 4, n,
                     wg_test_seed() + 60000 + 100u * (unsigned)round + (unsigned)j);
    OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, (size_t)JOBS * n * 4, NULL));
    OK(ctx, wg_memset_d8(ctx, b.dev_out, 0xff, (size_t)JOBS * n * 4, NULL));
    OK(ctx, wg_stream_sync(ctx, NULL));
    if (round < 3) { /* eager, on four streams */
      for (int j = 0; j < JOBS; j++)
        OK(ctx, wg_scan_array(ctx, j % 2 ? WG_I32 : WG_F32, WG_OP_SUM, round == 1,
                              b.dev_in + (uint64_t)j * n * 4, n,
                              b.dev_out + (uint64_t)j * n * 4, streams[j % 4]));
    } else { /* captured on stream 0 (jobs 0..3), eager on stream 1 (4..7) */
      CUgraph graph;
      CUgraphExec exec;
      CU(cu.StreamBeginCapture(streams[0], CU_STREAM_CAPTURE_MODE_GLOBAL));
      for (int j = 0; j < JOBS / 2; j++)
        OK(ctx, wg_scan_array(ctx, j % 2 ? WG_I32 : WG_F32, WG_OP_SUM, false,
                              b.dev_in + (uint64_t)j * n * 4, n,
                              b.dev_out + (uint64_t)j * n * 4, streams[0]));
      CU(cu.StreamEndCapture(streams[0], &graph));
      CU(cu.GraphInstantiate(&exec, graph, 0));
      for (int replay = 0; replay < 2; replay++) {
        CU(cu.GraphLaunch(exec, streams[0]));
        for (int j = JOBS / 2; j < JOBS; j++)
          OK(ctx, wg_scan_array(ctx, j % 2 ? WG_I32 : WG_F32, WG_OP_SUM, false,
                                b.dev_in + (uint64_t)j * n * 4, n,
                                b.dev_out + (uint64_t)j * n * 4, streams[1]));
      }
      CU(cu.api->CtxSynchronize());
      CU(cu.GraphExecDestroy(exec));
      CU(cu.GraphDestroy(graph));
    }
    CU(cu.api->CtxSynchronize());
    OK(ctx, wg_memcpy_dtoh(ctx, b.host_out, b.dev_out, (size_t)JOBS * n * 4, NULL));
    for (int j = 0; j < JOBS; j++) {
      wg_oracle_report report;
      wg_oracle_report_init(&report);
      wg_oracle_scan_check(&report, j % 2 ? WG_I32 : WG_F32, WG_OP_SUM, round == 1,
                           b.host_in + (size_t)j * n * 4, 1, n, n,
                           b.host_out + (size_t)j * n * 4, n);
      ck_assert_msg(report.mismatches == 0, "round %d job %d: %" PRIu64 " wrong, first %s "
                    "(seed 0x%016" PRIx64 ")", round, j, report.mismatches, report.first,
                    wg_test_seed());
    }
  }
  for (int s = 0; s < 4; s++) CU(cu.StreamDestroy(streams[s]));
  free(want);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* --- errors --------------------------------------------------------------------- */

START_TEST(errors_and_edges) {
  wg_context *ctx = new_context();
  buffers b;
  buffers_make(ctx, &b, 1 << 16);
  uint64_t in = b.dev_in, out = b.dev_out;
  /* Nothing to do: no launch, no write. */
  OK(ctx, wg_memset_d8(ctx, out, 0xa7, 64, NULL));
  OK(ctx, wg_scan_array(ctx, WG_I32, WG_OP_SUM, 0, in, 0, out, NULL));
  OK(ctx, wg_scan_rows(ctx, WG_I32, WG_OP_SUM, 0, in, 0, 10, 10, out, 10, NULL));
  OK(ctx, wg_scan_rows(ctx, WG_I32, WG_OP_SUM, 1, in, 10, 0, 0, out, 0, NULL));
  OK(ctx, wg_stream_sync(ctx, NULL));
  unsigned char host[64];
  OK(ctx, wg_memcpy_dtoh(ctx, host, out, 64, NULL));
  for (int i = 0; i < 64; i++) ck_assert_int_eq(host[i], 0xa7);
  /* Operators without a running form, bitwise floats, bad enums. */
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, WG_OP_ARGMAX, 0, in, 10, out, NULL), WG_ESPEC);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "sum, prod, min, max"));
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, WG_OP_MEAN, 0, in, 10, out, NULL), WG_ESPEC);
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, WG_OP_XOR, 0, in, 10, out, NULL), WG_ESPEC);
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, WG_OP_NONE, 0, in, 10, out, NULL), WG_ESPEC);
  ck_assert_int_eq(wg_scan_array(ctx, (wg_type)99, WG_OP_SUM, 0, in, 10, out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, (wg_operator)99, 0, in, 10, out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_scan_array(NULL, WG_F32, WG_OP_SUM, 0, in, 10, out, NULL), WG_EINVAL);
  /* Pointers: NULL, misaligned, overlapping (in place is fine). */
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, WG_OP_SUM, 0, 0, 10, out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, WG_OP_SUM, 0, in, 10, 0, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, WG_OP_SUM, 0, in + 2, 10, out, NULL), WG_EALIGN);
  ck_assert_int_eq(wg_scan_array(ctx, WG_F64, WG_OP_SUM, 0, in, 10, out + 4, NULL), WG_EALIGN);
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, WG_OP_SUM, 0, in, 10, in + 4, NULL), WG_EINVAL);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "overlaps"));
  ck_assert_int_eq(wg_scan_rows(ctx, WG_F32, WG_OP_SUM, 0, in, 4, 10, 10, in, 12, NULL),
                   WG_EINVAL);
  OK(ctx, wg_scan_array(ctx, WG_F32, WG_OP_SUM, 0, in, 10, in, NULL));
  /* Strides shorter than a row, sizes that overflow. */
  ck_assert_int_eq(wg_scan_rows(ctx, WG_F32, WG_OP_SUM, 0, in, 4, 10, 9, out, 10, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_scan_rows(ctx, WG_F32, WG_OP_SUM, 0, in, 4, 10, 10, out, 9, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_scan_rows(ctx, WG_F32, WG_OP_SUM, 0, in, UINT64_MAX / 2, 10,
                                UINT64_MAX / 4, out, 10, NULL), WG_ERANGE);
  ck_assert_int_eq(wg_scan_array(ctx, WG_F32, WG_OP_SUM, 0, in, UINT64_MAX / 2, out, NULL),
                   WG_ERANGE);
  /* Specs: the wrong primitive, keys a scan does not take, expressions
   * it cannot run. */
  wg_spec s;
  OK(ctx, wg_spec_parse(ctx, &s, "reduce-array f32 sum"));
  ck_assert_int_eq(wg_scan_array_spec(ctx, &s, in, 10, out, NULL), WG_EINVAL);
  OK(ctx, wg_spec_parse(ctx, &s, "scan-rows f32 sum"));
  ck_assert_int_eq(wg_scan_array_spec(ctx, &s, in, 10, out, NULL), WG_EINVAL);
  OK(ctx, wg_spec_parse(ctx, &s, "scan-array f32 sum"));
  ck_assert_int_eq(wg_scan_rows_spec(ctx, &s, in, 1, 10, 10, out, 10, NULL), WG_EINVAL);
  s.deterministic = 2;
  ck_assert_int_eq(wg_scan_array_spec(ctx, &s, in, 10, out, NULL), WG_ESPEC);
  ck_assert_int_eq(wg_scan_spec_output_type(&s), WG_ESPEC);
  ck_assert_int_eq(wg_scan_spec_output_type(NULL), WG_EINVAL);
  const char *const bad[] = {
      "scan-array f32 sum cols=10",         "scan-array f32 sum width=16",
      "scan-array f32 sum bins=4",          "scan-array f32 argmin",
      "scan-rows f32 logsumexp",            "scan-array f32 sum final=\"r * 2\"",
      "scan-array f32 sum map=\"x * p0\" params=f32",
      "scan-array f32 sum map=\"x + y\" inputs=f32,f32",
      "scan-array f32 combine=\"a + b\"",   "scan-array f32 sum variant=down",
      "scan-array f32 sum deterministic=2", "scan-rows f32 sum cols=-1",
  };
  for (size_t k = 0; k < WG_COUNT_OF(bad); k++) {
    const int rc = wg_spec_parse(ctx, &s, bad[k]);
    ck_assert_msg(rc == WG_ESPEC, "'%s' parsed (%d)", bad[k], rc);
    ck_assert_msg(strlen(wg_errmsg(ctx)) > 10, "'%s': no message", bad[k]);
  }
  /* Text round trip. */
  OK(ctx, wg_spec_parse(ctx, &s, "exscan-rows bf16 max cols=100 deterministic=0"));
  char text[128];
  ck_assert_int_gt(wg_spec_format(text, sizeof text, &s), 0);
  ck_assert_str_eq(text, "exscan-rows bf16 max cols=100 deterministic=0");
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* --- the specs, for NVRTC and for filling a cache ---------------------------------- */

/* Calls fn for every spec of the sample (every = false) or of every shape:
 * arrays of every (type, operator) in both modes, rows of every shape. */
static void each_spec(bool every, void (*fn)(const wg_spec *s, void *arg), void *arg) {
  for (int p = 0; p < 4; p++) {
    const bool rows = p >= 2, ex = p % 2;
    for (int t = 0; t < WG_TYPE_COUNT; t++)
      for (size_t o = 0; o < WG_COUNT_OF(scan_ops); o++) {
        if (!wg_operator_accepts(scan_ops[o], (wg_type)t)) continue;
        const bool sampled = every || o == (size_t)t % WG_COUNT_OF(scan_ops) ||
                             scan_ops[o] == WG_OP_SUM;
        if (!sampled) continue;
        wg_spec s = WG_SPEC_INIT;
        s.primitive = primitive_of(rows, ex);
        s.type = (wg_type)t;
        s.op = scan_ops[o];
        const uint64_t v = vec_of((wg_type)t);
        /* rows: 0 (long), then 1, 2, 4, ... 256 vectors */
        for (uint64_t c = 0; c <= (rows ? 256 : 0); c = c ? c * 2 : 1) {
          s.cols = (int64_t)(c * v);
          for (int det = 1; det >= 0; det--) {
            if (rows && c && !det && !every) continue;
            s.deterministic = det;
            fn(&s, arg);
          }
          if (!rows) break;
        }
      }
  }
  static const char *const texts[] = {
      "scan-array i32 combine=\"a + b\" identity=\"0\"",
      "scan-array i32 combine=\"a + b\" identity=\"0\" deterministic=0",
      "exscan-rows i32 combine=\"a > b ? a : b\" identity=\"-2147483648\"",
      "scan-array i64 sum map=\"x * x\"",
      "exscan-array i32 sum map=\"x * 0.5\"",
      "scan-rows i32 max map=\"x * 0.5\"",
      "scan-rows f32 sum cols=100",
      "scan-array f64 combine=\"a * b\" identity=\"1.0\" deterministic=0",
  };
  wg_context *ctx = NULL;
  if (wg_context_create(&ctx, NULL) != WG_OK) return;
  for (size_t k = 0; k < WG_COUNT_OF(texts); k++) {
    wg_spec s;
    if (wg_spec_parse(ctx, &s, texts[k]) == WG_OK) {
      /* the rows calls choose cols from the row length */
      if (s.primitive == WG_SCAN_ROWS || s.primitive == WG_EXSCAN_ROWS) s.cols = 0;
      fn(&s, arg);
    }
  }
  wg_context_destroy(ctx);
}

static void print_one(const wg_spec *s, void *arg) {
  (void)arg;
  char text[512];
  if (wg_spec_format(text, sizeof text, s) > 0) printf("%s\n", text);
}

typedef struct compile_run {
  int arch;
  int count, failed;
  unsigned seen, every, offset; /* compile spec k when k % every == offset */
  char first[1400];
} compile_run;

static void compile_one(const wg_spec *s, void *arg) {
  compile_run *run = arg;
  if (run->seen++ % run->every != run->offset) return;
  wg_context *ctx = NULL;
  if (wg_context_create(&ctx, NULL) != WG_OK) {
    run->failed++;
    return;
  }
  wg_spec c = *s;
  c.arch = run->arch;
  void *cubin = NULL;
  size_t len = 0;
  const int rc = wg_cubin(ctx, &cubin, &len, &c);
  run->count++;
  if (rc != WG_OK && run->failed++ == 0) {
    char text[512];
    wg_spec_format(text, sizeof text, &c);
    snprintf(run->first, sizeof run->first, "%s: %s: %.700s", text, wg_strerror(rc),
             wg_errmsg(ctx));
  }
  wg_free(cubin);
  wg_context_destroy(ctx);
}

typedef struct spec_list {
  wg_spec *specs;
  size_t count, cap;
  int arch;
} spec_list;

/* Expression texts are interned in each_spec's context, which is gone by
 * the time the list compiles: such specs are compiled at once. */
static void collect_one(const wg_spec *s, void *arg) {
  spec_list *list = arg;
  wg_spec c = *s;
  c.arch = list->arch;
  if (wg_spec_has_expr(&c)) {
    wg_test_precompile(&c, 1);
    return;
  }
  if (list->count == list->cap) {
    list->cap = list->cap ? 2 * list->cap : 1024;
    wg_spec *bigger = realloc(list->specs, list->cap * sizeof *bigger);
    if (!bigger) return;
    list->specs = bigger;
  }
  list->specs[list->count++] = c;
}

/* Fills the disk cache with every spec the GPU cases launch, for sm_ARCH,
 * on every core, without touching CUDA. */
static int precompile_main(int arch) {
  spec_list list = {NULL, 0, 0, arch};
  each_spec(true, collect_one, &list);
  wg_test_precompile(list.specs, list.count);
  printf("scan: %zu specs compiled or found in the cache for sm_%d\n", list.count, arch);
  free(list.specs);
  return 0;
}

/* WARPGEN_NVRTC_EVERY=K compiles every K-th spec of the list, as
 * test_nvrtc does (tools/test.sh: a third in its first pass, a 16th in the
 * sanitizer pass), the K-th picked by WARPGEN_NVRTC_OFFSET or else by the
 * day, so that daily runs cover the whole list. */
static int nvrtc_main(int arch) {
  unsigned every, offset;
  wg_test_nvrtc_sample(&every, &offset);
  compile_run run = {arch, 0, 0, 0, every, offset, ""};
  const bool all = env_is("WARPGEN_SCAN_ALL", "1");
  each_spec(all, compile_one, &run);
  printf("scan nvrtc sm_%d: %d specs (%s; 1 in %u, offset %u), %d failed%s%s\n", arch,
         run.count, all ? "every shape" : "a sample; WARPGEN_SCAN_ALL=1 for every shape",
         every, offset, run.failed, run.failed ? ": first " : "", run.first);
  return run.failed ? 1 : 0;
}

static Suite *scan_suite(void) {
  Suite *s = suite_create("scan");
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
  tcase_add_test(tc, rows_long_shapes_and_in_place);
  tcase_add_test(tc, rows_past_2_31_elements);
  suite_add_tcase(s, tc);
  tc = tcase_create("more");
  tcase_set_timeout(tc, 1800);
  tcase_add_test(tc, expressions_combine_and_map);
  tcase_add_test(tc, streams_and_graphs);
  tcase_add_test(tc, errors_and_edges);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--specs") == 0) {
    each_spec(true, print_one, NULL);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "--precompile") == 0)
    return precompile_main(argc > 2 ? atoi(argv[2]) : 90);
  if (argc > 1 && strcmp(argv[1], "--nvrtc") == 0)
    return nvrtc_main(argc > 2 ? atoi(argv[2]) : 90);
  if (!wg_test_gpu_begin("scan", NULL)) return 77;
  return wg_test_run_suite(scan_suite()); /* CK_VERBOSITY=verbose: a line a test */
}
