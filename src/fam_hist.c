/*
 * fam_hist.c - the histogram family: "histogram i32 bins=256",
 * "histogram f32 bins=65536 counts=u64", "histogram f32 bins=10
 * map=\"...\"". Its descriptor (validation, spec text, kernel name,
 * source from templates/histogram.cu, shared memory) and the call users
 * make, wg_histogram.
 *
 * The plan (hist_plan) decides where a block counts, from the bins and the
 * shared memory the architecture offers a block: 32-bit counters in shared
 * memory, one histogram per warp while 32 of them fit in 32 KiB (contended
 * bins then never cross warps), else one per block while it takes at most
 * half the shared memory (two blocks an SM); 16-bit counters, two to a
 * word, while those fit (65536 bins on sm_90: 128 KiB); beyond that,
 * atomics on the output itself. Every method aggregates a warp's equal bins
 * with __match_any_sync first (templates/histogram.cu).
 *
 * A kernel is made for a capacity (the concrete spec's bins: the spec's
 * rounded up to 8 steps an octave) and takes the call's bin count as an
 * argument, so that bincount, whose bins follow the data, compiles a
 * kernel per step rather than per count; the plan follows the capacity.
 */
#include "driver.h"
#include "expr.h"
#include "family.h"
#include "kernel.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Threads a block: the kernel is compiled for exactly this. */
#define HIST_BLOCK 1024u
/* Bytes that one histogram a warp may take altogether. */
#define HIST_PER_WARP_BYTES (32u * 1024u)
/* The most elements a block counts, so that no 32-bit shared counter
 * wraps (method 1 handles its own wraps). */
#define HIST_BLOCK_ELEMENTS (1ull << 31)
/* The most bins: a bin index is an int in the kernel. */
#define HIST_MAX_BINS INT32_MAX

typedef enum { HIST_SHARED32 = 0, HIST_SHARED16 = 1, HIST_GLOBAL = 2 } hist_method;

typedef struct hist_plan {
  hist_method method;
  unsigned copies; /* private histograms a block */
  uint64_t words;  /* 32-bit shared words each takes */
  unsigned unroll; /* 16-byte loads in flight a thread */
} hist_plan;

/* Dynamic shared memory a block may opt in to on arch (CUDA's tables). */
static uint64_t shared_capacity(int arch) {
  if (arch >= 120) return 99u * 1024u;
  if (arch >= 90) return 227u * 1024u;
  if (arch == 86 || arch == 89) return 99u * 1024u;
  if (arch >= 80) return 163u * 1024u;
  if (arch == 75) return 64u * 1024u;
  if (arch >= 70) return 96u * 1024u;
  return 48u * 1024u;
}

/* The bins a kernel is made for: bins rounded up to 8 steps an octave (at
 * most 1/8 more), so that a caller whose bin count follows its data
 * (bincount: max + 1) compiles one kernel per step, not per count. The
 * call passes its own count; powers of two stay as they are. */
static int64_t hist_capacity(int64_t bins) {
  if (bins < 1) return bins;
  int64_t p = 1;
  while (p <= bins / 2) p *= 2;
  const int64_t step = p >= 8 ? p / 8 : 1;
  const int64_t cap = (bins + step - 1) / step * step;
  return cap > HIST_MAX_BINS ? HIST_MAX_BINS : cap;
}

static void hist_concrete(wg_spec *c) { c->bins = hist_capacity(c->bins); }

/* Loads in flight, as measured on the H200 at 2^28 keys: two a thread
 * where the counts go to 32-bit shared counters (256 uniform f32 bins
 * 2908 -> 3205 GB/s, i32 4028 -> 4169), four elsewhere (two took 65536
 * uniform i32 bins from 2899 to 2661 GB/s). */
static hist_plan hist_plan_for(const wg_spec *c) {
  const uint64_t bins = (uint64_t)c->bins, cap = shared_capacity(c->arch);
  const unsigned warps = HIST_BLOCK / 32u;
  hist_plan p = {HIST_GLOBAL, 1, 0, 4};
  if (bins * 4u * warps <= HIST_PER_WARP_BYTES) {
    p.method = HIST_SHARED32, p.copies = warps, p.words = bins, p.unroll = 2;
  } else if (bins * 4u <= cap / 2u) {
    p.method = HIST_SHARED32, p.words = bins, p.unroll = 2;
  } else if ((bins + 1u) / 2u * 4u <= cap) {
    p.method = HIST_SHARED16, p.words = (bins + 1u) / 2u;
  }
  return p;
}


/* --- the descriptor ------------------------------------------------------- */

/* Is the map's value an integer (a bin)? */
static bool integral(wg_value_type t) {
  return t == WG_VT_BOOL || t == WG_VT_I32 || t == WG_VT_U32 || t == WG_VT_I64 ||
         t == WG_VT_U64;
}

static int hist_validate(wg_context *ctx, const wg_spec *s, int arch) {
  (void)arch;
  if (s->bins < 1 || s->bins > HIST_MAX_BINS)
    return wg_fail(ctx, WG_ESPEC, "bins: %" PRId64 " is out of range; a histogram has "
                   "1 to %d bins (write bins=256)", s->bins, HIST_MAX_BINS);
  if (s->counts != WG_U32 && s->counts != WG_U64)
    return wg_fail(ctx, WG_ESPEC, "counts: a histogram counts in u32 or u64, not %s",
                   wg_type_name(s->counts) ? wg_type_name(s->counts) : "that");
  if (s->combine || s->identity || s->final)
    return wg_fail(ctx, WG_ESPEC, "%s: a histogram takes only map= (a key's bin)",
                   s->combine ? "combine" : s->identity ? "identity" : "final");
  if (s->ninputs > 1)
    return wg_fail(ctx, WG_ESPEC, "inputs: a histogram reads one array (got %d)",
                   s->ninputs);
  if (!s->map) {
    if (s->nparams != 0)
      return wg_fail(ctx, WG_ESPEC, "params: only a map= reads params; the range of "
                     "a float histogram is the call's two f64 values (lo, hi)");
    return WG_OK;
  }
  /* The common checks of the expression keys first (parameter count and
   * types, the map in its scope), so that the map is parsed only then. */
  int rc = wg_spec_expr_validate(ctx, s);
  wg_expr *e = NULL;
  if (!rc) rc = wg_spec_expr_parse(ctx, &e, s, WG_EXPR_MAP);
  if (rc) return rc;
  const wg_value_type t = wg_expr_type(e);
  wg_expr_free(e);
  if (!integral(t))
    return wg_fail(ctx, WG_ESPEC, "map: a histogram's map gives a key's bin, an "
                   "integer, not %s (write e.g. map=\"i32(x * p0)\")", wg_vt_name(t));
  return WG_OK;
}

static void hist_format_keys(wg_buf *out, const wg_spec *s) {
  wg_buf_printf(out, " bins=%" PRId64, s->bins);
  if (s->counts != WG_U32) wg_buf_printf(out, " counts=%s", wg_types[s->counts].name);
}

static void hist_name_suffix(wg_buf *out, const wg_spec *c) {
  wg_buf_printf(out, "_b%" PRId64 "_%s", c->bins, wg_types[c->counts].name);
}

static size_t hist_shared_bytes(const wg_spec *c, unsigned block_size) {
  (void)block_size;
  const hist_plan p = hist_plan_for(c);
  return p.method == HIST_GLOBAL ? 0 : (size_t)(p.copies * p.words * 4u);
}

/* The parts of wg_bin: its setup's fields and their preparation (once a
 * thread) and its body (a key): integer keys, the float range or the
 * user's map. */
typedef struct bin_parts {
  wg_buf defs, fields, prepare, body;
  const char *fast; /* wg_bin_fast's test over the setup c */
} bin_parts;

/* A float key's bin follows torch.histc's rule in the value type v, one
 * rounding a step: t = (x - lo) * bins, then b = trunc(t / (hi - lo)).
 * The division is the dearest step of a key, so the setup takes the
 * reciprocal r = 1 / (hi - lo) once and each key refines t * r by one
 * Markstein step, fma(fma(-q, d, t), r, q): with r correctly rounded and
 * nothing over- or underflowing, that is t / d correctly rounded, the very
 * quotient a division gives (tests/emulate/divcheck.c checks it, bit for
 * bit, over widths of [2^-100, 2^100]). A range whose width lies outside
 * [1e-30, 1e30] (inside that, and plain decimal literals), or whose width
 * times the bins is not finite, keeps the division; there, where t
 * itself overflows (a range past FLT_MAX / bins in f32), the key's bin is
 * d / (hi - lo) * bins instead: t would be inf, and every key from there
 * up would land in the last bin. */
static void float_bin(bin_parts *p, const char *v, const char *load, bool f64) {
  const char *max = f64 ? "1.79769313486231570815e+308" : "3.40282346638528859812e+38f";
  wg_buf_printf(&p->fields, "  %s lo, hi, width, bins, recip;\n  int last;\n  bool refine;\n", v);
  wg_buf_printf(&p->prepare,
                "  c.lo = (%s)wg_pp.p[0].f64, c.hi = (%s)wg_pp.p[1].f64;\n"
                "  c.width = c.hi - c.lo, c.bins = (%s)nbins, c.recip = (%s)1 / c.width;\n"
                "  c.last = (int)(nbins - 1);\n"
                "  c.refine = c.width >= (%s)1e-30 && c.width <= (%s)1e30 &&\n"
                "             c.width * c.bins <= (%s)%s;\n",
                v, v, v, v, v, v, v, max);
  /* No branch a key: a key outside the range (or NaN) is binned as lo and
   * then dropped by the select, so every key runs the same few
   * instructions (the branches and their divergence bookkeeping cost more
   * than the arithmetic). The refine test is uniform, and the sweep's
   * whole trips leave it out (WG_FAST, from wg_bin_fast = c.refine). */
  wg_buf_printf(&p->body,
                "  const %s x_ = %s;\n"
                "  const bool in = x_ >= c.lo && x_ <= c.hi; /* false for NaN */\n"
                "  const %s d = (in ? x_ : c.lo) - c.lo;\n"
                "  const %s t = d * c.bins;\n"
                "  %s q;\n"
                "  if (WG_FAST || c.refine) {\n"
                "    q = t * c.recip;\n"
                "    q = %s(%s(-q, c.width, t), c.recip, q);\n"
                "  } else { /* where d * bins overflows, d / width * bins */\n"
                "    q = t <= (%s)%s ? t / c.width : d / c.width * c.bins;\n"
                "  }\n"
                "  const int b = %s(q); /* 0 <= q <= nbins */\n"
                "  return !in ? -1 : b < c.last ? b : c.last; /* x == hi: the last */",
                v, load, v, v, v, f64 ? "fma" : "fmaf", f64 ? "fma" : "fmaf", v, max,
                f64 ? "__double2int_rz" : "__float2int_rz");
  p->fast = "c.refine";
}

static int bin_parts_make(wg_context *ctx, bin_parts *p, const wg_spec *s) {
  const wg_type_info *t = &wg_types[s->type];
  const char *load = t->load; /* over x */
  if (s->map) {
    wg_expr *e = NULL;
    int rc = wg_spec_expr_parse(ctx, &e, s, WG_EXPR_MAP);
    if (rc) return rc;
    wg_buf_puts(&p->defs, wg_expr_helpers());
    wg_buf_printf(&p->defs, "static __device__ __forceinline__ long long wg_user_map(%s wg_x, "
                  "long long wg_i, long long wg_n, const wg_params &wg_pp) {\n"
                  "  (void)wg_i; (void)wg_n; (void)wg_pp;\n",
                  wg_vt_ctype(wg_value_type_of(s->type)));
    wg_codegen_expr_params(&p->defs, s, wg_expr_uses(e));
    wg_buf_puts(&p->defs, "  return (long long)");
    rc = wg_expr_render(e, &p->defs);
    wg_buf_puts(&p->defs, ";\n}\n");
    wg_expr_free(e);
    if (rc) return wg_fail(ctx, WG_ENOMEM, "out of memory");
    /* A u64 bin past 2^63 turns negative here: counted nowhere, as it is
     * past the last bin. */
    wg_buf_printf(&p->body, "  const long long b = wg_user_map(%s, i, n, wg_pp);\n"
                  "  return b >= 0 && b < nbins ? (int)b : -1;", load);
  } else if (t->is_float) {
    float_bin(p, t->acc, load, s->type == WG_F64); /* acc: f32 for the halves */
  } else if (t->is_signed) {
    wg_buf_printf(&p->body, "  return x >= 0 && (long long)x < nbins ? (int)x : -1;");
  } else {
    wg_buf_printf(&p->body, "  return (unsigned long long)x < (unsigned long long)nbins "
                  "? (int)x : -1;");
  }
  if (!p->fast) p->fast = "true";
  /* An empty struct is C++; a field keeps it plain to read. */
  if (!p->fields.data) wg_buf_puts(&p->fields, "  char unused;\n");
  if (!p->prepare.data) wg_buf_puts(&p->prepare, "  c.unused = 0;\n");
  return p->defs.failed || p->fields.failed || p->prepare.failed || p->body.failed
             ? wg_fail(ctx, WG_ENOMEM, "out of memory")
             : WG_OK;
}

static void bin_parts_free(bin_parts *p) {
  wg_buf_free(&p->defs);
  wg_buf_free(&p->fields);
  wg_buf_free(&p->prepare);
  wg_buf_free(&p->body);
}

static int hist_source(wg_context *ctx, wg_buf *out, const wg_spec *c) {
  const hist_plan p = hist_plan_for(c);
  const int len = wg_spec_format(NULL, 0, c);
  char kernel[160], bins[32], block[16], unroll[16], method[8], copies[16], words[32],
      max_params[16];
  if (len < 0) return wg_fail(ctx, WG_ESPEC, "the spec has no text form");
  char *text = malloc((size_t)len + 1);
  if (!text) return wg_fail(ctx, WG_ENOMEM, "out of memory");
  wg_spec_format(text, (size_t)len + 1, c);
  wg_buf conv = {0};
  bin_parts parts = {0};
  wg_kernel_name(kernel, sizeof kernel, c);
  snprintf(bins, sizeof bins, "%" PRId64, c->bins);
  snprintf(block, sizeof block, "%u", HIST_BLOCK);
  snprintf(unroll, sizeof unroll, "%u", p.unroll);
  snprintf(method, sizeof method, "%d", (int)p.method);
  snprintf(copies, sizeof copies, "%u", p.copies);
  snprintf(words, sizeof words, "%" PRIu64, p.words ? p.words : 1u);
  snprintf(max_params, sizeof max_params, "%d", WG_MAX_PARAMS);
  int rc = WG_OK;
  if (wg_types[c->type].size == 2)
    rc = wg_template_render(ctx, &conv, "half_conversions.cuh", NULL, 0);
  if (!rc) rc = bin_parts_make(ctx, &parts, c);
  if (!rc) {
    const wg_template_var vars[] = {
      {"spec", text},        {"version", WG_VERSION_STRING},
      {"conversions", conv.data ? conv.data : ""},
      {"ctype", wg_types[c->type].ctype},
      {"count_ctype", wg_types[c->counts].ctype},
      {"max_params", max_params}, {"bins", bins},
      {"block", block},           {"unroll", unroll},
      {"method", method},         {"copies", copies},
      {"words", words},           {"helpers", parts.defs.data ? parts.defs.data : ""},
      {"bin_fields", parts.fields.data}, {"bin_prepare", parts.prepare.data},
      {"bin_body", parts.body.data},     {"bin_fast", parts.fast},
      {"kernel", kernel},
    };
    rc = wg_template_render(ctx, out, "histogram.cu", vars, WG_COUNT_OF(vars));
  }
  free(text);
  wg_buf_free(&conv);
  bin_parts_free(&parts);
  return rc;
}

const wg_family wg_family_histogram = {
  "histogram", WG_KEY_BINS | WG_KEY_COUNTS, hist_validate, hist_format_keys, hist_concrete,
  hist_name_suffix, hist_source,
  hist_shared_bytes,
};

/* --- the call ------------------------------------------------------------- */

/* The kernel's parameter block: the spec's declared parameters (a map), the
 * range (lo, hi) of a float histogram without one, else nothing. */
static int hist_params(wg_context *ctx, const wg_spec *s, const wg_scalar *params,
                       size_t nparams, wg_scalar kparams[WG_MAX_PARAMS]) {
  memset(kparams, 0, sizeof(wg_scalar) * WG_MAX_PARAMS);
  const bool range = !s->map && wg_types[s->type].is_float;
  const size_t want = s->map ? (size_t)s->nparams : range ? 2u : 0u;
  if (nparams != want || (want && !params))
    return wg_fail(ctx, WG_EINVAL, "this histogram takes %zu parameter%s%s, %zu given",
                   want, want == 1 ? "" : "s",
                   range ? " (lo and hi of the range, as f64)" : "",
                   params ? nparams : 0);
  if (want) memcpy(kparams, params, want * sizeof *params);
  if (!range) return WG_OK;
  const double lo = params[0].f64, hi = params[1].f64;
  /* The kernel compares in the value type (f32 unless f64): the range must
   * hold there too. */
  const bool f64 = s->type == WG_F64;
  const double vlo = f64 ? lo : (double)(float)lo, vhi = f64 ? hi : (double)(float)hi;
  const double width = f64 ? vhi - vlo : (double)((float)vhi - (float)vlo);
  if (!isfinite(vlo) || !isfinite(vhi) || !(vlo < vhi) || !isfinite(width))
    return wg_fail(ctx, WG_EINVAL, "range: lo %g and hi %g must be finite in %s with "
                   "lo < hi and hi - lo finite", lo, hi, f64 ? "f64" : "f32");
  return WG_OK;
}

int wg_histogram(wg_context *ctx, const wg_spec *spec, uint64_t in, uint64_t n,
                 const wg_scalar *params, size_t nparams, uint64_t out, void *stream) {
  if (!ctx) return WG_EINVAL;
  int status = wg_spec_validate(ctx, spec);
  if (status != WG_OK) return status;
  if (spec->primitive != WG_HISTOGRAM)
    return wg_fail(ctx, WG_EINVAL, "the spec is a '%s', not a 'histogram'",
                   wg_primitives[spec->primitive].name);
  wg_scalar kparams[WG_MAX_PARAMS];
  status = hist_params(ctx, spec, params, nparams, kparams);
  const uint64_t bins = (uint64_t)spec->bins;
  const size_t count_size = wg_types[spec->counts].size;
  if (status == WG_OK)
    status = wg_check_device_buffer(ctx, "input", in, n, wg_types[spec->type].size);
  if (status == WG_OK) status = wg_check_device_buffer(ctx, "output", out, bins, count_size);
  /* The call zeroes the output before the kernel reads the keys. */
  if (status == WG_OK)
    status = wg_check_apart(ctx, "output", out, bins * count_size, "input", in,
                            n * wg_types[spec->type].size);
  wg_kernel *k = NULL;
  if (status == WG_OK && n > 0) status = wg_kernel_get(ctx, &k, spec);
  if (status != WG_OK) return status;

  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  status = wg_device_enter(ctx, &scope, &api);
  if (status != WG_OK) return status;
  const CUstream s = (CUstream)stream;
  /* The call is self-contained: it zeroes the output on the stream first. */
  status = wg_cuda_status(ctx, api->MemsetD8Async((CUdeviceptr)out, 0,
                                                  (size_t)bins * count_size, s),
                          "cuMemsetD8Async");
  if (status == WG_OK && k) {
    const size_t shared = hist_shared_bytes(&k->spec, HIST_BLOCK);
    int per_sm = 0;
    status = wg_kernel_allow_shared(ctx, api, k, shared);
    if (status == WG_OK && (unsigned)k->max_block_size < HIST_BLOCK)
      status = wg_fail(ctx, WG_ECUDA, "%s allows %d threads a block; it needs %u",
                       k->name, k->max_block_size, HIST_BLOCK);
    if (status == WG_OK)
      status = wg_cuda_status(ctx, api->OccupancyMaxActiveBlocksPerMultiprocessor(
                                       &per_sm, k->function, (int)HIST_BLOCK, shared),
                              "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    if (status == WG_OK) {
      /* Every resident block, but no more than one sweep needs, and enough
       * that no block counts 2^31 keys. */
      const uint64_t resident = (uint64_t)(per_sm > 0 ? per_sm : 1) *
                                (uint64_t)ctx->device->info.sm_count;
      const uint64_t vectors = n / (16u / wg_types[spec->type].size) + 1u;
      const uint64_t per_block = (uint64_t)HIST_BLOCK * hist_plan_for(&k->spec).unroll;
      uint64_t grid = vectors / per_block + (vectors % per_block != 0);
      if (grid > resident) grid = resident;
      const uint64_t least = n / HIST_BLOCK_ELEMENTS + 1u;
      if (grid < least) grid = least;
      if (grid > 0x7fffffffu) grid = 0x7fffffffu;
      CUdeviceptr in_ptr = (CUdeviceptr)in, out_ptr = (CUdeviceptr)out;
      unsigned long long count = (unsigned long long)n;
      long long nbins = spec->bins; /* k->spec.bins is the capacity, >= it */
      void *args[] = {&in_ptr, &count, &out_ptr, &nbins, kparams};
      status = wg_cuda_status(ctx, api->LaunchKernel(k->function, (unsigned)grid, 1, 1,
                                                     HIST_BLOCK, 1, 1, (unsigned)shared,
                                                     s, args, NULL),
                              "cuLaunchKernel");
    }
  }
  wg_device_leave(ctx, &scope);
  if (status == WG_OK) wg_errmsg_clear(ctx);
  return status;
}
