/*
 * codegen_reduce.c - the source of the whole-array (reduce-array) and row
 * (reduce-rows) reductions: templates/array_reduce.cu and
 * templates/rows_reduce.cu around the prelude of the type and operator and
 * the helpers both share (templates/reduce_helpers.cuh).
 *
 * The row shape comes from the spec's cols (the row length it is made for);
 * the kernels are correct for any row length, the shape only decides how
 * fast. The shapes were measured on an H200 (docs/reduce-design.md).
 */
#include "reduce.h"
#include "family.h"

#include <inttypes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Smallest power of two >= x, for x <= 2^30. */
static uint64_t pow2_at_least(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

/* Rows of up to 2 vectors: one lane a row (more rows a thread cost
 * registers and lost). Up to 32: half as many lanes as vectors, 2 vectors a
 * lane, 2 rows in flight. Up to 256: a full warp, up to 8 vectors a lane.
 * Longer: a warp or blocks per row. */
#define WG_SHORT_ROW_VECTORS 256u

static uint64_t gcd(uint64_t a, uint64_t b) {
  while (b) {
    const uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Packed tiny rows: the fewest whole rows that fill whole 16-byte vectors
 * (so every chunk is aligned when the base is), and enough chunks a thread
 * for about 4 vectors in flight. */
static void pack_shape(wg_rows_shape *shape, uint64_t size, int64_t cols) {
  /* Compare before multiplying: cols * size could wrap (to 0 at 2^62 f32
   * columns, a division by zero below; found by tests/fuzz/fuzz_spec.c). */
  if (cols < 1 || (uint64_t)cols > WG_PACK_MAX_ROW_BYTES / size) return;
  const uint64_t bytes = (uint64_t)cols * size;
  const uint64_t chunk = bytes / gcd(bytes, 16) * 16; /* lcm(bytes, 16) */
  shape->pack_rows = (int)(chunk / bytes);
  shape->pack_vectors = (int)(chunk / 16);
  shape->pack_unroll = shape->pack_vectors >= 4 ? 1 : 4 / shape->pack_vectors;
}

wg_rows_shape wg_rows_shape_for(wg_type type, int64_t cols) {
  wg_rows_shape shape = {true, 32, 1, 1, 0, 0, 0};
  const uint64_t vec = 16u / wg_types[type].size;
  if (cols <= 0) return shape;
  pack_shape(&shape, wg_types[type].size, cols);
  const uint64_t vectors = ((uint64_t)cols + vec - 1) / vec;
  if (vectors > WG_SHORT_ROW_VECTORS) return shape;
  shape.long_rows = false;
  if (vectors <= 2) {
    shape.group = 1;
    shape.vectors_per_lane = (int)(vectors < 1 ? 1 : vectors);
    shape.rows_per_round = 1;
  } else if (vectors <= 32) {
    shape.group = (int)pow2_at_least(vectors) / 2;
    shape.vectors_per_lane = 2;
    shape.rows_per_round = 2;
  } else {
    shape.group = 32;
    shape.vectors_per_lane = (int)pow2_at_least((vectors + 31) / 32);
    shape.rows_per_round = 1;
  }
  return shape;
}

int64_t wg_rows_spec_cols(wg_type type, uint64_t cols) {
  const uint64_t vec = 16u / wg_types[type].size;
  if (cols >= 1 && cols <= WG_PACK_MAX_ROW_BYTES / wg_types[type].size)
    return (int64_t)cols;
  const uint64_t vectors = cols / vec + (cols % vec != 0);
  if (vectors > WG_SHORT_ROW_VECTORS) return 0;
  return (int64_t)(pow2_at_least(vectors ? vectors : 1) * vec);
}

static int codegen_array(wg_context *ctx, wg_buf *out, const wg_spec *s,
                         const char *spec_text, const char *kernel,
                         const char *prelude, const char *helpers) {
  char block[16], unroll[16], max_blocks[16], tickets[16], partial[16];
  snprintf(block, sizeof block, "%u", WG_REDUCE_BLOCK);
  snprintf(tickets, sizeof tickets, "%u", WG_WORKSPACE_TICKET_BYTES);
  snprintf(partial, sizeof partial, "%u", WG_WORKSPACE_PARTIAL_BYTES);
  snprintf(unroll, sizeof unroll, "%d", WG_REDUCE_UNROLL);
  snprintf(max_blocks, sizeof max_blocks, "%u", WG_REDUCE_MAX_BLOCKS);
  (void)s;
  const wg_template_var vars[] = {
    {"spec", spec_text}, {"version", WG_VERSION_STRING},
    {"prelude", prelude}, {"helpers", helpers},
    {"kernel", kernel},   {"block", block},
    {"unroll", unroll},   {"max_blocks", max_blocks},
    {"ticket_bytes", tickets}, {"partial_bytes", partial},
  };
  return wg_template_render(ctx, out, "array_reduce.cu", vars, WG_COUNT_OF(vars));
}

static int codegen_rows(wg_context *ctx, wg_buf *out, const wg_spec *s,
                        const char *spec_text, const char *kernel,
                        const char *prelude, const char *helpers) {
  const wg_rows_shape shape = wg_rows_shape_for(s->type, s->cols);
  char block[16], long_rows[4], group[16], vpl[16], rpr[16], split_rows[16],
      partials[16], tickets[16], partial[16], summary[400], pack[4][16];
  snprintf(tickets, sizeof tickets, "%u", WG_WORKSPACE_TICKET_BYTES);
  snprintf(partial, sizeof partial, "%u", WG_WORKSPACE_PARTIAL_BYTES);
  snprintf(block, sizeof block, "%u", WG_REDUCE_BLOCK);
  snprintf(long_rows, sizeof long_rows, "%d", shape.long_rows ? 1 : 0);
  snprintf(group, sizeof group, "%d", shape.group);
  snprintf(vpl, sizeof vpl, "%d", shape.vectors_per_lane);
  snprintf(rpr, sizeof rpr, "%d", shape.rows_per_round);
  snprintf(split_rows, sizeof split_rows, "%u", WG_ROWS_MAX_SPLIT_ROWS);
  snprintf(partials, sizeof partials, "%u", WG_ROWS_MAX_PARTIALS);
  snprintf(pack[0], sizeof pack[0], "%lld", shape.pack_rows ? (long long)s->cols : 0ll);
  snprintf(pack[1], sizeof pack[1], "%d", shape.pack_rows);
  snprintf(pack[2], sizeof pack[2], "%d", shape.pack_vectors);
  snprintf(pack[3], sizeof pack[3], "%d", shape.pack_unroll);
  if (shape.long_rows)
    snprintf(summary, sizeof summary,
             "The shape for long rows (cols=%lld): a warp per row when there "
             "are\n * enough rows to fill the GPU, else one or more blocks "
             "per row.", (long long)s->cols);
  else
    snprintf(summary, sizeof summary,
             "The shape for rows of up to %lld elements: %d lane%s per row,\n"
             " * %d 16-byte vector%s a lane, %d row%s in flight a group.",
             (long long)s->cols, shape.group, shape.group == 1 ? "" : "s",
             shape.vectors_per_lane, shape.vectors_per_lane == 1 ? "" : "s",
             shape.rows_per_round, shape.rows_per_round == 1 ? "" : "s");
  if (shape.pack_rows) {
    const size_t used = strlen(summary);
    snprintf(summary + used, sizeof summary - used,
             "\n * Packed rows (stride == cols, 16-byte aligned base): %d "
             "row%s a thread\n * in %d 16-byte vector%s, %d such chunk%s in "
             "flight.",
             shape.pack_rows, shape.pack_rows == 1 ? "" : "s", shape.pack_vectors,
             shape.pack_vectors == 1 ? "" : "s", shape.pack_unroll,
             shape.pack_unroll == 1 ? "" : "s");
  }
  const wg_template_var vars[] = {
    {"spec", spec_text},
    {"version", WG_VERSION_STRING},
    {"shape_summary", summary},
    {"prelude", prelude},
    {"helpers", helpers},
    {"kernel", kernel},
    {"block", block},
    {"long_rows", long_rows},
    {"group", group},
    {"vectors_per_lane", vpl},
    {"rows_per_round", rpr},
    {"max_split_rows", split_rows},
    {"max_row_partials", partials},
    {"ticket_bytes", tickets}, {"partial_bytes", partial},
    {"pack_cols", pack[0]}, {"pack_rows", pack[1]},
    {"pack_vectors", pack[2]}, {"pack_unroll", pack[3]},
  };
  return wg_template_render(ctx, out, "rows_reduce.cu", vars, WG_COUNT_OF(vars));
}

/* The element kernel (templates/expr_reduce.cu) of either primitive. Its
 * array form reads chunks of 16 bytes of the narrowest input (every input's
 * share a whole number of 16-byte vectors) and keeps about 64 bytes a
 * thread in flight, as the array kernel does for one input. */
static int codegen_elementwise(wg_context *ctx, wg_buf *out, const wg_spec *s,
                               const char *spec_text, const char *kernel,
                               const char *prelude, const char *helpers) {
  const int ninputs = s->ninputs < 1 ? 1 : s->ninputs;
  size_t narrowest = wg_types[s->type].size, sizes = 0;
  for (int k = 0; k < ninputs; k++) {
    const size_t size = wg_types[k ? s->inputs[k] : s->type].size;
    if (size < narrowest) narrowest = size;
    sizes += size;
  }
  const size_t chunk = 16 / narrowest, chunk_bytes = chunk * sizes;
  const size_t unroll = chunk_bytes >= 64 ? 1 : 64 / chunk_bytes;
  char block[16], tickets[16], partial[16], inputs[16], chunk_text[24], unroll_text[24];
  snprintf(block, sizeof block, "%u", WG_REDUCE_BLOCK);
  snprintf(tickets, sizeof tickets, "%u", WG_WORKSPACE_TICKET_BYTES);
  snprintf(partial, sizeof partial, "%u", WG_WORKSPACE_PARTIAL_BYTES);
  snprintf(inputs, sizeof inputs, "%d", ninputs);
  snprintf(chunk_text, sizeof chunk_text, "%zu", chunk);
  snprintf(unroll_text, sizeof unroll_text, "%zu", unroll > 4 ? (size_t)4 : unroll);
  const wg_template_var vars[] = {
    {"spec", spec_text}, {"version", WG_VERSION_STRING},
    {"prelude", prelude}, {"helpers", helpers},
    {"kernel", kernel},   {"block", block},
    {"ticket_bytes", tickets}, {"partial_bytes", partial},
    {"rows", s->primitive == WG_REDUCE_ROWS ? "1" : "0"},
    {"ninputs", inputs}, {"chunk", chunk_text}, {"unroll", unroll_text},
  };
  return wg_template_render(ctx, out, "expr_reduce.cu", vars, WG_COUNT_OF(vars));
}

int wg_reduce_parts_make(wg_context *ctx, wg_reduce_parts *p, const wg_spec *concrete) {
  memset(p, 0, sizeof *p);
  /* The spec's whole text: expressions may make it long. */
  const int len = wg_spec_format(NULL, 0, concrete);
  p->spec_text = len > 0 ? malloc((size_t)len + 1) : NULL;
  if (!p->spec_text) return wg_fail(ctx, WG_ENOMEM, "out of memory");
  wg_spec_format(p->spec_text, (size_t)len + 1, concrete);
  wg_kernel_name(p->kernel, sizeof p->kernel, concrete);
  int rc = wg_codegen_prelude(ctx, &p->prelude, concrete);
  if (!rc) rc = wg_template_render(ctx, &p->helpers, "reduce_helpers.cuh", NULL, 0);
  if (!rc && (p->prelude.failed || p->helpers.failed))
    rc = wg_fail(ctx, WG_ENOMEM, "out of memory");
  if (rc) wg_reduce_parts_free(p);
  return rc;
}

void wg_reduce_parts_free(wg_reduce_parts *p) {
  wg_buf_free(&p->prelude);
  wg_buf_free(&p->helpers);
  free(p->spec_text);
  p->spec_text = NULL;
}

/* The source of a reduce-array or reduce-rows spec. */
static int reduce_source(wg_context *ctx, wg_buf *out, const wg_spec *concrete) {
  wg_reduce_parts p;
  int rc = wg_reduce_parts_make(ctx, &p, concrete);
  if (rc) return rc;
  if (wg_spec_elementwise(concrete))
    rc = codegen_elementwise(ctx, out, concrete, p.spec_text, p.kernel, p.prelude.data,
                             p.helpers.data);
  else
    rc = concrete->primitive == WG_REDUCE_ARRAY
             ? codegen_array(ctx, out, concrete, p.spec_text, p.kernel, p.prelude.data,
                             p.helpers.data)
             : codegen_rows(ctx, out, concrete, p.spec_text, p.kernel, p.prelude.data,
                            p.helpers.data);
  wg_reduce_parts_free(&p);
  return rc;
}

/* --- the reduction families ------------------------------------------------ */

static int rows_validate(wg_context *ctx, const wg_spec *s, int arch) {
  (void)arch;
  if (s->cols < 0) return wg_fail(ctx, WG_ESPEC, "cols: %" PRId64 " is negative", s->cols);
  return WG_OK;
}

static void rows_format_keys(wg_buf *out, const wg_spec *s) {
  wg_buf_printf(out, " cols=%" PRId64, s->cols);
}

static void rows_name_suffix(wg_buf *out, const wg_spec *s) {
  if (s->cols) wg_buf_printf(out, "_c%lld", (long long)s->cols);
}

const wg_family wg_family_reduce_array = {
  .name = "reduce-array",
  .source = reduce_source,
};

const wg_family wg_family_reduce_rows = {
  .name = "reduce-rows",
  .keys = WG_KEY_COLS,
  .validate = rows_validate,
  .format_keys = rows_format_keys,
  .name_suffix = rows_name_suffix,
  .source = reduce_source,
};
