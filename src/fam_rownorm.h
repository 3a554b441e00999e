/*
 * fam_rownorm.h - what the fused row kernels (fam_rownorm.c) show the unit
 * tests beyond the public calls: the shape chosen for a row length.
 */
#ifndef WG_FAM_ROWNORM_H
#define WG_FAM_ROWNORM_H

#include "internal.h"

/* The shape of `primitive` for rows of `cols` (0: any) of `type` on
 * architecture `arch` (e.g. 90): out[0] lanes a row, out[1] 16-byte
 * vectors a lane, out[2] rows in flight a group, out[3] threads a block,
 * out[4] 1 when the next row is staged in shared memory, else 0, out[5]
 * 1 when weight and bias are (where they fit), else 0, out[6] 16-byte
 * vectors a lane keeps in shared memory beyond out[1], out[7] blocks an
 * SM keeps (the kernel's __launch_bounds__). */
void wg_rownorm_shape_numbers(wg_primitive primitive, wg_type type, int64_t cols, int arch,
                              unsigned out[8]);
/* An SM's shared memory, in bytes: what it holds for all its blocks, what
 * the system reserves of each block's, what one block may opt in to, and
 * what the kernel declares statically. */
typedef struct wg_rownorm_room {
  int per_sm, reserved_per_block, most_per_block, static_bytes;
} wg_rownorm_room;
/* Bytes of dynamic shared memory a launch gives a block whose shape stages
 * weight and bias: weight, then bias (row_bytes each; false: none given),
 * as many as fit beside the `per_sm` blocks an SM keeps, so that staging
 * costs no occupancy. The kernel reads the room back (%dynamic_smem_size)
 * and takes them in the same order; without room for weight, bias gets
 * none either. */
size_t wg_rownorm_wb_shared_bytes(const wg_rownorm_room *room, unsigned per_sm,
                                  size_t row_bytes, bool weight, bool bias);
/* The cols= of the kernel a call of `primitive` with rows of `cols` runs:
 * the length its shape holds (in registers, and kept in shared memory on
 * sm_90), 0 where that shape streams the row. */
int64_t wg_rownorm_spec_cols(wg_primitive primitive, wg_type type, uint64_t cols);

#endif /* WG_FAM_ROWNORM_H */
