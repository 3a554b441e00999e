/*
 * oracle_axis.c - the oracle of reductions over axes of a strided N-d
 * array (wg_reduce_axis): the array's elements gathered into contiguous
 * rows, one row per output, which the row oracle (oracle.c) then checks.
 * Gathering by plain index arithmetic keeps this independent of the
 * library's merging of dimensions.
 */
#include "oracle.h"

#include <string.h>

bool wg_oracle_axis_gather(void *dst, const void *base, size_t size, int ndim,
                           const int64_t *shape, const int64_t *strides, const int *axes,
                           int naxes, uint64_t *rows, uint64_t *cols) {
  if (ndim < 1 || ndim > WG_MAX_DIMS || naxes < 1 || naxes > ndim) return false;
  bool reduced[WG_MAX_DIMS] = {false};
  for (int a = 0; a < naxes; a++) {
    if (axes[a] < 0 || axes[a] >= ndim || reduced[axes[a]]) return false;
    reduced[axes[a]] = true;
  }
  /* The kept dimensions first, then the reduced ones, each in order: the
   * row-major walk over that order visits row q's elements in order. */
  int order[WG_MAX_DIMS], n = 0;
  uint64_t r = 1, c = 1;
  for (int d = 0; d < ndim; d++)
    if (!reduced[d]) order[n++] = d, r *= (uint64_t)shape[d];
  for (int d = 0; d < ndim; d++)
    if (reduced[d]) order[n++] = d, c *= (uint64_t)shape[d];
  *rows = r;
  *cols = c;
  if (!dst || r * c == 0) return true;
  int64_t idx[WG_MAX_DIMS] = {0};
  const unsigned char *b = base;
  unsigned char *o = dst;
  for (uint64_t e = 0; e < r * c; e++) {
    int64_t off = 0;
    for (int d = 0; d < ndim; d++) off += idx[d] * strides[d];
    memcpy(o + e * size, b + off * (int64_t)size, size);
    for (int k = ndim - 1; k >= 0; k--) { /* the next index, last order first */
      const int d = order[k];
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return true;
}
