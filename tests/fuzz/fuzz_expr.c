/*
 * fuzz_expr.c - the libFuzzer target of the expression language (expr.c).
 *
 * The first 16 bytes of an input choose the scope (role, input count and
 * types, parameter count and types, accumulator type); the rest is the
 * expression. For every input it checks what expr.h promises:
 *   - a rejected text gets WG_ESPEC, no tree, and a one-line printable
 *     message "<role> expression: at N: ..." with N inside the text;
 *   - an accepted text has a type, uses only names in scope, and its
 *     canonical text is a fixed point: parsing it gives the same canonical
 *     text, the same type, the same uses and the same CUDA;
 *   - the CUDA holds nothing of the input: re-lexed, every identifier is a
 *     fixed internal name, a whitelisted function, a type or true/false,
 *     every number is one the renderer prints, no other byte appears, the
 *     parentheses balance, it names only variables that uses reports, and
 *     its length grows linearly with the canonical text.
 * Any failure aborts, which libFuzzer reports with the input.
 *
 * tests/fuzz/run.sh builds it with clang -fsanitize=fuzzer,address,undefined;
 * tests/fuzz/replay.c runs the seed corpus through it in the gcc build.
 */
#include "expr.h"
#include "fuzz_common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER 16

static void check(bool ok, const char *what, const uint8_t *data, size_t size) {
  if (ok) return;
  fprintf(stderr, "fuzz_expr: %s\ninput (%zu bytes after the header): ", what,
          size > HEADER ? size - HEADER : 0);
  for (size_t k = HEADER; k < size; k++)
    fprintf(stderr, data[k] >= 32 && data[k] < 127 ? "%c" : "\\x%02x", data[k]);
  fprintf(stderr, "\n");
  abort();
}

/* Variables among them, with their bit in wg_expr_uses. */
static const struct { const char *name; unsigned bit; } variables[] = {
  {"wg_x", WG_EXPR_USES_INPUT(0)}, {"wg_y", WG_EXPR_USES_INPUT(1)},
  {"wg_z", WG_EXPR_USES_INPUT(2)}, {"wg_w", WG_EXPR_USES_INPUT(3)},
  {"wg_i", WG_EXPR_USES_I}, {"wg_n", WG_EXPR_USES_N}, {"wg_a", WG_EXPR_USES_A},
  {"wg_b", WG_EXPR_USES_B}, {"wg_r", WG_EXPR_USES_R},
  {"wg_p0", WG_EXPR_USES_PARAM(0)}, {"wg_p1", WG_EXPR_USES_PARAM(1)},
  {"wg_p2", WG_EXPR_USES_PARAM(2)}, {"wg_p3", WG_EXPR_USES_PARAM(3)},
  {"wg_p4", WG_EXPR_USES_PARAM(4)}, {"wg_p5", WG_EXPR_USES_PARAM(5)},
  {"wg_p6", WG_EXPR_USES_PARAM(6)}, {"wg_p7", WG_EXPR_USES_PARAM(7)},
};

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* NULL when the rendered CUDA passes; else what is wrong. */
static const char *relex(const char *s, unsigned uses) {
  int depth = 0;
  unsigned seen = 0;
  while (*s) {
    if (is_alpha(*s)) {
      size_t n = 1;
      while (is_alpha(s[n]) || is_digit(s[n])) n++;
      bool known = false;
      for (size_t k = 0; k < sizeof wg_fuzz_expr_names / sizeof *wg_fuzz_expr_names; k++)
        known |= strlen(wg_fuzz_expr_names[k]) == n && memcmp(wg_fuzz_expr_names[k], s, n) == 0;
      if (!known) return "an identifier that is not on the list";
      for (size_t k = 0; k < sizeof variables / sizeof *variables; k++)
        if (strlen(variables[k].name) == n && memcmp(variables[k].name, s, n) == 0)
          seen |= variables[k].bit;
      s += n;
    } else if (is_digit(*s)) { /* digits [. digits] [e[+-]digits] [f|u|LL|ULL] */
      while (is_digit(*s)) s++;
      if (*s == '.') {
        s++;
        if (!is_digit(*s)) return "a number without digits after its point";
        while (is_digit(*s)) s++;
      }
      if (*s == 'e') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!is_digit(*s)) return "a number with an empty exponent";
        while (is_digit(*s)) s++;
      }
      if (strncmp(s, "ULL", 3) == 0) s += 3;
      else if (strncmp(s, "LL", 2) == 0) s += 2;
      else if (*s == 'f' || *s == 'u') s++;
      if (is_alpha(*s) || is_digit(*s) || *s == '.') return "a malformed number";
    } else if (*s == '(' || *s == ')') {
      depth += *s++ == '(' ? 1 : -1;
      if (depth < 0) return "a ')' without its '('";
    } else if (strchr(" ,+-*/<>=!&|?:", *s)) {
      s++;
    } else {
      return "a byte outside the renderer's alphabet";
    }
  }
  if (depth) return "unbalanced parentheses";
  if (seen != uses) return "variables in the CUDA differ from wg_expr_uses";
  return NULL;
}

/* Which variables a scope has, as wg_expr_uses bits. */
static unsigned scope_names(const wg_expr_scope *sc) {
  unsigned inputs = 0, params = 0;
  for (int k = 0; k < sc->ninputs; k++) inputs |= WG_EXPR_USES_INPUT(k);
  for (int k = 0; k < sc->nparams; k++) params |= WG_EXPR_USES_PARAM(k);
  switch (sc->role) {
  case WG_EXPR_MAP: case WG_EXPR_PREDICATE:
    return inputs | WG_EXPR_USES_I | WG_EXPR_USES_N | params;
  case WG_EXPR_COMBINE: return WG_EXPR_USES_A | WG_EXPR_USES_B | params;
  case WG_EXPR_FINAL: return WG_EXPR_USES_R | WG_EXPR_USES_N | params;
  default: return params;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t h[HEADER] = {0};
  memcpy(h, data, size < HEADER ? size : HEADER);
  wg_expr_scope sc = {.role = (wg_expr_role)(h[0] % WG_EXPR_ROLE_COUNT),
                      .ninputs = h[1] % 5, .nparams = h[6] % 9,
                      .acc = (wg_value_type)(h[15] % WG_VT_COUNT)};
  for (int k = 0; k < 4; k++) sc.inputs[k] = (wg_value_type)(h[2 + k] % WG_VT_COUNT);
  for (int k = 0; k < 8; k++) sc.params[k] = (wg_value_type)(h[7 + k] % WG_VT_COUNT);
  const char *text = size > HEADER ? (const char *)data + HEADER : "";
  size_t len = size > HEADER ? size - HEADER : 0;

  wg_context ctx = {0}; /* only the error message is used */
  wg_expr *e = (wg_expr *)1;
  int rc = wg_expr_parse(&ctx, &e, text, len, &sc);
  if (rc != WG_OK) {
    check(rc == WG_ESPEC, "a failure other than WG_ESPEC", data, size);
    check(e == NULL, "*out is not NULL after a failure", data, size);
    const char *msg = wg_errmsg(&ctx);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s expression: at ", wg_expr_role_name(sc.role));
    check(strncmp(msg, prefix, strlen(prefix)) == 0, "a message without role and position",
          data, size);
    check(strtoull(msg + strlen(prefix), NULL, 10) <= len || len > WG_EXPR_MAX_LEN,
          "a position past the end", data, size);
    check(wg_fuzz_printable(msg), "a message with a byte that is not printable", data,
          size);
    free(ctx.errmsg);
    return 0;
  }
  wg_value_type type = wg_expr_type(e);
  unsigned uses = wg_expr_uses(e);
  check((unsigned)type < WG_VT_COUNT, "no type", data, size);
  check((uses & ~scope_names(&sc)) == 0, "a name out of scope", data, size);

  wg_buf canon = {0}, cuda = {0};
  check(wg_expr_format(e, &canon) == WG_OK && wg_expr_render(e, &cuda) == WG_OK,
        "format or render failed", data, size);
  check(wg_fuzz_printable(canon.data) && !strstr(canon.data, "  ") &&
            canon.len <= WG_EXPR_MAX_LEN,
        "canonical text not printable, with double spaces or too long", data, size);
  const char *why = relex(cuda.data, uses);
  if (why) fprintf(stderr, "CUDA: %s\n", cuda.data);
  check(!why, why ? why : "", data, size);
  check(cuda.len <= 128 * canon.len + 64, "the CUDA grows faster than the text", data, size);

  wg_expr *again;
  int rc2 = wg_expr_parse(&ctx, &again, canon.data, canon.len, &sc);
  if (rc2 != WG_OK) fprintf(stderr, "canonical '%s': %s\n", canon.data, wg_errmsg(&ctx));
  check(rc2 == WG_OK, "the canonical text does not parse", data, size);
  wg_buf canon2 = {0}, cuda2 = {0};
  wg_expr_format(again, &canon2);
  wg_expr_render(again, &cuda2);
  if (strcmp(canon.data, canon2.data) || strcmp(cuda.data, cuda2.data))
    fprintf(stderr, "'%s' -> '%s'\n'%s'\n'%s'\n", canon.data, canon2.data, cuda.data, cuda2.data);
  check(strcmp(canon.data, canon2.data) == 0, "format is not a fixed point", data, size);
  check(strcmp(cuda.data, cuda2.data) == 0, "the canonical text renders differently", data, size);
  check(wg_expr_type(again) == type && wg_expr_uses(again) == uses,
        "the canonical text types differently", data, size);

  wg_buf_free(&canon);
  wg_buf_free(&cuda);
  wg_buf_free(&canon2);
  wg_buf_free(&cuda2);
  wg_expr_free(again);
  wg_expr_free(e);
  free(ctx.errmsg);
  return 0;
}
