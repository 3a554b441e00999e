/*
 * family.h - kernel families as descriptors.
 *
 * A family is one kind of kernel: the warp primitives, the whole-array
 * reduction, the row reduction, and whatever comes next. Everything the
 * spec, codegen and kernel stages need to know about a family goes through
 * its descriptor, so that adding a family is its own file (descriptor,
 * source, public launch call), its template and its test, plus one row in
 * wg_primitives (tables.c) per primitive it serves.
 *
 * The hooks run at the stages that call them: validate and format_keys in
 * spec.c, concrete in wg_spec_concrete, name_suffix and source in codegen,
 * shared_bytes in kernel.c. None of them touches the driver.
 */
#ifndef WG_FAMILY_H
#define WG_FAMILY_H

#include "internal.h"

/* The spec fields a family may set away from their WG_SPEC_INIT values.
 * spec.c refuses a spec that sets a key its family does not take, with a
 * message naming the key, so that validate hooks check only the values of
 * their own keys. */
enum {
  WG_KEY_WIDTH = 1u << 0,         /* width (other families: 32) */
  WG_KEY_LAYOUT = 1u << 1,        /* layout (others: vec) */
  WG_KEY_LANE = 1u << 2,          /* lane (others: 0) */
  WG_KEY_COLS = 1u << 3,          /* cols (others: 0) */
  WG_KEY_BINS = 1u << 4,          /* bins (others: 0) */
  WG_KEY_COUNTS = 1u << 5,        /* counts (others: u32) */
  WG_KEY_DETERMINISTIC = 1u << 6, /* deterministic (others: 1) */
};

typedef struct wg_family {
  const char *name; /* for messages: "reduce-rows" */
  unsigned keys;    /* WG_KEY_* this family's specs may set */
  /* The family's own rules for s, once spec.c has checked what every spec
   * shares: the version, every enum in range, keys outside `keys` at their
   * defaults, the operator against the primitive and the type, the variant
   * against the primitive's list, the expressions, the arch's range. arch
   * is the effective architecture, 0 when not known yet. WG_OK, or
   * WG_ESPEC with a message that names the key. NULL: nothing more. */
  int (*validate)(wg_context *ctx, const wg_spec *s, int arch);
  /* Appends the family's keys to the canonical text (" cols=1024"), in a
   * fixed order. NULL: none. */
  void (*format_keys)(wg_buf *out, const wg_spec *s);
  /* Resolves the family's `auto` choices in c, a copy of a valid spec
   * whose arch is already explicit. NULL: none. */
  void (*concrete)(wg_spec *c);
  /* Appends the family's part of the kernel name ("_c1024"). NULL: none. */
  void (*name_suffix)(wg_buf *out, const wg_spec *c);
  /* Appends the CUDA source of a concrete spec. */
  int (*source)(wg_context *ctx, wg_buf *out, const wg_spec *concrete);
  /* Dynamic shared memory a block of block_size threads needs. NULL: 0. */
  size_t (*shared_bytes)(const wg_spec *concrete, unsigned block_size);
} wg_family;

/* codegen.c: the warp primitives */
extern const wg_family wg_family_warp;
/* codegen_reduce.c: the whole-array and row reductions */
extern const wg_family wg_family_reduce_array;
extern const wg_family wg_family_reduce_rows;
/* fam_rownorm.c: softmax, log_softmax, layernorm, rmsnorm rows */
extern const wg_family wg_family_rownorm;
/* fam_hist.c: histograms */
extern const wg_family wg_family_histogram;
/* fam_compact.c: stream compaction */
extern const wg_family wg_family_compact;
/* fam_axis.c: reductions over any axis of a strided N-d array */
extern const wg_family wg_family_reduce_axis;
/* fam_scan.c: the whole-array and row scans */
extern const wg_family wg_family_scan_array;
extern const wg_family wg_family_scan_rows;

/* The family of a primitive in range. */
static inline const wg_family *wg_family_of(wg_primitive p) {
  return wg_primitives[p].family;
}

#endif /* WG_FAMILY_H */
