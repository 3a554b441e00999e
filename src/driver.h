/*
 * driver.h - the CUDA driver API as warpgen uses it (driver.c).
 *
 * libcuda.so.1 is opened with dlopen the first time something needs the GPU
 * and its entry points land in one table of function pointers, resolved
 * once per process (pthread_once). <cuda.h> is included for its types and
 * enums only: the library never links against libcuda.
 *
 * Every call that touches a CUDA context brackets its work with
 * wg_device_enter / wg_device_leave, which make the context warpgen uses
 * current on the calling thread and afterwards leave the thread's context
 * stack as the host had it.
 */
#ifndef WG_DRIVER_H
#define WG_DRIVER_H

#include "internal.h"

#include <cuda.h>

/* The driver entry points warpgen calls. Each field is the function the
 * CUDA 12.0+ ABI gives under the name in the comment. */
typedef struct wg_driver_api {
  CUresult (*Init)(unsigned int flags);
  CUresult (*DriverGetVersion)(int *version);
  CUresult (*GetErrorName)(CUresult error, const char **name);
  CUresult (*GetErrorString)(CUresult error, const char **text);
  CUresult (*DeviceGet)(CUdevice *device, int ordinal);
  CUresult (*DeviceGetCount)(int *count);
  CUresult (*DeviceGetName)(char *name, int len, CUdevice device);
  CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice device);
  CUresult (*DeviceGetAttribute)(int *value, CUdevice_attribute attribute,
                                 CUdevice device);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*CtxGetCurrent)(CUcontext *context);
  CUresult (*CtxPushCurrent)(CUcontext context);
  CUresult (*CtxPopCurrent)(CUcontext *context);
  CUresult (*CtxGetDevice)(CUdevice *device);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoadData)(CUmodule *module, const void *image);
  CUresult (*ModuleUnload)(CUmodule module);
  CUresult (*ModuleGetFunction)(CUfunction *function, CUmodule module,
                                const char *name);
  CUresult (*FuncGetAttribute)(int *value, CUfunction_attribute attribute,
                               CUfunction function);
  CUresult (*FuncSetAttribute)(CUfunction function,
                               CUfunction_attribute attribute, int value);
  CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(
      int *blocks, CUfunction function, int block_size,
      size_t dynamic_shared_bytes);
  CUresult (*LaunchKernel)(CUfunction function, unsigned grid_x,
                           unsigned grid_y, unsigned grid_z, unsigned block_x,
                           unsigned block_y, unsigned block_z,
                           unsigned shared_bytes, CUstream stream,
                           void **params, void **extra);
  CUresult (*MemAlloc)(CUdeviceptr *ptr, size_t bytes);
  CUresult (*MemFree)(CUdeviceptr ptr);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes,
                              CUstream stream);
  CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes,
                              CUstream stream);
  CUresult (*MemsetD8Async)(CUdeviceptr dst, unsigned char value,
                            size_t bytes, CUstream stream);
  CUresult (*StreamSynchronize)(CUstream stream);
  CUresult (*StreamGetId)(CUstream stream, unsigned long long *id);
  CUresult (*StreamIsCapturing)(CUstream stream, CUstreamCaptureStatus *status);
  CUresult (*StreamWaitEvent)(CUstream stream, CUevent event, unsigned int flags);
  CUresult (*MemAllocAsync)(CUdeviceptr *ptr, size_t bytes, CUstream stream);
  CUresult (*MemFreeAsync)(CUdeviceptr ptr, CUstream stream);
  CUresult (*EventCreate)(CUevent *event, unsigned int flags);
  CUresult (*EventDestroy)(CUevent event);
  CUresult (*EventRecord)(CUevent event, CUstream stream);
  CUresult (*EventQuery)(CUevent event);
  CUresult (*EventSynchronize)(CUevent event);
  CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
} wg_driver_api;

/* What warpgen knows about the device and CUDA context of one wg_context.
 * Filled by the first call that needs the GPU. */
struct wg_device_state {
  CUcontext cu_context; /* the context every module of ctx lives in */
  CUdevice cu_device;
  bool owns_primary;    /* retained the primary context: release it */
  wg_device_info info;  /* arch, SM count, name, ... of cu_device */
  int max_threads_per_sm;
  int max_shared_per_block_optin; /* bytes a kernel may opt in to */
  int max_shared_per_sm;          /* bytes an SM holds for all its blocks */
  int reserved_shared_per_block;  /* bytes the system takes of each block's */
  struct wg_workspace_pool *workspaces; /* the reductions' (workspace.c) */
};

/* The driver table, loading libcuda.so.1 on first use. WG_ENODRIVER (with a
 * message on ctx, which may be NULL) when it cannot be loaded. */
int wg_driver_load(wg_context *ctx, const wg_driver_api **out);

/* Remembers what wg_device_enter changed on the calling thread. */
typedef struct wg_device_scope {
  bool pushed; /* pushed ctx's context; pop it on leave */
} wg_device_scope;

/* Loads the driver, sets up ctx's device state on first use and makes ctx's
 * CUDA context current on the calling thread. On success *api is the driver
 * table and the caller must call wg_device_leave with the same scope. */
int wg_device_enter(wg_context *ctx, wg_device_scope *scope,
                    const wg_driver_api **api);
void wg_device_leave(wg_context *ctx, wg_device_scope *scope);

/* The device state of ctx, set up on first use (no context made current). */
int wg_device_state_get(wg_context *ctx, const struct wg_device_state **out);

/* Turns a CUDA result into a status: WG_OK for CUDA_SUCCESS, WG_ELAUNCH for
 * the errors that leave the context unusable (a kernel fault), else
 * WG_ECUDA; the message reads "call: CUDA_ERROR_NAME (description)". */
int wg_cuda_status(wg_context *ctx, CUresult result, const char *call);

/* Releases the primary context ctx retained. Call wg_kernel_table_free
 * first: its modules live in that context. Safe to call more than once and
 * without device state. */
void wg_device_release(wg_context *ctx);

#endif /* WG_DRIVER_H */
