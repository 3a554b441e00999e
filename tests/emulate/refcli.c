/*
 * refcli.c - the CPU oracle of the warp primitives (tests/oracle.h) as a
 * command, for check_specs.py:
 *   refcli fill SPEC N SEED FILE      writes N random inputs, prints the
 *                                     output size in bytes
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
  if (argv[1][0] == 'f') {
    wg_oracle_warp_fill(&spec, in, 0, n, strtoull(argv[4], 0, 0));
    FILE *f = fopen(argv[5], "wb"); fwrite(in, 1, in_bytes, f); fclose(f);
    uint64_t count; size_t size; wg_output_shape(&count, &size, &spec, n);
    printf("%zu\n", (size_t)(count * size));
    return 0;
  }
  FILE *f = fopen(argv[4], "rb"); size_t got = fread(in, 1, in_bytes, f); fclose(f); (void)got;
  uint64_t count; size_t size; wg_output_shape(&count, &size, &spec, n);
  void *out = malloc(count * size + 16);
  f = fopen(argv[5], "rb"); got = fread(out, 1, count * size, f); fclose(f);
  wg_oracle_report r; wg_oracle_report_init(&r);
  /* The harness passes one input and the operator's default parameters. */
  const void *inputs[1] = {in};
  wg_oracle_warp_check_ex(&r, &spec, inputs, n, NULL, 0, out, 0, wg_oracle_group_count(&spec, n));
  int ok = r.mismatches == 0 && r.checked == count;
  printf("%s %s checked=%llu worst=%.3f %s\n", ok ? "PASS" : "FAIL", argv[2], (unsigned long long)r.checked, r.worst_ratio, ok ? "" : r.first);
  return !ok;
}
