/*
 * test_gpu.c - the `gpu` suite: every valid warp-primitive spec run on the
 * device and checked, output by output, against the CPU oracle (tests/oracle.h), at
 * sizes around every boundary (0, 1, width-1, width+1, 1000, 2^20+7) and
 * past 2^31 elements; `auto` specs; and the errors a caller can make.
 *
 * Without a driver or a device it prints why and exits 77, Meson's code for
 * a skipped test. CUDA is only ever initialised inside the processes Check
 * forks for each test (the probe runs in a child of its own), since a
 * forked child cannot use its parent's CUDA state.
 *
 * Every launch writes into an output poisoned beforehand (a NaN for float
 * outputs) with a poisoned guard zone after it, so unwritten outputs and
 * writes past the end are both caught. Inputs are fresh random data each
 * run: the base seed is printed, and WARPGEN_TEST_SEED replays it.
 *
 * Environment: WARPGEN_GPU_LARGE=0 skips the 2^31+33-element test (it
 * needs about 17 GB of device memory and 26 GB of host memory);
 * WARPGEN_GPU_LARGE=ops runs only its launches of the operators from
 * argmin on (argmax's global indices).
 * WARPGEN_GPU_ALL=1 runs every listed spec of the operators from argmin on
 * (by default one width each, see in_sample); WARPGEN_GPU_FILTER=REGEX
 * (POSIX extended) only the listed specs whose text matches (a quick run:
 * tests/gpu_warpacc.sh).
 */
#include "driver.h"
#include "internal.h"
#include "support.h"
#include "warp_cases.h"

#include <check.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD_BYTES 256

/* Counts summed over the tests of this run, each test being a forked
 * process: they append a line to this file and main() adds them up. */
static char summary_path[512];

static void add_summary(uint64_t specs, uint64_t launches, uint64_t checks,
                        double seconds) {
  FILE *f = fopen(summary_path, "a");
  if (!f)
    return;
  fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %.3f\n", specs, launches,
          checks, seconds);
  fclose(f);
}

#define OK WG_TEST_OK

/* Host and device buffers big enough for the largest run of a test. */
typedef struct buffers {
  void *host_in, *host_out;
  uint64_t dev_in, dev_out;
  size_t in_cap, out_cap; /* bytes, without the guard */
} buffers;

static void buffers_make(wg_context *ctx, buffers *b, size_t in_cap,
                         size_t out_cap) {
  memset(b, 0, sizeof *b);
  b->in_cap = in_cap;
  b->out_cap = out_cap;
  b->host_in = malloc(in_cap);
  b->host_out = malloc(out_cap + GUARD_BYTES);
  ck_assert_msg(b->host_in && b->host_out, "out of host memory");
  OK(ctx, wg_mem_alloc(ctx, &b->dev_in, in_cap));
  OK(ctx, wg_mem_alloc(ctx, &b->dev_out, out_cap + GUARD_BYTES));
}

static void buffers_free(wg_context *ctx, buffers *b) {
  wg_mem_free(ctx, b->dev_in);
  wg_mem_free(ctx, b->dev_out);
  free(b->host_in);
  free(b->host_out);
}

/* The launch half of a check: poison, launch over the input already on the
 * device at dev_in + in_shift bytes, with the outputs at dev_out +
 * out_shift (a shift off 16 bytes takes the vec layout's element-by-element
 * path), copy back the outputs and the guard. Returns the output count. */
static uint64_t launch_poisoned(wg_context *ctx, const wg_kernel *k,
                                const wg_spec *spec, buffers *b, uint64_t n,
                                size_t in_shift, size_t out_shift,
                                size_t *out_bytes) {
  uint64_t count = 0;
  size_t size = 0;
  ck_assert_int_eq(wg_output_shape(&count, &size, spec, n), WG_OK);
  *out_bytes = (size_t)(count * size);
  ck_assert(*out_bytes + out_shift <= b->out_cap);
  OK(ctx, wg_memset_d8(ctx, b->dev_out + out_shift, wg_oracle_poison_byte(spec),
                       *out_bytes + GUARD_BYTES, NULL));
  OK(ctx, wg_warp_launch(ctx, k, b->dev_in + in_shift, b->dev_out + out_shift, n, NULL,
                         NULL));
  OK(ctx, wg_stream_sync(ctx, NULL));
  OK(ctx, wg_memcpy_dtoh(ctx, b->host_out, b->dev_out + out_shift,
                         *out_bytes + GUARD_BYTES, NULL));
  return count;
}

/* Checks outputs and guard; returns false (with a message in `failure`)
 * on any difference. */
static bool verify(const wg_spec *spec, const buffers *b, uint64_t n,
                   uint64_t count, size_t out_bytes, uint64_t *checks,
                   char *failure, size_t failure_size) {
  wg_oracle_report report;
  wg_oracle_report_init(&report);
  wg_test_check(&report, spec, b->host_in, n, b->host_out);
  *checks += report.checked;
  unsigned char poison = wg_oracle_poison_byte(spec);
  const unsigned char *guard = (const unsigned char *)b->host_out + out_bytes;
  size_t bad_guard = GUARD_BYTES;
  for (size_t i = 0; i < GUARD_BYTES; i++)
    if (guard[i] != poison) {
      bad_guard = i;
      break;
    }
  if (report.mismatches == 0 && report.checked == count &&
      bad_guard == GUARD_BYTES)
    return true;
  if (report.mismatches)
    snprintf(failure, failure_size, "%" PRIu64 " of %" PRIu64
             " outputs wrong; first %s", report.mismatches, report.checked,
             report.first);
  else if (report.checked != count)
    snprintf(failure, failure_size, "checked %" PRIu64 " of %" PRIu64
             " outputs", report.checked, count);
  else
    snprintf(failure, failure_size, "wrote past the last output (byte %zu of "
             "the guard)", bad_guard);
  return false;
}

/* A different seed for each (spec, size) of a run, all from the base. */
static uint64_t seed_for(size_t spec_index, uint64_t n) {
  return wg_test_seed() ^ (spec_index * 0x9e3779b97f4a7c15ull) ^
         (n * 0xc2b2ae3d27d4eb4full);
}

/* --- every spec at every boundary size ------------------------------------ */

/* Which listed specs a run tests: every spec of sum..xor, and of the
 * operators from argmin on (2280 more specs of reduce and allreduce) one
 * width per (type, operator, variant, layout), drawn from the run's seed:
 * every run covers every operator, type, variant and layout, and over runs
 * every width, in a fifth of the time. WARPGEN_GPU_ALL=1: every spec. */
static bool in_sample(const wg_spec *s) {
  const char *all = getenv("WARPGEN_GPU_ALL");
  if ((all && !strcmp(all, "1")) || s->op <= WG_OP_XOR) return true;
  const uint64_t key = (((uint64_t)s->type * WG_OPERATOR_COUNT + s->op) * WG_VARIANT_COUNT +
                        s->variant) * WG_LAYOUT_COUNT + s->layout;
  int w = 0; /* width 2, 4, ..., 32 as 0..4 */
  while ((2 << w) < s->width) w++;
  return wg_oracle_random(wg_test_seed(), 0x5a3b1e, key) % 5 == (uint64_t)w;
}

START_TEST(every_spec) {
  const wg_primitive primitive = (wg_primitive)_i;
  wg_context *ctx = wg_test_context();
  wg_device_info info;
  OK(ctx, wg_device_get_info(ctx, &info));
  wg_spec *all = NULL, *specs = NULL;
  size_t all_count = 0, count = 0;
  OK(ctx, wg_spec_list(ctx, &all, &all_count, info.arch));
  specs = malloc((all_count + 1) * sizeof *specs);
  ck_assert_ptr_nonnull(specs);
  size_t listed = 0;
  const char *filter_text = getenv("WARPGEN_GPU_FILTER");
  regex_t filter;
  const bool filtered = filter_text && *filter_text;
  if (filtered)
    ck_assert_msg(regcomp(&filter, filter_text, REG_EXTENDED | REG_NOSUB) == 0,
                  "WARPGEN_GPU_FILTER is not a regular expression");
  for (size_t s = 0; s < all_count; s++)
    if (all[s].primitive == primitive) {
      char text[256];
      wg_spec_format(text, sizeof text, &all[s]);
      listed++;
      if (in_sample(&all[s]) && (!filtered || regexec(&filter, text, 0, NULL, 0) == 0))
        specs[count++] = all[s];
    }
  if (filtered) regfree(&filter);
  wg_free(all);
  /* NVRTC on every core first; the loop below then only loads modules. */
  double compile_start = wg_test_now();
  wg_test_precompile(specs, count);
  double compile_seconds = wg_test_now() - compile_start;

  const uint64_t big = (UINT64_C(1) << 20) + 7;
  buffers b;
  buffers_make(ctx, &b, big * 8, big * 8);
  double start = wg_test_now();
  uint64_t tested = 0, launches = 0, checks = 0, failures = 0;
  char first_failure[1200] = "";
  for (size_t s = 0; s < count; s++) {
    const wg_spec *spec = &specs[s];
    tested++;
    char text[256];
    wg_spec_format(text, sizeof text, spec);
    wg_kernel *k = NULL;
    OK(ctx, wg_kernel_get(ctx, &k, spec));
    const uint64_t w = (uint64_t)spec->width;
    /* The last run: both pointers one element off their 16-byte
     * alignment, over enough elements for whole trips of the vec layout. */
    const uint64_t sizes[] = {0, 1, w - 1, w + 1, 1000, big, big - 8};
    for (size_t z = 0; z < WG_COUNT_OF(sizes); z++) {
      uint64_t n = sizes[z], seed = seed_for(s, n);
      const bool shifted = z == WG_COUNT_OF(sizes) - 1;
      uint64_t out_count = 0;
      size_t out_size = 0;
      wg_output_shape(&out_count, &out_size, spec, 1);
      const size_t in_shift = shifted ? wg_type_size(spec->type) : 0;
      const size_t out_shift = shifted ? out_size : 0;
      size_t in_bytes = (size_t)n * wg_type_size(spec->type);
      wg_test_fill(spec, b.host_in, n, seed);
      OK(ctx, wg_memcpy_htod(ctx, b.dev_in + in_shift, b.host_in, in_bytes, NULL));
      size_t out_bytes = 0;
      uint64_t outputs =
          launch_poisoned(ctx, k, spec, &b, n, in_shift, out_shift, &out_bytes);
      launches++;
      char why[640];
      if (!verify(spec, &b, n, outputs, out_bytes, &checks, why, sizeof why)) {
        if (!failures++)
          snprintf(first_failure, sizeof first_failure,
                   "%s, n=%" PRIu64 ", seed 0x%016" PRIx64 ": %s", text, n,
                   seed, why);
        fprintf(stderr, "FAIL %s n=%" PRIu64 " seed=0x%016" PRIx64 ": %s\n",
                text, n, seed, why);
      }
    }
  }
  double seconds = wg_test_now() - start;
  printf("gpu: %-9s %4" PRIu64 " of %4zu specs, %5" PRIu64 " launches, %11" PRIu64
         " outputs checked, %6.1f s (compiling %.1f s), base seed 0x%016" PRIx64
         "\n",
         wg_primitive_name(primitive), tested, listed, launches, checks, seconds,
         compile_seconds, wg_test_seed());
  add_summary(tested, launches, checks, seconds);
  buffers_free(ctx, &b);
  free(specs);
  wg_context_destroy(ctx);
  ck_assert_msg(tested > 0 || filtered, "no specs listed for %s",
                wg_primitive_name(primitive));
  ck_assert_msg(failures == 0,
                "%" PRIu64 " of %" PRIu64 " runs failed (base seed "
                "0x%016" PRIx64 ", WARPGEN_TEST_SEED replays); first: %s",
                failures, launches, wg_test_seed(), first_failure);
}
END_TEST

/* --- past 2^31 elements --------------------------------------------------- */

/* One i32 input of 2^31 + 33 elements serves every primitive but match,
 * which gets an input with repeated values. Reduce, with its small output,
 * runs in every variant. */
START_TEST(past_2_31) {
  const char *large = getenv("WARPGEN_GPU_LARGE");
  if (large && !strcmp(large, "0")) {
    printf("gpu: past 2^31: skipped (WARPGEN_GPU_LARGE=0)\n");
    return;
  }
  const uint64_t n = (UINT64_C(1) << 31) + 33;
  wg_context *ctx = wg_test_context();
  buffers b;
  buffers_make(ctx, &b, (size_t)n * 4, (size_t)n * 4);
  static const struct {
    wg_primitive primitive;
    wg_variant variant;
    wg_operator op; /* WG_OP_NONE: sum where the primitive takes one */
  } runs[] = {
      {WG_REDUCE, WG_VARIANT_XOR, WG_OP_ARGMAX}, /* global indices past 2^31 */
      {WG_BALLOT, WG_VARIANT_VOTE, WG_OP_NONE},     {WG_REDUCE, WG_VARIANT_DOWN, WG_OP_NONE},
      {WG_REDUCE, WG_VARIANT_XOR, WG_OP_NONE},      {WG_REDUCE, WG_VARIANT_IDX, WG_OP_NONE},
      {WG_REDUCE, WG_VARIANT_REDUX, WG_OP_NONE},    {WG_REDUCE, WG_VARIANT_SMEM, WG_OP_NONE},
      {WG_ALLREDUCE, WG_VARIANT_AUTO, WG_OP_NONE},  {WG_SCAN, WG_VARIANT_AUTO, WG_OP_NONE},
      {WG_EXSCAN, WG_VARIANT_AUTO, WG_OP_NONE},     {WG_BROADCAST, WG_VARIANT_AUTO, WG_OP_NONE},
      {WG_ANY, WG_VARIANT_VOTE, WG_OP_NONE},        {WG_ALL, WG_VARIANT_VOTE, WG_OP_NONE},
      {WG_MATCH, WG_VARIANT_VOTE, WG_OP_NONE},
  };
  double start = wg_test_now();
  uint64_t launches = 0, checks = 0, failures = 0;
  char first_failure[1200] = "";
  wg_spec input_spec = WG_SPEC_INIT;
  const bool ops_only = large && !strcmp(large, "ops");
  for (size_t r = 0; r < WG_COUNT_OF(runs); r++) {
    if (ops_only && !runs[r].op) continue;
    wg_spec spec = WG_SPEC_INIT;
    spec.primitive = runs[r].primitive;
    spec.type = spec.primitive == WG_MATCH || spec.primitive == WG_BALLOT
                    ? WG_U32
                    : WG_I32;
    spec.op = runs[r].op ? runs[r].op
              : wg_primitives[spec.primitive].takes_operator ? WG_OP_SUM : WG_OP_NONE;
    spec.variant = runs[r].variant;
    spec.lane = spec.primitive == WG_BROADCAST ? 7 : 0;
    uint64_t seed = seed_for(1000 + r, n);
    /* The input is made once for the votes' mix of zeros, and again for
     * match's repeated values; the same bits serve i32 and u32. */
    if (r == 0 || spec.primitive == WG_MATCH || runs[r].op || runs[r - 1].op) {
      input_spec = spec;
      wg_test_fill(&spec, b.host_in, n, seed);
      OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in, (size_t)n * 4, NULL));
    }
    char text[256];
    wg_spec_format(text, sizeof text, &spec);
    wg_kernel *k = NULL;
    OK(ctx, wg_kernel_get(ctx, &k, &spec));
    size_t out_bytes = 0;
    double t0 = wg_test_now();
    uint64_t outputs = launch_poisoned(ctx, k, &spec, &b, n, 0, 0, &out_bytes);
    launches++;
    char why[640];
    bool ok = verify(&spec, &b, n, outputs, out_bytes, &checks, why,
                     sizeof why);
    printf("gpu: past 2^31: %-40s n=%" PRIu64 " %s (%.1f s)\n", text, n,
           ok ? "ok" : "FAIL", wg_test_now() - t0);
    if (!ok && !failures++)
      snprintf(first_failure, sizeof first_failure, "%s: %s", text, why);
  }
  (void)input_spec;
  double seconds = wg_test_now() - start;
  printf("gpu: past 2^31: %" PRIu64 " launches, %" PRIu64
         " outputs checked, %.1f s\n", launches, checks, seconds);
  add_summary(0, launches, checks, seconds);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
  ck_assert_msg(failures == 0, "%" PRIu64 " failed (base seed 0x%016" PRIx64
                "); first: %s", failures, wg_test_seed(), first_failure);
}
END_TEST

/* --- auto specs through wg_warp -------------------------------------------- */

START_TEST(auto_specs) {
  static const char *const texts[] = {
      "reduce f32 sum",        "reduce i32 max width=8",
      "allreduce u32 xor width=16", "allreduce f64 prod width=4",
      "scan i64 sum width=32", "exscan bf16 max width=16",
      "broadcast f16 width=8 lane=5", "ballot f32 width=32",
      "match u64 width=16",    "reduce f16 sum width=32",
  };
  wg_context *ctx = wg_test_context();
  const uint64_t n = (UINT64_C(1) << 20) + 7;
  buffers b;
  buffers_make(ctx, &b, n * 8, n * 8);
  uint64_t checks = 0;
  for (size_t i = 0; i < WG_COUNT_OF(texts); i++) {
    wg_spec spec;
    OK(ctx, wg_spec_parse(ctx, &spec, texts[i]));
    ck_assert_int_eq(spec.variant, WG_VARIANT_AUTO);
    uint64_t seed = seed_for(2000 + i, n);
    wg_test_fill(&spec, b.host_in, n, seed);
    OK(ctx, wg_memcpy_htod(ctx, b.dev_in, b.host_in,
                           (size_t)n * wg_type_size(spec.type), NULL));
    uint64_t count = 0;
    size_t size = 0;
    ck_assert_int_eq(wg_output_shape(&count, &size, &spec, n), WG_OK);
    OK(ctx, wg_memset_d8(ctx, b.dev_out, wg_oracle_poison_byte(&spec),
                         (size_t)(count * size) + GUARD_BYTES, NULL));
    OK(ctx, wg_warp(ctx, &spec, b.dev_in, b.dev_out, n, NULL));
    OK(ctx, wg_memcpy_dtoh(ctx, b.host_out, b.dev_out,
                           (size_t)(count * size) + GUARD_BYTES, NULL));
    char why[640];
    ck_assert_msg(verify(&spec, &b, n, count, (size_t)(count * size), &checks,
                         why, sizeof why),
                  "%s (auto = %s), seed 0x%016" PRIx64 ": %s", texts[i],
                  wg_variant_name(wg_spec_resolve_variant(&spec)), seed, why);
  }
  printf("gpu: auto: %zu specs, %" PRIu64 " outputs checked\n",
         WG_COUNT_OF(texts), checks);
  add_summary(WG_COUNT_OF(texts), WG_COUNT_OF(texts), checks, 0);
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* --- expressions, inputs and parameters (wg_warp_launch_ex) ---------------- */

START_TEST(expressions_inputs_params) {
  wg_context *ctx = wg_test_context();
  const uint64_t big = (UINT64_C(1) << 20) + 7;
  buffers b;
  buffers_make(ctx, &b, big * 8, big * 8);
  void *host_more[WG_MAX_INPUTS] = {b.host_in};
  uint64_t dev_more[WG_MAX_INPUTS] = {b.dev_in};
  for (int k = 1; k < WG_MAX_INPUTS; k++) {
    host_more[k] = malloc(big * 8);
    ck_assert_ptr_nonnull(host_more[k]);
    OK(ctx, wg_mem_alloc(ctx, &dev_more[k], big * 8));
  }
  uint64_t launches = 0, checks = 0;
  for (size_t c = 0; c < WG_COUNT_OF(expr_cases); c++) {
    wg_spec spec;
    OK(ctx, wg_spec_parse(ctx, &spec, expr_cases[c].text));
    wg_kernel *k = NULL;
    OK(ctx, wg_kernel_get(ctx, &k, &spec));
    const uint64_t w = (uint64_t)spec.width;
    const uint64_t sizes[] = {1, w - 1, w + 1, 1000, big, big - 8};
    const int ninputs = spec.ninputs > 1 ? spec.ninputs : 1;
    for (size_t z = 0; z < WG_COUNT_OF(sizes); z++) {
      const uint64_t n = sizes[z];
      const bool shifted = z == WG_COUNT_OF(sizes) - 1;
      uint64_t count = 0;
      size_t size = 0;
      ck_assert_int_eq(wg_output_shape(&count, &size, &spec, n), WG_OK);
      const size_t out_shift = shifted ? size : 0, in_shift = shifted ? wg_type_size(spec.type) : 0;
      uint64_t ins[WG_MAX_INPUTS];
      const void *host_ins[WG_MAX_INPUTS];
      for (int q = 0; q < ninputs; q++) {
        const wg_type t = q ? spec.inputs[q] : spec.type;
        const uint64_t seed = seed_for(3000 + c * 8 + (size_t)q, n);
        if (q == 0) wg_test_fill(&spec, host_more[0], n, seed);
        else wg_oracle_fill(t, WG_OP_SUM, host_more[q], n, seed);
        ins[q] = dev_more[q] + (q ? 0 : in_shift);
        host_ins[q] = host_more[q];
        OK(ctx, wg_memcpy_htod(ctx, ins[q], host_more[q], (size_t)n * wg_type_size(t), NULL));
      }
      const size_t out_bytes = (size_t)(count * size);
      OK(ctx, wg_memset_d8(ctx, b.dev_out + out_shift, wg_oracle_poison_byte(&spec),
                           out_bytes + GUARD_BYTES, NULL));
      OK(ctx, wg_warp_launch_ex(ctx, k, ins, (size_t)ninputs, n, expr_cases[c].params,
                                expr_cases[c].nparams, b.dev_out + out_shift, NULL, NULL));
      OK(ctx, wg_stream_sync(ctx, NULL));
      OK(ctx, wg_memcpy_dtoh(ctx, b.host_out, b.dev_out + out_shift, out_bytes + GUARD_BYTES,
                             NULL));
      launches++;
      wg_oracle_report report;
      wg_oracle_report_init(&report);
      wg_oracle_warp_check_ex(&report, &spec, host_ins, n, expr_cases[c].params,
                              expr_cases[c].nparams, b.host_out, 0,
                              wg_oracle_group_count(&spec, n));
      checks += report.checked;
      const unsigned char poison = wg_oracle_poison_byte(&spec);
      for (size_t g = 0; g < GUARD_BYTES; g++)
        ck_assert_msg(((unsigned char *)b.host_out)[out_bytes + g] == poison,
                      "%s n=%" PRIu64 ": wrote past the last output", expr_cases[c].text, n);
      ck_assert_msg(report.mismatches == 0 && report.checked == count,
                    "%s n=%" PRIu64 " (base seed 0x%016" PRIx64 "): %" PRIu64 " of %" PRIu64
                    " wrong, %" PRIu64 " of %" PRIu64 " checked; first %s", expr_cases[c].text,
                    n, wg_test_seed(), report.mismatches, report.checked, report.checked,
                    count, report.first);
    }
  }
  /* Counts that do not match the spec are errors, not reads past an array. */
  wg_spec two;
  OK(ctx, wg_spec_parse(ctx, &two, expr_cases[0].text));
  ck_assert_int_eq(wg_warp_ex(ctx, &two, dev_more, 1, 64, expr_cases[0].params, 1,
                              b.dev_out, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_warp_ex(ctx, &two, dev_more, 2, 64, NULL, 0, b.dev_out, NULL),
                   WG_EINVAL);
  ck_assert_int_eq(wg_warp(ctx, &two, b.dev_in, b.dev_out, 64, NULL), WG_EINVAL);
  printf("gpu: expressions: %zu specs, %" PRIu64 " launches, %" PRIu64 " outputs checked\n",
         WG_COUNT_OF(expr_cases), launches, checks);
  add_summary(WG_COUNT_OF(expr_cases), launches, checks, 0);
  for (int k = 1; k < WG_MAX_INPUTS; k++) {
    free(host_more[k]);
    wg_mem_free(ctx, dev_more[k]);
  }
  buffers_free(ctx, &b);
  wg_context_destroy(ctx);
}
END_TEST

/* --- errors ---------------------------------------------------------------- */

START_TEST(bad_pointers_and_counts) {
  wg_context *ctx = wg_test_context();
  wg_spec spec = WG_SPEC_INIT; /* reduce f32 sum */
  wg_kernel *k = NULL;
  OK(ctx, wg_kernel_get(ctx, &k, &spec));
  uint64_t in = 0, out = 0;
  OK(ctx, wg_mem_alloc(ctx, &in, 4096));
  OK(ctx, wg_mem_alloc(ctx, &out, 4096));
  ck_assert_int_eq(wg_warp_launch(ctx, k, 0, out, 100, NULL, NULL),
                   WG_EINVAL);
  ck_assert_ptr_nonnull(strstr(wg_errmsg(ctx), "input"));
  ck_assert_int_eq(wg_warp_launch(ctx, k, in, 0, 100, NULL, NULL), WG_EINVAL);
  ck_assert_int_eq(wg_warp_launch(ctx, k, in + 2, out, 100, NULL, NULL),
                   WG_EALIGN);
  ck_assert_int_eq(wg_warp_launch(ctx, k, in, out + 1, 100, NULL, NULL),
                   WG_EALIGN);
  ck_assert_int_eq(wg_warp_launch(ctx, k, in, out, UINT64_MAX, NULL, NULL),
                   WG_ERANGE);
  ck_assert_int_eq(wg_warp_launch(ctx, NULL, in, out, 100, NULL, NULL),
                   WG_EINVAL);
  wg_launch_config bad = WG_LAUNCH_CONFIG_INIT;
  bad.block_size = 100;
  ck_assert_int_eq(wg_warp_launch(ctx, k, in, out, 100, NULL, &bad),
                   WG_EINVAL);
  /* An explicit configuration still gives right answers. */
  wg_launch_config tiny = WG_LAUNCH_CONFIG_INIT;
  tiny.block_size = 64;
  tiny.grid_size = 1;
  float host[1000], sums[32];
  for (int i = 0; i < 1000; i++)
    host[i] = (float)(i % 7);
  OK(ctx, wg_memcpy_htod(ctx, in, host, sizeof host, NULL));
  OK(ctx, wg_warp_launch(ctx, k, in, out, 1000, NULL, &tiny));
  OK(ctx, wg_memcpy_dtoh(ctx, sums, out, sizeof sums, NULL));
  for (int g = 0; g < 32; g++) {
    float want = 0;
    for (int i = g * 32; i < 1000 && i < g * 32 + 32; i++)
      want += host[i];
    ck_assert_float_eq(sums[g], want);
  }
  ck_assert_int_eq(wg_mem_free(ctx, in), WG_OK);
  ck_assert_int_eq(wg_mem_free(ctx, out), WG_OK);
  wg_context_destroy(ctx);
}
END_TEST

START_TEST(zero_count_is_a_no_op) {
  wg_context *ctx = wg_test_context();
  wg_spec spec = WG_SPEC_INIT;
  spec.primitive = WG_SCAN;
  spec.type = WG_I32;
  uint64_t out = 0;
  OK(ctx, wg_mem_alloc(ctx, &out, 64));
  OK(ctx, wg_memset_d8(ctx, out, 0xa7, 64, NULL));
  /* No launch, so not even NULL or misaligned pointers matter. */
  OK(ctx, wg_warp(ctx, &spec, 0, 0, 0, NULL));
  OK(ctx, wg_warp(ctx, &spec, 4, out + 1, 0, NULL));
  unsigned char host[64];
  OK(ctx, wg_memcpy_dtoh(ctx, host, out, sizeof host, NULL));
  for (int i = 0; i < 64; i++)
    ck_assert_int_eq(host[i], 0xa7);
  wg_mem_free(ctx, out);
  wg_context_destroy(ctx);
}
END_TEST

START_TEST(arch_mismatch) {
  wg_context *ctx = wg_test_context();
  wg_device_info info;
  OK(ctx, wg_device_get_info(ctx, &info));
  wg_spec spec = WG_SPEC_INIT;
  spec.arch = info.arch == 80 ? 90 : 80;
  wg_kernel *k = NULL;
  ck_assert_int_eq(wg_kernel_get(ctx, &k, &spec), WG_EARCH);
  ck_assert_ptr_null(k);
  char want[16];
  snprintf(want, sizeof want, "sm_%d", spec.arch);
  ck_assert_msg(strstr(wg_errmsg(ctx), want), "message: %s", wg_errmsg(ctx));
  /* The device's own arch, spelled out, is fine. */
  spec.arch = info.arch;
  OK(ctx, wg_kernel_get(ctx, &k, &spec));
  wg_context_destroy(ctx);
}
END_TEST

/* A read from freed device memory faults the kernel: the error comes back
 * as a status with the CUDA error's name, and the context can still be
 * destroyed. */
START_TEST(kernel_fault_is_an_error) {
  wg_context *ctx = wg_test_context();
  wg_spec spec = WG_SPEC_INIT;
  uint64_t in = 0, out = 0;
  const size_t bytes = (size_t)64 << 20;
  OK(ctx, wg_mem_alloc(ctx, &in, bytes));
  OK(ctx, wg_mem_alloc(ctx, &out, bytes));
  OK(ctx, wg_mem_free(ctx, in));
  int rc = wg_warp(ctx, &spec, in, out, bytes / 4, NULL);
  if (rc == WG_OK)
    rc = wg_stream_sync(ctx, NULL);
  ck_assert_msg(rc == WG_ELAUNCH, "status %d (%s): %s", rc, wg_strerror(rc),
                wg_errmsg(ctx));
  ck_assert_msg(strstr(wg_errmsg(ctx), "CUDA_ERROR_"), "message: %s",
                wg_errmsg(ctx));
  printf("gpu: fault: %s\n", wg_errmsg(ctx));
  wg_context_destroy(ctx);
}
END_TEST

/* --- kernels and contexts --------------------------------------------------- */

START_TEST(kernel_table_hits) {
  wg_context *ctx = wg_test_context();
  wg_spec spec = WG_SPEC_INIT;
  wg_kernel *a = NULL, *b = NULL;
  OK(ctx, wg_kernel_get(ctx, &a, &spec));
  wg_cache_stats before, after;
  OK(ctx, wg_cache_stats_get(ctx, &before));
  const int lookups = 200000;
  double t0 = wg_test_now();
  for (int i = 0; i < lookups; i++)
    OK(ctx, wg_kernel_get(ctx, &b, &spec));
  double per = (wg_test_now() - t0) / lookups;
  ck_assert_ptr_eq(a, b);
  OK(ctx, wg_cache_stats_get(ctx, &after));
  ck_assert_uint_eq(after.memory_hits - before.memory_hits, (uint64_t)lookups);
  printf("gpu: in-memory kernel lookup %.1f ns\n", per * 1e9);
  ck_assert_msg(per < 10e-6, "a lookup took %.3f us", per * 1e6);
  wg_context_destroy(ctx);
}
END_TEST

/* warpgen leaves the calling thread's context stack as it found it: empty
 * when it retained the primary context itself, the host's own otherwise. */
START_TEST(host_context_left_as_found) {
  const wg_driver_api *api = NULL;
  ck_assert_int_eq(wg_driver_load(NULL, &api), WG_OK);
  wg_context *ctx = wg_test_context();
  wg_spec spec = WG_SPEC_INIT;
  uint64_t buf = 0;
  OK(ctx, wg_mem_alloc(ctx, &buf, 1 << 20));
  OK(ctx, wg_warp(ctx, &spec, buf, buf, 1000, NULL));
  OK(ctx, wg_stream_sync(ctx, NULL));
  CUcontext current = (CUcontext)1;
  ck_assert_int_eq(api->CtxGetCurrent(&current), CUDA_SUCCESS);
  ck_assert_ptr_null(current);
  wg_mem_free(ctx, buf);
  wg_context_destroy(ctx);

  /* A host with its own current context: warpgen works inside it. */
  CUdevice dev;
  CUcontext host_ctx = NULL;
  ck_assert_int_eq(api->DeviceGet(&dev, 0), CUDA_SUCCESS);
  ck_assert_int_eq(api->DevicePrimaryCtxRetain(&host_ctx, dev), CUDA_SUCCESS);
  ck_assert_int_eq(api->CtxPushCurrent(host_ctx), CUDA_SUCCESS);
  ctx = wg_test_context();
  OK(ctx, wg_mem_alloc(ctx, &buf, 1 << 20));
  OK(ctx, wg_warp(ctx, &spec, buf, buf, 1000, NULL));
  OK(ctx, wg_stream_sync(ctx, NULL));
  ck_assert_ptr_eq(ctx->device->cu_context, host_ctx);
  ck_assert(!ctx->device->owns_primary);
  wg_mem_free(ctx, buf);
  wg_context_destroy(ctx);
  ck_assert_int_eq(api->CtxGetCurrent(&current), CUDA_SUCCESS);
  ck_assert_ptr_eq(current, host_ctx);
  CUcontext popped;
  api->CtxPopCurrent(&popped);
  api->DevicePrimaryCtxRelease(dev);
}
END_TEST

static Suite *gpu_suite(void) {
  Suite *s = suite_create("gpu");
  TCase *specs = tcase_create("specs");
  tcase_set_timeout(specs, 1200);
  tcase_add_loop_test(specs, every_spec, WG_REDUCE, WG_MATCH + 1);
  suite_add_tcase(s, specs);
  TCase *large = tcase_create("large");
  tcase_set_timeout(large, 1200);
  tcase_add_test(large, past_2_31);
  suite_add_tcase(s, large);
  TCase *api = tcase_create("api");
  tcase_set_timeout(api, 300);
  tcase_add_test(api, auto_specs);
  tcase_add_test(api, expressions_inputs_params);
  tcase_add_test(api, bad_pointers_and_counts);
  tcase_add_test(api, zero_count_is_a_no_op);
  tcase_add_test(api, arch_mismatch);
  tcase_add_test(api, kernel_fault_is_an_error);
  tcase_add_test(api, kernel_table_hits);
  tcase_add_test(api, host_context_left_as_found);
  suite_add_tcase(s, api);
  return s;
}

int main(void) {
  if (!wg_test_gpu_begin("gpu", NULL)) return 77;
  char *dir = wg_test_tmpdir();
  if (!dir) {
    printf("gpu: cannot make a temporary folder\n");
    return 1;
  }
  snprintf(summary_path, sizeof summary_path, "%s/summary", dir);
  double start = wg_test_now();
  const int failed = wg_test_run_suite(gpu_suite());

  uint64_t specs = 0, launches = 0, checks = 0;
  FILE *f = fopen(summary_path, "r");
  if (f) {
    uint64_t a, b, c;
    double d;
    while (fscanf(f, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %lf", &a, &b, &c,
                  &d) == 4) {
      specs += a;
      launches += b;
      checks += c;
    }
    fclose(f);
  }
  printf("gpu summary: %" PRIu64 " specs, %" PRIu64 " launches, %" PRIu64
         " outputs checked, %.1f s, %s, base seed 0x%016" PRIx64 "\n",
         specs, launches, checks, wg_test_now() - start,
         failed ? "one or more tests failed" : "0 failed tests", wg_test_seed());
  wg_test_rmtree(dir);
  free(dir);
  return failed ? 1 : 0;
}
