#!/usr/bin/env bash
# gpu_parallel.sh - several of the family GPU scripts (tests/gpu_*.sh) at
# once on one lent GPU, for a lease where minutes count: each runs in the
# background with its own log folder, and the run ends with one verdict
# block a script and every log packed into $OUT/logs.tgz (one file, so
# that it comes back however many logs there are).
#
# Side by side, benchmark numbers are not measurements: set
# WARPGEN_GPU_SKIP_BENCH=1 to leave out those of gpu_all.sh, gpu_scan.sh and gpu_rownorm.sh
# (the other scripts' benchmark steps are short and still run). Use it for
# correctness; time alone. NVRTC is located once here and exported, since
# gpu_axis.sh, gpu_compact.sh and gpu_dist.sh do not look for it.
#
# usage: tests/gpu_parallel.sh BINDIR SECONDS NAME...
#   BINDIR   a folder that holds what every named script's --prepare puts
#            there (they share one layout: warpgen, libwarpgen.so,
#            tests/liboracle.so, the test binaries, the peers)
#   SECONDS  the limit for the whole run (each script is stopped there)
#   NAME     all (tests/gpu_all.sh), warpacc, scan, axis, rownorm, compact,
#            hist or dist
set -u
bin=${1:?usage: tests/gpu_parallel.sh BINDIR SECONDS NAME...}
limit=${2:?usage: tests/gpu_parallel.sh BINDIR SECONDS NAME...}
shift 2
out=${OUT:-gpu-logs}
mkdir -p "$out/logs"
# The toolkit's NVRTC, wherever this machine keeps it (see gpu_all.sh).
if [ -z "${WARPGEN_NVRTC:-}" ] &&
   CUDA_VISIBLE_DEVICES= "$bin/warpgen" info 2>/dev/null | grep -q '^nvrtc at  (not found)'; then
  nvrtc=$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$nvrtc" ] && export WARPGEN_NVRTC=$nvrtc
fi
pids=()
for name in "$@"; do
  mkdir -p "$out/logs/$name"
  # Each its own cache folder: the scripts unpack theirs into it.
  OUT=$out/logs/$name WARPGEN_CACHE_DIR=/tmp/wg-par-cache-$name \
    timeout -k 10 "$limit" bash "tests/gpu_$name.sh" "$bin" >"$out/logs/$name/stdout.log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  echo "$1: exit $?" >>"$out/logs/exits.txt"
  shift
done
tar czf "$out/logs.tgz" -C "$out" logs
cat "$out/logs/exits.txt"
for f in "$out"/logs/*/stdout.log; do
  echo
  echo "=== $f (last lines)"
  tail -25 "$f"
done
