#!/bin/bash
# check_model.sh - checks every operator row's rendered model (identity,
# combine, map, finalize) on the host, without a GPU: for each reduce-array
# spec of f32, f64, i32 and u64, the prelude from `warpgen source` is
# compiled with g++ into model_harness.cc, which folds random inputs (NaNs
# and infinities planted) in random orders and checks against the oracle.
# usage: tests/emulate/check_model.sh BUILD_DIR [SEEDS...]
set -euo pipefail
build=${1:?usage: check_model.sh BUILD_DIR [SEEDS...]}
shift
seeds=("${@:-1 2 3}")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WARPGEN_CACHE=off
cuda=${CUDA_PATH:-/usr/local/cuda}
for f in tests/oracle.c tests/oracle_warp.c; do
  gcc -std=c11 -D_GNU_SOURCE -O1 -c -I"$root/include" -I"$root/tests" "$root/$f" \
    -o "$work/$(basename "$f" .c).o"
done
types=(f16 bf16 f32 f64 i32 u32 i64 u64)
ops=(none sum prod min max and or xor argmin argmax mean var std norm1 norm2 norminf
     logsumexp count_nonzero) # wg_operator order
fails=0 checked=0
for ti in 2 3 4 7; do
  for oi in $(seq 1 17); do
    name=${ops[$oi]}
    src=$("$build/warpgen" source "reduce-array ${types[$ti]} $name" 2>/dev/null) || continue
    awk '/---- element type/{p=1} /#define WG_BLOCK/{p=0} p' <<<"$src" >"$work/model.inc"
    g++ -std=c++17 -O1 -w -I"$work" -I"$root/tests" -I"$root/include" \
      "$root/tests/emulate/model_harness.cc" "$work/oracle.o" "$work/oracle_warp.o" \
      "$build/libwarpgen.a" -L"$cuda/lib64" -lnvrtc -ldl -lpthread -lm \
      -Wl,-rpath,"$cuda/lib64" -o "$work/h"
    for seed in ${seeds[*]}; do
      checked=$((checked + 1))
      "$work/h" "$ti" "$oi" "$seed" || fails=$((fails + 1))
    done
  done
done
echo "check_model: $checked runs, $fails failed"
[ "$fails" -eq 0 ]
