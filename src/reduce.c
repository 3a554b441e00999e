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

#include <string.h>

/* gridDim.x may not exceed this. */
#define WG_MAX_GRID 0x7fffffffull

/* The facts of the spec of a reduction of `type` with `op` (validated). */
static int reduce_spec(wg_context *ctx, wg_spec_facts *facts, wg_primitive primitive,
                       wg_type type, wg_operator op) {
  wg_spec spec;
  wg_spec_init(&spec);
  if ((unsigned)type >= WG_TYPE_COUNT)
    return wg_fail(ctx, WG_EINVAL, "type %d is not a warpgen type", (int)type);
  if ((unsigned)op >= WG_OPERATOR_COUNT)
    return wg_fail(ctx, WG_EINVAL, "operator %d is not a warpgen operator", (int)op);
  spec.primitive = primitive;
  spec.type = type;
  spec.op = op;
  return wg_spec_facts_get(ctx, &spec, facts);
}

/* What an _ex call adds: one input (this version), the kernel's parameter
 * block (the caller's values, the rest at the operator's defaults). */
int wg_reduce_args(wg_context *ctx, const wg_reduction *r, const uint64_t *inputs,
                   size_t ninputs, const wg_scalar *params, size_t nparams,
                   wg_scalar kparams[WG_MAX_PARAMS]) {
  if (!r) return wg_fail(ctx, WG_EINVAL, "reduction is NULL");
  if (r->version != WG_REDUCTION_VERSION)
    return wg_fail(ctx, WG_EINVAL, "reduction version %d is not supported (expected %d): "
                   "initialise it with WG_REDUCTION_INIT or wg_reduction_init()",
                   r->version, WG_REDUCTION_VERSION);
  if (r->ninputs != 1 || ninputs != 1 || !inputs)
    return wg_fail(ctx, WG_EINVAL, "a reduction takes exactly one input array in this "
                   "version (ninputs %d, %zu pointers given)", r->ninputs, ninputs);
  if ((unsigned)r->op >= WG_OPERATOR_COUNT)
    return wg_fail(ctx, WG_EINVAL, "operator %d is not a warpgen operator", (int)r->op);
  const wg_operator_info *o = &wg_operators[r->op];
  if (nparams > o->nparams)
    return wg_fail(ctx, WG_EINVAL, "operator '%s' takes %u parameter%s, %zu given",
                   o->name, o->nparams, o->nparams == 1 ? "" : "s", nparams);
  if (nparams && !params) return wg_fail(ctx, WG_EINVAL, "params is NULL");
  memset(kparams, 0, sizeof(wg_scalar) * WG_MAX_PARAMS);
  for (unsigned k = 0; k < o->nparams; k++) {
    if (k < nparams) kparams[k] = params[k];
    else kparams[k].f64 = o->param_defaults[k];
  }
  return WG_OK;
}

/* wg_reduce and wg_reduce_rows write the input's type with default
 * parameters: other operators need the _ex call. */
static int plain_call_check(wg_context *ctx, wg_type type, wg_operator op,
                            const char *call) {
  if ((unsigned)type >= WG_TYPE_COUNT || (unsigned)op >= WG_OPERATOR_COUNT ||
      !wg_operator_accepts(op, type))
    return WG_OK; /* reduce_spec explains */
  const wg_type out = wg_operator_out_type(op, type);
  if (out != type)
    return wg_fail(ctx, WG_EINVAL, "%s writes the input's type (%s) but '%s' of %s "
                   "gives %s: use %s_ex", call, wg_types[type].name,
                   wg_operators[op].name, wg_types[type].name, wg_types[out].name, call);
  return WG_OK;
}

/* argmin, argmax, norminf: no identity a caller may see. */
int wg_reduce_check_nonempty(wg_context *ctx, wg_operator op, const char *what) {
  if (!wg_operators[op].needs_elements) return WG_OK;
  return wg_fail(ctx, WG_EINVAL, "'%s' of %s has no answer (as in PyTorch): there is "
                 "no element", wg_operators[op].name, what);
}

/* Launches kernel k with `grid` blocks of WG_REDUCE_BLOCK threads. The
 * last parameter is the workspace pointer, filled here: a workspace for
 * `stream` whose first `ticket_bytes` are zero, or NULL for ticket_bytes 0
 * (a launch whose blocks do not combine through memory). */
int wg_reduce_launch(wg_context *ctx, const wg_kernel *k, uint64_t grid,
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

/* The kernel's first argument: the input pointer, or for the element
 * kernel (templates/expr_reduce.cu) the struct of all four. */
static void *element_inputs(const wg_spec_facts *f, const uint64_t *inputs,
                            CUdeviceptr all[WG_MAX_INPUTS], CUdeviceptr *first) {
  if (!f->elementwise) return first;
  for (int k = 0; k < WG_MAX_INPUTS; k++)
    all[k] = k == 0 || k < f->canonical.ninputs ? (CUdeviceptr)inputs[k] : 0;
  return all;
}

int wg_reduce_array_run(wg_context *ctx, const wg_spec_facts *f, const uint64_t *inputs,
                        uint64_t n, wg_scalar *kparams, uint64_t out,
                        const wg_shard *shard, void *stream) {
  const uint64_t in = inputs[0];
  const wg_spec spec = f->canonical;
  const wg_type type = spec.type;
  const wg_operator op = spec.op;
  const wg_shard whole = {0, n, false};
  if (!shard) shard = &whole;
  int status = WG_OK;
  /* An empty shard is fine: its accumulator is the identity. */
  if (n == 0 && !shard->partial &&
      (status = wg_reduce_check_nonempty(ctx, op, "an empty array")))
    return status;
  const size_t size = wg_types[type].size;
  status = wg_check_device_buffer(ctx, "input", in, n, size);
  for (int k = 1; status == WG_OK && k < spec.ninputs; k++)
    status = wg_check_device_buffer(ctx, "input", inputs[k], n, wg_types[spec.inputs[k]].size);
  if (status == WG_OK && !shard->partial) /* partial.c checks the accumulator's */
    status = wg_check_device_buffer(ctx, "output", out, 1, wg_types[f->out_type].size);
  if (status != WG_OK) return status;

  wg_kernel *k = NULL;
  status = wg_kernel_for(ctx, &k, f);
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
  CUdeviceptr all_inputs[WG_MAX_INPUTS];
  unsigned long long count = (unsigned long long)n, total = shard->total;
  long long base = shard->base;
  int partial = shard->partial ? 1 : 0;
  void *params[] = {element_inputs(f, inputs, all_inputs, &in_ptr), &count, &out_ptr,
                    kparams, &workspace, &base, &total, &partial};
  /* One block folds alone; more share one ticket. */
  return wg_reduce_launch(ctx, k, grid, params, &workspace, grid > 1 ? sizeof(unsigned) : 0,
                stream);
}

int wg_reduce(wg_context *ctx, wg_type type, wg_operator op, uint64_t in,
              uint64_t n, uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  int status = plain_call_check(ctx, type, op, "wg_reduce");
  if (status != WG_OK) return status;
  const wg_reduction r = {WG_REDUCTION_VERSION, type, op, 1};
  return wg_reduce_ex(ctx, &r, &in, 1, n, NULL, 0, out, stream);
}

int wg_reduce_ex(wg_context *ctx, const wg_reduction *reduction, const uint64_t *inputs,
                 size_t ninputs, uint64_t n, const wg_scalar *params, size_t nparams,
                 uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_scalar kparams[WG_MAX_PARAMS];
  int status = wg_reduce_args(ctx, reduction, inputs, ninputs, params, nparams, kparams);
  wg_spec_facts facts;
  if (status == WG_OK)
    status = reduce_spec(ctx, &facts, WG_REDUCE_ARRAY, reduction->type, reduction->op);
  if (status != WG_OK) return status;
  return wg_reduce_array_run(ctx, &facts, inputs, n, kparams, out, NULL, stream);
}

static int reduce_rows(wg_context *ctx, const wg_spec_facts *f, const uint64_t *inputs,
                       uint64_t rows, uint64_t cols, uint64_t row_stride,
                       wg_scalar *kparams, uint64_t out, void *stream) {
  wg_spec_facts shaped = *f;
  wg_spec spec = f->canonical;
  const wg_type type = spec.type;
  const wg_operator op = spec.op;
  const uint64_t in = inputs[0];
  int status = WG_OK;
  if (rows > 1 && row_stride < cols)
    return wg_fail(ctx, WG_EINVAL,
                   "row_stride %llu is shorter than a row (%llu columns)",
                   (unsigned long long)row_stride, (unsigned long long)cols);
  if (rows == 0) {
    wg_errmsg_clear(ctx);
    return WG_OK;
  }
  if (cols == 0 && (status = wg_reduce_check_nonempty(ctx, op, "an empty row"))) return status;
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
  for (int k = 1; status == WG_OK && k < spec.ninputs; k++)
    status = wg_check_device_buffer(ctx, "input", inputs[k], span,
                                    wg_types[spec.inputs[k]].size);
  if (status == WG_OK) status = wg_check_device_buffer(ctx, "output", out, rows,
                                    wg_types[f->out_type].size);
  /* Blocks write their rows' outputs while others still read: never in
   * place. */
  for (int k = 0; status == WG_OK && k < (spec.ninputs < 1 ? 1 : spec.ninputs); k++)
    status = wg_check_apart(ctx, "output", out, rows * wg_types[f->out_type].size, "input",
                            inputs[k], span * wg_types[k ? spec.inputs[k] : type].size);
  if (status != WG_OK) return status;

  /* The element kernel serves every row length; the others are shaped.
   * cols changes neither validity nor types: the facts stay true. */
  spec.cols = f->elementwise ? 0 : wg_rows_spec_cols(type, cols);
  shaped.canonical.cols = spec.cols;
  shaped.hash = wg_spec_hash(&shaped.canonical);
  wg_kernel *k = NULL;
  status = wg_kernel_for(ctx, &k, &shaped);
  if (status != WG_OK) return status;

  const wg_rows_shape shape = wg_rows_shape_for(type, spec.cols);
  const uint64_t resident = k->default_grid ? k->default_grid : 1;
  const uint64_t warps_per_block = WG_REDUCE_BLOCK / 32u;
  uint64_t grid;
  unsigned split = 0;
  const bool packed = shape.pack_rows && (uint64_t)spec.cols == cols &&
                      (rows == 1 || row_stride == cols) && in % 16 == 0;
  if (f->elementwise) {
    /* The element kernel: a warp per row, as many blocks as rows need up
     * to what is resident (the warps loop). */
    grid = rows / warps_per_block + (rows % warps_per_block != 0);
    if (grid > resident) grid = resident;
  } else if (packed) {
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
  CUdeviceptr all_inputs[WG_MAX_INPUTS];
  unsigned long long nrows = rows, ncols = cols, stride = row_stride;
  void *params[] = {element_inputs(f, inputs, all_inputs, &in_ptr), &nrows, &ncols,
                    &stride, &out_ptr, &split, kparams, &workspace};
  /* Only split rows combine through memory: a ticket a row. */
  return wg_reduce_launch(ctx, k, grid, params, &workspace,
                split > 1 ? (size_t)rows * sizeof(unsigned) : 0, stream);
}

int wg_reduce_rows(wg_context *ctx, wg_type type, wg_operator op, uint64_t in,
                   uint64_t rows, uint64_t cols, uint64_t row_stride,
                   uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  int status = plain_call_check(ctx, type, op, "wg_reduce_rows");
  if (status != WG_OK) return status;
  const wg_reduction r = {WG_REDUCTION_VERSION, type, op, 1};
  return wg_reduce_rows_ex(ctx, &r, &in, 1, rows, cols, row_stride, NULL, 0, out, stream);
}

int wg_reduce_rows_ex(wg_context *ctx, const wg_reduction *reduction,
                      const uint64_t *inputs, size_t ninputs, uint64_t rows,
                      uint64_t cols, uint64_t row_stride, const wg_scalar *params,
                      size_t nparams, uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_scalar kparams[WG_MAX_PARAMS];
  int status = wg_reduce_args(ctx, reduction, inputs, ninputs, params, nparams, kparams);
  wg_spec_facts facts;
  if (status == WG_OK)
    status = reduce_spec(ctx, &facts, WG_REDUCE_ROWS, reduction->type, reduction->op);
  if (status != WG_OK) return status;
  return reduce_rows(ctx, &facts, inputs, rows, cols, row_stride, kparams, out, stream);
}

int wg_reduce_spec_args(wg_context *ctx, wg_spec_facts *facts, const wg_spec *spec,
                        wg_primitive primitive, const uint64_t *inputs, size_t ninputs,
                        const wg_scalar *params, size_t nparams,
                        wg_scalar kparams[WG_MAX_PARAMS]) {
  int status = wg_spec_facts_get(ctx, spec, facts);
  if (status != WG_OK) return status;
  if (spec->primitive != primitive)
    return wg_fail(ctx, WG_EINVAL, "the spec is a '%s', not a '%s'",
                   wg_primitives[spec->primitive].name, wg_primitives[primitive].name);
  return wg_spec_call_args(ctx, spec, inputs, ninputs, params, nparams, kparams);
}

int wg_spec_call_args(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                      size_t ninputs, const wg_scalar *params, size_t nparams,
                      wg_scalar kparams[WG_MAX_PARAMS]) {
  const size_t want = spec->ninputs < 1 ? 1 : (size_t)spec->ninputs;
  if (!inputs || ninputs != want)
    return wg_fail(ctx, WG_EINVAL, "the spec reads %zu input%s, %zu pointer%s given", want,
                   want == 1 ? "" : "s", inputs ? ninputs : 0, ninputs == 1 ? "" : "s");
  if (spec->nparams == 0) {
    const wg_reduction r = {WG_REDUCTION_VERSION, spec->type,
                            spec->combine ? WG_OP_NONE : spec->op, 1};
    return wg_reduce_args(ctx, &r, inputs, 1, params, nparams, kparams);
  }
  if (nparams != (size_t)spec->nparams || !params)
    return wg_fail(ctx, WG_EINVAL, "the spec declares %d parameter%s, %zu given",
                   spec->nparams, spec->nparams == 1 ? "" : "s", params ? nparams : 0);
  memset(kparams, 0, sizeof(wg_scalar) * WG_MAX_PARAMS);
  memcpy(kparams, params, nparams * sizeof *params);
  return WG_OK;
}

int wg_reduce_spec(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                   size_t ninputs, uint64_t n, const wg_scalar *params, size_t nparams,
                   uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_scalar kparams[WG_MAX_PARAMS];
  wg_spec_facts facts;
  int status = wg_reduce_spec_args(ctx, &facts, spec, WG_REDUCE_ARRAY, inputs, ninputs, params,
                         nparams, kparams);
  if (status != WG_OK) return status;
  return wg_reduce_array_run(ctx, &facts, inputs, n, kparams, out, NULL, stream);
}

int wg_reduce_rows_spec(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                        size_t ninputs, uint64_t rows, uint64_t cols, uint64_t row_stride,
                        const wg_scalar *params, size_t nparams, uint64_t out,
                        void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_scalar kparams[WG_MAX_PARAMS];
  wg_spec_facts facts;
  int status = wg_reduce_spec_args(ctx, &facts, spec, WG_REDUCE_ROWS, inputs, ninputs, params,
                         nparams, kparams);
  if (status != WG_OK) return status;
  return reduce_rows(ctx, &facts, inputs, rows, cols, row_stride, kparams, out, stream);
}

void wg_reduction_init(wg_reduction *reduction) {
  if (reduction) *reduction = (wg_reduction)WG_REDUCTION_INIT;
}

int wg_reduce_output_type(wg_type type, wg_operator op) {
  if ((unsigned)type >= WG_TYPE_COUNT || (unsigned)op >= WG_OPERATOR_COUNT ||
      op == WG_OP_NONE)
    return WG_EINVAL;
  if (!wg_operator_accepts(op, type)) return WG_ESPEC;
  return (int)wg_operator_out_type(op, type);
}

int wg_reduce_spec_output_type(const wg_spec *spec) {
  if (!spec) return WG_EINVAL;
  int status = wg_spec_validate(NULL, spec);
  if (status != WG_OK) return status;
  if (!wg_primitives[spec->primitive].takes_operator) return WG_EINVAL;
  return (int)wg_spec_out_type(spec);
}
