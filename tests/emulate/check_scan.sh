#!/usr/bin/env bash
# check_scan.sh - the scan kernels (templates/scan.cu) run on the host with
# scan_shim.h (threads for GPU threads, a process a block, shared memory
# between them) and checked output by output against a serial fold
# (scan_harness.inc): every mode (a group of lanes per row, one block in
# order, decoupled look-back across blocks), packed and wide statuses, both
# determinism modes, more tiles than one look-back window (128 tiles: 1.06
# million f32, 540000 f64), unaligned rows
# and outputs, row gaps. No GPU needed; a few minutes on two cores.
#
# usage: tests/emulate/check_scan.sh [WARPGEN]   (default build/warpgen)
# Exit 0 when every case passes, 77 (Meson's skip) without g++ and C++20.
set -u
warpgen=${1:-build/warpgen}
here=$(cd "$(dirname "$0")" && pwd)
cxx=${CXX:-g++}
echo '#include <barrier>' | "$cxx" -std=c++20 -x c++ -fsyntax-only - 2>/dev/null || {
  echo "check_scan: skipped: no $cxx with C++20 <barrier>"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0 count=0
# spec | cases: "rows cols in_stride out_stride mode grid in_off out_off"
while IFS='|' read -r spec cases; do
  [ -z "$spec" ] && continue
  name=$("$warpgen" source "$spec" | sed -n 's/^\(wg_[a-z0-9_]*\)(.*/\1/p' | head -1)
  { echo '#include "scan_shim.h"'; "$warpgen" source "$spec"; echo '#include "scan_harness.inc"'; } >"$work/k.cc"
  if ! "$cxx" -std=c++20 -O1 -w -I"$here" -DKERNEL="$name" -o "$work/k" "$work/k.cc" -pthread 2>"$work/cc.log"; then
    echo "FAIL: $spec: does not compile on the host"; head -20 "$work/cc.log"; failed=$((failed + 1)); continue
  fi
  IFS=';' read -ra list <<<"$cases"
  for c in "${list[@]}"; do
    set -- $c
    count=$((count + 1))
    if ! result=$(timeout 300 "$work/k" "$1" "$2" "$3" "$4" "$5" "$6" $((count * 7919)) "$7" "$8"); then
      echo "FAIL: $spec [rows=$1 cols=$2 strides=$3/$4 mode=$5 grid=$6 offsets=$7/$8]: $result"
      failed=$((failed + 1))
    else
      echo "ok: $spec [rows=$1 cols=$2 strides=$3/$4 mode=$5 grid=$6 offsets=$7/$8] ${result#ok: }"
    fi
  done
done <<'CASES'
scan-array f32 sum|1 1065000 1065000 1065000 2 3 0 0;1 1065000 1065000 1065000 3 3 0 0;1 40000 40000 40000 3 10 1 0;3 9000 9001 9000 3 2 0 0;1 1 1 1 1 1 0 0;1 4095 4095 4095 1 1 1 0;1 4097 4097 4097 1 1 0 0;1 20000 20000 20000 1 1 1 3;1 20000 20000 20000 2 3 0 0;1 9000 9000 9000 2 2 1 1
exscan-array i32 max deterministic=0|1 1065000 1065000 1065000 2 4 1 0;1 1065000 1065000 1065000 3 4 1 0;1 16385 16385 16385 2 4 0 0;1 5 5 5 1 1 0 0
scan-array f64 sum|1 540000 540000 540000 2 3 0 1;1 540000 540000 540000 3 3 0 1;1 30001 30001 30001 2 3 1 0;1 2048 2048 2048 1 1 0 0
exscan-array u64 xor deterministic=0|1 72000 72000 72000 2 2 0 1;1 72000 72000 72000 3 2 0 1
scan-array i64 sum|1 72000 72000 72000 2 3 0 0
scan-rows f32 sum cols=24|37 23 25 24 0 2 1 0;5 24 24 27 0 1 0 0
exscan-rows i32 min cols=4|100 3 3 4 0 1 0 0;9 4 5 4 0 2 1 1
scan-rows u32 or cols=512|7 500 501 500 0 1 0 0;3 512 512 515 0 2 0 0
exscan-rows f64 max|5 3000 3001 3000 0 1 0 0
scan-rows f32 sum|5 3000 3001 3000 0 2 1 0;3 1024 1024 1024 0 1 0 0
scan-rows u32 xor|4 5000 5003 5000 0 2 0 0
exscan-array f64 max|4 5000 5000 5003 2 3 0 0;3 2049 2049 2049 1 1 1 0
scan-array i32 sum deterministic=0|3 9000 9001 9000 2 2 0 0
scan-array i32 combine="a + b" identity="0"|1 20000 20000 20000 2 3 0 1;1 3000 3000 3000 1 1 1 0
exscan-array i32 sum map="x * 0.5"|1 20000 20000 20000 2 3 1 0;1 9000 9000 9000 1 1 0 1
scan-rows i64 max map="x * i"|3 7000 7001 7000 0 2 1 0
scan-array i64 max map="x * i"|3 7000 7001 7000 2 2 0 0
CASES
echo "check_scan: $count cases, $failed failed"
[ "$failed" -eq 0 ]
