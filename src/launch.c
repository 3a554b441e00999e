/*
 * launch.c - running warp-primitive kernels: the checks made before any
 * launch, the launch configuration and the launch itself.
 *
 * Every launch is asynchronous on the caller's stream; nothing here waits.
 * Arguments are checked before the GPU is touched, so that a wrong pointer
 * or count is an error code and a message, never a kernel fault. The whole-
 * array and row reductions (wg_reduce, wg_reduce_rows) live in reduce.c.
 */
#include "driver.h"
#include "kernel.h"
#include "reduce.h"

#include <stdio.h>

/* Threads a block may have, by the CUDA programming model. */
#define WG_MAX_BLOCK 1024u
/* gridDim.x may not exceed this. */
#define WG_MAX_GRID 0x7fffffffu

/* How many outputs a warp primitive writes and of what size. */
typedef struct output_rule {
  bool one_per_group; /* else one per element */
  size_t fixed_size;  /* bytes of each output; 0: the input element's */
} output_rule;

static const output_rule output_rules[WG_PRIMITIVE_COUNT] = {
    [WG_REDUCE] = {true, 0},     [WG_ALLREDUCE] = {false, 0},
    [WG_SCAN] = {false, 0},      [WG_EXSCAN] = {false, 0},
    [WG_BROADCAST] = {false, 0}, [WG_BALLOT] = {true, sizeof(uint32_t)},
    [WG_ANY] = {true, sizeof(int32_t)}, [WG_ALL] = {true, sizeof(int32_t)},
    [WG_MATCH] = {false, sizeof(uint32_t)},
};

static bool is_warp_primitive(wg_primitive p) {
  return (unsigned)p < WG_PRIMITIVE_COUNT && wg_primitives[p].is_warp;
}

int wg_output_shape(uint64_t *count, size_t *elem_size, const wg_spec *spec,
                    uint64_t n) {
  if (!count || !elem_size || !spec)
    return WG_EINVAL;
  /* Every field is checked but arch, which does not change the shape:
   * checking it would ask NVRTC for its architectures on every launch. */
  wg_spec fields = *spec;
  fields.arch = 0;
  int status = spec->arch < 0 ? WG_ESPEC : wg_spec_validate(NULL, &fields);
  if (status != WG_OK)
    return status;
  if (!is_warp_primitive(spec->primitive))
    return WG_EINVAL; /* a valid spec, but not one this call describes */
  const output_rule *rule = &output_rules[spec->primitive];
  uint64_t width = (uint64_t)spec->width;
  /* n / width rounded up, written so that it cannot overflow. */
  *count = rule->one_per_group ? n / width + (n % width != 0) : n;
  /* The operator primitives write the operator's (or final='s) type. */
  *elem_size = rule->fixed_size ? rule->fixed_size
               : wg_primitives[spec->primitive].takes_operator
                   ? wg_type_size(wg_spec_out_type(&fields))
                   : wg_type_size(spec->type);
  return WG_OK;
}

int wg_check_device_buffer(wg_context *ctx, const char *what, uint64_t ptr,
                           uint64_t count, size_t size) {
  if (count == 0)
    return WG_OK;
  if (ptr == 0)
    return wg_fail(ctx, WG_EINVAL, "the %s pointer is NULL", what);
  if (ptr % size != 0)
    return wg_fail(ctx, WG_EALIGN,
                   "the %s pointer 0x%llx is not aligned to its %zu-byte "
                   "elements",
                   what, (unsigned long long)ptr, size);
  if (count > UINT64_MAX / size || ptr > UINT64_MAX - count * size)
    return wg_fail(ctx, WG_ERANGE,
                   "%llu %s elements of %zu bytes from 0x%llx overflow the "
                   "address space",
                   (unsigned long long)count, what, size,
                   (unsigned long long)ptr);
  return WG_OK;
}

int wg_check_apart(wg_context *ctx, const char *out_what, uint64_t out, uint64_t out_bytes,
                   const char *in_what, uint64_t in, uint64_t in_bytes) {
  if (out_bytes && in_bytes && out < in + in_bytes && in < out + out_bytes)
    return wg_fail(ctx, WG_EINVAL, "the %s overlaps the %s", out_what, in_what);
  return WG_OK;
}

/* Block and grid: the caller's where given, else the kernel's defaults (a
 * block size that suits the primitive, and as many blocks as the device
 * holds at once: the kernels loop over their input, so more only queue). */
static int choose_config(wg_context *ctx, const wg_driver_api *api,
                         const wg_kernel *k, const wg_launch_config *config,
                         uint64_t n, unsigned *block_out, unsigned *grid_out) {
  unsigned block = k->default_block, grid = 0;
  if (config) {
    if (config->version != WG_LAUNCH_CONFIG_VERSION)
      return wg_fail(ctx, WG_EINVAL,
                     "wg_launch_config version %d, expected %d",
                     config->version, WG_LAUNCH_CONFIG_VERSION);
    if (config->block_size) {
      if (config->block_size % 32 != 0 || config->block_size > WG_MAX_BLOCK ||
          config->block_size > (unsigned)k->max_block_size)
        return wg_fail(ctx, WG_EINVAL,
                       "block size %u: must be a multiple of 32 and at most "
                       "%d for %s",
                       config->block_size,
                       k->max_block_size < (int)WG_MAX_BLOCK
                           ? k->max_block_size
                           : (int)WG_MAX_BLOCK,
                       k->name);
      block = config->block_size;
    }
    if (config->grid_size > WG_MAX_GRID)
      return wg_fail(ctx, WG_EINVAL, "grid size %u exceeds %u blocks",
                     config->grid_size, WG_MAX_GRID);
    grid = config->grid_size;
  }
  if (grid == 0) {
    uint64_t resident = k->default_grid;
    if (block != k->default_block) {
      int per_sm = 0;
      int status = wg_cuda_status(
          ctx,
          api->OccupancyMaxActiveBlocksPerMultiprocessor(
              &per_sm, k->function, (int)block,
              wg_codegen_shared_bytes(&k->spec, block)),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
      if (status != WG_OK)
        return status;
      resident = (uint64_t)(per_sm > 0 ? per_sm : 1) *
                 (uint64_t)ctx->device->info.sm_count;
    }
    /* No more blocks than one pass over the input needs. */
    uint64_t per_block = (uint64_t)block * wg_codegen_elements_per_thread(&k->spec);
    uint64_t needed = n / per_block + (n % per_block != 0);
    uint64_t chosen = needed < resident ? needed : resident;
    grid = (unsigned)(chosen > WG_MAX_GRID ? WG_MAX_GRID : chosen);
  }
  *block_out = block;
  *grid_out = grid;
  return WG_OK;
}

/* The launch of any warp kernel: inputs holds the spec's inputs (one but
 * for specs with inputs=), kparams the parameter block of the _ex ABI. */
static int warp_launch(wg_context *ctx, const wg_kernel *kernel, const uint64_t *inputs,
                       uint64_t out, uint64_t n, const wg_scalar *kparams, void *stream,
                       const wg_launch_config *config) {
  const wg_spec *spec = &kernel->spec;
  const uint64_t in = inputs[0];
  if (n == 0) {
    wg_errmsg_clear(ctx);
    return WG_OK;
  }
  uint64_t out_count = 0;
  size_t out_size = 0;
  int status = wg_output_shape(&out_count, &out_size, spec, n);
  if (status != WG_OK)
    return wg_fail(ctx, status, "no output shape for %s", kernel->name);
  status = wg_check_device_buffer(ctx, "input", in, n, wg_type_size(spec->type));
  for (int k = 1; status == WG_OK && k < spec->ninputs; k++)
    status = wg_check_device_buffer(ctx, "input", inputs[k], n,
                                    wg_type_size(spec->inputs[k]));
  if (status == WG_OK)
    status = wg_check_device_buffer(ctx, "output", out, out_count, out_size);
  if (status != WG_OK)
    return status;

  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  status = wg_device_enter(ctx, &scope, &api);
  if (status != WG_OK)
    return status;
  unsigned block = 0, grid = 0;
  status = choose_config(ctx, api, kernel, config, n, &block, &grid);
  size_t shared = status == WG_OK ? wg_codegen_shared_bytes(spec, block) : 0;
  /* The opt-in is remembered in the kernel, which ctx owns and which only
   * this thread (the one using ctx) touches. */
  if (status == WG_OK)
    status = wg_kernel_allow_shared(ctx, api, (wg_kernel *)kernel, shared);
  if (status == WG_OK) {
    CUdeviceptr in_ptr = (CUdeviceptr)in, out_ptr = (CUdeviceptr)out, more[3] = {0, 0, 0};
    for (int k = 1; k < spec->ninputs && k < WG_MAX_INPUTS; k++)
      more[k - 1] = (CUdeviceptr)inputs[k];
    unsigned long long count = (unsigned long long)n;
    /* kparams: the parameter block, passed by value (64 bytes). */
    void *params[] = {&in_ptr, &out_ptr, &count, (void *)kparams, &more[0], &more[1],
                      &more[2]};
    status = wg_cuda_status(
        ctx,
        api->LaunchKernel(kernel->function, grid, 1, 1, block, 1, 1,
                          (unsigned)shared, (CUstream)stream, params, NULL),
        "cuLaunchKernel");
  }
  wg_device_leave(ctx, &scope);
  if (status == WG_OK)
    wg_errmsg_clear(ctx);
  return status;
}

/* The kernel's arguments beyond (in, out, n) from the caller's: checked
 * against the spec (wg_spec_call_args), the parameters at their defaults
 * when none are given. */
static int warp_args(wg_context *ctx, const wg_kernel *kernel, const uint64_t *inputs,
                     size_t ninputs, const wg_scalar *params, size_t nparams,
                     wg_scalar kparams[WG_MAX_PARAMS]) {
  if (!kernel)
    return wg_fail(ctx, WG_EINVAL, "wg_warp_launch: NULL kernel");
  if (!is_warp_primitive(kernel->spec.primitive))
    return wg_fail(ctx, WG_EINVAL,
                   "%s is not a warp primitive: use wg_reduce or "
                   "wg_reduce_rows",
                   kernel->name);
  return wg_spec_call_args(ctx, &kernel->spec, inputs, ninputs, params, nparams, kparams);
}

int wg_warp_launch(wg_context *ctx, const wg_kernel *kernel, uint64_t in,
                   uint64_t out, uint64_t n, void *stream,
                   const wg_launch_config *config) {
  return wg_warp_launch_ex(ctx, kernel, &in, 1, n, NULL, 0, out, stream, config);
}

int wg_warp_launch_ex(wg_context *ctx, const wg_kernel *kernel, const uint64_t *inputs,
                      size_t ninputs, uint64_t n, const wg_scalar *params,
                      size_t nparams, uint64_t out, void *stream,
                      const wg_launch_config *config) {
  if (!ctx)
    return WG_EINVAL;
  wg_scalar kparams[WG_MAX_PARAMS];
  int status = warp_args(ctx, kernel, inputs, ninputs, params, nparams, kparams);
  if (status != WG_OK)
    return status;
  return warp_launch(ctx, kernel, inputs, out, n, kparams, stream, config);
}

int wg_warp(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t out,
            uint64_t n, void *stream) {
  return wg_warp_ex(ctx, spec, &in, 1, n, NULL, 0, out, stream);
}

int wg_warp_ex(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
               size_t ninputs, uint64_t n, const wg_scalar *params, size_t nparams,
               uint64_t out, void *stream) {
  if (!ctx)
    return WG_EINVAL;
  wg_kernel *kernel = NULL;
  int status = wg_kernel_get(ctx, &kernel, spec);
  if (status != WG_OK)
    return status;
  return wg_warp_launch_ex(ctx, kernel, inputs, ninputs, n, params, nparams, out, stream,
                           NULL);
}
