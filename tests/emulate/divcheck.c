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

/* One case in type T: width d, bins, and the random bits r that pick the
 * key t. Returns 1 when the refined quotient differs from t / d (for a
 * subnormal t, which can lose the remainder's bits and whose quotient is
 * far below 1, when its bin differs). */
#define DIVCHECK(name, T, FMA, NEXTAFTER, MIN_NORMAL)                              \
  static int name(T d, int64_t bins, uint64_t r) {                                \
    const T fb = (T)bins;                                                         \
    if (!isfinite(d * fb)) return 0;                                              \
    const T recip = (T)1 / d;                                                     \
    T t;                                                                          \
    if ((r >> 33) & 1) { /* near an edge k * d: a few ulps either side */        \
      t = (T)((r >> 34) % (uint64_t)(bins + 1)) * d;                              \
      const int ulps = (int)((r >> 50) % 7) - 3;                                  \
      for (int u = 0; u < abs(ulps); u++) t = NEXTAFTER(t, ulps > 0 ? (T)INFINITY : (T)0); \
    } else {                                                                      \
      t = (T)((double)(r >> 11) / 9007199254740992.0) * d * fb;                   \
    }                                                                             \
    const T want = t / d;                                                         \
    T q = t * recip;                                                              \
    q = FMA(FMA(-q, d, t), recip, q);                                             \
    const bool exact = t >= MIN_NORMAL ? memcmp(&q, &want, sizeof q) == 0          \
                                       : (int64_t)q == (int64_t)want;             \
    if (!exact)                                                                   \
      printf(#T " differs: t %a d %a bins %lld: %a, want %a\n", (double)t, (double)d, \
             (long long)bins, (double)q, (double)want);                           \
    return !exact;                                                                \
  }
DIVCHECK(check_f32, float, fmaf, nextafterf, 0x1p-126f)
DIVCHECK(check_f64, double, fma, nextafter, 0x1p-1022)

int main(int argc, char **argv) {
  const long cases = argc > 1 ? atol(argv[1]) : 20000000l;
  long bad = 0;
  for (long i = 0; i < cases && bad < 10; i++) {
    const uint64_t r = next(), s = next();
    const int64_t bins = (int64_t)(1 + s % ((s >> 60) < 8 ? 300 : 70000000));
    bad += check_f32(f32_width(r), bins, s);
    bad += check_f64(f64_width(s ^ r), bins, r);
  }
  printf("%s: %ld cases, %ld quotients differ%s\n", bad ? "FAIL" : "PASS", cases, bad,
         bad ? " (stopped at 10)" : "");
  return bad != 0;
}
