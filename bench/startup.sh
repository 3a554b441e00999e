#!/usr/bin/env bash
# startup.sh - what a process pays before its first kernel: a warm-cache
# `warpgen cubin` process, and `import warpgen`, each against an empty
# baseline (/bin/true, python3 -c pass) in the same loop, so that machine
# noise shows. Also checks that the warm process never opened libnvrtc.
# Builds nothing; runs anywhere (no GPU needed, none used).
#
# usage: bench/startup.sh BINDIR [RUNS]
#   BINDIR holds warpgen and libwarpgen.so (a meson build folder, or the
#   folder tests/gpu_all.sh --prepare fills). Run from the repository root
#   (python/ is imported from there).
set -u
bin=${1:?usage: bench/startup.sh BINDIR [RUNS]}
runs=${2:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export WARPGEN_CACHE_DIR=$tmp/cache
spec="reduce f32 sum width=32 variant=down arch=sm_90"

# mean_us N CMD...: mean wall time of N runs of CMD, in microseconds.
mean_us() {
  local n=$1 i=0; shift
  local t0=$(date +%s%N)
  while [ $i -lt "$n" ]; do "$@" >/dev/null 2>&1 || { echo "FAILED: $*" >&2; return 1; }; i=$((i + 1)); done
  echo $((($(date +%s%N) - t0) / n / 1000))
}

"$bin/warpgen" cubin "$spec" -o "$tmp/k.cubin" || exit 1 # warms the cache
if LD_DEBUG=files "$bin/warpgen" cubin "$spec" -o "$tmp/k.cubin" 2>&1 | grep -q libnvrtc; then
  echo "FAIL: a warm-cache warpgen cubin opened libnvrtc"
else
  echo "ok: a warm-cache warpgen cubin never opens libnvrtc"
fi
echo "ldd warpgen: $(ldd "$bin/warpgen" | grep -c -e nvrtc -e libcuda) lines name nvrtc or libcuda"

true_us=$(mean_us "$runs" /bin/true)
cubin_us=$(mean_us "$runs" "$bin/warpgen" cubin "$spec" -o "$tmp/k.cubin")
echo "warm-cache warpgen cubin: $cubin_us us a process (/bin/true: $true_us us; $runs runs)"

# Python: bytecode cached, as an installed package has it.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=$tmp/pyc PYTHONPATH=$PWD/python WARPGEN_LIBRARY=$bin/libwarpgen.so
python3 -c "import warpgen" || exit 1
best=999999
for _ in $(seq 20); do
  t=$(python3 -X importtime -c "import warpgen" 2>&1 | sed -n 's/^import time: *[0-9]* | *\([0-9]*\) | warpgen$/\1/p')
  [ -n "$t" ] && [ "$t" -lt "$best" ] && best=$t
done
echo "import warpgen (-X importtime, best of 20): $best us"
n=$((runs / 4))
pass_us=$(mean_us "$n" python3 -c pass)
import_us=$(mean_us "$n" python3 -c "import warpgen")
echo "python3 -c 'import warpgen': $import_us us a process (python3 -c pass: $pass_us us; $n runs)"
python3 -c "
import warpgen
maps = open('/proc/self/maps').read()
print('after import: libnvrtc mapped:', 'libnvrtc' in maps, '| libcuda mapped:', 'libcuda' in maps)"
