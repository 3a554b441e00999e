/*
 * nvrtc.c - NVRTC, found without loading it and loaded on first compile.
 *
 * Loading libnvrtc (about 110 MB) costs more than everything else a
 * warm-cache process does, so it happens only when something must be
 * compiled or NVRTC must be asked a question (its version, its
 * architectures). The disk cache still has to know which NVRTC would
 * compile, so finding the file is separate from loading it:
 *
 *   found    the file that would be loaded: the first of WARPGEN_NVRTC (a
 *            file or a folder; nothing else is tried when it is set), then
 *            lib64/ and lib/ under CUDA_PATH, CUDA_HOME, the toolkit the
 *            library was built with and /usr/local/cuda, then each folder
 *            of LD_LIBRARY_PATH. Each folder offers libnvrtc.so.MAJOR (the
 *            CUDA major warpgen was built against), then libnvrtc.so. Only
 *            when none exists is the system's own search (ldconfig) asked,
 *            by loading the library: the one case where keying loads NVRTC.
 *   identity the real file's name (it carries the version: libnvrtc.so.13,
 *            libnvrtc.so.12.4.127), its size and its modification time in
 *            seconds. Not its folder or inode: a cache filled on one machine
 *            serves another that installed the same NVRTC elsewhere.
 *   loaded   dlopen of the real path, then the entry points into one table.
 *
 * Both steps run once per process under pthread_once; the results are
 * read-only afterwards (with driver.c's table, the library's only global
 * state). A file replaced between the two steps (an upgrade while the
 * process runs) is refused at load, so a binary from the new NVRTC is never
 * stored under the old one's key; a process that loaded NVRTC keeps the
 * copy it mapped, under the identity it keyed on.
 */
#include "nvrtc_api.h"

#include <cuda.h> /* CUDA_VERSION: the NVRTC major to look for */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef WG_CUDA_ROOT
#define WG_CUDA_ROOT "/usr/local/cuda"
#endif

/* Where each entry of wg_nvrtc_api comes from. */
typedef struct nvrtc_entry {
  const char *symbol;
  size_t offset;
} nvrtc_entry;

#define ENTRY(field) {"nvrtc" #field, offsetof(wg_nvrtc_api, field)}

static const nvrtc_entry nvrtc_entries[] = {
    ENTRY(Version),        ENTRY(GetErrorString),    ENTRY(GetNumSupportedArchs),
    ENTRY(GetSupportedArchs), ENTRY(CreateProgram), ENTRY(DestroyProgram),
    ENTRY(CompileProgram), ENTRY(GetPTXSize),        ENTRY(GetPTX),
    ENTRY(GetCUBINSize),   ENTRY(GetCUBIN),          ENTRY(GetProgramLogSize),
    ENTRY(GetProgramLog),
};

#undef ENTRY

static struct {
  pthread_once_t found_once, load_once;
  /* found: written only by find() */
  char soname[32];        /* libnvrtc.so.MAJOR, MAJOR from cuda.h */
  bool found;
  char path[PATH_MAX];    /* real path of the file to load */
  char identity[PATH_MAX + 64];
  struct stat st;         /* of path, when identity was taken */
  void *handle;           /* set by find() only after the system's search */
  char why_missing[1024];
  /* loaded: written only by load() */
  int status;             /* WG_OK or WG_ECOMPILE */
  char why[PATH_MAX + 256];
  wg_nvrtc_api api;
  int major, minor;
  int archs[64];
  int arch_count;
} nvrtc = {.found_once = PTHREAD_ONCE_INIT, .load_once = PTHREAD_ONCE_INIT};

/* --- finding --------------------------------------------------------------- */

/* The identity text of the file whose real path is `real`. */
static int identity_of(char *buf, size_t size, const char *real,
                       const struct stat *st) {
  const char *base = strrchr(real, '/');
  return snprintf(buf, size, "%s size=%lld mtime=%lld", base ? base + 1 : real,
                  (long long)st->st_size, (long long)st->st_mtime);
}

/* Resolves path to a regular file's real path and its stat. */
static bool resolve(const char *path, char real[PATH_MAX], struct stat *st) {
  return path && realpath(path, real) && stat(real, st) == 0 &&
         S_ISREG(st->st_mode);
}

int wg_nvrtc_describe(char *buf, size_t size, const char *path) {
  char real[PATH_MAX];
  struct stat st;
  if (!resolve(path, real, &st)) return WG_ENOTFOUND;
  return identity_of(buf, size, real, &st);
}

/* Takes path as the NVRTC to use when it names a regular file. */
static bool take_file(const char *path) {
  char real[PATH_MAX];
  struct stat st;
  if (!resolve(path, real, &st)) return false;
  memcpy(nvrtc.path, real, sizeof real);
  nvrtc.st = st;
  identity_of(nvrtc.identity, sizeof nvrtc.identity, real, &st);
  nvrtc.found = true;
  return true;
}

static bool take_from_folder(const char *dir, size_t len) {
  char path[PATH_MAX];
  const char *names[] = {nvrtc.soname, "libnvrtc.so"};
  for (size_t i = 0; i < WG_COUNT_OF(names); i++) {
    int n = snprintf(path, sizeof path, "%.*s/%s", (int)len, dir, names[i]);
    if (n > 0 && (size_t)n < sizeof path && take_file(path)) return true;
  }
  return false;
}

static bool take_from_root(const char *root) {
  char dir[PATH_MAX];
  static const char *const subdirs[] = {"lib64", "lib"};
  if (!root || !*root) return false;
  for (size_t i = 0; i < WG_COUNT_OF(subdirs); i++) {
    int n = snprintf(dir, sizeof dir, "%s/%s", root, subdirs[i]);
    if (n > 0 && (size_t)n < sizeof dir && take_from_folder(dir, (size_t)n))
      return true;
  }
  return false;
}

static bool take_from_path_list(const char *list) {
  for (const char *p = list; p && *p;) {
    size_t len = strcspn(p, ":");
    if (len > 0 && take_from_folder(p, len)) return true;
    p += len + (p[len] == ':');
  }
  return false;
}

/* The system's search knows ldconfig's cache, which nothing here can read
 * without loading: load, then ask the loader which file it took. */
static bool take_from_system(void) {
  void *lib = dlopen(nvrtc.soname, RTLD_NOW | RTLD_LOCAL);
  struct link_map *map = NULL;
  if (!lib) return false;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
      take_file(map->l_name)) {
    nvrtc.handle = lib;
    return true;
  }
  dlclose(lib);
  return false;
}

static void find(void) {
  snprintf(nvrtc.soname, sizeof nvrtc.soname, "libnvrtc.so.%d",
           CUDA_VERSION / 1000);
  const char *env = getenv("WARPGEN_NVRTC");
  if (env && *env) {
    struct stat st;
    bool folder = stat(env, &st) == 0 && S_ISDIR(st.st_mode);
    if (folder ? take_from_folder(env, strlen(env)) : take_file(env))
      return;
    snprintf(nvrtc.why_missing, sizeof nvrtc.why_missing,
             "NVRTC was not found: WARPGEN_NVRTC=%s is not %s or a folder "
             "holding it",
             env, nvrtc.soname);
  } else if (take_from_root(getenv("CUDA_PATH")) ||
             take_from_root(getenv("CUDA_HOME")) ||
             take_from_root(WG_CUDA_ROOT) ||
             take_from_root("/usr/local/cuda") ||
             take_from_path_list(getenv("LD_LIBRARY_PATH")) ||
             take_from_system()) {
    return;
  } else {
    snprintf(nvrtc.why_missing, sizeof nvrtc.why_missing,
             "NVRTC (%s) was not found under CUDA_PATH, CUDA_HOME, %s, "
             "/usr/local/cuda, LD_LIBRARY_PATH or the system's library path; "
             "set WARPGEN_NVRTC to the file",
             nvrtc.soname, WG_CUDA_ROOT);
  }
  snprintf(nvrtc.identity, sizeof nvrtc.identity, "none");
}

const char *wg_nvrtc_identity(void) {
  pthread_once(&nvrtc.found_once, find);
  return nvrtc.identity;
}

const char *wg_nvrtc_path(void) {
  pthread_once(&nvrtc.found_once, find);
  return nvrtc.path;
}

/* --- loading --------------------------------------------------------------- */

static int load_fail(const char *fmt, ...) WG_PRINTF(1, 2);
static int load_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(nvrtc.why, sizeof nvrtc.why, fmt, ap);
  va_end(ap);
  return WG_ECOMPILE;
}

static int load_library(void) {
  pthread_once(&nvrtc.found_once, find);
  if (!nvrtc.found) return load_fail("%s", nvrtc.why_missing);
  void *lib = nvrtc.handle;
  if (!lib && !(lib = dlopen(nvrtc.path, RTLD_NOW | RTLD_LOCAL))) {
    const char *err = dlerror();
    return load_fail("NVRTC could not be loaded: %s", err ? err : nvrtc.path);
  }
  /* The file keyed on must be the file loaded: an upgrade in between would
   * store the new NVRTC's binaries under the old one's key. The library
   * stays open: NVRTC may have started threads. */
  struct stat now;
  if (stat(nvrtc.path, &now) != 0 || now.st_size != nvrtc.st.st_size ||
      now.st_mtime != nvrtc.st.st_mtime || now.st_ino != nvrtc.st.st_ino)
    return load_fail("NVRTC at %s changed after this process first used it "
                     "(an upgrade?); restart the process",
                     nvrtc.path);
  for (size_t i = 0; i < WG_COUNT_OF(nvrtc_entries); i++) {
    void *fn = dlsym(lib, nvrtc_entries[i].symbol);
    if (!fn)
      return load_fail("NVRTC at %s lacks %s: it is older than warpgen needs "
                       "(CUDA 11.2)",
                       nvrtc.path, nvrtc_entries[i].symbol);
    *(void **)((char *)&nvrtc.api + nvrtc_entries[i].offset) = fn;
  }
  int n = 0;
  if (nvrtc.api.Version(&nvrtc.major, &nvrtc.minor) != NVRTC_SUCCESS)
    return load_fail("NVRTC at %s: nvrtcVersion failed", nvrtc.path);
  if (nvrtc.api.GetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 ||
      n > (int)WG_COUNT_OF(nvrtc.archs) ||
      nvrtc.api.GetSupportedArchs(nvrtc.archs) != NVRTC_SUCCESS)
    return load_fail("NVRTC at %s did not list its architectures",
                     nvrtc.path);
  nvrtc.arch_count = n;
  return WG_OK;
}

static void load(void) { nvrtc.status = load_library(); }

int wg_nvrtc_load(wg_context *ctx, const wg_nvrtc_api **out) {
  pthread_once(&nvrtc.load_once, load);
  if (nvrtc.status != WG_OK) return wg_fail(ctx, nvrtc.status, "%s", nvrtc.why);
  *out = &nvrtc.api;
  return WG_OK;
}

/* --- what NVRTC says about itself ----------------------------------------- */

int wg_nvrtc_check_arch(wg_context *ctx, int arch) {
  const wg_nvrtc_api *api;
  int rc = wg_nvrtc_load(ctx, &api);
  if (rc) return rc;
  for (int i = 0; i < nvrtc.arch_count; i++)
    if (nvrtc.archs[i] == arch) return WG_OK;
  char list[512];
  size_t used = 0;
  list[0] = '\0';
  for (int i = 0; i < nvrtc.arch_count && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%ssm_%d",
                             i ? ", " : "", nvrtc.archs[i]);
  return wg_fail(ctx, WG_ESPEC,
                 "arch: sm_%d is not supported by this NVRTC; supported: %s",
                 arch, list);
}

int wg_supported_archs(wg_context *ctx, int **out, size_t *count) {
  if (!out || !count)
    return wg_fail(ctx, WG_EINVAL, "wg_supported_archs: NULL output");
  *out = NULL;
  *count = 0;
  const wg_nvrtc_api *api;
  int rc = wg_nvrtc_load(ctx, &api);
  if (rc) return rc;
  size_t bytes = sizeof(int) * (size_t)nvrtc.arch_count;
  int *a = malloc(bytes);
  if (!a) return wg_fail(ctx, WG_ENOMEM, "out of memory");
  memcpy(a, nvrtc.archs, bytes);
  *out = a;
  *count = (size_t)nvrtc.arch_count;
  return WG_OK;
}

int wg_nvrtc_version(wg_context *ctx, int *major, int *minor) {
  if (!major || !minor)
    return wg_fail(ctx, WG_EINVAL, "wg_nvrtc_version: NULL output");
  const wg_nvrtc_api *api;
  int rc = wg_nvrtc_load(ctx, &api);
  if (rc) return rc;
  *major = nvrtc.major;
  *minor = nvrtc.minor;
  return WG_OK;
}
