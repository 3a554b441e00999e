#!/usr/bin/env bash
# sass_loop.sh - how much work a kernel's main loop issues, read from its
# SASS without a GPU: for each loop (a backward branch) whose body holds a
# 16-byte global store, the instructions in the body, its 16-byte loads
# and stores, spill instructions, and with -v the count of each opcode.
# Instructions per byte moved say whether a kernel can be bound by
# arithmetic rather than memory: an H200 issues about 33e12 thread
# instructions a second (132 SMs, 4 schedulers, ~1.98 GHz, 32 lanes) for
# 4.2e12 bytes of copy, so past about 4 instructions a byte (at the issue
# rates these kernels keep) the arithmetic, not the memory, sets the pace.
# The count is static: where the body has branches, paths not taken are
# counted too (WG_ASSUME below removes the weight/bias ones of rownorm).
#
# usage: bench/sass_loop.sh [-v] SPEC [TEMPLATE_DIR]
#   SPEC          a spec, `arch=sm_90` added when it names no arch
#   TEMPLATE_DIR  templates to generate from (WARPGEN_TEMPLATE_DIR); the
#                 build's own when absent
# env: BUILD (default build), WG_ASSUME=wb|w: the rownorm kernel may
#   assume weight and bias (wb) or weight only (w) are present, as
#   bench/rownorm_peers.py passes them, so that the loop counted is the
#   path it runs (the template is copied and changed in a scratch folder)
set -u
verbose=0
[ "${1:-}" = -v ] && { verbose=1; shift; }
spec=${1:?usage: bench/sass_loop.sh [-v] SPEC [TEMPLATE_DIR]}
[[ "$spec" == *arch=* ]] || spec="$spec arch=sm_90"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
templates=${2:-$root/templates}
nvdisasm=${WARPGEN_NVDISASM:-$(command -v nvdisasm || ls "$root/.tools/bin/nvdisasm" 2>/dev/null)}
[ -x "$nvdisasm" ] || { echo "sass_loop: no nvdisasm (tools/setup.sh fetches one)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${WG_ASSUME:-}" ]; then
  mkdir -p "$work/t" && cp -r "$templates/." "$work/t/" || exit 1
  case $WG_ASSUME in
    wb) cond='!weight || !bias' ;;
    w) cond='!weight || bias' ;;
    *) echo "sass_loop: WG_ASSUME is wb or w" >&2; exit 2 ;;
  esac
  # The kernel's first statement, in templates/rownorm.cu.
  sed -i "s#^  const unsigned long long line = 16ull / sizeof(wg_elem);#&\n  if ($cond) __builtin_unreachable();#" \
    "$work/t/rownorm.cu"
  templates=$work/t
fi
WARPGEN_TEMPLATE_DIR=$templates WARPGEN_CACHE_DIR=$work/cache \
  "$build/warpgen" cubin "$spec" -o "$work/k.cubin" || exit 1
"$nvdisasm" "$work/k.cubin" >"$work/k.sass" || exit 1
# Labels' lines, then each backward branch's body. Streaming stores
# (.EF, .CS) are the streamed paths' (rows longer than the shape holds).
awk -v verbose=$verbose '
  /^\.L_x_[0-9]+:/ { label[substr($1, 1, length($1) - 1)] = NR }
  { line[NR] = $0 }
  /BRA/ && match($0, /\.L_x_[0-9]+/) {
    t = substr($0, RSTART, RLENGTH)
    if (!(t in label) || label[t] >= NR) next
    n = 0; ld = 0; st = 0; sp = 0; ef = 0; split("", ops)
    for (i = label[t]; i <= NR; i++) {
      if (line[i] !~ /^ +\/\*[0-9a-f]+\*\//) continue
      n++
      op = line[i]; sub(/^ +\/\*[0-9a-f]+\*\/ +/, "", op); sub(/^@!?U?P[0-9T] +/, "", op)
      sub(/[ ;].*/, "", op); ops[op]++
      if (line[i] ~ /LDG\.E\.(EL\.|LU\.)?128/) ld++
      if (line[i] ~ /STG\.E\.(EF\.|CS\.)?128/) st++
      if (line[i] ~ /STG\.E\.(EF|CS)\.128/) ef++
      if (line[i] ~ /[^A-Z](STL|LDL)[. ]/) sp++
    }
    if (!st) next
    printf "loop at lines %d-%d: %d instructions, %d 16-byte loads, %d 16-byte stores%s, %d spill instructions\n", label[t], NR, n, ld, st, ef ? " (streaming)" : "", sp
    if (verbose) for (o in ops) printf "  %5d %s\n", ops[o], o | "sort -rn"
    if (verbose) close("sort -rn")
  }' "$work/k.sass"
