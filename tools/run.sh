#!/usr/bin/env bash
# run.sh - sets up and builds warpgen, then shows one reduction end to end:
# its spec, CUDA source, PTX and SASS, and on a machine with a GPU a run
# checked against the CPU. Extra arguments are a spec: tools/run.sh scan f32 max
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh >&2
exec build/warpgen show "$@"
