#!/usr/bin/env bash
# lookback_sweep.sh - the scan's look-back knobs (templates/lookback.cuh:
# the sleep before the first poll, the sleep between polls, the statuses a
# lane polls) swept on one GPU with one library. Each variant is a copy of
# templates/ with the knobs written into lookback.cuh, named to the library
# by WARPGEN_TEMPLATE_DIR; bench/scan_peers.cu times the whole-array scans
# against CUB and the copy ceiling (checking every output against CUB's and
# the deterministic bits five times). The variants alternate, the library's
# own knobs ("built-in") first, each run twice. How the first sleep of
# 2 us was chosen: docs/scan-design.md, "The first sleep".
#
# usage: bench/lookback_sweep.sh --prepare BUILD BINDIR FIRST:POLL:K ...
#          (here) scan_peers linked with BUILD's library, and a template
#          folder a variant: FIRST and POLL in ns, K the statuses a lane
#          for 4-byte accumulators (8-byte ones keep the library's)
#        bench/lookback_sweep.sh BINDIR [LOG2N] [--rows]   (on the GPU machine)
#   prints, per run, the variant and warpgen's GB/s (deterministic=0 and
#   =1 for f32, i32, f64; with --rows the row scans too, whose rows of a
#   tile or more run the same look-back); the whole log of each run goes
#   to $OUT.
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: bench/lookback_sweep.sh --prepare BUILD BINDIR FIRST:POLL:K ...}
  bin=${3:?usage: bench/lookback_sweep.sh --prepare BUILD BINDIR FIRST:POLL:K ...}
  shift 3
  [ $# -gt 0 ] || { echo "lookback_sweep: name at least one FIRST:POLL:K" >&2; exit 2; }
  cuda=${CUDA_PATH:-/usr/local/cuda}
  mkdir -p "$bin" || exit 1
  "$cuda/bin/nvcc" -arch=sm_90 -O3 -std=c++17 -Iinclude -Ibench -o "$bin/scan_peers" \
    bench/scan_peers.cu "$build/libwarpgen.a" -ldl -lpthread || exit 1
  for v in "$@"; do
    IFS=: read -r first poll k <<<"$v"
    case "$first:$poll:$k" in
      *[!0-9:]* | :* | *:: | *:) echo "lookback_sweep: '$v' is not FIRST:POLL:K" >&2; exit 2 ;;
    esac
    dir="$bin/lb-$first-$poll-$k"
    rm -rf "$dir" && cp -r templates "$dir" || exit 1
    sed -i -e "s/^#define WG_LB_K .*/#define WG_LB_K ((\${lb_k}) == 4 ? $k : (\${lb_k}))/" \
      -e "s/^#define WG_LB_FIRST_SLEEP .*/#define WG_LB_FIRST_SLEEP $first/" \
      -e "s/^#define WG_LB_SLEEP .*/#define WG_LB_SLEEP $poll/" "$dir/lookback.cuh"
    grep -q "WG_LB_FIRST_SLEEP $first\$" "$dir/lookback.cuh" || { echo "lookback_sweep: \
lookback.cuh no longer has the lines this script rewrites" >&2; exit 1; }
  done
  ls "$bin"
  exit 0
fi
bin=$(cd "${1:?usage: bench/lookback_sweep.sh BINDIR [LOG2N] [--rows]}" && pwd)
log2n=${2:-28}
rows=--no-rows
[ "${3:-}" = --rows ] && rows=
out=${OUT:-gpu-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-/tmp/warpgen-lookback-cache}
variants=(built-in)
for d in "$bin"/lb-*; do [ -d "$d" ] && variants+=("$(basename "$d")"); done
for round in 1 2; do
  for v in "${variants[@]}"; do
    tpl=; [ "$v" != built-in ] && tpl=$bin/$v
    log="$out/lookback-$v-$round.log"
    WARPGEN_TEMPLATE_DIR=$tpl timeout 240 "$bin/scan_peers" --log2n "$log2n" $rows >"$log" 2>&1
    echo "$v run $round (exit $?): $(grep -E 'warpgen deterministic|WRONG' "$log" |
      sed -E -e 's/^ *scan ([a-z0-9]+) .*deterministic=([01]).* ([0-9.]+ GB\/s).*/\1 det=\2 \3/' \
        -e 's/^ *scan-rows f32 ([0-9x]+) .*deterministic=([01]).* ([0-9.]+ GB\/s).*/rows \1 det=\2 \3/' |
      tr '\n' ';')"
  done
done
