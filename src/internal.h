/*
 * internal.h - what the stages of the library share and the public header
 * does not show: the context, error reporting, the type/operator tables and
 * the entry points each stage offers the next.
 *
 * The pipeline, one stage per file:
 *   spec.c      text form, validation, listing, the choice behind `auto`
 *   expr.c      user expressions (map=, combine=...): tree, canonical text, CUDA
 *   tables.c    types, operators, primitives, variants as data
 *   template.c  templates built into the library, strict ${key} filling
 *   codegen.c   spec -> CUDA source
 *   compile.c   source -> PTX + cubin through NVRTC
 *   cache.c     the on-disk cache of compiled binaries
 *   artifact.c  spec -> PTX + cubin, through the cache
 *   driver.c    libcuda.so.1 loaded with dlopen; CUDA contexts; memory
 *   kernel.c    cubin -> loaded module and function, per context
 *   launch.c    the calls users make: warp primitives, reductions
 */
#ifndef WG_INTERNAL_H
#define WG_INTERNAL_H

#include "warpgen.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define WG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define WG_PRINTF(f, a)
#endif

#define WG_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Default architecture when neither the spec nor a device names one. */
#define WG_DEFAULT_ARCH 90

struct wg_disk_cache;   /* cache.c */
struct wg_device_state; /* driver.c */
struct wg_kernel_table; /* kernel.c */

struct wg_context {
  char *errmsg;          /* heap; "" when empty */
  size_t errmsg_cap;
  int device_ordinal;
  char *template_dir;    /* NULL: the built-in templates */
  /* disk cache settings and state (cache.c) */
  char *cache_dir;       /* NULL when disabled */
  bool cache_enabled;
  int cache_option;      /* options.disk_cache: 1 on, -1 off, 0 ask
                            WARPGEN_CACHE */
  uint64_t cache_max_bytes;
  struct wg_disk_cache *cache;
  wg_cache_stats stats;
  /* the device side (driver.c, kernel.c) */
  struct wg_device_state *device;
  struct wg_kernel_table *kernels;
  int device_arch;       /* -1: not probed yet; 0: no device; else e.g. 90 */
};

/* --- teardown hooks of the device side (driver.c, kernel.c) -------------- */

void wg_device_release(wg_context *ctx);
void wg_kernel_table_free(wg_context *ctx);
/* The architecture of ctx's device, or 0 without a driver or device; probed
 * once per context (artifact.c). */
int wg_context_device_arch(wg_context *ctx);

/* --- errors (error.c) ---------------------------------------------------- */

/* Sets ctx's message (printf-style; ctx may be NULL) and returns status. */
int wg_fail(wg_context *ctx, int status, const char *fmt, ...) WG_PRINTF(3, 4);
/* Appends to ctx's message (used to add an NVRTC log). */
void wg_errmsg_append(wg_context *ctx, const char *text);
void wg_errmsg_clear(wg_context *ctx);

/* --- small helpers (util.c) ---------------------------------------------- */

char *wg_strdup(const char *s);
/* A growable string. On allocation failure `failed` is set and further
 * appends do nothing; the caller checks once at the end. */
typedef struct wg_buf {
  char *data;
  size_t len, cap;
  bool failed;
} wg_buf;
void wg_buf_append(wg_buf *b, const char *s, size_t n);
void wg_buf_puts(wg_buf *b, const char *s);
void wg_buf_printf(wg_buf *b, const char *fmt, ...) WG_PRINTF(2, 3);
void wg_buf_free(wg_buf *b);
/* text[0..len) for quoting in a message, NUL-terminated in buf: printable
 * ASCII as it is, every other byte as \xNN (keep_lines keeps '\n' and '\t',
 * for multi-line text such as an NVRTC log), cut with "..." when it does
 * not fit. User input must never reach a terminal raw. Returns buf. */
const char *wg_escape(char *buf, size_t size, const char *text, size_t len,
                      bool keep_lines);
/* Reads the digits (base 10 or 16) at *p into *out and moves *p past them.
 * false, *p unchanged, when there is no digit or the value needs more than
 * 64 bits. No sign, no spaces, no prefix: the caller says what may surround
 * a number. */
bool wg_scan_u64(const char **p, unsigned base, uint64_t *out);

/* --- tables (tables.c) --------------------------------------------------- */

typedef struct wg_type_info {
  const char *name;      /* "f32" */
  const char *ctype;     /* storage type in CUDA: "float" */
  const char *acc;       /* accumulator type: "float" (f32 for halves) */
  const char *uacc;      /* unsigned twin of the accumulator, ints only */
  const char *load;      /* expression turning storage `x` into acc */
  const char *store;     /* expression turning acc `v` into storage */
  const char *lowest;    /* identity of max, in acc */
  const char *highest;   /* identity of min, in acc */
  const char *bits_type; /* unsigned type that carries the storage bits
                            through a shuffle (at least 32 bits) */
  const char *to_bits;   /* storage `x` -> bits */
  const char *from_bits; /* bits `b` -> storage */
  unsigned size;         /* bytes of storage */
  bool is_float;
  bool is_signed;
} wg_type_info;

typedef struct wg_operator_info {
  const char *name;      /* "sum" */
  const char *combine;   /* in a, b; ${acc} and ${uacc} are filled in */
  const char *combine_float; /* for floating accumulators, or NULL */
  const char *identity;  /* "0", "${lowest}", ... */
  const char *redux;     /* __reduce_*_sync name, NULL if none */
  bool integer_only;
} wg_operator_info;

typedef struct wg_primitive_info {
  const char *name;      /* "reduce" */
  bool takes_operator;
  bool is_vote;          /* ballot, any, all, match */
  bool is_warp;          /* a warp primitive (not array/rows) */
  unsigned variants;     /* bit (1 << wg_variant) for each valid variant */
} wg_primitive_info;

extern const wg_type_info wg_types[WG_TYPE_COUNT];
extern const wg_operator_info wg_operators[WG_OPERATOR_COUNT];
extern const wg_primitive_info wg_primitives[WG_PRIMITIVE_COUNT];
extern const char *const wg_variant_names[WG_VARIANT_COUNT];
extern const char *const wg_layout_names[WG_LAYOUT_COUNT];

/* --- spec (spec.c) ------------------------------------------------------- */

/* The architecture the spec compiles for: its own, else `device_arch` when
 * non-zero, else WG_DEFAULT_ARCH. */
int wg_spec_arch(const wg_spec *spec, int device_arch);
/* The spec with auto resolved and arch made explicit: what codegen uses. */
wg_spec wg_spec_concrete(const wg_spec *spec, int device_arch);
/* Lanes one group of a concrete warp spec spans: `width` in the lane
 * layout, width * size / 16 (at least 1) in the vec layout. */
int wg_spec_group_lanes(const wg_spec *concrete);
/* Is arch one NVRTC can compile for? (asks NVRTC once) */
bool wg_arch_supported(wg_context *ctx, int arch);

/* --- templates (template.c) ---------------------------------------------- */

typedef struct wg_template_var {
  const char *key;
  const char *value;
} wg_template_var;

/* The text of template `name` (from WARPGEN_TEMPLATE_DIR / the context's
 * folder, else built in); *out is malloc'd. */
int wg_template_load(wg_context *ctx, char **out, const char *name);
/* Appends `text` (named `name` for messages) to out with every ${key}
 * replaced by its value. Unknown and unclosed keys are WG_ETEMPLATE. */
int wg_template_fill(wg_context *ctx, wg_buf *out, const char *name,
                     const char *text, const wg_template_var *vars,
                     size_t nvars);
/* wg_template_load + wg_template_fill. */
int wg_template_render(wg_context *ctx, wg_buf *out, const char *name,
                       const wg_template_var *vars, size_t nvars);

/* Built-in templates (generated templates.c). */
typedef struct wg_embedded_template {
  const char *name;
  const char *text;
} wg_embedded_template;
extern const wg_embedded_template wg_embedded_templates[];
extern const size_t wg_embedded_template_count;

/* --- codegen (codegen.c) ------------------------------------------------- */

/* The prelude every kernel starts with: element type, accumulator,
 * load/store/bit conversions, identity and combine for spec's type and
 * operator (templates/prelude.cuh). */
int wg_codegen_prelude(wg_context *ctx, wg_buf *out, const wg_spec *spec);
/* The source of a reduce-array or reduce-rows spec (codegen_reduce.c). */
int wg_codegen_reduce(wg_context *ctx, wg_buf *out, const wg_spec *concrete);
/* The source for a concrete spec (see wg_spec_concrete); *out malloc'd. */
int wg_codegen(wg_context *ctx, char **out, const wg_spec *concrete);
/* Dynamic shared memory, in bytes, a warp-primitive kernel of this concrete
 * spec needs at `block_size` threads per block (0 for most variants).
 *
 * The warp-primitive kernel ABI (what codegen emits, what launch.c calls):
 *   extern "C" __global__ void NAME(const STORAGE *in, OUT *out,
 *                                   unsigned long long n)
 * NAME from wg_kernel_name; any grid, blocks a multiple of 32 threads up to
 * 1024; a grid-stride loop over warps; outputs as described at wg_primitive
 * (reduce: STORAGE per group, ballot/match: uint32, any/all: int32). */
size_t wg_codegen_shared_bytes(const wg_spec *concrete, unsigned block_size);
/* Elements one thread takes per trip of a warp-primitive kernel's loop: 1
 * in the lane layout, 16 bytes times the loads in flight in the vec layout.
 * launch.c sizes the grid by it. */
unsigned wg_codegen_elements_per_thread(const wg_spec *concrete);

/* --- compile (compile.c) ------------------------------------------------- */

typedef struct wg_binary {
  char *ptx;      /* NUL-terminated */
  size_t ptx_len; /* without the NUL */
  void *cubin;
  size_t cubin_len;
} wg_binary;

void wg_binary_free(wg_binary *bin);
/* The fixed NVRTC options for arch, as one string (part of the cache key). */
int wg_compile_options(char *buf, size_t size, int arch);
int wg_compile(wg_context *ctx, wg_binary *out, const char *source,
               const char *name, int arch);

/* --- artifact (artifact.c) ----------------------------------------------- */

/* spec -> binary, through the disk cache. device_arch as for wg_spec_arch.
 * *source_out (may be NULL) receives the generated source. */
int wg_artifact_get(wg_context *ctx, wg_binary *out, char **source_out,
                    const wg_spec *spec, int device_arch);
/* Removes spec's disk entry: used when the driver refuses its cubin, so the
 * next wg_artifact_get compiles it again. */
void wg_artifact_forget(wg_context *ctx, const wg_spec *spec, int device_arch);

#endif /* WG_INTERNAL_H */
