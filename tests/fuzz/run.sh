#!/usr/bin/env bash
# run.sh - builds the expression fuzzer with clang and libFuzzer (ASan and
# UBSan on) into build-fuzz/, then runs it for SECONDS (default 60) on one
# core, from the seed corpus and dictionary here. New inputs it finds go to
# build-fuzz/corpus-expr/ (with 300 seeds from tests/fuzz/gen_seeds.c), never
# into the committed seeds; a crash leaves
# build-fuzz/crash-* to replay with: build-fuzz/fuzz_expr FILE
#   tests/fuzz/run.sh [SECONDS]
# `tests/fuzz/run.sh SECONDS spec` runs the spec-text fuzzer (fuzz_spec.c:
# quoted expressions, escapes, inputs= and params=) instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
target=${2:-expr}
cc=$(command -v clang || command -v clang-14 || true)
if [ -z "$cc" ]; then
  echo "fuzz: no clang; tools/setup.sh installs clang and libclang-rt-14-dev" >&2
  exit 1
fi
if [ "$target" = spec ]; then
  mkdir -p build-fuzz/corpus-spec
  "$cc" -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -Iinclude -Isrc tests/fuzz/fuzz_spec.c \
    src/spec.c src/spec_expr.c src/expr.c src/util.c src/error.c src/tables.c -lm \
    -o build-fuzz/fuzz_spec
  cd build-fuzz
  exec env UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ./fuzz_spec \
    -max_total_time="$seconds" -max_len=600 -timeout=10 -rss_limit_mb=2048 \
    -dict=../tests/fuzz/expr.dict corpus-spec ../tests/fuzz/corpus/spec
fi
mkdir -p build-fuzz/corpus-expr
# expr.c needs only util.c and error.c: no CUDA, no NVRTC.
"$cc" -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Iinclude -Isrc \
  tests/fuzz/fuzz_expr.c src/expr.c src/util.c src/error.c -lm \
  -o build-fuzz/fuzz_expr
# Seeds from the random expression generator: every form of the grammar.
"$cc" -O1 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -Itests tests/fuzz/gen_seeds.c \
  tests/expr_gen.c -lm -o build-fuzz/gen_seeds
build-fuzz/gen_seeds build-fuzz/corpus-expr 300 "$RANDOM"
cd build-fuzz
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ./fuzz_expr \
  -max_total_time="$seconds" -max_len=4200 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -dict=../tests/fuzz/expr.dict \
  corpus-expr ../tests/fuzz/corpus/expr
