/*
 * gen_seeds.c - seeds for the expression fuzzer from the random generator
 * (tests/expr_gen.c): COUNT files in DIR, each the 16-byte header that
 * fuzz_expr.c reads as the scope, then an expression valid in it.
 *   gen_seeds DIR COUNT SEED
 * tests/fuzz/run.sh writes a few hundred into build-fuzz/corpus-expr, so
 * the fuzzer starts from every operator, function, cast and literal form
 * instead of finding them byte by byte.
 */
#include "expr_gen.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: gen_seeds DIR COUNT SEED\n");
    return 2;
  }
  long count = strtol(argv[2], NULL, 10);
  uint64_t rng = strtoull(argv[3], NULL, 0);
  static char text[WG_EXPR_MAX_LEN];
  for (long k = 0; k < count; k++) {
    wg_expr_scope sc;
    wg_gen_scope(&rng, &sc);
    size_t len = wg_gen_expr(&rng, &sc, 1 + (int)(wg_gen_next(&rng) % 8), text, sizeof text);
    /* the header as fuzz_expr.c decodes it (each byte modulo its range) */
    unsigned char h[16] = {(unsigned char)sc.role, (unsigned char)sc.ninputs};
    for (int j = 0; j < 4; j++) h[2 + j] = (unsigned char)sc.inputs[j];
    h[6] = (unsigned char)sc.nparams;
    for (int j = 0; j < 8; j++) h[7 + j] = (unsigned char)sc.params[j];
    h[15] = (unsigned char)sc.acc;
    char path[4096];
    snprintf(path, sizeof path, "%s/gen-%ld", argv[1], k);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(h, 1, 16, f) != 16 || fwrite(text, 1, len, f) != len || fclose(f)) {
      fprintf(stderr, "gen_seeds: cannot write %s\n", path);
      return 1;
    }
  }
  return 0;
}
