/*
 * error.c - status codes and the per-context error message.
 *
 * Every failing call leaves a message in its context; the message is a heap
 * buffer because NVRTC logs can be long and must come back whole.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wg_strerror(int status) {
  switch (status) {
  case WG_OK: return "success";
  case WG_EINVAL: return "invalid argument";
  case WG_ESPEC: return "invalid spec";
  case WG_ENOMEM: return "out of memory";
  case WG_ETEMPLATE: return "template error";
  case WG_ECOMPILE: return "NVRTC compilation failed";
  case WG_ENODRIVER: return "no CUDA driver (libcuda.so.1 not loadable)";
  case WG_ENODEVICE: return "no CUDA device";
  case WG_ECUDA: return "CUDA driver error";
  case WG_EARCH: return "architecture does not match the device";
  case WG_EALIGN: return "misaligned device pointer";
  case WG_ERANGE: return "count or size out of range";
  case WG_EIO: return "input/output error";
  case WG_ENOTFOUND: return "not found";
  case WG_ELAUNCH: return "kernel fault; the CUDA context is unusable";
  default: return "unknown status";
  }
}

static bool errmsg_reserve(wg_context *ctx, size_t need) {
  if (need <= ctx->errmsg_cap) return true;
  size_t cap = ctx->errmsg_cap ? ctx->errmsg_cap : 256;
  while (cap < need) cap *= 2;
  char *p = realloc(ctx->errmsg, cap);
  if (!p) return false;
  ctx->errmsg = p;
  ctx->errmsg_cap = cap;
  return true;
}

int wg_fail(wg_context *ctx, int status, const char *fmt, ...) {
  if (!ctx) return status;
  va_list ap;
  va_start(ap, fmt);
  char small[512];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n < sizeof small) {
    if (errmsg_reserve(ctx, (size_t)n + 1)) memcpy(ctx->errmsg, small, (size_t)n + 1);
    return status;
  }
  if (!errmsg_reserve(ctx, (size_t)n + 1)) {
    /* Keep what fits rather than nothing. */
    if (ctx->errmsg_cap) snprintf(ctx->errmsg, ctx->errmsg_cap, "%s", small);
    return status;
  }
  va_start(ap, fmt);
  vsnprintf(ctx->errmsg, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return status;
}

void wg_errmsg_append(wg_context *ctx, const char *text) {
  if (!ctx || !text) return;
  size_t have = ctx->errmsg ? strlen(ctx->errmsg) : 0, add = strlen(text);
  if (!errmsg_reserve(ctx, have + add + 1)) return;
  memcpy(ctx->errmsg + have, text, add + 1);
}

void wg_errmsg_clear(wg_context *ctx) {
  if (ctx && ctx->errmsg) ctx->errmsg[0] = '\0';
}

const char *wg_errmsg(const wg_context *ctx) {
  return ctx && ctx->errmsg ? ctx->errmsg : "";
}
