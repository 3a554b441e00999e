#!/usr/bin/env bash
# gpu_rownorm.sh - everything of the fused row kernels (softmax-rows,
# log-softmax-rows, layernorm-rows, rmsnorm-rows) that needs the GPU, in one
# go of about 4 minutes on an H200 (each step has a limit; at most about 13): `warpgen run`/`bench` as a user would,
# the Check suite against the float64 oracle, compute-sanitizer memcheck and
# racecheck on small sizes, the Python tests against PyTorch (and CuPy when
# present), and the benchmark beside PyTorch (bench/rownorm_peers.py).
# Each step has a time limit; the last lines printed are the summaries.
# Exit: 0 when every check passed or was skipped, else 1.
# WARPGEN_GPU_SKIP_BENCH=1 leaves out the benchmarks.
#
# usage: tests/gpu_rownorm.sh --prepare BUILD BINDIR   (here, no GPU needed)
#        tests/gpu_rownorm.sh BINDIR                   (on the GPU machine,
#                                                      from the source root)
#   --prepare copies warpgen, test_rownorm, libwarpgen.so and liboracle.so
#   from the meson build folder BUILD into BINDIR (an ignored folder such
#   as build-gpu, to carry) and compiles every spec the run launches into
#   BINDIR/rownorm-cache.tgz on every core here, so the GPU machine
#   compiles nothing when its NVRTC is the same file.
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: tests/gpu_rownorm.sh --prepare BUILD BINDIR}
  bin=${3:?usage: tests/gpu_rownorm.sh --prepare BUILD BINDIR}
  mkdir -p "$bin/tests" && cp "$build/warpgen" "$build/tests/test_rownorm" \
    "$build/libwarpgen.so.0" "$bin/" && cp "$build/tests/liboracle.so" "$bin/tests/" || exit 1
  ln -sf libwarpgen.so.0 "$bin/libwarpgen.so"
  cache=$(mktemp -d)
  export WARPGEN_CACHE_DIR=$cache
  # The Check suite's, the sanitizer run's, the benchmark's (rownorm_peers.py:
  # its row lengths, and the other shapes --shapes tries) and the CLI's.
  { "$bin/test_rownorm" --specs
    WARPGEN_ROWNORM_QUICK=1 "$bin/test_rownorm" --specs
    "$bin/test_rownorm" --specs-for 32 128 1024 4096 16384 32768 300
    for t in bf16 f32; do for p in softmax-rows layernorm-rows; do
      for c in 1024 4096 16384 32768 0; do echo "$p $t cols=$c"; done; done; done
    printf '%s\n' "softmax-rows f32 cols=1024" "log-softmax-rows bf16 cols=33" \
      "layernorm-rows f16 cols=4096" "rmsnorm-rows f64 cols=1000" "layernorm-rows f32 cols=0"
  } | sort -u | sed 's/$/ arch=sm_90/' |
    xargs -P "$(nproc)" -d '\n' -I{} "$bin/warpgen" cubin "{}" -o /dev/null
  tar czf "$bin/rownorm-cache.tgz" -C "$cache" . && rm -rf "$cache"
  "$bin/warpgen" info | sed -n 's/^nvrtc id  //p' >"$bin/nvrtc-id"
  ls -la "$bin"
  exit 0
fi
bin=$(cd "${1:?usage: tests/gpu_rownorm.sh BINDIR}" && pwd)
out=${OUT:-gpu-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-/tmp/warpgen-cache}
mkdir -p "$WARPGEN_CACHE_DIR"
[ -f "$bin/rownorm-cache.tgz" ] && tar xzf "$bin/rownorm-cache.tgz" -C "$WARPGEN_CACHE_DIR"
nvrtc_info() { CUDA_VISIBLE_DEVICES= "$bin/warpgen" info 2>/dev/null; }
if [ -z "${WARPGEN_NVRTC:-}" ] && nvrtc_info | grep -q '^nvrtc at  (not found)'; then
  nvrtc=$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$nvrtc" ] && export WARPGEN_NVRTC=$nvrtc
fi
here_id=$(nvrtc_info | sed -n 's/^nvrtc id  //p')
if [ -f "$bin/nvrtc-id" ] && [ "$here_id" != "$(cat "$bin/nvrtc-id")" ]; then
  echo "note: NVRTC here ($here_id) is not the one the cache was built with: kernels compile here"
fi
export WARPGEN_TEMPLATE_DIR=
export WARPGEN_LIBRARY=$bin/libwarpgen.so WARPGEN_ORACLE_LIBRARY=$bin/tests/liboracle.so
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
step() { echo; echo "=== $* ($(date +%T))"; }
declare -A verdict

step device
nvidia-smi --query-gpu=name,driver_version,clocks.sm,memory.total --format=csv,noheader
"$bin/warpgen" info | tail -2

step "warpgen run / bench"
ok=PASS
for s in "softmax-rows f32 cols=1024" "log-softmax-rows bf16 cols=33" \
         "layernorm-rows f16 cols=4096" "rmsnorm-rows f64 cols=1000" "layernorm-rows f32"; do
  cols=; case $s in *cols=*) ;; *) cols="--cols 100000";; esac
  timeout 60 "$bin/warpgen" run "$s" --rows 300 $cols || ok=FAIL
done
timeout 60 "$bin/warpgen" bench "softmax-rows f32 cols=1024" --rows 65536 --reps 20 || ok=FAIL
verdict[cli]=$ok

step "Check suite: test_rownorm gpu (oracle, every type and shape)"
# Its test cases side by side, one process each: one after another they
# ran past 120 s on the H200 (2026-12-02), most of it the host oracle's
# long double sums over rows of 2^20; layernorm alone took 180 s there on
# 2026-12-04 before its rows were trimmed, and 228 s on an H100 in stop
# 42 (beside the sanitizers it passed 240 s), hence a limit of 330 s each.
for c in softmax log-softmax layernorm rmsnorm repeat streams; do
  ( CK_RUN_CASE=$c timeout 330 "$bin/test_rownorm" gpu >"$out/rownorm-gpu-$c.log" 2>&1
    echo $? >"$out/rownorm-gpu-$c.rc" ) &
done
wait
verdict[check]=PASS
for c in softmax log-softmax layernorm rmsnorm repeat streams; do
  rc=$(cat "$out/rownorm-gpu-$c.rc")
  echo "test_rownorm gpu $c: exit $rc, $(grep -h 'Checks:' "$out/rownorm-gpu-$c.log")"
  # A case name the suite lacks would run nothing and exit 0.
  [ "$rc" = 0 ] && ! grep -q 'Checks: [1-9]' "$out/rownorm-gpu-$c.log" && rc="0, no check ran"
  case $rc in
    0) ;;
    77) [ "${verdict[check]}" = PASS ] && verdict[check]="SKIP (no GPU)" ;;
    *) verdict[check]="FAIL ($c rc=$rc)"; grep -hE ':[FE]:' "$out/rownorm-gpu-$c.log" | head -5 ;;
  esac
done

san=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
step "compute-sanitizer --tool memcheck and racecheck, side by side (WARPGEN_ROWNORM_QUICK=1)"
# Side by side: most of their time is the host's instrumentation, and one
# after the other they took 114 s and about 150 s on an H100 (2026-12-05
# and 06; racecheck beside a Check suite case took 204 s, stop 39).
limit=240
for tool in memcheck racecheck; do
  if [ -z "$san" ]; then verdict[$tool]="SKIP (no compute-sanitizer)"; continue; fi
  ( WARPGEN_ROWNORM_QUICK=1 CK_FORK=no timeout $limit "$san" --tool "$tool" --error-exitcode 9 \
      "$bin/test_rownorm" gpu >"$out/rownorm-$tool.log" 2>&1
    echo $? >"$out/rownorm-$tool.rc" ) &
done
wait
for tool in memcheck racecheck; do
  [ -n "$san" ] || continue
  rc=$(cat "$out/rownorm-$tool.rc")
  if [ "$rc" = 0 ]; then verdict[$tool]=PASS; else verdict[$tool]="FAIL rc=$rc"; fi
  echo "$tool:"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Checks:" "$out/rownorm-$tool.log" | tail -3
done

step "python tests (PyTorch, CuPy, the oracle)"
if timeout 120 python3 -m pytest -q --maxfail=5 python/tests/test_gpu_rownorm.py >"$out/rownorm-py.log" 2>&1
then verdict[python]=PASS; else verdict[python]="FAIL rc=$?"; fi
grep -q " passed" "$out/rownorm-py.log" || verdict[python]="${verdict[python]} (nothing ran: no torch?)"
tail -3 "$out/rownorm-py.log"

# WARPGEN_GPU_SKIP_BENCH=1 (tests/gpu_parallel.sh runs scripts side by
# side, where timings mean nothing; or a lease that times the change
# apart): the checks only.
: >"$out/rownorm-bench.log"
if [ "${WARPGEN_GPU_SKIP_BENCH:-0}" != 1 ]; then
  step "benchmark: bench/rownorm_peers.py (2^26 elements, f32 and bf16)"
  timeout 90 python3 bench/rownorm_peers.py --csv "$out/rownorm_peers.csv" | tee "$out/rownorm-bench.log"
  step "other shapes at the long row lengths (src/fam_rownorm.c's table)"
  timeout 40 python3 bench/rownorm_peers.py --cols 1024,4096,32768 --reps 10 --shapes | grep '^shape' \
    | tee "$out/rownorm-shapes.log"
  step "torch.compile at 1024 columns (f32; skipped after 45 s)"
  timeout 45 python3 bench/rownorm_peers.py --types f32 --cols 1024 --reps 10 --compile | tail -6
fi

step summary
for k in cli check memcheck racecheck python; do printf '%-10s %s\n' "$k" "${verdict[$k]}"; done
grep "slowest warpgen" "$out/rownorm-bench.log"
# The exit says whether every check passed (a skip is no failure): not
# the grep's status, which is 1 when the benchmark was left out.
failed=0
for k in cli check memcheck racecheck python; do
  case ${verdict[$k]} in PASS|SKIP*) ;; *) failed=1 ;; esac
done
exit $failed
