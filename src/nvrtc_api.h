/*
 * nvrtc_api.h - NVRTC as warpgen uses it (nvrtc.c): found on disk without
 * loading it, loaded with dlopen the first time something must compile.
 *
 * <nvrtc.h> is included for its types only: the library never links
 * against libnvrtc. Only compile.c calls through the table.
 */
#ifndef WG_NVRTC_API_H
#define WG_NVRTC_API_H

#include "internal.h"

#include <nvrtc.h>

/* The NVRTC entry points warpgen calls, under their nvrtc.h names. */
typedef struct wg_nvrtc_api {
  nvrtcResult (*Version)(int *major, int *minor);
  const char *(*GetErrorString)(nvrtcResult result);
  nvrtcResult (*GetNumSupportedArchs)(int *count);
  nvrtcResult (*GetSupportedArchs)(int *archs);
  nvrtcResult (*CreateProgram)(nvrtcProgram *prog, const char *source,
                               const char *name, int num_headers,
                               const char *const *headers,
                               const char *const *include_names);
  nvrtcResult (*DestroyProgram)(nvrtcProgram *prog);
  nvrtcResult (*CompileProgram)(nvrtcProgram prog, int num_options,
                                const char *const *options);
  nvrtcResult (*GetPTXSize)(nvrtcProgram prog, size_t *size);
  nvrtcResult (*GetPTX)(nvrtcProgram prog, char *ptx);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram prog, size_t *size);
  nvrtcResult (*GetCUBIN)(nvrtcProgram prog, char *cubin);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram prog, size_t *size);
  nvrtcResult (*GetProgramLog)(nvrtcProgram prog, char *log);
} wg_nvrtc_api;

/* The table, loading NVRTC on first use (once per process). WG_ECOMPILE
 * with a message on ctx (which may be NULL) when it cannot be found or
 * loaded, or when the file changed since this process keyed on it. */
int wg_nvrtc_load(wg_context *ctx, const wg_nvrtc_api **out);

#endif /* WG_NVRTC_API_H */
