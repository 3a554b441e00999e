/*
 * template.c - the templates built into the library and strict ${key}
 * substitution over them.
 *
 * Strict means: a ${key} with no value, a "${" that is never closed and a
 * template that does not exist are errors that name the key and the
 * template, so a typo in a template can never reach NVRTC as broken code.
 * "$" not followed by "{" is ordinary text.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_file(wg_context *ctx, char **out, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return wg_fail(ctx, WG_ETEMPLATE, "template '%s': cannot open: %s", path,
                   strerror(errno));
  wg_buf b = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) wg_buf_append(&b, chunk, n);
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    wg_buf_free(&b);
    return wg_fail(ctx, WG_ETEMPLATE, "template '%s': read error", path);
  }
  if (b.failed) {
    wg_buf_free(&b);
    return wg_fail(ctx, WG_ENOMEM, "out of memory reading template '%s'", path);
  }
  *out = b.data ? b.data : wg_strdup("");
  return *out ? WG_OK : wg_fail(ctx, WG_ENOMEM, "out of memory");
}

int wg_template_load(wg_context *ctx, char **out, const char *name) {
  *out = NULL;
  if (strchr(name, '/'))
    return wg_fail(ctx, WG_ETEMPLATE, "template name '%s' must not contain '/'", name);
  const char *dir = ctx ? ctx->template_dir : NULL;
  if (dir && *dir) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
      return wg_fail(ctx, WG_ETEMPLATE, "template folder path too long");
    return read_file(ctx, out, path);
  }
  for (size_t i = 0; i < wg_embedded_template_count; i++) {
    if (strcmp(wg_embedded_templates[i].name, name) == 0) {
      *out = wg_strdup(wg_embedded_templates[i].text);
      return *out ? WG_OK : wg_fail(ctx, WG_ENOMEM, "out of memory");
    }
  }
  return wg_fail(ctx, WG_ETEMPLATE, "template '%s' is not built into this library",
                 name);
}

static const char *lookup(const wg_template_var *vars, size_t nvars, const char *key,
                          size_t len) {
  for (size_t i = 0; i < nvars; i++)
    if (strlen(vars[i].key) == len && memcmp(vars[i].key, key, len) == 0)
      return vars[i].value;
  return NULL;
}

static unsigned line_of(const char *text, const char *at) {
  unsigned line = 1;
  for (const char *p = text; p < at; p++) line += *p == '\n';
  return line;
}

int wg_template_fill(wg_context *ctx, wg_buf *out, const char *name, const char *text,
                     const wg_template_var *vars, size_t nvars) {
  const char *p = text;
  for (;;) {
    const char *dollar = strstr(p, "${");
    if (!dollar) {
      wg_buf_puts(out, p);
      break;
    }
    wg_buf_append(out, p, (size_t)(dollar - p));
    const char *key = dollar + 2;
    size_t len = strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789_");
    if (key[len] != '}')
      return wg_fail(ctx, WG_ETEMPLATE, "template '%s' line %u: '${%.*s' is not "
                     "closed by '}'", name, line_of(text, dollar), (int)len, key);
    const char *value = lookup(vars, nvars, key, len);
    if (!value)
      return wg_fail(ctx, WG_ETEMPLATE, "template '%s' line %u: unknown key '${%.*s}'",
                     name, line_of(text, dollar), (int)len, key);
    wg_buf_puts(out, value);
    p = key + len + 1;
  }
  return out->failed ? wg_fail(ctx, WG_ENOMEM, "out of memory filling '%s'", name)
                     : WG_OK;
}

int wg_template_render(wg_context *ctx, wg_buf *out, const char *name,
                       const wg_template_var *vars, size_t nvars) {
  char *text;
  int rc = wg_template_load(ctx, &text, name);
  if (rc) return rc;
  rc = wg_template_fill(ctx, out, name, text, vars, nvars);
  free(text);
  return rc;
}
