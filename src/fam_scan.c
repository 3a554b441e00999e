/*
 * fam_scan.c - the scan family: inclusive and exclusive prefixes of a
 * whole array (scan-array, exscan-array) and of every row of a matrix
 * (scan-rows, exscan-rows). The descriptors (validation, spec text, kernel
 * name, source from templates/scan.cu) and the calls users make
 * (wg_scan_array, wg_scan_rows and their _spec forms): argument checks,
 * the launch shape, the workspace, the launch.
 *
 * How a launch runs (templates/scan.cu says how each mode works):
 *   - rows of at most WG_SCAN_SHORT_VECTORS 16-byte vectors: a group of
 *     lanes per row (mode 0), the group's size chosen from the spec's cols;
 *   - whole arrays and longer rows: tiles (tile_shape_for), rows through
 *     the whole-array kernel (its tiles code takes rows and strides);
 *     one tile in all goes to one block (mode 1, no workspace), more tiles
 *     to a block each, with decoupled look-back (mode 2), whose tile
 *     counter and statuses live in the extra space of the stream's
 *     workspace (workspace.c: zero when a launch starts), zeroed again by
 *     a memset on the caller's stream after the launch;
 *   - long rows shorter than a tile, many of them: a warp per row (mode 0)
 *     fills the GPU without any workspace.
 */
#include "driver.h"
#include "expr.h"
#include "family.h"
#include "kernel.h"
#include "reduce.h"
#include "workspace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Threads a block of the row kernels (mode 0 and their long rows' tiles):
 * the template is compiled for exactly its shape's block. */
#define WG_SCAN_BLOCK 256u
/* Rows of up to this many vectors get a group of lanes (mode 0). */
#define WG_SCAN_SHORT_VECTORS 256u
/* Rows of a warp: this many vectors a lane a pass (8 took 146 registers
 * for f32, one block an SM; held to two blocks an SM, 128 registers, it
 * was no faster on the H200 for f32 rows of 1024 and 4096, and f64 and
 * bf16 spilled). */
#define WG_SCAN_LONG_VPL 4
/* gridDim.x may not exceed this. */
#define WG_SCAN_MAX_GRID 0x7fffffffull
/* Mode 3 (templates/scan.cu): tiles read ahead, at most, and the fewest
 * tiles that take it. 256 tiles of 32 KiB is 8 MiB ahead of the scan,
 * inside the L2 beside the stores (512 missed the H100's 50 MB: 0.67 of
 * copy; 128 measured the same as 256 there). */
#define WG_SCAN_AHEAD_TEXT "256"
#define WG_SCAN_AHEAD_LEAST 64u

/* --- shapes --------------------------------------------------------------- */

static uint64_t pow2_at_least(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

static bool is_rows(wg_primitive p) { return p == WG_SCAN_ROWS || p == WG_EXSCAN_ROWS; }
static bool is_exclusive(wg_primitive p) {
  return p == WG_EXSCAN_ARRAY || p == WG_EXSCAN_ROWS;
}

/* Mode 0's group: lanes a row and vectors a lane a pass, for a spec's cols
 * (rounded up to a power of two of vectors, or 0: long rows, a warp). One
 * or two vectors: one lane; up to 64: half as many lanes as vectors, two
 * each; longer: a warp, four each a pass. */
typedef struct scan_shape {
  int group, vpl;
} scan_shape;

static scan_shape shape_for(const wg_spec *s) {
  const scan_shape long_rows = {32, WG_SCAN_LONG_VPL};
  if (!is_rows(s->primitive)) return (scan_shape){32, 1}; /* mode 0 unused */
  const uint64_t vec = 16u / wg_types[s->type].size, cols = (uint64_t)s->cols;
  if (s->cols <= 0 || cols / vec > WG_SCAN_SHORT_VECTORS) return long_rows;
  const uint64_t vectors = pow2_at_least(cols / vec + (cols % vec != 0));
  if (vectors > WG_SCAN_SHORT_VECTORS) return long_rows;
  if (vectors <= 2) return (scan_shape){1, vectors < 1 ? 1 : (int)vectors};
  if (vectors <= 64) return (scan_shape){(int)vectors / 2, 2};
  return (scan_shape){32, WG_SCAN_LONG_VPL}; /* one pass or two */
}

/* The cols a scan-rows spec is made with for rows of `cols` elements: the
 * longest row of the same shape (rows that share a shape share a kernel),
 * 0 for long rows. */
static int64_t spec_cols(wg_type type, uint64_t cols) {
  const uint64_t vec = 16u / wg_types[type].size;
  const uint64_t vectors = cols / vec + (cols % vec != 0);
  if (vectors > WG_SCAN_SHORT_VECTORS) return 0;
  return (int64_t)(pow2_at_least(vectors ? vectors : 1) * vec);
}

/* Bytes of the accumulator: f16 and bf16 accumulate in f32. */
static size_t acc_bytes(const wg_spec *s) {
  const size_t size = wg_types[wg_spec_value_type(s)].size;
  return size < 4 ? 4 : size;
}

/* Is the operator exact (any grouping gives the same bits)? Integers,
 * min, max and the bitwise operators are; floating sums and products and
 * user combines are not (a combine's algebra is unknown). */
static bool exact_operator(const wg_spec *s) {
  if (s->combine) return false;
  if (!wg_types[wg_spec_value_type(s)].is_float) return true;
  return s->op == WG_OP_MIN || s->op == WG_OP_MAX;
}

/* May the look-back fold whole windows of aggregates? When the order cannot
 * change the bits, or when the caller gave up determinism. */
static bool multi_window(const wg_spec *s) { return !s->deterministic || exact_operator(s); }

/* Modes 1 and 2: the block, the tile (vectors a thread), the blocks an SM
 * must hold, and the look-back's polling (templates/scan.cu, WG_LB_*).
 *
 * Whole arrays, as measured on the H200 at 2^28 (docs/scan-design.md):
 * 32 KiB tiles staged in shared memory, so that five blocks an SM (48
 * registers a thread) keep loading while their first warps look back; a
 * poll of 128 statuses a window (4 a lane) for accumulators of up to 4
 * bytes; and, in grids of many tiles, a sleep before the first poll and
 * 400 ns between polls, as CUB's tuning for sm_90 does (with its 1 us
 * first sleep f32 went from 1864 to 3117 GB/s, 1.02x CUB). The first
 * sleep is 3 us, not CUB's 1: in one lease (2026-12-04, docs/scan-design.md,
 * "The first sleep") f32 at 2^28 went from 3097-3141 GB/s (1 us) and
 * 3177-3187 (2 us) to 3285-3286 (1.08x CUB), f64 deterministic 3178-3189
 * and 3260-3275 to 3293-3298, rows of 65536 (the same kernel) 3407-3485
 * and 3484-3503 to 3534-3590; 4 us measured the same as 3 or lower. 8-byte
 * accumulators' statuses are pairs of words: a look-back that folds
 * whole windows polls 32 (one a lane: f64 with deterministic=0 3485 GB/s,
 * 1.06x CUB, against 3204 polling 64), one that must find an inclusive
 * prefix inside its window polls 64 (two a lane: 3221 GB/s, 0.98x; with
 * 32 it waits twice as often, 0.47x).
 * Rows run mode 0 only (rows that take tiles run the whole-array kernel,
 * scan_run): only the block and the blocks an SM count there. Two blocks
 * an SM, not three: ptxas then keeps more loads in flight a warp (95
 * registers where three blocks held it to 80; bf16 rows spilled at 80).
 * On the H200 (2^26 f32, four or five runs each): rows of 1024 went from
 * 0.89-0.91 of copy to 0.90-0.92, rows of 4096 from 0.87-0.89 to 0.89-0.90. */
typedef struct tile_shape {
  unsigned block, vpt, min_blocks;
  wg_lookback_knobs lookback;
} tile_shape;

static tile_shape tile_shape_for(const wg_spec *s) {
  if (is_rows(s->primitive)) return (tile_shape){WG_SCAN_BLOCK, 4, 2, {4, 1000, 400, 0}};
  /* With 4 a lane, 8-byte accumulators' pairs of words spilled past 48
   * registers (docs/scan-design.md). */
  const int k = acc_bytes(s) <= 4 ? 4 : multi_window(s) ? 1 : 2;
  return (tile_shape){WG_SCAN_BLOCK, 8, 5, {k, 3000, 400, 0}};
}

/* Elements a tile of modes 1 and 2. */
static uint64_t tile_elements(const wg_spec *s) {
  const tile_shape ts = tile_shape_for(s);
  return (uint64_t)ts.block * ts.vpt * (16u / wg_types[s->type].size);
}

/* --- the descriptor -------------------------------------------------------- */

static bool scan_operator(wg_operator op) {
  return op >= WG_OP_SUM && op <= WG_OP_XOR;
}

static int scan_validate(wg_context *ctx, const wg_spec *s, int arch) {
  (void)arch;
  const char *pn = wg_primitives[s->primitive].name;
  if (!s->combine && !scan_operator(s->op))
    return wg_fail(ctx, WG_ESPEC, "operator: '%s' has no running form; '%s' takes sum, "
                   "prod, min, max, and, or, xor, or combine= with identity=",
                   wg_operators[s->op].name, pn);
  if (s->cols < 0) return wg_fail(ctx, WG_ESPEC, "cols: %" PRId64 " is negative", s->cols);
  if (s->deterministic != 0 && s->deterministic != 1)
    return wg_fail(ctx, WG_ESPEC, "deterministic: %d is neither 0 nor 1", s->deterministic);
  if (s->final)
    return wg_fail(ctx, WG_ESPEC, "final: '%s' writes every prefix as it is; it takes no "
                   "final=", pn);
  if (s->ninputs > 1)
    return wg_fail(ctx, WG_ESPEC, "inputs: '%s' reads one input", pn);
  if (s->nparams != 0)
    return wg_fail(ctx, WG_ESPEC, "params: '%s' takes no parameters (its map= reads x "
                   "and i)", pn);
  if (s->map && wg_spec_elementwise(s))
    return wg_fail(ctx, WG_ESPEC, "map: '%s' maps may read x and i only", pn);
  return WG_OK;
}

static void scan_format_keys(wg_buf *out, const wg_spec *s) {
  if (is_rows(s->primitive)) wg_buf_printf(out, " cols=%" PRId64, s->cols);
  if (s->deterministic != 1) wg_buf_printf(out, " deterministic=%d", s->deterministic);
}

static void scan_name_suffix(wg_buf *out, const wg_spec *s) {
  if (s->cols) wg_buf_printf(out, "_c%lld", (long long)s->cols);
  if (!s->deterministic) wg_buf_puts(out, "_fast");
}

static int scan_source(wg_context *ctx, wg_buf *out, const wg_spec *s) {
  const int len = wg_spec_format(NULL, 0, s);
  char *spec_text = len > 0 ? malloc((size_t)len + 1) : NULL;
  if (!spec_text) return wg_fail(ctx, WG_ENOMEM, "out of memory");
  wg_spec_format(spec_text, (size_t)len + 1, s);
  char kernel[128], block[16], vpt[16], group[16], vpl[16], min_blocks[16];
  wg_kernel_name(kernel, sizeof kernel, s);
  const scan_shape shape = shape_for(s);
  const tile_shape tiles = tile_shape_for(s);
  snprintf(block, sizeof block, "%u", tiles.block);
  snprintf(vpt, sizeof vpt, "%u", tiles.vpt);
  snprintf(group, sizeof group, "%d", shape.group);
  snprintf(vpl, sizeof vpl, "%d", shape.vpl);
  snprintf(min_blocks, sizeof min_blocks, "%u", tiles.min_blocks);
  const bool exclusive = is_exclusive(s->primitive);
  wg_buf prelude = {0}, lookback = {0};
  int rc = wg_codegen_prelude(ctx, &prelude, s);
  if (!rc) rc = wg_codegen_lookback(ctx, &lookback, tiles.lookback);
  if (!rc && (prelude.failed || lookback.failed)) rc = wg_fail(ctx, WG_ENOMEM, "out of memory");
  if (!rc) {
    const wg_template_var vars[] = {
      {"spec", spec_text},
      {"version", WG_VERSION_STRING},
      {"kind", exclusive ? "exclusive" : "inclusive"},
      {"prelude", prelude.data},
      {"kernel", kernel},
      {"block", block},
      {"vpt", vpt},
      {"group", group},
      {"vpl", vpl},
      {"exclusive", exclusive ? "1" : "0"},
      {"multi_window", multi_window(s) ? "1" : "0"},
      {"min_blocks", min_blocks},
      {"ahead", WG_SCAN_AHEAD_TEXT},
      {"lookback", lookback.data},
      {"has_groups", is_rows(s->primitive) ? "1" : "0"},
      {"has_tiles", is_rows(s->primitive) ? "0" : "1"},
    };
    rc = wg_template_render(ctx, out, "scan.cu", vars, WG_COUNT_OF(vars));
  }
  wg_buf_free(&prelude);
  wg_buf_free(&lookback);
  free(spec_text);
  return rc;
}

const wg_family wg_family_scan_array = {
  .name = "scan-array",
  .keys = WG_KEY_DETERMINISTIC,
  .validate = scan_validate,
  .format_keys = scan_format_keys,
  .name_suffix = scan_name_suffix,
  .source = scan_source,
};

const wg_family wg_family_scan_rows = {
  .name = "scan-rows",
  .keys = WG_KEY_COLS | WG_KEY_DETERMINISTIC,
  .validate = scan_validate,
  .format_keys = scan_format_keys,
  .name_suffix = scan_name_suffix,
  .source = scan_source,
};

/* --- launches --------------------------------------------------------------- */

/* Bytes of the scan's part of a mode-2 workspace for `tiles` tiles
 * (templates/scan.cu, wg_statuses_at: the counter, then a 64-bit status
 * word a tile, two for 8-byte accumulators). */
static size_t status_bytes(const wg_spec *s, uint64_t tiles) {
  return 16 + (size_t)tiles * (acc_bytes(s) <= 4 ? 8u : 16u);
}

/* Launches k in `mode` with `grid` blocks. Mode 2 takes its counter and
 * statuses from the workspace's extra space (wg_workspace_acquire_extra),
 * which is zero when a launch starts and must be zero again when it ends:
 * a memset on `stream` after the kernel restores it (the kernel cannot
 * tell when the last block has read the statuses). */
static int launch(wg_context *ctx, const wg_kernel *k, const wg_spec *s, unsigned mode,
                  uint64_t grid, uint64_t tiles, CUdeviceptr in, CUdeviceptr out,
                  uint64_t rows, uint64_t cols, uint64_t in_stride, uint64_t out_stride,
                  void *stream) {
  const unsigned block = tile_shape_for(s).block;
  if ((unsigned)k->max_block_size < block)
    return wg_fail(ctx, WG_ECUDA, "%s allows %d threads a block; it needs %u", k->name,
                   k->max_block_size, block);
  if (grid < 1) grid = 1;
  if (grid > WG_SCAN_MAX_GRID) grid = WG_SCAN_MAX_GRID;
  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  int status = wg_device_enter(ctx, &scope, &api);
  if (status != WG_OK) return status;
  const CUstream cs = (CUstream)stream;
  wg_workspace ws = {0, -1, 0};
  CUdeviceptr workspace = 0;
  const size_t bytes = mode >= 2 ? status_bytes(s, tiles) : 0;
  if (mode >= 2) {
    status = wg_workspace_acquire_extra(ctx, api, cs, WG_WORKSPACE_TICKET_BYTES, bytes,
                                        &ws);
    if (status == WG_OK) workspace = ws.ptr + WG_WORKSPACE_BYTES;
  }
  if (status == WG_OK) {
    unsigned long long r = rows, c = cols, is = in_stride, os = out_stride;
    void *params[] = {&in, &out, &r, &c, &is, &os, &mode, &workspace};
    status = wg_cuda_status(ctx,
                            api->LaunchKernel(k->function, (unsigned)grid, 1, 1,
                                              block, 1, 1, 0, cs, params, NULL),
                            "cuLaunchKernel");
    const bool launched = status == WG_OK;
    if (launched && mode >= 2 &&
        (status = wg_cuda_status(ctx, api->MemsetD8Async(workspace, 0, bytes, cs),
                                 "cuMemsetD8Async (the scan's tile statuses, for the next "
                                 "launch)")))
      wg_workspace_retire(ctx, &ws); /* its tile counter and statuses stay dirty */
    if (mode >= 2) {
      const int released = wg_workspace_release(ctx, api, cs, &ws, launched);
      if (status == WG_OK) status = released;
    }
  }
  wg_device_leave(ctx, &scope);
  if (status == WG_OK) wg_errmsg_clear(ctx);
  return status;
}

/* The elements a matrix of `rows` rows of `cols`, `stride` apart, spans. */
static int span_of(wg_context *ctx, uint64_t *span, const char *what, uint64_t rows,
                   uint64_t cols, uint64_t stride) {
  if (rows > 1 && stride < cols)
    return wg_fail(ctx, WG_EINVAL, "%s row stride %" PRIu64 " is shorter than a row (%"
                   PRIu64 " columns)", what, stride, cols);
  if (rows - 1 > (UINT64_MAX - cols) / (stride ? stride : 1))
    return wg_fail(ctx, WG_ERANGE, "%" PRIu64 " rows of stride %" PRIu64 " overflow", rows,
                   stride);
  *span = (rows - 1) * stride + cols;
  return WG_OK;
}

/* The whole-array spec of the same scan as a rows spec (or the spec). */
static wg_spec array_spec_of(const wg_spec *s) {
  wg_spec a = *s;
  if (is_rows(s->primitive)) {
    a.primitive = is_exclusive(s->primitive) ? WG_EXSCAN_ARRAY : WG_SCAN_ARRAY;
    a.cols = 0;
  }
  return a;
}

/* A scan of a validated spec over `rows` rows (scan-array: one row of n). */
static int scan_run(wg_context *ctx, const wg_spec *specp, uint64_t in, uint64_t rows,
                    uint64_t cols, uint64_t in_stride, uint64_t out, uint64_t out_stride,
                    void *stream) {
  wg_spec spec = *specp;
  if (rows == 0 || cols == 0) {
    wg_errmsg_clear(ctx);
    return WG_OK;
  }
  const size_t in_size = wg_types[spec.type].size;
  const size_t out_size = wg_types[wg_spec_out_type(&spec)].size;
  uint64_t in_span = 0, out_span = 0;
  int status = span_of(ctx, &in_span, "input", rows, cols, in_stride);
  if (status == WG_OK) status = span_of(ctx, &out_span, "output", rows, cols, out_stride);
  if (status == WG_OK) status = wg_check_device_buffer(ctx, "input", in, in_span, in_size);
  if (status == WG_OK) status = wg_check_device_buffer(ctx, "output", out, out_span, out_size);
  if (status != WG_OK) return status;
  /* In place is fine (each element is read and then written by one
   * thread); any other overlap would read outputs as inputs. */
  const bool in_place = in == out && in_size == out_size && (rows == 1 || in_stride == out_stride);
  if (!in_place &&
      (status = wg_check_apart(ctx, "output", out, out_span * out_size,
                               "input without being the same elements (in place)", in,
                               in_span * in_size)))
    return status;

  /* Rows run tiles, and the whole-array kernel's, when they hold a tile:
   * the same tiles code (a tile never crosses a row) without the group
   * path, so twice the tile and five blocks an SM (tile_shape_for). On the
   * H200 (f32) 1024 rows of 65536 went from 0.64 to 0.83 of copy, and
   * 8192 x 8192 ran at 0.91 against 0.87 a warp a row. */
  const wg_spec array = array_spec_of(&spec);
  if (is_rows(spec.primitive) && cols >= tile_elements(&array)) spec = array;
  if (is_rows(spec.primitive)) spec.cols = spec_cols(spec.type, cols);
  wg_kernel *k = NULL;
  status = wg_kernel_get(ctx, &k, &spec);
  if (status != WG_OK) return status;
  if (is_rows(spec.primitive)) {
    /* A group per row; long rows (shorter than a tile): a warp each, when
     * there are enough of them to give every resident warp one; else the
     * whole-array kernel's tiles. */
    const uint64_t resident = k->default_grid ? k->default_grid : 1;
    const uint64_t warps = WG_SCAN_BLOCK / 32u;
    if (spec.cols != 0 || rows >= resident * warps / 2) {
      const uint64_t per_block = WG_SCAN_BLOCK / (uint64_t)shape_for(&spec).group;
      uint64_t grid = rows / per_block + (rows % per_block != 0);
      if (grid > resident) grid = resident;
      return launch(ctx, k, &spec, 0, grid, 0, in, out, rows, cols, in_stride, out_stride,
                    stream);
    }
    spec = array;
    status = wg_kernel_get(ctx, &k, &spec);
    if (status != WG_OK) return status;
  }
  const uint64_t tile = tile_elements(&spec);
  const uint64_t chunks = cols / tile + (cols % tile != 0);
  if (rows > UINT64_MAX / chunks)
    return wg_fail(ctx, WG_ERANGE, "%" PRIu64 " rows of %" PRIu64 " tiles overflow", rows,
                   chunks);
  const uint64_t tiles = rows * chunks;
  if (tiles == 1)
    return launch(ctx, k, &spec, 1, 1, tiles, in, out, rows, cols, in_stride, out_stride,
                  stream);
  /* A block a tile. Each block takes its tile's id from the counter, so
   * tiles start in order and a look-back waits only on blocks already
   * running. On the H200 (2^28 f32) this is 1.6 times as fast as a grid of
   * the resident blocks looping over tiles, where a block's next aggregate
   * waits for its last look-back. The grid's x dimension takes up to
   * 2^31 - 1 blocks. */
  if (tiles > INT32_MAX)
    return wg_fail(ctx, WG_ERANGE, "%" PRIu64 " tiles of %" PRIu64 " elements are more "
                   "than a scan takes (2^31 - 1)", tiles, tile);
  /* Mode 3, every tile read twice (a job 256 tiles ahead publishes its
   * aggregate early), for accumulators of up to 4 bytes: on an H100
   * (2^28; bench/experiments/ab.sh in two leases, 2026-12-05 and -06, and
   * tests/gpu_scan.sh in a third) f32 went from 0.86-0.87 to 0.90-0.91 of
   * copy and i32 from 0.85 to 0.89, but f64 deterministic fell from 0.89
   * to 0.83 (its statuses are pairs of words; not investigated) and f64
   * fast stayed at 0.93. The H200's number is not measured yet.
   * Not for rows of one tile (nothing to read ahead), nor past the grid's
   * 2^31 - 1 blocks (two a tile), nor in place: there the job ahead could
   * read a tile after the tile's own job has overwritten it with outputs,
   * and nothing orders its publish after the own job's statuses, so a
   * wrong aggregate could be seen, however rarely. */
  const bool ahead = tiles >= WG_SCAN_AHEAD_LEAST && chunks > 1 && acc_bytes(&spec) <= 4 &&
                     tiles <= INT32_MAX / 2 && !in_place;
  const unsigned mode = ahead ? 3u : 2u;
  const uint64_t grid = mode == 3 ? 2 * tiles : tiles;
  return launch(ctx, k, &spec, mode, grid, tiles, in, out, rows, cols, in_stride, out_stride,
                stream);
}

/* The spec of a plain call, validated. */
static int plain_spec(wg_context *ctx, wg_spec *spec, wg_primitive primitive, wg_type type,
                      wg_operator op) {
  wg_spec_init(spec);
  if ((unsigned)type >= WG_TYPE_COUNT)
    return wg_fail(ctx, WG_EINVAL, "type %d is not a warpgen type", (int)type);
  if ((unsigned)op >= WG_OPERATOR_COUNT)
    return wg_fail(ctx, WG_EINVAL, "operator %d is not a warpgen operator", (int)op);
  spec->primitive = primitive;
  spec->type = type;
  spec->op = op;
  return wg_spec_validate(ctx, spec);
}

/* A caller's spec: valid, and of the array or the rows kind asked for. */
static int spec_check(wg_context *ctx, const wg_spec *spec, bool rows) {
  int status = wg_spec_validate(ctx, spec);
  if (status != WG_OK) return status;
  const wg_primitive p = spec->primitive;
  if (!(rows ? is_rows(p) : p == WG_SCAN_ARRAY || p == WG_EXSCAN_ARRAY))
    return wg_fail(ctx, WG_EINVAL, "the spec is a '%s', not a %s", wg_primitives[p].name,
                   rows ? "'scan-rows' or 'exscan-rows'" : "'scan-array' or 'exscan-array'");
  return WG_OK;
}

int wg_scan_array(wg_context *ctx, wg_type type, wg_operator op, int exclusive,
                  uint64_t in, uint64_t n, uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_spec spec;
  int status = plain_spec(ctx, &spec, exclusive ? WG_EXSCAN_ARRAY : WG_SCAN_ARRAY, type, op);
  if (status != WG_OK) return status;
  return scan_run(ctx, &spec, in, 1, n, n, out, n, stream);
}

int wg_scan_rows(wg_context *ctx, wg_type type, wg_operator op, int exclusive,
                 uint64_t in, uint64_t rows, uint64_t cols, uint64_t in_stride,
                 uint64_t out, uint64_t out_stride, void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_spec spec;
  int status = plain_spec(ctx, &spec, exclusive ? WG_EXSCAN_ROWS : WG_SCAN_ROWS, type, op);
  if (status != WG_OK) return status;
  return scan_run(ctx, &spec, in, rows, cols, in_stride, out, out_stride, stream);
}

int wg_scan_array_spec(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t n,
                       uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  int status = spec_check(ctx, spec, false);
  if (status != WG_OK) return status;
  return scan_run(ctx, spec, in, 1, n, n, out, n, stream);
}

int wg_scan_rows_spec(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t rows,
                      uint64_t cols, uint64_t in_stride, uint64_t out, uint64_t out_stride,
                      void *stream) {
  if (!ctx) return WG_EINVAL;
  int status = spec_check(ctx, spec, true);
  if (status != WG_OK) return status;
  return scan_run(ctx, spec, in, rows, cols, in_stride, out, out_stride, stream);
}

int wg_scan_spec_output_type(const wg_spec *spec) {
  if (!spec) return WG_EINVAL;
  int status = wg_spec_validate(NULL, spec);
  if (status != WG_OK) return status;
  const wg_primitive p = spec->primitive;
  if (p != WG_SCAN_ARRAY && p != WG_EXSCAN_ARRAY && !is_rows(p)) return WG_EINVAL;
  return (int)wg_spec_out_type(spec);
}
