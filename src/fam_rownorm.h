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
 * out[4] 1 when the next row is staged in shared memory, else 0. */
void wg_rownorm_shape_numbers(wg_primitive primitive, wg_type type, int64_t cols, int arch,
                              unsigned out[5]);
/* The cols= of the kernel a call with rows of `cols` runs: the length its
 * shape holds, 0 beyond a block. */
int64_t wg_rownorm_spec_cols(wg_type type, uint64_t cols);

#endif /* WG_FAM_ROWNORM_H */
