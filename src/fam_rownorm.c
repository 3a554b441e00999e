/*
 * fam_rownorm.c - the fused row kernels: softmax-rows, log-softmax-rows,
 * layernorm-rows and rmsnorm-rows. One family descriptor (validation, the
 * cols= key, the kernel name, the source from templates/rownorm.cu, the
 * operation a template value) and the public calls that launch them.
 *
 * The shape comes from the row length: a logical warp of 1 to 32 lanes
 * for short rows, a warp, or a block of up to 1024 threads, each lane
 * holding up to 4 16-byte vectors in registers (f32 rows past 8192
 * elements: up to 8), so that a row is read once. Longer f32 rows, and
 * f64 softmax and log_softmax rows, keep what the registers of a block of
 * 1024 cannot hold in its shared memory, from sm_80 on, as far as shared
 * memory goes (`kept`, `keeps_rest`); other rows, and rows longer still,
 * are streamed twice by a block of 1024 (templates/rownorm.cu). On sm_90 and
 * newer, softmax blocks alone on their SM stage their next row in shared
 * memory while they work on this one (`staging`).
 */
#include "driver.h"
#include "fam_rownorm.h"
#include "family.h"
#include "kernel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* gridDim.x may not exceed this. */
#define WG_MAX_GRID 0x7fffffffull
/* Threads a block of groups of at most a warp. */
#define WG_ROWNORM_BLOCK 256u

/* The four primitives as data: the template's operation and what it is. */
typedef struct rownorm_op {
  wg_primitive primitive;
  const char *op;   /* WG_OP of templates/rownorm.cu */
  const char *what; /* for the source's header */
  bool norm;        /* a normalisation with weight (and bias), not a softmax */
} rownorm_op;

static const rownorm_op rownorm_ops[] = {
  {WG_SOFTMAX_ROWS, "0", "softmax (exp(x - max) / sum)", false},
  {WG_LOG_SOFTMAX_ROWS, "1", "log_softmax (x - max - log(sum))", false},
  {WG_LAYERNORM_ROWS, "2", "layernorm ((x - mean) / sqrt(var + eps) * w + b)", true},
  {WG_RMSNORM_ROWS, "3", "rmsnorm (x / sqrt(mean(x^2) + eps) * w)", true},
};

static const rownorm_op *op_of(wg_primitive p) {
  for (size_t i = 0; i < WG_COUNT_OF(rownorm_ops); i++)
    if (rownorm_ops[i].primitive == p) return &rownorm_ops[i];
  return NULL;
}

/* What the H200 preferred, by element size (2^26 elements, x copy; the
 * sweep is in docs/rownorm-design.md). f32: lanes of rows that fit
 * a warp hold 2 vectors, not 4 (rows of 32 0.86 -> 0.97 softmax, 128 0.86
 * -> 0.97), an SM keeps 1024 threads (64 registers a thread: 1024 and
 * 4096 columns 0.94 -> 0.96), and the grid covers every tile rather than
 * looping over what is resident, so that a finished block's SM takes the
 * next tile at once instead of its blocks waiting on one another's rows
 * (the loop's loads of the next rows cannot move above this row's stores,
 * which may be the same memory). The 16-bit types lost with each of these
 * (their lanes hold twice the values, and 64 registers spill them), and
 * f64 keeps what 16-bit does. */
typedef struct rownorm_tuning {
  unsigned short_chunks;   /* vectors a lane holds while the row fits a warp */
  unsigned threads_per_sm; /* what __launch_bounds__ asks to keep resident */
  bool full_grid;          /* a block a tile, not a block per resident slot */
} rownorm_tuning;

/* A type's tuning, for rows that a warp or less holds (warp_rows) or for
 * blocks, by operation: a measured exception is a line here. 16-bit
 * softmax and log_softmax rows of a warp or less take f32's: their
 * kernels, one exp an element since stop 22, take 60-64 registers, so
 * 1024 threads an SM spill nothing, and 2 vectors a lane put more lanes
 * on a row. On an H100 (2^26 elements, x copy, two runs, 2026-12-07) bf16
 * and f16 softmax and log_softmax at 32, 128 and 1024 columns went from
 * 0.90-0.92 to 0.96-0.98, and on an H200 (stop 41) 1024 columns from
 * 0.88 to 0.95. So do rmsnorm's (held as loaded, `raw`, below): on the
 * H200 (stop 41, two runs) bf16 and f16 rms_norm at 32, 128, 512 and 1024
 * columns went from 0.85-0.89 to 0.90-0.96. layernorm's lost so (bf16 32
 * 0.80 -> 0.69, 512 0.80 -> 0.40, 1024 0.83 -> 0.33: three passes over
 * values unpacked to twice the registers, spilled at 64) and keeps the
 * 16-bit tuning: one part of f32's at a time, at 512 threads an SM (2
 * vectors a lane, a block a tile, or both), measured the same or lower
 * (H100, stop 42: bf16 128 columns 0.92 -> 0.86-0.90, 1024 0.89-0.93 ->
 * 0.88-0.93). */
static rownorm_tuning tuning_of(wg_primitive primitive, wg_type type, bool warp_rows) {
  static const rownorm_tuning wide = {2, 1024, true}, narrow = {4, 512, false};
  const size_t size = wg_types[type].size;
  if (size == 2 && warp_rows && primitive != WG_LAYERNORM_ROWS) return wide;
  return size == 4 ? wide : narrow;
}
/* Vectors a lane of a block row holds while WG_BLOCK_CHUNK_ROWS threads
 * hold the row so; longer rows take max_chunks a lane (only f32 has more
 * than 4). f32 rows of 8193 to 16384 elements are then 512 threads of 8
 * vectors, two blocks an SM whose folds and loads overlap, not one block
 * of 1024 x 4 alone on its SM: on the H200 (2^26 elements, x copy, one
 * lease, 2026-12-03) rows of 16384 went from 0.86 / 0.85 / 0.79 / 0.86 to
 * 0.94 / 0.94 / 0.90 / 0.91 (softmax, log_softmax, layer_norm,
 * rms_norm); 8192 and 32768 kept their shapes. (Their layernorm and
 * rmsnorm keep 4 of the 8 in shared memory since stop 42: shape_for.) */
#define WG_BLOCK_CHUNKS 4u
#define WG_BLOCK_CHUNK_ROWS 512u

/* --- the shape ------------------------------------------------------------ */

typedef struct rownorm_shape {
  unsigned group;  /* lanes a row: 1..32 within a warp, 64..1024 a block */
  unsigned chunks; /* 16-byte vectors a lane holds in registers */
  unsigned kept;   /* and in shared memory (blocks of 1024 only) */
  unsigned rows_per_round;
  unsigned block;  /* threads a block */
  bool staged;     /* the next row comes into shared memory meanwhile */
  bool wb_staged;  /* weight and bias come into shared memory (wg_rownorm_wb_shared_bytes) */
  bool raw;        /* lanes hold the 16 bytes as loaded (WG_HOLD_RAW) */
  unsigned threads_per_sm; /* the tuning's (tuning_of) */
  bool full_grid;          /* the tuning's */
} rownorm_shape;

/* Softmax and log_softmax blocks that are alone on their SM, from sm_90
 * on, loop over rows with the next row on its way into shared memory
 * (bulk copies, cp.async.bulk) while they fold and write this one: else
 * memory idles while the block folds. What the H200 measured (2^26
 * elements, x copy, docs/rownorm-design.md): f32 rows of 16384 0.77
 * -> 0.85 (since run by two blocks an SM, 0.94, and no longer staged),
 * bf16 16384 0.60 -> 0.79, bf16 32768 0.74 -> 0.81; but f32
 * 32768 (128 KiB a row) 0.89 -> 0.82, f32 8192 (two blocks an SM) 0.91 ->
 * 0.86, and layernorm and rmsnorm lost at most lengths (bf16 16384
 * rms_norm, blocks of 512: 0.89 -> 0.79), so those keep their loads,
 * except the 16-bit types' blocks of 1024 (rows of 32768, looping over
 * rows), where the staged row goes first in shared memory and weight and
 * bias after it: old and new library alternating in one lease
 * (2026-12-04), f16 layer_norm 0.56-0.58 -> 0.70-0.71, rms_norm 0.68-0.69
 * -> 0.78-0.83, bf16 layer_norm 0.61-0.63 -> 0.69-0.70, rms_norm 0.72-0.74
 * -> 0.80; f64's blocks of 1024 (rows of 8192) lost (rms_norm 0.92 ->
 * 0.86). A cluster of blocks a row instead (each SM holding blocks
 * of several rows) measured worse everywhere: f32 32768 0.54-0.75. */
#define WG_STAGED_GROUP 512u
#define WG_STAGED_MOST (64u * 1024u)
#define WG_STAGED_ARCH 90

static uint64_t pow2_at_least(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

/* Vectors a lane may hold: 32 f32 values in registers (8 f64: their
 * arithmetic takes registers in pairs, and 16 spilled). */
static unsigned max_chunks(wg_type type) { return wg_types[type].size == 4 ? 8u : 4u; }

/* What a shape holds of a row: bytes, and elements of `type`. */
static size_t held_bytes(rownorm_shape s) { return (size_t)s.group * (s.chunks + s.kept) * 16u; }
static unsigned held_elements(rownorm_shape s, wg_type type) {
  return s.group * (s.chunks + s.kept) * (16u / (unsigned)wg_types[type].size);
}

/* Bytes of dynamic shared memory a row takes: a staged row, what the shape
 * holds; a kept one, what its registers do not. */
static size_t row_shared_bytes(rownorm_shape s) {
  return s.staged ? held_bytes(s) : (size_t)s.group * s.kept * 16u;
}

/* Blocks an SM keeps: what __launch_bounds__ asks for, the shape's
 * threads an SM (tuning_of: 512 leaves a thread up to 128 registers, for
 * a lane holds a row's values in registers) over the block's; a block of
 * 1024 has no choice. */
static unsigned blocks_per_sm(rownorm_shape s) {
  return s.block >= s.threads_per_sm ? 1u : s.threads_per_sm / s.block;
}

/* Layernorm and rmsnorm blocks that loop over rows (the types whose
 * tuning is not full_grid: f16, bf16, f64) and hold rows of 8192 elements
 * or more copy weight and bias into shared memory with cp.async (sm_80 on)
 * once, as the block starts, so that the output of each of their rows
 * reads them there instead of waiting on global loads one after another
 * (templates/rownorm.cu, wg_wb_start). On the H200 (2^26 elements, x copy,
 * old and new library alternating, five runs each over four leases,
 * 2026-12-04), the means: bf16 rms_norm 8192 0.89 -> 0.91, 16384 0.88 ->
 * 0.90, layer_norm 8192 0.82 -> 0.85, 16384 0.78 -> 0.79; single runs
 * differ by up to 3 %, so only the means show it. f64 8192 and bf16 32768
 * measured the same. Shorter rows lost, their weight being L1 hits
 * already (bf16 rms_norm 2048 0.88-0.89 -> 0.85); f32 blocks take one row
 * each and so would copy for every row: their layer_norm lost 1-3 % at
 * 8192 to 32768 columns, and rms_norm fell at 2048 and 4096 (0.95 -> 0.60
 * and 0.87). */
#define WG_WB_STAGED_ARCH 80
#define WG_WB_STAGED_LEAST 8192u /* elements a shape holds */

/* 16-bit rows held as loaded (WG_HOLD_RAW in templates/rownorm.cu): the
 * layernorm and rmsnorm blocks of 1024, for room beside weight and bias
 * (H100, 2026-12-05: bf16 layer_norm 32768 0.76-0.79 -> 0.83-0.85 of
 * copy; shorter blocks lost, bf16 layer_norm 16384 0.84-0.88 -> 0.67), and
 * rmsnorm rows of a warp or less, so that an SM keeps 1024 threads at 64
 * registers where 83 kept 512 (H100, stop 37, two runs each: bf16 32
 * columns 0.89-0.90 -> 0.92, 128 0.88 -> 0.89, 1024 0.88 -> 0.90, f16
 * alike). layernorm's warp rows lost so (bf16 32 0.93 -> 0.88: an unpack
 * an element for each of its three passes, and spills at 1024), as did
 * rmsnorm blocks of 128 to 512 (stop 34, 4096 columns 0.87-0.95 ->
 * 0.73-0.83). */

/* s, staged and held where the rules above say. */
static rownorm_shape staging(rownorm_shape s, wg_primitive primitive, wg_type type, int arch) {
  const bool norm = op_of(primitive)->norm;
  const bool looping = !s.full_grid;
  const bool narrow = wg_types[type].size == 2; /* f16, bf16 */
  s.raw = narrow && norm &&
          (s.group == 1024 || (s.group <= 32 && primitive == WG_RMSNORM_ROWS));
  s.staged = arch >= WG_STAGED_ARCH && s.kept == 0 &&
             (!norm || (s.group == 1024 && looping && narrow)) &&
             s.group >= WG_STAGED_GROUP && blocks_per_sm(s) == 1 &&
             held_bytes(s) <= WG_STAGED_MOST;
  s.wb_staged = arch >= WG_WB_STAGED_ARCH && held_elements(s, type) >= WG_WB_STAGED_LEAST &&
                looping && norm;
  return s;
}

/* Rows past what the registers of a block of 1024 hold keep the rest of
 * the row in its shared memory (templates/rownorm.cu, WG_KEPT: cp.async,
 * sm_80 on), so that they are read once, not streamed twice. Vectors a
 * lane keeps there, at most: what a block may opt in to on the
 * architecture (227 KiB from sm_90, 163 KiB on sm_80 and sm_87, 99 KiB on
 * the others) less 19 KiB: the block's static shared memory (the folds'
 * buffers, up to 3 KiB) always fits beside it. */
#define WG_KEPT_ARCH 80
#define WG_KEPT_ROOMIEST_ARCH 90 /* spec_cols rounds lengths to its shapes */
static unsigned kept_most(int arch) {
  switch (arch) {
  case 80: case 87: return 9;                       /* 144 KiB */
  case 90: case 100: case 103: case 110: return 13; /* 208 KiB */
  default: return arch >= WG_KEPT_ARCH ? 5u : 0u;   /* 80 KiB */
  }
}

/* Where keeping pays: f32 rows, and f64 softmax and log_softmax. On an
 * H100 (stop 39, `bench/experiments/ab.sh`, x copy, streamed -> kept, two
 * runs each): f32 65536 softmax 0.66-0.68 -> 0.92, layer_norm 0.60 ->
 * 0.80, rms_norm 0.64 -> 0.81; f64 16384 softmax 0.59 -> 0.66,
 * log_softmax 0.56 -> 0.68, 32768 0.58-0.60 -> 0.59-0.62. Where a
 * streamed row's second read mostly hits the L2 (rows of 128 KiB), one
 * block of 1024 an SM lost to the streamed blocks: f64 rms_norm 16384
 * 0.81 -> 0.72, layer_norm 0.71 -> 0.70, bf16 65536 softmax 0.75 -> 0.69,
 * rms_norm 0.77 -> 0.72 (only bf16 layer_norm gained, 0.66 -> 0.68). */
static bool keeps_rest(wg_primitive primitive, wg_type type) {
  return type == WG_F32 || (type == WG_F64 && !op_of(primitive)->norm);
}

/* f32 softmax and log_softmax rows of 16385 to 32768 elements: two
 * blocks an SM of 512 lanes, 8 vectors each in registers and the rest
 * kept (up to 64 KiB a block), whose folds and loads overlap, in place of
 * one block of 1024 x 8 alone on its SM; where the SM's shared memory
 * holds both blocks' kept parts. H100, stop 39, x copy: softmax 32768
 * 0.91-0.94 -> 0.97, log_softmax 0.93-0.95 -> 0.97. The norms lost
 * (layer_norm 0.89-0.91 -> 0.81, rms_norm 0.93-0.95 -> 0.84): their
 * weight (and bias) loads come on top of the kept row's. */
static bool pairs_blocks(wg_primitive primitive, wg_type type, uint64_t vectors, int arch) {
  const uint64_t pair_rows = WG_BLOCK_CHUNK_ROWS * max_chunks(type);
  return type == WG_F32 && !op_of(primitive)->norm && vectors > pair_rows &&
         vectors <= 2 * pair_rows && kept_most(arch) >= 9;
}

/* f32 layernorm and rmsnorm blocks of WG_BLOCK_CHUNK_ROWS (rows of 8193
 * to 16384) hold WG_BLOCK_CHUNKS vectors a lane in registers and keep the
 * rest in shared memory: at 8 a lane and 64 registers they spill (10
 * spill instructions for layernorm). H100, stop 42, x copy, two runs:
 * 12288 layer_norm 0.97 -> 0.97, rms_norm 0.97 -> 0.98; 16384 layer_norm
 * 0.94 -> 0.95, rms_norm 0.95 -> 0.97. Blocks of 1024 so lost (24576
 * layer_norm 0.93 -> 0.90). s: the shape as shape_for has it, before. */
static bool norm_block_keeps(wg_primitive primitive, wg_type type, rownorm_shape s, int arch) {
  return type == WG_F32 && op_of(primitive)->norm && s.group == WG_BLOCK_CHUNK_ROWS &&
         s.chunks > WG_BLOCK_CHUNKS && kept_most(arch) >= s.chunks - WG_BLOCK_CHUNKS;
}

/* Short rows (what a warp holds at the type's short_chunks vectors a
 * lane): the fewest lanes, a power of two, that hold the row so (at least
 * 2 lanes once a row has 2 vectors, so a lane pair reads whole 32-byte
 * sectors), and up to 4 rows in flight when a lane holds fewer than 4
 * vectors. Longer rows: a warp or a block at up to 4 vectors a lane while
 * WG_BLOCK_CHUNK_ROWS threads hold the row so, then up to max_chunks
 * (f32: 8; every other type's max_chunks is 4, so its blocks grow to
 * 1024 threads of 4 instead). On the H200
 * (2^26 f32, x copy), 4 a lane beat 8: rows of 1024 0.89 -> 0.95
 * (softmax), rows of 4096 0.86 -> 0.94. Past that, a block of 1024 keeps
 * the rest in shared memory where the architecture has room (kept_most).
 * cols 0 (any): the largest block, without a kept part. */
static rownorm_shape shape_for(wg_primitive primitive, wg_type type, int64_t cols, int arch) {
  const uint64_t vec = 16u / wg_types[type].size, most = max_chunks(type);
  const rownorm_tuning block = tuning_of(primitive, type, false),
                       warp = tuning_of(primitive, type, true);
  rownorm_shape s = {1024, (unsigned)most, 0, 1, 1024, false, false, false,
                     block.threads_per_sm, block.full_grid};
  const uint64_t vectors = cols > 0 ? ((uint64_t)cols + vec - 1) / vec : UINT64_MAX;
  if (vectors > 1024 * most) {
    const uint64_t chunks = cols > 0 ? (vectors + 1023) / 1024 : UINT64_MAX;
    if (keeps_rest(primitive, type) && chunks - most <= kept_most(arch))
      s.kept = (unsigned)(chunks - most);
    return staging(s, primitive, type, arch);
  }
  if (pairs_blocks(primitive, type, vectors, arch)) {
    s.group = s.block = WG_BLOCK_CHUNK_ROWS;
    s.kept = (unsigned)((vectors + WG_BLOCK_CHUNK_ROWS - 1) / WG_BLOCK_CHUNK_ROWS - most);
    return staging(s, primitive, type, arch);
  }
  const uint64_t short_chunks = warp.short_chunks;
  const uint64_t per_lane = vectors <= 32 * short_chunks        ? short_chunks
                            : vectors <= WG_BLOCK_CHUNK_ROWS * WG_BLOCK_CHUNKS ? WG_BLOCK_CHUNKS
                                                                               : most;
  uint64_t group = pow2_at_least((vectors + per_lane - 1) / per_lane);
  if (vectors >= 2 && group < 2) group = 2;
  s.group = (unsigned)group;
  s.chunks = (unsigned)((vectors + group - 1) / group);
  if (norm_block_keeps(primitive, type, s, arch)) {
    s.kept = s.chunks - WG_BLOCK_CHUNKS;
    s.chunks = WG_BLOCK_CHUNKS;
  }
  s.rows_per_round = group <= 32 && s.chunks < 4 ? 4u / s.chunks : 1u;
  s.block = group <= 32 ? WG_ROWNORM_BLOCK : (unsigned)group;
  if (group <= 32) {
    s.threads_per_sm = warp.threads_per_sm;
    s.full_grid = warp.full_grid;
  }
  return staging(s, primitive, type, arch);
}

/* The cols= of the kernel a call with rows of `cols` uses: what its shape
 * holds on the roomiest architecture (so nearby lengths share a kernel),
 * 0 where that shape streams the row. An arch with less room streams some
 * of those lengths with the same kernel. */
static int64_t spec_cols(wg_primitive primitive, wg_type type, uint64_t cols) {
  if (cols == 0 || cols > INT64_MAX) return 0;
  const rownorm_shape s = shape_for(primitive, type, (int64_t)cols, WG_KEPT_ROOMIEST_ARCH);
  const unsigned holds = held_elements(s, type);
  return holds >= cols ? (int64_t)holds : 0;
}

/* --- the descriptor -------------------------------------------------------- */

/* spec.c has checked the rest: no operator, no expressions, no key but
 * cols= away from its default. */
static int rownorm_validate(wg_context *ctx, const wg_spec *s, int arch) {
  (void)arch;
  if (!wg_types[s->type].is_float)
    return wg_fail(ctx, WG_ESPEC, "type: '%s' takes f16, bf16, f32 or f64, not %s",
                   wg_primitives[s->primitive].name, wg_types[s->type].name);
  if (s->cols < 0)
    return wg_fail(ctx, WG_ESPEC, "cols: %lld is negative", (long long)s->cols);
  return WG_OK;
}

static void rownorm_format_keys(wg_buf *out, const wg_spec *s) {
  wg_buf_printf(out, " cols=%lld", (long long)s->cols);
}

static size_t rownorm_shared_bytes(const wg_spec *c, unsigned block_size) {
  (void)block_size;
  return row_shared_bytes(shape_for(c->primitive, c->type, c->cols, c->arch));
}

static void rownorm_name_suffix(wg_buf *out, const wg_spec *c) {
  if (c->cols) wg_buf_printf(out, "_c%lld", (long long)c->cols);
}

static int rownorm_source(wg_context *ctx, wg_buf *out, const wg_spec *c) {
  const rownorm_op *op = op_of(c->primitive);
  if (!op)
    return wg_fail(ctx, WG_ESPEC, "'%s' is not a fused row kernel",
                   wg_primitives[c->primitive].name);
  const rownorm_shape shape = shape_for(c->primitive, c->type, c->cols, c->arch);
  char spec_text[256], kernel[128], block[16], group[16], chunks[16], kept[16], rpr[16],
      min_blocks[16], summary[400];
  wg_spec_format(spec_text, sizeof spec_text, c);
  wg_kernel_name(kernel, sizeof kernel, c);
  snprintf(block, sizeof block, "%u", shape.block);
  snprintf(group, sizeof group, "%u", shape.group);
  snprintf(chunks, sizeof chunks, "%u", shape.chunks);
  snprintf(kept, sizeof kept, "%u", shape.kept);
  snprintf(rpr, sizeof rpr, "%u", shape.rows_per_round);
  snprintf(min_blocks, sizeof min_blocks, "%u", blocks_per_sm(shape));
  const unsigned holds = held_elements(shape, c->type);
  if (shape.group <= 32)
    snprintf(summary, sizeof summary,
             "The shape for rows of up to %u\n * elements: %u lane%s a row, %u 16-byte "
             "vector%s a lane, %u row%s in flight a group.",
             holds, shape.group, shape.group == 1 ? "" : "s", shape.chunks,
             shape.chunks == 1 ? "" : "s", shape.rows_per_round,
             shape.rows_per_round == 1 ? "" : "s");
  else
    snprintf(summary, sizeof summary,
             "The shape for rows of up to %u\n * elements: a block of %u threads a row, "
             "%u 16-byte vector%s a thread%s%s%s.",
             holds, shape.group, shape.chunks, shape.chunks == 1 ? "" : "s",
             shape.kept ? " in registers and the rest in shared memory" : "",
             shape.staged ? ",\n * the next row staged in shared memory" : "",
             shape.wb_staged ? ",\n * weight and bias copied into shared memory where they fit"
                             : "");
  wg_buf prelude = {0};
  int rc = wg_codegen_prelude(ctx, &prelude, c);
  if (!rc && prelude.failed) rc = wg_fail(ctx, WG_ENOMEM, "out of memory");
  if (!rc) {
    const wg_template_var vars[] = {
      {"spec", spec_text},         {"version", WG_VERSION_STRING},
      {"what", op->what},          {"shape_summary", summary},
      {"prelude", prelude.data},   {"num", wg_types[c->type].acc},
      {"op", op->op},              {"block", block},
      {"group", group},            {"chunks", chunks},          {"kept", kept},
      {"rows_per_round", rpr},     {"min_blocks", min_blocks},
      {"staged", shape.staged ? "1" : "0"}, {"kernel", kernel},
      {"wb_staged", shape.wb_staged ? "1" : "0"}, {"hold_raw", shape.raw ? "1" : "0"},
    };
    rc = wg_template_render(ctx, out, "rownorm.cu", vars, WG_COUNT_OF(vars));
  }
  wg_buf_free(&prelude);
  return rc;
}

const wg_family wg_family_rownorm = {
  .name = "fused row kernels",
  .keys = WG_KEY_COLS,
  .validate = rownorm_validate,
  .format_keys = rownorm_format_keys,
  .name_suffix = rownorm_name_suffix,
  .source = rownorm_source,
  .shared_bytes = rownorm_shared_bytes,
};

/* --- the calls -------------------------------------------------------------- */

/* Elements a row-major span of `rows` rows of `cols`, `stride` apart,
 * covers: into *span, or WG_ERANGE. */
static int span_of(wg_context *ctx, const char *what, uint64_t rows, uint64_t cols,
                   uint64_t stride, uint64_t *span) {
  if (rows > 1 && rows - 1 > (UINT64_MAX - cols) / (stride ? stride : 1))
    return wg_fail(ctx, WG_ERANGE, "%s: %llu rows of stride %llu overflow", what,
                   (unsigned long long)rows, (unsigned long long)stride);
  *span = (rows - 1) * (rows > 1 ? stride : 0) + cols;
  return WG_OK;
}

size_t wg_rownorm_wb_shared_bytes(const wg_rownorm_room *r, unsigned per_sm, size_t row_bytes,
                                  bool weight, bool bias) {
  long long room = (long long)r->per_sm / (per_sm ? per_sm : 1) - r->reserved_per_block -
                   r->static_bytes;
  const long long most = (long long)r->most_per_block - r->static_bytes;
  if (room > most) room = most;
  const size_t fits = room > 0 && row_bytes ? (size_t)room / row_bytes : 0; /* rows of room */
  const size_t wanted = (size_t)weight + (size_t)bias;
  /* Weight first: without room for it, bias (after it) has none either. */
  return (weight && fits == 0 ? 0 : wanted < fits ? wanted : fits) * row_bytes;
}

typedef struct rownorm_args {
  uint64_t in, weight, bias, out, rows, cols, in_stride, out_stride;
  double eps;
} rownorm_args;

/* Checks that need no device, then the launch. `spec` is validated and
 * of this family; its cols= picks the shape. */
static int rownorm_run(wg_context *ctx, const wg_spec *spec, const rownorm_args *a,
                       void *stream) {
  const wg_type type = spec->type;
  const size_t size = wg_types[type].size;
  const bool norm = op_of(spec->primitive)->norm;
  if (a->rows > 1 && a->in_stride < a->cols)
    return wg_fail(ctx, WG_EINVAL, "in_stride %llu is shorter than a row (%llu columns)",
                   (unsigned long long)a->in_stride, (unsigned long long)a->cols);
  if (a->rows > 1 && a->out_stride < a->cols)
    return wg_fail(ctx, WG_EINVAL, "out_stride %llu is shorter than a row (%llu columns)",
                   (unsigned long long)a->out_stride, (unsigned long long)a->cols);
  if (norm && !(isfinite(a->eps) && a->eps >= 0))
    return wg_fail(ctx, WG_EINVAL, "eps %g is not a finite value >= 0", a->eps);
  if (norm && size <= 4 && !isfinite((float)a->eps)) /* the kernel's eps is an f32 */
    return wg_fail(ctx, WG_EINVAL, "eps %g is past the f32 range %s rows compute in", a->eps,
                   wg_types[type].name);
  if (a->rows == 0 || a->cols == 0) {
    wg_errmsg_clear(ctx);
    return WG_OK;
  }
  uint64_t in_span = 0, out_span = 0;
  int status = span_of(ctx, "input", a->rows, a->cols, a->in_stride, &in_span);
  if (!status) status = span_of(ctx, "output", a->rows, a->cols, a->out_stride, &out_span);
  if (!status) status = wg_check_device_buffer(ctx, "input", a->in, in_span, size);
  if (!status) status = wg_check_device_buffer(ctx, "output", a->out, out_span, size);
  if (!status && norm && a->weight)
    status = wg_check_device_buffer(ctx, "weight", a->weight, a->cols, size);
  if (!status && spec->primitive == WG_LAYERNORM_ROWS && a->bias)
    status = wg_check_device_buffer(ctx, "bias", a->bias, a->cols, size);
  if (status) return status;
  /* In place (the same rows) is fine: each element is read before the same
   * lane writes it. Any other overlap would read written values. */
  const bool same = a->in == a->out && (a->rows == 1 || a->in_stride == a->out_stride);
  if (!same)
    status = wg_check_apart(ctx, "output", a->out, out_span * size,
                            "input (only out == in with equal strides works in place)", a->in,
                            in_span * size);
  /* Every row reads all of weight and bias: rows written first would
   * change them under the rows still to come. */
  if (!status && norm && a->weight)
    status = wg_check_apart(ctx, "output", a->out, out_span * size, "weight", a->weight,
                            a->cols * size);
  if (!status && spec->primitive == WG_LAYERNORM_ROWS && a->bias)
    status = wg_check_apart(ctx, "output", a->out, out_span * size, "bias", a->bias,
                            a->cols * size);
  if (status) return status;

  wg_kernel *k = NULL;
  status = wg_kernel_get(ctx, &k, spec);
  if (status) return status;
  const rownorm_shape shape = shape_for(spec->primitive, type, spec->cols, k->spec.arch);
  if ((unsigned)k->max_block_size < shape.block)
    return wg_fail(ctx, WG_ECUDA, "%s allows %d threads a block; it needs %u", k->name,
                   k->max_block_size, shape.block);
  /* Tiles of rows the blocks loop over: a block a tile, or at most what is
   * resident (the kernel's default grid counts blocks of 256), as the
   * type's tuning says. Staged rows loop, so that there is a next row to
   * stage: as many blocks as the SMs keep. */
  const uint64_t per_tile = (uint64_t)(shape.block / shape.group) * shape.rows_per_round;
  uint64_t grid = a->rows / per_tile + (a->rows % per_tile != 0);
  uint64_t resident = (uint64_t)k->default_grid * 256u / shape.block;
  if (shape.staged || shape.kept) /* the default grid counted blocks of 256 beside their room */
    resident = (uint64_t)ctx->device->info.sm_count * blocks_per_sm(shape);
  if (resident < 1) resident = 1;
  if (grid > resident && (shape.staged || !shape.full_grid)) grid = resident;
  if (grid > WG_MAX_GRID) grid = WG_MAX_GRID;
  size_t shared = row_shared_bytes(shape);
  if (shape.wb_staged && a->cols <= held_elements(shape, type)) { /* after the row's, if any */
    const uint64_t sms = ctx->device->info.sm_count ? ctx->device->info.sm_count : 1;
    const uint64_t keeps = resident / sms > blocks_per_sm(shape) ? resident / sms
                                                                  : blocks_per_sm(shape);
    const wg_rownorm_room room = {ctx->device->max_shared_per_sm,
                                  ctx->device->reserved_shared_per_block,
                                  ctx->device->max_shared_per_block_optin,
                                  k->static_shared_bytes + shared};
    shared += wg_rownorm_wb_shared_bytes(&room, (unsigned)keeps, a->cols * size, a->weight != 0,
                                         spec->primitive == WG_LAYERNORM_ROWS && a->bias != 0);
  }

  CUdeviceptr in = (CUdeviceptr)a->in, out = (CUdeviceptr)a->out;
  CUdeviceptr weight = norm ? (CUdeviceptr)a->weight : 0;
  CUdeviceptr bias = spec->primitive == WG_LAYERNORM_ROWS ? (CUdeviceptr)a->bias : 0;
  unsigned long long rows = a->rows, cols = a->cols, in_stride = a->in_stride,
                     out_stride = a->out_stride;
  double eps = norm ? a->eps : 0;
  void *params[] = {&in, &weight, &bias, &out, &rows, &cols, &in_stride, &out_stride, &eps};
  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  status = wg_device_enter(ctx, &scope, &api);
  if (status) return status;
  status = wg_kernel_allow_shared(ctx, api, k, shared);
  if (status == WG_OK)
    status = wg_cuda_status(ctx,
                            api->LaunchKernel(k->function, (unsigned)grid, 1, 1, shape.block,
                                              1, 1, (unsigned)shared, (CUstream)stream, params,
                                              NULL),
                            "cuLaunchKernel");
  wg_device_leave(ctx, &scope);
  if (status == WG_OK) wg_errmsg_clear(ctx);
  return status;
}

/* The spec a plain call uses: its shape from cols. */
static int call(wg_context *ctx, wg_primitive primitive, wg_type type, const rownorm_args *a,
                void *stream) {
  if (!ctx) return WG_EINVAL;
  if ((unsigned)type >= WG_TYPE_COUNT || !wg_types[type].is_float)
    return wg_fail(ctx, WG_EINVAL, "%s takes f16, bf16, f32 or f64 (type %d)",
                   wg_primitives[primitive].name, (int)type);
  wg_spec spec;
  wg_spec_init(&spec);
  spec.primitive = primitive;
  spec.type = type;
  spec.op = WG_OP_NONE;
  spec.cols = spec_cols(primitive, type, a->cols);
  int status = wg_spec_validate(ctx, &spec);
  if (status) return status;
  return rownorm_run(ctx, &spec, a, stream);
}

int wg_softmax_rows(wg_context *ctx, wg_type type, uint64_t in, uint64_t out, uint64_t rows,
                    uint64_t cols, uint64_t in_stride, uint64_t out_stride, void *stream) {
  const rownorm_args a = {in, 0, 0, out, rows, cols, in_stride, out_stride, 0};
  return call(ctx, WG_SOFTMAX_ROWS, type, &a, stream);
}

int wg_log_softmax_rows(wg_context *ctx, wg_type type, uint64_t in, uint64_t out,
                        uint64_t rows, uint64_t cols, uint64_t in_stride,
                        uint64_t out_stride, void *stream) {
  const rownorm_args a = {in, 0, 0, out, rows, cols, in_stride, out_stride, 0};
  return call(ctx, WG_LOG_SOFTMAX_ROWS, type, &a, stream);
}

int wg_layer_norm_rows(wg_context *ctx, wg_type type, uint64_t in, uint64_t weight,
                       uint64_t bias, uint64_t out, uint64_t rows, uint64_t cols,
                       uint64_t in_stride, uint64_t out_stride, double eps, void *stream) {
  const rownorm_args a = {in, weight, bias, out, rows, cols, in_stride, out_stride, eps};
  return call(ctx, WG_LAYERNORM_ROWS, type, &a, stream);
}

int wg_rms_norm_rows(wg_context *ctx, wg_type type, uint64_t in, uint64_t weight,
                     uint64_t out, uint64_t rows, uint64_t cols, uint64_t in_stride,
                     uint64_t out_stride, double eps, void *stream) {
  const rownorm_args a = {in, weight, 0, out, rows, cols, in_stride, out_stride, eps};
  return call(ctx, WG_RMSNORM_ROWS, type, &a, stream);
}

int wg_rownorm_spec(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t weight,
                    uint64_t bias, uint64_t out, uint64_t rows, uint64_t cols,
                    uint64_t in_stride, uint64_t out_stride, double eps, void *stream) {
  if (!ctx) return WG_EINVAL;
  int status = wg_spec_validate(ctx, spec);
  if (status) return status;
  if (!op_of(spec->primitive))
    return wg_fail(ctx, WG_EINVAL, "the spec is a '%s', not a fused row kernel",
                   wg_primitives[spec->primitive].name);
  const rownorm_args a = {in, weight, bias, out, rows, cols, in_stride, out_stride, eps};
  return rownorm_run(ctx, spec, &a, stream);
}

void wg_rownorm_shape_numbers(wg_primitive primitive, wg_type type, int64_t cols, int arch,
                              unsigned out[8]) {
  const rownorm_shape s = shape_for(primitive, type, cols, arch);
  out[0] = s.group, out[1] = s.chunks, out[2] = s.rows_per_round, out[3] = s.block;
  out[4] = s.staged;
  out[5] = s.wb_staged;
  out[6] = s.kept;
  out[7] = blocks_per_sm(s);
}
int64_t wg_rownorm_spec_cols(wg_primitive primitive, wg_type type, uint64_t cols) {
  return spec_cols(primitive, type, cols);
}
