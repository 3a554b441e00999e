"""warpgen.distributed on GPUs, checked against the C oracle on the whole
(gathered) tensor and against PyTorch: every built-in operator and a user
expression, f32 and bf16 shards of unequal sizes with one empty, argmax
across a shard boundary and ties across shards (the lower global index
wins), the same bits on every rank and in a second run.

Two ways to run it (not collected by pytest: it needs GPUs and torch):

  torchrun --nproc_per_node=2 python/tests/gpu_distributed.py
      real ranks over torch.distributed with NCCL, one GPU each (the
      script sets NCCL_NVLS_ENABLE=0: NVLink multicast stays off);
      --nproc_per_node=1 runs a world of one.
  python3 python/tests/gpu_distributed.py --threads 3
      a fake group of 3 ranks as threads on one GPU (fakecomm.ThreadGroup):
      every rank's shard, partial and combine on the device, the bytes
      moved by the fake group instead of NCCL.

Needs PYTHONPATH=python and WARPGEN_LIBRARY (liboracle.so beside it, in
tests/, or WARPGEN_ORACLE_LIBRARY). Prints one line a failure and a
summary; exits 1 on any failure.
"""

import ctypes
import os
import struct
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # before NCCL starts

import torch  # noqa: E402

import warpgen  # noqa: E402
import warpgen.distributed as wd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakecomm  # noqa: E402
import refs  # noqa: E402

OPS = [op for op in warpgen.OPERATORS if op not in ("and", "or", "xor")]
TYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
# Shard sizes by rank (cycled): unequal, rank 1 empty, a tail off the vector.
SIZES = [300_007, 0, 77_777, 5, 1_000_003]
_PACK = {"f16": "<e", "f32": "<f", "f64": "<d", "i32": "<i", "u32": "<I",
         "i64": "<q", "u64": "<Q"}


def sizes_for(world, shift=0):
    """Rank r's shard size: SIZES cycled from `shift` (shift 0: rank 1
    empty; shift 2: all non-empty and unequal)."""
    if world == 1:
        return [SIZES[shift]]
    return [SIZES[(r + shift) % len(SIZES)] for r in range(world)]


def whole_tensor(type_, op, n, seed, device):
    """The same tensor on every rank: the oracle's fill for op (values
    near 1 for prod, few values for argmin/argmax: ties everywhere)."""
    size = warpgen._lib.TYPE_SIZES[type_]
    buf = ctypes.create_string_buffer(max(n, 1) * size)
    refs.oracle_sharded().wg_oracle_fill(warpgen._lib.TYPES.index(type_),
                                         warpgen._lib.OPERATORS.index(op),
                                         buf, n, seed)
    t = torch.frombuffer(bytearray(buf.raw[:n * size]),
                         dtype=torch.int16 if type_ == "bf16" else torch.float32)
    return (t.view(torch.bfloat16) if type_ == "bf16" else t).to(device)


def raw_bytes(t):
    t = t.detach().contiguous()
    if t.element_size() == 2 and t.is_floating_point():
        t = t.view(torch.int16)
    return t.cpu().numpy().tobytes()


def scalar_bytes(value, type_):
    if type_ == "bf16":
        return struct.pack("<f", value)[2:]
    return struct.pack(_PACK[type_], value)


def out_type(type_, op):
    return warpgen._lib.TYPES[warpgen._lib.lib.wg_reduce_output_type(
        warpgen._lib.TYPES.index(type_), warpgen._lib.OPERATORS.index(op))]


def cases(world):
    for shift in (0, 2):
        sizes = sizes_for(world, shift)
        for ti, type_ in enumerate(TYPES):
            for oi, op in enumerate(OPS):
                yield (type_, op, sizes, 100 * ti + oi + 7 * shift, {})
        # one user expression, with a parameter (not a recompile per value)
        yield ("f32", "sum", sizes, 999, {"map": "(x - p0) * (x - p0)", "p0": 0.5})


def run_rank(comm, device):
    """Every case on this rank; returns (results, failures)."""
    torch.cuda.set_device(device)
    rank, world = comm.rank, comm.world
    failures, results = [], []
    for type_, op, sizes, seed, kw in cases(world):
        n = sum(sizes)
        whole = whole_tensor(type_, op, n, seed, device)
        first = sum(sizes[:rank])
        shard = whole[first:first + sizes[rank]]
        got = []
        for _ in range(2):  # the same bits twice
            try:
                got.append(wd.reduce(shard, op, comm=comm, **kw))
            except warpgen.Error as e:
                got.append(f"error: {e}")
        results.append(got[0])
        what = f"{type_} {op} {kw or ''} sizes={sizes}"
        if got[0] != got[1] and got[0] == got[0]:
            failures.append(f"{what}: two runs differ: {got}")
        if isinstance(got[0], str):
            failures.append(f"{what}: {got[0]}")
            continue
        if kw:  # the user map against float64 on the whole
            x = whole.double()
            want = float(((x - 0.5) * (x - 0.5)).sum())
            if abs(got[0] - want) > 1e-5 * abs(want):
                failures.append(f"{what}: {got[0]} vs {want}")
            continue
        ot = out_type(type_, op)
        report = refs.check_reduce(type_, op, raw_bytes(whole), 1, n,
                                   scalar_bytes(got[0], ot))
        if report.mismatches:
            failures.append(f"{what}: {report}")
        if op == "argmax" and got[0] != int(torch.argmax(whole)):
            failures.append(f"{what}: torch.argmax gives {int(torch.argmax(whole))}")
        if op == "var":
            want = float(whole.double().var())
            tol = 1e-2 if type_ == "bf16" else 1e-4
            if abs(got[0] - want) > tol * abs(want):
                failures.append(f"{what}: torch.var gives {want}")
    # argmax across a boundary and ties across shards, in f32
    sizes = sizes_for(world)
    n = sum(sizes)
    x = torch.zeros(n, device=device)
    cut = sizes[0]
    for at in (cut - 1, cut, n - 1):  # the last of rank 0, the first of rank 1's...
        if 0 <= at < n:
            x[at] = 9.0
    first = sum(sizes[:rank])
    got = wd.reduce(x[first:first + sizes[rank]], "argmax", comm=comm)
    results.append(got)
    if got != int(torch.argmax(x)) or got != (cut - 1 if cut > 0 else
                                              int(torch.argmax(x))):
        failures.append(f"argmax across the boundary at {cut}: {got}")
    return results, failures


def main():
    if "--threads" in sys.argv:
        world = int(sys.argv[sys.argv.index("--threads") + 1])
        per_rank = fakecomm.ThreadGroup(world).run(run_rank, 0)
        rank = 0
    else:
        import torch.distributed as dist
        local = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local)
        dist.init_process_group("nccl")
        world, rank = dist.get_world_size(), dist.get_rank()
        mine = run_rank(wd.TorchComm(None, torch.device("cuda", local)), local)
        per_rank = [None] * world
        dist.all_gather_object(per_rank, mine)
    failures = [f for _, fs in per_rank for f in fs]
    first = per_rank[0][0]
    for r, (res, _) in enumerate(per_rank):
        if repr(res) != repr(first):
            failures.append(f"rank {r} differs from rank 0")
    if rank == 0:
        for f in failures[:40]:
            print("FAIL", f)
        print(f"distributed: world {world}, {len(first)} cases a rank, "
              f"{len(failures)} failures")
    if "--threads" not in sys.argv:
        import torch.distributed as dist
        dist.destroy_process_group()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
