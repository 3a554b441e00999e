#!/usr/bin/env bash
# setup.sh - installs what warpgen needs on a Debian or Ubuntu machine with
# the CUDA toolkit (Meson, Ninja, Check, xxHash, clang with libFuzzer, and a
# disassembler for `warpgen sass`), then configures and builds warpgen in build/.
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

cuda=${CUDA_PATH:-${CUDA_HOME:-/usr/local/cuda}}
if [ ! -e "$cuda/include/nvrtc.h" ]; then
  echo "setup: no CUDA toolkit at $cuda (set CUDA_PATH); warpgen needs NVRTC" >&2
  exit 1
fi

missing=()
command -v meson >/dev/null || missing+=(meson)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v cc >/dev/null || missing+=(gcc)
pkg-config --exists check 2>/dev/null || missing+=(check)
pkg-config --exists libsubunit 2>/dev/null || missing+=(libsubunit-dev)
[ -e /usr/include/xxhash.h ] || missing+=(libxxhash-dev)
# clang and libFuzzer build the expression fuzzer (tests/fuzz/run.sh).
command -v clang >/dev/null || missing+=(clang)
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  missing+=(libclang-rt-14-dev)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# pytest runs the Python package's tests; pyflakes reads them and the
# package for undefined names (code a GPU-less CI never executes).
python3 -m pytest --version >/dev/null 2>&1 ||
  python3 -m pip install -q --disable-pip-version-check pytest
python3 -m pyflakes --version >/dev/null 2>&1 ||
  python3 -m pip install -q --disable-pip-version-check pyflakes

# A disassembler for `warpgen sass`: the toolkit's, else NVIDIA's PyPI wheel
# unpacked into .tools/ (nothing installed system-wide).
if ! command -v nvdisasm >/dev/null && [ ! -x "$cuda/bin/nvdisasm" ] &&
   ! command -v cuobjdump >/dev/null && [ ! -x "$cuda/bin/cuobjdump" ] &&
   [ ! -x .tools/bin/nvdisasm ]; then
  echo "setup: fetching nvdisasm (pip: nvidia-cuda-nvdisasm) into .tools/"
  if python3 -m pip install -q --disable-pip-version-check --target .tools/nvdisasm \
       'nvidia-cuda-nvdisasm>=13,<14'; then
    mkdir -p .tools/bin
    ln -sf "$(find "$PWD/.tools/nvdisasm" -name nvdisasm -type f | head -1)" .tools/bin/nvdisasm
    fetched_tool=1
  else
    echo "setup: no nvdisasm; 'warpgen sass' will say how to get one" >&2
  fi
fi

if [ ! -e build/build.ninja ]; then
  meson setup build
elif [ -n "${fetched_tool:-}" ]; then
  meson setup --reconfigure build # the build records where nvdisasm is
fi
ninja -C build
