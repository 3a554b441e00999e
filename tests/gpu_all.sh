#!/usr/bin/env bash
# gpu_all.sh - everything that needs the GPU, in one go, for a lent machine
# where every minute counts: device facts, `warpgen run` as a new user would
# try it, the latency/throughput table, the `gpu` Check suite (which
# compiles its specs on every core itself), the compute-sanitizer pass and
# the start-up costs (bench/startup.sh).
# Each step has a time limit; about 4 minutes in all on an H200. Logs go to
# $OUT (else ./gpu-logs); the last lines printed are the summaries.
#
# Not here: warming the cache with one `warpgen cubin` process a spec. Each
# such process starts CUDA on a GPU machine (about 2 s on the H200), so
# 3440 of them took longer than the whole run should.
#
# usage: tests/gpu_all.sh --prepare BUILD BINDIR   (here, no GPU needed)
#        tests/gpu_all.sh BINDIR                   (on the GPU machine)
#   --prepare copies warpgen and test_gpu from the meson build folder BUILD,
#   builds bench/warp_latency.c against BUILD/libwarpgen.a, and compiles
#   every spec into BINDIR/cache.tgz (the disk cache, about 8 MB packed) on
#   every core here, so the GPU machine compiles nothing. BINDIR should be
#   an ignored folder (e.g. build-gpu) to carry.
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: tests/gpu_all.sh --prepare BUILD BINDIR}
  bin=${3:?usage: tests/gpu_all.sh --prepare BUILD BINDIR}
  cuda=${CUDA_PATH:-/usr/local/cuda}
  mkdir -p "$bin" && cp "$build/warpgen" "$build/tests/test_gpu" "$build/tests/test_reduce" \
    "$build/tests/test_expr_gpu" \
    "$build/bench/cache_bench" "$build/libwarpgen.so.0" "$bin/" || exit 1
  ln -sf libwarpgen.so.0 "$bin/libwarpgen.so"
  # The C oracle for the Python tests (refs.py looks beside WARPGEN_LIBRARY).
  mkdir -p "$bin/tests" && cp "$build/tests/liboracle.so" "$bin/tests/" || exit 1
  gcc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc -I"$cuda/include" \
    bench/warp_latency.c "$build/libwarpgen.a" -ldl \
    -lpthread -lm -o "$bin/warp_latency" || exit 1
  cp "$build/bench/warp_bandwidth" "$bin/" || exit 1
  cache=$(mktemp -d)
  export WARPGEN_CACHE_DIR=$cache
  "$bin/warp_latency" --compile-only 2>/dev/null
  "$bin/warp_bandwidth" --compile-only 2>/dev/null
  { "$bin/warpgen" list --arch sm_90 | grep -v '^reduce-'
    "$bin/test_reduce" --specs | sort -u | sed 's/$/ arch=sm_90/'; } |
    xargs -P "$(nproc)" -d '\n' -I{} "$bin/warpgen" cubin "{}" -o /dev/null
  tar czf "$bin/cache.tgz" -C "$cache" . && rm -rf "$cache"
  # The cache is keyed on this NVRTC file (name, size, mtime): the GPU
  # machine's run says whether its NVRTC is the same one.
  "$bin/warpgen" info | sed -n 's/^nvrtc id  //p' >"$bin/nvrtc-id"
  ls -la "$bin"
  exit 0
fi
bin=${1:?usage: tests/gpu_all.sh BINDIR}
out=${OUT:-gpu-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-/tmp/warpgen-cache}
mkdir -p "$WARPGEN_CACHE_DIR"
[ -f "$bin/cache.tgz" ] && tar xzf "$bin/cache.tgz" -C "$WARPGEN_CACHE_DIR"
# The toolkit's NVRTC, wherever this machine keeps it: warpgen loads it
# only to compile, from WARPGEN_NVRTC when set (see the README).
# (CUDA_VISIBLE_DEVICES= keeps `info` from starting CUDA: seconds here.)
nvrtc_info() { CUDA_VISIBLE_DEVICES= "$bin/warpgen" info 2>/dev/null; }
if [ -z "${WARPGEN_NVRTC:-}" ] && nvrtc_info | grep -q '^nvrtc at  (not found)'; then
  nvrtc=$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  # cache_bench links libnvrtc itself (it times NVRTC alone).
  [ -n "$nvrtc" ] && export WARPGEN_NVRTC=$nvrtc \
    LD_LIBRARY_PATH=$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
here_id=$(nvrtc_info | sed -n 's/^nvrtc id  //p')
if [ -f "$bin/nvrtc-id" ] && [ "$here_id" != "$(cat "$bin/nvrtc-id")" ]; then
  echo "note: NVRTC here ($here_id) is not the one cache.tgz was built with" \
       "($(cat "$bin/nvrtc-id")): compiling test_reduce's kernels here on every core"
  # Else test_reduce compiles its 889 kernels one by one (47 s on every
  # core of the H200 machine).
  "$bin/test_reduce" --specs | sort -u | sed 's/$/ arch=sm_90/' |
    xargs -P "$(nproc)" -d '\n' -I{} "$bin/warpgen" cubin "{}" -o /dev/null
fi
step() { echo; echo "=== $* ($(date +%T))"; }

step device
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
"$bin/warpgen" info | tail -4
arch=$("$bin/warpgen" info | sed -n 's/^  0: .*, \(sm_[0-9]*\),.*/\1/p')

step "warpgen run, as a user would"
"$bin/warpgen" run "reduce f32 sum"
"$bin/warpgen" run "scan i64 max width=16" --n 1000
"$bin/warpgen" run "reduce i32 sum width=32 variant=redux" --n '2^24+3'
"$bin/warpgen" bench "reduce f32 sum"
"$bin/warpgen" bench "reduce i32 sum variant=redux"
# Every (type, operator) of the whole-array and row reductions, checked
# against the oracle; the last lines of each say how many passed.
"$bin/warpgen" list reduce-array | timeout 120 "$bin/warpgen" run --specs - --n '2^20+7' \
  >"$out/run_reduce_array.log" 2>&1
echo "run reduce-array exit $?"; grep -E '^FAIL|specs,' "$out/run_reduce_array.log" | head -12
"$bin/warpgen" list reduce-rows | timeout 120 "$bin/warpgen" run --specs - --cols 1000 --n 1000003 \
  >"$out/run_reduce_rows.log" 2>&1
echo "run reduce-rows exit $?"; grep -E '^FAIL|specs,' "$out/run_reduce_rows.log" | head -12
"$bin/warpgen" run "reduce-array f64 var" --param 0 --n '2^24+3'
"$bin/warpgen" run "reduce-rows i64 argmax" --cols 0 --rows 3
"$bin/warpgen" bench "reduce-array f32 sum" --n '2^28'
"$bin/warpgen" bench "reduce-rows f32 sum" --cols 1000 --n '2^26'

# WARPGEN_GPU_SKIP_BENCH=1 (tests/gpu_parallel.sh runs scripts side by side,
# where timings mean nothing): the checks only.
bench=1
[ "${WARPGEN_GPU_SKIP_BENCH:-0}" = 1 ] && bench=0

if [ $bench = 1 ]; then
  step latency and throughput
  timeout 60 "$bin/warp_latency" >"$out/latency.md" 2>"$out/latency.err"
  echo "warp_latency exit $?"; tail -3 "$out/latency.err"

  step "bandwidth at 2^28 (docs/warp-bandwidth.md)"
  timeout 150 "$bin/warp_bandwidth" >"$out/warp-bandwidth.md" 2>"$out/warp-bandwidth.err"
  echo "warp_bandwidth exit $?"; tail -3 "$out/warp-bandwidth.err"
fi

step "gpu suite"
CK_DEFAULT_TIMEOUT=1200 timeout 400 "$bin/test_gpu" >"$out/test_gpu.log" 2>&1
echo "test_gpu exit $?"
grep -E '^gpu|FAIL|Checks|error' "$out/test_gpu.log" | head -60

step compute-sanitizer
PATH=$PATH:/usr/local/cuda/bin timeout 300 bash tests/sanitize.sh "$bin/warpgen" "$arch" \
  >"$out/sanitize.log" 2>&1
echo "sanitize exit $?"
tail -12 "$out/sanitize.log"

step "reduce suite (whole arrays and rows)"
# Its test cases side by side (one process each): one after another they
# ran past 300 s on the H200; side by side the longest, rows, took 163 s
# and the others 4 to 49 s (2026-12-02).
for c in array rows operators shapes streams expressions errors; do
  ( CK_RUN_CASE=$c CK_DEFAULT_TIMEOUT=600 timeout 300 "$bin/test_reduce" \
      >"$out/test_reduce-$c.log" 2>&1
    echo "test_reduce $c exit $?" ) &
done
wait
grep -hE '^reduce|FAIL|Checks|error' "$out"/test_reduce-*.log | head -20

step "expressions: random expressions rendered, compiled, run, checked against the CPU evaluator"
CK_DEFAULT_TIMEOUT=300 timeout 90 "$bin/test_expr_gpu" >"$out/test_expr_gpu.log" 2>&1
echo "test_expr_gpu exit $?"
grep -E '^expr-gpu|^FAIL|^  with|^  expected|Checks' "$out/test_expr_gpu.log" | head -40

if [ $bench = 1 ]; then
  step "disk cache: fresh-process hit to a launchable function"
  timeout 40 "$bin/cache_bench" --runs 21 >"$out/cache_bench.md" 2>&1
  echo "cache_bench exit $?"; cat "$out/cache_bench.md"
fi

step "python package against torch and cupy"
PYTHONPATH=python WARPGEN_LIBRARY=$bin/libwarpgen.so timeout 60 \
  python3 -m pytest -q -x python/tests >"$out/pytest.log" 2>&1
echo "pytest exit $?"; tail -5 "$out/pytest.log"

[ $bench = 1 ] || exit 0
step "start-up: warm-cache warpgen cubin, import warpgen"
timeout 60 bash bench/startup.sh "$bin" 200

step tables
cat "$out/latency.md"
