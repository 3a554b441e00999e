#!/usr/bin/env bash
# gpu_dist.sh - the sharded reductions (wg_reduce_partial, wg_reduce_combine,
# warpgen.distributed) on a lent GPU machine, in one go, about a minute on
# one H200:
#   1. test_partial gpu: shards of one array on GPU 0, partial + combine vs
#      the oracle, same bits twice, CPU accumulators combined on the device,
#      a user map, argmax across the boundary, errors;
#   2. python/tests/gpu_distributed.py --threads 3: warpgen.distributed with
#      a fake group of 3 ranks as threads on GPU 0 (no NCCL);
#   3. torchrun --nproc_per_node=G of the same script with NCCL (G = every
#      GPU, at most 8; 1 on a one-GPU machine: a world of one);
#   4. with 2 or more GPUs: python/tests/test_gpu_multi.py (two devices from
#      two threads, one disk cache) and bench/distributed_bench.py at 2^30
#      f32 a GPU on 2 GPUs; with one, the benchmark at 2^28 as a smoke test.
# NCCL_NVLS_ENABLE=0 throughout: NVLink multicast stays off.
#
# usage: tests/gpu_dist.sh --prepare BUILD BINDIR   (here, no GPU needed)
#        tests/gpu_dist.sh BINDIR                   (on the GPU machine,
#                                                    from the source root)
set -u
if [ "${1:-}" = --prepare ]; then
  build=${2:?usage: tests/gpu_dist.sh --prepare BUILD BINDIR}
  bin=${3:?usage: tests/gpu_dist.sh --prepare BUILD BINDIR}
  mkdir -p "$bin/tests" &&
    cp "$build/tests/test_partial" "$build/libwarpgen.so.0" "$bin/" &&
    ln -sf libwarpgen.so.0 "$bin/libwarpgen.so" &&
    cp "$build/tests/liboracle.so" "$bin/tests/" || exit 1
  echo "prepared $bin"
  exit 0
fi
bin=$(cd "${1:?usage: tests/gpu_dist.sh BINDIR}" && pwd)
export NCCL_NVLS_ENABLE=0
export PYTHONPATH=$PWD/python WARPGEN_LIBRARY=$bin/libwarpgen.so
export WARPGEN_CACHE_DIR=${WARPGEN_CACHE_DIR:-$(mktemp -d)}
export WARPGEN_TEMPLATE_DIR=
fail=0
step() { echo "== $*"; }

step "test_partial gpu"
timeout 300 "$bin/test_partial" gpu || fail=1

if ! python3 -c 'import torch' 2>/dev/null || ! command -v torchrun >/dev/null; then
  echo "gpu_dist: NOT RUN: torch or torchrun is missing; only test_partial ran"
  echo "gpu_dist: $([ $fail = 0 ] && echo 'C OK, Python NOT RUN' || echo FAILURES)"
  exit $fail
fi

step "warpgen.distributed, 3 ranks as threads on GPU 0"
timeout 300 python3 python/tests/gpu_distributed.py --threads 3 || fail=1

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 0)
[ "$gpus" -gt 8 ] && gpus=8
[ "$gpus" -lt 1 ] && gpus=1
step "torchrun --nproc_per_node=$gpus, NCCL"
timeout 300 torchrun --standalone --nproc_per_node="$gpus" \
  python/tests/gpu_distributed.py || fail=1

if [ "$gpus" -ge 2 ]; then
  step "two devices in one process"
  timeout 300 python3 -m pytest -q python/tests/test_gpu_multi.py || fail=1
  step "benchmark, 2 GPUs, 2^30 f32 each"
  timeout 300 torchrun --standalone --nproc_per_node=2 bench/distributed_bench.py \
    --log2 30 --reps 20 || fail=1
else
  step "benchmark smoke, world of 1, 2^28 f32 (no exchange cost to see)"
  timeout 120 torchrun --standalone --nproc_per_node=1 bench/distributed_bench.py \
    --log2 28 --reps 5 || fail=1
fi
echo "gpu_dist: $([ $fail = 0 ] && echo ALL OK || echo FAILURES)"
exit $fail
