#!/usr/bin/env bash
# check_hist.sh - the histogram kernels of each method run on the host
# (hist_harness.cc over shim.h: 64-thread blocks, the per-warp copies 2),
# against the oracle: sizes, unaligned starts, grids of 1 and 3 blocks,
# uniform, piled, one-bin and edge keys, 16-bit counters that wrap. Not
# timing, not the GPU's memory model: the kernel's logic. f16 is left out
# (its conversion is PTX). Needs g++ 12 or another C++20 compiler with _Float16 (CXX=) and a built BUILD.
#   usage: tests/emulate/check_hist.sh [BUILD]   (default build)
set -u
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cxx=${CXX:-g++}
fail=0
if ! printf '_Float16 h; int main() { return 0; }\n' | $cxx -std=c++20 -x c++ - -o "$work/probe" 2>/dev/null; then
  echo "check_hist: skipped: $cxx does not compile C++20 with _Float16 (set CXX)"
  exit 77
fi
# one object of the oracle and the library for every program
cc -O2 -c -Iinclude -Itests tests/oracle.c -o "$work/oracle.o" &&
cc -O2 -c -Iinclude -Itests tests/oracle_warp.c -o "$work/oracle_warp.o" &&
cc -O2 -c -Iinclude -Itests tests/oracle_hist.c -o "$work/oracle_hist.o" || exit 2
run() { # type-name type-index bins counts(u32|u64) then cases "n grid shift kind [wide]"...
  local tn=$1 ti=$2 bins=$3 counts=$4; shift 4
  local spec="histogram $tn bins=$bins counts=$counts arch=sm_90"
  "$build/warpgen" source "$spec" >"$work/k.cu" || { echo "FAIL: source $spec"; fail=1; return; }
  sed -i -e 's/^#define WG_BLOCK 1024 /#define WG_BLOCK 64 /' \
         -e 's/^#define WG_COPIES 32 /#define WG_COPIES 2 /' "$work/k.cu"
  local kernel; kernel=$(grep -o 'wg_histogram_[a-z0-9_]*' "$work/k.cu" | head -1)
  $cxx -std=c++20 -O1 -w -Itests/emulate -Iinclude -Itests -DEMU_SOURCE="\"$work/k.cu\"" \
    -DEMU_KERNEL="$kernel" tests/emulate/hist_harness.cc "$work"/oracle*.o \
    "$build/libwarpgen.a" -ldl -lpthread -lm -o "$work/h" || { echo "FAIL: compile $spec"; fail=1; return; }
  local csize=4; [ "$counts" = u64 ] && csize=8
  for c in "$@"; do
    set -- $c
    "$work/h" "$ti" "$bins" "$1" "$2" "$3" "$4" "$csize" $RANDOM "${5:-0}" || fail=1
  done
}
# types: 1 bf16, 2 f32, 3 f64, 4 i32, 5 u32, 6 i64, 7 u64; kinds: 0 uniform,
# 1 piled, 2 one bin, 3 edges, 4 and 5 two bins of one 16-bit word
run i32 4 256 u32 "0 1 0 0" "1 1 0 3" "37 1 1 3" "5000 3 0 3" "5003 3 1 1" "3000 1 3 2"
run f32 2 256 u64 "4097 3 1 3" "999 1 0 0" "70000 1 0 2"
run f32 2 4096 u32 "9999 3 2 3" "20000 2 0 1"
run u64 7 300 u32 "4000 3 1 3"
run i32 4 30000 u32 "140000 1 0 2" "5000 3 1 3" "280001 1 0 4" "205535 1 0 5"
run i64 6 65536 u64 "140001 1 1 2" "9000 3 3 3"
run bf16 1 1000 u32 "5000 3 1 3"
run f64 3 200000 u32 "5000 3 1 3" "3000 1 0 2" "70001 2 1 0 1"
# a float range too wide for the reciprocal: every trip divides, a vector at a time
run f32 2 256 u32 "70001 3 1 0 1" "4099 1 0 3 1"
run bf16 1 1000 u32 "20000 2 1 1 1"
# a range so wide that (x - lo) * bins overflows: the bin divides first
run f32 2 65536 u32 "70001 3 1 0 2" "4099 1 0 3 2"
run f64 3 256 u64 "20000 2 1 0 2" "5000 1 0 3 2"
run u32 5 1 u32 "3000 2 1 3"
# the float bin's quotient: a reciprocal refined once is the division
cc -O2 -ffp-contract=off tests/emulate/divcheck.c -o "$work/divcheck" -lm &&
  "$work/divcheck" 20000000 || fail=1
echo "check_hist: $([ $fail -eq 0 ] && echo all passed || echo FAILURES)"
exit $fail
