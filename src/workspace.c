/*
 * workspace.c - the reductions' workspaces: a small pool per wg_context,
 * and graph-owned workspaces under stream capture (see workspace.h).
 *
 * Why a pool and not one workspace per kernel: two launches that overlap on
 * different streams would share partials and tickets and give silently
 * wrong answers. Why not an allocation per launch: cuMemAlloc synchronises
 * and a memset per launch is another kernel. A wg_context is used by one
 * thread at a time, so the pool needs no lock.
 *
 * Choosing a pool workspace for stream S never waits on the host:
 *   1. one whose last launch was on S: stream order makes it safe;
 *   2. else one whose event has completed: nothing uses it any more;
 *   3. else a new one, while the pool holds fewer than WG_POOL_MAX (its
 *      tickets zeroed by a memset queued on S, once);
 *   4. else the least recently used, with S made to wait for its event.
 * Streams are told apart by cuStreamGetId, which is unique for the life of
 * the process (handles are reused after cuStreamDestroy) and resolves the
 * legacy and per-thread default streams.
 */
#include "workspace.h"

#include "reduce.h"

#include <stdlib.h>

/* The most workspaces a context keeps: as many streams as may overlap
 * without waiting on each other (200 KiB each: partials as wide as the widest accumulator). */
#define WG_POOL_MAX 32

typedef struct pool_slot {
  CUdeviceptr ptr;
  size_t extra;                 /* zeroed bytes after WG_WORKSPACE_BYTES */
  CUevent done;                 /* recorded after the slot's last launch */
  unsigned long long stream_id; /* the stream of that launch */
  uint64_t last_use;            /* pool clock at that launch */
  bool retired;                 /* its event could not be recorded: never
                                   handed out again */
} pool_slot;

struct wg_workspace_pool {
  int count;
  uint64_t clock;
  pool_slot slots[WG_POOL_MAX];
};

/* A graph-owned workspace: allocated, zeroed and (in release) freed on the
 * capturing stream, which makes them nodes of the graph being captured. */
static int acquire_in_graph(wg_context *ctx, const wg_driver_api *api,
                            CUstream stream, size_t zero_bytes, size_t extra,
                            wg_workspace *ws) {
  int status = wg_cuda_status(
      ctx, api->MemAllocAsync(&ws->ptr, WG_WORKSPACE_BYTES + extra, stream),
      "cuMemAllocAsync (a workspace in the captured graph)");
  if (status != WG_OK) return status;
  status = wg_cuda_status(ctx, api->MemsetD8Async(ws->ptr, 0, zero_bytes, stream),
                          "cuMemsetD8Async (a workspace in the captured graph)");
  if (status == WG_OK && extra)
    status = wg_cuda_status(
        ctx, api->MemsetD8Async(ws->ptr + WG_WORKSPACE_BYTES, 0, extra, stream),
        "cuMemsetD8Async (a workspace in the captured graph)");
  if (status != WG_OK) {
    api->MemFreeAsync(ws->ptr, stream);
    ws->ptr = 0;
    return status;
  }
  ws->slot = -1;
  return WG_OK;
}

/* The extra space a slot holds for `extra` bytes: none, or a power of two
 * of at least 64 KiB, so that growing is rare. */
static size_t extra_room(size_t extra) {
  size_t room = 64u << 10;
  while (room < extra) room *= 2;
  return extra ? room : 0;
}

/* Gives slot s (its event made, no memory) room for `extra` bytes: the
 * memory allocated, its tickets and extra space zeroed on `stream` (whose
 * id is `id`) and its event recorded after that, so that until a launch
 * uses it the zeroing is its last use and no other stream takes it before
 * the zeroing ends. On failure s holds no memory. */
static int fill_slot(wg_context *ctx, const wg_driver_api *api, pool_slot *s,
                     CUstream stream, unsigned long long id, size_t extra) {
  const size_t room = extra_room(extra);
  int status = wg_cuda_status(ctx, api->MemAlloc(&s->ptr, WG_WORKSPACE_BYTES + room),
                              "cuMemAlloc (a reduction workspace)");
  if (status == WG_OK)
    status = wg_cuda_status(
        ctx, api->MemsetD8Async(s->ptr, 0, WG_WORKSPACE_TICKET_BYTES, stream),
        "cuMemsetD8Async");
  if (status == WG_OK && room)
    status = wg_cuda_status(
        ctx, api->MemsetD8Async(s->ptr + WG_WORKSPACE_BYTES, 0, room, stream),
        "cuMemsetD8Async");
  if (status == WG_OK)
    status = wg_cuda_status(ctx, api->EventRecord(s->done, stream), "cuEventRecord");
  if (status != WG_OK) {
    if (s->ptr) api->MemFree(s->ptr);
    s->ptr = 0;
    s->extra = 0;
    return status;
  }
  s->extra = room;
  s->stream_id = id;
  return WG_OK;
}

/* Adds a slot to the pool with room for `extra` bytes (fill_slot). Made at
 * its size at once, the first call on a stream never waits on the host
 * (grow_slot would). */
static int add_slot(wg_context *ctx, const wg_driver_api *api,
                    struct wg_workspace_pool *pool, CUstream stream,
                    unsigned long long id, size_t extra) {
  pool_slot s = {0};
  int status = wg_cuda_status(ctx, api->EventCreate(&s.done, CU_EVENT_DISABLE_TIMING),
                              "cuEventCreate");
  if (status == WG_OK) status = fill_slot(ctx, api, &s, stream, id, extra);
  if (status != WG_OK) {
    if (s.done) api->EventDestroy(s.done);
    return status;
  }
  s.last_use = ++pool->clock;
  pool->slots[pool->count++] = s;
  return WG_OK;
}

/* The slot for a launch on stream `id` (steps 1 to 4 above), or -1 with
 * the status in *status. */
static int pick_slot(wg_context *ctx, const wg_driver_api *api,
                     struct wg_workspace_pool *pool, CUstream stream,
                     unsigned long long id, size_t extra, int *status) {
  *status = WG_OK;
  for (int i = 0; i < pool->count; i++)
    if (!pool->slots[i].retired && pool->slots[i].stream_id == id) return i;
  for (int i = 0; i < pool->count; i++) {
    if (pool->slots[i].retired) continue;
    const CUresult r = api->EventQuery(pool->slots[i].done);
    if (r == CUDA_SUCCESS) return i;
    if (r != CUDA_ERROR_NOT_READY) {
      *status = wg_cuda_status(ctx, r, "cuEventQuery");
      return -1;
    }
  }
  if (pool->count < WG_POOL_MAX) {
    *status = add_slot(ctx, api, pool, stream, id, extra);
    return *status == WG_OK ? pool->count - 1 : -1;
  }
  int oldest = -1;
  for (int i = 0; i < pool->count; i++)
    if (!pool->slots[i].retired &&
        (oldest < 0 || pool->slots[i].last_use < pool->slots[oldest].last_use))
      oldest = i;
  if (oldest < 0) {
    *status = wg_fail(ctx, WG_ECUDA, "every reduction workspace of this "
                      "context is retired after failed cuEventRecord calls");
    return -1;
  }
  *status = wg_cuda_status(
      ctx, api->StreamWaitEvent(stream, pool->slots[oldest].done, 0),
      "cuStreamWaitEvent");
  return *status == WG_OK ? oldest : -1;
}

/* Makes slot s hold at least `extra` zeroed bytes after WG_WORKSPACE_BYTES:
 * waits for its last launch, frees it and fills it again (fill_slot) at
 * the next power of two. A slot whose memory could not be replaced is
 * retired. */
static int grow_slot(wg_context *ctx, const wg_driver_api *api, pool_slot *s,
                     CUstream stream, unsigned long long stream_id, size_t extra) {
  int status = wg_cuda_status(ctx, api->EventSynchronize(s->done),
                              "cuEventSynchronize (growing a workspace)");
  if (status != WG_OK) return status;
  api->MemFree(s->ptr);
  s->ptr = 0;
  status = fill_slot(ctx, api, s, stream, stream_id, extra);
  if (status != WG_OK) s->retired = true;
  return status;
}

int wg_workspace_acquire(wg_context *ctx, const wg_driver_api *api,
                         CUstream stream, size_t zero_bytes, wg_workspace *ws) {
  return wg_workspace_acquire_extra(ctx, api, stream, zero_bytes, 0, ws);
}

int wg_workspace_acquire_extra(wg_context *ctx, const wg_driver_api *api,
                               CUstream stream, size_t zero_bytes, size_t extra_bytes,
                               wg_workspace *ws) {
  ws->ptr = 0;
  ws->slot = -1;
  ws->stream_id = 0;
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  int status = wg_cuda_status(ctx, api->StreamIsCapturing(stream, &capture),
                              "cuStreamIsCapturing");
  if (status != WG_OK) return status;
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
    return acquire_in_graph(ctx, api, stream, zero_bytes, extra_bytes, ws);

  status = wg_cuda_status(ctx, api->StreamGetId(stream, &ws->stream_id),
                          "cuStreamGetId");
  if (status != WG_OK) return status;
  struct wg_workspace_pool *pool = ctx->device->workspaces;
  if (!pool) {
    pool = calloc(1, sizeof *pool);
    if (!pool) return wg_fail(ctx, WG_ENOMEM, "out of memory for the workspace pool");
    ctx->device->workspaces = pool;
  }
  const int slot = pick_slot(ctx, api, pool, stream, ws->stream_id, extra_bytes, &status);
  if (slot < 0) return status;
  if (pool->slots[slot].extra < extra_bytes &&
      (status = grow_slot(ctx, api, &pool->slots[slot], stream, ws->stream_id, extra_bytes)))
    return status;
  ws->slot = slot;
  ws->ptr = pool->slots[slot].ptr;
  return WG_OK;
}

int wg_workspace_release(wg_context *ctx, const wg_driver_api *api,
                         CUstream stream, wg_workspace *ws, bool launched) {
  if (!ws->ptr) return WG_OK;
  if (ws->slot < 0) { /* freed in the graph whether or not the launch was */
    const CUresult r = api->MemFreeAsync(ws->ptr, stream);
    return launched ? wg_cuda_status(ctx, r, "cuMemFreeAsync (a workspace in "
                                             "the captured graph)")
                    : WG_OK; /* the launch's own error is the one to keep */
  }
  if (!launched) return WG_OK; /* nothing used it: its state is unchanged */
  pool_slot *s = &ctx->device->workspaces->slots[ws->slot];
  const CUresult r = api->EventRecord(s->done, stream);
  if (r != CUDA_SUCCESS) {
    /* Its event no longer tells when the launch ends. */
    s->retired = true;
    return wg_cuda_status(ctx, r, "cuEventRecord");
  }
  s->stream_id = ws->stream_id;
  s->last_use = ++ctx->device->workspaces->clock;
  return WG_OK;
}

void wg_workspace_retire(wg_context *ctx, const wg_workspace *ws) {
  if (ws->ptr && ws->slot >= 0) ctx->device->workspaces->slots[ws->slot].retired = true;
}

void wg_workspace_pool_free(wg_context *ctx) {
  if (!ctx || !ctx->device || !ctx->device->workspaces) return;
  struct wg_workspace_pool *pool = ctx->device->workspaces;
  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  /* Failures (a context broken by a kernel fault) are ignored: the host
   * memory is freed all the same. */
  if (pool->count > 0 && wg_device_enter(ctx, &scope, &api) == WG_OK) {
    for (int i = 0; i < pool->count; i++) {
      api->EventDestroy(pool->slots[i].done);
      if (pool->slots[i].ptr) api->MemFree(pool->slots[i].ptr);
    }
    wg_device_leave(ctx, &scope);
  }
  free(pool);
  ctx->device->workspaces = NULL;
}
