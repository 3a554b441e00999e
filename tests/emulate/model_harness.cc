// model_harness.cc - the operator model a reduce-array spec renders (its prelude,
// model.inc), run on the host: elements mapped, folded in random orders,
// finalized, checked against tests/oracle.c; where the operator has a fold of
// a lane's values (WG_FOLD_VALUES), whole runs of 32 folded at once too. Run by
// check_model.sh.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <random>
#include "model_shim.h"
#include "model.inc"
#include "oracle.h"
int main(int argc, char **argv) {
  int type = atoi(argv[1]), op = atoi(argv[2]);
  int fails = 0;
  std::mt19937_64 rng(atoi(argv[3]));
  for (uint64_t n : {0, 1, 2, 3, 17, 1000, 4099}) {
    for (int nanmode = 0; nanmode < 3; nanmode++) {
      std::vector<wg_elem> in(n + 1);
      wg_oracle_fill((wg_type)type, (wg_operator)op, in.data(), n, rng());
      if (nanmode && n && type <= 3) wg_oracle_set((wg_type)type, in.data(), rng() % n, nanmode == 1 ? NAN : INFINITY);
      wg_oracle want;
      wg_oracle_reduce(&want, (wg_type)type, (wg_operator)op, in.data(), 0, n, NULL, 0);
      if (want.must_fail) continue;
      // Folds the accumulators by random adjacent merges (order kept),
      // finalizes and checks.
      auto check = [&](std::vector<wg_acc> acc, const char *how) {
        while (acc.size() > 1) {
          size_t k = rng() % (acc.size() - 1);
          acc[k] = wg_combine(acc[k], acc[k + 1]);
          acc.erase(acc.begin() + k + 1);
        }
        wg_acc r = acc.empty() ? wg_identity() : wg_combine(wg_identity(), acc[0]);
        wg_params p{}; p.p[0].f64 = 1.0;
        wg_out got = wg_finalize(r, n, p);
        char why[256];
        if (!wg_oracle_check(&want, &got, why, sizeof why)) {
          printf("type %d op %d n=%llu nan=%d %s: %s\n", type, op, (unsigned long long)n, nanmode, how, why);
          fails++;
        }
      };
      std::vector<wg_acc> acc;
      for (uint64_t i = 0; i < n; i++) acc.push_back(wg_map(in[i], (long long)i));
      check(acc, "map+combine");
#if WG_FOLD_VALUES
      // The row kernels' way: whole passes of values folded at once
      // (wg_fold_values, 32 a lane for rows of 1024 f32), the rest mapped.
      constexpr int N = 32;
      acc.clear();
      uint64_t i = 0;
      for (; i + N <= n; i += N) {
        wg_fold_value v[N];
        for (int j = 0; j < N; j++) v[j] = wg_value(in[i + j], (long long)(i + j));
        acc.push_back(wg_fold_values(v));
      }
      for (; i < n; i++) acc.push_back(wg_map(in[i], (long long)i));
      check(acc, "fold");
#endif
    }
  }
  return fails != 0;
}
