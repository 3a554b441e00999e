/*
 * reduce.h - what the whole-array and row reductions share between the
 * source they generate (codegen_reduce.c) and the launches (reduce.c): the
 * block size the templates are compiled for, the layout of the workspace a
 * launch gets (workspace.c), and the choice of row shape.
 *
 * The numbers come from measurements on an H200 (docs/reduce-design.md).
 */
#ifndef WG_REDUCE_H
#define WG_REDUCE_H

#include "internal.h"

/* Threads a block: the templates are compiled for exactly this. */
#define WG_REDUCE_BLOCK 256u
/* 16-byte loads in flight a thread in the whole-array sweep. */
#define WG_REDUCE_UNROLL 4
/* A whole-array launch adds blocks until each thread has about this many
 * 16-byte vectors (fewer, emptier blocks only cost the final combine). */
#define WG_REDUCE_VECTORS_PER_THREAD 4u
/* The most blocks a whole-array launch has: the partials array's length. */
#define WG_REDUCE_MAX_BLOCKS 4096u
/* Several blocks per row only for at most this many rows, and at most
 * this many (row, block) partials. */
#define WG_ROWS_MAX_SPLIT_ROWS 2048u
#define WG_ROWS_MAX_PARTIALS 8192u

/* A launch's workspace: the "last block" tickets (one a row of a split row
 * launch; the whole-array kernel uses the first), zero between launches,
 * then the partials (each at most WG_WORKSPACE_PARTIAL_BYTES, the widest
 * accumulator; the templates assert it). */
#define WG_WORKSPACE_TICKET_BYTES (WG_ROWS_MAX_SPLIT_ROWS * 4u)
#define WG_WORKSPACE_PARTIALS \
  (WG_ROWS_MAX_PARTIALS > WG_REDUCE_MAX_BLOCKS ? WG_ROWS_MAX_PARTIALS \
                                               : WG_REDUCE_MAX_BLOCKS)
#define WG_WORKSPACE_PARTIAL_BYTES 24u /* (count, mean, M2) of f64 */
#define WG_WORKSPACE_BYTES \
  (WG_WORKSPACE_TICKET_BYTES + WG_WORKSPACE_PARTIALS * WG_WORKSPACE_PARTIAL_BYTES)

/* The inputs and parameter block of a call with a validated spec: `inputs`
 * must hold max(1, spec->ninputs) pointers; kparams gets the spec's own
 * parameters (exactly spec->nparams given) or, when it declares none, the
 * operator's with their defaults. WG_OK or WG_EINVAL with a message. Used
 * by the reductions and the warp primitives' _ex calls. */
int wg_spec_call_args(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                      size_t ninputs, const wg_scalar *params, size_t nparams,
                      wg_scalar kparams[WG_MAX_PARAMS]);

/* How a reduce-rows kernel maps rows onto threads. */
typedef struct wg_rows_shape {
  bool long_rows;       /* a warp or blocks per row (split chosen at launch) */
  int group;            /* short rows: lanes per row (1, 2, ..., 32) */
  int vectors_per_lane; /* short rows: 16-byte vectors a lane per pass */
  int rows_per_round;   /* short rows: rows a group has in flight */
  /* Tiny rows (at most 32 bytes) also have a packed path, taken when the
   * rows touch (stride == cols) and the base is 16-byte aligned: the
   * matrix is read as one flat array, each thread taking pack_rows whole
   * rows that fill exactly pack_vectors 16-byte vectors, pack_unroll such
   * chunks in flight. pack_rows 0: no packed path. */
  int pack_rows, pack_vectors, pack_unroll;
} wg_rows_shape;

/* The shape for rows of `cols` elements of `type` (cols 0: any length, the
 * long-row shape). */
wg_rows_shape wg_rows_shape_for(wg_type type, int64_t cols);

/* The most bytes a row may have for the packed path. */
#define WG_PACK_MAX_ROW_BYTES 32u

/* The cols a reduce-rows spec is made with for rows of `cols` elements:
 * the longest row length of the same shape, so that row lengths that share
 * a shape share one kernel (and one compile); tiny rows (the packed path
 * unrolls over their exact length) get their own. 0 for long rows. */
int64_t wg_rows_spec_cols(wg_type type, uint64_t cols);

/* Which part of a larger array a whole-array launch reduces
 * (wg_reduce_partial, partial.c): element e of the launch is index
 * base + e of `total` elements (what map's i and n and the final step
 * see), and with `partial` the kernel stores its accumulator, not the
 * output. */
typedef struct wg_shard {
  int64_t base;
  uint64_t total;
  bool partial;
} wg_shard;

/* A whole-array reduction of a valid reduce-array spec (its facts;
 * reduce.c): inputs holds its ninputs pointers, kparams the kernel's
 * parameter block. shard NULL: the whole array, out its output (checked
 * here); else out is the accumulator when shard->partial, which the caller
 * checks. */
int wg_reduce_array_run(wg_context *ctx, const wg_spec_facts *facts,
                        const uint64_t *inputs, uint64_t n, wg_scalar *kparams,
                        uint64_t out, const wg_shard *shard, void *stream);

/* The arguments of a spec call: the spec's facts (valid, of `primitive`),
 * its inputs, and the kernel's parameter block: the spec's own parameters
 * when it declares any, else the operator's (with their defaults). */
int wg_reduce_spec_args(wg_context *ctx, wg_spec_facts *facts, const wg_spec *spec,
                        wg_primitive primitive, const uint64_t *inputs, size_t ninputs,
                        const wg_scalar *params, size_t nparams,
                        wg_scalar kparams[WG_MAX_PARAMS]);

/* What every reduction template is filled with (codegen_reduce.c): the
 * spec's canonical text, the kernel's name, the prelude of its type,
 * operator and expressions, and templates/reduce_helpers.cuh. */
typedef struct wg_reduce_parts {
  char *spec_text;
  char kernel[128];
  wg_buf prelude, helpers;
} wg_reduce_parts;
int wg_reduce_parts_make(wg_context *ctx, wg_reduce_parts *p, const wg_spec *concrete);
void wg_reduce_parts_free(wg_reduce_parts *p);

/* --- what reduce.c lends the other reduction families (fam_axis.c) ----- */

#include <cuda.h>

/* argmin, argmax, norminf of nothing: WG_EINVAL naming `what` ("an empty
 * row"); WG_OK for every other operator. */
int wg_reduce_check_nonempty(wg_context *ctx, wg_operator op, const char *what);
/* Launches k with `grid` blocks of WG_REDUCE_BLOCK threads on stream; the
 * kernel's last parameter is *workspace, filled here: a workspace for the
 * stream whose first ticket_bytes are zero, or 0 when ticket_bytes is 0. */
int wg_reduce_launch(wg_context *ctx, const wg_kernel *k, uint64_t grid, void **params,
                     CUdeviceptr *workspace, size_t ticket_bytes, void *stream);
/* The arguments of an _ex call: the reduction's version and input count,
 * and the kernel's parameter block (the caller's values, the rest at the
 * operator's defaults). */
int wg_reduce_args(wg_context *ctx, const wg_reduction *r, const uint64_t *inputs,
                   size_t ninputs, const wg_scalar *params, size_t nparams,
                   wg_scalar kparams[WG_MAX_PARAMS]);

#endif /* WG_REDUCE_H */
