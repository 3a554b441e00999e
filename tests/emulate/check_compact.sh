#!/bin/bash
# check_compact.sh - runs the generated compact kernels on the host, no GPU
# (tests/emulate/compact_harness.cc): f32, f64 and i64, with and without a
# predicate, at sizes around the tile, aligned and not, against a plain
# loop.
# usage: tests/emulate/check_compact.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: check_compact.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WARPGEN_CACHE=off
fails=0
for t in f32 f64 i64; do
  for pred in 0 1; do
    spec="compact $t"
    [ $pred = 1 ] && spec="$spec pred=\"x > p0 && x == x\" params=f32"
    "$build/warpgen" source "$spec" | python3 -c '
import re, sys
s = sys.stdin.read()
s = s.replace("asm volatile(\"ld.relaxed.gpu.global.u64 %0, [%1];\" : \"=l\"(v) : \"l\"(p) : \"memory\");",
              "v = __atomic_load_n(p, __ATOMIC_RELAXED);")
s = s.replace("asm volatile(\"st.relaxed.gpu.global.u64 [%0], %1;\" :: \"l\"(p), \"l\"(v) : \"memory\");",
              "__atomic_store_n(p, v, __ATOMIC_RELAXED);")
s = s.replace("extern \"C\"", "")
name = re.search(r"\n(wg_compact_\w+)\(", s).group(1)
print(s + "\n#define KERNEL " + name)' >"$work/kernel.inc"
    g++ -std=c++20 -O1 -w -pthread -I"$work" "$root/tests/emulate/compact_harness.cc" -o "$work/h"
    unroll=$(sed -n 's/^#define WG_UNROLL \([0-9]*\).*/\1/p' "$work/kernel.inc")
    tile=$((256 * 16 * unroll / $( [ $t = f32 ] && echo 4 || echo 8)))
    for n in 0 1 31 33 $((tile - 1)) $tile $((tile + 1)) $((3 * tile + 17)); do
      for offset in 0 1; do
        "$work/h" $n $((n + 7)) $pred $offset ||
          { echo "FAIL: $spec n=$n offset=$offset"; fails=$((fails + 1)); }
      done
    done
  done
done
echo "check_compact: $fails failures"
[ $fails = 0 ]
