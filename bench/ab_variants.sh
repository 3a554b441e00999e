#!/usr/bin/env bash
# ab_variants.sh - one Python benchmark against several builds of warpgen
# on one GPU, alternating, so that each change is measured against the
# code it changes in the same lease (runs on one H200 differ by up to 3 %;
# leases by more). A variant is this repository's HEAD with one patch
# applied (bench/experiments/*.patch, each a `git diff` of the whole tree,
# its header saying what it tries); "base" is HEAD as it is. The benchmark
# picks the library through WARPGEN_LIBRARY (python/warpgen).
#
# usage: bench/ab_variants.sh --prepare BINDIR [--specs FILE] [PATCH...]   (here)
#          builds HEAD's libwarpgen.so.0 and warpgen into BINDIR/base and,
#          for every PATCH, HEAD with it applied into BINDIR/NAME (the
#          patch's file name without .patch); a patch that no longer
#          applies stops it. --specs FILE (one spec a line, e.g. from
#          `build/tests/test_rownorm --specs-for 4096 32768`) compiles them
#          for sm_90 with every variant into BINDIR/ab-cache.tgz, so that
#          the GPU machine compiles nothing when its NVRTC is the same.
#        bench/ab_variants.sh BINDIR ROUNDS BENCH.py [ARGS...]   (GPU)
#          runs `python3 BENCH.py ARGS` ROUNDS times a variant (base, or
#          old, first; each run at most AB_RUN_LIMIT seconds, default
#          240), into $OUT/ab-VARIANT-N.txt, then prints
#          bench/ab_summary.py's table: every measurement's fraction of the
#          copy ceiling, run by run, variant by variant.
# bench/ab_library.sh prepares an old revision against this tree in the
# same layout and runs through here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --prepare ]; then
  usage="usage: bench/ab_variants.sh --prepare BINDIR [--specs FILE] [PATCH...]"
  bin=${2:?$usage}
  shift 2
  specs=
  if [ "${1:-}" = --specs ]; then
    specs=$(realpath "${2:?$usage}") || exit 1
    shift 2
  fi
  mkdir -p "$bin" && bin=$(cd "$bin" && pwd) || exit 1
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  names=(base)
  for patch in "$@"; do
    [ -f "$patch" ] || { echo "ab_variants: no patch $patch" >&2; exit 2; }
    name=$(basename "$patch" .patch)
    case "$name" in base | old | *[!A-Za-z0-9_.-]*)
      echo "ab_variants: '$name' cannot name a variant" >&2; exit 2 ;;
    esac
    names+=("$name")
  done
  i=0
  for name in "${names[@]}"; do
    src=$tmp/$name
    mkdir -p "$src" && git archive HEAD | tar -x -C "$src" || exit 1
    if [ "$name" != base ]; then
      patch=$(realpath "${@:$i:1}")
      (cd "$src" && git apply "$patch") ||
        { echo "ab_variants: $patch does not apply to HEAD" >&2; exit 1; }
    fi
    i=$((i + 1))
    echo "ab_variants: building $name"
    # The shared library by its real name (its soname links come with a
    # whole build); the CLI links the library in statically.
    (cd "$src" && meson setup build >/dev/null &&
      ninja -C build warpgen libwarpgen.so.0.1.0 >/dev/null) || exit 1
    mkdir -p "$bin/$name" || exit 1
    cp "$src/build/libwarpgen.so.0.1.0" "$bin/$name/libwarpgen.so.0" || exit 1
    cp "$src/build/warpgen" "$bin/$name/" || exit 1
    # Without debug information: the folder travels to the GPU machine
    # (the device tool carries 64 MiB), a build a third of the size.
    strip --strip-debug "$bin/$name/libwarpgen.so.0" "$bin/$name/warpgen" 2>/dev/null || true
    git rev-parse HEAD >"$bin/$name/revision"
  done
  if [ -n "$specs" ]; then
    cache=$tmp/cache
    mkdir -p "$cache"
    for name in "${names[@]}"; do
      sed 's/$/ arch=sm_90/' "$specs" | WARPGEN_CACHE_DIR=$cache WARPGEN_TEMPLATE_DIR= \
        xargs -P "$(nproc)" -d '\n' -I{} "$bin/$name/warpgen" cubin "{}" -o /dev/null || exit 1
    done
    tar czf "$bin/ab-cache.tgz" -C "$cache" . || exit 1
  fi
  ls -la "$bin"
  exit 0
fi
bin=$(cd "${1:?usage: bench/ab_variants.sh BINDIR ROUNDS BENCH.py [ARGS...]}" && pwd) || exit 1
rounds=${2:?usage: bench/ab_variants.sh BINDIR ROUNDS BENCH.py [ARGS...]}
shift 2
[ $# -gt 0 ] || { echo "ab_variants: name the benchmark" >&2; exit 2; }
variants=()
for first in base old; do [ -f "$bin/$first/libwarpgen.so.0" ] && variants+=("$first"); done
for d in "$bin"/*/; do
  v=$(basename "$d")
  [ "$v" = base ] || [ "$v" = old ] || [ ! -f "$d/libwarpgen.so.0" ] || variants+=("$v")
done
[ ${#variants[@]} -ge 2 ] || { echo "ab_variants: $bin holds fewer than two libraries" >&2; exit 2; }
out=${OUT:-gpu-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-/tmp/warpgen-ab-cache} WARPGEN_TEMPLATE_DIR=
mkdir -p "$WARPGEN_CACHE_DIR"
[ -f "$bin/ab-cache.tgz" ] && tar xzf "$bin/ab-cache.tgz" -C "$WARPGEN_CACHE_DIR"
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
# A run that hangs (an untried kernel that deadlocks) is stopped after
# AB_RUN_LIMIT seconds, so that the other variants still run in the call.
limit=${AB_RUN_LIMIT:-240}
for ((n = 1; n <= rounds; n++)); do
  for v in "${variants[@]}"; do
    WARPGEN_LIBRARY=$bin/$v/libwarpgen.so.0 timeout -k 10 "$limit" python3 "$@" \
      >"$out/ab-$v-$n.txt" 2>&1 ||
      echo "ab_variants: $v run $n exited $? (124: past ${limit} s; see $out/ab-$v-$n.txt)"
  done
done
python3 "$here/ab_summary.py" "$out" "$rounds" "${variants[@]}"
