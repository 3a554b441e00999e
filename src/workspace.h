/*
 * workspace.h - scratch device memory for the reductions whose blocks
 * combine through memory (partials and "last block" tickets), handed out
 * per launch so that launches on different streams never share one
 * (workspace.c).
 *
 * Outside stream capture a workspace comes from a small pool per wg_context
 * and is reused with no allocation and no memset: each remembers the stream
 * that used it last and an event recorded after that launch. Under stream
 * capture the launch gets its own graph-owned workspace (allocated, zeroed
 * and freed by nodes of the graph), so every replay is self-contained.
 */
#ifndef WG_WORKSPACE_H
#define WG_WORKSPACE_H

#include "driver.h"

/* One launch's workspace: ptr is WG_WORKSPACE_BYTES (reduce.h) whose first
 * WG_WORKSPACE_TICKET_BYTES are zero when the launch starts; the kernel
 * leaves them zero again when it ends. */
typedef struct wg_workspace {
  CUdeviceptr ptr;
  int slot;                     /* pool slot, or -1: graph-owned */
  unsigned long long stream_id; /* the launching stream's unique id */
} wg_workspace;

/* A workspace for one launch on `stream`, safe to use from that stream with
 * no host synchronisation: the stream's own from the pool, else one no
 * longer in use, else a new one (below a cap), else the least recently used
 * made safe by having `stream` wait for its last launch. Under capture, a
 * graph-owned one whose first `zero_bytes` are zeroed by the graph. Call
 * inside wg_device_enter; every successful acquire is followed by
 * wg_workspace_release on the same stream. */
int wg_workspace_acquire(wg_context *ctx, const wg_driver_api *api,
                         CUstream stream, size_t zero_bytes, wg_workspace *ws);

/* wg_workspace_acquire with `extra_bytes` more after the first
 * WG_WORKSPACE_BYTES (at ws->ptr + WG_WORKSPACE_BYTES): zero when the
 * launch starts, and the kernel must leave them zero (the reductions'
 * partials before them are not). A pool workspace smaller than asked
 * grows: the host waits for its last launch (once per larger size), frees
 * it and allocates the next power of two, zeroed on `stream`. */
int wg_workspace_acquire_extra(wg_context *ctx, const wg_driver_api *api,
                               CUstream stream, size_t zero_bytes, size_t extra_bytes,
                               wg_workspace *ws);

/* After the launch (launched: whether cuLaunchKernel succeeded): records
 * the pool workspace's event on `stream`, or frees the graph-owned one in
 * the graph. Returns the first error (the launch's own status wins). */
int wg_workspace_release(wg_context *ctx, const wg_driver_api *api,
                         CUstream stream, wg_workspace *ws, bool launched);

/* Retires the pool workspace of `ws` for good (a graph-owned one is left
 * alone): for a launch that ran but whose workspace could not be put back
 * as the next launch needs it (zeroed), so that no launch takes it again.
 * Its memory is freed with the pool. */
void wg_workspace_retire(wg_context *ctx, const wg_workspace *ws);

/* Frees ctx's pool (its memory and events). Called by wg_context_destroy
 * before wg_device_release (the memory lives in its CUDA context);
 * work still queued on a workspace must have finished. */
void wg_workspace_pool_free(wg_context *ctx);

#endif /* WG_WORKSPACE_H */
