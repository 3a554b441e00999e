/*
 * reduce.c - the whole-array and row reductions users call (wg_reduce,
 * wg_reduce_rows): argument checks, the spec, the launch shape, the launch.
 *
 * A launch whose blocks combine through memory (partials and a "last
 * block" ticket) gets a workspace of its own for its stream (workspace.c):
 * launches on different streams never share one, and a launch needs no
 * allocation and no memset once the context's pool holds a workspace for
 * its stream. Launches of one block, short rows and a warp or a block per
 * row need none and pass NULL.
 *
 * Every launch is asynchronous on the caller's stream; arguments are
 * checked before the GPU is touched.
 */
#include "driver.h"
#include "kernel.h"
#include "reduce.h"
#include "workspace.h"

/* gridDim.x may not exceed this. */
#define WG_MAX_GRID 0x7fffffffull

/* The spec of a reduction of `type` with `op`, validated. */
static int reduce_spec(wg_context *ctx, wg_spec *spec, wg_primitive primitive,
                       wg_type type, wg_operator op) {
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

/* Launches kernel k with `grid` blocks of WG_REDUCE_BLOCK threads. The
 * last parameter is the workspace pointer, filled here: a workspace for
 * `stream` whose first `ticket_bytes` are zero, or NULL for ticket_bytes 0
 * (a launch whose blocks do not combine through memory). */
static int launch(wg_context *ctx, const wg_kernel *k, uint64_t grid,
                  void **params, CUdeviceptr *workspace, size_t ticket_bytes,
                  void *stream) {
  if ((unsigned)k->max_block_size < WG_REDUCE_BLOCK)
    return wg_fail(ctx, WG_ECUDA, "%s allows %d threads a block; it needs %u",
                   k->name, k->max_block_size, WG_REDUCE_BLOCK);
  if (grid < 1) grid = 1;
  if (grid > WG_MAX_GRID) grid = WG_MAX_GRID;
  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  int status = wg_device_enter(ctx, &scope, &api);
  if (status != WG_OK) return status;
  const CUstream s = (CUstream)stream;
  wg_workspace ws = {0, -1, 0};
  if (ticket_bytes) status = wg_workspace_acquire(ctx, api, s, ticket_bytes, &ws);
  if (status == WG_OK) {
    *workspace = ws.ptr;
    status = wg_cuda_status(ctx,
                            api->LaunchKernel(k->function, (unsigned)grid, 1, 1,
                                              WG_REDUCE_BLOCK, 1, 1, 0, s,
                                              params, NULL),
                            "cuLaunchKernel");
    const int released = wg_workspace_release(ctx, api, s, &ws, status == WG_OK);
    if (status == WG_OK) status = released;
  }
  wg_device_leave(ctx, &scope);
  if (status == WG_OK) wg_errmsg_clear(ctx);
  return status;
}

int wg_reduce(wg_context *ctx, wg_type type, wg_operator op, uint64_t in,
              uint64_t n, uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_spec spec;
  int status = reduce_spec(ctx, &spec, WG_REDUCE_ARRAY, type, op);
  if (status != WG_OK) return status;
  const size_t size = wg_types[type].size;
  status = wg_check_device_buffer(ctx, "input", in, n, size);
  if (status == WG_OK) status = wg_check_device_buffer(ctx, "output", out, 1, size);
  if (status != WG_OK) return status;

  wg_kernel *k = NULL;
  status = wg_kernel_get(ctx, &k, &spec);
  if (status != WG_OK) return status;
  /* Enough blocks for about WG_REDUCE_VECTORS_PER_THREAD vectors a thread,
   * at most what the device holds at once (the blocks loop): the grid
   * depends only on n and the device, so the result's bits do too. */
  const uint64_t vectors = n / (16u / size) + 1;
  const uint64_t per_block = (uint64_t)WG_REDUCE_BLOCK * WG_REDUCE_VECTORS_PER_THREAD;
  uint64_t grid = vectors / per_block + (vectors % per_block != 0);
  if (grid > k->default_grid) grid = k->default_grid;
  if (grid > WG_REDUCE_MAX_BLOCKS) grid = WG_REDUCE_MAX_BLOCKS;

  CUdeviceptr in_ptr = (CUdeviceptr)in, out_ptr = (CUdeviceptr)out, workspace = 0;
  unsigned long long count = (unsigned long long)n;
  void *params[] = {&in_ptr, &count, &out_ptr, &workspace};
  /* One block folds alone; more share one ticket. */
  return launch(ctx, k, grid, params, &workspace, grid > 1 ? sizeof(unsigned) : 0,
                stream);
}

int wg_reduce_rows(wg_context *ctx, wg_type type, wg_operator op, uint64_t in,
                   uint64_t rows, uint64_t cols, uint64_t row_stride,
                   uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_spec spec;
  int status = reduce_spec(ctx, &spec, WG_REDUCE_ROWS, type, op);
  if (status != WG_OK) return status;
  if (rows > 1 && row_stride < cols)
    return wg_fail(ctx, WG_EINVAL,
                   "row_stride %llu is shorter than a row (%llu columns)",
                   (unsigned long long)row_stride, (unsigned long long)cols);
  if (rows == 0) {
    wg_errmsg_clear(ctx);
    return WG_OK;
  }
  const size_t size = wg_types[type].size;
  /* The input spans (rows - 1) strides and one row. */
  uint64_t span = 0;
  if (cols > 0) {
    if (rows - 1 > (UINT64_MAX - cols) / (row_stride ? row_stride : 1))
      return wg_fail(ctx, WG_ERANGE, "%llu rows of stride %llu overflow",
                     (unsigned long long)rows, (unsigned long long)row_stride);
    span = (rows - 1) * row_stride + cols;
  }
  status = wg_check_device_buffer(ctx, "input", in, span, size);
  if (status == WG_OK) status = wg_check_device_buffer(ctx, "output", out, rows, size);
  if (status != WG_OK) return status;

  spec.cols = wg_rows_spec_cols(type, cols);
  wg_kernel *k = NULL;
  status = wg_kernel_get(ctx, &k, &spec);
  if (status != WG_OK) return status;

  const wg_rows_shape shape = wg_rows_shape_for(type, spec.cols);
  const uint64_t resident = k->default_grid ? k->default_grid : 1;
  const uint64_t warps_per_block = WG_REDUCE_BLOCK / 32u;
  uint64_t grid;
  unsigned split = 0;
  const bool packed = shape.pack_rows && (uint64_t)spec.cols == cols &&
                      (rows == 1 || row_stride == cols) && in % 16 == 0;
  if (packed) {
    /* Tiny rows that touch: chunks of pack_rows rows, pack_unroll chunks a
     * thread a sweep; split = 1 tells the kernel. */
    split = 1;
    const uint64_t chunks = rows / (uint64_t)shape.pack_rows +
                            (rows % (uint64_t)shape.pack_rows != 0);
    const uint64_t per_block = (uint64_t)WG_REDUCE_BLOCK * (uint64_t)shape.pack_unroll;
    grid = chunks / per_block + (chunks % per_block != 0);
    if (grid > resident) grid = resident;
  } else if (!shape.long_rows) {
    const uint64_t rows_per_tile = (WG_REDUCE_BLOCK / (uint64_t)shape.group) *
                                   (uint64_t)shape.rows_per_round;
    grid = rows / rows_per_tile + (rows % rows_per_tile != 0);
    if (grid > resident) grid = resident;
  } else if (rows >= resident * warps_per_block / 2) {
    /* Enough rows to give every resident warp one: a warp per row. */
    grid = rows / warps_per_block + (rows % warps_per_block != 0);
    if (grid > resident) grid = resident;
  } else {
    /* A block per row; too few rows to fill the GPU: several, each at
     * least 32 vectors a thread, within the workspace. Never more blocks
     * than are resident: rounding up (576 blocks for 528 resident at 64
     * rows) left a second, nearly empty wave that idles most of the GPU. */
    split = 1;
    const uint64_t sms = (uint64_t)ctx->device->info.sm_count;
    if (rows < sms * 4 && rows <= WG_ROWS_MAX_SPLIT_ROWS) {
      const uint64_t vectors = cols / (16u / size);
      uint64_t want = resident / rows;
      const uint64_t most = vectors / ((uint64_t)WG_REDUCE_BLOCK * 32u);
      if (want > most) want = most;
      if (want > WG_ROWS_MAX_PARTIALS / rows) want = WG_ROWS_MAX_PARTIALS / rows;
      if (want < 1) want = 1;
      split = (unsigned)want;
    }
    grid = rows * split;
  }

  CUdeviceptr in_ptr = (CUdeviceptr)in, out_ptr = (CUdeviceptr)out, workspace = 0;
  unsigned long long nrows = rows, ncols = cols, stride = row_stride;
  void *params[] = {&in_ptr, &nrows, &ncols, &stride, &out_ptr, &split, &workspace};
  /* Only split rows combine through memory: a ticket a row. */
  return launch(ctx, k, grid, params, &workspace,
                split > 1 ? (size_t)rows * sizeof(unsigned) : 0, stream);
}
