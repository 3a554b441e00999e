/*
 * driver.c - the CUDA driver, loaded at run time, and the CUDA context a
 * wg_context works in.
 *
 * libcuda.so.1 is opened once per process and its entry points resolved
 * into one table (the library's only global state, written once under
 * pthread_once and read-only afterwards). Where the driver offers
 * cuGetProcAddress (CUDA 12+), each entry is asked for by its plain name at
 * the CUDA 12.0 ABI, the one the prototypes in driver.h follow; otherwise the
 * versioned symbol that cuda.h maps the name to is looked up with dlsym.
 *
 * Contexts: a host that already has a CUDA context current on the calling
 * thread (the runtime API, PyTorch, CuPy) keeps it, and warpgen works inside
 * it. Otherwise warpgen retains the primary context of the configured device
 * and pushes it for the duration of each call, so the host's thread is left
 * with the context stack it had. The context chosen at first use is kept
 * for the whole life of the wg_context, because the modules it loads belong
 * to it.
 */
#include "driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CUDA version whose ABI the table follows; every function in it has had
 * the same signature from 12.0 through 13.x. */
#define WG_DRIVER_ABI_VERSION 12000

typedef CUresult (*get_proc_address_fn)(const char *symbol, void **fn,
                                         int cuda_version, cuuint64_t flags,
                                         CUdriverProcAddressQueryResult *found);

/* Where each entry of wg_driver_api comes from: the name to ask
 * cuGetProcAddress for, and the versioned symbol to dlsym otherwise. */
typedef struct driver_entry {
  const char *name;
  const char *symbol;
  size_t offset;
} driver_entry;

#define ENTRY(field, name, symbol) \
  { name, symbol, offsetof(wg_driver_api, field) }

static const driver_entry driver_entries[] = {
    ENTRY(Init, "cuInit", "cuInit"),
    ENTRY(DriverGetVersion, "cuDriverGetVersion", "cuDriverGetVersion"),
    ENTRY(GetErrorName, "cuGetErrorName", "cuGetErrorName"),
    ENTRY(GetErrorString, "cuGetErrorString", "cuGetErrorString"),
    ENTRY(DeviceGet, "cuDeviceGet", "cuDeviceGet"),
    ENTRY(DeviceGetCount, "cuDeviceGetCount", "cuDeviceGetCount"),
    ENTRY(DeviceGetName, "cuDeviceGetName", "cuDeviceGetName"),
    ENTRY(DeviceTotalMem, "cuDeviceTotalMem", "cuDeviceTotalMem_v2"),
    ENTRY(DeviceGetAttribute, "cuDeviceGetAttribute", "cuDeviceGetAttribute"),
    ENTRY(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",
          "cuDevicePrimaryCtxRetain"),
    ENTRY(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease",
          "cuDevicePrimaryCtxRelease_v2"),
    ENTRY(CtxGetCurrent, "cuCtxGetCurrent", "cuCtxGetCurrent"),
    ENTRY(CtxPushCurrent, "cuCtxPushCurrent", "cuCtxPushCurrent_v2"),
    ENTRY(CtxPopCurrent, "cuCtxPopCurrent", "cuCtxPopCurrent_v2"),
    ENTRY(CtxGetDevice, "cuCtxGetDevice", "cuCtxGetDevice"),
    ENTRY(CtxSynchronize, "cuCtxSynchronize", "cuCtxSynchronize"),
    ENTRY(ModuleLoadData, "cuModuleLoadData", "cuModuleLoadData"),
    ENTRY(ModuleUnload, "cuModuleUnload", "cuModuleUnload"),
    ENTRY(ModuleGetFunction, "cuModuleGetFunction", "cuModuleGetFunction"),
    ENTRY(FuncGetAttribute, "cuFuncGetAttribute", "cuFuncGetAttribute"),
    ENTRY(FuncSetAttribute, "cuFuncSetAttribute", "cuFuncSetAttribute"),
    ENTRY(OccupancyMaxActiveBlocksPerMultiprocessor,
          "cuOccupancyMaxActiveBlocksPerMultiprocessor",
          "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
    ENTRY(LaunchKernel, "cuLaunchKernel", "cuLaunchKernel"),
    ENTRY(MemAlloc, "cuMemAlloc", "cuMemAlloc_v2"),
    ENTRY(MemFree, "cuMemFree", "cuMemFree_v2"),
    ENTRY(MemcpyHtoDAsync, "cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2"),
    ENTRY(MemcpyDtoHAsync, "cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2"),
    ENTRY(MemsetD8Async, "cuMemsetD8Async", "cuMemsetD8Async"),
    ENTRY(StreamSynchronize, "cuStreamSynchronize", "cuStreamSynchronize"),
    ENTRY(StreamGetId, "cuStreamGetId", "cuStreamGetId"),
    ENTRY(StreamIsCapturing, "cuStreamIsCapturing", "cuStreamIsCapturing"),
    ENTRY(StreamWaitEvent, "cuStreamWaitEvent", "cuStreamWaitEvent"),
    ENTRY(MemAllocAsync, "cuMemAllocAsync", "cuMemAllocAsync"),
    ENTRY(MemFreeAsync, "cuMemFreeAsync", "cuMemFreeAsync"),
    ENTRY(EventCreate, "cuEventCreate", "cuEventCreate"),
    ENTRY(EventDestroy, "cuEventDestroy", "cuEventDestroy_v2"),
    ENTRY(EventRecord, "cuEventRecord", "cuEventRecord"),
    ENTRY(EventQuery, "cuEventQuery", "cuEventQuery"),
    ENTRY(EventSynchronize, "cuEventSynchronize", "cuEventSynchronize"),
    ENTRY(EventElapsedTime, "cuEventElapsedTime", "cuEventElapsedTime"),
};

#undef ENTRY

/* The once-initialised driver: written only inside load_driver. */
static struct {
  pthread_once_t once;
  int status;         /* WG_OK or WG_ENODRIVER */
  CUresult init;      /* what cuInit(0) said */
  char why[512];      /* why the driver is unusable */
  wg_driver_api api;
} driver = {.once = PTHREAD_ONCE_INIT};

static void load_driver(void) {
  /* Only the versioned soname: the unversioned libcuda.so is the toolkit's
   * link stub, which must never be loaded. */
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *err = dlerror();
    snprintf(driver.why, sizeof driver.why,
             "the CUDA driver (libcuda.so.1) could not be loaded: %s",
             err ? err : "unknown reason");
    driver.status = WG_ENODRIVER;
    return;
  }
  get_proc_address_fn get_proc = NULL;
  *(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
  for (size_t i = 0; i < WG_COUNT_OF(driver_entries); i++) {
    const driver_entry *e = &driver_entries[i];
    void *fn = NULL;
    if (get_proc) {
      CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
      if (get_proc(e->name, &fn, WG_DRIVER_ABI_VERSION,
                   CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
          found != CU_GET_PROC_ADDRESS_SUCCESS)
        fn = NULL;
    }
    if (!fn)
      fn = dlsym(lib, e->symbol);
    if (!fn) {
      snprintf(driver.why, sizeof driver.why,
               "the CUDA driver (libcuda.so.1) lacks %s: it is older than "
               "CUDA 12.0, which warpgen needs",
               e->symbol);
      driver.status = WG_ENODRIVER;
      /* The library stays open: unloading a driver is never safe. */
      return;
    }
    *(void **)((char *)&driver.api + e->offset) = fn;
  }
  driver.init = driver.api.Init(0);
  driver.status = WG_OK;
}

int wg_driver_load(wg_context *ctx, const wg_driver_api **out) {
  pthread_once(&driver.once, load_driver);
  if (driver.status != WG_OK)
    return wg_fail(ctx, driver.status, "%s", driver.why);
  *out = &driver.api;
  return WG_OK;
}

/* Errors after which the CUDA context cannot be used again: a kernel
 * faulted, and every later call in the context returns the same error. */
static bool is_sticky(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
    return true;
  default:
    return false;
  }
}

int wg_cuda_status(wg_context *ctx, CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return WG_OK;
  const char *name = NULL, *text = NULL;
  if (driver.status == WG_OK) {
    if (driver.api.GetErrorName(result, &name) != CUDA_SUCCESS)
      name = NULL;
    if (driver.api.GetErrorString(result, &text) != CUDA_SUCCESS)
      text = NULL;
  }
  int status = is_sticky(result) ? WG_ELAUNCH : WG_ECUDA;
  if (name)
    return wg_fail(ctx, status, "%s: %s (%s)%s", call, name,
                   text ? text : "no description",
                   status == WG_ELAUNCH
                       ? "; a kernel faulted and this CUDA context is no "
                         "longer usable"
                       : "");
  return wg_fail(ctx, status, "%s: CUDA error %d", call, (int)result);
}

#define CALL(ctx, expr, name)                                    \
  do {                                                           \
    int call_status_ = wg_cuda_status((ctx), (expr), (name));    \
    if (call_status_ != WG_OK)                                   \
      return call_status_;                                       \
  } while (0)

/* Loads the driver and checks that cuInit found a device. */
static int driver_ready(wg_context *ctx, const wg_driver_api **api) {
  int status = wg_driver_load(ctx, api);
  if (status != WG_OK)
    return status;
  if (driver.init == CUDA_SUCCESS)
    return WG_OK;
  const char *name = NULL;
  if (driver.api.GetErrorName(driver.init, &name) != CUDA_SUCCESS)
    name = "unknown error";
  if (driver.init == CUDA_ERROR_NO_DEVICE)
    return wg_fail(ctx, WG_ENODEVICE,
                   "the CUDA driver is present but found no device "
                   "(cuInit: %s)",
                   name);
  return wg_fail(ctx, WG_ENODEVICE,
                 "the CUDA driver is present but cannot be used (cuInit: %s)",
                 name);
}

/* Fills *out for device `dev` (ordinal `ordinal`). */
static int describe_device(wg_context *ctx, const wg_driver_api *api,
                           CUdevice dev, int ordinal, wg_device_info *out) {
  memset(out, 0, sizeof *out);
  out->ordinal = ordinal;
  CALL(ctx, api->DriverGetVersion(&out->driver_version), "cuDriverGetVersion");
  CALL(ctx, api->DeviceGetCount(&out->device_count), "cuDeviceGetCount");
  CALL(ctx, api->DeviceGetName(out->name, (int)sizeof out->name - 1, dev),
       "cuDeviceGetName");
  size_t bytes = 0;
  CALL(ctx, api->DeviceTotalMem(&bytes, dev), "cuDeviceTotalMem");
  out->memory_bytes = bytes;
  int major = 0, minor = 0;
  CALL(ctx,
       api->DeviceGetAttribute(
           &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
       "cuDeviceGetAttribute");
  CALL(ctx,
       api->DeviceGetAttribute(
           &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
       "cuDeviceGetAttribute");
  out->arch = major * 10 + minor;
  CALL(ctx,
       api->DeviceGetAttribute(&out->sm_count,
                               CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
       "cuDeviceGetAttribute");
  return WG_OK;
}

/* Picks ctx's CUDA context and describes its device, once per wg_context. */
static int device_setup(wg_context *ctx, const wg_driver_api **api_out) {
  const wg_driver_api *api = NULL;
  int status = driver_ready(ctx, &api);
  if (status != WG_OK)
    return status;
  *api_out = api;
  if (ctx->device)
    return WG_OK;

  struct wg_device_state *state = calloc(1, sizeof *state);
  if (!state)
    return wg_fail(ctx, WG_ENOMEM, "out of memory for the device state");
  CUcontext current = NULL;
  status = wg_cuda_status(ctx, api->CtxGetCurrent(&current), "cuCtxGetCurrent");
  if (status == WG_OK && current) {
    /* The host's own context: use it, never release it. */
    state->cu_context = current;
    status = wg_cuda_status(ctx, api->CtxGetDevice(&state->cu_device),
                            "cuCtxGetDevice");
  } else if (status == WG_OK) {
    int count = 0;
    status = wg_cuda_status(ctx, api->DeviceGetCount(&count),
                            "cuDeviceGetCount");
    if (status == WG_OK && count == 0)
      status = wg_fail(ctx, WG_ENODEVICE, "the CUDA driver reports no device");
    else if (status == WG_OK &&
             (ctx->device_ordinal < 0 || ctx->device_ordinal >= count))
      status = wg_fail(ctx, WG_ENODEVICE,
                       "CUDA device %d does not exist (this machine has %d)",
                       ctx->device_ordinal, count);
    if (status == WG_OK)
      status = wg_cuda_status(
          ctx, api->DeviceGet(&state->cu_device, ctx->device_ordinal),
          "cuDeviceGet");
    if (status == WG_OK)
      status = wg_cuda_status(
          ctx,
          api->DevicePrimaryCtxRetain(&state->cu_context, state->cu_device),
          "cuDevicePrimaryCtxRetain");
    state->owns_primary = status == WG_OK;
  }
  /* A CUdevice is the device's ordinal. */
  if (status == WG_OK)
    status = describe_device(ctx, api, state->cu_device,
                             (int)state->cu_device, &state->info);
  /* The limits the launchers size blocks and shared memory by. */
  const struct { int *value; CUdevice_attribute attribute; } limits[] = {
    {&state->max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
    {&state->max_shared_per_block_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
    {&state->max_shared_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
    {&state->reserved_shared_per_block, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK},
  };
  for (size_t i = 0; status == WG_OK && i < WG_COUNT_OF(limits); i++)
    status = wg_cuda_status(ctx,
                            api->DeviceGetAttribute(limits[i].value, limits[i].attribute,
                                                    state->cu_device),
                            "cuDeviceGetAttribute");
  if (status != WG_OK) {
    if (state->owns_primary)
      api->DevicePrimaryCtxRelease(state->cu_device);
    free(state);
    return status;
  }
  ctx->device = state;
  return WG_OK;
}

int wg_device_state_get(wg_context *ctx, const struct wg_device_state **out) {
  const wg_driver_api *api = NULL;
  int status = device_setup(ctx, &api);
  if (status == WG_OK)
    *out = ctx->device;
  return status;
}

int wg_device_enter(wg_context *ctx, wg_device_scope *scope,
                    const wg_driver_api **api) {
  scope->pushed = false;
  int status = device_setup(ctx, api);
  if (status != WG_OK)
    return status;
  CUcontext current = NULL;
  CALL(ctx, (*api)->CtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != ctx->device->cu_context) {
    CALL(ctx, (*api)->CtxPushCurrent(ctx->device->cu_context),
         "cuCtxPushCurrent");
    scope->pushed = true;
  }
  return WG_OK;
}

void wg_device_leave(wg_context *ctx, wg_device_scope *scope) {
  (void)ctx;
  if (scope->pushed) {
    CUcontext popped = NULL;
    driver.api.CtxPopCurrent(&popped);
    scope->pushed = false;
  }
}

void wg_device_release(wg_context *ctx) {
  if (!ctx)
    return;
  /* The caller (context.c) freed the modules and workspaces first: they
   * belong to the CUDA context released here. */
  struct wg_device_state *state = ctx->device;
  if (!state)
    return;
  if (state->owns_primary)
    driver.api.DevicePrimaryCtxRelease(state->cu_device);
  free(state);
  ctx->device = NULL;
}

/* --- the public device functions ---------------------------------------- */

int wg_device_get_info(wg_context *ctx, wg_device_info *out) {
  if (!ctx || !out)
    return wg_fail(ctx, WG_EINVAL, "wg_device_get_info: NULL argument");
  const wg_driver_api *api = NULL;
  int status = device_setup(ctx, &api);
  if (status != WG_OK)
    return status;
  *out = ctx->device->info;
  wg_errmsg_clear(ctx);
  return WG_OK;
}

int wg_device_info_at(wg_context *ctx, wg_device_info *out, int ordinal) {
  if (!ctx || !out)
    return wg_fail(ctx, WG_EINVAL, "wg_device_info_at: NULL argument");
  const wg_driver_api *api = NULL;
  int status = driver_ready(ctx, &api);
  if (status != WG_OK)
    return status;
  int count = 0;
  CALL(ctx, api->DeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    return wg_fail(ctx, WG_ENODEVICE,
                   "CUDA device %d does not exist (this machine has %d)",
                   ordinal, count);
  CUdevice dev = 0;
  CALL(ctx, api->DeviceGet(&dev, ordinal), "cuDeviceGet");
  status = describe_device(ctx, api, dev, ordinal, out);
  if (status == WG_OK)
    wg_errmsg_clear(ctx);
  return status;
}

/* Runs one driver call inside ctx's CUDA context. */
#define IN_CONTEXT(ctx, call_name, expr)                                  \
  do {                                                                    \
    wg_device_scope scope_;                                               \
    const wg_driver_api *api = NULL;                                      \
    int status_ = wg_device_enter((ctx), &scope_, &api);                  \
    if (status_ != WG_OK)                                                 \
      return status_;                                                     \
    status_ = wg_cuda_status((ctx), (expr), (call_name));                 \
    wg_device_leave((ctx), &scope_);                                      \
    if (status_ == WG_OK)                                                 \
      wg_errmsg_clear(ctx);                                               \
    return status_;                                                       \
  } while (0)

/* A zero-byte allocation succeeds with the device pointer 0, which
 * wg_mem_free accepts, like malloc(0) and free(NULL). */
int wg_mem_alloc(wg_context *ctx, uint64_t *out, size_t bytes) {
  if (!ctx || !out)
    return wg_fail(ctx, WG_EINVAL, "wg_mem_alloc: NULL argument");
  *out = 0;
  if (bytes == 0)
    return WG_OK;
  CUdeviceptr ptr = 0;
  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  int status = wg_device_enter(ctx, &scope, &api);
  if (status != WG_OK)
    return status;
  status = wg_cuda_status(ctx, api->MemAlloc(&ptr, bytes), "cuMemAlloc");
  wg_device_leave(ctx, &scope);
  if (status != WG_OK)
    return status;
  *out = (uint64_t)ptr;
  wg_errmsg_clear(ctx);
  return WG_OK;
}

int wg_mem_free(wg_context *ctx, uint64_t ptr) {
  if (!ctx)
    return WG_EINVAL;
  if (ptr == 0)
    return WG_OK;
  IN_CONTEXT(ctx, "cuMemFree", api->MemFree((CUdeviceptr)ptr));
}

/* Copies use pageable host memory, which the driver stages through its own
 * buffers; they are ordered on `stream` and complete before returning, so
 * the host buffer may be reused (or read) at once. */
static int copy_and_wait(wg_context *ctx, bool to_device, uint64_t dev,
                         void *host, size_t bytes, void *stream) {
  if (!ctx)
    return WG_EINVAL;
  if (bytes == 0)
    return WG_OK;
  if (!host || dev == 0)
    return wg_fail(ctx, WG_EINVAL, "%s: NULL pointer",
                   to_device ? "wg_memcpy_htod" : "wg_memcpy_dtoh");
  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  int status = wg_device_enter(ctx, &scope, &api);
  if (status != WG_OK)
    return status;
  CUstream s = (CUstream)stream;
  if (to_device)
    status = wg_cuda_status(
        ctx, api->MemcpyHtoDAsync((CUdeviceptr)dev, host, bytes, s),
        "cuMemcpyHtoDAsync");
  else
    status = wg_cuda_status(
        ctx, api->MemcpyDtoHAsync(host, (CUdeviceptr)dev, bytes, s),
        "cuMemcpyDtoHAsync");
  if (status == WG_OK)
    status = wg_cuda_status(ctx, api->StreamSynchronize(s),
                            "cuStreamSynchronize");
  wg_device_leave(ctx, &scope);
  if (status == WG_OK)
    wg_errmsg_clear(ctx);
  return status;
}

int wg_memcpy_htod(wg_context *ctx, uint64_t dst, const void *src,
                   size_t bytes, void *stream) {
  /* The driver only reads src; the cast keeps one copy routine. */
  return copy_and_wait(ctx, true, dst, (void *)(uintptr_t)src, bytes, stream);
}

int wg_memcpy_dtoh(wg_context *ctx, void *dst, uint64_t src, size_t bytes,
                   void *stream) {
  return copy_and_wait(ctx, false, src, dst, bytes, stream);
}

/* Asynchronous on stream, like a launch. */
int wg_memset_d8(wg_context *ctx, uint64_t dst, unsigned char value,
                 size_t bytes, void *stream) {
  if (!ctx)
    return WG_EINVAL;
  if (bytes == 0)
    return WG_OK;
  if (dst == 0)
    return wg_fail(ctx, WG_EINVAL, "wg_memset_d8: NULL device pointer");
  IN_CONTEXT(ctx, "cuMemsetD8Async",
             api->MemsetD8Async((CUdeviceptr)dst, value, bytes,
                                (CUstream)stream));
}

int wg_stream_sync(wg_context *ctx, void *stream) {
  if (!ctx)
    return WG_EINVAL;
  IN_CONTEXT(ctx, "cuStreamSynchronize",
             api->StreamSynchronize((CUstream)stream));
}
