#!/usr/bin/env bash
# sanitize.sh - runs one spec of each (primitive, variant, layout) under
# compute-sanitizer's memcheck, racecheck and synccheck, through
# `warpgen run --specs`, over 999 elements (a partial last group at every
# width, several warps); then one launch of each shape of the whole-array
# and row reductions (test_reduce's `shapes` case, beside WARPGEN).
# Prints one line a tool and a summary; exits non-zero on any report.
#
# usage: tests/sanitize.sh [WARPGEN] [ARCH]     (defaults: build/warpgen,
#        the device's arch as `warpgen info` shows it, else sm_90)
# Needs a GPU and compute-sanitizer (on PATH or in the CUDA toolkit).
set -u
warpgen=${1:-build/warpgen}
arch=${2:-}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ ! -x "$sanitizer" ]; then
  echo "sanitize: compute-sanitizer not found" >&2
  exit 2
fi
if [ -z "$arch" ]; then
  arch=$("$warpgen" info 2>/dev/null | sed -n 's/^  0: .*, \(sm_[0-9]*\),.*/\1/p')
  arch=${arch:-sm_90}
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One spec per (primitive, variant, layout) at widths 8 (several groups a warp) and
# 32, preferring 32-bit integers, then f32, else the first listed.
"$warpgen" list --arch "$arch" | grep -v '^reduce-' | grep -E 'width=(8|32) ' | awk '
  { match($0, /variant=[a-z]+/); key = $1 " " substr($0, RSTART, RLENGTH)
    match($0, /width=[0-9]+/); key = key " " substr($0, RSTART, RLENGTH)
    key = key (index($0, "layout=lane") ? " lane" : " vec")
    rank = ($2 == "i32") ? 0 : ($2 == "f32") ? 1 : 2
    if (!(key in best) || rank < best_rank[key]) { best[key] = $0; best_rank[key] = rank }
    if (!(key in order)) { order[key] = ++count; keys[count] = key } }
  END { for (i = 1; i <= count; i++) print best[keys[i]] }' >"$work/specs"
nspecs=$(wc -l <"$work/specs")
if [ "$nspecs" -eq 0 ]; then
  echo "sanitize: no specs listed" >&2
  exit 2
fi

failed=0
for tool in memcheck racecheck synccheck; do
  for n in 999; do
    log="$work/$tool-$n.log"
    "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 20 \
      "$warpgen" run --specs "$work/specs" --n "$n" >"$log" 2>&1
    rc=$?
    summary=$(grep -E '(ERROR|RACECHECK|SYNCCHECK) SUMMARY' "$log" | tail -1)
    passed=$(sed -n 's/^\([0-9]*\) specs, \([0-9]*\) passed.*/\2/p' "$log")
    printf 'sanitize: %-9s n=%-4s %s specs, %s passed, exit %s, %s\n' \
      "$tool" "$n" "$nspecs" "${passed:-?}" "$rc" "${summary:-no summary}"
    if [ "$rc" -ne 0 ]; then
      failed=1
      grep -E '=========|FAIL' "$log" | head -40
    fi
  done
done
# The whole-array and row reductions: one launch of each kernel shape, for
# a scalar and the struct accumulators (test_reduce's `shapes` case).
reduce_test=${WARPGEN_TEST_REDUCE:-$(dirname "$warpgen")/test_reduce}
if [ -x "$reduce_test" ]; then
  for tool in memcheck racecheck synccheck; do
    log="$work/reduce-$tool.log"
    CK_FORK=no CK_RUN_CASE=shapes "$sanitizer" --tool "$tool" --error-exitcode 9 \
      --print-limit 20 "$reduce_test" >"$log" 2>&1
    rc=$?
    summary=$(grep -E '(ERROR|RACECHECK|SYNCCHECK) SUMMARY' "$log" | tail -1)
    checks=$(grep -E 'Checks:' "$log" | tail -1)
    printf 'sanitize: %-9s reductions (shapes case): exit %s, %s; %s\n' \
      "$tool" "$rc" "${summary:-no summary}" "${checks:-no Check summary}"
    if [ "$rc" -ne 0 ]; then
      failed=1
      grep -E '=========|FAIL|Failure' "$log" | head -40
    fi
  done
else
  echo "sanitize: no test_reduce beside $warpgen: reductions not sanitized"
  failed=1
fi
if [ "$failed" -ne 0 ]; then
  echo "sanitize: FAILED"
  exit 1
fi
echo "sanitize: clean ($nspecs warp specs and the reductions' shapes x memcheck, racecheck, synccheck)"
