/*
 * test_unit.c - the `unit` suite: spec text form, validation of every field
 * and combination, template substitution and its errors, and properties of
 * the generated source. Needs no GPU; NVRTC is asked only for its list of
 * architectures (and refuses one it lacks).
 */
#include "internal.h"
#include "support.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static wg_context *ctx;

static void setup(void) {
  wg_options o = WG_OPTIONS_INIT;
  o.disk_cache = -1;
  ck_assert_int_eq(wg_context_create(&ctx, &o), WG_OK);
}
static void teardown(void) { wg_context_destroy(ctx); }

/* Parses text, expecting failure with a message that contains `needle`. */
static void expect_rejected(const char *text, const char *needle) {
  wg_spec s;
  int rc = wg_spec_parse(ctx, &s, text);
  ck_assert_msg(rc == WG_ESPEC, "'%s' was accepted (rc %d)", text, rc);
  ck_assert_msg(strstr(wg_errmsg(ctx), needle), "'%s': message '%s' lacks '%s'", text,
                wg_errmsg(ctx), needle);
}

START_TEST(parse_example) {
  wg_spec s;
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce f32 sum width=16 variant=xor arch=sm_90"),
                   WG_OK);
  ck_assert_int_eq(s.primitive, WG_REDUCE);
  ck_assert_int_eq(s.type, WG_F32);
  ck_assert_int_eq(s.op, WG_OP_SUM);
  ck_assert_int_eq(s.width, 16);
  ck_assert_int_eq(s.variant, WG_VARIANT_XOR);
  ck_assert_int_eq(s.arch, 90);
  char text[256];
  wg_spec_format(text, sizeof text, &s);
  ck_assert_str_eq(text, "reduce f32 sum width=16 variant=xor arch=sm_90");
  ck_assert_int_eq(s.layout, WG_LAYOUT_VEC); /* the default, not written */
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "scan f16 max layout=lane width=8"), WG_OK);
  ck_assert_int_eq(s.layout, WG_LAYOUT_LANE);
  wg_spec_format(text, sizeof text, &s);
  ck_assert_str_eq(text, "scan f16 max width=8 variant=auto layout=lane");
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "scan f16 max layout=vec"), WG_OK);
  wg_spec_format(text, sizeof text, &s);
  ck_assert_str_eq(text, "scan f16 max width=32 variant=auto");
}
END_TEST

START_TEST(parse_defaults_and_spacing) {
  wg_spec s;
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "  scan   i64 max\t"), WG_OK);
  char text[256];
  wg_spec_format(text, sizeof text, &s);
  ck_assert_str_eq(text, "scan i64 max width=32 variant=auto");
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "broadcast u32 lane=3 width=8"), WG_OK);
  wg_spec_format(text, sizeof text, &s);
  ck_assert_str_eq(text, "broadcast u32 width=8 variant=auto lane=3");
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-rows f64 min cols=1000"), WG_OK);
  wg_spec_format(text, sizeof text, &s);
  ck_assert_str_eq(text, "reduce-rows f64 min cols=1000");
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "ballot bf16 arch=90"), WG_OK);
  wg_spec_format(text, sizeof text, &s);
  ck_assert_str_eq(text, "ballot bf16 width=32 variant=auto arch=sm_90");
}
END_TEST

/* Field by field: the struct has padding after `cols`. */
static bool same_spec(const wg_spec *a, const wg_spec *b) {
  return a->version == b->version && a->primitive == b->primitive && a->type == b->type &&
         a->op == b->op && a->width == b->width && a->variant == b->variant &&
         a->arch == b->arch && a->lane == b->lane && a->cols == b->cols &&
         a->layout == b->layout;
}

/* Every listed spec prints, parses back to the same struct and prints the
 * same text again. */
START_TEST(round_trip_every_listed_spec) {
  wg_spec *list;
  size_t n;
  ck_assert_int_eq(wg_spec_list(ctx, &list, &n, _i ? 80 : 0), WG_OK);
  ck_assert_uint_gt(n, 1000);
  for (size_t i = 0; i < n; i++) {
    char a[256], b[256];
    wg_spec s;
    wg_spec_format(a, sizeof a, &list[i]);
    ck_assert_msg(wg_spec_parse(ctx, &s, a) == WG_OK, "%s: %s", a, wg_errmsg(ctx));
    ck_assert_msg(same_spec(&s, &list[i]), "'%s' parsed differently", a);
    wg_spec_format(b, sizeof b, &s);
    ck_assert_str_eq(a, b);
  }
  wg_free(list);
}
END_TEST

START_TEST(rejects_each_field) {
  expect_rejected("", "PRIMITIVE TYPE");
  expect_rejected("reduce", "PRIMITIVE TYPE");
  expect_rejected("reduse f32 sum", "primitive: unknown 'reduse'");
  expect_rejected("reduce f31 sum", "type: unknown 'f31'");
  expect_rejected("reduce f32 plus", "operator: unknown 'plus'");
  expect_rejected("reduce f32", "needs an operator");
  expect_rejected("broadcast f32 sum", "takes no operator");
  expect_rejected("ballot i32 or", "takes no operator");
  expect_rejected("reduce f32 xor", "operator: 'xor' is bitwise");
  expect_rejected("scan bf16 and", "not bf16");
  expect_rejected("scan f32 argmax", "'argmax' has no prefix the warp scans can give");
  expect_rejected("exscan f64 logsumexp", "scans take sum, prod, min, max, and, or, xor");
  expect_rejected("scan f32", "one of sum, prod, min, max, and, or, xor");
  expect_rejected("reduce-array i32 mean", "'mean' needs floating types");
  expect_rejected("reduce-rows u64 var", "(f16, bf16, f32, f64), not u64");
  expect_rejected("reduce f32 sum width=12", "width: 12 is not allowed");
  expect_rejected("reduce f32 sum width=64", "width: 64");
  expect_rejected("reduce f32 sum width=0", "width: 0");
  expect_rejected("reduce f32 sum width=x", "width: 'x' is not a number");
  expect_rejected("reduce f32 sum variant=fast", "variant: unknown 'fast'");
  expect_rejected("reduce f64 sum variant=redux", "not f64");
  expect_rejected("reduce i32 prod variant=redux", "not 'prod'");
  expect_rejected("reduce i32 sum variant=redux arch=sm_75", "sm_80 or newer");
  expect_rejected("broadcast f32 variant=up", "variant: 'up' is not available for 'broadcast'");
  expect_rejected("reduce f32 sum variant=up", "allowed: auto, down, xor, idx, redux, smem");
  expect_rejected("scan f32 sum variant=down", "not available for 'scan'");
  expect_rejected("any f32 variant=xor", "allowed: auto, vote");
  expect_rejected("reduce f32 sum variant=vote", "not available");
  expect_rejected("broadcast f32 width=8 lane=8", "lane: 8 is outside the group");
  expect_rejected("broadcast f32 lane=-1", "lane: -1");
  expect_rejected("reduce f32 sum lane=1", "only broadcast takes a lane");
  expect_rejected("reduce f32 sum cols=4", "cols: only reduce-rows");
  expect_rejected("reduce-rows f32 sum width=16", "leave width out");
  expect_rejected("reduce-array f32 sum variant=xor", "not available for 'reduce-array'");
  expect_rejected("reduce f32 sum arch=sm_9x", "arch: '9x'");
  expect_rejected("reduce f32 sum arch=sm_90 arch=sm_80", "given twice");
  expect_rejected("reduce f32 sum speed=3", "unknown key 'speed'");
  expect_rejected("reduce f32 sum layout=wide", "layout: unknown 'wide'; layouts are vec, lane");
  expect_rejected("reduce f32 sum layout=lane layout=vec", "given twice");
  expect_rejected("reduce-array f32 sum layout=lane", "leave layout out");
  expect_rejected("reduce f32 sum width=8 extra", "unexpected word 'extra'");
  expect_rejected("width=8 reduce f32 sum", "too early");
}
END_TEST

/* The operator model: output types (PyTorch's rule), spec text of the new
 * operators, and the prelude rendering structs field by field. */
START_TEST(operator_model) {
  ck_assert_int_eq(wg_reduce_output_type(WG_F16, WG_OP_ARGMAX), WG_I64);
  ck_assert_int_eq(wg_reduce_output_type(WG_U32, WG_OP_COUNT_NONZERO), WG_I64);
  ck_assert_int_eq(wg_reduce_output_type(WG_BF16, WG_OP_VAR), WG_BF16);
  ck_assert_int_eq(wg_reduce_output_type(WG_F64, WG_OP_NORM2), WG_F64);
  ck_assert_int_eq(wg_reduce_output_type(WG_I32, WG_OP_LOGSUMEXP), WG_F32);
  ck_assert_int_eq(wg_reduce_output_type(WG_F16, WG_OP_LOGSUMEXP), WG_F16);
  ck_assert_int_eq(wg_reduce_output_type(WG_I32, WG_OP_SUM), WG_I32);
  ck_assert_int_eq(wg_reduce_output_type(WG_I32, WG_OP_MEAN), WG_ESPEC);
  ck_assert_int_eq(wg_reduce_output_type(WG_F32, WG_OP_NONE), WG_EINVAL);
  ck_assert_int_eq(wg_reduce_output_type(WG_F32, WG_OPERATOR_COUNT), WG_EINVAL);
  ck_assert_int_eq(wg_reduce_output_type((wg_type)-1, WG_OP_SUM), WG_EINVAL);
  /* Appended: today's values stay. */
  ck_assert_int_eq(WG_OP_XOR, 7);
  ck_assert_int_eq(WG_OP_ARGMIN, 8);
  wg_spec s;
  char text[256];
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-array f32 argmax"), WG_OK);
  ck_assert_int_eq(s.op, WG_OP_ARGMAX);
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-rows f32 var"), WG_OK);
  wg_spec_format(text, sizeof text, &s);
  ck_assert_str_eq(text, "reduce-rows f32 var cols=0");
  char *src = NULL;
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-rows bf16 var cols=64 arch=sm_90"), WG_OK);
  ck_assert_int_eq(wg_source(ctx, &src, &s), WG_OK);
  ck_assert_ptr_nonnull(strstr(src, "struct wg_acc {"));
  ck_assert_ptr_nonnull(strstr(src, "r.m2 = __shfl_down_sync(0xffffffffu, v.m2, offset, width);"));
  ck_assert_ptr_nonnull(strstr(src, "r.n = __ldcg(&p->n);"));
  ck_assert_ptr_nonnull(strstr(src, "typedef unsigned short wg_out;"));
  ck_assert_ptr_null(strstr(src, "${"));
  wg_free(src);
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-array i64 argmin arch=sm_90"), WG_OK);
  ck_assert_int_eq(wg_source(ctx, &src, &s), WG_OK);
  ck_assert_ptr_nonnull(strstr(src, "typedef long long wg_out;"));
  ck_assert_ptr_nonnull(strstr(src, "wg_arg_pick(a, b, b.v < a.v)"));
  wg_free(src);
  /* A warp primitive's accumulator stays a scalar. */
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce f32 sum arch=sm_90"), WG_OK);
  ck_assert_int_eq(wg_source(ctx, &src, &s), WG_OK);
  ck_assert_ptr_nonnull(strstr(src, "typedef float wg_acc;"));
  wg_free(src);
}
END_TEST

START_TEST(validate_struct_fields) {
  wg_spec s = WG_SPEC_INIT;
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_OK);
  s.version = 99;
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_ESPEC);
  wg_spec_init(&s);
  s.type = (wg_type)42;
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_ESPEC);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "type 42 is out of range"));
  wg_spec_init(&s);
  s.variant = (wg_variant)-1;
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_ESPEC);
  wg_spec_init(&s);
  s.layout = (wg_layout)7;
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_ESPEC);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "layout 7 is out of range"));
  ck_assert_int_lt(wg_spec_format(NULL, 0, &s), 0);
  wg_spec_init(&s);
  s.version = 1; /* a struct from before `layout`: refused, never misread */
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_ESPEC);
  s.variant = (wg_variant)-1;
  ck_assert_int_eq(wg_spec_validate(ctx, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_spec_parse(ctx, NULL, "reduce f32 sum"), WG_EINVAL);
  ck_assert_int_lt(wg_spec_format(NULL, 0, &s), 0);
  wg_spec_init(&s);
  s.arch = -90;
  ck_assert_int_eq(wg_spec_validate(ctx, &s), WG_ESPEC);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "arch: -90 is not an architecture"));
}
END_TEST

/* Validation never asks NVRTC (a process the disk cache serves must not
 * load it): an architecture this NVRTC lacks parses and has source, and is
 * refused, naming the ones it has, only when it must compile. */
START_TEST(arch_checked_at_compile) {
  wg_spec s;
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce f32 sum arch=sm_52"), WG_OK);
  char *text = NULL;
  ck_assert_int_eq(wg_source(ctx, &text, &s), WG_OK);
  ck_assert_ptr_nonnull(text);
  wg_free(text);
  void *cubin = (void *)1;
  size_t len = 7;
  ck_assert_int_eq(wg_cubin(ctx, &cubin, &len, &s), WG_ESPEC);
  ck_assert_ptr_null(cubin);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "arch: sm_52 is not supported by this NVRTC; "
                                               "supported: sm_"));
}
END_TEST

/* The validity matrix, counted: every combination the tables allow is
 * listed once and every listed spec validates. */
START_TEST(list_counts) {
  wg_spec *list;
  size_t n;
  ck_assert_int_eq(wg_spec_list(ctx, &list, &n, 0), WG_OK);
  size_t per_prim[WG_PRIMITIVE_COUNT] = {0};
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_eq(wg_spec_validate(ctx, &list[i]), WG_OK);
    ck_assert_int_ne(list[i].variant == WG_VARIANT_AUTO, wg_primitives[list[i].primitive].is_warp);
    per_prim[list[i].primitive]++;
  }
  /* reduce: sum/prod/min/max on 8 types and and/or/xor on 4 integer types
   * give 44 (type, op) pairs, the operators from argmin on 56 more (as the
   * array reductions count them below): 100 pairs; 4 shuffle/smem variants,
   * plus redux on i32/u32 for 6 ops each: (100 * 4 + 12) * 5 widths. Then
   * the vec layout again, but for smem (always lane: listed once). The
   * scans keep the 44 pairs. */
  ck_assert_uint_eq(per_prim[WG_REDUCE], (100 * 4 + 12) * 5 + (100 * 3 + 12) * 5);
  ck_assert_uint_eq(per_prim[WG_ALLREDUCE], per_prim[WG_REDUCE]);
  ck_assert_uint_eq(per_prim[WG_SCAN], 44 * 3 * 5 + 44 * 2 * 5);
  ck_assert_uint_eq(per_prim[WG_BROADCAST], 8 * 2 * 5 + 8 * 5);
  ck_assert_uint_eq(per_prim[WG_MATCH], 8 * 5 * 2);
  /* The array and row reductions add argmin, argmax, logsumexp and
   * count_nonzero on 8 types and mean, var, std and the three norms on the
   * 4 floating types: 44 + 32 + 24. */
  ck_assert_uint_eq(per_prim[WG_REDUCE_ARRAY], 100);
  ck_assert_uint_eq(per_prim[WG_REDUCE_ROWS], 100);
  /* The scans: the 44 (type, op) pairs of sum..xor, each once. */
  ck_assert_uint_eq(per_prim[WG_SCAN_ARRAY] + per_prim[WG_EXSCAN_ARRAY] +
                        per_prim[WG_SCAN_ROWS] + per_prim[WG_EXSCAN_ROWS], 4 * 44);
  wg_free(list);
  /* On sm_75 redux disappears. */
  ck_assert_int_eq(wg_spec_list(ctx, &list, &n, 75), WG_OK);
  for (size_t i = 0; i < n; i++) ck_assert_int_ne(list[i].variant, WG_VARIANT_REDUX);
  wg_free(list);
  ck_assert_int_eq(wg_spec_list(ctx, &list, &n, 51), WG_ESPEC);
}
END_TEST

START_TEST(auto_choices) {
  struct { const char *spec; wg_variant want; } cases[] = {
    /* redux only where a group spans the whole warp: width 32, lane layout */
    {"reduce i32 sum", WG_VARIANT_DOWN},
    {"reduce i32 sum layout=lane", WG_VARIANT_REDUX},
    {"allreduce u32 xor layout=lane", WG_VARIANT_REDUX},
    {"reduce u32 max width=16 layout=lane", WG_VARIANT_DOWN},
    {"reduce i32 sum width=16", WG_VARIANT_DOWN},
    {"allreduce u32 min width=8", WG_VARIANT_XOR},
    {"reduce i32 sum arch=sm_75", WG_VARIANT_DOWN},
    {"reduce i32 prod", WG_VARIANT_DOWN},
    {"allreduce u32 xor", WG_VARIANT_XOR},
    {"allreduce f32 sum", WG_VARIANT_XOR},
    {"reduce f64 max", WG_VARIANT_DOWN},
    {"scan f32 sum", WG_VARIANT_UP},
    {"broadcast f16", WG_VARIANT_IDX},
    {"match u64", WG_VARIANT_VOTE},
  };
  for (size_t i = 0; i < WG_COUNT_OF(cases); i++) {
    wg_spec s;
    ck_assert_int_eq(wg_spec_parse(ctx, &s, cases[i].spec), WG_OK);
    ck_assert_msg(wg_spec_resolve_variant(&s) == cases[i].want, "%s -> %s", cases[i].spec,
                  wg_variant_name(wg_spec_resolve_variant(&s)));
  }
}
END_TEST

START_TEST(names) {
  ck_assert_str_eq(wg_type_name(WG_BF16), "bf16");
  ck_assert_ptr_null(wg_type_name(WG_TYPE_COUNT));
  ck_assert_ptr_null(wg_primitive_name((wg_primitive)-1));
  ck_assert_str_eq(wg_operator_name(WG_OP_XOR), "xor");
  ck_assert_str_eq(wg_variant_name(WG_VARIANT_REDUX), "redux");
  ck_assert_uint_eq(wg_type_size(WG_F16), 2);
  ck_assert_uint_eq(wg_type_size(WG_U64), 8);
  ck_assert_str_eq(wg_version(), WG_VERSION_STRING);
  ck_assert_int_eq(wg_version_number(), WG_VERSION_NUMBER);
  ck_assert_str_eq(wg_strerror(WG_ESPEC), "invalid spec");
  ck_assert_str_eq(wg_strerror(12345), "unknown status");
  char name[128];
  wg_spec s;
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "broadcast f16 width=8 variant=smem lane=5"), WG_OK);
  wg_kernel_name(name, sizeof name, &s);
  ck_assert_str_eq(name, "wg_broadcast_f16_w8_smem_l5"); /* smem is always lane */
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce f32 sum width=16 variant=xor"), WG_OK);
  wg_kernel_name(name, sizeof name, &s);
  ck_assert_str_eq(name, "wg_reduce_f32_sum_w16_xor_vec");
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce f32 sum width=16 variant=xor layout=lane"),
                   WG_OK);
  wg_kernel_name(name, sizeof name, &s);
  ck_assert_str_eq(name, "wg_reduce_f32_sum_w16_xor");
  ck_assert_str_eq(wg_layout_name(WG_LAYOUT_LANE), "lane");
  ck_assert_ptr_null(wg_layout_name(WG_LAYOUT_COUNT));
  /* Lanes a group spans: 16 bytes a lane in the vec layout. */
  struct { const char *spec; int lanes; } spans[] = {
    {"reduce f16 sum variant=down", 4},          {"reduce f32 sum width=4 variant=down", 1},
    {"scan f64 sum width=16 variant=up", 8},     {"reduce bf16 sum width=8 variant=xor", 1},
    {"match i32 width=16 variant=vote", 16},     {"reduce f32 sum variant=smem", 32},
    {"reduce f32 sum variant=down layout=lane", 32},
  };
  for (size_t i = 0; i < WG_COUNT_OF(spans); i++) {
    ck_assert_int_eq(wg_spec_parse(ctx, &s, spans[i].spec), WG_OK);
    wg_spec c = wg_spec_concrete(&s, 0);
    ck_assert_msg(wg_spec_group_lanes(&c) == spans[i].lanes, "%s: %d lanes", spans[i].spec,
                  wg_spec_group_lanes(&c));
  }
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-rows u32 or cols=7"), WG_OK);
  wg_kernel_name(name, sizeof name, &s);
  ck_assert_str_eq(name, "wg_reduce_rows_u32_or_c7");
}
END_TEST

/* --- templates ------------------------------------------------------------ */

START_TEST(template_fill) {
  const wg_template_var vars[] = {{"a", "1"}, {"bb", "two"}};
  wg_buf b = {0};
  ck_assert_int_eq(wg_template_fill(ctx, &b, "t", "x${a}y${bb}z$ $a ${a}", vars, 2), WG_OK);
  ck_assert_str_eq(b.data, "x1ytwoz$ $a 1");
  wg_buf_free(&b);
  ck_assert_int_eq(wg_template_fill(ctx, &b, "mine.cu", "ok\n${a} ${nope}", vars, 2),
                   WG_ETEMPLATE);
  ck_assert_str_eq(wg_errmsg(ctx), "template 'mine.cu' line 2: unknown key '${nope}'");
  wg_buf_free(&b);
  ck_assert_int_eq(wg_template_fill(ctx, &b, "mine.cu", "${a", vars, 2), WG_ETEMPLATE);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "'${a' is not closed"));
  wg_buf_free(&b);
  ck_assert_int_eq(wg_template_fill(ctx, &b, "mine.cu", "${a b}", vars, 2), WG_ETEMPLATE);
  wg_buf_free(&b);
  char *text;
  ck_assert_int_eq(wg_template_load(ctx, &text, "no_such.cu"), WG_ETEMPLATE);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "no_such.cu"));
  ck_assert_int_eq(wg_template_load(ctx, &text, "../etc/passwd"), WG_ETEMPLATE);
  ck_assert_int_eq(wg_template_load(ctx, &text, "warp_kernel.cu"), WG_OK);
  ck_assert_ptr_nonnull(strstr(text, "${body}"));
  free(text);
}
END_TEST

/* WARPGEN_TEMPLATE_DIR replaces the built-in templates, and a bad template
 * there fails with its name rather than reaching NVRTC. */
START_TEST(template_dir_override) {
  char dir[] = "/tmp/wg-templates-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const char *src = getenv("WARPGEN_SOURCE_ROOT");
  char path[512], cmd[1200];
  snprintf(cmd, sizeof cmd, "cp %s/templates/* %s/", src ? src : "..", dir);
  ck_assert_int_eq(system(cmd), 0);
  snprintf(path, sizeof path, "%s/warp_ballot.cu", dir);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("    ${typo}\n", f);
  fclose(f);
  wg_options o = WG_OPTIONS_INIT;
  o.template_dir = dir;
  o.disk_cache = -1;
  wg_context *c2;
  ck_assert_int_eq(wg_context_create(&c2, &o), WG_OK);
  wg_spec s;
  char *out;
  ck_assert_int_eq(wg_spec_parse(c2, &s, "ballot i32 layout=lane"), WG_OK);
  ck_assert_int_eq(wg_source(c2, &out, &s), WG_ETEMPLATE);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(c2), "template 'warp_ballot.cu' line 1: unknown key '${typo}'"));
  ck_assert_int_eq(wg_spec_parse(c2, &s, "any i32 layout=lane"), WG_OK);
  ck_assert_int_eq(wg_source(c2, &out, &s), WG_OK);
  free(out);
  wg_context_destroy(c2);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* --- generated source ----------------------------------------------------- */

START_TEST(source_properties) {
  wg_spec *list;
  size_t n;
  ck_assert_int_eq(wg_spec_list(ctx, &list, &n, 90), WG_OK);
  for (size_t i = 0; i < n; i++) {
    if (!wg_primitives[list[i].primitive].is_warp) continue;
    char text[256], name[128], header[300];
    wg_spec_format(text, sizeof text, &list[i]);
    wg_kernel_name(name, sizeof name, &list[i]);
    char *src;
    ck_assert_msg(wg_source(ctx, &src, &list[i]) == WG_OK, "%s: %s", text, wg_errmsg(ctx));
    snprintf(header, sizeof header, "/*\n * %s\n", text);
    ck_assert_msg(!strncmp(src, header, strlen(header)), "%s: header comment", text);
    ck_assert_msg(strstr(src, "extern \"C\" __global__ void"), "%s: extern C", text);
    ck_assert_msg(strstr(src, name), "%s: kernel name %s", text, name);
    ck_assert_msg(strstr(src, "unsigned long long n"), "%s: 64-bit count", text);
    ck_assert_msg(!strstr(src, "${"), "%s: unfilled key", text);
    ck_assert_msg(!strstr(src, "#include"), "%s: needs no include path", text);
    if (list[i].layout == WG_LAYOUT_VEC)
      ck_assert_msg(strstr(src, "#define WG_LANES (WG_WIDTH / WG_SUB)") &&
                        strstr(src, "gmask = ((2u << (WG_LANES - 1u)) - 1u)"),
                    "%s: lanes and mask of the vec layout", text);
    else if (list[i].width == 32)
      ck_assert_msg(strstr(src, "gmask = 0xffffffffu"), "%s: full mask", text);
    else
      ck_assert_msg(strstr(src, "((1u << WG_WIDTH) - 1u) << (lane & ~(WG_WIDTH - 1u))"),
                    "%s: group mask", text);
    free(src);
  }
  wg_free(list);
}
END_TEST

/* An auto spec generates exactly the source of the variant it resolves
 * to, so both share one cache entry. */
START_TEST(auto_shares_source) {
  wg_spec a, b;
  ck_assert_int_eq(wg_spec_parse(ctx, &a, "reduce f32 sum width=8"), WG_OK);
  ck_assert_int_eq(wg_spec_parse(ctx, &b, "reduce f32 sum width=8 variant=down arch=sm_90"), WG_OK);
  char *sa, *sb;
  ck_assert_int_eq(wg_source(ctx, &sa, &a), WG_OK);
  ck_assert_int_eq(wg_source(ctx, &sb, &b), WG_OK);
  ck_assert_str_eq(sa, sb);
  free(sa);
  free(sb);
}
END_TEST

START_TEST(context_options) {
  wg_context *c = NULL;
  wg_options o = WG_OPTIONS_INIT;
  o.version = 7;
  ck_assert_int_eq(wg_context_create(&c, &o), WG_EINVAL);
  ck_assert_ptr_null(c);
  ck_assert_int_eq(wg_context_create(NULL, NULL), WG_EINVAL);
  wg_options_init(&o);
  o.device = -1;
  ck_assert_int_eq(wg_context_create(&c, &o), WG_EINVAL);
  ck_assert_int_eq(wg_context_create(&c, NULL), WG_OK);
  ck_assert_str_eq(wg_errmsg(c), "");
  wg_context_destroy(c);
  wg_context_destroy(NULL);
  wg_free(NULL);
  ck_assert_str_eq(wg_errmsg(NULL), "");
}
END_TEST


/* --- holes found by fuzzing (issue 10) ------------------------------------ */

/* snprintf's rule: a NULL buffer only with size 0, which measures. */
START_TEST(format_null_buffer) {
  wg_spec s = WG_SPEC_INIT;
  ck_assert_int_eq(wg_spec_format(NULL, 10, &s), WG_EINVAL);
  ck_assert_int_eq(wg_kernel_name(NULL, 10, &s), WG_EINVAL);
  int n = wg_spec_format(NULL, 0, &s);
  ck_assert_int_eq(n, (int)strlen("reduce f32 sum width=32 variant=auto"));
  n = wg_kernel_name(NULL, 0, &s);
  ck_assert_int_eq(n, (int)strlen("wg_reduce_f32_sum_w32_down_vec"));
  ck_assert_int_eq(wg_spec_format(NULL, 0, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_kernel_name(NULL, 0, NULL), WG_EINVAL);
}
END_TEST

/* A spec with every field in range but invalid as a whole has no text form
 * and no kernel name: WG_ESPEC, and the buffer is left alone. */
START_TEST(format_rejects_invalid_specs) {
  wg_spec bad[6];
  for (int i = 0; i < 6; i++) wg_spec_init(&bad[i]);
  bad[0].width = 0;
  bad[1].arch = -5;
  bad[2].primitive = WG_REDUCE_ROWS;
  bad[2].cols = -1;
  bad[3].lane = 3; /* reduce takes no lane */
  bad[4].primitive = WG_REDUCE_ARRAY;
  bad[4].width = 16; /* array reductions choose their own lanes */
  bad[5].op = WG_OP_NONE;
  for (int i = 0; i < 6; i++) {
    char buf[256] = "untouched";
    ck_assert_msg(wg_spec_format(buf, sizeof buf, &bad[i]) == WG_ESPEC, "format %d", i);
    ck_assert_str_eq(buf, "untouched");
    ck_assert_msg(wg_kernel_name(buf, sizeof buf, &bad[i]) == WG_ESPEC, "name %d", i);
    ck_assert_str_eq(buf, "untouched");
    ck_assert_int_eq(wg_spec_resolve_variant(&bad[i]), WG_VARIANT_AUTO);
  }
  /* Out-of-range enums too. */
  wg_spec s = WG_SPEC_INIT;
  s.op = (wg_operator)99;
  ck_assert_int_eq(wg_spec_format(NULL, 0, &s), WG_ESPEC);
}
END_TEST

/* Array and row reductions accept only auto; they resolve to the shuffle
 * their kernels use, and formatting keeps them parseable. */
START_TEST(resolve_array_and_rows) {
  const char *texts[] = {"reduce-array f32 sum", "reduce-rows i64 max cols=100",
                         "reduce-rows u32 xor"};
  for (size_t i = 0; i < WG_COUNT_OF(texts); i++) {
    wg_spec s;
    ck_assert_int_eq(wg_spec_parse(ctx, &s, texts[i]), WG_OK);
    ck_assert_int_eq(wg_spec_resolve_variant(&s), WG_VARIANT_DOWN);
  }
  ck_assert_int_eq(wg_spec_resolve_variant(NULL), WG_VARIANT_AUTO);
}
END_TEST

/* Row lengths whose byte count wraps 64 bits (2^62 f32, 2^61 f64 columns
 * are 0 bytes when multiplied out) make a long-row kernel, not a division
 * by zero in the packed-row shape (found by tests/fuzz/fuzz_spec.c). */
START_TEST(huge_cols_make_long_rows) {
  static const char *const texts[] = {
    "reduce-rows f32 argmax cols=4611686018427387904 arch=sm_90",
    "reduce-rows f64 sum cols=2305843009213693952 arch=sm_90",
    "reduce-rows f16 sum cols=9223372036854775807 arch=sm_90",
  };
  for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
    wg_spec s;
    ck_assert_int_eq(wg_spec_parse(ctx, &s, texts[k]), WG_OK);
    char *src = NULL;
    ck_assert_msg(wg_source(ctx, &src, &s) == WG_OK, "%s: %s", texts[k], wg_errmsg(ctx));
    ck_assert_msg(strstr(src, "#define WG_LONG_ROWS 1"), "%s: not the long-row shape", texts[k]);
    wg_free(src);
  }
}
END_TEST

START_TEST(output_shape_validates) {
  wg_spec s = WG_SPEC_INIT;
  uint64_t count = 7;
  size_t size = 7;
  ck_assert_int_eq(wg_output_shape(&count, &size, &s, 65), WG_OK);
  ck_assert_uint_eq(count, 3);
  ck_assert_uint_eq(size, 4);
  s.op = (wg_operator)99;
  ck_assert_int_eq(wg_output_shape(&count, &size, &s, 65), WG_ESPEC);
  wg_spec_init(&s);
  s.op = WG_OP_XOR; /* bitwise on f32 */
  ck_assert_int_eq(wg_output_shape(&count, &size, &s, 65), WG_ESPEC);
  wg_spec_init(&s);
  s.version = 1; /* the struct before `layout` */
  ck_assert_int_eq(wg_output_shape(&count, &size, &s, 65), WG_ESPEC);
  wg_spec_init(&s);
  s.arch = -5;
  ck_assert_int_eq(wg_output_shape(&count, &size, &s, 65), WG_ESPEC);
  wg_spec_init(&s);
  s.primitive = WG_BALLOT;
  s.op = WG_OP_NONE;
  s.width = 8;
  ck_assert_int_eq(wg_output_shape(&count, &size, &s, 17), WG_OK);
  ck_assert_uint_eq(count, 3);
  ck_assert_uint_eq(size, 4);
  wg_spec_init(&s);
  s.primitive = WG_REDUCE_ARRAY;
  ck_assert_int_eq(wg_output_shape(&count, &size, &s, 65), WG_EINVAL);
  ck_assert_int_eq(wg_output_shape(NULL, &size, &s, 65), WG_EINVAL);
  /* The operator primitives write the operator's output type (issue 9):
   * indices and counts i64, logsumexp of integers f32, a final='s type. */
  static const struct {
    const char *text;
    uint64_t count;
    size_t size;
    int type;
  } shapes[] = {
    {"reduce f16 argmax width=8", 9, 8, WG_I64},
    {"allreduce f32 count_nonzero", 65, 8, WG_I64},
    {"reduce i64 logsumexp width=4", 17, 4, WG_F32},
    {"allreduce bf16 var width=16", 65, 2, WG_BF16},
    {"scan i32 sum map=\"i64(x) * 2\"", 65, 8, WG_I64},
    {"reduce u32 combine=\"a + b\" identity=\"0\" final=\"f64(r) / f64(n)\" width=2", 33,
     8, WG_F64},
    {"exscan u64 combine=\"min(a, b)\" identity=\"18446744073709551615\"", 65, 8, WG_U64},
  };
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
    ck_assert_msg(wg_spec_parse(ctx, &s, shapes[k].text) == WG_OK, "%s: %s", shapes[k].text,
                  wg_errmsg(ctx));
    ck_assert_int_eq(wg_output_shape(&count, &size, &s, 65), WG_OK);
    ck_assert_msg(count == shapes[k].count && size == shapes[k].size,
                  "%s: %llu x %zu", shapes[k].text, (unsigned long long)count, size);
    ck_assert_int_eq(wg_reduce_spec_output_type(&s), shapes[k].type);
  }
  /* Parameters are a kernel argument only where a step reads them: the
   * _ex ABI for var/std and specs with expressions, the plain one else. */
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce f32 var"), WG_OK);
  ck_assert(wg_codegen_warp_takes_params(&s));
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce f32 argmax"), WG_OK);
  ck_assert(!wg_codegen_warp_takes_params(&s));
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce f32 sum"), WG_OK);
  ck_assert(!wg_codegen_warp_takes_params(&s));
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce f32 sum map=\"x * x\""), WG_OK);
  ck_assert(wg_codegen_warp_takes_params(&s));
}
END_TEST

/* No byte of user input reaches a message raw: control bytes (a terminal
 * escape here) come back as \xNN. */
START_TEST(messages_escape_input) {
  wg_spec s;
  const char *texts[] = {"reduce f32 sum \x1b[31mred", "reduce\x1b[2J f32 sum",
                         "reduce f32 sum width=\x07", "reduce f32 \xff"};
  for (size_t i = 0; i < WG_COUNT_OF(texts); i++) {
    ck_assert_int_eq(wg_spec_parse(ctx, &s, texts[i]), WG_ESPEC);
    const char *msg = wg_errmsg(ctx);
    for (const char *p = msg; *p; p++)
      ck_assert_msg((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f,
                    "raw byte 0x%02x in message %zu", (unsigned char)*p, i);
    ck_assert_ptr_nonnull(strstr(msg, "\\x"));
  }
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "byte 0xff at offset 11"));
  /* Tabs and newlines still separate words. */
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce\tf32\nsum"), WG_OK);
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce\tf32\nsum\textra"), WG_ESPEC);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "reduce\\x09f32\\x0asum"));

  char buf[16];
  ck_assert_str_eq(wg_escape(buf, sizeof buf, "a\x1b" "b", 3, false), "a\\x1bb");
  ck_assert_str_eq(wg_escape(buf, sizeof buf, "a\nb\tc", 5, true), "a\nb\tc");
  ck_assert_str_eq(wg_escape(buf, sizeof buf, "a\nb", 3, false), "a\\x0ab");
  /* Cut with "..." and never inside an escape. */
  ck_assert_str_eq(wg_escape(buf, sizeof buf, "0123456789abcdefgh", 18, false),
                   "0123456789ab...");
  ck_assert_str_eq(wg_escape(buf, sizeof buf, "0123456789\x01\x02", 12, false),
                   "0123456789...");
  ck_assert_str_eq(wg_escape(buf, sizeof buf, "ab\0c", 4, false), "ab\\x00c");
}
END_TEST

START_TEST(scan_numbers) {
  const char *p;
  uint64_t v;
  p = "18446744073709551615x";
  ck_assert(wg_scan_u64(&p, 10, &v) && v == UINT64_MAX && *p == 'x');
  p = "18446744073709551616";
  ck_assert(!wg_scan_u64(&p, 10, &v));
  ck_assert_str_eq(p, "18446744073709551616");
  p = "ffffFFFFffffffff";
  ck_assert(wg_scan_u64(&p, 16, &v) && v == UINT64_MAX && !*p);
  p = "10000000000000000";
  ck_assert(!wg_scan_u64(&p, 16, &v));
  p = " 1";
  ck_assert(!wg_scan_u64(&p, 10, &v));
  p = "-1";
  ck_assert(!wg_scan_u64(&p, 10, &v));
  p = "";
  ck_assert(!wg_scan_u64(&p, 10, &v));
}
END_TEST

/* A template folder of the built-in templates, for damaging one. */
static char *template_copy(void) {
  static char dir[64];
  snprintf(dir, sizeof dir, "/tmp/wg-templates-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const char *src = getenv("WARPGEN_SOURCE_ROOT");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cp %s/templates/* %s/", src ? src : "..", dir);
  ck_assert_int_eq(system(cmd), 0);
  return dir;
}

static void template_copy_remove(const char *dir) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* wg_source over a template folder: WG_ETEMPLATE whose message has all of
 * `needles`. An alarm turns a hang into a failure. */
static void expect_template_error(const char *dir, const char *needle1,
                                  const char *needle2) {
  wg_options o = WG_OPTIONS_INIT;
  o.template_dir = dir;
  o.disk_cache = -1;
  wg_context *c2;
  ck_assert_int_eq(wg_context_create(&c2, &o), WG_OK);
  wg_spec s = WG_SPEC_INIT;
  char *out = NULL;
  alarm(20);
  int rc = wg_source(c2, &out, &s);
  alarm(0);
  ck_assert_msg(rc == WG_ETEMPLATE, "rc %d: %s", rc, wg_errmsg(c2));
  ck_assert_ptr_null(out);
  ck_assert_msg(strstr(wg_errmsg(c2), needle1), "'%s' lacks '%s'", wg_errmsg(c2), needle1);
  ck_assert_msg(strstr(wg_errmsg(c2), needle2), "'%s' lacks '%s'", wg_errmsg(c2), needle2);
  wg_context_destroy(c2);
}

/* Only regular files are templates: /dev/zero behind a link would be read
 * forever and a FIFO would block forever. */
START_TEST(template_not_a_regular_file) {
  char *dir = template_copy();
  char path[256];
  snprintf(path, sizeof path, "%s/prelude.cuh", dir);
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(symlink("/dev/zero", path), 0);
  expect_template_error(dir, "prelude.cuh", "not a regular file");
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  expect_template_error(dir, "prelude.cuh", "not a regular file");
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  expect_template_error(dir, "prelude.cuh", "not a regular file");
  ck_assert_int_eq(rmdir(path), 0);
  /* Over the size cap: a sparse file costs no disk. */
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, (off_t)1 << 30), 0);
  close(fd);
  expect_template_error(dir, "prelude.cuh", "larger than");
  template_copy_remove(dir);
}
END_TEST

/* A NUL byte would cut the template short: an error naming file and
 * offset, never a shorter kernel. */
START_TEST(template_nul_byte) {
  char *dir = template_copy();
  char path[256];
  snprintf(path, sizeof path, "%s/warp_vec_kernel.cu", dir); /* the default spec's */
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  fwrite("// head\n\0tail ${body}\n", 1, 22, f);
  fclose(f);
  expect_template_error(dir, "warp_vec_kernel.cu", "NUL byte at offset 8");
  template_copy_remove(dir);
}
END_TEST

/* --- expression keys of reduce-array and reduce-rows --------------------- */

/* Formats s into a static buffer. */
static const char *formatted(const wg_spec *s) {
  static char text[1024];
  ck_assert_int_ge(wg_spec_format(text, sizeof text, s), 0);
  return text;
}

START_TEST(expr_round_trips) {
  static const char *const cases[][2] = {
    {"reduce-array f32 sum map=\"x*x\"", "reduce-array f32 sum map=\"x * x\""},
    {"reduce-array f32 sum map=\"((x))  *x\" arch=sm_90",
     "reduce-array f32 sum map=\"x * x\" arch=sm_90"},
    {"reduce-rows f16 max map=\"abs(x) + i\" cols=37",
     "reduce-rows f16 max map=\"abs(x) + i\" cols=37"},
    {"reduce-array i32 combine=\"a>b?a:b\" identity=\"-5\"",
     "reduce-array i32 combine=\"a > b ? a : b\" identity=\"-5\""},
    {"reduce-array f64 sum final=\"r/n + p0\" params=f64",
     "reduce-array f64 sum final=\"r / n + p0\" params=f64"},
    {"reduce-array f32 sum params=f32,i64 final=\"r * p0 + p1\"",
     "reduce-array f32 sum final=\"r * p0 + p1\" params=f32,i64"},
    {"reduce-array u32 argmax map=\"x % 7u32\"", "reduce-array u32 argmax map=\"x % 7u32\""},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    wg_spec s, again;
    ck_assert_msg(wg_spec_parse(ctx, &s, cases[c][0]) == WG_OK, "%s: %s", cases[c][0],
                  wg_errmsg(ctx));
    ck_assert_str_eq(formatted(&s), cases[c][1]);
    ck_assert_int_eq(wg_spec_parse(ctx, &again, formatted(&s)), WG_OK);
    ck_assert_str_eq(formatted(&again), cases[c][1]);
    /* Canonical text is interned: equal expressions, one pointer. */
    ck_assert_ptr_eq(s.map, again.map);
    ck_assert_ptr_eq(s.final, again.final);
  }
}
END_TEST

START_TEST(expr_quotes_and_escapes) {
  wg_spec s;
  /* A quoted value may hold spaces; \" and \\ are the only escapes. */
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-array f32 max map=\"x > 0.0 ? x : -x\""),
                   WG_OK);
  ck_assert_str_eq(s.map, "x > 0.0 ? x : -x");
  expect_rejected("reduce-array f32 sum map=\"x * x", "is not closed");
  expect_rejected("reduce-array f32 sum map=x*x", "double quotes");
  expect_rejected("reduce-array f32 sum map=\"x\\n\"", "backslash");
  expect_rejected("reduce-array f32 sum map=\"x \\\"\"", "map expression");
  expect_rejected("reduce-array f32 sum map=\"x +\"", "map expression: at");
  expect_rejected("reduce-array f32 sum map=\"x\" map=\"x\"", "given twice");
  /* A quote opens only as a key's value; words in messages are escaped. */
  expect_rejected("reduce-array f32 \"sum\tx\"", "unknown '\"sum'");
  expect_rejected("reduce-array f32 sum width=\"3\"", "only map, combine");
}
END_TEST

START_TEST(expr_scopes_and_rules) {
  expect_rejected("reduce-array f32 sum map=\"a\"", "map");
  expect_rejected("reduce-array f32 sum map=\"x * p0\"", "p0");
  expect_rejected("reduce-array f32 sum map=\"x + y\"", "y");
  expect_rejected("reduce-array f32 combine=\"a + b * p0\" identity=\"0\" params=f32",
                  "parameters are not supported there");
  expect_rejected("reduce-array f32 sum map=\"x + y\" inputs=f32,f32,f32,f32,f32",
                  "more than 4");
  expect_rejected("reduce-array f32 sum map=\"x\" inputs=f64,f32", "first input");
  expect_rejected("reduce-array f32 sum combine=\"a + b\" identity=\"0\"",
                  "replaces the operator");
  expect_rejected("reduce-array f32 combine=\"a + b\"", "come together");
  expect_rejected("reduce-array f32 combine=\"a + x\" identity=\"0\"", "combine");
  expect_rejected("reduce-array f32 var final=\"r\"", "composite");
  expect_rejected("reduce-array f32 var map=\"x * p0\" params=f32", "of its own");
  expect_rejected("broadcast f32 map=\"x * x\"", "'broadcast' takes no expressions");
  expect_rejected("ballot i32 params=f32", "takes no expressions, inputs or params");
  expect_rejected("scan i32 sum final=\"r + 1\"", "final= is for the reductions");
  expect_rejected("reduce i32 sum map=\"x * x\" variant=redux", "takes down, xor, idx");
  expect_rejected("reduce i32 combine=\"a + b\" identity=\"0\" variant=redux",
                  "not 'combine='");
  /* The warp reduce, allreduce and scans take expressions (issue 9). */
  static const char *const warp_ok[] = {
    "reduce f32 sum map=\"x * x\"",
    "allreduce f32 argmax map=\"abs(x - y)\" inputs=f32,f16 width=8",
    "scan i32 combine=\"max(a, b)\" identity=\"-7\" layout=lane",
    "reduce u32 combine=\"a + b\" identity=\"0\" final=\"f64(r) / f64(n)\" width=16",
    "exscan f32 sum map=\"x * p0\" params=f32 variant=idx",
  };
  for (size_t k = 0; k < sizeof warp_ok / sizeof *warp_ok; k++) {
    wg_spec w;
    ck_assert_msg(wg_spec_parse(ctx, &w, warp_ok[k]) == WG_OK, "%s: %s", warp_ok[k],
                  wg_errmsg(ctx));
  }
  expect_rejected("reduce-array i32 mean map=\"x * 2\"", "map's values");
  expect_rejected("reduce-array f32 sum params=f16 final=\"r\"", "p0 must be");
  expect_rejected("reduce-array f32 sum final=\"r\" params=f32,f32,f32,f32,f32,f32,f32,f32,f32",
                  "more than 8");
  /* The map's type is what the operator sees: mean of a float map of ints. */
  wg_spec s;
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-array i32 mean map=\"f32(x) * 0.5\""),
                   WG_OK);
  ck_assert_int_eq(wg_spec_out_type(&s), WG_F32);
  ck_assert_int_eq(wg_spec_parse(ctx, &s, "reduce-array i32 sum final=\"f64(r) / n\""),
                   WG_OK);
  ck_assert_int_eq(wg_spec_out_type(&s), WG_F64);
}
END_TEST

/* The facts of a spec are remembered per context under the spec as asked,
 * its texts by content: a caller that rewrites its buffer between calls
 * gets the facts of the new text, and an invalid spec is never remembered. */
START_TEST(expr_facts_memo) {
  char map[32] = "x*x";
  wg_spec s;
  wg_spec_init(&s);
  s.primitive = WG_REDUCE_ARRAY;
  s.map = map;
  wg_spec_facts f;
  for (int round = 0; round < 2; round++) { /* worked out, then looked up */
    ck_assert_int_eq(wg_spec_facts_get(ctx, &s, &f), WG_OK);
    ck_assert_str_eq(f.canonical.map, "x * x");
    ck_assert(!f.elementwise);
    ck_assert_int_eq(f.out_type, WG_F32);
    ck_assert_uint_eq(f.hash, wg_spec_hash(&f.canonical));
  }
  strcpy(map, "f64(x) * n"); /* same pointer, other text */
  ck_assert_int_eq(wg_spec_facts_get(ctx, &s, &f), WG_OK);
  ck_assert_str_eq(f.canonical.map, "f64(x) * n");
  ck_assert(f.elementwise);
  ck_assert_int_eq(f.out_type, WG_F64);
  strcpy(map, "x * y"); /* y is not an input: rejected, every time */
  for (int round = 0; round < 2; round++)
    ck_assert_int_eq(wg_spec_facts_get(ctx, &s, &f), WG_ESPEC);
  s.ninputs = 2;
  s.inputs[1] = WG_F64;
  ck_assert_int_eq(wg_spec_facts_get(ctx, &s, &f), WG_OK);
  ck_assert(f.elementwise);
  ck_assert_int_eq(f.out_type, WG_F64);
  /* Equal specs hash equal whoever owns the text; one field apart differ. */
  wg_spec t = s;
  t.map = "x * y";
  ck_assert(wg_spec_same(&s, &t));
  ck_assert_uint_eq(wg_spec_hash(&s), wg_spec_hash(&t));
  t.inputs[1] = WG_F32;
  ck_assert(!wg_spec_same(&s, &t));
  t = s;
  t.final = t.map, t.map = NULL; /* the same text under another key */
  ck_assert(!wg_spec_same(&s, &t));
  ck_assert_uint_ne(wg_spec_hash(&s), wg_spec_hash(&t));
}
END_TEST

START_TEST(expr_source_from_tree) {
  /* A C caller's spec points at its own text; the source holds the tree's
   * rendering, never the typed text, and one kernel name per expression. */
  char typed[] = "((x))*  x";
  wg_spec s = WG_SPEC_INIT;
  s.primitive = WG_REDUCE_ARRAY;
  s.map = typed;
  char *src = NULL;
  ck_assert_int_eq(wg_source(ctx, &src, &s), WG_OK);
  ck_assert_ptr_nonnull(strstr(src, "return (float)(wg_x * wg_x);"));
  ck_assert_ptr_null(strstr(src, typed));
  ck_assert_ptr_nonnull(strstr(src, "map=\"x * x\""));
  wg_free(src);
  char a[128], b[128], plain[128];
  wg_kernel_name(a, sizeof a, &s);
  s.map = "x * x";
  wg_kernel_name(b, sizeof b, &s);
  ck_assert_str_eq(a, b);
  s.map = "x * x + 1.0";
  wg_kernel_name(b, sizeof b, &s);
  ck_assert_str_ne(a, b);
  s.map = NULL;
  wg_kernel_name(plain, sizeof plain, &s);
  ck_assert_str_eq(plain, "wg_reduce_array_f32_sum");
  /* Parameters reach the final step from the kernel's params. */
  s.final = "r * p0";
  s.nparams = 1;
  s.params[0] = WG_F64;
  ck_assert_int_eq(wg_source(ctx, &src, &s), WG_OK);
  ck_assert_ptr_nonnull(strstr(src, "const double wg_p0 = wg_pp.p[0].f64;"));
  ck_assert_ptr_nonnull(strstr(src, "wg_fold16")); /* the vector kernel */
  wg_free(src);
  /* Several inputs, n and parameters in the map: the element kernel, each
   * input loaded in its own type at the same offset. */
  wg_spec e;
  ck_assert_int_eq(wg_spec_parse(ctx, &e, "reduce-rows f32 max map=\"abs(x - y) * p0 + n\" "
                                 "inputs=f32,f16 params=f32"), WG_OK);
  ck_assert_int_eq(wg_source(ctx, &src, &e), WG_OK);
  ck_assert_ptr_nonnull(strstr(src, "const unsigned short *y;"));
  ck_assert_ptr_nonnull(strstr(src, "wg_load_y(wg_in.y[wg_at])"));
  ck_assert_ptr_nonnull(strstr(src, "const float wg_p0 = wg_pp.p[0].f32;"));
  ck_assert_ptr_nonnull(strstr(src, "c += 32")); /* a warp per row */
  wg_free(src);
}
END_TEST

int main(void) {
  Suite *s = suite_create("unit");
  TCase *spec = tcase_create("spec");
  tcase_add_checked_fixture(spec, setup, teardown);
  tcase_add_test(spec, parse_example);
  tcase_add_test(spec, expr_round_trips);
  tcase_add_test(spec, expr_quotes_and_escapes);
  tcase_add_test(spec, expr_scopes_and_rules);
  tcase_add_test(spec, expr_facts_memo);
  tcase_add_test(spec, expr_source_from_tree);
  tcase_add_test(spec, parse_defaults_and_spacing);
  tcase_add_loop_test(spec, round_trip_every_listed_spec, 0, 2);
  tcase_add_test(spec, rejects_each_field);
  tcase_add_test(spec, validate_struct_fields);
  tcase_add_test(spec, huge_cols_make_long_rows);
  tcase_add_test(spec, arch_checked_at_compile);
  tcase_add_test(spec, operator_model);
  tcase_add_test(spec, list_counts);
  tcase_add_test(spec, auto_choices);
  tcase_add_test(spec, names);
  tcase_add_test(spec, context_options);
  tcase_add_test(spec, format_null_buffer);
  tcase_add_test(spec, format_rejects_invalid_specs);
  tcase_add_test(spec, resolve_array_and_rows);
  tcase_add_test(spec, output_shape_validates);
  tcase_add_test(spec, messages_escape_input);
  tcase_add_test(spec, scan_numbers);
  suite_add_tcase(s, spec);
  TCase *tmpl = tcase_create("templates");
  tcase_add_checked_fixture(tmpl, setup, teardown);
  tcase_add_test(tmpl, template_fill);
  tcase_add_test(tmpl, template_dir_override);
  tcase_add_test(tmpl, source_properties);
  tcase_add_test(tmpl, auto_shares_source);
  tcase_add_test(tmpl, template_not_a_regular_file);
  tcase_add_test(tmpl, template_nul_byte);
  tcase_set_timeout(tmpl, 300);
  suite_add_tcase(s, tmpl);
  return wg_test_run_suite(s);
}
