#!/usr/bin/env bash
# ab_library.sh - one Python benchmark run against two libraries on one
# GPU, alternating, so that a change is measured against what it changes
# in the same lease (runs on one H200 differ by up to 3 %; leases by more).
# "new" is this tree's library, "old" the one built from a revision; the
# benchmark chooses between them through WARPGEN_LIBRARY (python/warpgen).
# The stop-27 and stop-28 rownorm comparisons (docs/rownorm-design.md) were run so.
#
# usage: bench/ab_library.sh --prepare BUILD BINDIR REV [SPECS]   (here)
#          copies BUILD's libwarpgen.so.0 and warpgen into BINDIR/new,
#          builds REV's (git archive, its own meson build) into BINDIR/old,
#          and, given a file of specs (one a line, e.g. from
#          `build/tests/test_rownorm --specs-for 8192 32768`), compiles
#          them for sm_90 with both into BINDIR/ab-cache.tgz, so the GPU
#          machine compiles nothing when its NVRTC is the same file.
#        bench/ab_library.sh BINDIR ROUNDS BENCH.py [ARGS...]   (GPU)
#          runs `python3 BENCH.py ARGS` ROUNDS times a library, old then
#          new, into $OUT/ab-{old,new}-N.txt, and prints the fraction of
#          the copy ceiling of each run (bench/ab_variants.sh, which also
#          compares several patched builds of HEAD).
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: bench/ab_library.sh --prepare BUILD BINDIR REV [SPECS]}
  bin=${3:?usage: bench/ab_library.sh --prepare BUILD BINDIR REV [SPECS]}
  rev=${4:?usage: bench/ab_library.sh --prepare BUILD BINDIR REV [SPECS]}
  specs=${5:-}
  git rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "ab_library: no revision $rev" >&2; exit 2; }
  mkdir -p "$bin/new" "$bin/old" || exit 1
  cp "$build/libwarpgen.so.0" "$build/warpgen" "$bin/new/" || exit 1
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git archive "$rev" | tar -x -C "$tmp" || exit 1
  # The shared library by its real name (its soname links come with a
  # whole build); the CLI links the library in statically.
  (cd "$tmp" && meson setup build >/dev/null &&
    ninja -C build warpgen libwarpgen.so.0.1.0 >/dev/null) || exit 1
  cp "$tmp/build/libwarpgen.so.0.1.0" "$bin/old/libwarpgen.so.0" || exit 1
  cp "$tmp/build/warpgen" "$bin/old/" || exit 1
  if [ -n "$specs" ]; then
    cache=$tmp/cache
    mkdir -p "$cache"
    for v in old new; do
      sed 's/$/ arch=sm_90/' "$specs" | WARPGEN_CACHE_DIR=$cache \
        xargs -P "$(nproc)" -d '\n' -I{} "$bin/$v/warpgen" cubin "{}" -o /dev/null || exit 1
    done
    tar czf "$bin/ab-cache.tgz" -C "$cache" . || exit 1
  fi
  echo "$rev" >"$bin/old/revision"
  ls -la "$bin" "$bin/old" "$bin/new"
  exit 0
fi
# The runs and the table: bench/ab_variants.sh, whose layout --prepare made.
exec bash "$(dirname "$0")/ab_variants.sh" "$@"
