#!/bin/bash
# check_rownorm.sh - the fused row kernels run on the host (no GPU): for
# each operation, type and a set of shapes, the source from `warpgen
# source` (its block made 64 threads: one emulated block of two warps,
# shim.h) is compiled into rownorm_harness.cc and run on rows with NaN,
# infinities, -inf rows, all-equal rows, padded and unaligned strides,
# with and without weight and bias, checked against the float64 oracle.
# usage: tests/emulate/check_rownorm.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: check_rownorm.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WARPGEN_CACHE=off
for f in tests/oracle.c tests/oracle_warp.c tests/oracle_rownorm.c; do
  gcc -std=c11 -D_GNU_SOURCE -O1 -c -I"$root/include" -I"$root/tests" "$root/$f" \
    -o "$work/$(basename "$f" .c).o" || exit 1
done
prims=(softmax-rows log-softmax-rows layernorm-rows rmsnorm-rows)
types=(f16 bf16 f32 f64)
# cols= of each spec: short-row groups (1, 2, 4, 8 lanes), a warp, a block
# of 64 (f32: 513..1024; f16/bf16: 1025..2048; f64: 257..512), any (0),
# and the blocks that keep part of their row in shared memory, emulated as
# a block of 64 that keeps as many vectors a lane (its rows as long as that
# holds): f32's blocks of 1024 (40000 and 86016) and, for softmax and
# log_softmax, its two blocks of 512 an SM (20000) and f64's blocks of
# 1024 (12000 and 32769).
fails=0 runs=0
for pi in 0 1 2 3; do
  for ti in 0 1 2 3; do
    t=${types[$ti]}
    softmax=; [ $pi -le 1 ] && softmax=1
    case $t in
      f64) blk=512 kept=${softmax:+"12000 32769"} size=8 ;;
      f32) blk=1024 kept="40000 86016${softmax:+ 20000}" size=4 ;;
      *) blk=2048 kept= size=2 ;;
    esac
    for sc in 4 16 64 128 $blk 0 $kept; do
      spec="${prims[$pi]} $t cols=$sc"
      [[ "$spec" == *${ROWNORM_FILTER:-}* ]] || continue
      src="$work/k.cu"
      "$build/warpgen" source "$spec" > "$src" 2>"$work/err" || { echo "FAIL $spec: $(cat "$work/err")"; fails=$((fails+1)); continue; }
      if [[ " $kept " == *" $sc "* ]]; then
        k=$(sed -n 's/^#define WG_KEPT \([0-9]*\) .*/\1/p' "$src")
        c=$(sed -n 's/^#define WG_CHUNKS \([0-9]*\) .*/\1/p' "$src")
        [ "${k:-0}" -gt 0 ] || { echo "FAIL $spec: keeps nothing in shared memory"; fails=$((fails+1)); continue; }
        sed -i 's/^#define WG_GROUP \(512\|1024\) /#define WG_GROUP 64 /' "$src"
        sc=$((64 * (c + k) * 16 / size))
      fi
      grep -q '^#define WG_GROUP \(64\|[0-9]\|[12][0-9]\|3[0-2]\) ' "$src" || { echo "skip $spec (block of more than 64)"; continue; }
      # The registers a thread may take, as the GPU's launch gives them (the
      # template's choices that follow from it, WG_WB_REGS, stay the GPU's).
      blk0=$(sed -n 's/^#define WG_BLOCK \([0-9]*\).*/\1/p' "$src")
      minb=$(sed -n 's/.*__launch_bounds__(WG_BLOCK, \([0-9]*\)).*/\1/p' "$src")
      sed -i "s|65536 / (WG_BLOCK \* $minb)|$((65536 / (blk0 * minb)))|" "$src"
      sed -i -e 's/^#define WG_BLOCK [0-9]*/#define WG_BLOCK 64/' \
        -e 's|asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));|f = emu_h2f(h);|' \
        -e 's|asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));|h = emu_f2h(f);|' "$src"
      name=$(sed -n 's/^\(wg_[a-z0-9_]*\)(const wg_elem \*in.*/\1/p' "$src")
      g++ -std=c++20 -O1 -w -I"$root/tests/emulate" -I"$root/include" -I"$root/tests" \
        -DKERNEL_SOURCE="\"$src\"" -DKERNEL_NAME="$name" "$root/tests/emulate/rownorm_harness.cc" \
        "$work"/oracle*.o "$build/libwarpgen.a" -ldl -lm -lpthread -o "$work/h" 2>"$work/err" ||
        { echo "FAIL $spec: g++: $(head -c 3000 "$work/err")"; fails=$((fails+1)); continue; }
      prim=$pi
      # rows cols in_pad out_pad offset weight bias [in place]: in place
      # both as whole vectors held in registers (the one block takes every
      # tile in turn) and streamed.
      for shape in "40 $((sc ? sc : 3000)) 0 0 0 1 1" "9 $((sc ? sc - 1 : 2999)) 3 5 1 1 0" \
                   "13 1 0 0 0 0 1" "7 33 8 16 0 0 0" "6 $((sc * 3 + 5)) 0 0 0 1 1" "0 5 0 0 0 1 1" \
                   "37 $((sc ? sc : 3000)) 8 8 0 1 1 1" "11 $((sc ? sc - 1 : 2999)) 1 1 0 1 0 1"; do
        runs=$((runs+1))
        read -r -a f <<<"$shape"
        if ! timeout 120 "$work/h" $prim $ti "${f[@]:0:7}" $RANDOM "${f[7]:-0}" > "$work/out" 2>&1; then
          echo "FAIL $spec [$shape]: $(head -5 "$work/out")"; fails=$((fails+1))
        fi
      done
    done
  done
done
echo "rownorm emulation: $runs runs, $fails failed"
[ $fails = 0 ]
