/*
 * template.c - the templates built into the library and strict ${key}
 * substitution over them.
 *
 * Strict means: a ${key} with no value, a "${" that is never closed and a
 * template that does not exist are errors that name the key and the
 * template, so a typo in a template can never reach NVRTC as broken code.
 * "$" not followed by "{" is ordinary text. Templates read from a folder
 * must be regular files of at most WG_TEMPLATE_MAX_BYTES without NUL bytes.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A template is source text of a few kilobytes; anything this large is a
 * mistake (or /dev/zero behind a link), not a template. */
#define WG_TEMPLATE_MAX_BYTES (1u << 20)

/* Reads the template file at path. Only a regular file is read: O_NONBLOCK
 * keeps the open of a FIFO from waiting for a writer, and the fstat turns
 * away FIFOs, devices and folders before any read. Symbolic links are
 * followed (a template folder may link its files from elsewhere); what
 * they lead to must be a regular file too. A NUL byte would silently cut
 * the text short, so it is an error that names its offset. */
static int read_file(wg_context *ctx, char **out, const char *path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return wg_fail(ctx, WG_ETEMPLATE, "template '%s': cannot open: %s", path,
                   strerror(errno));
  struct stat st;
  int rc = WG_OK;
  if (fstat(fd, &st) != 0)
    rc = wg_fail(ctx, WG_ETEMPLATE, "template '%s': %s", path, strerror(errno));
  else if (!S_ISREG(st.st_mode))
    rc = wg_fail(ctx, WG_ETEMPLATE, "template '%s': not a regular file", path);
  else if (st.st_size > WG_TEMPLATE_MAX_BYTES)
    rc = wg_fail(ctx, WG_ETEMPLATE, "template '%s': larger than %u bytes", path,
                 WG_TEMPLATE_MAX_BYTES);
  /* One byte more than the cap shows a file that grew past it meanwhile. */
  size_t cap = WG_TEMPLATE_MAX_BYTES + 1, len = 0;
  char *text = rc ? NULL : malloc(cap + 1);
  if (!rc && !text) rc = wg_fail(ctx, WG_ENOMEM, "out of memory reading '%s'", path);
  while (!rc && len < cap) {
    ssize_t n = read(fd, text + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) rc = wg_fail(ctx, WG_ETEMPLATE, "template '%s': read error: %s", path,
                            strerror(errno));
    if (n <= 0) break;
    len += (size_t)n;
  }
  close(fd);
  if (!rc && len > WG_TEMPLATE_MAX_BYTES)
    rc = wg_fail(ctx, WG_ETEMPLATE, "template '%s': larger than %u bytes", path,
                 WG_TEMPLATE_MAX_BYTES);
  const char *nul = rc ? NULL : memchr(text, '\0', len);
  if (nul)
    rc = wg_fail(ctx, WG_ETEMPLATE, "template '%s': a NUL byte at offset %zu", path,
                 (size_t)(nul - text));
  if (rc) {
    free(text);
    return rc;
  }
  text[len] = '\0';
  *out = text;
  return WG_OK;
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
