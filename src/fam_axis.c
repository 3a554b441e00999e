/*
 * fam_axis.c - the reduce-axis family: reductions over any axes of a
 * strided N-d array (wg_reduce_axis, wg_reduce_axis_spec).
 *
 *   1. The view: the kept and the reduced dimensions, each merged where
 *      their strides allow, must come to (outer, len, inner) with element
 *      strides (so, sl, si); otherwise the call is refused with a message
 *      (no copies, no launches in steps: the caller knows better whether a
 *      copy is affordable).
 *   2. A unit-stride reduced axis whose kept dimensions are rows at least
 *      len apart is a row reduction: wg_reduce_rows_spec runs it.
 *   3. Anything else runs templates/axis_reduce.cu, shaped here from the
 *      view and the device only (so the same input gives the same bits):
 *      how many column threads a block has, whether they load 16 bytes,
 *      and into how many blocks the reduced axis is split when there are
 *      too few columns to fill the GPU.
 *
 * The kernel is made for the spec (type, operator, expressions) alone;
 * sizes and strides are launch arguments.
 */
#include "driver.h"
#include "family.h"
#include "kernel.h"
#include "reduce.h"

#include <stdio.h>
#include <string.h>

/* Loads in flight a thread: element loads, 16-byte loads. */
#define AXIS_UNROLL_SCALAR 8u
#define AXIS_UNROLL_VEC 8u
/* A warp's loads of one row should cover at least this many bytes. */
#define AXIS_MIN_ROW_BYTES 128u
/* A split block walks at least this many steps of U loads a row lane. */
#define AXIS_MIN_SPLIT_TRIPS 4u
/* Split launches: the workspace's tickets (one a tile) and partials (one
 * a column of a tile a chunk). Its partials hold WG_WORKSPACE_PARTIALS of
 * the widest accumulator, or three times as many scalar ones (at most 8
 * bytes: a built-in operator's scalar accumulator or a combine= value). */
#define AXIS_MAX_TILES (WG_WORKSPACE_TICKET_BYTES / 4u)
#define AXIS_SCALAR_ACC_BYTES 8u

static uint64_t max_partials(const wg_spec *spec) {
  const bool scalar = spec->combine || !wg_operators[spec->op].acc[0].name;
  return (uint64_t)WG_WORKSPACE_PARTIALS *
         (scalar ? WG_WORKSPACE_PARTIAL_BYTES / AXIS_SCALAR_ACC_BYTES : 1u);
}

/* --- the family descriptor ------------------------------------------------ */

static int axis_source(wg_context *ctx, wg_buf *out, const wg_spec *concrete) {
  wg_reduce_parts p;
  int rc = wg_reduce_parts_make(ctx, &p, concrete);
  if (rc) return rc;
  char block[16], us[16], uv[16], tickets[16], partial[16];
  snprintf(block, sizeof block, "%u", WG_REDUCE_BLOCK);
  snprintf(us, sizeof us, "%u", AXIS_UNROLL_SCALAR);
  snprintf(uv, sizeof uv, "%u", AXIS_UNROLL_VEC);
  snprintf(tickets, sizeof tickets, "%u", WG_WORKSPACE_TICKET_BYTES);
  /* The accumulator size the launches' count of partials assumes. */
  snprintf(partial, sizeof partial, "%u",
           max_partials(concrete) > WG_WORKSPACE_PARTIALS ? AXIS_SCALAR_ACC_BYTES
                                                           : WG_WORKSPACE_PARTIAL_BYTES);
  const wg_template_var vars[] = {
    {"spec", p.spec_text},
    {"version", WG_VERSION_STRING},
    {"elementwise", wg_spec_elementwise(concrete) ? "#define WG_ELEMENTWISE 1" : ""},
    {"prelude", p.prelude.data},
    {"helpers", p.helpers.data},
    {"kernel", p.kernel},
    {"block", block},
    {"unroll_scalar", us},
    {"unroll_vec", uv},
    {"ticket_bytes", tickets},
    {"partial_bytes", partial},
  };
  rc = wg_template_render(ctx, out, "axis_reduce.cu", vars, WG_COUNT_OF(vars));
  wg_reduce_parts_free(&p);
  return rc;
}

/* Every shared key keeps its default (spec.c checks): nothing of its own. */
const wg_family wg_family_reduce_axis = {
  .name = "reduce-axis",
  .source = axis_source,
};

/* --- the view ------------------------------------------------------------- */

/* One dimension after merging: `size` elements `stride` apart. */
typedef struct axis_dim {
  uint64_t size;
  int64_t stride;
} axis_dim;

/* The array as (outer, len, inner), and the span of element offsets it
 * touches (lo <= 0 <= hi when anything is read). */
typedef struct axis_view {
  uint64_t outer, len, inner, count; /* count = outer * inner, the outputs */
  int64_t so, sl, si;
  int64_t lo, hi;
} axis_view;

/* Merges list[0..n) in place (d and the next merge when d's stride is the
 * next's stride times its size); returns the new length. */
static int merge_dims(axis_dim *list, int n) {
  int m = 0;
  for (int d = 0; d < n; d++) {
    if (m > 0) {
      axis_dim *prev = &list[m - 1];
      int64_t step;
      if (!__builtin_mul_overflow(list[d].stride, (int64_t)list[d].size, &step) &&
          prev->stride == step) {
        prev->size *= list[d].size; /* <= the checked product of all sizes */
        prev->stride = list[d].stride;
        continue;
      }
    }
    list[m++] = list[d];
  }
  return m;
}

static const char *dims_text(char *buf, size_t size, const axis_dim *list, int n) {
  size_t used = 0;
  buf[0] = '\0';
  for (int d = 0; d < n && used < size; d++)
    used += (size_t)snprintf(buf + used, size - used, "%s%llu@%lld", d ? ", " : "",
                             (unsigned long long)list[d].size, (long long)list[d].stride);
  return buf;
}

static int view_make(wg_context *ctx, axis_view *v, int ndim, const int64_t *shape,
                     const int64_t *strides, const int *axes, int naxes) {
  memset(v, 0, sizeof *v);
  if (ndim < 1 || ndim > WG_MAX_DIMS)
    return wg_fail(ctx, WG_EINVAL, "ndim %d: an array has 1 to %d dimensions", ndim,
                   WG_MAX_DIMS);
  if (!shape || !strides || !axes)
    return wg_fail(ctx, WG_EINVAL, "shape, strides or axes is NULL");
  if (naxes < 1 || naxes > ndim)
    return wg_fail(ctx, WG_EINVAL, "naxes %d: reduce 1 to %d axes of a %d-d array", naxes,
                   ndim, ndim);
  bool reduced[WG_MAX_DIMS] = {false};
  for (int a = 0; a < naxes; a++) {
    if (axes[a] < 0 || axes[a] >= ndim)
      return wg_fail(ctx, WG_EINVAL, "axis %d is out of range for a %d-d array (0 to %d)",
                     axes[a], ndim, ndim - 1);
    if (reduced[axes[a]])
      return wg_fail(ctx, WG_EINVAL, "axis %d is given twice", axes[a]);
    reduced[axes[a]] = true;
  }
  bool empty_kept = false, empty_axis = false;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return wg_fail(ctx, WG_EINVAL, "shape[%d] is %lld: sizes are >= 0", d,
                     (long long)shape[d]);
    if (shape[d] == 0) *(reduced[d] ? &empty_axis : &empty_kept) = true;
  }
  v->outer = v->inner = 1;
  if (empty_kept) { /* count 0: nothing to write; len says only whether the axis is empty */
    v->len = empty_axis ? 0 : 1;
    return WG_OK;
  }
  uint64_t count = 1, len = 1;
  for (int d = 0; d < ndim; d++)
    if (__builtin_mul_overflow(reduced[d] ? len : count, (uint64_t)shape[d],
                               reduced[d] ? &len : &count))
      return wg_fail(ctx, WG_ERANGE, "the sizes overflow 64 bits");
  if (empty_axis) { /* every output gets the empty answer; nothing is read */
    v->inner = v->count = count;
    v->si = 1;
    return WG_OK;
  }
  uint64_t total;
  if (__builtin_mul_overflow(count, len, &total) || total > (uint64_t)INT64_MAX)
    return wg_fail(ctx, WG_ERANGE, "%llu outputs of %llu elements overflow",
                   (unsigned long long)count, (unsigned long long)len);
  /* The offsets touched: every product and sum in int64. */
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < ndim; d++) {
    int64_t far;
    if (__builtin_mul_overflow(strides[d], shape[d] - 1, &far) ||
        __builtin_add_overflow(far < 0 ? lo : hi, far, far < 0 ? &lo : &hi))
      return wg_fail(ctx, WG_ERANGE, "dimension %d (%lld elements, stride %lld) takes "
                     "the array's offsets past 64 bits", d, (long long)shape[d],
                     (long long)strides[d]);
  }
  axis_dim kept[WG_MAX_DIMS], red[WG_MAX_DIMS];
  int nk = 0, nr = 0;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 1) continue; /* size 1: any stride, no effect */
    const axis_dim e = {(uint64_t)shape[d], strides[d]};
    if (reduced[d]) red[nr++] = e;
    else kept[nk++] = e;
  }
  nk = merge_dims(kept, nk);
  nr = merge_dims(red, nr);
  char text[256];
  if (nr > 1)
    return wg_fail(ctx, WG_EINVAL, "the reduced axes do not merge into one strided axis "
                   "(size@stride: %s): reduce them in steps or copy the array with them "
                   "last", dims_text(text, sizeof text, red, nr));
  if (nk > 2)
    return wg_fail(ctx, WG_EINVAL, "the kept dimensions do not merge into two (size@stride: "
                   "%s): copy the array (contiguous) first",
                   dims_text(text, sizeof text, kept, nk));
  v->count = count;
  v->len = len;
  v->sl = nr ? red[0].stride : 0;
  v->outer = nk == 2 ? kept[0].size : 1;
  v->so = nk == 2 ? kept[0].stride : 0;
  v->inner = nk ? kept[nk - 1].size : 1;
  v->si = nk ? kept[nk - 1].stride : 0;
  v->lo = lo;
  v->hi = hi;
  return WG_OK;
}

/* Checks that `in` covers the view's offsets; each input has the view's
 * shape and strides. */
static int check_input(wg_context *ctx, const axis_view *v, uint64_t in, size_t size,
                       uint64_t out, uint64_t out_bytes) {
  if (in == 0) return wg_fail(ctx, WG_EINVAL, "the input pointer is NULL");
  if (v->lo < 0 && (uint64_t)-(v->lo + 1) >= in / size)
    return wg_fail(ctx, WG_ERANGE, "the input's negative strides reach below address 0");
  const uint64_t lowest = in - (uint64_t)(-v->lo) * size, count = (uint64_t)(v->hi - v->lo) + 1;
  int status = wg_check_device_buffer(ctx, "input", lowest, count, size);
  /* Blocks write their outputs while others still read: never in place. */
  if (status == WG_OK)
    status = wg_check_apart(ctx, "output", out, out_bytes, "input", lowest, count * size);
  return status;
}

/* --- the launch shape ----------------------------------------------------- */

typedef struct axis_shape {
  unsigned tx;    /* column threads a block (a power of two) */
  unsigned split; /* blocks along the reduced axis */
  uint64_t chunk; /* rows a split block takes */
  uint64_t tiles; /* column tiles */
  uint64_t grid;
} axis_shape;

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Tiles as wide as give every SM about 1.5 blocks (three blocks for two
 * SMs), down to a warp reading AXIS_MIN_ROW_BYTES of a row; then, when the
 * tiles are still fewer than the resident blocks, split the axis over
 * blocks within what the workspace holds. cv: columns a thread.
 *
 * Wide tiles before many: a block that reads 256 bytes to 1 KiB of each
 * row keeps DRAM pages open where eight blocks reading 128 bytes each do
 * not, and 1.5 blocks an SM of 8 loads of 16 bytes a thread already keep
 * enough bytes in flight. On the H200 (f32 sum, 2^26 elements, x read
 * ceiling): the middle axis of 64 x 4096 x 256 went from 0.89 (1024 blocks
 * of 128 bytes a row, split in two) to 0.96-0.97 (256 of 256 bytes), and
 * dim 0 of 1024 x 65536 from 0.90 (2048 tiles of 128 bytes) to 0.965 (256
 * of 1 KiB). Few columns (65536 x 1024) still narrow to 128 bytes and
 * split, which measured best there (0.94). */
static axis_shape shape_for(const axis_view *v, size_t size, unsigned cv,
                            uint64_t resident, uint64_t sms, uint64_t room) {
  const unsigned U = cv > 1 ? AXIS_UNROLL_VEC : AXIS_UNROLL_SCALAR;
  const uint64_t ct = ceil_div(v->count, cv);
  axis_shape s = {WG_REDUCE_BLOCK, 1, v->len, 0, 0};
  while (s.tx > 1 && s.tx / 2 >= ct) s.tx /= 2;
  unsigned tx_min = AXIS_MIN_ROW_BYTES / (cv * (unsigned)size);
  if (tx_min < 1) tx_min = 1;
  while (s.tx > tx_min && 2 * ceil_div(ct, s.tx) < 3 * sms &&
         (uint64_t)(WG_REDUCE_BLOCK / s.tx) * U < v->len)
    s.tx /= 2;
  s.tiles = ceil_div(ct, s.tx);
  const uint64_t ky = WG_REDUCE_BLOCK / s.tx;
  if (s.tiles < resident && s.tiles <= AXIS_MAX_TILES) {
    uint64_t want = resident / s.tiles;
    const uint64_t by_len = v->len / (ky * U * AXIS_MIN_SPLIT_TRIPS);
    const uint64_t by_room = room / (s.tiles * s.tx * cv);
    if (want > by_len) want = by_len;
    if (want > by_room) want = by_room;
    if (want > 1) {
      s.chunk = ceil_div(v->len, want);
      s.split = (unsigned)ceil_div(v->len, s.chunk);
    }
  }
  s.grid = s.tiles * s.split;
  if (s.grid > resident) s.grid = resident; /* the blocks loop over the items */
  return s;
}

/* --- the calls ------------------------------------------------------------ */

static int axis_launch(wg_context *ctx, const wg_spec_facts *f, const uint64_t *inputs,
                       const axis_view *v, wg_scalar *kparams, uint64_t out,
                       void *stream) {
  const wg_spec *spec = &f->canonical;
  const size_t size = wg_types[spec->type].size;
  wg_kernel *k = NULL;
  int status = wg_kernel_for(ctx, &k, f);
  if (status != WG_OK) return status;
  const unsigned vec_elems = 16u / (unsigned)size;
  const bool elementwise = f->elementwise;
  const bool vec = !elementwise && v->len > 0 && v->inner % vec_elems == 0 &&
                   v->si == 1 && inputs[0] % 16 == 0 &&
                   (v->outer == 1 || v->so % (int64_t)vec_elems == 0) &&
                   (v->len <= 1 || v->sl % (int64_t)vec_elems == 0);
  const axis_shape s = shape_for(v, size, vec ? vec_elems : 1u,
                                 k->default_grid ? k->default_grid : 1,
                                 (uint64_t)ctx->device->info.sm_count, max_partials(spec));
  CUdeviceptr in_ptr = (CUdeviceptr)inputs[0], out_ptr = (CUdeviceptr)out, workspace = 0;
  CUdeviceptr all[WG_MAX_INPUTS];
  for (int i = 0; i < WG_MAX_INPUTS; i++)
    all[i] = i == 0 || i < spec->ninputs ? (CUdeviceptr)inputs[i] : 0;
  unsigned long long outer = v->outer, len = v->len, inner = v->inner, chunk = s.chunk;
  long long so = v->so, sl = v->sl, si = v->si;
  unsigned tx = s.tx, vec_flag = vec, split = s.split;
  void *params[] = {elementwise ? (void *)all : (void *)&in_ptr, &outer, &len, &inner, &so,
                    &sl, &si, &out_ptr, &tx, &vec_flag, &split, &chunk, kparams,
                    &workspace};
  return wg_reduce_launch(ctx, k, s.grid, params, &workspace,
                          split > 1 ? (size_t)s.tiles * sizeof(unsigned) : 0, stream);
}

int wg_reduce_axis_spec(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                        size_t ninputs, int ndim, const int64_t *shape,
                        const int64_t *strides, const int *axes, int naxes,
                        const wg_scalar *params, size_t nparams, uint64_t out,
                        void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_scalar kparams[WG_MAX_PARAMS];
  wg_spec_facts facts;
  int status = wg_reduce_spec_args(ctx, &facts, spec, WG_REDUCE_AXIS, inputs, ninputs,
                                   params, nparams, kparams);
  axis_view v;
  if (status == WG_OK) status = view_make(ctx, &v, ndim, shape, strides, axes, naxes);
  if (status != WG_OK) return status;
  /* An empty axis has no argmin, argmax or norminf even where there is
   * no output to write (PyTorch refuses it too). */
  if (v.len == 0 &&
      (status = wg_reduce_check_nonempty(ctx, spec->combine ? WG_OP_NONE : spec->op,
                                         "an empty axis")))
    return status;
  if (v.count == 0) {
    wg_errmsg_clear(ctx);
    return WG_OK;
  }
  if (v.sl == 1 && v.len > 1 && v.outer == 1 &&
      (v.inner == 1 || v.si >= (int64_t)v.len)) {
    /* Rows: the last axis of a contiguous array, or rows a stride apart. */
    wg_spec rows = *spec;
    rows.primitive = WG_REDUCE_ROWS;
    return wg_reduce_rows_spec(ctx, &rows, inputs, ninputs, v.inner, v.len,
                               v.inner == 1 ? v.len : (uint64_t)v.si, params, nparams,
                               out, stream);
  }
  const size_t out_size = wg_types[facts.out_type].size;
  status = wg_check_device_buffer(ctx, "output", out, v.count, out_size);
  for (int i = 0; status == WG_OK && v.len > 0 && i < (spec->ninputs < 1 ? 1 : spec->ninputs);
       i++)
    status = check_input(ctx, &v, inputs[i], wg_types[i == 0 ? spec->type : spec->inputs[i]].size,
                         out, v.count * out_size);
  if (status != WG_OK) return status;
  return axis_launch(ctx, &facts, inputs, &v, kparams, out, stream);
}

int wg_reduce_axis(wg_context *ctx, const wg_reduction *reduction, const uint64_t *inputs,
                   size_t ninputs, int ndim, const int64_t *shape, const int64_t *strides,
                   const int *axes, int naxes, const wg_scalar *params, size_t nparams,
                   uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  wg_scalar kparams[WG_MAX_PARAMS]; /* checked here, made again from the spec */
  const int status = wg_reduce_args(ctx, reduction, inputs, ninputs, params, nparams, kparams);
  if (status != WG_OK) return status;
  if ((unsigned)reduction->type >= WG_TYPE_COUNT)
    return wg_fail(ctx, WG_EINVAL, "type %d is not a warpgen type", (int)reduction->type);
  wg_spec spec;
  wg_spec_init(&spec);
  spec.primitive = WG_REDUCE_AXIS;
  spec.type = reduction->type;
  spec.op = reduction->op;
  return wg_reduce_axis_spec(ctx, &spec, inputs, ninputs, ndim, shape, strides, axes, naxes,
                             params, nparams, out, stream);
}
