#!/usr/bin/env bash
# gpu_scan.sh - the scans (scan-array, exscan-array, scan-rows, exscan-rows)
# on the GPU in one go, about 4 minutes on an H200: `warpgen run` of a few
# specs, the Check suite test_scan (every type, operator, size boundary,
# 2^31 + 777 elements, streams and graphs), the Python tests when torch is
# there, compute-sanitizer memcheck and racecheck on each launch shape at
# small sizes, then the benchmark against CUB and the copy ceiling (and
# torch.cumsum when torch is there).
#
# usage: tests/gpu_scan.sh --prepare BUILD BINDIR   (here, no GPU needed)
#        tests/gpu_scan.sh BINDIR                   (on the GPU machine)
#   --prepare copies warpgen, test_scan, libwarpgen.so and liboracle.so from
#   the meson build folder BUILD, builds bench/scan_peers.cu with nvcc, and
#   compiles every spec test_scan launches for sm_90 into BINDIR/scan-cache.txz
#   (on every core here, so that the GPU machine compiles nothing). BINDIR
#   should be an ignored folder (e.g. build-gpu) to carry.
# Logs go to $OUT (else ./gpu-logs); each step prints a one-line verdict and
# the last lines are the benchmark's table. Exit: non-zero when a step fails.
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: tests/gpu_scan.sh --prepare BUILD BINDIR}
  bin=${3:?usage: tests/gpu_scan.sh --prepare BUILD BINDIR}
  cuda=${CUDA_PATH:-/usr/local/cuda}
  mkdir -p "$bin/tests" || exit 1
  cp "$build/warpgen" "$build/tests/test_scan" "$build/libwarpgen.so.0" "$bin/" || exit 1
  cp "$build/libwarpgen.so.0" "$bin/libwarpgen.so" || exit 1
  cp "$build/tests/liboracle.so" "$bin/tests/" || exit 1
  "$cuda/bin/nvcc" -arch=sm_90 -O3 -std=c++17 -Iinclude -Ibench -o "$bin/scan_peers" \
    bench/scan_peers.cu "$build/libwarpgen.a" -ldl -lpthread || exit 1
  cache=$(mktemp -d)
  WARPGEN_CACHE_DIR=$cache "$bin/test_scan" --precompile 90 || exit 1
  # xz: a third of gzip's 35 MB, for the 64 MiB a carry may hold.
  tar cJf "$bin/scan-cache.txz" -C "$cache" . && rm -rf "$cache"
  "$bin/warpgen" info | sed -n 's/^nvrtc id  //p' >"$bin/nvrtc-id"
  ls -la "$bin"
  exit 0
fi
bin=${1:?usage: tests/gpu_scan.sh BINDIR}
out=${OUT:-gpu-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-/tmp/warpgen-scan-cache}
mkdir -p "$WARPGEN_CACHE_DIR"
if [ -f "$bin/scan-cache.txz" ] && ! tar xJf "$bin/scan-cache.txz" -C "$WARPGEN_CACHE_DIR"; then
  echo "note: scan-cache.txz could not be unpacked (no xz?): kernels compile here"
fi
nvrtc_info() { CUDA_VISIBLE_DEVICES= "$bin/warpgen" info 2>/dev/null; }
if [ -z "${WARPGEN_NVRTC:-}" ] && nvrtc_info | grep -q '^nvrtc at  (not found)'; then
  nvrtc=$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$nvrtc" ] && export WARPGEN_NVRTC=$nvrtc
fi
if [ -f "$bin/nvrtc-id" ] && [ "$(nvrtc_info | sed -n 's/^nvrtc id  //p')" != "$(cat "$bin/nvrtc-id")" ]; then
  # The cache is keyed on the NVRTC that compiles: none of it serves here.
  # test_scan would compile its few hundred kernels one by one (0.2-0.7 s
  # each on the H200 machine, past test_scan's time limit), so they are
  # compiled first on every core.
  echo "note: NVRTC here is not the one scan-cache.txz was made with: compiling test_scan's kernels here"
  "$bin/test_scan" --specs | sort -u | sed 's/$/ arch=sm_90/' |
    xargs -P "$(nproc)" -d '\n' -I{} "$bin/warpgen" cubin "{}" -o /dev/null
fi
failed=0
step() { echo; echo "=== $* ($(date +%T))"; }
verdict() { # name rc log
  if [ "$2" -eq 0 ]; then echo "scan: $1: ok"; else
    echo "scan: $1: FAILED (exit $2; log $3)"; tail -30 "$3"; failed=1; fi
}

step device
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
arch=$("$bin/warpgen" info | sed -n 's/^  0: .*, sm_\([0-9]*\),.*/\1/p')
arch=${arch:-90}
[ "$arch" = 90 ] || WARPGEN_CACHE_DIR=$WARPGEN_CACHE_DIR "$bin/test_scan" --precompile "$arch"

step "warpgen run, as a user would"
{
  "$bin/warpgen" run "scan-array f32 sum" --n 16777219 &&
  "$bin/warpgen" run "exscan-array f64 sum deterministic=0" --n 5000001 &&
  "$bin/warpgen" run "scan-array i32 max" --n 1000 &&
  "$bin/warpgen" run "exscan-rows i32 xor" --rows 1000 --cols 777 &&
  "$bin/warpgen" run "scan-rows f16 sum" --rows 5 --cols 300001 &&
  "$bin/warpgen" bench "scan-array f32 sum" --n 268435456 --reps 20
} >"$out/scan-run.log" 2>&1
rc=$?; cat "$out/scan-run.log"; verdict "warpgen run" $rc "$out/scan-run.log"

step "test_scan (Check suite)"
CK_VERBOSITY=verbose timeout 200 "$bin/test_scan" >"$out/test_scan.log" 2>&1
rc=$?; tail -4 "$out/test_scan.log"; verdict test_scan $rc "$out/test_scan.log"

if python3 -c 'import torch, numpy; assert torch.cuda.is_available()' 2>/dev/null; then
  step "python tests (torch)"
  PYTHONPATH=python WARPGEN_LIBRARY=$bin/libwarpgen.so WARPGEN_ORACLE_LIBRARY=$bin/tests/liboracle.so \
    timeout 120 python3 -m pytest -q python/tests/test_gpu_scan.py >"$out/pytest_scan.log" 2>&1
  rc=$?; tail -3 "$out/pytest_scan.log"; verdict "python tests" $rc "$out/pytest_scan.log"
else
  echo "scan: python tests: skipped (no torch with CUDA here)"
fi

step "compute-sanitizer memcheck, racecheck"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$sanitizer" ]; then
  # One spec of each launch shape: one block (n <= a tile), look-back over
  # packed (4-byte) and wide (8-byte) statuses in both modes, short rows,
  # tiles of few long rows, a warp per row of many long rows; rows = n /
  # cols; and (d) grids past 500 tiles, past the look-back's window of 128
  # tiles, where it sleeps between polls.
  printf '%s\n' "scan-array f32 sum" "exscan-array i32 max deterministic=0" \
    "scan-array f64 sum" "exscan-array f16 sum deterministic=0" \
    "scan-array u64 xor deterministic=0" "exscan-rows f32 sum cols=37" \
    "scan-rows i64 min cols=20001" "scan-rows bf16 max cols=1500" >"$out/sanitize-a"
  printf '%s\n' "scan-array f32 sum" "exscan-array u32 or" "scan-array f64 prod" \
    >"$out/sanitize-b"
  printf '%s\n' "scan-rows f32 sum cols=1100" "exscan-rows i32 sum cols=5000" \
    "scan-rows f64 max deterministic=0 cols=9000" >"$out/sanitize-c"
  printf '%s\n' "scan-array f32 sum" "exscan-array f64 sum deterministic=0" >"$out/sanitize-d"
  # The two tools side by side (mostly host-side instrumentation), each
  # its runs in turn.
  for tool in memcheck racecheck; do
    ( log="$out/sanitize-$tool.log"
      : >"$log"
      rc=0
      for run in "a 80001" "b 3000" "c 2200000" "d 4200000"; do
        set -- $run
        "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 20 \
          "$bin/warpgen" run --specs "$out/sanitize-$1" --n "$2" >>"$log" 2>&1 || rc=1
      done
      echo $rc >"$out/sanitize-$tool.rc" ) &
  done
  wait
  for tool in memcheck racecheck; do
    log="$out/sanitize-$tool.log"
    grep -E '(ERROR|RACECHECK) SUMMARY|specs, .* passed' "$log"
    verdict "compute-sanitizer $tool" "$(cat "$out/sanitize-$tool.rc")" "$log"
  done
else
  echo "scan: compute-sanitizer: not found"; failed=1
fi

# WARPGEN_GPU_SKIP_BENCH=1 (tests/gpu_parallel.sh runs scripts side by side,
# where timings mean nothing): the checks only.
if [ "${WARPGEN_GPU_SKIP_BENCH:-0}" = 1 ]; then
  [ $failed -eq 0 ] && echo "gpu_scan: all steps passed (no benchmark)" || echo "gpu_scan: SOME STEPS FAILED"
  exit $failed
fi
step "benchmark: CUB DeviceScan, the copy ceiling, rows"
timeout 120 "$bin/scan_peers" --csv "$out/scan_peers.csv" >"$out/scan_peers.log" 2>&1
rc=$?; cat "$out/scan_peers.log"; verdict "scan_peers" $rc "$out/scan_peers.log"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  step "benchmark: torch.cumsum"
  PYTHONPATH=python WARPGEN_LIBRARY=$bin/libwarpgen.so timeout 90 python3 bench/scan_peers.py \
    >"$out/scan_peers_torch.log" 2>&1
  rc=$?; cat "$out/scan_peers_torch.log"; verdict "torch benchmark" $rc "$out/scan_peers_torch.log"
fi
echo
[ $failed -eq 0 ] && echo "gpu_scan: all steps passed" || echo "gpu_scan: SOME STEPS FAILED"
exit $failed
