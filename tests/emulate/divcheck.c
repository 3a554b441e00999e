/*
 * divcheck.c - checks, on the host, the float histogram's quotient
 * (src/fam_hist.c, float_bin): with r = 1 / d correctly rounded and
 * q = t * r, fma(fma(-q, d, t), r, q) equals t / d correctly rounded, bit
 * for bit, for every width d in [2^-100, 2^100] with d * bins finite. Draws
 * widths of every exponent in that range (and significands of all ones,
 * the hard case for a reciprocal), keys t = (x - lo) * bins near each bin
 * edge k * d and at random, in f32 and f64.
 *   usage: divcheck [CASES]   (default 20000000; exit 0 when none differ)
 * Build with -ffp-contract=off (the checks' own arithmetic must round each
 * step): tests/emulate/check_hist.sh does.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) { /* splitmix64 */
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static float f32_width(uint64_t r) {
  const int e = (int)(r % 201) - 100; /* 2^-100 .. 2^100 */
  uint32_t m = (uint32_t)(r >> 8) & 0x7fffffu;
  if ((r >> 40) % 8 == 0) m = 0x7fffffu; /* all ones */
  if ((r >> 40) % 8 == 1) m = 0;         /* a power of two */
  float d = ldexpf(1.0f + (float)m / 8388608.0f, e);
  return d > 0x1p100f ? 0x1p100f : d;
}

static double f64_width(uint64_t r) {
  const int e = (int)(r % 201) - 100;
  uint64_t m = (r >> 8) & ((1ull << 52) - 1);
  if ((r >> 61) == 0) m = (1ull << 52) - 1;
  if ((r >> 61) == 1) m = 0;
  double d = ldexp(1.0 + (double)m / 4503599627370496.0, e);
  return d > 0x1p100 ? 0x1p100 : d;
}

int main(int argc, char **argv) {
  const long cases = argc > 1 ? atol(argv[1]) : 20000000l;
  long bad = 0;
  for (long i = 0; i < cases; i++) {
    const uint64_t r = next(), s = next();
    const int64_t bins = (int64_t)(1 + s % ((s >> 60) < 8 ? 300 : 70000000));
    /* f32 */
    const float d = f32_width(r), fb = (float)bins;
    if (isfinite(d * fb)) {
      const float recip = 1.0f / d;
      float t;
      if ((s >> 33) & 1) { /* near an edge k * d: a few ulps either side */
        const float k = (float)((s >> 34) % (uint64_t)(bins + 1));
        t = k * d;
        const int ulps = (int)((s >> 50) % 7) - 3;
        for (int u = 0; u < abs(ulps); u++) t = nextafterf(t, ulps > 0 ? INFINITY : 0.0f);
      } else {
        t = (float)((double)(s >> 11) / 9007199254740992.0) * d * fb;
      }
      const float want = t / d;
      float q = t * recip;
      q = fmaf(fmaf(-q, d, t), recip, q);
      /* A subnormal t can lose the remainder's bits: its quotient is far
       * below 1, so only its bin (0) must agree. */
      const bool exact = t >= 0x1p-126f ? memcmp(&q, &want, sizeof q) == 0
                                        : (int64_t)q == (int64_t)want;
      if (!exact) {
        if (bad++ < 10)
          printf("f32 differs: t %a d %a bins %lld: %a, want %a\n", t, d, (long long)bins, q,
                 want);
      }
    }
    /* f64 */
    const double dd = f64_width(s ^ r), db = (double)bins;
    if (isfinite(dd * db)) {
      const double recip = 1.0 / dd;
      double t;
      if ((r >> 33) & 1) {
        const double k = (double)((r >> 34) % (uint64_t)(bins + 1));
        t = k * dd;
        const int ulps = (int)((r >> 50) % 7) - 3;
        for (int u = 0; u < abs(ulps); u++) t = nextafter(t, ulps > 0 ? INFINITY : 0.0);
      } else {
        t = ((double)(r >> 11) / 9007199254740992.0) * dd * db;
      }
      const double want = t / dd;
      double q = t * recip;
      q = fma(fma(-q, dd, t), recip, q);
      const bool exact = t >= 0x1p-1022 ? memcmp(&q, &want, sizeof q) == 0
                                        : (int64_t)q == (int64_t)want;
      if (!exact) {
        if (bad++ < 10)
          printf("f64 differs: t %a d %a bins %lld: %a, want %a\n", t, dd, (long long)bins, q,
                 want);
      }
    }
  }
  printf("%s: %ld cases, %ld quotients differ\n", bad ? "FAIL" : "PASS", cases, bad);
  return bad != 0;
}
