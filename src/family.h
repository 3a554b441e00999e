/*
 * family.h - PROVISIONAL copy of the kernel-family contract
 * (/work/notes/family_contract.md) until the lead's version lands on main;
 * removed before merging main.
 */
#ifndef WG_FAMILY_H
#define WG_FAMILY_H

#include "internal.h"

typedef struct wg_family {
  const char *name;
  int (*validate)(wg_context *ctx, const wg_spec *s, int arch);
  void (*format_keys)(wg_buf *out, const wg_spec *s);
  void (*concrete)(wg_spec *c);
  void (*name_suffix)(wg_buf *out, const wg_spec *c);
  int (*source)(wg_context *ctx, wg_buf *out, const wg_spec *concrete);
  size_t (*shared_bytes)(const wg_spec *concrete, unsigned block_size);
} wg_family;
extern const wg_family wg_family_rownorm;

#endif
