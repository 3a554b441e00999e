/*
 * refcli.c - the CPU oracle of the warp primitives (tests/oracle.h) as a
 * command, for check_specs.py:
 *   refcli fill SPEC N SEED FILE      writes N random inputs, prints the
 *                                     output size in bytes; a spec with
 *                                     inputs= gets FILE.1, FILE.2, FILE.3,
 *                                     one with params= FILE.params (the
 *                                     kernel's 64-byte block: p_k = k + 3)
 *   refcli check SPEC N IN_FILE OUT_FILE
 *                                     compares every output; exit 0 on a
 *                                     match, 1 otherwise, with one line
 */
#include "oracle.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: refcli fill|check SPEC N SEED|IN FILE\n");
    return 2;
  }
  wg_context *ctx;
  if (wg_context_create(&ctx, NULL) != WG_OK)
    return 2;
  wg_spec spec; if (wg_spec_parse(ctx, &spec, argv[2])) { fprintf(stderr, "bad spec %s\n", wg_errmsg(ctx)); return 2; }
  uint64_t n = strtoull(argv[3], 0, 10);
  size_t in_bytes = n * wg_type_size(spec.type);
  void *in = malloc(in_bytes + 16);
  /* The extra inputs and the parameters beside the input file. */
  void *more[WG_MAX_INPUTS] = {in};
  const void *inputs[WG_MAX_INPUTS] = {in};
  char path[4096];
  const char *file = argv[1][0] == 'f' ? argv[5] : argv[4];
  for (int k = 1; k < spec.ninputs; k++) {
    size_t bytes = n * wg_type_size(spec.inputs[k]);
    more[k] = malloc(bytes + 16);
    inputs[k] = more[k];
    snprintf(path, sizeof path, "%s.%d", file, k);
    if (argv[1][0] == 'f') {
      wg_oracle_fill(spec.inputs[k], WG_OP_SUM, more[k], n, strtoull(argv[4], 0, 0) + (uint64_t)k);
      FILE *f = fopen(path, "wb"); fwrite(more[k], 1, bytes, f); fclose(f);
    } else {
      FILE *f = fopen(path, "rb"); size_t got = fread(more[k], 1, bytes, f); fclose(f); (void)got;
    }
  }
  wg_scalar params[WG_MAX_PARAMS] = {{0}};
  for (int k = 0; k < spec.nparams; k++) {
    switch (spec.params[k]) {
    case WG_F32: params[k].f32 = (float)(k + 3); break;
    case WG_F64: params[k].f64 = k + 3; break;
    case WG_I32: params[k].i32 = k + 3; break;
    case WG_U32: params[k].u32 = (uint32_t)k + 3; break;
    case WG_I64: params[k].i64 = k + 3; break;
    default: params[k].u64 = (uint64_t)k + 3; break;
    }
  }
  if (argv[1][0] == 'f') {
    wg_oracle_warp_fill(&spec, in, 0, n, strtoull(argv[4], 0, 0));
    FILE *f = fopen(argv[5], "wb"); fwrite(in, 1, in_bytes, f); fclose(f);
    if (spec.nparams) {
      snprintf(path, sizeof path, "%s.params", file);
      f = fopen(path, "wb"); fwrite(params, 1, sizeof params, f); fclose(f);
    }
    uint64_t count; size_t size; wg_output_shape(&count, &size, &spec, n);
    printf("%zu\n", (size_t)(count * size));
    return 0;
  }
  FILE *f = fopen(argv[4], "rb"); size_t got = fread(in, 1, in_bytes, f); fclose(f); (void)got;
  uint64_t count; size_t size; wg_output_shape(&count, &size, &spec, n);
  void *out = malloc(count * size + 16);
  f = fopen(argv[5], "rb"); got = fread(out, 1, count * size, f); fclose(f);
  wg_oracle_report r; wg_oracle_report_init(&r);
  /* The harness passes the files' inputs and parameters, else the
   * operator's default parameters. */
  wg_oracle_warp_check_ex(&r, &spec, inputs, n, params, (size_t)spec.nparams, out, 0,
                          wg_oracle_group_count(&spec, n));
  int ok = r.mismatches == 0 && r.checked == count;
  printf("%s %s checked=%llu worst=%.3f %s\n", ok ? "PASS" : "FAIL", argv[2], (unsigned long long)r.checked, r.worst_ratio, ok ? "" : r.first);
  return !ok;
}
