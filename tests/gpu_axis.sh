#!/usr/bin/env bash
# gpu_axis.sh - everything reduce-axis needs the GPU for, in one go (about
# 3 minutes on an H200): the Check suite against the oracle, the Python
# tests against PyTorch and the oracle, compute-sanitizer memcheck and
# racecheck on small shapes, `warpgen run` and `warpgen bench` of the
# benchmark's shapes, and bench/axis_peers.py against PyTorch.
#
# usage: tests/gpu_axis.sh --prepare BUILD BINDIR [--no-cache]  (here, no GPU)
#        tests/gpu_axis.sh BINDIR                   (on the GPU machine)
#   --prepare copies the binaries from the meson build folder BUILD into
#   BINDIR (an ignored folder, e.g. build-gpu-axis, to carry) and compiles
#   every spec the suites launch into BINDIR/axis-cache.tgz on every core here,
#   so that the GPU machine compiles nothing when its NVRTC is the same
#   file (else the suite compiles them itself, on every core, first: about
#   30 s on 16 cores). --no-cache skips that (minutes on 2 busy cores).
# Logs go to $OUT (else ./gpu-axis-logs); each step prints one verdict
# line, and the benchmark's table comes last.
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: tests/gpu_axis.sh --prepare BUILD BINDIR}
  bin=${3:?usage: tests/gpu_axis.sh --prepare BUILD BINDIR}
  mkdir -p "$bin/tests" && cp "$build/warpgen" "$build/tests/test_axis" \
    "$build/libwarpgen.so.0" "$bin/" && cp "$build/tests/liboracle.so" "$bin/tests/" || exit 1
  ln -sf libwarpgen.so.0 "$bin/libwarpgen.so"
  if [ "${4:-}" = --no-cache ]; then ls -la "$bin"; exit 0; fi
  cache=$(mktemp -d)
  export WARPGEN_CACHE_DIR=$cache
  { "$bin/test_axis" --specs
    echo "reduce-array f32 sum arch=sm_90"; } | sort -u |
    xargs -P "$(nproc)" -d '\n' -I{} "$bin/warpgen" cubin "{}" -o /dev/null
  tar czf "$bin/axis-cache.tgz" -C "$cache" . && rm -rf "$cache"
  "$bin/warpgen" info | sed -n 's/^nvrtc id  //p' >"$bin/nvrtc-id"
  ls -la "$bin"
  exit 0
fi
bin=$(cd "${1:?usage: tests/gpu_axis.sh BINDIR}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-gpu-axis-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-/tmp/warpgen-axis-cache}
export WARPGEN_TEMPLATE_DIR=
mkdir -p "$WARPGEN_CACHE_DIR"
[ -f "$bin/axis-cache.tgz" ] && tar xzf "$bin/axis-cache.tgz" -C "$WARPGEN_CACHE_DIR"
if [ -f "$bin/nvrtc-id" ]; then
  here=$(CUDA_VISIBLE_DEVICES= "$bin/warpgen" info 2>/dev/null | sed -n 's/^nvrtc id  //p')
  [ "$here" = "$(cat "$bin/nvrtc-id")" ] && echo "cache: carried (same NVRTC)" ||
    echo "cache: NVRTC differs ($here); the suite compiles its specs first"
fi
export WARPGEN_LIBRARY=$bin/libwarpgen.so PYTHONPATH=$root/python:$root/python/tests
status=0
step() { # step NAME SECONDS COMMAND...: runs it, logs it, prints one line
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local verdict=PASS
  [ $rc -eq 0 ] || verdict="FAIL (exit $rc)"
  [ $rc -eq 77 ] && verdict="SKIP"
  [ $rc -eq 124 ] && verdict="TIMEOUT after ${limit}s"
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
  printf '%-12s %-22s %4ds  %s\n' "$name" "$verdict" $((SECONDS - t0)) \
    "$(grep -E '^[0-9]+%: Checks|passed|failed|ERROR SUMMARY|RACECHECK SUMMARY' "$out/$name.log" | tail -1)"
}
# 1. The Check suite: every type and operator, sizes around every boundary,
#    the benchmark's shapes, expressions, the same bits every run.
step check 200 "$bin/test_axis"
# 2. compute-sanitizer on small shapes (the quick sizes), one forked-off
#    process: memcheck, then racecheck (shared memory and the last-block
#    fold).
export WARPGEN_AXIS_QUICK=1 CK_FORK=no CK_RUN_CASE=sanitize
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
step memcheck 90 "$cs" --tool memcheck --error-exitcode 3 "$bin/test_axis"
step racecheck 90 "$cs" --tool racecheck --error-exitcode 3 "$bin/test_axis"
unset WARPGEN_AXIS_QUICK CK_FORK CK_RUN_CASE
# 3. Python against PyTorch / CuPy and the oracle.
if python3 -c 'import numpy' 2>/dev/null; then
  step python 120 python3 -m pytest -q -rs -x "$root/python/tests/test_gpu_axis.py"
else
  echo "python       SKIP (no numpy here)"
fi
# 4. The command line: the benchmark's shapes checked, then timed.
step run 60 bash -c "'$bin/warpgen' run 'reduce-axis f32 sum' --shape 65536,1024 --axis 0 &&
  '$bin/warpgen' run 'reduce-axis f32 sum' --shape 1024,65536 --axis 0 &&
  '$bin/warpgen' run 'reduce-axis i32 sum' --shape 64,4096,256 --axis 1 &&
  '$bin/warpgen' run 'reduce-axis f32 argmax' --shape 64,4096,256 --axis -2 &&
  for s in '65536,1024 --axis 0' '1024,65536 --axis 0' '64,4096,256 --axis 1'; do
    '$bin/warpgen' bench 'reduce-axis f32 sum' --shape \$s --reps 100; done &&
  '$bin/warpgen' bench 'reduce-array f32 sum' --n 67108864 --reps 100"
grep -E '^(PASS|FAIL)|median|GB/s' "$out/run.log"
# 5. The benchmark against PyTorch.
step bench 120 python3 "$root/bench/axis_peers.py"
cat "$out/bench.log"
echo "gpu_axis: $([ $status -eq 0 ] && echo all passed || echo FAILURES: see $out/*.log)"
exit $status
