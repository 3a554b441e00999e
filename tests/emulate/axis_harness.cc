// axis_harness.cc - runs a reduce-axis kernel (kernel.inc, from `warpgen
// source`, its entry renamed emu_kernel) on the host over many launch
// arguments, a superset of those src/fam_axis.c picks (every tile width,
// both load kinds, splits, grids smaller than the work), on random strided
// views, and checks every output against the CPU oracle (tests/oracle.h).
// usage: axis_harness TYPE OP SEED   (wg_type and wg_operator values)
#include "axis_shim.h"
#include "kernel.inc"
#include "oracle.h"
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <functional>

static int failures = 0, runs = 0;

// WG_BLOCK threads kept for the whole run: each block starts them at one
// barrier and waits for them at another.
struct emu_pool {
  std::barrier<> start{WG_BLOCK + 1}, done{WG_BLOCK + 1}, block{WG_BLOCK};
  std::vector<std::thread> threads;
  std::function<void()> body;
  bool quit = false;
  emu_pool() {
    emu_block_bar = &block;
    for (unsigned t = 0; t < WG_BLOCK; t++)
      threads.emplace_back([this, t] {
        threadIdx.x = t;
        for (;;) {
          start.arrive_and_wait();
          if (quit) return;
          body();
          done.arrive_and_wait();
        }
      });
  }
  void run_block(unsigned b) {
    blockIdx.x = b;
    start.arrive_and_wait();
    done.arrive_and_wait();
  }
  ~emu_pool() {
    quit = true;
    start.arrive_and_wait();
    for (auto &th : threads) th.join();
  }
};
static emu_pool *pool_threads;

static void launch(unsigned grid, const void *in, unsigned long long outer,
                   unsigned long long len, unsigned long long inner, long long so,
                   long long sl, long long si, void *out, unsigned tx, unsigned vec,
                   unsigned split, unsigned long long chunk, unsigned char *ws) {
  wg_params params;
  memset(&params, 0, sizeof params);
  params.p[0].f64 = 1.0; // var/std's correction
  gridDim.x = grid;
  pool_threads->body = [&] {
    emu_kernel((const wg_elem *)in, outer, len, inner, so, sl, si, (wg_out *)out, tx, vec,
               split, chunk, params, ws);
  };
  for (unsigned b = 0; b < grid; b++) pool_threads->run_block(b);
}

int main(int argc, char **argv) {
  const wg_type type = (wg_type)atoi(argv[1]);
  const wg_operator op = (wg_operator)atoi(argv[2]);
  const uint64_t seed = strtoull(argv[3], nullptr, 0);
  const size_t size = sizeof(wg_elem), osize = sizeof(wg_out);
  const int vecn = 16 / (int)size;
  emu_pool threads_of_a_block;
  pool_threads = &threads_of_a_block;
  std::vector<unsigned char> pool(size * 200000 + 64), ws(256 * 1024);
  wg_oracle_fill(type, op, pool.data(), pool.size() / size, seed);
  wg_scalar p0;
  p0.f64 = 1.0;
  struct shape { long long outer, len, inner; };
  const shape shapes[] = {{1, 1, 1}, {1, 0, 5}, {3, 7, 8}, {2, 33, 40}, {1, 300, 3},
                          {5, 9, 1}, {1, 1000, 16}, {4, 64, 257}};
  for (const shape &s : shapes)
    for (int flip = 0; flip < 4; flip += 3)
      for (int pad = 0; pad < 2; pad++) {
        // Layout: (outer, len, inner) contiguous with `pad` extra per inner
        // run; flip bit 0 walks len backwards, bit 1 outer.
        const long long si = 1, sl = s.inner + pad * vecn, so = sl * (s.len ? s.len : 1);
        long long origin = 0;
        long long sl_ = sl, so_ = so;
        if ((flip & 1) && s.len > 1) { origin += (s.len - 1) * sl; sl_ = -sl; }
        if ((flip & 2) && s.outer > 1) { origin += (s.outer - 1) * so; so_ = -so; }
        const long long span = (s.outer - 1) * so + (s.len ? s.len - 1 : 0) * sl + s.inner;
        if ((origin + 1 + span) * (long long)size > (long long)pool.size()) continue;
        const unsigned char *base = pool.data() + origin * size;
        const unsigned long long cols = s.outer * s.inner;
        // Gather the rows for the oracle.
        std::vector<unsigned char> rows(cols * s.len * size + 1);
        for (long long o = 0; o < s.outer; o++)
          for (long long j = 0; j < s.inner; j++)
            for (long long k = 0; k < s.len; k++)
              memcpy(&rows[((o * s.inner + j) * s.len + k) * size],
                     base + (o * so_ + k * sl_ + j * si) * (long long)size, size);
        const bool vec_ok = s.inner % vecn == 0 && so_ % vecn == 0 && sl_ % vecn == 0 &&
                            (uintptr_t)base % 16 == 0;
        for (unsigned tx : {1u, 4u, 8u, (unsigned)WG_BLOCK})
          for (unsigned vec = 0; vec < (vec_ok ? 2u : 1u); vec++)
            for (unsigned split : {1u, 3u}) {
              const unsigned cv = vec ? vecn : 1;
              const unsigned long long tiles = (cols + tx * cv - 1) / (tx * cv);
              if (split > 1 && tiles * split * tx * cv > 8192) continue;
              const unsigned long long chunk = split > 1 ? (s.len + split - 1) / split : s.len;
              for (unsigned grid : {2u, 12u}) {
                const unsigned g = grid > tiles * split ? (unsigned)(tiles * split) : grid;
                if (g == 0) continue;
                std::vector<unsigned char> out(cols * osize + 64, 0xa7);
                memset(ws.data(), 0, 8192);
                launch(g, base, s.outer, s.len, s.inner, so_, sl_, si, out.data(), tx, vec,
                       split, chunk, ws.data());
                runs++;
                bool guard_ok = true;
                for (size_t b = cols * osize; b < out.size(); b++) guard_ok &= out[b] == 0xa7;
                bool tickets_ok = true;
                for (int b = 0; b < 8192; b++) tickets_ok &= ws[b] == 0;
                wg_oracle_report rep;
                wg_oracle_report_init(&rep);
                if (s.len == 0 && (op == WG_OP_ARGMIN || op == WG_OP_ARGMAX || op == WG_OP_NORMINF)) continue;
                wg_oracle_rows_check(&rep, type, op, rows.data(), cols, s.len, &p0, 0,
                                     out.data());
                if (rep.mismatches || !guard_ok || !tickets_ok) {
                  if (failures++ < 10)
                    printf("FAIL type %d op %d shape (%lld, %lld, %lld) strides (%lld, %lld, "
                           "%lld) tx %u vec %u split %u grid %u: %s%s%s\n", type, op, s.outer,
                           s.len, s.inner, so_, sl_, si, tx, vec, split, g, rep.first,
                           guard_ok ? "" : " [wrote past the end]",
                           tickets_ok ? "" : " [tickets not reset]");
                }
              }
            }
      }
  printf("axis_harness type %d op %d: %d runs, %d failed\n", type, op, runs, failures);
  return failures ? 1 : 0;
}
