/*
 * internal.h - what the stages of the library share and the public header
 * does not show: the context, error reporting, the type/operator tables and
 * the entry points each stage offers the next.
 *
 * The pipeline, one stage per file; each calls only stages listed before
 * it, never one after:
 *   error.c, util.c   messages, growable strings
 *   nvrtc.c     libnvrtc found on disk (its identity keys the cache) and
 *               loaded with dlopen when first needed
 *   tables.c    types, operators, primitives, variants as data
 *   expr.c      user expressions (map=, combine=...): tree, canonical text, CUDA
 *   spec.c      text form, validation, listing, the choice behind `auto`
 *               (spec_expr.c: the expression keys of the reductions)
 *   template.c  templates built into the library, strict ${key} filling
 *   codegen.c   concrete spec -> CUDA source, through the spec's kernel
 *               family (family.h): the warp family lives here, the
 *               reductions in codegen_reduce.c, each newer family in a
 *               fam_NAME.c that also holds its public launch call
 *   compile.c   source -> PTX + cubin through NVRTC
 *   cache.c     the on-disk cache of compiled binaries
 *   artifact.c  spec + architecture -> PTX + cubin, through the cache
 *   driver.c    libcuda.so.1 loaded with dlopen; CUDA contexts; memory
 *   kernel.c    cubin -> loaded module and function, per context
 *   workspace.c scratch device memory for the reductions, pooled per context
 *   generate.c  the public wg_source / wg_ptx / wg_cubin
 *   launch.c    the calls users make: warp primitives (reduce.c: reductions;
 *               partial.c: sharded reductions, a shard and the combine)
 *   context.c   creating and destroying a context
 *
 * Nothing before driver.c touches the CUDA driver: the architecture is an
 * input to codegen and artifact, asked of the device only by the callers
 * that have one (generate.c when a spec leaves arch unset, kernel.c). NVRTC
 * is loaded only to compile (compile.c, on a cache miss) or to answer
 * questions about NVRTC itself (wg_nvrtc_version, wg_supported_archs,
 * wg_spec_list for an explicit arch); spec validation never loads it.
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
  /* canonical expression texts specs point at (util.c, wg_intern) */
  struct wg_interned *interned;
  /* what each valid spec asked for resolved to (spec_expr.c) */
  struct wg_spec_memo *spec_memo;
};

/* --- teardown hooks of the device side (driver.c, kernel.c) -------------- */

/* Releases the device state; the kernel table must be freed first (its
 * modules live in the CUDA context this releases). */
void wg_device_release(wg_context *ctx);
void wg_kernel_table_free(wg_context *ctx);

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
/* A copy of text[0..len) owned by ctx until wg_context_destroy; equal texts
 * give the same pointer. NULL when out of memory (message on ctx). */
const char *wg_intern(wg_context *ctx, const char *text, size_t len);
void wg_intern_free(wg_context *ctx);

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
  const char *nonzero;   /* storage `x` -> bool, on its bits: -0.0 is zero,
                            NaN is not (ballot, any, all) */
  unsigned size;         /* bytes of storage */
  bool is_float;
  bool is_signed;
} wg_type_info;

/* How an operator's output type follows from its input type. */
typedef enum wg_out_rule {
  WG_OUT_INPUT, /* the input's type */
  WG_OUT_I64,   /* i64 (indices, counts) */
  WG_OUT_FLOAT  /* the input's type for floats, f32 for integers (PyTorch) */
} wg_out_rule;

/* One field of an accumulator; type may use ${value}. */
typedef struct wg_acc_field {
  const char *type;
  const char *name; /* NULL: the accumulator is a scalar of `type` */
} wg_acc_field;

#define WG_ACC_MAX_FIELDS 3

/* An operator as data: the operator model of the reductions. Every text is
 * a CUDA expression (or, for defs, definitions) filled with ${value},
 * ${uacc}, ${lowest}, ${highest} of the value type; what each expression
 * may use is listed in tables.c. codegen.c renders a row into the prelude:
 * wg_acc, wg_identity, wg_combine, wg_map, wg_finalize and the
 * field-by-field shuffle and load. Today the texts are written in this
 * table; expressions (expr.c) will produce the same fields. */
typedef struct wg_operator_info {
  const char *name;      /* "sum" */
  wg_acc_field acc[WG_ACC_MAX_FIELDS]; /* {{NULL}}: a scalar ${value} */
  const char *defs;      /* device functions the expressions call, or NULL */
  const char *identity;  /* "0", "${lowest}", "wg_acc{...}" */
  const char *combine;   /* over a, b; ${acc} and ${uacc} are filled in */
  const char *combine_float; /* for floating values, or NULL */
  const char *map;       /* over v (${value}) and i (long long index) */
  const char *final;     /* over r, n (count), p (wg_params) */
  wg_out_rule out;
  unsigned types;        /* bit (1 << wg_type) for each accepted input */
  const char *types_note; /* why other types are refused, or NULL */
  bool float_value;      /* integer inputs are mapped as f32 values */
  bool needs_elements;   /* no identity a user may see: empty is an error */
  unsigned nparams;      /* kernel parameters p0.. the final step reads */
  const double *param_defaults; /* their values when a call gives none */
  const char *redux;     /* warp: __reduce_*_sync name, NULL if none */
  bool warp;             /* available to the warp reduce and allreduce */
  bool scan;             /* a prefix of it means something: the warp scans
                            take it (a scalar accumulator, final = r) */
  const char *fold;      /* a lane's N mapped values v[0..N) folded into one
                            accumulator at once (the body of wg_fold_values),
                            where that is cheaper than a map and a combine an
                            element; NULL: map and combine each */
} wg_operator_info;

struct wg_family; /* family.h */

typedef struct wg_primitive_info {
  const char *name;      /* "reduce" */
  bool takes_operator;
  bool is_vote;          /* ballot, any, all, match */
  bool is_warp;          /* a warp primitive (not array/rows) */
  unsigned variants;     /* bit (1 << wg_variant) for each valid variant */
  const struct wg_family *family; /* validate, source, ... (family.h) */
  bool takes_expr;       /* map=, combine=, inputs=, params= allowed */
} wg_primitive_info;

extern const wg_type_info wg_types[WG_TYPE_COUNT];
extern const wg_operator_info wg_operators[WG_OPERATOR_COUNT];
extern const wg_primitive_info wg_primitives[WG_PRIMITIVE_COUNT];
extern const char *const wg_variant_names[WG_VARIANT_COUNT];
extern const char *const wg_layout_names[WG_LAYOUT_COUNT];

/* Does op take inputs of type? */
bool wg_operator_accepts(wg_operator op, wg_type type);
/* The type whose arithmetic map and combine use: the input's, or f32 for
 * integer inputs of an operator with float_value. */
wg_type wg_operator_value_type(wg_operator op, wg_type type);
/* The type of op's output for inputs of type (wg_out_rule). */
wg_type wg_operator_out_type(wg_operator op, wg_type type);

/* --- spec (spec.c) ------------------------------------------------------- */

/* The architecture the spec compiles for: its own, else `device_arch` when
 * non-zero, else WG_DEFAULT_ARCH. */
int wg_spec_arch(const wg_spec *spec, int device_arch);
/* The spec with auto resolved and arch made explicit: what codegen uses. */
wg_spec wg_spec_concrete(const wg_spec *spec, int device_arch);
/* Lanes one group of a concrete warp spec spans: `width` in the lane
 * layout, width * size / 16 (at least 1) in the vec layout. */
int wg_spec_group_lanes(const wg_spec *concrete);

/* --- expression keys (spec_expr.c) -------------------------------------- */

/* Does the spec carry an expression, a second input or parameters? */
bool wg_spec_has_expr(const wg_spec *spec);
/* WG_OK, or WG_ESPEC (message on ctx) for expression keys the spec may not
 * have or that do not parse and type-check in their scopes. */
int wg_spec_expr_validate(wg_context *ctx, const wg_spec *spec);
/* The type whose values the accumulator is built from (the map's, else
 * the operator's value type of the input) and the output's type, for a
 * spec that wg_spec_validate accepts. */
wg_type wg_spec_value_type(const wg_spec *spec);
wg_type wg_spec_out_type(const wg_spec *spec);
/* Does the spec need the element kernel (templates/expr_reduce.cu): a map
 * that reads more than x and i (other inputs, n, parameters), or more than
 * one input? The others run in the vector kernels. */
bool wg_spec_elementwise(const wg_spec *spec);
/* Appends the expression keys in canonical text form (" map=\"x * x\""...).
 * WG_OK, WG_ENOMEM, or the parse error of an invalid spec. */
int wg_spec_expr_format(wg_buf *out, const wg_spec *spec);
/* Parses one of the spec's keys map, combine, identity, final (quoted),
 * inputs or params into spec (expression text interned in ctx). -1 when
 * key is none of them, else WG_OK or an error. */
int wg_spec_expr_key(wg_context *ctx, wg_spec *spec, const char *key, size_t klen,
                     const char *val, size_t vlen);
/* *out = spec with its expressions in canonical text interned in ctx and
 * unused input and parameter slots cleared: specs of equal kernels are
 * equal field by field (kernel.c's table compares them so). */
int wg_spec_canonical(wg_context *ctx, wg_spec *out, const wg_spec *spec);

/* Every field of a spec, expression texts by their bytes: equal specs hash
 * equal, whoever owns their texts. */
uint64_t wg_spec_hash(const wg_spec *spec);
/* Are a and b the same spec field by field (texts compared by content)? */
bool wg_spec_same(const wg_spec *a, const wg_spec *b);

/* What a valid spec resolves to: decided once, then looked up. */
typedef struct wg_spec_facts {
  wg_spec canonical; /* wg_spec_canonical's: texts interned in the context */
  uint64_t hash;     /* wg_spec_hash(&canonical) */
  wg_type value_type, out_type; /* wg_spec_value_type, wg_spec_out_type */
  bool elementwise;  /* wg_spec_elementwise */
} wg_spec_facts;
/* Validates spec (as wg_spec_validate) and fills *out. A spec with
 * expressions is parsed once per context: the facts of every valid one are
 * kept in ctx (keyed by the spec as asked, texts by content), so a launch
 * of a spec seen before costs a hash and a compare, not a parse. WG_OK, or
 * the validation error (message on ctx), or WG_ENOMEM. */
int wg_spec_facts_get(wg_context *ctx, const wg_spec *spec, wg_spec_facts *out);
/* Frees ctx's memo of facts (at wg_context_destroy). */
void wg_spec_memo_free(wg_context *ctx);

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
/* Appends, one line each, the parameters p0.. that an expression using
 * `uses` (wg_expr_uses) reads, loaded from the kernel's `wg_pp`:
 * "  const float wg_p0 = wg_pp.p[0].f32;". Every family that renders a
 * user expression declares its parameters so. */
void wg_codegen_expr_params(wg_buf *out, const wg_spec *s, unsigned uses);
/* The knobs of a decoupled look-back (templates/lookback.cuh says what
 * each does), and their #defines rendered from that template, for the
 * families whose tiles find their place by one (scan, compact). */
typedef struct wg_lookback_knobs {
  unsigned k, first_sleep, sleep, spins;
} wg_lookback_knobs;
int wg_codegen_lookback(wg_context *ctx, wg_buf *out, wg_lookback_knobs knobs);
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
 * (reduce, allreduce, scans: the operator's output type, see
 * wg_spec_out_type; ballot/match: uint32, any/all: int32). A spec for
 * which wg_codegen_warp_takes_params holds takes the _ex ABI, four more:
 *   ..., const wg_params params, const void *y, const void *z,
 *        const void *w)
 * (the parameter block of the reductions; inputs 1..3, NULL when absent). */
size_t wg_codegen_shared_bytes(const wg_spec *concrete, unsigned block_size);
/* Does the warp-primitive kernel of spec take the _ex ABI (expressions,
 * inputs, parameters, or an operator with a parameter such as var's)? */
bool wg_codegen_warp_takes_params(const wg_spec *spec);
/* Elements one thread takes per trip of a warp-primitive kernel's loop: 1
 * in the lane layout, 16 bytes times the loads in flight in the vec layout.
 * launch.c sizes the grid by it. */
unsigned wg_codegen_elements_per_thread(const wg_spec *concrete);

/* --- NVRTC (nvrtc.c) ---------------------------------------------------- */

/* What identifies the NVRTC this process compiles with, found without
 * loading it: "libnvrtc.so.13 size=109338064 mtime=1760564160" (the real
 * file's name, its size and modification time), "none" when there is none.
 * Part of every cache key. Resolved once per process; never NULL. */
const char *wg_nvrtc_identity(void);
/* The real path of that file ("" when there is none). */
const char *wg_nvrtc_path(void);
/* The identity text of the file at path, written like snprintf;
 * WG_ENOTFOUND when path is not a readable regular file. For tests. */
int wg_nvrtc_describe(char *buf, size_t size, const char *path);
/* WG_OK when NVRTC compiles for arch; WG_ESPEC naming the architectures it
 * supports when not; WG_ECOMPILE when NVRTC cannot be loaded. Loads NVRTC. */
int wg_nvrtc_check_arch(wg_context *ctx, int arch);

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

/* Validates spec as asked and as it will be compiled (an auto or arch-less
 * spec becomes concrete only here, with device_arch as for wg_spec_arch),
 * then generates its source (*source malloc'd). */
int wg_artifact_source(wg_context *ctx, char **source, wg_spec *concrete,
                       const wg_spec *spec, int device_arch);
/* spec -> binary, through the disk cache. device_arch as for wg_spec_arch:
 * the caller asks the device (artifact.c never does). NVRTC is loaded only
 * on a miss.
 * *source_out (may be NULL) receives the generated source. */
int wg_artifact_get(wg_context *ctx, wg_binary *out, char **source_out,
                    const wg_spec *spec, int device_arch);
/* Removes spec's disk entry: used when the driver refuses its cubin, so the
 * next wg_artifact_get compiles it again. */
void wg_artifact_forget(wg_context *ctx, const wg_spec *spec, int device_arch);

#endif /* WG_INTERNAL_H */
