#!/usr/bin/env bash
# stream_cost.sh - bench/stream_cost.c against this tree's library and
# against the library before per-launch workspaces (commit c5ca647), so
# that one run on a GPU machine shows what right answers on every stream
# cost, and that the old library gave wrong ones.
#
# usage: bench/stream_cost.sh --prepare BUILD BINDIR  (here, no GPU needed)
#        bench/stream_cost.sh BINDIR [--quick]        (on the GPU machine)
#   --prepare links stream_cost.c against BUILD/libwarpgen.a (new) and
#   against c5ca647's libwarpgen.a, built from `git archive` in a temporary
#   folder (old). BINDIR should be an ignored folder (e.g. build-gpu).
set -eu
old_commit=c5ca647
cuda=${CUDA_PATH:-/usr/local/cuda}
link() { # LIBDIR OUTPUT
  gcc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -I"$cuda/include" bench/stream_cost.c \
    "$1/libwarpgen.a" -L"$cuda/lib64" -lnvrtc -ldl -lpthread -lm \
    -Wl,-rpath,"$cuda/lib64" -o "$2"
}
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: bench/stream_cost.sh --prepare BUILD BINDIR}
  bin=${3:?usage: bench/stream_cost.sh --prepare BUILD BINDIR}
  mkdir -p "$bin"
  link "$build" "$bin/stream_cost_new"
  tmp=$(mktemp -d)
  git archive "$old_commit" | tar -x -C "$tmp"
  (cd "$tmp" && meson setup build >/dev/null && ninja -C build libwarpgen.a >/dev/null)
  link "$tmp/build" "$bin/stream_cost_old"
  rm -rf "$tmp"
  ls -la "$bin"/stream_cost_*
  exit 0
fi
bin=${1:?usage: bench/stream_cost.sh BINDIR [--quick]}
shift
# The toolkit's NVRTC, wherever this machine keeps it.
if ! ldd "$bin/stream_cost_new" | grep -q 'libnvrtc.*=> /'; then
  nvrtc=$(find / -name 'libnvrtc.so.13*' -not -path '/proc/*' 2>/dev/null | head -1)
  export LD_LIBRARY_PATH=$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export WARPGEN_CACHE=off # both compile their own kernels
for v in old new; do
  echo "=== $v ($([ $v = old ] && echo "$old_commit: workspaces in the module" || echo "per-launch workspaces"))"
  "$bin/stream_cost_$v" "$@" || echo "stream_cost_$v failed: $?"
done
