#!/usr/bin/env bash
# ab.sh - the waiting experiments (README.md here), in sets that share a
# benchmark: one command prepares them all here, one runs them on the GPU.
#
# usage: bash bench/experiments/ab.sh --prepare DIR [SET...]   (here, from the repository root)
#          builds each set's variants (bench/ab_variants.sh --prepare)
#          into DIR/SET, with the set's kernels compiled for sm_90
#        OUT=$OUT bash bench/experiments/ab.sh DIR [SET...]    (GPU, carry DIR)
#          runs each set's benchmark on its variants, two rounds, and
#          prints the tables; each set's logs go to $OUT/SET.tgz (the
#          device tool returns at most 8 files)
# No SET: all of them. A set is a line of the table below, '@' between
# its fields: its name, its patches, a command that prints the specs to
# compile ahead (the benchmark's kernels, of its types only: the folders
# travel to the GPU machine, 64 MiB at most with the tree; others compile
# there), the benchmark.
set -u
sets() {
  cat <<'EOF'
scan-ahead@scan-no-read-ahead scan-ahead-512@for t in f32 i32 f64; do echo "scan-array $t sum"; echo "scan-array $t sum deterministic=0"; done; for c in 32 128 1024; do echo "scan-rows f32 sum cols=$c"; echo "scan-rows f32 sum cols=$c deterministic=0"; done@bench/scan_peers.py
rownorm-f32-norm-kept-6@rownorm-f32-norm-kept-6@build/tests/test_rownorm --specs-for 24576 28672 32768 | grep " f32 " | grep -E "layernorm-rows|rmsnorm-rows"@bench/rownorm_peers.py --types f32 --cols 24576,28672,32768 --ops layer_norm,rms_norm --reps 10
rownorm-norm-lean@rownorm-norm-lean rownorm-norm-lean-noregs rownorm-norm-lean-768@build/tests/test_rownorm --specs-for 32 128 1024 4096 | grep -E " (f32|bf16|f64) " | grep -E "layernorm-rows|rmsnorm-rows"@bench/rownorm_peers.py --types bf16,f32,f64 --cols 32,128,1024,4096 --ops layer_norm,rms_norm --reps 10
EOF
}
here=$(cd "$(dirname "$0")" && pwd)
prepare=0
if [ "${1:-}" = --prepare ]; then prepare=1; shift; fi
dir=${1:?usage: bench/experiments/ab.sh [--prepare] DIR [SET...]}
shift
wanted=" $* "
found=0
while IFS='@' read -r name patches specs bench; do
  [ $# -eq 0 ] || [[ "$wanted" == *" $name "* ]] || continue
  found=$((found + 1))
  if [ $prepare = 1 ]; then
    [ -d build ] || { echo "ab.sh: no build/ (run tools/run.sh first)" >&2; exit 1; }
    eval "$specs" >"$dir.$name.specs" || exit 1
    args=(--specs "$dir.$name.specs")
    files=()
    for p in $patches; do files+=("$here/$p.patch"); done
    bash "$here/../ab_variants.sh" --prepare "$dir/$name" "${args[@]}" "${files[@]}" || exit 1
    rm -f "$dir.$name.specs"
  else
    echo "== $name: $bench"
    out=${OUT:-gpu-logs}
    mkdir -p "$out/$name"
    # shellcheck disable=SC2086
    OUT=$out/$name bash "$here/../ab_variants.sh" "$dir/$name" 2 $bench
    tar czf "$out/$name.tgz" -C "$out" "$name" && rm -rf "${out:?}/$name"
  fi
done < <(sets)
[ $found -gt 0 ] || { echo "ab.sh: no set named$wanted" >&2; exit 2; }
