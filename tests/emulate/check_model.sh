#!/bin/bash
# check_model.sh - checks every operator row's rendered model (identity,
# combine, map, finalize) on the host, without a GPU: for each reduce-array
# spec of f32, f64, i32 and u64, the prelude from `warpgen source` is
# compiled with g++ into model_harness.cc, which folds random inputs (NaNs
# and infinities planted) in random orders and checks against the oracle;
# then a few specs with expressions (map=, combine=, final=, two inputs,
# parameters) through model_expr_harness.cc.
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
# The operators in wg_operator order, read from the public header, so that
# a new operator (a table row) is checked here without an edit.
mapfile -t ops < <(sed -n '/^typedef enum {/,/} wg_operator;/p' "$root/include/warpgen.h" |
  sed -n 's/^  WG_OP_\([A-Z0-9_]*\).*/\1/p' | tr 'A-Z' 'a-z')
[ "${#ops[@]}" -gt 17 ] || { echo "check_model: found only ${#ops[@]} operators in warpgen.h"; exit 1; }
fails=0 checked=0
for ti in 2 3 4 7; do
  for oi in $(seq 1 $((${#ops[@]} - 1))); do
    name=${ops[$oi]}
    src=$("$build/warpgen" source "reduce-array ${types[$ti]} $name" 2>/dev/null) || continue
    awk '/---- element type/{p=1} /#define WG_BLOCK/{p=0} p' <<<"$src" >"$work/model.inc"
    g++ -std=c++17 -O1 -w -I"$work" -I"$root/tests" -I"$root/tests/emulate" -I"$root/include" \
      "$root/tests/emulate/model_harness.cc" "$work/oracle.o" "$work/oracle_warp.o" \
      "$build/libwarpgen.a" -L"$cuda/lib64" -lnvrtc -ldl -lpthread -lm \
      -Wl,-rpath,"$cuda/lib64" -o "$work/h"
    for seed in ${seeds[*]}; do
      checked=$((checked + 1))
      "$work/h" "$ti" "$oi" "$seed" || fails=$((fails + 1))
    done
  done
done
# Expression models (model_expr_harness.cc, whose CASE k is spec k here):
# the wg_user_* functions wired into the operator, checked against the same
# expressions computed on the host.
expr_specs=(
  'reduce-array i32 sum map="x * x + i32(i % 3)"'
  'reduce-array i32 combine="max(a, b)" identity="-7" final="i64(r) * p0 + n" params=i64'
  'reduce-array i64 sum map="x * y + p0 * i + n" inputs=i64,i32 params=i64'
  'reduce-array u32 argmax map="x % 1000u32"'
)
for k in "${!expr_specs[@]}"; do
  "$build/warpgen" source "${expr_specs[$k]}" |
    awk '/---- element type/{p=1} /#define WG_BLOCK/{p=0} p' >"$work/model.inc"
  g++ -std=c++17 -O1 -w -DCASE="$k" -I"$work" -I"$root/tests/emulate" \
    "$root/tests/emulate/model_expr_harness.cc" -o "$work/e$k"
  for seed in ${seeds[*]}; do
    checked=$((checked + 1))
    "$work/e$k" "$seed" || { fails=$((fails + 1)); echo "FAIL: ${expr_specs[$k]}" >&2; }
  done
done
echo "check_model: $checked runs, $fails failed"
[ "$fails" -eq 0 ]
