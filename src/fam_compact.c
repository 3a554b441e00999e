/*
 * fam_compact.c - stream compaction (the "compact" primitive): its kernel
 * family (validation, the source around templates/compact.cu) and the
 * public call wg_compact (arguments, workspace, launch).
 *
 * The predicate lives in the spec's map slot and is written pred= (spec
 * text: spec_expr.c); it is parsed to a tree and rendered from it here,
 * like every user expression. One launch of one tile a block; tiles find
 * their place by a decoupled look-back over one word a tile, kept in the
 * stream's workspace after the reductions' part (workspace.c), which the
 * kernel leaves zero for the next launch.
 */
#include "compact.h"
#include "driver.h"
#include "expr.h"
#include "family.h"
#include "kernel.h"
#include "reduce.h"
#include "workspace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Threads a block: the template is compiled for exactly this. */
#define WG_COMPACT_BLOCK 256u
/* gridDim.x may not exceed this. */
#define WG_COMPACT_MAX_TILES 0x7fffffffull
/* The workspace's own part: ticket and counter, then a word a tile. */
#define WG_COMPACT_HEADER_BYTES 16u

/* The kernel's shape (templates/compact.cu says what each knob does),
 * from a sweep on the H200 at 2^28 f32 (docs/compact-design.md): tiles of
 * 32 KiB, five blocks an SM, 2 words a lane a poll, and for big grids a
 * 1 us sleep before the first poll and 400 ns between polls. 16-bit
 * elements take 16 KiB tiles, since a thread's kept bits fit one word. */
typedef struct compact_shape {
  unsigned unroll;     /* 16-byte vectors a thread a tile */
  unsigned min_blocks; /* blocks an SM, for __launch_bounds__ */
  wg_lookback_knobs lookback;
} compact_shape;

static compact_shape compact_shape_for(wg_type type) {
  const unsigned unroll = wg_types[type].size == 2 ? 4u : 8u;
  return (compact_shape){unroll, 5, {2, 1000, 400, 0}};
}

/* Elements a tile of a spec of `type`. */
static uint64_t tile_elements(wg_type type) {
  return (uint64_t)WG_COMPACT_BLOCK * compact_shape_for(type).unroll *
         (16u / wg_types[type].size);
}

/* --- the family ----------------------------------------------------------- */

static int compact_validate(wg_context *ctx, const wg_spec *s, int arch) {
  (void)arch;
  if (s->combine || s->identity || s->final)
    return wg_fail(ctx, WG_ESPEC, "%s: compact takes a predicate (pred=), inputs= and "
                   "params=, no %s", s->combine ? "combine" : s->identity ? "identity"
                   : "final", s->combine ? "combine" : s->identity ? "identity" : "final");
  return WG_OK;
}

/* struct wg_inputs, the loads of inputs y z w, and wg_keep: the predicate
 * over one element and its index. */
static int predicate_source(wg_context *ctx, wg_buf *out, const wg_spec *s) {
  static const char names[] = "xyzw";
  const int ninputs = s->ninputs < 1 ? 1 : s->ninputs;
  wg_buf_puts(out, "struct wg_inputs { /* the input arrays, read at one offset */\n"
                   "  const wg_elem *x;\n");
  for (int k = 1; k < WG_MAX_INPUTS; k++) {
    if (k < ninputs)
      wg_buf_printf(out, "  const %s *%c;\n", wg_types[s->inputs[k]].ctype, names[k]);
    else
      wg_buf_printf(out, "  const void *%c; /* not an input */\n", names[k]);
  }
  wg_buf_puts(out, "};\n");
  for (int k = 1; k < ninputs; k++) {
    const wg_type_info *t = &wg_types[s->inputs[k]];
    wg_buf_printf(out, "static __device__ __forceinline__ %s wg_load_%c(%s x) "
                  "{ return %s; }\n", t->acc, names[k], t->ctype, t->load);
  }
  wg_buf_puts(out, "/* Is the element at offset `at` kept? */\n"
                   "static __device__ __forceinline__ bool wg_keep(wg_elem x, "
                   "const wg_inputs &in, unsigned long long at, unsigned long long n, "
                   "const wg_params &wg_pp) {\n"
                   "  (void)x; (void)in; (void)at; (void)n; (void)wg_pp;\n");
  if (!s->map) {
    wg_buf_puts(out, "  return wg_nonzero(x); /* no predicate: the non-zero elements */\n}\n");
    return out->failed ? wg_fail(ctx, WG_ENOMEM, "out of memory") : WG_OK;
  }
  wg_expr *e = NULL;
  int rc = wg_spec_expr_parse(ctx, &e, s, WG_EXPR_MAP);
  if (rc) return rc;
  const unsigned uses = wg_expr_uses(e);
  for (int k = 0; k < ninputs; k++) {
    if (!(uses & WG_EXPR_USES_INPUT(k))) continue;
    const char *vt = wg_vt_ctype(wg_value_type_of(k ? s->inputs[k] : s->type));
    if (k == 0)
      wg_buf_printf(out, "  const %s wg_x = (%s)wg_load(x);\n", vt, vt);
    else
      wg_buf_printf(out, "  const %s wg_%c = (%s)wg_load_%c(in.%c[at]);\n", vt, names[k],
                    vt, names[k], names[k]);
  }
  if (uses & WG_EXPR_USES_I) wg_buf_puts(out, "  const long long wg_i = (long long)at;\n");
  if (uses & WG_EXPR_USES_N) wg_buf_puts(out, "  const long long wg_n = (long long)n;\n");
  wg_codegen_expr_params(out, s, uses);
  /* Non-zero keeps, as C reads a condition: a NaN keeps. */
  wg_buf_puts(out, "  return (");
  rc = wg_expr_render(e, out);
  wg_buf_puts(out, ") != 0;\n}\n");
  wg_expr_free(e);
  return rc || out->failed ? wg_fail(ctx, WG_ENOMEM, "out of memory") : WG_OK;
}

static int compact_source(wg_context *ctx, wg_buf *out, const wg_spec *s) {
  /* The prelude of the bare type (element, loads, bits, wg_params); the
   * predicate is rendered below, not through the reductions' map. */
  wg_spec bare = *s;
  bare.map = NULL;
  bare.ninputs = 1;
  bare.nparams = 0;
  char kernel[128];
  /* The spec's whole text: a predicate may make it long. */
  const int len = wg_spec_format(NULL, 0, s);
  char *spec_text = len > 0 ? malloc((size_t)len + 1) : NULL;
  if (!spec_text) return wg_fail(ctx, WG_ENOMEM, "out of memory");
  wg_spec_format(spec_text, (size_t)len + 1, s);
  const compact_shape c = compact_shape_for(s->type);
  wg_buf prelude = {0}, predicate = {0}, lookback = {0};
  int rc = WG_OK;
  if (!rc && wg_kernel_name(kernel, sizeof kernel, s) < 0)
    rc = wg_fail(ctx, WG_ESPEC, "no kernel name for this spec");
  if (!rc) rc = wg_codegen_prelude(ctx, &prelude, &bare);
  /* 16-bit extra inputs need the conversions the prelude of x lacks. */
  bool halves = false;
  for (int k = 1; k < s->ninputs; k++) halves = halves || wg_types[s->inputs[k]].size == 2;
  if (!rc && halves && wg_types[s->type].size != 2)
    rc = wg_template_render(ctx, &predicate, "half_conversions.cuh", NULL, 0);
  if (!rc && s->map) wg_buf_puts(&predicate, wg_expr_helpers());
  if (!rc) rc = predicate_source(ctx, &predicate, s);
  if (!rc) rc = wg_codegen_lookback(ctx, &lookback, c.lookback);
  if (!rc && (prelude.failed || predicate.failed || lookback.failed))
    rc = wg_fail(ctx, WG_ENOMEM, "out of memory");
  if (!rc) {
    char num[3][16];
    const unsigned nums[] = {WG_COMPACT_BLOCK, c.unroll, c.min_blocks};
    for (int i = 0; i < 3; i++) snprintf(num[i], sizeof num[i], "%u", nums[i]);
    const wg_template_var vars[] = {
      {"spec", spec_text},       {"version", WG_VERSION_STRING},
      {"prelude", prelude.data}, {"predicate", predicate.data},
      {"kernel", kernel},        {"block", num[0]},
      {"unroll", num[1]},        {"min_blocks", num[2]},
      {"lookback", lookback.data},
    };
    rc = wg_template_render(ctx, out, "compact.cu", vars, WG_COUNT_OF(vars));
  }
  free(spec_text);
  wg_buf_free(&prelude);
  wg_buf_free(&predicate);
  wg_buf_free(&lookback);
  return rc;
}

const wg_family wg_family_compact = {
  .name = "compact",
  .validate = compact_validate,
  .source = compact_source,
};

/* --- the call ------------------------------------------------------------- */

/* The spec, inputs, parameters and outputs of a call, checked. */
static int compact_args(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
                        size_t ninputs, uint64_t n, const wg_scalar *params,
                        size_t nparams, uint64_t out_values, uint64_t out_indices,
                        uint64_t out_count) {
  if (!spec) return wg_fail(ctx, WG_EINVAL, "wg_compact: spec is NULL");
  int rc = wg_spec_validate(ctx, spec);
  if (rc) return rc;
  if (spec->primitive != WG_COMPACT)
    return wg_fail(ctx, WG_EINVAL, "wg_compact: the spec is a '%s', not a 'compact'",
                   wg_primitives[spec->primitive].name);
  const size_t want = spec->ninputs < 1 ? 1 : (size_t)spec->ninputs;
  if (!inputs || ninputs != want)
    return wg_fail(ctx, WG_EINVAL, "wg_compact: the spec reads %zu input%s, %zu "
                   "pointer%s given", want, want == 1 ? "" : "s", inputs ? ninputs : 0,
                   (inputs ? ninputs : 0) == 1 ? "" : "s");
  if (nparams != (size_t)spec->nparams || (nparams && !params))
    return wg_fail(ctx, WG_EINVAL, "wg_compact: the spec declares %d parameter%s, %zu "
                   "given", spec->nparams, spec->nparams == 1 ? "" : "s",
                   params ? nparams : 0);
  if (!out_count)
    return wg_fail(ctx, WG_EINVAL, "wg_compact: out_count is NULL (the count is "
                   "always written)");
  const uint64_t tiles = n / tile_elements(spec->type) + 1;
  if (tiles > WG_COMPACT_MAX_TILES)
    return wg_fail(ctx, WG_ERANGE, "wg_compact: %llu elements are more than one "
                   "launch takes", (unsigned long long)n);
  for (size_t k = 0; k < want; k++)
    if ((rc = wg_check_device_buffer(ctx, "input", inputs[k], n,
                                     wg_types[k ? spec->inputs[k] : spec->type].size)))
      return rc;
  if (out_values &&
      (rc = wg_check_device_buffer(ctx, "out_values", out_values, n,
                                   wg_types[spec->type].size)))
    return rc;
  if (out_indices &&
      (rc = wg_check_device_buffer(ctx, "out_indices", out_indices, n, 8)))
    return rc;
  if ((rc = wg_check_device_buffer(ctx, "out_count", out_count, 1, 8))) return rc;
  /* The kernel reads kept values again from the inputs after other tiles
   * have written: no output may overlap an input, nor another output. */
  const struct { const char *name; uint64_t at, bytes; } outs[] = {
    {"out_values", out_values, out_values ? n * wg_types[spec->type].size : 0},
    {"out_indices", out_indices, out_indices ? n * 8 : 0},
    {"out_count", out_count, 8},
  };
  for (size_t o = 0; o < WG_COUNT_OF(outs); o++) {
    for (size_t k = 0; k < want; k++) {
      const uint64_t bytes = n * wg_types[k ? spec->inputs[k] : spec->type].size;
      char input[64];
      snprintf(input, sizeof input, "input %zu (compaction is not done in place)", k);
      if ((rc = wg_check_apart(ctx, outs[o].name, outs[o].at, outs[o].bytes, input, inputs[k],
                               bytes)))
        return rc;
    }
    for (size_t p = o + 1; p < WG_COUNT_OF(outs); p++)
      if ((rc = wg_check_apart(ctx, outs[o].name, outs[o].at, outs[o].bytes, outs[p].name,
                               outs[p].at, outs[p].bytes)))
        return rc;
  }
  return WG_OK;
}

int wg_compact(wg_context *ctx, const wg_spec *spec, const uint64_t *inputs,
               size_t ninputs, uint64_t n, const wg_scalar *params, size_t nparams,
               uint64_t out_values, uint64_t out_indices, uint64_t out_count,
               void *stream) {
  if (!ctx) return WG_EINVAL;
  int status = compact_args(ctx, spec, inputs, ninputs, n, params, nparams, out_values,
                            out_indices, out_count);
  if (status) return status;
  wg_kernel *k = NULL;
  if ((status = wg_kernel_get(ctx, &k, spec))) return status;
  if ((unsigned)k->max_block_size < WG_COMPACT_BLOCK)
    return wg_fail(ctx, WG_ECUDA, "%s allows %d threads a block; it needs %u", k->name,
                   k->max_block_size, WG_COMPACT_BLOCK);

  /* One block a tile, at least one: n == 0 still writes the count. */
  const uint64_t tile = tile_elements(spec->type);
  const uint64_t grid = n == 0 ? 1 : n / tile + (n % tile != 0);
  CUdeviceptr all[WG_MAX_INPUTS] = {0};
  for (int i = 0; i < (spec->ninputs < 1 ? 1 : spec->ninputs); i++)
    all[i] = (CUdeviceptr)inputs[i];
  wg_scalar kparams[WG_MAX_PARAMS];
  memset(kparams, 0, sizeof kparams);
  if (nparams) memcpy(kparams, params, nparams * sizeof *params);
  unsigned long long count = n;
  CUdeviceptr values = out_values, indices = out_indices, counted = out_count,
              workspace = 0;
  void *args[] = {all, &count, &values, &indices, &counted, kparams, &workspace};

  wg_device_scope scope;
  const wg_driver_api *api = NULL;
  if ((status = wg_device_enter(ctx, &scope, &api))) return status;
  const CUstream s = (CUstream)stream;
  wg_workspace ws = {0, -1, 0};
  /* Several tiles meet in the workspace; one tile needs none. */
  if (grid > 1)
    status = wg_workspace_acquire_extra(ctx, api, s, sizeof(unsigned),
                                        WG_COMPACT_HEADER_BYTES + grid * 8u, &ws);
  if (status == WG_OK) {
    workspace = ws.ptr ? ws.ptr + WG_WORKSPACE_BYTES : 0;
    status = wg_cuda_status(ctx, api->LaunchKernel(k->function, (unsigned)grid, 1, 1,
                                                   WG_COMPACT_BLOCK, 1, 1, 0, s, args,
                                                   NULL),
                            "cuLaunchKernel");
    const int released = wg_workspace_release(ctx, api, s, &ws, status == WG_OK);
    if (status == WG_OK) status = released;
  }
  wg_device_leave(ctx, &scope);
  if (status == WG_OK) wg_errmsg_clear(ctx);
  return status;
}

/* --- the host's answer (compact.h) --------------------------------------- */

static float f16_to_float(uint16_t h) {
  const unsigned exponent = (h >> 10) & 31u, mantissa = h & 1023u;
  float f = exponent == 0    ? ldexpf((float)mantissa, -24)
            : exponent == 31 ? (mantissa ? NAN : INFINITY)
                             : ldexpf((float)(mantissa | 1024u), (int)exponent - 25);
  return h >> 15 ? -f : f;
}

/* Element i of `base` (of type t) as the expression language sees it. */
static wg_value element_value(wg_type t, const void *base, uint64_t i) {
  const unsigned char *p = (const unsigned char *)base + i * wg_types[t].size;
  wg_value v;
  memset(&v, 0, sizeof v);
  v.type = wg_value_type_of(t);
  uint16_t h;
  uint32_t b;
  switch (t) {
  case WG_F16: memcpy(&h, p, 2); v.as.f32 = f16_to_float(h); break;
  case WG_BF16: memcpy(&h, p, 2); b = (uint32_t)h << 16; memcpy(&v.as.f32, &b, 4); break;
  default: memcpy(&v.as, p, wg_types[t].size); break; /* the member of its type */
  }
  return v;
}

static bool value_nonzero(wg_value v) {
  switch (v.type) {
  case WG_VT_BOOL: return v.as.b;
  case WG_VT_I32: return v.as.i32 != 0;
  case WG_VT_U32: return v.as.u32 != 0;
  case WG_VT_I64: return v.as.i64 != 0;
  case WG_VT_U64: return v.as.u64 != 0;
  case WG_VT_F32: return v.as.f32 != 0; /* a NaN is non-zero */
  default: return v.as.f64 != 0;
  }
}

int wg_compact_keep_host(wg_context *ctx, const wg_spec *spec, const void *const *inputs,
                         uint64_t n, const wg_scalar *params, unsigned char *keep) {
  int rc = wg_spec_validate(ctx, spec);
  if (rc) return rc;
  if (spec->primitive != WG_COMPACT)
    return wg_fail(ctx, WG_EINVAL, "not a compact spec");
  if (!spec->map) {
    const size_t size = wg_types[spec->type].size;
    for (uint64_t i = 0; i < n; i++) {
      uint64_t bits = 0;
      memcpy(&bits, (const unsigned char *)inputs[0] + i * size, size);
      if (wg_types[spec->type].is_float) bits &= ~(1ull << (size * 8 - 1));
      keep[i] = bits != 0;
    }
    return WG_OK;
  }
  wg_expr *e = NULL;
  if ((rc = wg_spec_expr_parse(ctx, &e, spec, WG_EXPR_MAP))) return rc;
  wg_expr_values vars;
  memset(&vars, 0, sizeof vars);
  for (int k = 0; k < spec->nparams; k++) {
    vars.params[k].type = wg_value_type_of(spec->params[k]);
    memcpy(&vars.params[k].as, &params[k], wg_types[spec->params[k]].size);
  }
  vars.n = (int64_t)n;
  const int ninputs = spec->ninputs < 1 ? 1 : spec->ninputs;
  for (uint64_t i = 0; i < n && !rc; i++) {
    for (int k = 0; k < ninputs; k++)
      vars.inputs[k] = element_value(k ? spec->inputs[k] : spec->type, inputs[k], i);
    vars.i = (int64_t)i;
    wg_value out;
    rc = wg_expr_eval(ctx, e, &vars, &out);
    keep[i] = !rc && value_nonzero(out);
  }
  wg_expr_free(e);
  return rc;
}
