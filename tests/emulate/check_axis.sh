#!/bin/bash
# check_axis.sh - runs the reduce-axis kernel (templates/axis_reduce.cu) on
# the host, without a GPU: for each spec below, `warpgen source` compiled
# with g++ between axis_shim.h (WG_BLOCK threads a block, blocks one after
# another) and axis_harness.cc, which sweeps the launch arguments (tile
# widths, 16-byte and element loads, splits, small grids) over strided
# views, negative strides included, and checks every output against the
# oracle, the guard after the outputs and the workspace's tickets.
# usage: tests/emulate/check_axis.sh BUILD_DIR [SEED]
# AXIS_MUTATION='sed script' edits the kernel first (e.g. 's/p < split/p + 1 < split/'):
# the check must then fail, which shows that it can.
set -euo pipefail
build=${1:?usage: check_axis.sh BUILD_DIR [SEED]}
seed=${2:-$RANDOM}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WARPGEN_CACHE=off
cuda=${CUDA_PATH:-/usr/local/cuda}
for f in tests/oracle.c tests/oracle_warp.c; do
  gcc -std=c11 -D_GNU_SOURCE -O1 -c -I"$root/include" -I"$root/tests" "$root/$f" \
    -o "$work/$(basename "$f" .c).o"
done
# (type, operator) as wg_type / wg_operator values and spec words: f32, f64
# (2 and 4 columns a 16-byte load), i32, i64; the operators with scalar and
# struct accumulators.
cases=("2 1 f32 sum" "3 1 f64 sum" "4 1 i32 sum" "6 7 i64 xor" "2 8 f32 argmin"
       "3 9 f64 argmax" "2 11 f32 var" "4 16 i32 logsumexp" "7 17 u64 count_nonzero"
       "2 15 f32 norminf")
fails=0 ran=0
for c in "${cases[@]}"; do
  [ -n "${AXIS_ONLY:-}" ] && [[ "$c" != *"$AXIS_ONLY"* ]] && continue # e.g. "f32 sum"
  set -- $c
  # Blocks of 32 threads: the kernel is written for any WG_BLOCK, and 256
  # host threads meeting at every barrier are slow on a small machine.
  "$build/warpgen" source "reduce-axis $3 $4" |
    sed 's/^wg_reduce_axis_[a-z0-9_]*(/emu_kernel(/; s/^#define WG_BLOCK [0-9]*/#define WG_BLOCK 32/' \
      >"$work/kernel.inc"
  [ -n "${AXIS_MUTATION:-}" ] && sed -i -e "$AXIS_MUTATION" "$work/kernel.inc"
  g++ -std=c++20 -O1 -w -pthread -I"$work" -I"$root/tests" -I"$root/tests/emulate" \
    -I"$root/include" "$root/tests/emulate/axis_harness.cc" "$work/oracle.o" \
    "$work/oracle_warp.o" "$build/libwarpgen.a" -L"$cuda/lib64" -ldl -lpthread -lm \
    -o "$work/h"
  ran=$((ran + 1))
  "$work/h" "$1" "$2" "$seed" || fails=$((fails + 1))
done
echo "check_axis: $ran specs, $fails failed (seed $seed)"
[ "$fails" -eq 0 ]
