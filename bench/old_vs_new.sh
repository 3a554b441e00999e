#!/usr/bin/env bash
# old_vs_new.sh - the benchmarks of issue 10's streams and rows work against
# this tree's library and against the library before it (commit c5ca647),
# so that one run on a GPU machine shows both:
#   stream_cost   the time per wg_reduce call at 2^10, 2^20, 2^28 and a split
#                 row reduction, and whether 2 and 8 overlapping streams give
#                 the bits of the calls run alone (the old library: not);
#   reduce_bench --rows-extremes
#                 GB/s and the fraction of a plain read ("xread") for f32
#                 sums over 2^26 elements as 2, 4 and 8 columns and
#                 64 x 2^20.
#
# usage: bench/old_vs_new.sh --prepare BUILD BINDIR  (here, no GPU needed)
#        bench/old_vs_new.sh BINDIR [--quick]        (on the GPU machine)
#   --prepare links both programs against BUILD/libwarpgen.a (new) and
#   against c5ca647's libwarpgen.a, built from `git archive` in a temporary
#   folder (old). BINDIR should be an ignored folder (e.g. build-gpu).
set -eu
old_commit=c5ca647
cuda=${CUDA_PATH:-/usr/local/cuda}
link() { # LIBDIR SUFFIX BINDIR
  gcc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -I"$cuda/include" bench/stream_cost.c \
    "$1/libwarpgen.a" -L"$cuda/lib64" -lnvrtc -ldl -lpthread -lm \
    -Wl,-rpath,"$cuda/lib64" -o "$3/stream_cost_$2"
  # reduce_bench checks with this tree's oracle (public calls only).
  "$cuda/bin/nvcc" -arch=sm_90 -O3 -std=c++17 -Iinclude -Itests -o "$3/reduce_bench_$2" \
    bench/reduce_bench.cu tests/oracle.c tests/oracle_warp.c "$1/libwarpgen.a" \
    -L"$cuda/lib64" -lnvrtc -ldl -lpthread
}
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: bench/old_vs_new.sh --prepare BUILD BINDIR}
  bin=${3:?usage: bench/old_vs_new.sh --prepare BUILD BINDIR}
  mkdir -p "$bin"
  link "$build" new "$bin"
  tmp=$(mktemp -d)
  git archive "$old_commit" | tar -x -C "$tmp"
  (cd "$tmp" && meson setup build >/dev/null && ninja -C build libwarpgen.a >/dev/null)
  link "$tmp/build" old "$bin"
  rm -rf "$tmp"
  ls -la "$bin"/stream_cost_* "$bin"/reduce_bench_*
  exit 0
fi
bin=${1:?usage: bench/old_vs_new.sh BINDIR [--quick]}
shift
# The toolkit's NVRTC, wherever this machine keeps it.
if ! ldd "$bin/stream_cost_new" | grep -q 'libnvrtc.*=> /'; then
  nvrtc=$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  export LD_LIBRARY_PATH=$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export WARPGEN_CACHE=off # each compiles its own kernels
out=${OUT:-.}
for v in old new; do
  echo "=== stream_cost, $v ($([ $v = old ] && echo "$old_commit" || echo this tree))"
  "$bin/stream_cost_$v" "$@" || echo "stream_cost_$v failed: $?"
done
for v in old new; do
  echo "=== reduce_bench --rows-extremes, $v"
  "$bin/reduce_bench_$v" --rows-extremes --csv "$out/rows_extremes_$v.csv" "$@" ||
    echo "reduce_bench_$v failed: $?"
done
