"""warpgen.distributed without a GPU: the protocol of reduce_shards (counts,
partial at the global offset, all_reduce of native accumulators, all_gather
of the others, the combine in rank order) run by 2 to 4 real processes
(fakecomm.PipeGroup, torch.distributed's all_gather/all_reduce semantics)
with the oracle's CPU accumulators (tests/oracle_acc.c through
liboracle.so), which use the device's bytes (wg_reduce_accumulator).

Checked: every rank gets the same bits; the result matches the oracle on
the whole array (wg_oracle_rows_check: exact for integers and indices,
the oracle's bound for floats), for every operator and several types,
shards of unequal sizes with one empty; argmin/argmax ties and NaNs across
shards (the lower global index wins); which accumulators go through
all_reduce and which through all_gather.

What this does not run: NCCL, torch.distributed itself and the device
kernels (python/tests/gpu_distributed.py and tests/test_partial.c gpu do,
on a machine with GPUs)."""

import ctypes
import struct

import pytest

import warpgen
import warpgen.distributed as wd
from warpgen import _lib

import fakecomm
import refs

TYPES = ("f32", "bf16", "f16", "f64", "i32", "u32", "i64", "u64")
OPS = tuple(op for op in _lib.OPERATORS if op != "none")


_oracle = refs.oracle_sharded


class HostShard:
    """A rank's shard on the CPU: the oracle's accumulators, in bytes."""

    def __init__(self, whole, type_, op, first, count):
        self.lib = _oracle()
        self.whole, self.first, self.n = whole, first, count
        self.t, self.o = _lib.TYPES.index(type_), _lib.OPERATORS.index(op)
        self.layout = wd.accumulator_layout(wd.spec_for([type_], op))
        self.acc_type = self.layout.fields[0][1]
        self.out_size = _lib.TYPE_SIZES[_lib.TYPES[lib_out(type_, op)]]

    def partial(self, base, total):
        assert base == self.first  # the rank's place, from the counts
        acc = ctypes.create_string_buffer(self.layout.size)
        rc = self.lib.wg_oracle_partial(acc, self.t, self.o, self.whole, self.first,
                                        self.n, base)
        assert rc == 0
        return acc.raw

    def combine(self, accs, k, total):
        assert len(accs) == k * self.layout.size
        out = ctypes.create_string_buffer(8)
        rc = self.lib.wg_oracle_combine(out, self.t, self.o, accs, k, total, None, 0)
        assert rc == 0
        return out.raw[:self.out_size]


def lib_out(type_, op):
    return _lib.lib.wg_reduce_output_type(_lib.TYPES.index(type_),
                                          _lib.OPERATORS.index(op))


def _cuts(n, world, seed, empty):
    """Unequal shard boundaries, shard `empty` with none."""
    import random
    rnd = random.Random(seed)
    cuts = sorted(rnd.randint(0, n) for _ in range(world - 1))
    bounds = [0] + cuts + [n]
    sizes = [bounds[r + 1] - bounds[r] for r in range(world)]
    moved = sizes[empty]
    sizes[empty] = 0
    sizes[(empty + 1) % world] += moved
    return sizes


def _whole(type_, op, n, seed):
    buf = ctypes.create_string_buffer(max(n, 1) * _lib.TYPE_SIZES[type_])
    _oracle().wg_oracle_fill(_lib.TYPES.index(type_), _lib.OPERATORS.index(op),
                             buf, n, seed)
    return buf


def _cases(world):
    out = []
    for ti, t in enumerate(TYPES):
        for oi, op in enumerate(OPS):
            if lib_out(t, op) < 0:
                continue
            for n in (0, 1, 7, 1000, 5003):
                seed = 1000003 * world + 7919 * ti + 131 * oi + n
                out.append((t, op, n, seed, _cuts(n, world, seed, seed % world)))
    return out


def _rank_main(comm, cases, specials):
    results, calls = [], []
    for t, op, n, seed, sizes, data in (
            [c + (None,) for c in cases] + specials):
        whole = _whole(t, op, n, seed) if data is None else \
            ctypes.create_string_buffer(data, len(data) + 1)
        first = sum(sizes[:comm.rank])
        shard = HostShard(whole, t, op, first, sizes[comm.rank])
        comm.calls.clear()
        if n == 0 and op in ("argmin", "argmax", "norminf"):
            results.append(None)  # no answer; the device call refuses
            calls.append(None)
            continue
        results.append(wd.reduce_shards(shard, comm,
                                        sizes=sizes if seed % 2 else None))
        calls.append(tuple(comm.calls))
    return results, calls


def _specials(world):
    """Ties and NaNs across the shards, the first shard empty."""
    n = 12
    sizes = [0] + [n // (world - 1)] * (world - 1)
    sizes[-1] += n - sum(sizes)
    ones = struct.pack("<12f", *([1.0] * n))
    peaks = [1.0] * n
    peaks[6] = peaks[10] = 5.0
    nans = list(peaks)
    nans[7] = nans[11] = float("nan")
    out = []
    for op, values in (("argmax", ones), ("argmin", ones),
                       ("argmax", struct.pack("<12f", *peaks)),
                       ("argmax", struct.pack("<12f", *nans)),
                       ("argmin", struct.pack("<12f", *nans))):
        out.append(("f32", op, n, 2, sizes, values))
    return out


def _check_world(world):
    cases = _cases(world)
    specials = _specials(world)
    per_rank = fakecomm.run_processes(world, _rank_main, cases, specials)
    results = [r for r, _ in per_rank]
    calls = per_rank[0][1]
    for rank in range(1, world):
        assert results[rank] == results[0], f"rank {rank} differs from rank 0"
    for k, (t, op, n, seed, sizes) in enumerate(cases):
        got = results[0][k]
        if got is None:
            continue
        whole = _whole(t, op, n, seed)
        report = refs.check_reduce(t, op, whole.raw[:n * _lib.TYPE_SIZES[t]]
                                   if n else b"", 1, n, got)
        assert report.mismatches == 0, (t, op, n, sizes, report)
        layout = wd.accumulator_layout(wd.spec_for([t], op))
        want = ("all_reduce:" + layout.native) if layout.native else "all_gather"
        assert want in calls[k], (t, op, calls[k])
        assert ("counts" in calls[k]) == (seed % 2 == 0)
    got = [struct.unpack("<q", r)[0] for r in results[0][len(cases):]]
    assert got == [0, 0, 6, 7, 7]


@pytest.mark.parametrize("world", [2, 3, 4])
def test_processes_agree_with_the_oracle(world):
    _check_world(world)


def test_native_accumulators():
    """Integer sums, products, signed min/max and counts all-reduce; floats
    and structs gather (float sums depend on the order)."""
    native = {(t, op): wd.accumulator_layout(wd.spec_for([t], op)).native
              for t in TYPES for op in OPS if lib_out(t, op) >= 0}
    assert native[("i32", "sum")] == "sum"
    assert native[("u64", "prod")] == "prod"
    assert native[("i64", "min")] == "min"
    assert native[("u32", "max")] is None
    assert native[("f32", "count_nonzero")] == "sum"
    assert native[("f32", "sum")] is None
    assert native[("i32", "argmax")] is None
    assert native[("f64", "var")] is None
    layout = wd.accumulator_layout("reduce-array bf16 var")
    assert layout.size == 16 and layout.fields == [
        ("n", "u64", 0), ("mean", "f32", 8), ("m2", "f32", 12)]


def test_threads_and_bad_sizes():
    """The thread group (the lead's one-GPU check uses it) agrees with the
    processes, and sizes= that contradict the shard are refused."""
    group = fakecomm.ThreadGroup(3)
    whole = _whole("f64", "var", 100, 5)
    sizes = [40, 0, 60]

    def main(comm):
        shard = HostShard(whole, "f64", "var", sum(sizes[:comm.rank]),
                          sizes[comm.rank])
        return wd.reduce_shards(shard, comm)
    got = group.run(main)
    assert got[0] == got[1] == got[2]
    report = refs.check_reduce("f64", "var", whole.raw[:800], 1, 100, got[0])
    assert report.mismatches == 0, report

    class One:
        rank, world = 0, 1
    shard = HostShard(whole, "f64", "var", 0, 100)
    with pytest.raises(warpgen.ArrayError):
        wd.reduce_shards(shard, One(), sizes=[99])

    class Two:
        rank, world = 0, 2
    # counts that ctypes would wrap (2**64 + 100 elements in all reads as
    # 100), negative ones and non-integers are refused
    for bad in ([100, 2**64], [100, -1], [100, 1.5], [100, True]):
        with pytest.raises(warpgen.ArrayError, match="element counts"):
            wd.reduce_shards(shard, Two(), sizes=bad)


class _TorchHostShard(HostShard):
    """HostShard whose accumulators are CPU uint8 tensors, for TorchComm."""

    def partial(self, base, total):
        import torch
        return torch.frombuffer(bytearray(super().partial(base, total)),
                                dtype=torch.uint8)

    def combine(self, accs, k, total):
        return super().combine(bytes(accs.numpy().tobytes()), k, total)


def _gloo_main(pipe_comm, store, cases):
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="file://" + store,
                            rank=pipe_comm.rank, world_size=pipe_comm.world)
    try:
        comm = wd.TorchComm()
        out = []
        for t, op, n, seed, sizes in cases:
            whole = _whole(t, op, n, seed)
            shard = _TorchHostShard(whole, t, op, sum(sizes[:comm.rank]),
                                    sizes[comm.rank])
            out.append(wd.reduce_shards(shard, comm))
        return out
    finally:
        dist.destroy_process_group()


def test_gloo(tmp_path):
    """The same protocol through torch.distributed itself (gloo, 3
    processes on the CPU), where torch is installed."""
    pytest.importorskip("torch.distributed")
    world = 3
    cases = [c for c in _cases(world) if c[2] and c[0] in ("f32", "i32")
             and c[1] in ("sum", "var", "argmax", "logsumexp", "max")]
    per_rank = fakecomm.run_processes(world, _gloo_main,
                                      str(tmp_path / "store"), cases)
    assert per_rank[1] == per_rank[0] and per_rank[2] == per_rank[0]
    for (t, op, n, seed, sizes), got in zip(cases, per_rank[0]):
        whole = _whole(t, op, n, seed)
        report = refs.check_reduce(t, op, whole.raw[:n * _lib.TYPE_SIZES[t]], 1, n, got)
        assert report.mismatches == 0, (t, op, n, sizes, report)
