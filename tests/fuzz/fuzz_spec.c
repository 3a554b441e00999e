/*
 * fuzz_spec.c - the libFuzzer target of the spec text form with expressions
 * (spec.c, spec_expr.c): quoted values, escapes, inputs= and params=.
 *
 * For every input (a spec text) it checks what warpgen.h promises:
 *   - a rejected text gets WG_ESPEC (or WG_EINVAL) and a printable message;
 *   - an accepted spec formats, and its text is a fixed point: parsing it
 *     gives a spec that formats to the same text, with the same (interned)
 *     expression pointers, and wg_spec_canonical leaves it as it is.
 * Any failure aborts. Built by tests/fuzz/run.sh spec (clang, ASan, UBSan):
 * spec parsing needs no CUDA, no NVRTC and no templates.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* spec.c's listing asks NVRTC about an architecture; parsing never does. */
int wg_nvrtc_check_arch(wg_context *ctx, int arch) {
  (void)ctx;
  (void)arch;
  return WG_OK;
}

static void check(bool ok, const char *what, const char *text) {
  if (ok) return;
  fprintf(stderr, "fuzz_spec: %s for '%s'\n", what, text);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  wg_context ctx;
  memset(&ctx, 0, sizeof ctx);
  wg_spec s;
  const int rc = wg_spec_parse(&ctx, &s, text);
  if (rc != WG_OK) {
    check(rc == WG_ESPEC || rc == WG_EINVAL, "an unexpected status", text);
    for (const char *m = wg_errmsg(&ctx); *m; m++)
      check(*m >= 0x20 && *m < 0x7f, "a message byte that is not printable", text);
  } else {
    const int len = wg_spec_format(NULL, 0, &s);
    check(len > 0, "an accepted spec that does not format", text);
    char *first = malloc((size_t)len + 1);
    wg_spec_format(first, (size_t)len + 1, &s);
    wg_spec again;
    check(wg_spec_parse(&ctx, &again, first) == WG_OK, "its own text is rejected", first);
    char *second = malloc((size_t)len + 1);
    check(wg_spec_format(second, (size_t)len + 1, &again) == len &&
              strcmp(first, second) == 0, "format(parse(format)) differs", first);
    check(s.map == again.map && s.combine == again.combine &&
              s.identity == again.identity && s.final == again.final,
          "the expressions are not interned once", first);
    wg_spec canonical;
    check(wg_spec_canonical(&ctx, &canonical, &s) == WG_OK &&
              canonical.map == s.map && canonical.final == s.final,
          "a parsed spec is not canonical", first);
    free(first);
    free(second);
  }
  wg_intern_free(&ctx);
  free(ctx.errmsg);
  free(text);
  return 0;
}
