#!/usr/bin/env bash
# run.sh - builds a fuzz target with clang and libFuzzer (ASan and UBSan on)
# into build-fuzz/, then runs it for SECONDS (default 60) on one core, from
# the seed corpus and dictionary here:
#   tests/fuzz/run.sh [expr|spec|all] [SECONDS]
#   tests/fuzz/run.sh [SECONDS] [expr|spec|all]   (either order; expr when
#                                                  no target is named)
# expr: fuzz_expr.c, the expression language alone (src/expr.c).
# spec: fuzz_spec.c, the spec text form and the source made from it (the
#       whole library except that nothing compiles: no NVRTC, no driver).
# all:  both, SECONDS each.
# New inputs it finds go to build-fuzz/corpus-TARGET/, never into the
# committed seeds; a crash leaves build-fuzz/crash-* to replay with:
#   build-fuzz/fuzz_TARGET FILE
set -euo pipefail
cd "$(dirname "$0")/../.."
target=expr
seconds=60
for arg in "$@"; do
  case "$arg" in
    expr|spec|all) target=$arg ;;
    *[!0-9]*|'') echo "fuzz: '$arg' is neither a target (expr, spec, all) nor seconds" >&2
                 exit 2 ;;
    *) seconds=$arg ;;
  esac
done
cc=$(command -v clang || command -v clang-14 || true)
if [ -z "$cc" ]; then
  echo "fuzz: no clang; tools/setup.sh installs clang and libclang-rt-14-dev" >&2
  exit 1
fi
cuda_root=${CUDA_PATH:-${CUDA_HOME:-/usr/local/cuda}}
flags=(-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -Iinclude -Isrc)
mkdir -p build-fuzz

build_expr() {
  # expr.c needs only util.c and error.c: no CUDA, no NVRTC.
  "$cc" "${flags[@]}" tests/fuzz/fuzz_expr.c src/expr.c src/util.c src/error.c -lm \
    -o build-fuzz/fuzz_expr
  # Seeds from the random expression generator: every form of the grammar.
  mkdir -p build-fuzz/corpus-expr
  "$cc" -O1 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -Itests tests/fuzz/gen_seeds.c \
    tests/expr_gen.c -lm -o build-fuzz/gen_seeds
  build-fuzz/gen_seeds build-fuzz/corpus-expr 300 "$RANDOM"
}

build_spec() {
  # The whole library (it never loads NVRTC or the driver here: the target
  # names arch and turns the disk cache off) with its templates built in.
  python3 tools/embed_templates.py build-fuzz/templates.c templates/*.cu templates/*.cuh
  "$cc" "${flags[@]}" -I"$cuda_root/include" -DWG_CUDA_ROOT="\"$cuda_root\"" \
    tests/fuzz/fuzz_spec.c src/*.c build-fuzz/templates.c -ldl -lpthread -lm \
    -o build-fuzz/fuzz_spec
  mkdir -p build-fuzz/corpus-spec
}

run() { # TARGET
  (cd build-fuzz &&
   UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
   WARPGEN_TEMPLATE_DIR= WARPGEN_CACHE=off ./"fuzz_$1" \
     -max_total_time="$seconds" -max_len=4200 -timeout=10 -rss_limit_mb=2048 \
     -print_final_stats=1 -dict=../tests/fuzz/"$1".dict \
     corpus-"$1" ../tests/fuzz/corpus/"$1")
}

for t in expr spec; do
  [ "$target" = all ] || [ "$target" = "$t" ] || continue
  "build_$t"
  run "$t"
done
