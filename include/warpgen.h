/*
 * warpgen.h - the whole public interface of libwarpgen.
 *
 * warpgen writes GPU kernels at run time: a caller names an operation, an
 * element type, an operator, a logical warp width and a shuffle variant
 * (a "spec"), warpgen fills text templates for exactly that, compiles the
 * CUDA source with NVRTC to PTX and cubin, keeps the cubin in a cache and
 * launches it through the CUDA driver API (loaded at run time; no link-time
 * dependency on libcuda).
 *
 * Conventions, for every function below:
 *   - The return value is a status: WG_OK (0) or a negative WG_E* code.
 *     wg_errmsg(ctx) then holds a message with the detail (the field that is
 *     wrong, the NVRTC log, the CUDA error name); wg_strerror(code) is a
 *     static one-line description of the code.
 *   - Out parameters come first. Memory the library returns to the caller is
 *     released with wg_free(); everything else stays owned by the library.
 *   - Device pointers are uint64_t, CUDA streams and contexts are void *, so
 *     this header needs no CUDA header.
 *   - Threads: there is no global mutable state except what is resolved
 *     once per process under pthread_once and then only read: the driver's
 *     and NVRTC's entry points, where NVRTC lives, and the text of the
 *     expression helpers. A wg_context must be used by one thread at a
 *     time; separate contexts may be used in parallel from separate
 *     threads. Functions that take no context are thread-safe.
 *   - Streams: every launch is asynchronous on the caller's stream (NULL:
 *     the default stream) and nothing waits on the host unless a function
 *     says so. Launches may overlap on any streams and inside CUDA graph
 *     capture; see wg_reduce for the workspaces that makes this safe.
 *   - The library never prints, never exits and never aborts.
 */
#ifndef WARPGEN_H
#define WARPGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WG_BUILDING_LIBRARY) && defined(__GNUC__)
#define WG_API __attribute__((visibility("default")))
#else
#define WG_API
#endif

#define WG_VERSION_MAJOR 0
#define WG_VERSION_MINOR 1
#define WG_VERSION_PATCH 0
#define WG_VERSION_STRING "0.1.0"
/* WG_VERSION_NUMBER: major * 10000 + minor * 100 + patch. */
#define WG_VERSION_NUMBER \
  (WG_VERSION_MAJOR * 10000 + WG_VERSION_MINOR * 100 + WG_VERSION_PATCH)

/* The version of the library actually loaded, as "major.minor.patch" and as
 * WG_VERSION_NUMBER would spell it. Compare with the macros to detect a
 * header/library mismatch. */
WG_API const char *wg_version(void);
WG_API int wg_version_number(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

enum {
  WG_OK = 0,
  WG_EINVAL = -1,     /* a bad argument: NULL pointer, bad size, bad option */
  WG_ESPEC = -2,      /* a spec that does not parse or is not valid */
  WG_ENOMEM = -3,     /* out of host memory */
  WG_ETEMPLATE = -4,  /* a template is missing or malformed */
  WG_ECOMPILE = -5,   /* NVRTC failed; the message holds its log */
  WG_ENODRIVER = -6,  /* libcuda.so.1 cannot be loaded */
  WG_ENODEVICE = -7,  /* a driver, but no usable CUDA device */
  WG_ECUDA = -8,      /* a CUDA driver call failed; message names the error */
  WG_EARCH = -9,      /* the spec's architecture does not match the device */
  WG_EALIGN = -10,    /* a device pointer is not aligned to its element */
  WG_ERANGE = -11,    /* a count or size overflows what the kernel can take */
  WG_EIO = -12,       /* a file could not be read or written */
  WG_ENOTFOUND = -13, /* a named tool or item does not exist */
  WG_ELAUNCH = -14    /* a kernel faulted; the CUDA context is now unusable */
};

/* A static, one-line description of a status code; never NULL. */
WG_API const char *wg_strerror(int status);

/* ------------------------------------------------------------------------ */
/* The spec: what kernel to make                                            */
/* ------------------------------------------------------------------------ */

/* The operation. The first nine are warp primitives: the kernel takes
 * (input, output, n) and applies the primitive to each group of `width`
 * consecutive elements; the last group may be partial, its missing lanes
 * hold the operator's identity and write nothing.
 *
 *   WG_REDUCE     reduce       one output per group (the group's first lane)
 *   WG_ALLREDUCE  allreduce    one output per element (every lane's copy)
 *   WG_SCAN       scan         inclusive prefix, one output per element
 *   WG_EXSCAN     exscan       exclusive prefix (lane 0 gets the identity)
 *
 * reduce and allreduce take every operator (wg_operator) and expressions;
 * the group is a reduction of its k elements (k = width, fewer for the
 * last group), exactly as reduce-rows reduces a row of k, except for the
 * index: each element is mapped with i = its global index in the input
 * (map=, argmin/argmax), and the final step sees n = k (mean divides by
 * k, var by k - correction, final= reads n = k). So argmin/argmax write the
 * global index (i64) of the group's least/greatest element, first on ties,
 * NaN winning: in[out[g]] is that element, and out[g] - g * width its place
 * in the group. Outputs have the operator's type (wg_reduce_output_type;
 * the final expression's with final=): wg_output_shape gives their size.
 * The scans take sum, prod, min, max, and, or, xor or combine= (their
 * accumulator is their output), with map=, not final=; exscan's first
 * element is the identity. Specs with expressions, inputs= or params=,
 * and var/std (their correction), take the _ex kernel ABI: see
 * wg_warp_launch_ex. redux takes no expressions.
 *   WG_BROADCAST  broadcast    every element gets its group's lane `lane`
 *                              (zero where that lane is past the end)
 *   WG_BALLOT     ballot       one uint32 per group: bit j set when the
 *                              group's element j is non-zero
 *   WG_ANY        any          one int32 per group: 1 if any element != 0
 *   WG_ALL        all          one int32 per group: 1 if every element != 0
 *   WG_MATCH      match        one uint32 per element: the bits (relative to
 *                              the group) of the lanes whose element has the
 *                              same bit pattern
 *
 * Whole-array and row reductions (see wg_reduce, wg_reduce_rows):
 *   WG_REDUCE_ARRAY  reduce-array  the whole array to one value
 *   WG_REDUCE_ROWS   reduce-rows   one value per row of `cols` elements
 *
 * Histograms (see wg_histogram):
 *   WG_HISTOGRAM     histogram     `bins` counts (u32 or u64) of the keys
 *                                  that fall in each bin
 * Stream compaction (see wg_compact):
 *   WG_COMPACT       compact       the elements a predicate keeps (pred=),
 *                                  in order, their indices and their count
 *
 * Fused row kernels (see wg_softmax_rows): each row of `cols` elements to
 * a row of the same length and type; floating types only, no operator:
 *   WG_SOFTMAX_ROWS      softmax-rows      exp(x - max) / sum
 *   WG_LOG_SOFTMAX_ROWS  log-softmax-rows  x - max - log(sum)
 *   WG_LAYERNORM_ROWS    layernorm-rows    (x - mean) / sqrt(var + eps) * w + b
 *   WG_RMSNORM_ROWS      rmsnorm-rows      x / sqrt(mean(x^2) + eps) * w
 * Their spec text takes cols= as reduce-rows does: the row length the
 * kernel's shape is made for (0: any; every kernel is correct for every
 * length), e.g. "softmax-rows f32 cols=1024", "layernorm-rows bf16".
 *
 * Reductions over any axis of a strided N-d array (see wg_reduce_axis):
 *   WG_REDUCE_AXIS   reduce-axis   one value per column of an (outer, len,
 *                                  inner) view, any element strides
 *
 * Whole-array and row scans (see wg_scan_array, wg_scan_rows):
 *   WG_SCAN_ARRAY    scan-array    inclusive prefixes of the whole array
 *   WG_EXSCAN_ARRAY  exscan-array  exclusive prefixes (the first gets the
 *                                  identity)
 *   WG_SCAN_ROWS     scan-rows     inclusive prefixes along each row
 *   WG_EXSCAN_ROWS   exscan-rows   exclusive prefixes along each row
 */
typedef enum {
  WG_REDUCE = 0,
  WG_ALLREDUCE,
  WG_SCAN,
  WG_EXSCAN,
  WG_BROADCAST,
  WG_BALLOT,
  WG_ANY,
  WG_ALL,
  WG_MATCH,
  WG_REDUCE_ARRAY,
  WG_REDUCE_ROWS,
  WG_HISTOGRAM,
  WG_COMPACT,
  WG_SOFTMAX_ROWS,
  WG_LOG_SOFTMAX_ROWS,
  WG_LAYERNORM_ROWS,
  WG_RMSNORM_ROWS,
  WG_REDUCE_AXIS,
  WG_SCAN_ARRAY,
  WG_EXSCAN_ARRAY,
  WG_SCAN_ROWS,
  WG_EXSCAN_ROWS,
  WG_PRIMITIVE_COUNT
} wg_primitive;

/* Element types. f16 and bf16 accumulate in f32 and are rounded once when
 * stored; every other type accumulates in itself. Integer sums and products
 * wrap modulo 2^bits. */
typedef enum {
  WG_F16 = 0,
  WG_BF16,
  WG_F32,
  WG_F64,
  WG_I32,
  WG_U32,
  WG_I64,
  WG_U64,
  WG_TYPE_COUNT
} wg_type;

/* Operators. and/or/xor are bitwise and exist for integer types only.
 * Floating min/max follow fmin/fmax: a NaN loses against a number.
 *
 * From argmin on the operators serve the whole-array and row reductions
 * and the warp reduce and allreduce (over each group, see wg_primitive;
 * the warp scans refuse them). They follow PyTorch; their output types
 * are the rule of wg_reduce_output_type:
 *   argmin, argmax  the index (i64) of the least / greatest element, the
 *                   first on ties; a NaN wins (the first NaN's index).
 *                   Empty input is an error. Any input type.
 *   mean            the sum divided by the count; mean of nothing is NaN.
 *   var, std        variance and standard deviation with a correction
 *                   (parameter 0, an f64, default 1: M2 / max(0, n - c)),
 *                   combined as Welford/Chan; n <= c gives NaN or inf.
 *   norm1, norm2    sum of |x|, square root of the sum of squares.
 *   norminf         max |x|, a NaN spreads; empty input is an error.
 *                   mean, var, std and the norms need floating inputs and
 *                   give the input's type (f16/bf16 accumulate in f32).
 *   logsumexp       log(sum(exp(x))), as an online (max, sum) pair; the
 *                   input's type for floats, f32 for integers; empty gives
 *                   -inf.
 *   count_nonzero   the number of elements != 0 (NaN counts), as i64.
 * New operators are appended, so the values above never change. */
typedef enum {
  WG_OP_NONE = 0, /* for broadcast and the vote family, which take none */
  WG_OP_SUM,
  WG_OP_PROD,
  WG_OP_MIN,
  WG_OP_MAX,
  WG_OP_AND,
  WG_OP_OR,
  WG_OP_XOR,
  WG_OP_ARGMIN,
  WG_OP_ARGMAX,
  WG_OP_MEAN,
  WG_OP_VAR,
  WG_OP_STD,
  WG_OP_NORM1,
  WG_OP_NORM2,
  WG_OP_NORMINF,
  WG_OP_LOGSUMEXP,
  WG_OP_COUNT_NONZERO,
  WG_OPERATOR_COUNT
} wg_operator;

/* How lanes exchange values.
 *   auto   the fastest valid variant for the spec, as measured (README)
 *   down   __shfl_down_sync       xor    __shfl_xor_sync (butterfly)
 *   up     __shfl_up_sync         idx    __shfl_sync (indexed)
 *   redux  __reduce_*_sync: i32/u32, every operator but prod, sm_80+
 *   smem   a shared-memory tree: the baseline the others are measured against
 *   vote   __ballot_sync / __any_sync / __all_sync / __match_any_sync: the
 *          vote family's hardware instructions */
typedef enum {
  WG_VARIANT_AUTO = 0,
  WG_VARIANT_DOWN,
  WG_VARIANT_XOR,
  WG_VARIANT_UP,
  WG_VARIANT_IDX,
  WG_VARIANT_REDUX,
  WG_VARIANT_SMEM,
  WG_VARIANT_VOTE,
  WG_VARIANT_COUNT
} wg_variant;

/* Where a group's elements sit while its lanes exchange them.
 *   vec   the default: each lane loads 16 bytes (16 / element-size
 *         consecutive elements, several loads in flight) and folds them in
 *         the thread; the variant's exchange then runs across the lanes a
 *         group spans, width * size / 16 of them. A group of at most 16
 *         bytes lives in one lane and needs no exchange at all. match keeps
 *         one element a lane (match.any compares lanes) with several loads
 *         in flight; smem, the baseline, always resolves to lane.
 *   lane  one element per lane per trip: `width` lanes exchange a group,
 *         the form the latency tables describe. */
typedef enum {
  WG_LAYOUT_VEC = 0,
  WG_LAYOUT_LANE,
  WG_LAYOUT_COUNT
} wg_layout;

/* Changes whenever wg_spec changes shape; a spec of another version is
 * refused (WG_ESPEC), so that a caller built against an older header gets a
 * message instead of a misread struct. 2 added `layout`; 3 the expressions
 * (map, combine, identity, final), the extra inputs and the parameters; 4
 * bins, counts and deterministic. */
#define WG_SPEC_VERSION 4

/* The most input arrays and parameters an expression of a reduction reads
 * (inputs x y z w, parameters p0..p7). */
#define WG_MAX_INPUTS 4
#define WG_MAX_PARAMS 8

/* A plain description of one kernel. Initialise with WG_SPEC_INIT or
 * wg_spec_init() (for foreign-function interfaces), then set fields, or fill
 * it from text with wg_spec_parse(). */
typedef struct wg_spec {
  int version;           /* WG_SPEC_VERSION */
  wg_primitive primitive;
  wg_type type;
  wg_operator op;        /* WG_OP_NONE for broadcast and votes */
  int width;             /* lanes per logical warp: 2, 4, 8, 16 or 32 */
  wg_variant variant;
  int arch;              /* e.g. 90 for sm_90; 0: the context's device, else
                            sm_90 when no device is present */
  int lane;              /* broadcast: the source lane, 0 <= lane < width */
  int64_t cols;          /* reduce-rows and the fused row kernels: the row
                            length the shape is made for, or 0 for "any" */
  wg_layout layout;      /* warp primitives: WG_LAYOUT_VEC (default) or
                            WG_LAYOUT_LANE; reduce-array/rows: VEC */
  /* reduce-array, reduce-rows and the warp reduce, allreduce, scan and
   * exscan (docs/expressions.md): expressions in warpgen's expression
   * language, NULL for the operator's own.
   *   map       over x y z w (the inputs), i (index), n (length), p0..p7;
   *             the operator then reduces map's values instead of x. In
   *             the warp primitives i is the element's global index and n
   *             the group's count; the scans take no final
   *   combine   over a, b; with identity (literals, p0..p7) it defines the
   *             accumulator, and `op` must be WG_OP_NONE
   *   final     over r (the accumulator), n, p0..p7: the output
   * A spec wg_spec_parse fills points at canonical text owned by the
   * context (valid until wg_context_destroy); a spec a caller fills
   * points at the caller's text, which must stay valid while the call
   * that takes the spec runs (the library keeps its own canonical copy). */
  const char *map;
  const char *combine;
  const char *identity;
  const char *final;
  int ninputs;           /* inputs x..w: 0 or 1 (one, of `type`) up to 4 */
  wg_type inputs[WG_MAX_INPUTS]; /* inputs[k]: the type of input k >= 1
                            (inputs[0] is ignored: input 0 is `type`) */
  int nparams;           /* parameters p0.. the expressions may read */
  wg_type params[WG_MAX_PARAMS]; /* their types */
  int64_t bins;          /* histogram: the number of bins (>= 1); 0 for
                            every other primitive */
  wg_type counts;        /* histogram: WG_U32 (default) or WG_U64 counts;
                            WG_U32 for every other primitive */
  int deterministic;     /* 1 (default): the same bits on every run. Only
                            the families that say so take 0 */
} wg_spec;

#define WG_SPEC_INIT \
  { WG_SPEC_VERSION, WG_REDUCE, WG_F32, WG_OP_SUM, 32, WG_VARIANT_AUTO, 0, 0, 0, \
    WG_LAYOUT_VEC, NULL, NULL, NULL, NULL, 1, {WG_F32, WG_F32, WG_F32, WG_F32}, 0, \
    {WG_F32, WG_F32, WG_F32, WG_F32, WG_F32, WG_F32, WG_F32, WG_F32}, 0, WG_U32, 1 }

/* Fills *spec with WG_SPEC_INIT: "reduce f32 sum width=32 variant=auto". */
WG_API void wg_spec_init(wg_spec *spec);

/* The names used by the text form, or NULL for an out-of-range value. */
WG_API const char *wg_primitive_name(wg_primitive primitive);
WG_API const char *wg_type_name(wg_type type);
WG_API const char *wg_operator_name(wg_operator op);
WG_API const char *wg_variant_name(wg_variant variant);
WG_API const char *wg_layout_name(wg_layout layout);
/* Size in bytes of one element of `type`, or 0 when out of range. */
WG_API size_t wg_type_size(wg_type type);

/* ------------------------------------------------------------------------ */
/* The context                                                              */
/* ------------------------------------------------------------------------ */

typedef struct wg_context wg_context;

#define WG_OPTIONS_VERSION 1

/* Options for wg_context_create. Initialise with WG_OPTIONS_INIT or
 * wg_options_init(); every field's zero/NULL means "the default". */
typedef struct wg_options {
  int version;              /* WG_OPTIONS_VERSION */
  int device;               /* CUDA device ordinal used when the calling
                               thread has no current CUDA context */
  const char *cache_dir;    /* disk cache folder; NULL: WARPGEN_CACHE_DIR,
                               else $XDG_CACHE_HOME/warpgen, else
                               $HOME/.cache/warpgen. Copied. */
  int disk_cache;           /* 0: from WARPGEN_CACHE (on unless "off"),
                               1: on, -1: off */
  uint64_t cache_max_bytes; /* 0: WARPGEN_CACHE_MAX, else 256 MiB */
  const char *template_dir; /* NULL: WARPGEN_TEMPLATE_DIR, else the
                               templates built into the library. Copied.
                               Each template read from there must be a
                               regular file (links to one are followed)
                               of at most 1 MiB without NUL bytes, else
                               WG_ETEMPLATE naming the file (and the
                               offset of a NUL). */
} wg_options;

#define WG_OPTIONS_INIT { WG_OPTIONS_VERSION, 0, NULL, 0, 0, NULL }

WG_API void wg_options_init(wg_options *options);

/* Creates a context. options may be NULL for defaults. Creating a context is
 * cheap and touches neither NVRTC nor the CUDA driver; those are loaded on
 * first use. On failure *out is NULL and the status says why (no message
 * can be kept without a context). Destroy with wg_context_destroy. */
WG_API int wg_context_create(wg_context **out, const wg_options *options);

/* Unloads every module this context loaded, releases the primary context it
 * retained (if any) and frees the context. NULL is a no-op. Must not be
 * called while work launched through the context is still needed on a
 * stream that has not been synchronised, nor while a graph that captured
 * its calls may still be launched. */
WG_API void wg_context_destroy(wg_context *ctx);

/* The message for the last failed call on ctx ("" after a success; never
 * NULL). Owned by ctx; valid until the next call on ctx. */
WG_API const char *wg_errmsg(const wg_context *ctx);

/* Releases memory the library returned (source text, PTX, cubin, lists).
 * NULL is a no-op. */
WG_API void wg_free(void *ptr);

/* ------------------------------------------------------------------------ */
/* Specs: text form, validation, listing                                    */
/* ------------------------------------------------------------------------ */

/* Parses the text form:
 *   PRIMITIVE TYPE [OPERATOR] [map="E"] [combine="E" identity="E"]
 *   [final="E"] [inputs=T,T...] [params=T,T...] [width=W] [variant=V]
 *   [layout=vec|lane] [arch=sm_NN] [lane=L] [cols=C]
 * e.g. "reduce f32 sum width=16 variant=xor arch=sm_90" or
 * "reduce-array f32 sum map=\"x*x\"". Missing keys take the WG_SPEC_INIT
 * defaults. The result is validated (wg_spec_validate). Expressions are
 * quoted (\" and \\ escape inside) and stored as canonical text owned by
 * ctx (valid until wg_context_destroy); parsing them needs a ctx
 * (WG_EINVAL without one).
 * Words are separated by spaces, tabs or newlines; any other byte outside
 * printable ASCII is WG_ESPEC. Messages quote user text with every byte
 * that is not printable ASCII written as \xNN, so a message is safe to
 * print to a terminal. *out is written only on success. */
WG_API int wg_spec_parse(wg_context *ctx, wg_spec *out, const char *text);

/* Writes the canonical text form of spec into buf (at most size bytes,
 * always NUL-terminated when size > 0) and returns the length it needs,
 * excluding the NUL, like snprintf: buf may be NULL only when size is 0,
 * which measures. Parsing the result gives back the same spec, and
 * formatting that gives back the same text. Only a valid spec has a text
 * form: WG_ESPEC for any spec wg_spec_validate rejects (nothing written),
 * WG_EINVAL for a NULL spec or a NULL buf with size > 0. `layout` is
 * written only when it is not the default (vec), so the text of a spec that
 * names no layout reads as it always did. Thread-safe. */
WG_API int wg_spec_format(char *buf, size_t size, const wg_spec *spec);

/* WG_OK if spec describes a kernel warpgen can make, else WG_ESPEC with a
 * message that names the field and says what is allowed. No compile, and
 * NVRTC is never loaded: whether this NVRTC supports spec->arch is checked
 * when the kernel is compiled (wg_ptx, wg_cubin, the launches). */
WG_API int wg_spec_validate(wg_context *ctx, const wg_spec *spec);

/* The concrete variant `auto` stands for in this spec (the spec's own
 * variant when it is not auto). Array and row reductions (which accept only
 * auto) give WG_VARIANT_DOWN: their kernels combine lanes with
 * __shfl_down_sync; it names what runs and is not a variant those specs
 * accept. Returns WG_VARIANT_AUTO only for an invalid or NULL spec. */
WG_API wg_variant wg_spec_resolve_variant(const wg_spec *spec);

/* Every valid spec of the warp primitives and array/row reductions with an
 * explicit variant (not auto) in both layouts (smem in lane only, the
 * layout it always resolves to), for architecture `arch` (0: leave arch unset
 * in the specs, valid for sm_90). *out is an array of *count specs, freed
 * with wg_free. */
WG_API int wg_spec_list(wg_context *ctx, wg_spec **out, size_t *count,
                        int arch);

/* The real architectures this NVRTC can compile for, ascending (e.g. 75,
 * 80, ..., 121); *out freed with wg_free. Loads NVRTC (once per process,
 * thread-safe); WG_ECOMPILE, with where it looked, when it cannot. */
WG_API int wg_supported_archs(wg_context *ctx, int **out, size_t *count);

/* NVRTC's version, e.g. 13 and 0. Loads NVRTC, as wg_supported_archs. */
WG_API int wg_nvrtc_version(wg_context *ctx, int *major, int *minor);

/* ------------------------------------------------------------------------ */
/* Generating and compiling (no GPU needed)                                  */
/* ------------------------------------------------------------------------ */

/* The CUDA source for spec, NUL-terminated, freed with wg_free. Never
 * loads NVRTC; asks the device (starting the driver) only when the spec
 * leaves arch unset. */
WG_API int wg_source(wg_context *ctx, char **out, const wg_spec *spec);

/* The PTX for spec (NUL-terminated; *len excludes the NUL), compiled with
 * NVRTC or taken from the disk cache; freed with wg_free. len may be NULL.
 * NVRTC is loaded only on a cache miss (WARPGEN_NVRTC, else the toolkit's;
 * see the README): WG_ECOMPILE when it cannot be found or loaded, WG_ESPEC
 * when it does not support the spec's arch. A spec that leaves arch unset
 * is made for the context's device, which starts the CUDA driver. */
WG_API int wg_ptx(wg_context *ctx, char **out, size_t *len,
                  const wg_spec *spec);

/* The cubin (an ELF image) for spec; freed with wg_free. As wg_ptx. */
WG_API int wg_cubin(wg_context *ctx, void **out, size_t *len,
                    const wg_spec *spec);

/* The name of the kernel entry point in the source of spec, e.g.
 * "wg_reduce_f32_sum_w16_xor"; writes and fails like wg_spec_format
 * (WG_ESPEC for an invalid spec, WG_EINVAL for NULL arguments). */
WG_API int wg_kernel_name(char *buf, size_t size, const wg_spec *spec);

/* ------------------------------------------------------------------------ */
/* The disk cache                                                           */
/* ------------------------------------------------------------------------ */

/* The disk cache holds code that will run on the GPU, so it trusts only
 * what the effective user could have written: a cache folder owned by
 * another user, or writable by its group or others, is not used at all
 * (enabled is 0 and last_error says why); a subfolder or entry owned by
 * another user is a miss, never served. An entry larger than 64 MiB is
 * refused before it is read. None of this fails a call: a cache that cannot
 * be used costs speed only.
 *
 * Counters since the context was created. */
typedef struct wg_cache_stats {
  uint64_t memory_hits; /* served from the context's loaded kernels */
  uint64_t disk_hits;   /* served from a valid disk entry */
  uint64_t compiles;    /* NVRTC runs */
  uint64_t evictions;   /* entries removed to keep under the size cap */
  uint64_t disk_errors; /* entries found bad, or folder problems */
  uint64_t entries;     /* entries on disk at the last scan */
  uint64_t bytes;       /* their total size at the last scan */
  uint64_t max_bytes;   /* the size cap evictions keep the folder under */
  int enabled;          /* 1 when the disk cache is in use */
  char last_error[256]; /* why the disk cache last failed, or "" */
} wg_cache_stats;

/* The cache folder for ctx (owned by ctx), or NULL when disabled. */
WG_API const char *wg_cache_dir(wg_context *ctx);
/* Fills *out with the counters; rescans the folder for entries/bytes. */
WG_API int wg_cache_stats_get(wg_context *ctx, wg_cache_stats *out);
/* Removes every entry of the cache folder. */
WG_API int wg_cache_clear(wg_context *ctx);
/* Evicts least-recently-used entries until the folder is under max_bytes
 * (0: the context's cap) and removes stale temporaries. */
WG_API int wg_cache_prune(wg_context *ctx, uint64_t max_bytes);

/* ------------------------------------------------------------------------ */
/* The device (the CUDA driver, loaded at run time)                          */
/* ------------------------------------------------------------------------ */

typedef struct wg_device_info {
  int driver_version; /* e.g. 13000 */
  int device_count;
  int ordinal;        /* the device ctx uses */
  int arch;           /* its architecture, e.g. 90 */
  int sm_count;
  uint64_t memory_bytes;
  char name[128];
} wg_device_info;

/* Loads the driver (once per process) and describes the device ctx uses.
 * WG_ENODRIVER without libcuda.so.1, WG_ENODEVICE without a device. */
WG_API int wg_device_get_info(wg_context *ctx, wg_device_info *out);

/* Describes device `ordinal` (for listing all devices). */
WG_API int wg_device_info_at(wg_context *ctx, wg_device_info *out,
                             int ordinal);

/* Device memory helpers, for tools, tests and hosts without a CUDA runtime.
 * They use ctx's CUDA context. wg_mem_alloc of 0 bytes gives pointer 0;
 * wg_mem_free(ctx, 0) is a no-op. The copies are ordered on `stream` after
 * the work already there and return once they are done, so the host buffer
 * may be reused at once; the memset is asynchronous on `stream`. */
WG_API int wg_mem_alloc(wg_context *ctx, uint64_t *out, size_t bytes);
WG_API int wg_mem_free(wg_context *ctx, uint64_t ptr);
WG_API int wg_memcpy_htod(wg_context *ctx, uint64_t dst, const void *src,
                          size_t bytes, void *stream);
WG_API int wg_memcpy_dtoh(wg_context *ctx, void *dst, uint64_t src,
                          size_t bytes, void *stream);
WG_API int wg_memset_d8(wg_context *ctx, uint64_t dst, unsigned char value,
                        size_t bytes, void *stream);
/* Waits for all work on stream (NULL: the default stream). */
WG_API int wg_stream_sync(wg_context *ctx, void *stream);

/* ------------------------------------------------------------------------ */
/* Kernels and launches                                                     */
/* ------------------------------------------------------------------------ */

/* A scalar parameter of a reduction (e.g. var's correction), passed to the
 * kernel as an argument: a new value never compiles anything. Which member
 * a parameter uses is the operator's (var/std: f64). */
typedef union wg_scalar {
  double f64;
  float f32;
  int64_t i64;
  uint64_t u64;
  int32_t i32;
  uint32_t u32;
} wg_scalar;

typedef struct wg_kernel wg_kernel;

/* Compiles (or takes from a cache), loads and looks up the kernel for spec.
 * The kernel is owned by ctx and stays valid until ctx is destroyed; a
 * second call with an equal spec returns the same kernel from memory. The
 * spec's arch (0 = the device's) must match the device: WG_EARCH if not. */
WG_API int wg_kernel_get(wg_context *ctx, wg_kernel **out,
                         const wg_spec *spec);

/* Launch configuration; 0 in a field means "warpgen chooses". */
typedef struct wg_launch_config {
  int version;         /* WG_LAUNCH_CONFIG_VERSION */
  unsigned block_size; /* threads per block, a multiple of 32, <= 1024 */
  unsigned grid_size;  /* blocks */
} wg_launch_config;

#define WG_LAUNCH_CONFIG_VERSION 1
#define WG_LAUNCH_CONFIG_INIT { WG_LAUNCH_CONFIG_VERSION, 0, 0 }

/* Runs a warp primitive over n elements of `in` (device pointer, aligned to
 * the element type) writing to `out` (see wg_primitive for how many outputs
 * and of which type). Asynchronous on stream (NULL: the default stream);
 * n == 0 is a no-op. config may be NULL. */
WG_API int wg_warp_launch(wg_context *ctx, const wg_kernel *kernel,
                          uint64_t in, uint64_t out, uint64_t n,
                          void *stream, const wg_launch_config *config);

/* wg_kernel_get followed by wg_warp_launch. A spec with inputs= or
 * params= needs wg_warp_ex (WG_EINVAL says so); var and std run with their
 * default correction. */
WG_API int wg_warp(wg_context *ctx, const wg_spec *spec, uint64_t in,
                   uint64_t out, uint64_t n, void *stream);

/* wg_warp_launch with the inputs and parameters of wg_reduce_spec: `inputs`
 * holds max(1, spec->ninputs) device pointers of n elements each (input k
 * of its type), `params` the values of p0.. (exactly spec->nparams of them
 * in the union member of their declared type), or, for a spec that
 * declares none, the operator's own (var/std: the correction, f64; fewer
 * given: the rest at their defaults). Parameters are a kernel argument: a
 * new value compiles nothing. params are copied before the call returns.
 * A count that does not match is WG_EINVAL. Asynchronous on stream. */
WG_API int wg_warp_launch_ex(wg_context *ctx, const wg_kernel *kernel,
                             const uint64_t *inputs, size_t ninputs, uint64_t n,
                             const wg_scalar *params, size_t nparams, uint64_t out,
                             void *stream, const wg_launch_config *config);

/* wg_kernel_get followed by wg_warp_launch_ex with the default launch
 * configuration. */
WG_API int wg_warp_ex(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                      size_t ninputs, uint64_t n, const wg_scalar *params,
                      size_t nparams, uint64_t out, void *stream);

/* How many output elements, and their size in bytes, a warp-primitive spec
 * writes for n inputs (e.g. ceil(n / width) for reduce). WG_ESPEC for a
 * spec wg_spec_validate rejects for any field but arch (the shape does not
 * depend on the architecture, so NVRTC is not asked; a negative arch is
 * still WG_ESPEC), WG_EINVAL for NULL arguments or a valid array/row
 * reduction (which writes one element, or one per row). Thread-safe. */
WG_API int wg_output_shape(uint64_t *count, size_t *elem_size,
                           const wg_spec *spec, uint64_t n);

/* ------------------------------------------------------------------------ */
/* Whole-array and row reductions                                           */
/* ------------------------------------------------------------------------ */

/* Reduces n elements of `in` (device pointer) with op into one element at
 * device address `out`. n == 0 writes the identity (mean, var and std:
 * NaN; logsumexp: -inf). Asynchronous on stream. For a given input, device
 * and n the result is the same bits on every run (a fixed combining order;
 * no atomics on values).
 *
 * The output has type `type`: wg_reduce takes the operators whose output
 * type (wg_reduce_output_type) is the input's and whose parameters keep
 * their defaults; for the others (argmin/argmax/count_nonzero of anything
 * but i64, logsumexp of integers, a var/std correction) it returns
 * WG_EINVAL with a message pointing to wg_reduce_ex. argmin, argmax and
 * norminf of n == 0 are WG_EINVAL.
 *
 * Streams: calls may overlap freely, on any streams of ctx's CUDA context,
 * from one wg_context or several, and every result is right. A launch
 * whose blocks combine through device memory (more than one block: above
 * about 1024 16-byte vectors, or few very long rows) gets a workspace of
 * 200 KiB (partials and tickets) that no launch in flight on another stream
 * uses. Each context keeps a pool of up to 32: the first call on a stream
 * that finds none free allocates one (cuMemAlloc and a 8 KiB memset, once);
 * after that a call allocates nothing, never waits on the host, and adds a
 * cuEventRecord on `stream`. With more than 32 streams in flight at once a
 * call makes `stream` wait (on the GPU, cuStreamWaitEvent) for the oldest
 * workspace's last launch. Smaller calls need no workspace.
 *
 * CUDA graphs: a call on a stream that is being captured
 * (cuStreamBeginCapture, torch.cuda.graph) puts a workspace of its own into
 * the graph (cuMemAllocAsync, a memset and cuMemFreeAsync nodes), so every
 * replay is self-contained and may run beside eager calls and other graphs.
 * Make one call of each kind before capturing, so that nothing is compiled
 * or loaded during the capture, and keep ctx alive while the graph may run
 * (the graph launches ctx's loaded kernels). */
WG_API int wg_reduce(wg_context *ctx, wg_type type, wg_operator op,
                     uint64_t in, uint64_t n, uint64_t out, void *stream);

/* Reduces each of `rows` rows of `cols` elements (row r starts at element
 * r * row_stride of `in`; row_stride >= cols) into out[r]. rows == 0 is a
 * no-op; cols == 0 writes the identity to each row (an error for argmin,
 * argmax and norminf). The operators and output types are those of
 * wg_reduce; argmin/argmax give the index within the row. An output that
 * overlaps the input's span is WG_EINVAL (blocks write while others
 * read). Asynchronous; the same bits on every run; streams and graphs as for wg_reduce (only
 * few very long rows, split over several blocks each, use a workspace). */
WG_API int wg_reduce_rows(wg_context *ctx, wg_type type, wg_operator op,
                          uint64_t in, uint64_t rows, uint64_t cols,
                          uint64_t row_stride, uint64_t out, void *stream);

/* The output type of reducing inputs of `type` with `op`, as a wg_type
 * (>= 0), or WG_EINVAL for out-of-range values and WG_ESPEC when op does
 * not take that type (e.g. mean of i32). Thread-safe. The rule, from
 * PyTorch: sum, prod, min, max, and, or, xor, mean, var, std and the norms
 * keep the input type; argmin, argmax, count_nonzero give i64; logsumexp
 * keeps floating types and gives f32 for integers. */
WG_API int wg_reduce_output_type(wg_type type, wg_operator op);

#define WG_REDUCTION_VERSION 1

/* What a reduction computes, for wg_reduce_ex and wg_reduce_rows_ex: the
 * kernel is made from this (a new parameter value does not change it).
 * Initialise with WG_REDUCTION_INIT or wg_reduction_init(); later versions
 * append fields (a map expression, several inputs), and `version` says
 * which fields the caller knows, so old callers keep working. */
typedef struct wg_reduction {
  int version;     /* WG_REDUCTION_VERSION */
  wg_type type;    /* the input's element type */
  wg_operator op;
  int ninputs;     /* input arrays; 1 in this version */
} wg_reduction;

#define WG_REDUCTION_INIT { WG_REDUCTION_VERSION, WG_F32, WG_OP_SUM, 1 }

/* Fills *reduction with WG_REDUCTION_INIT. */
WG_API void wg_reduction_init(wg_reduction *reduction);

/* wg_reduce for any operator. `inputs` holds reduction->ninputs device
 * pointers, each n elements of reduction->type; `params` holds nparams
 * values (nparams 0 and params NULL: every parameter at its default; fewer
 * than the operator takes: the rest at their defaults; more: WG_EINVAL).
 * var and std take one, the correction (f64, default 1). `out` receives one
 * element of wg_reduce_output_type; params are copied before the call
 * returns. Errors, asynchrony, determinism, streams and graphs as
 * wg_reduce. */
WG_API int wg_reduce_ex(wg_context *ctx, const wg_reduction *reduction,
                        const uint64_t *inputs, size_t ninputs, uint64_t n,
                        const wg_scalar *params, size_t nparams, uint64_t out,
                        void *stream);

/* wg_reduce_rows for any operator, with inputs and params as for
 * wg_reduce_ex: out[r] (of wg_reduce_output_type) for each row r. */
WG_API int wg_reduce_rows_ex(wg_context *ctx, const wg_reduction *reduction,
                             const uint64_t *inputs, size_t ninputs,
                             uint64_t rows, uint64_t cols, uint64_t row_stride,
                             const wg_scalar *params, size_t nparams,
                             uint64_t out, void *stream);

/* A reduction made from a spec of reduce-array (wg_reduce_spec) or
 * reduce-rows (wg_reduce_rows_spec), with its expressions (map=, combine=,
 * identity=, final=; docs/expressions.md): e.g. the spec of
 * "reduce-array f32 sum map=\"x * x\"". `inputs` holds spec->ninputs device
 * pointers (at least 1), each n elements (rows: as wg_reduce_rows) of its
 * type. `params` holds the values of p0..: exactly spec->nparams of them,
 * each in the union member of its declared type (f32 for params=f32...);
 * a spec that declares none takes its operator's parameters as
 * wg_reduce_ex does. A new parameter value never compiles anything: the
 * values are a kernel argument. The output has type wg_reduce_output_type
 * would give for the map's type, or the final expression's type (bool
 * counts as i32). The spec is read during the call only (the library keeps
 * its own canonical copy). Errors, asynchrony, determinism, streams and
 * graphs as wg_reduce; a spec of the wrong primitive or a count that does
 * not match is WG_EINVAL, an invalid spec WG_ESPEC. */
WG_API int wg_reduce_spec(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                          size_t ninputs, uint64_t n, const wg_scalar *params,
                          size_t nparams, uint64_t out, void *stream);
WG_API int wg_reduce_rows_spec(wg_context *ctx, const wg_spec *spec,
                               const uint64_t *inputs, size_t ninputs, uint64_t rows,
                               uint64_t cols, uint64_t row_stride,
                               const wg_scalar *params, size_t nparams, uint64_t out,
                               void *stream);

/* ------------------------------------------------------------------------ */
/* Sharded reductions: one shard's accumulator, then the shards combined      */
/* ------------------------------------------------------------------------ */

/* An array that lives in shards (one a GPU or a process) is reduced in two
 * steps: each shard's reduction stops before the final step and stores its
 * accumulator (wg_reduce_partial); the host moves those bytes with any
 * engine it runs (NCCL all_gather through torch.distributed, MPI, a
 * socket), and wg_reduce_combine folds k of them in index order and
 * applies the final step. python/warpgen/distributed.py does this over
 * torch.distributed; README "Sharded reductions" tells how.
 *
 * The accumulator is the operator model's (src/tables.c): (value, index)
 * for argmin/argmax, (count, mean, M2) for var/std, (max, sum of exp) for
 * logsumexp, a scalar for the others (a user combine=: a scalar of the
 * map's type). Its bytes are the device's little-endian struct: fields in
 * order, each at a multiple of its size, the whole a multiple of the
 * widest. */
#define WG_ACCUMULATOR_MAX_FIELDS 4

typedef struct wg_accumulator_field {
  const char *name; /* "v", "i", "n", "mean", "m2", "m", "s"; "" for a
                       scalar. Static: owned by the library, never freed */
  wg_type type;     /* f32 for the values of f16/bf16 inputs */
  size_t offset;    /* bytes from the accumulator's start */
} wg_accumulator_field;

typedef struct wg_accumulator_layout {
  size_t size;      /* bytes of one accumulator (an array of k: k * size) */
  size_t align;     /* the alignment its device address needs */
  int nfields;
  wg_accumulator_field fields[WG_ACCUMULATOR_MAX_FIELDS];
  /* WG_OP_SUM, WG_OP_PROD, WG_OP_MIN or WG_OP_MAX when the accumulator is
   * one integer whose combine an engine's own reduction of that type gives
   * bit for bit in any order (sums and products wrap; min and max only for
   * signed types): the shards' accumulators may then be all-reduced with
   * it (e.g. NCCL's all_reduce) and finalized by a wg_reduce_combine of
   * k = 1. WG_OP_NONE for every other accumulator (floats: their sums
   * depend on the order; structs): gather the bytes and combine them. */
  wg_operator native;
} wg_accumulator_layout;

/* Fills *out with the accumulator layout of a reduce-array (or reduce-rows)
 * spec. WG_ESPEC for a spec wg_spec_validate rejects, WG_EINVAL for NULL or
 * another primitive. Thread-safe; needs no context and no device. */
WG_API int wg_reduce_accumulator(wg_accumulator_layout *out, const wg_spec *spec);

/* Reduces one shard, the n elements of `inputs` (as wg_reduce_spec: the
 * spec's ninputs device pointers, each n elements of its type), into one
 * accumulator at device address `acc` (wg_reduce_accumulator's size,
 * aligned to its align), without the final step. The shard is elements
 * [base, base + n) of an array of `total` elements: the map's i is the
 * global index base + e (so argmin/argmax store global indices) and its n
 * is total. n == 0 stores the identity (no error, even for argmax: the
 * combine decides). base < 0 or base + n > total is WG_EINVAL. The same
 * kernel as wg_reduce_spec of the spec (one compile serves both); params,
 * errors, asynchrony, determinism, streams and graphs as wg_reduce_spec. */
WG_API int wg_reduce_partial(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                             size_t ninputs, uint64_t n, int64_t base, uint64_t total,
                             const wg_scalar *params, size_t nparams, uint64_t acc,
                             void *stream);

/* Folds the k accumulators at device address `accs` (k * size bytes,
 * aligned as wg_reduce_accumulator says; wg_reduce_partial's or bytes of
 * the same layout from anywhere) left to right, in index order (shard 0
 * first), then applies the spec's final step with n = total (the count of
 * every shard together) and writes one element of
 * wg_reduce_spec_output_type to `out`. One thread folds: the result is the
 * same bits on every run and every device that gets the same bytes (it
 * may differ in the last bits from wg_reduce_spec over the whole array,
 * which folds in another order). k == 0 folds nothing (the identity's
 * final step). total == 0 for argmin, argmax and norminf is WG_EINVAL, as
 * in wg_reduce. params as wg_reduce_spec (var/std: the correction). The
 * spec's input pointers are not read. Asynchronous on stream. */
WG_API int wg_reduce_combine(wg_context *ctx, const wg_spec *spec, uint64_t accs,
                             uint64_t k, uint64_t total, const wg_scalar *params,
                             size_t nparams, uint64_t out, void *stream);

/* The output type of a spec of a primitive that takes an operator
 * (reduce-array, reduce-rows, reduce-axis, and the warp reduce, allreduce,
 * scan and exscan; its map, final and operator decide it), as a wg_type (>= 0);
 * WG_ESPEC for a spec wg_spec_validate rejects, WG_EINVAL for NULL or
 * another primitive. Thread-safe. */
WG_API int wg_reduce_spec_output_type(const wg_spec *spec);

/* ------------------------------------------------------------------------ */
/* Histograms                                                               */
/* ------------------------------------------------------------------------ */

/* Counts the n keys of `in` (device pointer, elements of spec->type) into
 * spec->bins bins at device address `out`: bins counters of spec->counts
 * (u32, the default, or u64). The spec is a "histogram" (WG_HISTOGRAM),
 * e.g. the text "histogram i32 bins=256", "histogram f32 bins=65536
 * counts=u64" or "histogram f32 bins=100 map=\"(i32)(x * p0)\" params=f32".
 * A key's bin:
 *   - integer keys without map=: key k counts in bin k; keys < 0 or >=
 *     bins are counted nowhere;
 *   - float keys without map=: torch.histc's and CUB HistogramEven's rule
 *     over the range [lo, hi] given as params[0].f64 and params[1].f64
 *     (nparams 2): bin = floor((x - lo) * bins / (hi - lo)), computed in
 *     f32 (f64 for f64 keys, f32 for f16/bf16 too) with lo and hi
 *     converted to that type first; x == hi (and any x whose quotient
 *     rounds up to bins) goes to the last bin; x < lo, x > hi and NaN are
 *     counted nowhere. lo < hi, both finite and hi - lo finite in that
 *     type, or WG_EINVAL;
 *   - with map=: the expression (docs/expressions.md; x is the key, i its
 *     index, n the length, p0.. the spec's params=) gives the bin, an
 *     integer type; values outside [0, bins) are counted nowhere. params
 *     holds exactly spec->nparams values, each in the member of its type.
 * The call zeroes `out` itself (a memset on `stream` before the kernel),
 * so every call is self-contained; n == 0 writes zeros and compiles
 * nothing. Counts are exact: u32 counts wrap modulo 2^32 past 4294967295
 * keys in one bin, u64 never in practice. The result is the same on every
 * run (atomics add integers, whose order does not matter).
 * Asynchronous on stream; no workspace, so calls may overlap on any
 * streams and inside CUDA graph capture (the memset and the kernel are
 * captured; make one call before capturing so that nothing compiles
 * then). Returns WG_EINVAL for NULL ctx, a spec of another primitive,
 * the wrong number of parameters, a bad range or an output that overlaps
 * the input (the memset would clear keys); WG_ESPEC for an invalid
 * spec (bins outside 1..2^31-1, counts other than u32/u64, a map that
 * is not an integer); WG_EALIGN / WG_ERANGE / WG_EINVAL for pointers as
 * wg_reduce. The spec is read during the call only. */
WG_API int wg_histogram(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t n,
                        const wg_scalar *params, size_t nparams, uint64_t out,
                        void *stream);
/* Stream compaction                                                        */
/* ------------------------------------------------------------------------ */

/* Keeps the elements of an array for which a predicate holds, in their
 * order (stable, as torch.masked_select), with optionally their indices,
 * and writes how many were kept. spec is a "compact" spec, e.g. the one
 * wg_spec_parse makes of
 *     compact f32 pred="x > p0 && x == x" params=f32
 * whose predicate (spec->map, written pred=; docs/expressions.md) reads x
 * and the other inputs y z w (inputs=), the index i (i64), the length n
 * and the parameters p0..p7 (params=); an element is kept when the
 * predicate is non-zero (a NaN result keeps). A spec without a predicate
 * keeps the non-zero elements (on the bits: -0.0 is zero, NaN is not).
 *
 * `inputs` holds spec->ninputs device pointers (at least 1), each n
 * elements of its type (input 0: spec->type), any alignment of the
 * element. `params` holds exactly spec->nparams values, each in the union
 * member of its declared type; a new value compiles nothing.
 *
 * Outputs (device pointers; each must have room for n elements, since
 * how many are kept is known only on the device):
 *   out_values   the kept elements of input 0 (spec->type), or 0: not
 *                wanted
 *   out_indices  their indices, as int64, or 0: not wanted
 *   out_count    one uint64: how many were kept (0 for n == 0), written
 *                on the device; never 0
 * Elements past the count are left as they were. No output may overlap
 * an input or another output (not in place: the kernel reads kept values
 * again from the input after other tiles have written); such a call is
 * WG_EINVAL.
 *
 * The method: one launch, tiles of 256 threads x 128 bytes a thread (64
 * for f16 and bf16) taken in order from an atomic ticket; each warp
 * ballots the predicate and counts with __popc, the block scans its warps'
 * counts, and a decoupled look-back over the earlier tiles' counts gives
 * the tile its place in the output (counts are integers, so the result is
 * the same on every run). Asynchronous on stream; nothing waits on the
 * host but the growth of a workspace, below.
 *
 * Workspace: a launch of more than one tile needs 8 bytes a tile after a
 * reduction's workspace (see wg_reduce), taken from the same per-stream
 * pool and under graph capture from the graph. A workspace the call
 * makes is made at its size; a call that takes one made smaller (by
 * smaller launches) waits on the host for that workspace's last launch,
 * frees it and allocates one of the next power-of-two size (once a size). The kernel leaves its workspace ready
 * for the next launch with no memset.
 *
 * Errors: WG_EINVAL for NULL ctx/spec/inputs/out_count, a spec of another
 * primitive, a count of inputs or params that does not match the spec,
 * overlapping buffers;
 * WG_ESPEC for an invalid spec; WG_EALIGN / WG_ERANGE for pointers that
 * are not aligned to their element or buffers that would wrap; the spec is
 * read during the call only. Streams and graphs as wg_reduce. */
WG_API int wg_compact(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                      size_t ninputs, uint64_t n, const wg_scalar *params,
                      size_t nparams, uint64_t out_values, uint64_t out_indices,
                      uint64_t out_count, void *stream);
/* Fused row kernels: softmax, log_softmax, layernorm, rmsnorm              */
/* ------------------------------------------------------------------------ */

/* Each of `rows` rows of `cols` elements of `in` (row r at element
 * r * in_stride) becomes row r of `out` (at element r * out_stride), of
 * the same type: f16, bf16, f32 or f64 (16-bit types compute in f32 and
 * are rounded once; others in their own type). Strides are in elements,
 * any value >= cols (ignored when rows == 1); `in` and `out` need only the
 * element's alignment (16-byte aligned rows move faster). out == in with
 * equal strides works in place; any other overlap of out with in, weight
 * or bias is WG_EINVAL.
 *
 *   wg_softmax_rows      exp(x - max) / sum(exp(x - max))
 *   wg_log_softmax_rows  x - max - log(sum(exp(x - max)))
 * The max is subtracted first. As in PyTorch, a NaN in a row makes the
 * whole row NaN, and so does +inf or a row of only -inf; -inf next to
 * finite values gives 0 (log: -inf).
 *
 *   wg_layer_norm_rows   (x - mean) / sqrt(var + eps) * weight + bias
 * var is the biased variance (divided by cols), as
 * torch.nn.functional.layer_norm over the last dimension; an all-equal row
 * has variance exactly 0 (its output is bias where eps > 0; with eps 0 it
 * is NaN, 0 / 0, as PyTorch gives). weight and bias are device
 * pointers to `cols` elements of `type` (0: none, i.e. 1 and 0).
 *
 *   wg_rms_norm_rows     x / sqrt(mean(x^2) + eps) * weight
 * as torch.nn.functional.rms_norm; weight as above (0: none).
 *
 * eps is a finite value >= 0 (else WG_EINVAL), a kernel argument: a new
 * value compiles nothing. f32 and 16-bit rows take it as an f32: a value
 * past FLT_MAX is WG_EINVAL, one below the least f32 subnormal is 0. A NaN or infinity in a normalised row makes it
 * NaN wherever PyTorch's formula does.
 *
 * rows == 0 or cols == 0 writes nothing and returns WG_OK (after the
 * argument checks that need no device). Errors: WG_EINVAL for a type that
 * is not floating, a stride shorter than a row, a NULL pointer, overlap;
 * WG_EALIGN, WG_ERANGE as wg_check_device_buffer describes for wg_reduce.
 *
 * The kernel is chosen from cols (cols= of the spec, see wg_primitive):
 * a row of up to 32 * 1024 elements (8 * 1024 for f64) stays in
 * registers, read once: a logical warp of 1 to 32 lanes per short row, a
 * warp, or a block of up to 1024 threads. On sm_80 and newer, longer f32
 * rows (up to 86016 elements on sm_90) and f64 softmax and log_softmax
 * rows (up to 34816) keep what registers cannot hold in the block's
 * shared memory, still read once. Longer rows, and the other types' and
 * operations', are read twice (once for the statistics, once for the
 * output). No workspace, no atomics: the
 * same input gives the same bits on every run. Asynchronous on `stream`;
 * calls may overlap on any streams and inside graph capture (make one call
 * of each kind first, so that nothing compiles during the capture). */
WG_API int wg_softmax_rows(wg_context *ctx, wg_type type, uint64_t in, uint64_t out,
                           uint64_t rows, uint64_t cols, uint64_t in_stride,
                           uint64_t out_stride, void *stream);
WG_API int wg_log_softmax_rows(wg_context *ctx, wg_type type, uint64_t in, uint64_t out,
                               uint64_t rows, uint64_t cols, uint64_t in_stride,
                               uint64_t out_stride, void *stream);
WG_API int wg_layer_norm_rows(wg_context *ctx, wg_type type, uint64_t in, uint64_t weight,
                              uint64_t bias, uint64_t out, uint64_t rows, uint64_t cols,
                              uint64_t in_stride, uint64_t out_stride, double eps,
                              void *stream);
WG_API int wg_rms_norm_rows(wg_context *ctx, wg_type type, uint64_t in, uint64_t weight,
                            uint64_t out, uint64_t rows, uint64_t cols, uint64_t in_stride,
                            uint64_t out_stride, double eps, void *stream);

/* Any of the four from a spec of softmax-rows, log-softmax-rows,
 * layernorm-rows or rmsnorm-rows, whose cols= picks the kernel's shape
 * (the calls above pick it from `cols`): for tools and for trying shapes.
 * weight, bias and eps are ignored by the softmaxes, bias by rmsnorm.
 * The spec is read during the call only. Errors as above; WG_ESPEC for an
 * invalid spec, WG_EINVAL for another primitive. */
WG_API int wg_rownorm_spec(wg_context *ctx, const wg_spec *spec, uint64_t in,
                           uint64_t weight, uint64_t bias, uint64_t out, uint64_t rows,
                           uint64_t cols, uint64_t in_stride, uint64_t out_stride,
                           double eps, void *stream);

/* ------------------------------------------------------------------------ */
/* Reductions over axes of a strided N-d array                              */
/* ------------------------------------------------------------------------ */

/* The most dimensions wg_reduce_axis takes. */
#define WG_MAX_DIMS 16

/* Reduces the axes `axes` (naxes of them, each in [0, ndim), no repeats,
 * any order) of an N-d array: shape[d] elements along dimension d, element
 * d_0..d_{ndim-1} at element offset sum(d_k * strides[k]) from each input
 * pointer (strides in elements, any sign, 0 allowed; the pointer is the
 * element at index 0, not necessarily the lowest address). Every input has
 * the same shape and strides. `out` receives the kept dimensions in their
 * order, contiguous (row-major), of wg_reduce_output_type; as PyTorch's
 * x.sum(dim=axes) with keepdim=False. The operators, parameters, inputs and
 * expressions are those of wg_reduce_ex (and, for the _spec form, of a
 * "reduce-axis" spec as wg_reduce_spec takes them); argmin/argmax give the
 * index along the reduced axes (row-major over them when several).
 *
 * How it runs: the kept dimensions and the reduced ones are each merged
 * where their strides allow (size-1 dimensions dropped; d and the next kept
 * one merge when strides[d] == strides[next] * shape[next]). The reduced
 * axes must merge into one (len elements, stride s), the kept ones into at
 * most two (outer, inner): otherwise WG_EINVAL with a message saying so
 * (copy the array to a contiguous one with the reduced axes last, as
 * warpgen.reduce in Python does). Then a unit-stride reduced axis whose
 * kept dimensions merge into rows at least `len` apart runs as
 * wg_reduce_rows (the last axis of a contiguous array); any other runs the
 * reduce-axis kernel: a thread per output column reading along the
 * columns (16-byte loads when the columns are contiguous and aligned),
 * several loads in flight, the reduced axis shared by the threads of a
 * block and, when there are too few columns to fill the GPU, by several
 * blocks whose partials the last one folds in a fixed order.
 *
 * An empty kept dimension writes nothing; an empty reduced axis writes the
 * operator's empty answer to every output (argmin, argmax and norminf:
 * WG_EINVAL, even with no output to write). Sizes whose product or whose
 * byte extent overflows are WG_ERANGE; ndim outside [1, WG_MAX_DIMS], naxes
 * of 0, an axis out of range or repeated, a negative size, NULL pointers,
 * an output that overlaps an input's span: WG_EINVAL. Asynchronous on
 * stream; the same bits on every run for a given shape, strides and
 * device; streams and graphs as wg_reduce (a split launch uses a
 * workspace). shape, strides and axes are read during the call only. */
WG_API int wg_reduce_axis(wg_context *ctx, const wg_reduction *reduction,
                          const uint64_t *inputs, size_t ninputs, int ndim,
                          const int64_t *shape, const int64_t *strides,
                          const int *axes, int naxes, const wg_scalar *params,
                          size_t nparams, uint64_t out, void *stream);

/* wg_reduce_axis for a spec of reduce-axis ("reduce-axis f32 sum
 * map=\"x * x\""): inputs and params as wg_reduce_spec. A spec of another
 * primitive is WG_EINVAL, an invalid one WG_ESPEC. */
WG_API int wg_reduce_axis_spec(wg_context *ctx, const wg_spec *spec,
                               const uint64_t *inputs, size_t ninputs, int ndim,
                               const int64_t *shape, const int64_t *strides,
                               const int *axes, int naxes, const wg_scalar *params,
                               size_t nparams, uint64_t out, void *stream);

/* ------------------------------------------------------------------------ */
/* Whole-array and row scans                                                */
/* ------------------------------------------------------------------------ */

/* Writes the running prefixes of n elements of `in` (device pointer) under
 * op to `out` (n elements of `type`): out[i] = in[0] op ... op in[i]
 * (exclusive != 0: in[0] op ... op in[i - 1], out[0] the identity). op is
 * sum, prod, min, max, and, or or xor (the others have no running form:
 * WG_ESPEC naming them); the output has the input's type (f16 and bf16
 * accumulate in f32 and each output is rounded once). out may be in (in
 * place); any other overlap of the two is WG_EINVAL. n == 0 is a no-op.
 * Asynchronous on stream.
 *
 * The result is the same bits on every run (a tile's prefix is always the
 * chained fold of the tile totals before it). The spec form
 * (wg_scan_array_spec with deterministic = 0, "scan-array f32 sum
 * deterministic=0") takes the faster single pass CUB uses, whose floating
 * sums and products change in their last bits from run to run; integers,
 * min, max and the bitwise operators give the same bits either way.
 *
 * One pass over the data (decoupled look-back, 32 KiB tiles); from 64
 * tiles on, for accumulators of up to 4 bytes and out != in, each tile is
 * read twice, the second time mostly from L2: a job 256 tiles ahead
 * publishes its total early, so that look-backs wait less. An array of
 * more than one tile takes the workspace of its stream as wg_reduce does
 * (the same pool, the same streams and graph rules) with 16 bytes and 8
 * (16 for 8-byte types) a tile of extra space, which a cuMemsetD8Async on
 * `stream` after the launch zeroes again for the next one. A launch that
 * needs more extra space than any before on that workspace grows it once:
 * the host waits for the workspace's last launch, then allocates (as
 * wg_compact's launches do; a workspace made for the call is made at its
 * size, with no wait). */
WG_API int wg_scan_array(wg_context *ctx, wg_type type, wg_operator op, int exclusive,
                         uint64_t in, uint64_t n, uint64_t out, void *stream);

/* The prefixes along each of `rows` rows of `cols` elements: row r is read
 * from element r * in_stride of `in` and written from element
 * r * out_stride of `out` (strides >= cols when rows > 1). Operators,
 * output type, in place, determinism, streams and graphs as wg_scan_array;
 * rows == 0 or cols == 0 is a no-op. Short rows run a group of lanes per
 * row and need no workspace; longer rows a warp per row when there are many
 * and they are shorter than a tile (8192 elements of 4 bytes), else
 * wg_scan_array's tiles with look-back within each row (a workspace as
 * wg_scan_array; tiles never cross rows). */
WG_API int wg_scan_rows(wg_context *ctx, wg_type type, wg_operator op, int exclusive,
                        uint64_t in, uint64_t rows, uint64_t cols, uint64_t in_stride,
                        uint64_t out, uint64_t out_stride, void *stream);

/* wg_scan_array for a spec of scan-array or exscan-array (e.g.
 * "scan-array f32 sum deterministic=0", or a running user combine:
 * "scan-array f64 combine=\"a + b\" identity=\"0\"", or a map of x and i:
 * "scan-array i32 sum map=\"x * x\""). The output has the type
 * wg_scan_spec_output_type gives. The spec is read during the call only.
 * A spec of another primitive is WG_EINVAL, an invalid one WG_ESPEC. */
WG_API int wg_scan_array_spec(wg_context *ctx, const wg_spec *spec, uint64_t in,
                              uint64_t n, uint64_t out, void *stream);

/* wg_scan_rows for a spec of scan-rows or exscan-rows (its cols is chosen
 * by the call from `cols`; the spec's own is ignored). */
WG_API int wg_scan_rows_spec(wg_context *ctx, const wg_spec *spec, uint64_t in,
                             uint64_t rows, uint64_t cols, uint64_t in_stride,
                             uint64_t out, uint64_t out_stride, void *stream);

/* The output type of a scan spec: the operator's value type of the map's
 * (else the input's) type, or with combine= the map's (else the input's)
 * type; as a wg_type (>= 0), WG_ESPEC for an invalid spec, WG_EINVAL for
 * NULL or another primitive. Thread-safe. */
WG_API int wg_scan_spec_output_type(const wg_spec *spec);

#ifdef __cplusplus
}
#endif

#endif /* WARPGEN_H */
