#!/usr/bin/env bash
# test.sh - sets up and builds warpgen, then runs every test suite (unit,
# nvrtc, cli, cache, gpu; gpu skips without a device), then the host-side
# suites again in a build with AddressSanitizer and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
export WARPGEN_REQUIRE_SASS=1 # setup provided a disassembler: sass must work

meson test -C build --print-errorlogs --num-processes 2

# The sanitizer build: host code must be clean. NVRTC's own allocations are
# not ours to judge, so leaks inside libnvrtc are suppressed, nothing else.
[ -e build-asan/build.ninja ] ||
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tools/lsan.supp
meson test -C build-asan --print-errorlogs --num-processes 2 \
  --suite unit --suite cli --suite cache --suite nvrtc
