/*
 * kernel.h - loaded kernels (kernel.c): a cubin made into a CUDA module and
 * function, kept per context in a table keyed by the spec, and what
 * launch.c needs to know about each.
 */
#ifndef WG_KERNEL_H
#define WG_KERNEL_H

#include "driver.h"
#include "internal.h"

#include <cuda.h>

struct wg_kernel {
  wg_spec requested;      /* the spec as asked for (the table's key) */
  wg_spec spec;           /* concrete: auto resolved, arch explicit */
  uint64_t hash;          /* of `requested` */
  CUmodule module;
  CUfunction function;
  char name[128];         /* the entry point */
  int max_block_size;     /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
  int static_shared_bytes; /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES */
  int shared_optin_bytes; /* dynamic shared memory opted in to so far */
  unsigned default_block; /* the block size launch.c picks */
  unsigned default_grid;  /* resident blocks at that size, whole device */
};

/* wg_kernel_get for a spec already resolved (wg_spec_facts_get): the
 * kernel of facts->canonical, loaded on the first request. The launchers
 * call it so that a launch resolves its spec once. */
int wg_kernel_for(wg_context *ctx, wg_kernel **out, const wg_spec_facts *facts);

/* Lets k launch with `dynamic` bytes of dynamic shared memory: once its
 * static and dynamic shared memory together pass the 48 KiB every kernel
 * may use, it opts in (cuFuncSetAttribute) for the largest size asked so
 * far. WG_ERANGE, with a message, past what the device allows a block.
 * api: the driver, from wg_device_enter. */
int wg_kernel_allow_shared(wg_context *ctx, const wg_driver_api *api, wg_kernel *k,
                           size_t dynamic);

/* Unloads every module of ctx and frees its table; ctx->kernels is NULL
 * afterwards. Safe to call more than once. */
void wg_kernel_table_free(wg_context *ctx);

/* Checks, before a launch, that `count` elements of `size` bytes from
 * device address `ptr` can be addressed: not NULL, aligned to `size`, not
 * wrapping around (WG_EINVAL, WG_EALIGN, WG_ERANGE with a message naming
 * `what`). count == 0 is always fine. For launch.c and reduce.c. */
int wg_check_device_buffer(wg_context *ctx, const char *what, uint64_t ptr,
                           uint64_t count, size_t size);

/* Checks that the byte ranges [out, out + out_bytes) and [in, in +
 * in_bytes), each already checked by wg_check_device_buffer, share no
 * byte: WG_EINVAL naming both, else WG_OK. For the calls whose kernels
 * read inputs while other blocks write outputs (and so never work in
 * place, or only where the caller has checked it is the same elements). */
int wg_check_apart(wg_context *ctx, const char *out_what, uint64_t out, uint64_t out_bytes,
                   const char *in_what, uint64_t in, uint64_t in_bytes);

#endif /* WG_KERNEL_H */
