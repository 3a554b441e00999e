#!/usr/bin/env bash
# ab_library.sh - one Python benchmark run against two libraries on one
# GPU, alternating, so that a change is measured against what it changes
# in the same lease (runs on one H200 differ by up to 3 %; leases by more).
# "new" is this tree's library, "old" the one built from a revision; the
# benchmark chooses between them through WARPGEN_LIBRARY (python/warpgen).
# The stop-27 and stop-28 rownorm comparisons in the README were run so.
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
#          new, into $OUT/ab-{old,new}-N.txt, and prints, for every line
#          of rownorm_peers.py's form (type cols op ... ceil x_torch), the
#          fraction of the copy ceiling of each run: "old a b -> new c d".
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
bin=$(cd "${1:?usage: bench/ab_library.sh BINDIR ROUNDS BENCH.py [ARGS...]}" && pwd)
rounds=${2:?usage: bench/ab_library.sh BINDIR ROUNDS BENCH.py [ARGS...]}
shift 2
[ $# -gt 0 ] || { echo "ab_library: name the benchmark" >&2; exit 2; }
out=${OUT:-gpu-logs}
mkdir -p "$out"
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-/tmp/warpgen-ab-cache} WARPGEN_TEMPLATE_DIR=
mkdir -p "$WARPGEN_CACHE_DIR"
[ -f "$bin/ab-cache.tgz" ] && tar xzf "$bin/ab-cache.tgz" -C "$WARPGEN_CACHE_DIR"
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
for ((n = 1; n <= rounds; n++)); do
  for v in old new; do
    WARPGEN_LIBRARY=$bin/$v/libwarpgen.so.0 python3 "$@" >"$out/ab-$v-$n.txt" 2>&1 ||
      echo "ab_library: $v run $n exited $? (see $out/ab-$v-$n.txt)"
  done
done
python3 - "$out" "$rounds" <<'EOF'
import sys
out, rounds = sys.argv[1], int(sys.argv[2])
seen, runs = [], {}
for v in ("old", "new"):
    for n in range(1, rounds + 1):
        try:
            lines = open("%s/ab-%s-%d.txt" % (out, v, n)).read().splitlines()
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) < 6 or not f[1].isdigit():
                continue
            try:
                ceil = float(f[-2])
            except ValueError:
                continue
            key = " ".join(f[:3])
            if key not in runs:
                seen.append(key)
                runs[key] = {"old": [], "new": []}
            runs[key][v].append(ceil)
for key in seen:
    r = runs[key]
    print("%-28s old %s -> new %s" % (key, " ".join("%.3f" % x for x in r["old"]),
                                       " ".join("%.3f" % x for x in r["new"])))
EOF
