#!/usr/bin/env bash
# gpu_hist.sh - everything about histograms that needs the GPU, in one go
# (about 3 minutes on an H200): `warpgen run` as a user would try it, the
# Check suite's gpu mode (tests/test_hist.c: every method, size edge and
# key edge against the oracle), compute-sanitizer memcheck and racecheck
# on small sizes of each method, the benchmark against CUB
# (bench/hist_peers.cu) and, where torch is installed, the Python tests
# and PyTorch's bincount/histc (bench/hist_peers.py).
#
# usage: tests/gpu_hist.sh --prepare BUILD BINDIR   (here, no GPU needed)
#        tests/gpu_hist.sh BINDIR                   (on the GPU machine)
#   --prepare copies warpgen, test_hist, libwarpgen and liboracle from the
#   meson build folder BUILD, builds bench/hist_peers.cu with nvcc against
#   BUILD/libwarpgen.a, and compiles every histogram spec the run uses for
#   sm_90 into BINDIR/hist-cache.tgz, so the GPU machine compiles nothing.
#   BINDIR should be an ignored folder (e.g. build-gpu) to carry.
# Logs go to $OUT (else ./gpu-logs). Exit 0 when every step passed.
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: tests/gpu_hist.sh --prepare BUILD BINDIR}
  bin=${3:?usage: tests/gpu_hist.sh --prepare BUILD BINDIR}
  cuda=${CUDA_PATH:-/usr/local/cuda}
  mkdir -p "$bin/tests" && cp "$build/warpgen" "$build/tests/test_hist" \
    "$build/libwarpgen.so.0" "$bin/" && cp "$build/tests/liboracle.so" "$bin/tests/" || exit 1
  ln -sf libwarpgen.so.0 "$bin/libwarpgen.so"
  "$cuda/bin/nvcc" -arch=sm_90 -O3 -std=c++17 -Iinclude -Itests -o "$bin/hist_peers" \
    bench/hist_peers.cu tests/oracle.c tests/oracle_warp.c tests/oracle_hist.c \
    "$build/libwarpgen.a" -ldl -lpthread || exit 1
  cache=$(mktemp -d)
  export WARPGEN_CACHE_DIR=$cache
  # Every spec the suite, the runs, the benchmarks and the Python tests
  # launch (kernels are made for bins rounded up to 8 steps an octave, so
  # one count of each step covers the Python tests' data-dependent bins).
  { "$bin/test_hist" --specs
    # warpgen run / bench below
    printf '%s\n' 'histogram i32 bins=256' 'histogram f32 bins=65536' \
      'histogram f16 bins=1000 counts=u64' 'histogram u64 bins=200000' \
      'histogram f32 bins=100 map="i32(x * p0)" params=f32' 'histogram f32 bins=256' \
      'histogram i32 bins=65536' 'histogram f32 bins=4096' 'histogram i32 bins=65536 counts=u64' \
      'histogram f16 bins=30000' 'histogram i64 bins=200000' 'histogram u32 bins=1' \
      'histogram f64 bins=255 counts=u64' 'histogram i32 bins=65 map="x % 64 + i32(i % 2)"'
    # the Python tests and bench/hist_peers.py (u64 counts); bincount's
    # data-dependent bins beyond these compile there (a second each)
    for t in f16 f32 f64 i32 i64; do
      for b in 1 2 3 5 10 256 65536 200000 300000 300007 65543 263 262 30000; do
        echo "histogram $t bins=$b counts=u64"
      done
    done
  } | sort -u | sed 's/$/ arch=sm_90/' |
    xargs -P "$(nproc)" -d '\n' -I{} "$bin/warpgen" cubin "{}" -o /dev/null
  tar czf "$bin/hist-cache.tgz" -C "$cache" . && rm -rf "$cache"
  "$bin/warpgen" info | sed -n 's/^nvrtc id  //p' >"$bin/hist-nvrtc-id"
  ls -la "$bin"
  exit 0
fi
bin=${1:?usage: tests/gpu_hist.sh BINDIR}
bin=$(cd "$bin" && pwd)
out=${OUT:-gpu-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-/tmp/warpgen-cache}
mkdir -p "$WARPGEN_CACHE_DIR"
[ -f "$bin/hist-cache.tgz" ] && tar xzf "$bin/hist-cache.tgz" -C "$WARPGEN_CACHE_DIR"
nvrtc_info() { CUDA_VISIBLE_DEVICES= "$bin/warpgen" info 2>/dev/null; }
if [ -z "${WARPGEN_NVRTC:-}" ] && nvrtc_info | grep -q '^nvrtc at  (not found)'; then
  nvrtc=$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$nvrtc" ] && export WARPGEN_NVRTC=$nvrtc
fi
here_id=$(nvrtc_info | sed -n 's/^nvrtc id  //p')
if [ -f "$bin/hist-nvrtc-id" ] && [ "$here_id" != "$(cat "$bin/hist-nvrtc-id")" ]; then
  echo "note: NVRTC here ($here_id) is not the one hist-cache.tgz was built with: kernels compile here"
fi
export LD_LIBRARY_PATH=$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failed=0
step() { echo; echo "=== $* ($(date +%T))"; }
verdict() { # name exit-code
  echo "$1: exit $2"
  [ "$2" -eq 0 ] || failed=1
}

step device
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
"$bin/warpgen" info | tail -3

step "warpgen run and bench, as a user would"
"$bin/warpgen" run "histogram i32 bins=256"; verdict "run i32 256" $?
"$bin/warpgen" run "histogram f32 bins=65536" --n '2^24+3'; verdict "run f32 65536" $?
"$bin/warpgen" run "histogram f16 bins=1000 counts=u64" --param -1 --param 2; verdict "run f16 1000" $?
"$bin/warpgen" run "histogram u64 bins=200000" --n '2^22+5'; verdict "run u64 200000" $?
"$bin/warpgen" run 'histogram f32 bins=100 map="i32(x * p0)" params=f32' --param 10; verdict "run map" $?
"$bin/warpgen" bench "histogram f32 bins=256" --n '2^28' --reps 20
"$bin/warpgen" bench "histogram i32 bins=65536" --n '2^28' --reps 20

step "test_hist (every method, size and key edge against the oracle)"
timeout 150 "$bin/test_hist" >"$out/test_hist.log" 2>&1
rc=$?; tail -4 "$out/test_hist.log"; grep -E 'F:|E:' "$out/test_hist.log" | head -10
verdict test_hist $rc

step "compute-sanitizer memcheck and racecheck (each method, small sizes)"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$sanitizer" ]; then
  specs="$out/sanitize_specs"
  cat >"$specs" <<'EOF'
histogram i32 bins=256
histogram f32 bins=4096
histogram i32 bins=65536 counts=u64
histogram f16 bins=30000
histogram i64 bins=200000
histogram u32 bins=1
histogram f64 bins=255 counts=u64
histogram i32 bins=65 map="x % 64 + i32(i % 2)"
EOF
  for tool in memcheck racecheck; do
    for n in 4099 70001; do
      log="$out/sanitize-$tool-$n.log"
      timeout 120 "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 20 \
        "$bin/warpgen" run --specs "$specs" --n "$n" >"$log" 2>&1
      rc=$?
      echo "$tool n=$n: $(grep -E '^[0-9]+ specs' "$log" | tail -1) $(grep -E '(ERROR|RACECHECK) SUMMARY' "$log" | tail -1)"
      [ "$rc" -eq 0 ] || grep -E '=========|FAIL' "$log" | head -20
      verdict "sanitize $tool n=$n" $rc
    done
  done
else
  echo "compute-sanitizer not found: skipped"
fi

step "benchmark: warpgen against CUB DeviceHistogram::HistogramEven at 2^28"
timeout 120 "$bin/hist_peers" --n $((1 << 28)) --reps 20 | tee "$out/hist_peers.txt"
verdict hist_peers "${PIPESTATUS[0]}"

step "python: tests against torch.histc / torch.bincount, and PyTorch's speeds"
if python3 -c 'import pytest, torch; assert torch.cuda.is_available()' 2>/dev/null; then
  export PYTHONPATH=$PWD/python WARPGEN_LIBRARY=$bin/libwarpgen.so
  timeout 120 python3 -m pytest -q -x python/tests/test_gpu_hist.py >"$out/pytest_hist.log" 2>&1
  rc=$?; tail -3 "$out/pytest_hist.log"; verdict pytest_hist $rc
  timeout 90 python3 bench/hist_peers.py --n $((1 << 28)) --reps 10 | tee "$out/hist_peers_py.txt"
  verdict hist_peers.py "${PIPESTATUS[0]}"
else
  echo "no pytest, or no torch with CUDA, here: skipped"
fi

step summary
[ "$failed" -eq 0 ] && echo "gpu_hist: all passed" || echo "gpu_hist: FAILURES above (logs in $out)"
exit "$failed"
