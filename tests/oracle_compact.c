/*
 * oracle_compact.c - the CPU oracle of stream compaction (wg_compact):
 * from the input and which elements are kept, the values, indices and
 * count the device must write, compared exactly (compaction moves bits,
 * it computes nothing). Which elements are kept is the caller's answer:
 * the Check suite evaluates the predicate with the expression evaluator
 * (expr_eval.c), the Python tests with torch or numpy, and the spec
 * without a predicate keeps the non-zero elements (wg_oracle_nonzero).
 */
#include "oracle.h"

#include <stdio.h>
#include <string.h>

bool wg_oracle_nonzero(wg_type type, const void *in, uint64_t i) {
  const size_t size = wg_type_size(type);
  uint64_t bits = 0;
  memcpy(&bits, (const unsigned char *)in + i * size, size);
  /* The sign bit alone is -0.0 for floats: zero. */
  const bool is_float = type == WG_F16 || type == WG_BF16 || type == WG_F32 || type == WG_F64;
  if (is_float) bits &= ~(1ull << (size * 8 - 1));
  return bits != 0;
}

uint64_t wg_oracle_compact_count(const unsigned char *keep, uint64_t n) {
  uint64_t count = 0;
  for (uint64_t i = 0; i < n; i++) count += keep[i] != 0;
  return count;
}

void wg_oracle_compact_check(wg_oracle_report *report, wg_type type, const void *in,
                             uint64_t n, const unsigned char *keep, const void *values,
                             const int64_t *indices, uint64_t count,
                             unsigned char poison) {
  const size_t size = wg_type_size(type);
  const uint64_t want = wg_oracle_compact_count(keep, n);
  report->checked++;
  if (count != want) {
    if (report->mismatches++ == 0) {
      report->first_index = 0;
      snprintf(report->first, sizeof report->first, "count: got %llu, want %llu",
               (unsigned long long)count, (unsigned long long)want);
    }
    return;
  }
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (!keep[i]) continue;
    const bool value_ok = !values || memcmp((const unsigned char *)values + k * size,
                                            (const unsigned char *)in + i * size, size) == 0;
    const bool index_ok = !indices || indices[k] == (int64_t)i;
    report->checked++;
    if ((!value_ok || !index_ok) && report->mismatches++ == 0) {
      report->first_index = k;
      snprintf(report->first, sizeof report->first,
               "output %llu: want element %llu (%s)%s", (unsigned long long)k,
               (unsigned long long)i, value_ok ? "its value is right" : "a different value",
               index_ok ? "" : indices ? ", a different index" : "");
    }
    k++;
  }
  /* What lies past the count is left as it was. */
  for (uint64_t j = count; j < n; j++) {
    bool ok = true;
    for (size_t b = 0; values && b < size; b++)
      ok = ok && ((const unsigned char *)values)[j * size + b] == poison;
    for (size_t b = 0; indices && b < 8; b++)
      ok = ok && ((const unsigned char *)(indices + j))[b] == poison;
    if (!ok) {
      if (report->mismatches++ == 0) {
        report->first_index = j;
        snprintf(report->first, sizeof report->first,
                 "output %llu: past the count %llu but written", (unsigned long long)j,
                 (unsigned long long)count);
      }
      return;
    }
  }
}
