/*
 * util.c - the small string helpers every stage uses: a growable buffer
 * that remembers an allocation failure, so callers check once at the end;
 * escaping of user text quoted in messages; strict digit scanning.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *wg_strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

static bool buf_reserve(wg_buf *b, size_t extra) {
  if (b->failed) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p) {
    b->failed = true;
    return false;
  }
  b->data = p;
  b->cap = cap;
  return true;
}

void wg_buf_append(wg_buf *b, const char *s, size_t n) {
  if (!buf_reserve(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void wg_buf_puts(wg_buf *b, const char *s) { wg_buf_append(b, s, strlen(s)); }

void wg_buf_printf(wg_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !buf_reserve(b, (size_t)n)) {
    b->failed = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void wg_buf_free(wg_buf *b) {
  free(b->data);
  *b = (wg_buf){0};
}

void wg_free(void *ptr) { free(ptr); }

/* Printable ASCII passes; everything else (control bytes such as ESC,
 * which would drive the reader's terminal, and bytes >= 0x80) becomes \xNN.
 * Writes at most size - 1 bytes, never cutting an escape in two. */
static size_t escape_into(char *out, size_t size, const char *text, size_t len,
                          bool keep_lines, bool *cut) {
  static const char hex[] = "0123456789abcdef";
  size_t used = 0;
  *cut = false;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    bool plain = (c >= 0x20 && c < 0x7f) || (keep_lines && (c == '\n' || c == '\t'));
    size_t need = plain ? 1 : 4;
    if (used + need >= size) {
      *cut = true;
      break;
    }
    if (plain) {
      out[used++] = (char)c;
    } else {
      out[used++] = '\\';
      out[used++] = 'x';
      out[used++] = hex[c >> 4];
      out[used++] = hex[c & 15];
    }
  }
  if (size) out[used] = '\0';
  return used;
}

const char *wg_escape(char *buf, size_t size, const char *text, size_t len,
                      bool keep_lines) {
  if (!size) return buf;
  if (!text) text = "", len = 0;
  bool cut;
  escape_into(buf, size, text, len, keep_lines, &cut);
  /* Say that something is missing rather than end mid-word silently. */
  if (cut && size > 4) {
    size_t used = escape_into(buf, size - 3, text, len, keep_lines, &cut);
    memcpy(buf + used, "...", 4);
  }
  return buf;
}

bool wg_scan_u64(const char **p, unsigned base, uint64_t *out) {
  const char *s = *p;
  uint64_t v = 0;
  size_t digits = 0;
  for (;; s++, digits++) {
    unsigned d;
    if (*s >= '0' && *s <= '9') d = (unsigned)(*s - '0');
    else if (base == 16 && *s >= 'a' && *s <= 'f') d = (unsigned)(*s - 'a' + 10);
    else if (base == 16 && *s >= 'A' && *s <= 'F') d = (unsigned)(*s - 'A' + 10);
    else break;
    if (v > (UINT64_MAX - d) / base) return false;
    v = v * base + d;
  }
  if (!digits) return false;
  *out = v;
  *p = s;
  return true;
}

/* Interned texts: a list, searched linearly. A context sees a handful of
 * distinct expressions, and each is interned once per spec parse or
 * kernel lookup, so a list beats a table in code for the same speed. */
struct wg_interned {
  struct wg_interned *next;
  size_t len;
  char text[];
};

const char *wg_intern(wg_context *ctx, const char *text, size_t len) {
  for (struct wg_interned *e = ctx->interned; e; e = e->next)
    if (e->len == len && memcmp(e->text, text, len) == 0) return e->text;
  struct wg_interned *e = malloc(sizeof *e + len + 1);
  if (!e) {
    wg_fail(ctx, WG_ENOMEM, "out of memory");
    return NULL;
  }
  e->len = len;
  memcpy(e->text, text, len);
  e->text[len] = '\0';
  e->next = ctx->interned;
  ctx->interned = e;
  return e->text;
}

void wg_intern_free(wg_context *ctx) {
  while (ctx->interned) {
    struct wg_interned *next = ctx->interned->next;
    free(ctx->interned);
    ctx->interned = next;
  }
}
