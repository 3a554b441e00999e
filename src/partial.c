/*
 * partial.c - reductions of an array that lives in shards (on several GPUs,
 * or processes): the accumulator's published layout
 * (wg_reduce_accumulator), the reduction of one shard to its accumulator
 * without the final step (wg_reduce_partial) and the fold of k shards'
 * accumulators followed by the final step (wg_reduce_combine).
 *
 * No communication lives here: a host moves the accumulator bytes with the
 * engine it already runs (NCCL through torch.distributed, MPI, a socket)
 * and hands them back to wg_reduce_combine. The partial launch is the
 * whole-array kernel itself (reduce.c) with its shard arguments set; the
 * combine is the second entry point of the same module
 * (templates/reduce_helpers.cuh, WG_COMBINE_KERNEL), so neither compiles
 * anything a plain wg_reduce_spec of the same spec has not.
 */
#include "driver.h"
#include "kernel.h"
#include "reduce.h"

#include <stdio.h>
#include <string.h>

/* The wg_type of an accumulator field's C type, after ${value} is filled
 * with the value type's accumulator type (halves accumulate as f32). */
static wg_type field_type(const char *ctype, wg_type value) {
  if (!ctype || strcmp(ctype, "${value}") == 0) {
    const char *acc = wg_types[value].acc;
    for (int t = WG_F32; t < WG_TYPE_COUNT; t++)
      if (strcmp(wg_types[t].ctype, acc) == 0) return (wg_type)t;
    return WG_F32; /* f16/bf16: "float" */
  }
  for (int t = WG_F32; t < WG_TYPE_COUNT; t++)
    if (strcmp(wg_types[t].ctype, ctype) == 0) return (wg_type)t;
  return WG_TYPE_COUNT; /* a table row names a type no element has */
}

/* The operator an engine may apply to the accumulator's one integer field
 * itself, in any order, and get the bits the combine would: sums and
 * products wrap modulo 2^bits (the same bits signed or not), min and max
 * of signed integers. Floats never: their sums depend on the order, and
 * engines' min/max of NaN differ from fmin/fmax. Bitwise operators are
 * left out because NCCL has none. */
static wg_operator native_op(const wg_spec *s, const wg_accumulator_layout *l) {
  if (s->combine || l->nfields != 1) return WG_OP_NONE;
  const wg_type t = l->fields[0].type;
  if (wg_types[t].is_float) return WG_OP_NONE;
  switch (s->op) {
  case WG_OP_SUM:
  case WG_OP_PROD:
  case WG_OP_COUNT_NONZERO: return s->op == WG_OP_PROD ? WG_OP_PROD : WG_OP_SUM;
  case WG_OP_MIN:
  case WG_OP_MAX: return wg_types[t].is_signed ? s->op : WG_OP_NONE;
  default: return WG_OP_NONE;
  }
}

/* The layout of a valid spec's accumulator, its values of type `value`
 * (wg_spec_value_type). */
static int layout_of(wg_accumulator_layout *out, const wg_spec *spec, wg_type value) {
  memset(out, 0, sizeof *out);
  const wg_operator_info *o = &wg_operators[spec->combine ? WG_OP_NONE : spec->op];
  /* The fields in order, each at the next multiple of its size, the whole
   * rounded up to the widest: how NVRTC lays out wg_acc (every field is a
   * 4- or 8-byte scalar). */
  size_t at = 0, align = 1;
  for (int f = 0; f < WG_ACC_MAX_FIELDS; f++) {
    if (f > 0 && !o->acc[f].name) break;
    const wg_type t = field_type(o->acc[f].type, value);
    if (t == WG_TYPE_COUNT) return WG_EINVAL;
    const size_t size = wg_types[t].size;
    at = (at + size - 1) / size * size;
    out->fields[f].name = o->acc[f].name ? o->acc[f].name : "";
    out->fields[f].type = t;
    out->fields[f].offset = at;
    at += size;
    if (size > align) align = size;
    out->nfields = f + 1;
    if (!o->acc[f].name) break; /* a scalar */
  }
  out->size = (at + align - 1) / align * align;
  out->align = align;
  out->native = native_op(spec, out);
  return WG_OK;
}

int wg_reduce_accumulator(wg_accumulator_layout *out, const wg_spec *spec) {
  if (!out || !spec) return WG_EINVAL;
  int status = wg_spec_validate(NULL, spec);
  if (status != WG_OK) return status;
  if (spec->primitive != WG_REDUCE_ARRAY && spec->primitive != WG_REDUCE_ROWS)
    return WG_EINVAL;
  return layout_of(out, spec, wg_spec_value_type(spec));
}

/* The accumulator pointer: aligned, not wrapping. */
static int check_accumulators(wg_context *ctx, const char *what, uint64_t ptr,
                              uint64_t count, const wg_accumulator_layout *l) {
  if (count == 0) return WG_OK;
  if (ptr == 0) return wg_fail(ctx, WG_EINVAL, "the %s pointer is NULL", what);
  if (ptr % l->align != 0)
    return wg_fail(ctx, WG_EALIGN, "the %s pointer 0x%llx is not aligned to %zu bytes "
                   "(wg_reduce_accumulator)", what, (unsigned long long)ptr, l->align);
  if (count > UINT64_MAX / l->size || ptr > UINT64_MAX - count * l->size)
    return wg_fail(ctx, WG_ERANGE, "%llu accumulators of %zu bytes from 0x%llx overflow "
                   "the address space", (unsigned long long)count, l->size,
                   (unsigned long long)ptr);
  return WG_OK;
}

int wg_reduce_partial(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                      size_t ninputs, uint64_t n, int64_t base, uint64_t total,
                      const wg_scalar *params, size_t nparams, uint64_t acc,
                      void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_scalar kparams[WG_MAX_PARAMS];
  wg_spec_facts facts;
  int status = wg_reduce_spec_args(ctx, &facts, spec, WG_REDUCE_ARRAY, inputs, ninputs,
                                   params, nparams, kparams);
  if (status != WG_OK) return status;
  if (base < 0 || total < n || (uint64_t)base > total - n)
    return wg_fail(ctx, WG_EINVAL, "a shard of %llu elements at %lld does not fit in "
                   "the %llu elements of the whole array",
                   (unsigned long long)n, (long long)base, (unsigned long long)total);
  wg_accumulator_layout layout;
  if ((status = layout_of(&layout, &facts.canonical, facts.value_type)) != WG_OK)
    return wg_fail(ctx, status, "no accumulator layout for this spec");
  if ((status = check_accumulators(ctx, "accumulator", acc, 1, &layout)) != WG_OK)
    return status;
  const wg_shard shard = {base, total, true};
  return wg_reduce_array_run(ctx, &facts, inputs, n, kparams, acc, &shard, stream);
}

int wg_reduce_combine(wg_context *ctx, const wg_spec *spec, uint64_t accs, uint64_t k,
                      uint64_t total, const wg_scalar *params, size_t nparams,
                      uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  /* The spec's inputs are not read: its first pointer stands in for them. */
  uint64_t none[WG_MAX_INPUTS] = {0};
  const size_t ninputs = spec && spec->ninputs > 1 ? (size_t)spec->ninputs : 1;
  wg_scalar kparams[WG_MAX_PARAMS];
  wg_spec_facts facts;
  int status = wg_reduce_spec_args(ctx, &facts, spec, WG_REDUCE_ARRAY, none, ninputs,
                                   params, nparams, kparams);
  if (status != WG_OK) return status;
  const wg_operator op = spec->combine ? WG_OP_NONE : spec->op;
  if (total == 0 && wg_operators[op].needs_elements)
    return wg_fail(ctx, WG_EINVAL, "'%s' of %s has no answer (as in PyTorch): there is "
                   "no element", wg_operators[op].name, "an empty array");
  wg_accumulator_layout layout;
  if ((status = layout_of(&layout, &facts.canonical, facts.value_type)) != WG_OK)
    return wg_fail(ctx, status, "no accumulator layout for this spec");
  if ((status = check_accumulators(ctx, "accumulators", accs, k, &layout)) != WG_OK)
    return status;
  status = wg_check_device_buffer(ctx, "output", out, 1, wg_types[facts.out_type].size);
  if (status != WG_OK) return status;

  wg_kernel *kernel = NULL;
  if ((status = wg_kernel_for(ctx, &kernel, &facts)) != WG_OK) return status;
  char name[sizeof kernel->name + 16];
  snprintf(name, sizeof name, "%s_combine", kernel->name);
  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  if ((status = wg_device_enter(ctx, &scope, &api)) != WG_OK) return status;
  CUfunction f = NULL;
  status = wg_cuda_status(ctx, api->ModuleGetFunction(&f, kernel->module, name),
                          "cuModuleGetFunction");
  CUdeviceptr accs_ptr = (CUdeviceptr)accs, out_ptr = (CUdeviceptr)out;
  unsigned long long count = k, n = total;
  void *args[] = {&accs_ptr, &count, &n, &out_ptr, kparams};
  if (status == WG_OK)
    status = wg_cuda_status(ctx, api->LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0,
                                                   (CUstream)stream, args, NULL),
                            "cuLaunchKernel");
  wg_device_leave(ctx, &scope);
  if (status == WG_OK) wg_errmsg_clear(ctx);
  return status;
}
