/*
 * util.c - the small string helpers every stage uses: a growable buffer
 * that remembers an allocation failure, so callers check once at the end.
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
