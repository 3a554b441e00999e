"""The cost of a sharded reduction: warpgen.distributed.reduce for sum, var
and argmax against warpgen's local reduction alone (the floor: no
exchange) and against torch.distributed.all_reduce of x.sum() (the usual
way, sum only), each to a Python number on the host.

    NCCL_NVLS_ENABLE=0 torchrun --nproc_per_node=2 bench/distributed_bench.py
        [--log2 30] [--reps 20]

2^log2 f32 elements a GPU (default 2^30: 4 GiB each). Times are medians
over reps, measured on rank 0 between barriers, after a warm-up call of
each (compiles and NCCL set-up excluded). distributed.reduce is timed with
sizes= given (what a caller that knows its shards' sizes pays) and without
(one more exchange, of the counts). Prints a Markdown table for the README.
Needs PYTHONPATH=python and WARPGEN_LIBRARY.
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import warpgen  # noqa: E402
import warpgen.distributed as wd  # noqa: E402


def timed(fn, reps):
    fn()  # warm-up: compile, load, NCCL communicators
    times = []
    for _ in range(reps):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2", type=int, default=30)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    world, rank = dist.get_world_size(), dist.get_rank()
    n = 1 << a.log2
    x = torch.rand(n, device=f"cuda:{local}") * 4 - 1
    comm = wd.TorchComm(None, x.device)
    sizes = [n] * world
    rows = []
    for op in ("sum", "var", "argmax"):
        local_s = timed(lambda: warpgen.reduce(x, op), a.reps)
        dist_s = timed(lambda: wd.reduce(x, op, comm=comm, sizes=sizes), a.reps)
        count_s = timed(lambda: wd.reduce(x, op, comm=comm), a.reps)
        torch_s = None
        if op == "sum":
            def torch_sum():
                s = x.sum()
                dist.all_reduce(s)
                return s.item()
            torch_s = timed(torch_sum, a.reps)
        rows.append((op, local_s, dist_s, count_s, torch_s))
    if rank == 0:
        gb = n * 4 / 1e9
        print(f"world {world}, 2^{a.log2} f32 a GPU ({gb:.1f} GB), median of "
              f"{a.reps}, ms (GB/s of one GPU's shard)")
        print("| op | local warpgen.reduce | distributed.reduce, sizes= | "
              "distributed.reduce | torch all_reduce(x.sum()) |")
        print("|---|---:|---:|---:|---:|")
        for op, loc, d, c, t in rows:
            def cell(s):
                return "-" if s is None else f"{s * 1e3:.3f} ({gb / s:.0f})"
            print(f"| {op} | {cell(loc)} | {cell(d)} | {cell(c)} | {cell(t)} |")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
