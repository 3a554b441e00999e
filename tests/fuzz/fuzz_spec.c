/*
 * fuzz_spec.c - the libFuzzer target of the spec text form (spec.c,
 * spec_expr.c: quoted expressions, escapes, inputs= and params=) and of the
 * source made from it.
 *
 * The input is spec text (cut at its first NUL, as a C string is). The
 * context never compiles: the disk cache is off, arch is always explicit,
 * so neither NVRTC nor the driver is loaded. For every input it checks
 * what warpgen.h promises:
 *   - a rejected text gets WG_ESPEC and a non-empty message of printable
 *     ASCII (user bytes escaped), of bounded length;
 *   - an accepted text validates, and its canonical text T (wg_spec_format)
 *     is a fixed point: T parses, and formats to T again. The comparison is
 *     through the text, so it covers every field the text form has, today's
 *     and any added later, without naming them; the expressions of the
 *     input and of T are the same interned text, which wg_spec_canonical
 *     leaves as it is;
 *   - wg_source (arch sm_90 when the spec leaves it unset) succeeds, gives
 *     the same bytes for the input and for T (the source depends on the
 *     canonical spec only), names the kernel wg_kernel_name gives, and holds
 *     nothing of the input: re-lexed as C, every identifier (in code and in
 *     comments) and every string or character literal is one the generator
 *     prints for the listed specs, one the built-in templates have, one the
 *     expression renderer prints or a name of the canonical text,
 *     every other byte is C punctuation or space, and no word of the input
 *     that T does not have appears in it.
 * Any failure aborts, which libFuzzer reports with the input.
 *
 * tests/fuzz/run.sh spec builds it with clang -fsanitize=fuzzer,address,
 * undefined; tests/fuzz/replay.c runs the seed corpus through it in the gcc
 * build (the spec-corpus unit test).
 */
#include "fuzz_common.h"
#include "expr.h"
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One spec's text is a line; a longer input only makes longer messages. */
#define MAX_INPUT 8192

static const char *input_text; /* for the report of a failure */

static void check(bool ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_spec: %s\ninput: ", what);
  for (const char *c = input_text; c && *c; c++)
    fprintf(stderr, *c >= 32 && *c < 127 ? "%c" : "\\x%02x", (unsigned char)*c);
  fprintf(stderr, "\n");
  abort();
}

/* --- the vocabulary: a set of strings, open addressing ------------------ */

typedef struct {
  char **slot;
  size_t cap, count;
} word_set;

static uint64_t hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t k = 0; k < n; k++) h = (h ^ (unsigned char)s[k]) * 1099511628211ull;
  return h;
}

static bool set_has(const word_set *set, const char *s, size_t n) {
  if (!set->cap) return false;
  for (size_t k = hash(s, n) & (set->cap - 1);; k = (k + 1) & (set->cap - 1)) {
    const char *w = set->slot[k];
    if (!w) return false;
    if (strlen(w) == n && memcmp(w, s, n) == 0) return true;
  }
}

static void set_clear(word_set *set) {
  for (size_t k = 0; k < set->cap; k++) free(set->slot[k]);
  free(set->slot);
  *set = (word_set){0};
}

static void set_add(word_set *set, const char *s, size_t n) {
  if (set_has(set, s, n)) return;
  if (2 * (set->count + 1) > set->cap) { /* grow and rehash */
    word_set bigger = {calloc(set->cap ? 2 * set->cap : 1024, sizeof(char *)),
                       set->cap ? 2 * set->cap : 1024, 0};
    check(bigger.slot != NULL, "out of memory");
    for (size_t k = 0; k < set->cap; k++)
      if (set->slot[k]) {
        size_t j = hash(set->slot[k], strlen(set->slot[k])) & (bigger.cap - 1);
        while (bigger.slot[j]) j = (j + 1) & (bigger.cap - 1);
        bigger.slot[j] = set->slot[k];
        bigger.count++;
      }
    free(set->slot);
    *set = bigger;
  }
  size_t k = hash(s, n) & (set->cap - 1);
  while (set->slot[k]) k = (k + 1) & (set->cap - 1);
  set->slot[k] = malloc(n + 1);
  check(set->slot[k] != NULL, "out of memory");
  memcpy(set->slot[k], s, n);
  set->slot[k][n] = '\0';
  set->count++;
}

static word_set identifiers; /* every identifier the generator prints */
static word_set literals;    /* every "string" and 'c' literal it prints */
static word_set pieces;      /* the '_'-separated parts of the identifiers */
static word_set stems;       /* the letters of the parts that end in digits */
static bool comment_bytes[256]; /* the prose punctuation of its comments */
/* The names and bytes of the canonical text of the spec at hand: the
 * source quotes that text in its header comment ("arch=sm_70" has the name
 * sm_70; map="x * x" has quotes). */
static word_set canonical;
static bool canonical_bytes[256];

/* --- a lexer of the generated C -------------------------------------------- */

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }

/* An identifier the generator never printed for a listed spec may still be
 * one built from names (a kernel name with another lane or cols, or for an
 * expression): wg_ and parts that the listed identifiers have, the same
 * parts with other digits, or hexadecimal digits (a hash). */
static bool composed_name(const char *s, size_t n) {
  if (n < 4 || memcmp(s, "wg_", 3) != 0) return false;
  for (size_t a = 3; a < n;) {
    size_t b = a;
    while (b < n && s[b] != '_') b++;
    bool hex = b > a;
    for (size_t k = a; k < b; k++) hex &= is_hex(s[k]);
    size_t stem = a; /* a numbered part (w32, l31): a known stem, digits */
    while (stem < b && !is_digit(s[stem])) stem++;
    bool numbered = stem > a && stem < b && set_has(&stems, s + a, stem - a);
    for (size_t k = stem; k < b; k++) numbered &= is_digit(s[k]);
    if (!hex && !numbered && !set_has(&pieces, s + a, b - a)) return false;
    a = b + 1;
  }
  return true;
}

/* What lex does with the source. */
typedef enum {
  CHECK,     /* returns what is wrong (NULL: all of it is known) */
  LEARN,     /* adds everything it meets to the vocabulary */
  LEARN_SPEC /* as LEARN, but not the names of the spec's own canonical
                text in comments (the header comment quotes it: its names
                are the user's, not the generator's) */
} lex_mode;

/* Lexes C source as mode says; *at is the offset of what is wrong. */
static const char *lex(const char *src, lex_mode mode, size_t *at) {
  const char *s = src;
  bool comment = false, line_comment = false, learn = false;
  while (*s) {
    *at = (size_t)(s - src);
    learn = mode != CHECK;
    if (comment && s[0] == '*' && s[1] == '/') { comment = false; s += 2; continue; }
    if (line_comment && *s == '\n') { line_comment = false; s++; continue; }
    if (!comment && !line_comment && s[0] == '/' && (s[1] == '*' || s[1] == '/')) {
      comment = s[1] == '*';
      line_comment = s[1] == '/';
      s += 2;
      continue;
    }
    if (mode != CHECK && s[0] == '$' && s[1] == '{' && strchr(s, '}')) {
      s = strchr(s, '}') + 1; /* a template's ${key}: filled by codegen */
      continue;
    }
    if (is_alpha(*s)) {
      size_t n = 1;
      while (is_alpha(s[n]) || is_digit(s[n])) n++;
      if (learn && mode == LEARN_SPEC && (comment || line_comment) &&
          set_has(&canonical, s, n)) {
        /* the quoted spec's name: not learned */
      } else if (learn) {
        set_add(&identifiers, s, n);
        for (size_t a = 0; a < n;) {
          size_t b = a;
          while (b < n && s[b] != '_') b++;
          if (b > a) set_add(&pieces, s + a, b - a);
          size_t stem = a;
          while (stem < b && !is_digit(s[stem])) stem++;
          if (stem > a && stem < b) set_add(&stems, s + a, stem - a);
          a = b + 1;
        }
      } else if (mode == CHECK && !set_has(&identifiers, s, n) &&
                 !set_has(&canonical, s, n) &&
                 !composed_name(s, n)) {
        return "an identifier the generator does not print";
      }
      s += n;
    } else if (is_digit(*s) && (comment || line_comment)) {
      /* Prose ("2h lanes") or a number of the quoted spec ("1e40"): a
       * word that starts with a digit, known like an identifier. */
      size_t n = 0, digits = 0;
      while (is_alpha(s[n]) || is_digit(s[n])) digits += is_digit(s[n++]);
      if (learn && !(mode == LEARN_SPEC && set_has(&canonical, s, n)))
        set_add(&identifiers, s, n);
      else if (mode == CHECK && digits < n && !set_has(&identifiers, s, n) &&
               !set_has(&canonical, s, n))
        return "a word in a comment the generator does not print";
      s += n;
    } else if ((is_digit(*s) || (*s == '.' && is_digit(s[1]))) && !comment &&
               !line_comment) {
      /* A C number: digits, a point, an exponent, 0x, suffixes; nothing of
       * a word can hide in it. */
      s++;
      for (;;) {
        if ((*s == '+' || *s == '-') && (s[-1] == 'e' || s[-1] == 'E')) s++;
        else if (*s && (is_digit(*s) || *s == '.' || strchr("xXabcdefABCDEFuUlL", *s))) s++;
        else break;
      }
      if (is_alpha(*s)) return "a malformed number";
    } else if ((*s == '"' || *s == '\'') && !comment && !line_comment) {
      size_t n = 1;
      while (s[n] && s[n] != s[0] && s[n] != '\n') n += s[n] == '\\' && s[n + 1] ? 2 : 1;
      if (s[n] != s[0]) return "an unterminated literal";
      n++;
      if (learn) set_add(&literals, s, n);
      else if (mode == CHECK && !set_has(&literals, s, n))
        return "a literal the generator does not print";
      s += n;
    } else if (*s == '\\' && s[1] == '\n' && !comment && !line_comment) {
      s += 2; /* a macro's line continuation */
    } else if (*s == '\n' || *s == ' ' || *s == '\t') {
      s++;
    } else if (strchr("{}()[];,.+-*/%<>=!&|^~?:#", *s)) {
      s++;
    } else if (comment || line_comment) {
      /* Prose punctuation in a comment (its words are checked above): only
       * bytes the templates' comments have. */
      if (learn && !(mode == LEARN_SPEC && canonical_bytes[(unsigned char)*s]))
        comment_bytes[(unsigned char)*s] = true;
      else if (mode == CHECK && !comment_bytes[(unsigned char)*s] &&
               !canonical_bytes[(unsigned char)*s])
        return "a byte in a comment that the templates' comments do not have";
      s++;
    } else {
      return "a byte outside C's punctuation";
    }
  }
  if (comment) return "an unclosed comment";
  return NULL;
}

/* The names and bytes of canon, the canonical text of the spec at hand. */
static void set_canonical(const char *canon) {
  set_clear(&canonical);
  memset(canonical_bytes, 0, sizeof canonical_bytes);
  for (const char *p = canon; *p; p++) canonical_bytes[(unsigned char)*p] = true;
  for (const char *p = canon; *p;) { /* its words, as lex cuts them */
    size_t n = 0;
    while (is_alpha(p[n]) || is_digit(p[n])) n++;
    if (n) set_add(&canonical, p, n);
    p += n ? n : 1;
  }
}

/* --- set-up: the vocabulary from every listed spec ------------------------ */

/* The context of the input at hand: a fresh one each time, so that what a
 * parse keeps in it (interned expression text) is freed, and leaks show. */
static wg_context *ctx;
static bool ready;

static wg_context *new_context(void) {
  wg_options opt = WG_OPTIONS_INIT;
  opt.disk_cache = -1; /* never read or write a cache: nothing compiles */
  wg_context *c = NULL;
  check(wg_context_create(&c, &opt) == WG_OK, "no context");
  return c;
}

static void learn_source(const wg_spec *spec, lex_mode mode) {
  char *src;
  int rc = wg_source(ctx, &src, spec);
  if (rc) fprintf(stderr, "fuzz_spec: set-up: %s\n", wg_errmsg(ctx));
  check(rc == WG_OK, "set-up: a listed spec has no source");
  size_t at = 0;
  const char *why = lex(src, mode, &at);
  if (why) fprintf(stderr, "fuzz_spec: set-up: %s at ...%.80s\n", why, src + at);
  check(!why, "set-up: the source of a listed spec does not lex");
  wg_free(src);
}

static void set_up(void) {
  ctx = new_context();
  wg_spec *list;
  size_t count;
  check(wg_spec_list(ctx, &list, &count, 0) == WG_OK && count > 100,
        "set-up: no spec list");
  for (size_t k = 0; k < count; k++) {
    list[k].arch = 90;
    learn_source(&list[k], LEARN);
    /* auto too: in each layout it may pick what the list has once. */
    list[k].variant = WG_VARIANT_AUTO;
    if (list[k].layout == WG_LAYOUT_LANE || !wg_primitives[list[k].primitive].is_warp)
      learn_source(&list[k], LEARN);
  }
  wg_free(list);
  /* The source (but not the names of the spec its comment quotes) of a few
   * specs with expressions: the families the list does not reach. Where specs take no
   * expressions yet, these are rejected and teach nothing. */
  static const char *const expression_specs[] = {
    "reduce-array f32 sum map=\"x * x\"",
    "reduce-rows f32 max map=\"x * 2 - i\" final=\"r * p0\" params=f32",
    "reduce-array f64 sum final=\"r / f64(n) + p0\" params=f64",
    "reduce-array i64 combine=\"a + b\" identity=\"0\"",
    "reduce-rows f32 combine=\"fmax(a, b)\" identity=\"-1e30\" final=\"r\"",
    "reduce-rows f32 max map=\"abs(x - y)\" inputs=f32,f32",
    "reduce-array f64 sum map=\"x * p0 + i\" params=f64 final=\"r / f64(n)\"",
    "reduce-array i64 combine=\"a + b\" identity=\"p0\" params=i64",
    "reduce-rows f16 sum map=\"x + y + z + w > 0\" inputs=f16,f16,f16,f16",
    /* histograms: their bin rules (signed, unsigned, float range in f32
     * and in f64, map) */
    "histogram i32 bins=256", "histogram u64 bins=200000",
    "histogram f32 bins=65536 counts=u64", "histogram f64 bins=255 counts=u64",
    "histogram f16 bins=100 map=\"i32(x * p0)\" params=f32"};
  for (size_t k = 0; k < WG_COUNT_OF(expression_specs); k++) {
    wg_spec spec;
    if (wg_spec_parse(ctx, &spec, expression_specs[k]) != WG_OK) continue;
    spec.arch = 90;
    char canon[512];
    check(wg_spec_format(canon, sizeof canon, &spec) < (int)sizeof canon,
          "set-up: an expression spec does not format");
    set_canonical(canon);
    learn_source(&spec, LEARN_SPEC);
    set_canonical("");
  }
  size_t at = 0;
  check(lex(wg_expr_helpers(), LEARN, &at) == NULL, "set-up: the expression helpers "
        "do not lex");
  /* Every built-in template, as written: a kernel family the list does not
   * reach (an expression's) is made from these too. */
  for (size_t k = 0; k < wg_embedded_template_count; k++) {
    size_t at = 0;
    const char *why = lex(wg_embedded_templates[k].text, LEARN, &at);
    if (why) fprintf(stderr, "fuzz_spec: set-up: template %s: %s at %zu\n",
                     wg_embedded_templates[k].name, why, at);
    check(!why, "set-up: a template does not lex");
  }
  /* The checks can fail: text that no generator prints is caught. */
  static const char *const foreign[] = {
    "int system;", "wg_warp_reduce_evil_name", "x = \"f32\";", "a \\ b", "a $ b",
    "/* `rm` */", "1g", "a @ b", "/* unclosed"};
  for (size_t k = 0; k < WG_COUNT_OF(foreign); k++) {
    size_t at;
    check(lex(foreign[k], CHECK, &at) != NULL, "set-up: the lexer passes foreign text");
  }
  /* What the expression renderer prints (fuzz_expr.c checks that it
   * prints nothing else). */
  for (size_t k = 0; k < WG_COUNT_OF(wg_fuzz_expr_names); k++)
    set_add(&identifiers, wg_fuzz_expr_names[k], strlen(wg_fuzz_expr_names[k]));
}

/* --- one input ------------------------------------------------------------- */

/* The text of spec, canonical; aborts when it has none. Freed by the caller. */
static char *format(const wg_spec *spec) {
  int n = wg_spec_format(NULL, 0, spec);
  check(n > 0, "an accepted spec does not format");
  char *text = malloc((size_t)n + 1);
  check(text != NULL, "out of memory");
  check(wg_spec_format(text, (size_t)n + 1, spec) == n, "format measures one length, "
        "writes another");
  check((int)strlen(text) == n, "format's length is not the text's");
  /* Cut short, it writes a prefix and still says the whole length. */
  char cut[16];
  size_t size = (size_t)n % sizeof cut;
  check(wg_spec_format(cut, size, spec) == n, "a cut format says another length");
  check(size == 0 || (strlen(cut) == size - 1 && memcmp(cut, text, size - 1) == 0),
        "a cut format is not a prefix");
  return text;
}

static char *source_of(wg_spec spec) {
  if (!spec.arch) spec.arch = 90; /* never ask for a device */
  char *src;
  int rc = wg_source(ctx, &src, &spec);
  if (rc) fprintf(stderr, "wg_source: %s\n", wg_errmsg(ctx));
  check(rc == WG_OK, "an accepted spec has no source");
  check(src != NULL && *wg_errmsg(ctx) == '\0', "a source with a message");
  return src;
}

/* Letters, digits, '_' and '.': what continues a name or a number. */
static bool word_char(char c) {
  return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') || c == '_' ||
         c == '.';
}

/* Whether word occurs in text with no name or number character on either
 * side. */
static bool stands_alone(const char *text, const char *word) {
  const size_t n = strlen(word);
  for (const char *at = strstr(text, word); at; at = strstr(at + 1, word))
    if ((at == text || !word_char(at[-1])) && !word_char(at[n])) return true;
  return false;
}

/* Whether word is a number as the source prints one (expr.c's
 * render_literal: %.9g for f32, %.17g for f64, ".0" where that has
 * neither a point nor an exponent): printed from the value, it may equal
 * the input's spelling of it (19103230.0), which is no paste. */
static bool printer_spelling(const char *word) {
  char *end;
  const double v = strtod(word, &end);
  if (end == word || *end || word[0] == '-' || word[0] == '+') return false;
  for (int prec = 9; prec <= 17; prec += 8) {
    if (prec == 9 && !(fabs(v) <= FLT_MAX)) continue; /* no f32 (and no UB converting) */
    char buf[64];
    snprintf(buf, sizeof buf, "%.*g", prec, prec == 9 ? (double)(float)v : v);
    if (!strpbrk(buf, ".e")) strcat(buf, ".0");
    if (strcmp(buf, word) == 0) return true;
  }
  return false;
}

static void accepted(const char *text, const wg_spec *spec) {
  check(wg_spec_validate(ctx, spec) == WG_OK, "an accepted spec does not validate");
  char *canon = format(spec);
  check(wg_fuzz_printable(canon) && !strstr(canon, "  ") && canon[0] != ' ',
        "the canonical text is not printable or has stray spaces");
  wg_spec again;
  int rc = wg_spec_parse(ctx, &again, canon);
  if (rc) fprintf(stderr, "canonical '%s': %s\n", canon, wg_errmsg(ctx));
  check(rc == WG_OK, "the canonical text does not parse");
  char *canon2 = format(&again);
  if (strcmp(canon, canon2)) fprintf(stderr, "'%s' -> '%s'\n", canon, canon2);
  check(strcmp(canon, canon2) == 0, "format is not a fixed point");
  check(wg_spec_resolve_variant(spec) == wg_spec_resolve_variant(&again),
        "the canonical text resolves auto differently");
  /* Expressions are kept once per context as canonical text: the input and
   * its canonical text share them, and a parsed spec is already canonical
   * (the kernel table compares specs field by field). */
  check(spec->map == again.map && spec->combine == again.combine &&
            spec->identity == again.identity && spec->final == again.final,
        "the expressions are not interned once");
  wg_spec canonical_spec;
  check(wg_spec_canonical(ctx, &canonical_spec, spec) == WG_OK &&
            canonical_spec.map == spec->map && canonical_spec.combine == spec->combine &&
            canonical_spec.identity == spec->identity &&
            canonical_spec.final == spec->final,
        "a parsed spec is not canonical");

  char *src = source_of(*spec), *src2 = source_of(again);
  check(strcmp(src, src2) == 0, "the canonical text gives other source");
  char name[256];
  wg_spec named = *spec;
  if (!named.arch) named.arch = 90;
  check(wg_kernel_name(name, sizeof name, &named) > 0 && strstr(src, name),
        "the source lacks the kernel name");
  set_canonical(canon);
  size_t at = 0;
  const char *why = lex(src, CHECK, &at);
  if (why) {
    size_t from = at > 60 ? at - 60 : 0;
    fprintf(stderr, "canonical '%s'\nsource at %zu: '%.24s' in ...%.120s...\n", canon, at,
            src + at, src + from);
  }
  check(!why, why ? why : "");
  /* A word of the input that is not part of the canonical text (an
   * alternative spelling, a value written another way) never stands in the
   * source as a word of its own (the header comment quotes the canonical
   * text). Short words (a number, "sum") may, and so may words of
   * punctuation alone (a run of unary minus signs is also the rule of
   * dashes that heads a section of the templates' comments); inside a
   * longer word ("000000" in "1000000") is not a word of its own. Nor is
   * a canonical core between operator characters: "-2147483647" written
   * as a minus then 2147483647 prints as "- 2147483647", and the
   * conversions' clamps hold "(-2147483647 - 1)" whatever the input.
   * Nor is a number spelled as the source prints it (printer_spelling),
   * alone or as such a core. */
  for (const char *p = text; *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    const char *start = p;
    bool alnum = false;
    for (; *p && *p != ' ' && *p != '\t' && *p != '\n'; p++)
      alnum = alnum || (word_char(*p) && *p != '_' && *p != '.');
    size_t n = (size_t)(p - start);
    if (n < 6 || !alnum) continue;
    char *word = strndup(start, n);
    check(word != NULL, "out of memory");
    const char *core = word;
    size_t core_n = n;
    while (core_n && !word_char(*core)) core++, core_n--;
    while (core_n && !word_char(core[core_n - 1])) core_n--;
    char *core_word = strndup(core, core_n);
    check(core_word != NULL, "out of memory");
    const bool canonical_core =
        core_n < n && (core_n < 6 || strstr(canon, core_word) || printer_spelling(core_word));
    check(canonical_core || strstr(canon, word) || printer_spelling(word) ||
              !stands_alone(src, word),
          "a word of the input that is not canonical is in the source");
    free(core_word);
    free(word);
  }
  wg_free(src);
  wg_free(src2);
  free(canon);
  free(canon2);
}

static void rejected(int rc, size_t len) {
  check(rc == WG_ESPEC, "a failure other than WG_ESPEC");
  const char *msg = wg_errmsg(ctx);
  check(*msg != '\0', "a failure without a message");
  if (!wg_fuzz_printable(msg)) {
    fprintf(stderr, "message: ");
    for (const char *c = msg; *c; c++)
      fprintf(stderr, *c >= 32 && *c < 127 ? "%c" : "\\x%02x", (unsigned char)*c);
    fprintf(stderr, "\n");
  }
  check(wg_fuzz_printable(msg), "a message with a byte that is not printable");
  check(strlen(msg) <= 2 * len + 1024, "a message that grows faster than the input");
}

/* libFuzzer calls this once before any input, outside the time limit of
 * an input (the set-up makes the source of every listed spec); replay.c
 * does not, so the first input calls it. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  if (!ready) {
    set_up();
    wg_context_destroy(ctx);
    ctx = NULL;
    ready = true;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  LLVMFuzzerInitialize(NULL, NULL);
  if (size > MAX_INPUT) return 0;
  char text[MAX_INPUT + 1];
  memcpy(text, data, size);
  text[size] = '\0';
  input_text = text;

  ctx = new_context();
  wg_spec spec, untouched;
  memset(&spec, 0xa5, sizeof spec);
  untouched = spec;
  int rc = wg_spec_parse(ctx, &spec, text);
  /* Without a context: the same answer and no message kept, or WG_EINVAL
   * where the spec needs a context to own its text (expressions). */
  wg_spec quiet;
  int quiet_rc = wg_spec_parse(NULL, &quiet, text);
  check(quiet_rc == rc || quiet_rc == WG_EINVAL, "a NULL context changes the answer");
  if (rc == WG_OK) {
    accepted(text, &spec);
  } else {
    check(memcmp(&spec, &untouched, sizeof spec) == 0, "a failed parse wrote the spec");
    rejected(rc, strlen(text));
  }
  input_text = NULL;
  wg_context_destroy(ctx);
  ctx = NULL;
  return 0;
}
