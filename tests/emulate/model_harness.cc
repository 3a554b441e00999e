// model_harness.cc - the operator model a reduce-array spec renders (its prelude,
// model.inc), run on the host: elements mapped, folded in random orders,
// finalized, checked against tests/oracle.c. Run by check_model.sh.
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
      // fold: map, then random pairings keeping order (adjacent merges)
      std::vector<wg_acc> acc;
      for (uint64_t i = 0; i < n; i++) acc.push_back(wg_map(in[i], (long long)i));
      while (acc.size() > 1) {
        size_t k = rng() % (acc.size() - 1);
        acc[k] = wg_combine(acc[k], acc[k + 1]);
        acc.erase(acc.begin() + k + 1);
      }
      wg_acc r = acc.empty() ? wg_identity() : wg_combine(wg_identity(), acc[0]);
      wg_params p{}; p.p[0].f64 = 1.0;
      wg_out got = wg_finalize(r, n, p);
      wg_oracle want;
      wg_oracle_reduce(&want, (wg_type)type, (wg_operator)op, in.data(), 0, n, NULL, 0);
      char why[256];
      if (want.must_fail) continue;
      if (!wg_oracle_check(&want, &got, why, sizeof why)) { printf("type %d op %d n=%llu nan=%d: %s\n", type, op, (unsigned long long)n, nanmode, why); fails++; }
    }
  }
  return fails != 0;
}
