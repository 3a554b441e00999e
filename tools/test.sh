#!/usr/bin/env bash
# test.sh - sets up and builds warpgen, then runs every test suite (unit,
# nvrtc, cli, cache, gpu; gpu skips without a device), the expression and
# spec fuzzers, pyflakes and the Python package's tests and its `pip install .`,
# then the host-side suites again in a build with AddressSanitizer and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's start and the seconds so far, so that a CI log shows where
# its time went (CI must stay under 20 minutes on 2 cores).
stage() { echo "=== test.sh: $* (at ${SECONDS} s)"; }
stage setup and build
bash tools/setup.sh
export WARPGEN_REQUIRE_SASS=1 # setup provided a disassembler: sass must work

# The nvrtc suite compiles every fifth listed spec (10080 warp specs and
# the families' defaults; the GPU suite compiles all of them on the H200),
# a different fifth each day (WARPGEN_NVRTC_OFFSET, printed, replays one),
# for sm_80 and sm_90 side by side: every third took 222 and 243 s of a
# 530-s first pass on 2 cores (2026-12-03), and a fresh clone's whole run
# past the 20 minutes CI may take.
stage "meson test (unit, nvrtc, cli, cache, emulate; gpu skips without a device)"
WARPGEN_NVRTC_EVERY=${WARPGEN_NVRTC_EVERY_FIRST:-5} \
  meson test -C build --print-errorlogs --num-processes 2

# The fuzzers (libFuzzer, ASan, UBSan) of the expression language and of
# the spec text form, 45 bounded seconds each; they build themselves with
# clang into build-fuzz/ (setup.sh installs clang).
stage fuzzers
bash tests/fuzz/run.sh all 45

# The Python package: pyflakes over it and its tests (an undefined name in
# a path only a GPU runs, such as reduce's copy fallback of 8fae89c, fails
# here, not on a user's GPU), its tests against the library just built
# (GPU tests skip without a device), then `pip install .` into a
# throwaway virtual environment, as a new user would, and a PTX printed
# from it.
stage python
python3 -m pyflakes python/warpgen python/tests
PYTHONPATH=python WARPGEN_LIBRARY=$PWD/build/libwarpgen.so python3 -m pytest -q python/tests
venv=$(mktemp -d)
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check .
(cd / && "$venv/bin/python" -c 'import warpgen
print(warpgen.ptx(warpgen.Spec("reduce f32 sum width=16")).count("shfl.sync"), "shuffles")')
rm -rf "$venv"

# The sanitizer build: host code must be clean. NVRTC's own allocations are
# not ours to judge, so leaks inside libnvrtc are suppressed, nothing else.
stage "sanitizer build and suites (ASan, UBSan)"
[ -e build-asan/build.ninja ] ||
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tools/lsan.supp
# The nvrtc suite's time is NVRTC's, not our host code's: the first pass
# above compiled a fifth of the specs for both architectures, so the
# sanitizer pass takes every 32nd, a sample spread over the whole list.
export WARPGEN_NVRTC_EVERY=${WARPGEN_NVRTC_EVERY:-32}
meson test -C build-asan --print-errorlogs --num-processes 2 \
  --suite unit --suite cli --suite nvrtc
# The cache suite with ASan and UBSan but without LeakSanitizer: in two CI
# runs of 2026-12-01 LSan's own tracer died (signal 11 in its stop-the-
# world) at the exit of a forked case that had loaded NVRTC, in
# test_damaged_entry_is_repaired:5. Leaks in the cache code are still
# checked by the unit and cli suites above, which go through it.
ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
  meson test -C build-asan --print-errorlogs --num-processes 2 --suite cache
stage done
