#!/usr/bin/env bash
# check.sh - the GPU checks of a patch that won its A/B (README.md here):
# the family's tests/gpu_FAMILY.sh (the Check suite against the oracle,
# compute-sanitizer memcheck and racecheck, pytest, the benchmark) run on
# HEAD with the patch applied, before it lands.
#
# usage: bash bench/experiments/check.sh --prepare PATCH BINDIR   (here)
#          builds HEAD with PATCH (rownorm-*.patch or scan-*.patch) in a
#          scratch tree and runs tests/gpu_FAMILY.sh --prepare there into
#          BINDIR (the binaries and the kernels' cache it carries)
#        OUT=$OUT bash bench/experiments/check.sh BINDIR              (GPU, carry BINDIR)
#          runs tests/gpu_FAMILY.sh BINDIR from this source root (the
#          patched binaries; the scripts, Python package and benchmarks
#          of HEAD, which the patches do not change)
set -u
if [ "${1:-}" = --prepare ]; then
  patch=$(realpath "${2:?usage: check.sh --prepare PATCH BINDIR}") || exit 1
  bin=${3:?usage: check.sh --prepare PATCH BINDIR}
  case "$(basename "$patch")" in
    rownorm-*) family=rownorm ;;
    scan-*) family=scan ;;
    *) echo "check.sh: $(basename "$patch") names no family (rownorm-*, scan-*)" >&2; exit 2 ;;
  esac
  mkdir -p "$bin" && bin=$(cd "$bin" && pwd) || exit 1
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git archive HEAD | tar -x -C "$tmp" || exit 1
  (cd "$tmp" && git apply "$patch") || { echo "check.sh: $patch does not apply to HEAD" >&2; exit 1; }
  (cd "$tmp" && meson setup build >/dev/null && ninja -C build >/dev/null) || exit 1
  (cd "$tmp" && bash "tests/gpu_$family.sh" --prepare build "$bin") || exit 1
  echo "$family" >"$bin/family"
  basename "$patch" >"$bin/patch"
  exit 0
fi
bin=${1:?usage: check.sh BINDIR}
[ -f "$bin/family" ] || { echo "check.sh: $bin was not made by check.sh --prepare" >&2; exit 2; }
echo "check.sh: $(cat "$bin/patch") on tests/gpu_$(cat "$bin/family").sh"
exec bash "tests/gpu_$(cat "$bin/family").sh" "$bin"
