// model_expr_harness.cc - the model a reduce-array spec with expressions
// renders (its prelude, model.inc: wg_user_map, wg_user_combine,
// wg_user_final and the operator around them), run on the host: elements
// mapped (in the element kernel's form when the spec needs it), folded in
// random orders, finalized, and checked against the same expressions
// computed directly here. -DCASE=k picks the spec; check_model.sh keeps the
// list of spec texts in the same order.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "model_shim.h"
#include "model.inc"

// Per case: the element types X (and Y), the map call, the parameters,
// and the reference over the first n elements.
#if CASE == 0 // reduce-array i32 sum map="x * x + i32(i % 3)"
typedef int32_t X;
typedef int32_t Y;
#define MAP(k) wg_map(x[k], (long long)(k))
static int64_t ref(const X *x, const Y *, uint64_t n, const wg_params &) {
  uint32_t s = 0;
  for (uint64_t i = 0; i < n; i++) s += (uint32_t)x[i] * (uint32_t)x[i] + (uint32_t)(i % 3);
  return (int32_t)s;
}
#elif CASE == 1 // reduce-array i32 combine="max(a, b)" identity="-7" final="i64(r) * p0 + n" params=i64
typedef int32_t X;
typedef int32_t Y;
#define MAP(k) wg_map(x[k], (long long)(k))
static int64_t ref(const X *x, const Y *, uint64_t n, const wg_params &p) {
  int32_t m = -7;
  for (uint64_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
  return (int64_t)((uint64_t)(int64_t)m * (uint64_t)p.p[0].i64 + n);
}
#elif CASE == 2 // reduce-array i64 sum map="x * y + p0 * i + n" inputs=i64,i32 params=i64
typedef long long X;
typedef int32_t Y;
#define MAP(k) wg_map(x[k], (long long)(k), in, (k), (long long)n, params)
static int64_t ref(const X *x, const Y *y, uint64_t n, const wg_params &p) {
  uint64_t s = 0;
  for (uint64_t i = 0; i < n; i++)
    s += (uint64_t)x[i] * (uint64_t)(int64_t)y[i] + (uint64_t)p.p[0].i64 * i + n;
  return (int64_t)s;
}
#elif CASE == 3 // reduce-array u32 argmax map="x % 1000u32"
typedef uint32_t X;
typedef uint32_t Y;
#define MAP(k) wg_map(x[k], (long long)(k))
static int64_t ref(const X *x, const Y *, uint64_t n, const wg_params &) {
  int64_t best = 0;
  for (uint64_t i = 1; i < n; i++)
    if (x[i] % 1000u > x[best] % 1000u) best = (int64_t)i;
  return best;
}
#endif

int main(int argc, char **argv) {
  std::mt19937_64 rng(argc > 1 ? atoi(argv[1]) : 1);
  int fails = 0;
  for (uint64_t n : {1, 2, 3, 17, 1000, 4099}) {
    std::vector<X> xs(n);
    std::vector<Y> ys(n);
    for (auto &v : xs) v = (X)rng();
    for (auto &v : ys) v = (Y)rng();
    const X *x = xs.data();
    wg_params params;
    memset(&params, 0, sizeof params);
    params.p[0].i64 = (long long)(rng() % 2001) - 1000;
#if CASE == 2
    wg_inputs in = {x, ys.data(), nullptr, nullptr};
#endif
    for (int order = 0; order < 3; order++) {
      std::vector<wg_acc> acc;
      for (uint64_t k = 0; k < n; k++) acc.push_back(MAP(k));
      acc.insert(acc.begin() + (long)(rng() % (acc.size() + 1)), wg_identity());
      while (acc.size() > 1) { // random adjacent merges: any fold order
        size_t k = rng() % (acc.size() - 1);
        acc[k] = wg_combine(acc[k], acc[k + 1]);
        acc.erase(acc.begin() + (long)k + 1);
      }
      const int64_t got = (int64_t)wg_finalize(acc[0], n, params);
      const int64_t want = ref(x, ys.data(), n, params);
      if (got != want && fails++ < 5)
        fprintf(stderr, "case %d n=%llu: %lld, want %lld\n", CASE, (unsigned long long)n,
                (long long)got, (long long)want);
    }
  }
  return fails != 0;
}
