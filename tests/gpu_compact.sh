#!/usr/bin/env bash
# gpu_compact.sh - everything of stream compaction (wg_compact) that needs
# the GPU, in one go, about 3 minutes on an H200:
#   1. the Check suite on the device (tests/test_compact.c: every type,
#      sizes around tiles, NaN/-0.0, all/none kept, extra inputs, unaligned
#      inputs, workspace reuse and growth, errors, 2^31 + 4099 elements);
#   2. compute-sanitizer memcheck, racecheck and synccheck over `warpgen run` of small
#      compact specs (one tile, several tiles: the look-back, 513 tiles:
#      the look-back that sleeps);
#   3. the Python tests against torch.masked_select (skipped without torch);
#   4. the benchmark: bench/compact_peers.cu (CUB DeviceSelect::If, copy
#      ceiling) and bench/compact_peers.py (torch.masked_select).
# Logs go to $OUT (else ./gpu-logs); the summary lines come last.
#
# usage: tests/gpu_compact.sh --prepare BUILD BINDIR   (here, no GPU needed)
#        tests/gpu_compact.sh BINDIR                   (on the GPU machine)
#   --prepare copies warpgen, test_compact, libwarpgen.so and liboracle.so
#   from the meson build folder BUILD and builds bench/compact_peers.cu
#   with nvcc into BINDIR (an ignored folder such as build-gpu, to carry).
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: tests/gpu_compact.sh --prepare BUILD BINDIR}
  bin=${3:?usage: tests/gpu_compact.sh --prepare BUILD BINDIR}
  cuda=${CUDA_PATH:-/usr/local/cuda}
  mkdir -p "$bin/tests" || exit 1
  cp "$build/warpgen" "$build/tests/test_compact" "$build/libwarpgen.so.0" "$bin/" || exit 1
  ln -sf libwarpgen.so.0 "$bin/libwarpgen.so"
  cp "$build/tests/liboracle.so" "$bin/tests/" || exit 1
  "$cuda/bin/nvcc" -arch=sm_90 -O3 -std=c++17 -Iinclude -Ibench -o "$bin/compact_peers" \
    bench/compact_peers.cu "$build/libwarpgen.a" -ldl -lpthread || exit 1
  echo "prepared $bin"
  exit 0
fi
bin=${1:?usage: tests/gpu_compact.sh BINDIR (after --prepare)}
bin=$(cd "$bin" && pwd)
out=${OUT:-gpu-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-$(mktemp -d)}
export WARPGEN_TEMPLATE_DIR=
summary=()
step() { # name, seconds, command...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-16s rc=%-3s %4ss  %s' "$name" "$rc" $((SECONDS - t0)) "$out/$name.log")")
  return $rc
}
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader >"$out/device.log" 2>&1

# 1. correctness on the device (the one fork per test keeps CUDA per test).
step check 150 "$bin/test_compact"

# 2. sanitizers: one tile, a few (the look-back), and past 500 tiles of
#    f32 (the look-back that sleeps between polls).
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
sanitize() {
  local tool=$1 fails=0
  for n in 1 70001 4200007; do
    for spec in 'compact f32 pred="x > p0 && x == x" params=f32' \
                'compact f16 pred="y != 0 || i % 3 == 0" inputs=f16,i32'; do
      local params=()
      case $spec in *params=f32*) params=(--param 0.5) ;; esac
      "$san" --tool "$tool" --error-exitcode 9 "$bin/warpgen" run "$spec" --n $n "${params[@]}" \
        || fails=$((fails + 1))
    done
  done
  echo "$tool: $fails failing runs"
  [ $fails = 0 ]
}
# timeout runs programs, not functions: the function goes to a child bash.
export -f sanitize
export san bin
step memcheck 150 bash -c 'sanitize memcheck'
step racecheck 240 bash -c 'sanitize racecheck'
step synccheck 150 bash -c 'sanitize synccheck'

# 3. Python against torch (skips without torch).
step python 90 env PYTHONPATH=python WARPGEN_LIBRARY="$bin/libwarpgen.so" \
  python3 -m pytest -q -x python/tests/test_gpu_compact.py

# 4. benchmarks.
step bench-cub 60 "$bin/compact_peers"
step bench-torch 60 env PYTHONPATH=python WARPGEN_LIBRARY="$bin/libwarpgen.so" \
  python3 bench/compact_peers.py

cat "$out/device.log" 2>/dev/null
echo "--- test_compact";  tail -n 3 "$out/check.log"
echo "--- memcheck";      grep -E "ERROR SUMMARY|failing runs|FAIL" "$out/memcheck.log" | sort | uniq -c
echo "--- racecheck";     grep -E "RACECHECK SUMMARY|ERROR SUMMARY|failing runs|FAIL" "$out/racecheck.log" | sort | uniq -c
echo "--- synccheck";     grep -E "ERROR SUMMARY|failing runs|FAIL" "$out/synccheck.log" | sort | uniq -c
echo "--- python";        tail -n 2 "$out/python.log"
echo "--- CUB benchmark"; cat "$out/bench-cub.log"
echo "--- torch benchmark"; cat "$out/bench-torch.log"
echo "--- steps"
printf '%s\n' "${summary[@]}"
