#!/usr/bin/env bash
# gpu_warpacc.sh - the GPU check of the warp primitives' operators and
# expressions (issue 9: argmin..count_nonzero, map/combine/identity/final,
# inputs, parameters in the warp reduce, allreduce and scans), in one go and
# about 4 minutes on an H200:
#   1. the gpu suite's spec loop over the listed specs of the new operators
#      (one width each per (type, operator, variant, layout), the run's
#      seed draws it) and a sample of the old ones in every operator
#      primitive (the templates changed under them too), every output
#      against the CPU oracle at sizes 0, 1, w-1, w+1, 1000, 2^20+7 and
#      off 16-byte alignment;
#   2. the suite's api case: auto specs, the expression/input/parameter
#      cases of tests/warp_cases.h through wg_warp_launch_ex, the errors;
#   3. compute-sanitizer memcheck and racecheck over one spec of each new
#      shape (struct accumulators in every variant and layout, smem's
#      32-byte slots, combine=, map=, final=) through `warpgen run`;
#   4. warp_bandwidth for argmax and var (struct accumulators);
#   5. python/tests/test_gpu_warp_operators.py (PyTorch as the reference);
#   6. the suite's large case, its argmax launch only (global indices past
#      2^31, 2^31+33 elements; WARPGEN_GPU_LARGE=ops).
# Logs go to $OUT (else ./gpu-logs); the lines printed are the summaries.
#
# usage: tests/gpu_warpacc.sh --prepare BUILD BINDIR   (here, no GPU needed)
#        tests/gpu_warpacc.sh BINDIR                   (on the GPU machine)
#   --prepare copies warpgen, test_gpu, warp_bandwidth and the library from
#   the meson build folder BUILD into BINDIR (carry it); the GPU machine
#   compiles the kernels itself (test_gpu on every core).
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: tests/gpu_warpacc.sh --prepare BUILD BINDIR}
  bin=${3:?usage: tests/gpu_warpacc.sh --prepare BUILD BINDIR}
  mkdir -p "$bin" && cp "$build/warpgen" "$build/tests/test_gpu" \
    "$build/bench/warp_bandwidth" "$build/libwarpgen.so.0" "$bin/" || exit 1
  ln -sf libwarpgen.so.0 "$bin/libwarpgen.so"
  ls -la "$bin"
  exit 0
fi
bin=${1:?usage: tests/gpu_warpacc.sh BINDIR}
out=${OUT:-gpu-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-/tmp/warpgen-cache}
mkdir -p "$WARPGEN_CACHE_DIR"
# The toolkit's NVRTC, wherever this machine keeps it (as tests/gpu_all.sh).
nvrtc_info() { CUDA_VISIBLE_DEVICES= "$bin/warpgen" info 2>/dev/null; }
if [ -z "${WARPGEN_NVRTC:-}" ] && nvrtc_info | grep -q '^nvrtc at  (not found)'; then
  nvrtc=$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$nvrtc" ] && export WARPGEN_NVRTC=$nvrtc
fi
step() { echo; echo "=== $* ($(date +%T))"; }
new_ops='argmin|argmax|mean|var|std|norm1|norm2|norminf|logsumexp|count_nonzero'

step "gpu suite: listed specs of the new operators, a sample of the old"
WARPGEN_GPU_FILTER="^(reduce|allreduce) [a-z0-9]+ ($new_ops) |^(reduce|allreduce|scan|exscan) (f16|f32|i64) (sum|max) width=(8|32) " \
  CK_RUN_CASE=specs CK_DEFAULT_TIMEOUT=600 timeout 150 "$bin/test_gpu" >"$out/warpacc_specs.log" 2>&1
echo "specs exit $?"
grep -E '^gpu|FAIL|Checks|error' "$out/warpacc_specs.log" | head -30

step "gpu suite: api (auto specs, expressions/inputs/parameters, errors)"
CK_RUN_CASE=api CK_DEFAULT_TIMEOUT=300 timeout 60 "$bin/test_gpu" >"$out/warpacc_api.log" 2>&1
echo "api exit $?"
grep -E '^gpu|FAIL|Checks|error' "$out/warpacc_api.log" | head -20

step "compute-sanitizer memcheck + racecheck"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
specs="$out/warpacc_sanitize_specs"
{
  for v in "variant=down" "variant=xor" "variant=idx" "variant=down layout=lane" \
           "variant=xor layout=lane" "variant=smem"; do
    echo "reduce f32 argmax width=8 $v"
    echo "allreduce f64 var width=32 $v"
  done
  echo "allreduce bf16 logsumexp width=16 variant=smem"
  echo "reduce i64 count_nonzero width=4 variant=idx layout=lane"
  echo "allreduce f16 std width=2 variant=xor"
  echo 'reduce i32 combine="max(a, b)" identity="-2147483648" width=16 variant=smem'
  echo 'scan u32 combine="a + b" identity="0" width=32 variant=up'
  echo 'exscan i32 sum map="x * x + i32(i % 3)" width=8 variant=idx layout=lane'
  echo 'allreduce u32 combine="a + b" identity="0" final="f64(r) / f64(n)" width=16'
  echo 'reduce f32 argmin map="abs(x)" width=32 variant=down layout=lane'
} >"$specs"
for tool in memcheck racecheck; do
  timeout 120 "$sanitizer" --tool "$tool" --error-exitcode 9 --print-limit 20 \
    "$bin/warpgen" run --specs "$specs" --n 999 >"$out/warpacc_$tool.log" 2>&1
  echo "$tool exit $? ($(wc -l <"$specs") specs, n=999): $(grep -E '(ERROR|RACECHECK) SUMMARY' "$out/warpacc_$tool.log" | tail -1)"
  grep -E '^FAIL|specs,' "$out/warpacc_$tool.log" | head -5
done

step "bandwidth of struct operators at 2^28, width 32"
for op in argmax var; do
  timeout 40 "$bin/warp_bandwidth" --op "$op" >"$out/warpacc_bandwidth_$op.md" \
    2>"$out/warpacc_bandwidth_$op.err"
  echo "warp_bandwidth --op $op exit $?"
  grep -E '^\| (reduce|allreduce) \| (f32|f64|i32) ' "$out/warpacc_bandwidth_$op.md"
  grep -E 'copy ceiling' "$out/warpacc_bandwidth_$op.md" | head -1
done

step "python: warp operators and expressions against PyTorch"
PYTHONPATH=python WARPGEN_LIBRARY=$bin/libwarpgen.so timeout 60 \
  python3 -m pytest -q python/tests/test_gpu_warp_operators.py >"$out/warpacc_pytest.log" 2>&1
echo "pytest exit $?"; tail -3 "$out/warpacc_pytest.log"

step "gpu suite: large (argmax's global index past 2^31)"
WARPGEN_GPU_LARGE=ops CK_RUN_CASE=large CK_DEFAULT_TIMEOUT=600 timeout 90 "$bin/test_gpu" \
  >"$out/warpacc_large.log" 2>&1
echo "large exit $?"
grep -E 'argmax|past 2\^31: [0-9]|FAIL|Checks' "$out/warpacc_large.log" | head -8
