/*
 * test_rownorm.c - the fused row kernels (softmax-rows, log-softmax-rows,
 * layernorm-rows, rmsnorm-rows).
 *
 *   test_rownorm unit    the shapes, spec text, validation and argument
 *                        errors (no CUDA)
 *   test_rownorm nvrtc   NVRTC compiles of every shape the calls can pick,
 *                        for every type and operation (no GPU)
 *   test_rownorm gpu     launches checked against the float64 oracle
 *                        (tests/oracle_rownorm.c): every type and
 *                        operation; row lengths 1, 2, 31, 33, 1000, 1024,
 *                        4096, 12000, 32768, 65536 and 2^20; rows 0, 1 and
 *                        many; padded and unaligned strides, an
 *                        unaligned base, in place; NaN, +inf, rows of
 *                        -inf, -inf beside finite values, all-equal
 *                        rows (variance exactly 0); with
 *                        and without weight and bias. Outputs are poisoned
 *                        with a finite pattern first, and the gaps between
 *                        output rows must keep it; the oracle's rows are
 *                        computed on every core. Exits 77 without a GPU.
 *                        WARPGEN_ROWNORM_QUICK=1: small sizes and three
 *                        layouts only (for compute-sanitizer). A test case
 *                        an operation: CK_RUN_CASE=softmax, log-softmax,
 *                        layernorm, rmsnorm, repeat or streams (several
 *                        streams and a graph) runs one.
 *                        WARPGEN_ROWNORM_TRACE=1 names each case on
 *                        stderr as it starts (which case is slow).
 *   test_rownorm --specs every spec the gpu part launches, one a line (to
 *                        fill a disk cache ahead on a machine without GPU)
 *   test_rownorm --specs-for COLS...  the specs the calls use for these
 *                        row lengths (every operation and type)
 * Fresh random inputs every run; WARPGEN_TEST_SEED replays one.
 */
#include "cuda_support.h"
#include "fam_rownorm.h"
#include "oracle.h"
#include "support.h"

#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const wg_primitive prims[] = {WG_SOFTMAX_ROWS, WG_LOG_SOFTMAX_ROWS, WG_LAYERNORM_ROWS,
                                     WG_RMSNORM_ROWS};
static const wg_type floats[] = {WG_F16, WG_BF16, WG_F32, WG_F64};

/* --- unit ------------------------------------------------------------------ */

/* A failed shape rule, with where. Plain conditions, not ck_assert: Check
 * reports every ck_assert's place through a pipe, and the loop below makes
 * millions (over 30 s under ASan). */
#define SHAPE_CHECK(cond)                                                              \
  do {                                                                                 \
    if (!(cond))                                                                       \
      ck_abort_msg("%s %s cols=%" PRIu64 " arch=%d: %s", wg_primitive_name(prims[p]),  \
                   wg_type_name(type), cols, arch, #cond);                              \
  } while (0)

START_TEST(shapes_hold_their_rows) {
  for (size_t t = 0; t < WG_COUNT_OF(floats); t++)
  for (size_t p = 0; p < WG_COUNT_OF(prims); p++) {
    const wg_type type = floats[t];
    const uint64_t vec = 16 / wg_type_size(type);
    const bool softmax = prims[p] == WG_SOFTMAX_ROWS || prims[p] == WG_LOG_SOFTMAX_ROWS;
    for (uint64_t cols = 1; cols <= 150000; cols += cols < 5000 ? 1 : cols < 70000 ? 7 : 61)
    for (int arch = 80; arch <= 90; arch += 5) {
      unsigned s[8], c[8];
      wg_rownorm_shape_numbers(prims[p], type, (int64_t)cols, arch, s);
      const int64_t sc = wg_rownorm_spec_cols(prims[p], type, cols);
      wg_rownorm_shape_numbers(prims[p], type, sc, arch, c);
      /* The kernel the call picks has the shape made for cols. */
      SHAPE_CHECK(memcmp(s, c, sizeof s) == 0);
      const uint64_t holds = (uint64_t)s[0] * (s[1] + s[6]) * vec;
      /* Past the registers of a block of 1024, f32 rows and f64 softmax
       * and log_softmax rows keep the rest in its shared memory as far as
       * the architecture has room (sm_80 and sm_87 144 KiB, sm_85 here
       * for the others' 80 KiB, sm_90 208 KiB); other rows, and longer
       * ones, are streamed. spec_cols rounds as sm_90 does. */
      const unsigned kept_most = arch == 80 ? 9 : arch == 85 ? 5 : 13;
      const unsigned chunks_most = type == WG_F32 ? 8u : 4u; /* in registers */
      const uint64_t registers = 1024u * chunks_most * vec;
      const bool keeps = type == WG_F32 || (type == WG_F64 && softmax);
      /* f32 softmax rows of 16385 to 32768 where an SM holds two blocks'
       * kept parts: two blocks of 512 lanes of 8 vectors in registers. */
      const bool pair = type == WG_F32 && softmax && cols > 16384 && cols <= 32768 &&
                        kept_most >= 9;
      SHAPE_CHECK(pair == (softmax && s[0] == 512 && s[6] > 0));
      SHAPE_CHECK(!pair || (s[1] == 8 && s[0] * (s[1] + s[6]) * vec < cols + 512 * vec));
      /* f32 layernorm and rmsnorm rows of 8193 to 16384: a block of 512
       * lanes of 4 vectors in registers and the rest (1 to 4) kept. */
      const bool norm_kept = type == WG_F32 && !softmax && cols > 8192 && cols <= 16384;
      SHAPE_CHECK(norm_kept == (!softmax && s[0] == 512 && s[6] > 0));
      SHAPE_CHECK(!norm_kept || (s[1] == 4 && s[6] <= 4));
      SHAPE_CHECK(s[6] <= kept_most &&
                  (!s[6] || pair || norm_kept || (keeps && s[0] == 1024 && cols > registers)));
      SHAPE_CHECK(s[6] || !keeps || cols <= registers ||
                  cols > 1024u * (chunks_most + kept_most) * vec);
      if (sc && holds >= cols) /* an arch with less room may round up further */
        SHAPE_CHECK((uint64_t)sc == holds || (arch < 90 && holds > (uint64_t)sc));
      else if (sc)
        SHAPE_CHECK(arch < 90 && s[0] == 1024 && s[6] == 0);
      else
        SHAPE_CHECK(s[0] == 1024 && holds < cols && s[6] == 0);
      SHAPE_CHECK(s[0] >= 1 && s[0] <= 1024 && (s[0] & (s[0] - 1)) == 0);
      SHAPE_CHECK(s[1] >= 1 && s[1] <= 8);
      SHAPE_CHECK(s[0] <= 32 ? s[3] == 256 && s[3] % s[0] == 0 : s[3] == s[0] && s[2] == 1);
      SHAPE_CHECK(s[1] * s[2] <= 8);
      /* Rows staged in shared memory, sm_90 on, at most 64 KiB: softmax
       * and log_softmax in blocks of 512 or more, the norms of f16 and
       * bf16 in blocks of 1024. */
      const bool narrow = type == WG_F16 || type == WG_BF16;
      /* Rows of a warp or less: f32 lanes, and 16-bit softmax,
       * log_softmax and rmsnorm lanes, hold 2 vectors while 32 lanes hold
       * the row so, with 1024 threads an SM (4 blocks of 256); 16-bit
       * layernorm and the f64 lanes 4, with 512 threads an SM. */
      const bool f32_tuning = type == WG_F32 || (narrow && prims[p] != WG_LAYERNORM_ROWS);
      const bool raw_rms = narrow && prims[p] == WG_RMSNORM_ROWS;
      const uint64_t short_chunks = f32_tuning ? 2u : 4u;
      SHAPE_CHECK((cols + vec - 1) / vec > 32u * short_chunks ||
                  (s[0] <= 32 && s[1] <= short_chunks));
      SHAPE_CHECK(s[0] > 32 || s[7] == (f32_tuning || raw_rms ? 4u : 2u));
      SHAPE_CHECK(!s[4] || (arch >= 90 && s[0] >= 512 && s[6] == 0));
      SHAPE_CHECK(!s[4] || softmax || (s[0] == 1024 && narrow));
      SHAPE_CHECK(s[4] * s[0] * s[1] * 16u <= 64u * 1024u);
      SHAPE_CHECK(!((softmax || narrow) && arch >= 90 && s[0] == 1024 && s[6] == 0 &&
                    s[0] * s[1] * 16u <= 64u * 1024u) ||
                  s[4] == 1);
      /* Weight and bias staged: the norms' blocks that hold rows of 8192
       * or more and loop over rows (every type but f32). */
      const bool wb = holds >= 8192 && s[0] > 32 && type != WG_F32 &&
                      (prims[p] == WG_RMSNORM_ROWS || prims[p] == WG_LAYERNORM_ROWS);
      SHAPE_CHECK(s[5] == (unsigned)wb);
    }
  }
}
END_TEST

/* The room given to staged weight and bias: what fits beside the blocks an
 * SM keeps, weight first, never half a vector of either. */
START_TEST(staged_weight_room) {
  const wg_rownorm_room h200 = {233472, 1024, 232448, 256};
  /* A block alone on its SM: f32 rows of 32768 (128 KiB) take weight only. */
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&h200, 1, 131072, true, true), 131072);
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&h200, 1, 65536, true, true), 131072);
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&h200, 1, 65536, false, true), 65536);
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&h200, 1, 65536, false, false), 0);
  /* Two blocks an SM: 64 KiB rows, weight only; four: 32 KiB, weight only. */
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&h200, 2, 65536, true, true), 65536);
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&h200, 4, 32768, true, true), 32768);
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&h200, 4, 16384, true, true), 32768);
  /* After a staged row of 64 KiB (f16 and bf16 rows of 32768, a block an
   * SM: the row counts as static room): weight and bias both still fit. */
  const wg_rownorm_room staged = {233472, 1024, 232448, 256 + 65536};
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&staged, 1, 65536, true, true), 131072);
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&staged, 1, 40000, true, true), 80000);
  /* No room for weight: none for bias either (it would sit after weight). */
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&h200, 2, 131072, true, true), 0);
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&h200, 8, 32768, true, false), 0);
  /* A device whose blocks opt in to less than the SM holds (sm_86). */
  const wg_rownorm_room small = {102400, 1024, 101376, 0};
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&small, 1, 65536, true, true), 65536);
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&small, 0, 4096, true, true), 8192);
  const wg_rownorm_room none = {0, 0, 0, 0};
  ck_assert_uint_eq(wg_rownorm_wb_shared_bytes(&none, 1, 16, true, true), 0);
}
END_TEST

START_TEST(spec_text) {
  wg_context *ctx = wg_test_context();
  static const char *const texts[] = {
    "softmax-rows f32 cols=1024", "log-softmax-rows f16 cols=33",
    "layernorm-rows bf16 cols=0", "rmsnorm-rows f64 cols=4096 arch=sm_90"};
  for (size_t i = 0; i < WG_COUNT_OF(texts); i++) {
    wg_spec s;
    WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, texts[i]));
    char back[256], name[128];
    ck_assert_int_gt(wg_spec_format(back, sizeof back, &s), 0);
    ck_assert_str_eq(back, texts[i]);
    ck_assert_int_gt(wg_kernel_name(name, sizeof name, &s), 0);
  }
  wg_spec s;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, "layernorm-rows bf16"));
  char back[256];
  wg_spec_format(back, sizeof back, &s);
  ck_assert_str_eq(back, "layernorm-rows bf16 cols=0");
  static const char *const bad[] = {
    "softmax-rows i32", "softmax-rows f32 sum", "rmsnorm-rows f32 cols=-1",
    "layernorm-rows f32 width=16", "softmax-rows f32 variant=down",
    "softmax-rows f32 map=\"x * x\"", "softmax-rows f32 layout=lane",
    "layernorm-rows u64 cols=8"};
  for (size_t i = 0; i < WG_COUNT_OF(bad); i++) {
    ck_assert_msg(wg_spec_parse(ctx, &s, bad[i]) == WG_ESPEC, "%s parsed", bad[i]);
    ck_assert_msg(strlen(wg_errmsg(ctx)) > 0, "%s: no message", bad[i]);
  }
  wg_context_destroy(ctx);
}
END_TEST

/* Errors found before the device is touched. */
START_TEST(bad_arguments) {
  wg_context *ctx = wg_test_context();
  const uint64_t p = 0x10000;
  ck_assert_int_eq(wg_softmax_rows(NULL, WG_F32, p, p, 1, 1, 1, 1, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_softmax_rows(ctx, WG_I32, p, p, 1, 1, 1, 1, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_softmax_rows(ctx, (wg_type)99, p, p, 1, 1, 1, 1, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_softmax_rows(ctx, WG_F32, p, p + 4096, 2, 8, 4, 8, NULL), WG_EINVAL);
  ck_assert(strstr(wg_errmsg(ctx), "in_stride") != NULL);
  ck_assert_int_eq(wg_log_softmax_rows(ctx, WG_F32, p, p + 4096, 2, 8, 8, 7, NULL), WG_EINVAL);
  ck_assert(strstr(wg_errmsg(ctx), "out_stride") != NULL);
  ck_assert_int_eq(wg_layer_norm_rows(ctx, WG_F32, p, 0, 0, p, 1, 8, 8, 8, -1.0, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_rms_norm_rows(ctx, WG_F32, p, 0, p, 1, 8, 8, 8, NAN, NULL), WG_EINVAL);
  ck_assert(strstr(wg_errmsg(ctx), "eps") != NULL);
  ck_assert_int_eq(wg_rms_norm_rows(ctx, WG_BF16, p, 0, p, 1, 8, 8, 8, 1e39, NULL), WG_EINVAL);
  ck_assert(strstr(wg_errmsg(ctx), "f32") != NULL);
  /* out over in, other than in place (the same rows), is refused too. */
  ck_assert_int_eq(wg_softmax_rows(ctx, WG_F32, p, p + 4, 2, 8, 8, 8, NULL), WG_EINVAL);
  ck_assert(strstr(wg_errmsg(ctx), "overlaps the input") != NULL);
  /* out over weight or bias: rows written first would change them. */
  const uint64_t q = 0x20000;
  ck_assert_int_eq(wg_layer_norm_rows(ctx, WG_F32, p, q + 16, 0, q, 4, 8, 8, 8, 1e-5, NULL),
                   WG_EINVAL);
  ck_assert(strstr(wg_errmsg(ctx), "weight") != NULL);
  ck_assert_int_eq(wg_layer_norm_rows(ctx, WG_F32, p, 0, q + 124, q, 4, 8, 8, 8, 1e-5, NULL),
                   WG_EINVAL);
  ck_assert(strstr(wg_errmsg(ctx), "bias") != NULL);
  ck_assert_int_eq(wg_rms_norm_rows(ctx, WG_F32, p, q - 16, q, 4, 8, 8, 8, 1e-5, NULL),
                   WG_EINVAL);
  ck_assert(strstr(wg_errmsg(ctx), "weight") != NULL);
  /* Nothing to do: no device needed, no error. */
  ck_assert_int_eq(wg_softmax_rows(ctx, WG_F32, 0, 0, 0, 100, 100, 100, NULL), WG_OK);
  ck_assert_int_eq(wg_layer_norm_rows(ctx, WG_BF16, 0, 0, 0, 0, 5, 0, 0, 0, 1e-5, NULL),
                   WG_OK);
  ck_assert_int_eq(wg_rownorm_spec(ctx, NULL, p, 0, 0, p, 1, 1, 1, 1, 0, NULL), WG_EINVAL);
  wg_spec s;
  WG_TEST_OK(ctx, wg_spec_parse(ctx, &s, "reduce-rows f32 sum"));
  ck_assert_int_eq(wg_rownorm_spec(ctx, &s, p, 0, 0, p, 1, 1, 1, 1, 0, NULL), WG_EINVAL);
  wg_context_destroy(ctx);
}
END_TEST

/* --- the specs the calls pick ------------------------------------------------ */

/* Row lengths of the gpu cases; the quick list for compute-sanitizer. */
/* Past what a block's registers hold, a block of 1024 keeps the rest of
 * f32 rows and of f64 softmax and log_softmax rows in shared memory (sm_80
 * on): f64 from 8193 (one vector kept, by one lane) to 32769 (13 vectors
 * a lane kept, the most: 208 KiB), f32 from 32769 (one vector kept) to
 * 86016 (the most), 12000, 20000 and 40000 partly filling their last
 * vectors; f32 softmax rows of 16385 to 32768 are two blocks of 512 that
 * keep (20000: 2 vectors a lane, 32768: 8), and f32 layernorm and
 * rmsnorm rows of 8193 to 16384 blocks of 512 that keep (8193: 1 vector
 * a lane, 12000: 2). The other rows past registers
 * (f64 norms from 8193, the 16-bit types from 32769) and longer ones
 * (139264, 2^20) are streamed. 20000 is also a partial row of the blocks
 * of 1024 (f16 and bf16 norms: the staged row, weight and bias after it)
 * and of f32 norms' kernel for 20480 (1024 threads of 5 vectors). */
static const uint64_t gpu_cols[] = {1,     2,     31,    33,    1000,   1024,   4096,
                                    8193,  12000, 20000, 32768, 32769,  40000,  65536,
                                    86016, 139264, 1u << 20};
/* 8192: staged weights; 12000: f32 norms' blocks of 512 that keep (4
 * vectors a lane in registers, 2 kept); 20000: the 16-bit norms' staged
 * row with weight and bias after it, f32 norms' blocks of 1024 at 5
 * vectors a lane, f32 softmax's two blocks of 512 that keep, f64
 * softmax's kept row; 40000: f32's kept rows. */
static const uint64_t quick_cols[] = {1, 33, 1000, 5000, 8192, 12000, 20000, 40000};

/* The row lengths of gpu_prim's many rows, of a type: element by element
 * (3 columns), and 8 whole vectors held in registers. call_specs
 * precompiles their kernels. */
static uint64_t many_cols(wg_type t, int which) {
  return which == 0 ? 3 : 8 * (16 / wg_type_size(t));
}

static bool quick(void) {
  const char *q = getenv("WARPGEN_ROWNORM_QUICK");
  return q && *q && strcmp(q, "0") != 0;
}

static wg_spec spec_for(wg_primitive p, wg_type t, uint64_t cols) {
  wg_spec s;
  wg_spec_init(&s);
  s.primitive = p;
  s.type = t;
  s.op = WG_OP_NONE;
  s.cols = wg_rownorm_spec_cols(p, t, cols);
  return s;
}

/* Every distinct spec the calls make for rows up to 2^20 (`all`), or those
 * of the gpu cases; *count specs, malloc'd. */
static wg_spec *call_specs(size_t *count, bool all, int arch) {
  size_t cap = 4096, n = 0;
  wg_spec *list = malloc(cap * sizeof *list);
  if (!list) abort();
  const uint64_t *cols_list = quick() ? quick_cols : gpu_cols;
  const size_t ncols = quick() ? WG_COUNT_OF(quick_cols) : WG_COUNT_OF(gpu_cols);
  for (size_t p = 0; p < WG_COUNT_OF(prims); p++)
    for (size_t t = 0; t < WG_COUNT_OF(floats); t++) {
      int64_t last = -1;
      /* Past the list: the lengths of gpu_prim's many rows. */
      for (uint64_t i = 0; all ? i <= (1u << 17) : i < ncols + 2; i++) {
        const uint64_t cols = all ? (i ? i : 1u << 20) : i < ncols ? cols_list[i] : many_cols(floats[t], (int)(i - ncols));
        wg_spec s = spec_for(prims[p], floats[t], cols);
        s.arch = arch;
        if (s.cols == last) continue;
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++) seen = memcmp(&list[k], &s, sizeof s) == 0;
        last = s.cols;
        if (seen) continue;
        if (n == cap) abort(); /* more shapes than this test expects */
        list[n++] = s;
      }
    }
  *count = n;
  return list;
}

/* --- nvrtc ------------------------------------------------------------------ */

static int nvrtc_arch = 90;

/* Every shape of one operation and type (softmax f32, layernorm bf16 ...
 * alternate so that each operation and type meets many shapes), and every
 * operation and type at cols 0. */
START_TEST(every_shape_compiles) {
  size_t n = 0;
  wg_spec *list = call_specs(&n, true, nvrtc_arch);
  size_t picked = 0;
  wg_spec *todo = malloc(n * sizeof *todo);
  ck_assert_ptr_nonnull(todo);
  for (size_t i = 0; i < n; i++) {
    const size_t p = (size_t)(list[i].primitive - WG_SOFTMAX_ROWS);
    size_t t = 0;
    while (floats[t] != list[i].type) t++;
    /* softmax/f32, log-softmax/f16, layernorm/bf16, rmsnorm/f64 and all of
     * cols 0: every operation with every type, every shape of each type. */
    if (list[i].cols == 0 || (p + 2) % 4 == t) todo[picked++] = list[i];
  }
  fprintf(stderr, "rownorm: compiling %zu of %zu specs\n", picked, n);
  wg_test_precompile(todo, picked);
  wg_context *ctx = wg_test_context();
  for (size_t i = 0; i < picked; i++) {
    void *cubin = NULL;
    size_t len = 0;
    char text[256];
    wg_spec_format(text, sizeof text, &todo[i]);
    const int rc = wg_cubin(ctx, &cubin, &len, &todo[i]);
    ck_assert_msg(rc == WG_OK, "%s: %s: %s", text, wg_strerror(rc), wg_errmsg(ctx));
    ck_assert_uint_gt(len, 0);
    wg_free(cubin);
  }
  wg_context_destroy(ctx);
  free(todo);
  free(list);
}
END_TEST

/* --- gpu -------------------------------------------------------------------- */

#define POISON 0x7Bu /* a finite value of every type: never a right answer */

enum { ROW_NAN = 1, ROW_INF = 2, ROW_ALL_NEG_INF = 4, ROW_SOME_NEG_INF = 8, ROW_EQUAL = 16 };

typedef struct rn_case {
  wg_primitive p;
  wg_type t;
  uint64_t rows, cols;
  uint64_t in_pad, out_pad; /* stride = cols + pad */
  uint64_t offset;          /* elements between the allocation and the input */
  bool weight, bias, in_place, specials;
  double eps;
} rn_case;

/* --- the oracle's rows, on every core --------------------------------------- */

/* Rows of a case checked against the oracle. The host's work is most of a
 * gpu case's time: the layernorm case took 228 s on an H100 in stop 42,
 * and a replica of its host work without the GPU, 133 s on one core
 * here, 83 s of it the oracle's compensated long double sums and 30 s
 * drawing inputs (draw_worker). Rows are independent: worker w of n takes
 * rows w, w + n, ... and stops at its first failing row; the first
 * failing row of all is the one reported. */
enum { ROWS_CHECK_MOST = 32, ROWS_CHECK_WHY = 320 };
typedef struct rows_check {
  wg_primitive p;
  wg_type t;
  uint64_t rows, cols, in_stride, out_stride;
  const void *in, *got, *weight, *bias; /* weight, bias: NULL when not used */
  double eps;
  uint64_t bad_row[ROWS_CHECK_MOST]; /* a worker's first failing row, else UINT64_MAX */
  char why[ROWS_CHECK_MOST][ROWS_CHECK_WHY];
} rows_check;

static void rows_check_worker(void *arg, int worker, int workers) {
  rows_check *k = arg;
  k->bad_row[worker] = UINT64_MAX;
  double *value = malloc((k->cols + 1) * sizeof *value);
  double *scale = malloc((k->cols + 1) * sizeof *scale);
  if (!value || !scale) {
    k->bad_row[worker] = (uint64_t)worker < k->rows ? (uint64_t)worker : 0;
    snprintf(k->why[worker], ROWS_CHECK_WHY, "out of host memory for the oracle");
  }
  wg_rownorm_want want = {k->cols, value, scale};
  for (uint64_t r = (uint64_t)worker; value && scale && r < k->rows; r += (uint64_t)workers) {
    wg_oracle_rownorm_row(&want, k->p, k->t, k->in, r * k->in_stride, k->cols, k->weight,
                          k->bias, k->eps);
    uint64_t col = 0;
    if (!wg_oracle_rownorm_check(&want, k->t, k->got, r * k->out_stride, &col, k->why[worker],
                                 ROWS_CHECK_WHY)) {
      k->bad_row[worker] = r;
      break;
    }
  }
  free(value);
  free(scale);
}

/* Checks k's rows on every core; true if all match, else *row and why
 * (of why_size) say the first that does not. */
static bool rows_check_all(rows_check *k, uint64_t *row, char *why, size_t why_size) {
  const uint64_t most = k->rows < ROWS_CHECK_MOST ? k->rows : ROWS_CHECK_MOST;
  const int n = wg_test_on_cores((int)most, rows_check_worker, k);
  int first = -1;
  for (int w = 0; w < n; w++)
    if (k->bad_row[w] != UINT64_MAX && (first < 0 || k->bad_row[w] < k->bad_row[first]))
      first = w;
  if (first < 0) return true;
  *row = k->bad_row[first];
  snprintf(why, why_size, "%s", k->why[first]);
  return false;
}

/* rows_check_all on host-made outputs: every row the oracle's own (which
 * must pass), then two rows off at one element each (the first must be
 * the one reported), for rows of the special values and many workers. */
START_TEST(oracle_rows_on_every_core) {
  static const wg_primitive ps[] = {WG_SOFTMAX_ROWS, WG_LAYERNORM_ROWS};
  static const wg_type ts[] = {WG_F32, WG_BF16};
  const uint64_t rows = 37, cols = 1000, in_stride = 1003, out_stride = 1001;
  for (size_t pi = 0; pi < WG_COUNT_OF(ps); pi++)
  for (size_t ti = 0; ti < WG_COUNT_OF(ts); ti++) {
    const wg_type t = ts[ti];
    const size_t size = wg_type_size(t);
    unsigned char *in = calloc(rows * in_stride, size), *got = calloc(rows * out_stride, size);
    unsigned char *w = malloc(cols * size), *b = malloc(cols * size);
    double *value = malloc(cols * sizeof *value), *scale = malloc(cols * sizeof *scale);
    rows_check *k = malloc(sizeof *k);
    ck_assert(in && got && w && b && value && scale && k);
    wg_oracle_rownorm_fill(t, in, rows, cols, in_stride, wg_test_seed(), true);
    for (uint64_t j = 0; j < cols; j++) {
      wg_oracle_set(t, w, j, 0.5 + (double)(j % 7) * 0.25);
      wg_oracle_set(t, b, j, (double)(j % 5) - 2.0);
    }
    wg_rownorm_want want = {cols, value, scale};
    for (uint64_t r = 0; r < rows; r++) {
      wg_oracle_rownorm_row(&want, ps[pi], t, in, r * in_stride, cols, w, b, 1e-5);
      for (uint64_t j = 0; j < cols; j++) wg_oracle_set(t, got, r * out_stride + j, value[j]);
    }
    *k = (rows_check){ps[pi], t, rows, cols, in_stride, out_stride, in, got, w, b, 1e-5, {0}, {{0}}};
    uint64_t bad = 0;
    char why[ROWS_CHECK_WHY] = "";
    ck_assert_msg(rows_check_all(k, &bad, why, sizeof why), "%s %s: row %" PRIu64 ", %s",
                  wg_primitive_name(ps[pi]), wg_type_name(t), bad, why);
    for (uint64_t r = 30; r >= 23; r -= 7) { /* row 30, then row 23 */
      /* Off by at least 1 whatever the value (2v + 1 left -1 as it was:
       * once a seed in a few hundred made row 23's value -1 and the test
       * reported row 30). */
      const uint64_t at = r * out_stride + 5;
      const double v = wg_oracle_elem(t, got, at);
      wg_oracle_set(t, got, at, isfinite(v) ? v + 1.0 + fabs(v) : 0.0);
    }
    ck_assert(!rows_check_all(k, &bad, why, sizeof why));
    ck_assert_msg(bad == 23, "%s %s: reported row %" PRIu64 ", not 23 (%s)",
                  wg_primitive_name(ps[pi]), wg_type_name(t), bad, why);
    free(in); free(got); free(w); free(b); free(value); free(scale); free(k);
  }
}
END_TEST

static int launch_on(wg_context *ctx, const rn_case *c, uint64_t in, uint64_t w, uint64_t b,
                     uint64_t out, uint64_t in_stride, uint64_t out_stride, void *stream) {
  switch (c->p) {
  case WG_SOFTMAX_ROWS:
    return wg_softmax_rows(ctx, c->t, in, out, c->rows, c->cols, in_stride, out_stride,
                           stream);
  case WG_LOG_SOFTMAX_ROWS:
    return wg_log_softmax_rows(ctx, c->t, in, out, c->rows, c->cols, in_stride, out_stride,
                               stream);
  case WG_LAYERNORM_ROWS:
    return wg_layer_norm_rows(ctx, c->t, in, w, b, out, c->rows, c->cols, in_stride,
                              out_stride, c->eps, stream);
  default:
    return wg_rms_norm_rows(ctx, c->t, in, w, out, c->rows, c->cols, in_stride, out_stride,
                            c->eps, stream);
  }
}

static int launch(wg_context *ctx, const rn_case *c, uint64_t in, uint64_t w, uint64_t b,
                  uint64_t out, uint64_t in_stride, uint64_t out_stride) {
  return launch_on(ctx, c, in, w, b, out, in_stride, out_stride, NULL);
}

static double uniform(uint64_t seed, uint64_t salt, uint64_t i) {
  return (double)(wg_oracle_random(seed, salt, i) >> 11) * 0x1p-53;
}

/* Elements 0..n of `in` drawn uniform in [-4, 4), a share a worker. */
typedef struct draw_share {
  wg_type t;
  void *in;
  uint64_t n, seed;
} draw_share;

static void draw_worker(void *arg, int worker, int workers) {
  const draw_share *d = arg;
  uint64_t begin, end;
  wg_test_share(d->n, worker, workers, &begin, &end);
  for (uint64_t i = begin; i < end; i++)
    wg_oracle_set(d->t, d->in, i, (uniform(d->seed, 9, i) - 0.5) * 8.0);
}

static void run_case(wg_context *ctx, const rn_case *c, uint64_t seed) {
  const wg_type t = c->t;
  const size_t size = wg_type_size(t);
  const uint64_t in_stride = c->cols + c->in_pad;
  const uint64_t out_stride = c->in_place ? in_stride : c->cols + c->out_pad;
  const uint64_t in_span = c->rows ? (c->rows - 1) * in_stride + c->cols : 0;
  const uint64_t out_span = c->rows ? (c->rows - 1) * out_stride + c->cols : 0;
  const uint64_t in_total = in_span + c->offset + 1, out_total = out_span + 1;
  unsigned char *in = malloc(in_total * size), *got = malloc((c->in_place ? in_total : out_total) * size);
  unsigned char *w = malloc((c->cols + 1) * size), *b = malloc((c->cols + 1) * size);
  ck_assert(in && got && w && b);
  /* What precedes the first row (offset) and what follows the last
   * element (one more) are drawn too; they must stay as they are. */
  draw_share d = {t, in, in_total, seed};
  wg_test_on_cores(in_total < (1u << 16) ? 1 : 32, draw_worker, &d);
  unsigned char *rows0 = in + c->offset * size;
  wg_oracle_rownorm_fill(t, rows0, c->rows, c->cols, in_stride, seed, c->specials);
  for (uint64_t j = 0; j <= c->cols; j++) {
    wg_oracle_set(t, w, j, (uniform(seed, 4, j) - 0.5) * 4.0);
    wg_oracle_set(t, b, j, (uniform(seed, 5, j) - 0.5) * 4.0);
  }
  uint64_t d_in = 0, d_out = 0, d_w = 0, d_b = 0;
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_in, in_total * size));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_w, (c->cols + 1) * size));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_b, (c->cols + 1) * size));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_in, in, in_total * size, NULL));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_w, w, (c->cols + 1) * size, NULL));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_b, b, (c->cols + 1) * size, NULL));
  if (c->in_place) {
    d_out = d_in + c->offset * size;
  } else {
    WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_out, out_total * size));
    WG_TEST_OK(ctx, wg_memset_d8(ctx, d_out, POISON, out_total * size, NULL));
  }
  const bool norm = c->p == WG_LAYERNORM_ROWS || c->p == WG_RMSNORM_ROWS;
  const uint64_t use_w = norm && c->weight ? d_w : 0;
  const uint64_t use_b = c->p == WG_LAYERNORM_ROWS && c->bias ? d_b : 0;
  char what[256];
  snprintf(what, sizeof what, "%s %s rows=%" PRIu64 " cols=%" PRIu64 " in_stride=%" PRIu64
           " out_stride=%" PRIu64 " offset=%" PRIu64 "%s%s%s seed=0x%" PRIx64,
           wg_primitive_name(c->p), wg_type_name(t), c->rows, c->cols, in_stride, out_stride,
           c->offset, use_w ? " weight" : "", use_b ? " bias" : "",
           c->in_place ? " in-place" : "", seed);
  if (getenv("WARPGEN_ROWNORM_TRACE")) /* which case a slow or stuck run is in */
    fprintf(stderr, "case %s\n", what);
  const int rc = launch(ctx, c, d_in + c->offset * size, use_w, use_b, d_out, in_stride,
                        out_stride);
  ck_assert_msg(rc == WG_OK, "%s: %s: %s", what, wg_strerror(rc), wg_errmsg(ctx));
  WG_TEST_OK(ctx, wg_stream_sync(ctx, NULL));
  if (c->in_place)
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got, d_in, in_total * size, NULL));
  else
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got, d_out, out_total * size, NULL));
  const unsigned char *got_rows = c->in_place ? got + c->offset * size : got;
  rows_check *k = malloc(sizeof *k);
  ck_assert(k);
  *k = (rows_check){c->p, t, c->rows, c->cols, in_stride, out_stride, rows0, got_rows,
                    use_w ? w : NULL, use_b ? b : NULL, c->eps, {0}, {{0}}};
  uint64_t bad = 0;
  char why[ROWS_CHECK_WHY];
  ck_assert_msg(rows_check_all(k, &bad, why, sizeof why), "%s: row %" PRIu64 ", %s", what, bad,
                why);
  free(k);
  for (uint64_t r = 0; r < c->rows; r++) {
    if (c->specials && r == 4 && c->p == WG_LAYERNORM_ROWS)
      for (uint64_t j = 0; j < c->cols; j++) /* variance exactly 0: the output is b */
        ck_assert_msg(wg_oracle_elem(t, got_rows, r * out_stride + j) ==
                          (use_b ? wg_oracle_elem(t, b, j) : 0.0),
                      "%s: all-equal row, column %" PRIu64 " is not the bias", what, j);
    /* The gap after the row keeps the poison (in place: the input). */
    for (uint64_t j = c->cols; r + 1 < c->rows && j < out_stride; j++)
      for (size_t byte = 0; byte < size; byte++) {
        const unsigned char expect =
            c->in_place ? rows0[(r * in_stride + j) * size + byte] : (unsigned char)POISON;
        ck_assert_msg(got_rows[(r * out_stride + j) * size + byte] == expect,
                      "%s: row %" PRIu64 " wrote past its end (column %" PRIu64 ")", what, r, j);
      }
  }
  /* Nothing after the last row. */
  if (!c->in_place)
    for (size_t byte = 0; byte < size; byte++)
      ck_assert_msg(got[out_span * size + byte] == POISON, "%s: wrote past the output", what);
  wg_mem_free(ctx, d_in);
  if (!c->in_place) wg_mem_free(ctx, d_out);
  wg_mem_free(ctx, d_w);
  wg_mem_free(ctx, d_b);
  free(in);
  free(got);
  free(w);
  free(b);
}

/* Rows for a row length: enough for several tiles and blocks when short. */
static uint64_t rows_for(uint64_t cols) {
  if (quick()) return cols >= 1000 ? 8 : 70;
  if (cols >= (1u << 20)) return 8; /* every special row (wg_oracle_rownorm_fill) */
  if (cols >= 32768) return 17;
  if (cols >= 8192) return 40;
  if (cols >= 4096) return 60;
  if (cols >= 1000) return 300;
  return 3000;
}

static void gpu_prim(wg_primitive p) {
  const uint64_t seed = wg_test_seed() ^ ((uint64_t)p << 40);
  wg_context *ctx = wg_test_context();
  size_t nspecs = 0;
  wg_spec *specs = call_specs(&nspecs, false, 0);
  wg_test_precompile(specs, nspecs);
  free(specs);
  const uint64_t *cols_list = quick() ? quick_cols : gpu_cols;
  const size_t ncols = quick() ? WG_COUNT_OF(quick_cols) : WG_COUNT_OF(gpu_cols);
  uint64_t n = 0;
  for (size_t ti = 0; ti < WG_COUNT_OF(floats); ti++) {
    const wg_type t = floats[ti];
    const uint64_t vec = 16 / wg_type_size(t);
    for (size_t ci = 0; ci < ncols; ci++) {
      const uint64_t cols = cols_list[ci], rows = rows_for(cols);
      /* Rows of blocks that stage their next row (sm_90 on) or keep part
       * of it in shared memory (f64 softmax) loop over a grid of what
       * the SMs keep (132 blocks of 1024 on an H200): the first case of
       * such lengths has enough rows that every block takes several. */
      const uint64_t looped = cols >= 5000 && cols <= 40000 && rows < 300 ? 300 : rows;
      /* contiguous; padded by whole vectors (still aligned); padded by odd
       * amounts from an odd base (element by element); in place. */
      const rn_case cases[] = {
        {p, t, looped, cols, 0, 0, 0, true, true, false, true, 1e-5},
        {p, t, rows, cols, vec, 2 * vec, 0, true, false, false, true, 1e-3},
        {p, t, rows, cols, 3, 5, 1, false, true, false, true, 0.0 + 1e-6},
        {p, t, rows > 50 ? 50 : rows, cols, 0, 0, 0, false, false, true, true, 1e-5},
        {p, t, 1, cols, 0, 0, 0, true, true, false, false, 1e-5},
        {p, t, 0, cols, 0, 0, 0, true, true, false, false, 1e-5},
      };
      for (size_t k = 0; k < WG_COUNT_OF(cases); k++) {
        /* Time (the host oracle's long double sums: about 1 s a row of 2^20
         * there): rows of 2^20 run the special rows, the element path and
         * one row; padded vectors and in place run at 65536. */
        if (cols >= (1u << 20) && (k == 1 || k == 3 || (k == 2 && t == WG_F64))) continue;
        if (quick() && k != 0 && k != 2 && k != 3) continue;
        run_case(ctx, &cases[k], seed + n++);
      }
    }
    /* Many tiny rows: the grid loops over its tiles, element by element
     * (3 columns) and, in place, in whole vectors held in registers (8
     * vectors a row), enough rows that every group of a looping grid (f16,
     * bf16, f64) takes several tiles; the other held cases' rows fit in
     * one round of the grid. */
    const rn_case many = {p, t, quick() ? 5000 : 400000, many_cols(t, 0), 0, 0, 0, true, true,
                          false, false, 1e-5};
    run_case(ctx, &many, seed + n++);
    const rn_case many_held = {p, t, quick() ? 5000 : 100000, many_cols(t, 1), 0, 0, 0, true,
                               true, true, false, 1e-5};
    run_case(ctx, &many_held, seed + n++);
  }
  wg_context_destroy(ctx);
}

/* The jobs of gpu_streams_and_graphs: job j its own input and output,
 * the weight and bias of its type. */
enum { RN_JOBS = 12 };
typedef struct rn_jobs {
  wg_context *ctx;
  rn_case c[RN_JOBS];
  uint64_t in, out, w[2], b[2]; /* [0] f32, [1] bf16 */
  size_t job_bytes;
} rn_jobs;

static void rn_job(void *arg, int j, CUstream stream) {
  const rn_jobs *r = arg;
  const rn_case *c = &r->c[j];
  const int wb = c->t == WG_BF16;
  WG_TEST_OK(r->ctx, launch_on(r->ctx, c, r->in + (uint64_t)j * r->job_bytes, r->w[wb],
                               r->b[wb], r->out + (uint64_t)j * r->job_bytes, c->cols, c->cols,
                               stream));
}

/* Calls overlapping on four streams, then captured into a graph replayed
 * twice beside eager calls on another stream (test_cuda_run_jobs): each
 * job (an operation, weight and bias) checked row by row against the
 * oracle. Eight jobs are f32, 300 rows of 1000 and of 16384 (two blocks an
 * SM of 512 threads); two are bf16 rows of 16384: softmax, whose blocks
 * bring their next row into shared memory with bulk copies on sm_90 (the
 * staged rows), and layernorm; two are rows past what registers hold:
 * f32 softmax's 70 rows of 65536, the rest kept in shared memory, and
 * bf16 layernorm's 36 rows of 2^18, too long to hold and streamed twice. */
START_TEST(gpu_streams_and_graphs) {
  wg_context *ctx = wg_test_context();
  test_cuda cu;
  test_cuda_open(ctx, &cu);
  enum { JOBS = RN_JOBS, STREAMS = 4, ROWS = 300, MOST_COLS = 1 << 18, MOST_SIZE = 4 };
  rn_jobs r = {.ctx = ctx, .job_bytes = (size_t)ROWS * 16384 * MOST_SIZE};
  /* The two past registers, within job_bytes: 70 x 65536 x 4 bytes, 36 x
   * 2^18 x 2. */
  const rn_case longest[2] = {
      {WG_SOFTMAX_ROWS, WG_F32, 70, 65536, 0, 0, 0, true, true, false, false, 1e-5},
      {WG_LAYERNORM_ROWS, WG_BF16, 36, MOST_COLS, 0, 0, 0, true, true, false, false, 1e-5}};
  for (int j = 0; j < JOBS; j++)
    r.c[j] = j >= 10 ? longest[j - 10]
                     : (rn_case){prims[j % 4], j < 8 ? WG_F32 : WG_BF16, ROWS, j < 4 ? 1000 : 16384,
                                 0, 0, 0, true, true, false, false, 1e-5};
  const wg_type wb_types[2] = {WG_F32, WG_BF16};
  unsigned char *in = malloc(JOBS * r.job_bytes), *got = malloc(r.job_bytes);
  unsigned char *w[2], *b[2];
  for (int k = 0; k < 2; k++) {
    w[k] = malloc(MOST_COLS * MOST_SIZE);
    b[k] = malloc(MOST_COLS * MOST_SIZE);
    ck_assert(w[k] && b[k]);
  }
  double *value = malloc(MOST_COLS * sizeof *value), *scale = malloc(MOST_COLS * sizeof *scale);
  ck_assert(in && got && value && scale);
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &r.in, JOBS * r.job_bytes));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &r.out, JOBS * r.job_bytes));
  const uint64_t seed = wg_test_seed() ^ 0x57ea;
  for (int j = 0; j < JOBS; j++)
    for (uint64_t i = 0; i < r.c[j].rows * r.c[j].cols; i++)
      wg_oracle_set(r.c[j].t, in + (size_t)j * r.job_bytes, i,
                    (uniform(seed, 1, (uint64_t)j * r.job_bytes + i) - 0.5) * 16.0);
  for (int k = 0; k < 2; k++) {
    for (uint64_t j = 0; j < MOST_COLS; j++) {
      wg_oracle_set(wb_types[k], w[k], j, (uniform(seed, 4, j) - 0.5) * 4.0);
      wg_oracle_set(wb_types[k], b[k], j, (uniform(seed, 5, j) - 0.5) * 4.0);
    }
    WG_TEST_OK(ctx, wg_mem_alloc(ctx, &r.w[k], MOST_COLS * MOST_SIZE));
    WG_TEST_OK(ctx, wg_mem_alloc(ctx, &r.b[k], MOST_COLS * MOST_SIZE));
    WG_TEST_OK(ctx, wg_memcpy_htod(ctx, r.w[k], w[k], MOST_COLS * MOST_SIZE, NULL));
    WG_TEST_OK(ctx, wg_memcpy_htod(ctx, r.b[k], b[k], MOST_COLS * MOST_SIZE, NULL));
  }
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, r.in, in, JOBS * r.job_bytes, NULL));
  CUstream streams[STREAMS];
  for (int k = 0; k < STREAMS; k++) CU(cu.StreamCreate(&streams[k], CU_STREAM_NON_BLOCKING));
  for (int round = 0; round < 2; round++) {
    WG_TEST_OK(ctx, wg_memset_d8(ctx, r.out, POISON, JOBS * r.job_bytes, NULL));
    WG_TEST_OK(ctx, wg_stream_sync(ctx, NULL));
    test_cuda_run_jobs(&cu, streams, STREAMS, JOBS, round == 1, rn_job, &r);
    for (int j = 0; j < JOBS; j++) {
      const rn_case *c = &r.c[j];
      const int k = c->t == WG_BF16;
      const bool norm = c->p == WG_LAYERNORM_ROWS || c->p == WG_RMSNORM_ROWS;
      WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, got, r.out + (uint64_t)j * r.job_bytes,
                                     (size_t)(c->rows * c->cols * wg_type_size(c->t)), NULL));
      wg_rownorm_want want = {c->cols, value, scale};
      for (uint64_t row = 0; row < c->rows; row++) {
        wg_oracle_rownorm_row(&want, c->p, c->t, in + (size_t)j * r.job_bytes,
                              row * c->cols, c->cols, norm ? w[k] : NULL,
                              c->p == WG_LAYERNORM_ROWS ? b[k] : NULL, c->eps);
        uint64_t col = 0;
        char why[320];
        ck_assert_msg(wg_oracle_rownorm_check(&want, c->t, got, row * c->cols, &col, why,
                                              sizeof why),
                      "round %d job %d (%s %s cols=%" PRIu64 "): row %" PRIu64 ", %s "
                      "(seed 0x%016" PRIx64 ")", round, j, wg_primitive_name(c->p),
                      wg_type_name(c->t), c->cols, row, why, wg_test_seed());
      }
    }
  }
  for (int k = 0; k < STREAMS; k++) CU(cu.StreamDestroy(streams[k]));
  const uint64_t device[] = {r.in, r.out, r.w[0], r.b[0], r.w[1], r.b[1]};
  for (size_t k = 0; k < WG_COUNT_OF(device); k++) wg_mem_free(ctx, device[k]);
  void *host[] = {in, got, w[0], b[0], w[1], b[1], value, scale};
  for (size_t k = 0; k < WG_COUNT_OF(host); k++) free(host[k]);
  wg_context_destroy(ctx);
}
END_TEST

START_TEST(gpu_softmax) { gpu_prim(WG_SOFTMAX_ROWS); }
END_TEST
START_TEST(gpu_log_softmax) { gpu_prim(WG_LOG_SOFTMAX_ROWS); }
END_TEST
START_TEST(gpu_layernorm) { gpu_prim(WG_LAYERNORM_ROWS); }
END_TEST
START_TEST(gpu_rmsnorm) { gpu_prim(WG_RMSNORM_ROWS); }
END_TEST

/* The same bits on every run, and a spec's cols= any length. */
START_TEST(gpu_repeat_and_spec) {
  wg_context *ctx = wg_test_context();
  const uint64_t rows = 300, cols = 5000, size = 4;
  float *in = malloc(rows * cols * size), *a = malloc(rows * cols * size),
        *b = malloc(rows * cols * size);
  ck_assert(in && a && b);
  for (uint64_t i = 0; i < rows * cols; i++) in[i] = (float)(uniform(wg_test_seed(), 9, i) * 10.0);
  uint64_t d_in = 0, d_out = 0;
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_in, rows * cols * size));
  WG_TEST_OK(ctx, wg_mem_alloc(ctx, &d_out, rows * cols * size));
  WG_TEST_OK(ctx, wg_memcpy_htod(ctx, d_in, in, rows * cols * size, NULL));
  for (size_t p = 0; p < WG_COUNT_OF(prims); p++) {
    rn_case c = {prims[p], WG_F32, rows, cols, 0, 0, 0, false, false, false, false, 1e-5};
    WG_TEST_OK(ctx, launch(ctx, &c, d_in, 0, 0, d_out, cols, cols));
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, a, d_out, rows * cols * size, NULL));
    /* A spec made for other lengths (a warp's, a block's that keeps part
     * of its rows in shared memory, the any-length block's): the same
     * values within the bound, and the same bits again. */
    static const char *const shapes[] = {"cols=64", "cols=1024", "cols=40960", "cols=0"};
    for (size_t s = 0; s < WG_COUNT_OF(shapes); s++) {
      char text[128];
      snprintf(text, sizeof text, "%s f32 %s", wg_primitive_name(prims[p]), shapes[s]);
      wg_spec spec;
      WG_TEST_OK(ctx, wg_spec_parse(ctx, &spec, text));
      WG_TEST_OK(ctx, wg_memset_d8(ctx, d_out, POISON, rows * cols * size, NULL));
      WG_TEST_OK(ctx, wg_rownorm_spec(ctx, &spec, d_in, 0, 0, d_out, rows, cols, cols, cols,
                                      1e-5, NULL));
      WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, b, d_out, rows * cols * size, NULL));
      for (uint64_t i = 0; i < rows * cols; i++)
        ck_assert_msg(fabsf(a[i] - b[i]) <= 1e-5f * (1.0f + fabsf(a[i])),
                      "%s: element %" PRIu64 ": %g vs %g", text, i, a[i], b[i]);
    }
    WG_TEST_OK(ctx, launch(ctx, &c, d_in, 0, 0, d_out, cols, cols));
    WG_TEST_OK(ctx, wg_memcpy_dtoh(ctx, b, d_out, rows * cols * size, NULL));
    ck_assert_msg(memcmp(a, b, rows * cols * size) == 0, "%s: bits differ between runs",
                  wg_primitive_name(prims[p]));
  }
  /* Overlap that is not in place is refused. */
  ck_assert_int_eq(wg_softmax_rows(ctx, WG_F32, d_in, d_in + 4, 2, 8, 8, 8, NULL), WG_EINVAL);
  ck_assert(strstr(wg_errmsg(ctx), "overlap") != NULL);
  ck_assert_int_eq(wg_softmax_rows(ctx, WG_F32, d_in + 2, d_out, 1, 8, 8, 8, NULL), WG_EALIGN);
  wg_mem_free(ctx, d_in);
  wg_mem_free(ctx, d_out);
  free(in);
  free(a);
  free(b);
  wg_context_destroy(ctx);
}
END_TEST

static TCase *test_case(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, 1800);
  suite_add_tcase(s, tc);
  return tc;
}

/* The gpu part has a test case an operation (CK_RUN_CASE=softmax,
 * log-softmax, layernorm, rmsnorm, repeat or streams runs one), so that a script
 * can run them side by side: each checks its launches against the host
 * oracle, whose long double sums over rows of 2^20 take most of the time. */
static Suite *suite(const char *part) {
  Suite *s = suite_create("rownorm");
  if (!strcmp(part, "unit")) {
    TCase *tc = test_case(s, part);
    tcase_add_test(tc, shapes_hold_their_rows);
    tcase_add_test(tc, staged_weight_room);
    tcase_add_test(tc, spec_text);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, oracle_rows_on_every_core);
  } else if (!strcmp(part, "nvrtc")) {
    tcase_add_test(test_case(s, part), every_shape_compiles);
  } else {
    tcase_add_test(test_case(s, "softmax"), gpu_softmax);
    tcase_add_test(test_case(s, "log-softmax"), gpu_log_softmax);
    tcase_add_test(test_case(s, "layernorm"), gpu_layernorm);
    tcase_add_test(test_case(s, "rmsnorm"), gpu_rmsnorm);
    tcase_add_test(test_case(s, "repeat"), gpu_repeat_and_spec);
    tcase_add_test(test_case(s, "streams"), gpu_streams_and_graphs);
  }
  return s;
}

int main(int argc, char **argv) {
  const char *part = argc > 1 ? argv[1] : "unit";
  if (!strcmp(part, "--specs")) {
    size_t n = 0;
    wg_spec *list = call_specs(&n, false, 0);
    for (size_t i = 0; i < n; i++) {
      char text[256];
      wg_spec_format(text, sizeof text, &list[i]);
      printf("%s\n", text);
    }
    free(list);
    return 0;
  }
  if (!strcmp(part, "--specs-for")) { /* the specs calls with these row lengths use */
    for (int i = 2; i < argc; i++)
      for (size_t p = 0; p < WG_COUNT_OF(prims); p++)
        for (size_t t = 0; t < WG_COUNT_OF(floats); t++) {
          const wg_spec s = spec_for(prims[p], floats[t], strtoull(argv[i], NULL, 10));
          char text[256];
          wg_spec_format(text, sizeof text, &s);
          printf("%s\n", text);
        }
    return 0;
  }
  if (!strcmp(part, "nvrtc") && argc > 2) nvrtc_arch = atoi(argv[2]);
  if (!strcmp(part, "gpu")) {
    if (!wg_test_gpu_begin("rownorm", NULL)) return 77;
  } else if (strcmp(part, "unit") && strcmp(part, "nvrtc")) {
    fprintf(stderr, "usage: test_rownorm [unit|nvrtc [ARCH]|gpu|--specs|--specs-for COLS...]\n");
    return 2;
  }
  return wg_test_run_suite(suite(part));
}
