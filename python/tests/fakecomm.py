"""Fake process groups with torch.distributed's semantics, for testing
warpgen.distributed without torch, NCCL or several GPUs.

A comm here has what warpgen.distributed.reduce_shards asks of one: rank,
world, all_gather_counts(n), all_gather(buf) (every rank's bytes in rank
order, as torch's all_gather_into_tensor), all_reduce(buf, op, type) (one
integer reduced over every rank; every rank gets the same value). A
buffer is bytes, or a torch uint8 tensor (returned as a tensor on its
device, so DeviceShard can use these comms on one GPU).

  PipeGroup(world)    ranks in separate processes (fork), a star of pipes
                      through rank 0: the CI test's many-process group;
  ThreadGroup(world)  ranks as threads of one process (one GPU may serve
                      them all: the lead's single-GPU check).
"""

import struct
import threading

_FORMATS = {("i32", 4): "<i", ("i64", 8): "<q", ("u32", 4): "<I", ("u64", 8): "<Q"}


def _to_bytes(buf):
    if isinstance(buf, (bytes, bytearray)):
        return bytes(buf)
    return bytes(buf.cpu().numpy().tobytes())  # a torch uint8 tensor


def _like(data, buf):
    if isinstance(buf, (bytes, bytearray)):
        return data
    import torch
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).to(buf.device)


def _fold(values, op, bits, signed):
    """Integers reduced as an engine would: sums and products wrap."""
    mask = (1 << bits) - 1
    if op == "sum":
        r = sum(values) & mask
    elif op == "prod":
        r = 1
        for v in values:
            r = (r * v) & mask
    elif op == "min":
        r = min(values)
    elif op == "max":
        r = max(values)
    else:
        raise ValueError(op)
    if signed and r >= 1 << (bits - 1):
        r -= 1 << bits
    return r


class _Comm:
    """The four exchanges on top of _exchange (every rank's bytes)."""

    def __init__(self, rank, world):
        self.rank, self.world = rank, world
        self.calls = []  # what was asked, for the tests

    def all_gather_counts(self, n):
        self.calls.append("counts")
        return [struct.unpack("<q", b)[0]
                for b in self._exchange(struct.pack("<q", n))]

    def all_gather(self, buf):
        self.calls.append("all_gather")
        parts = self._exchange(_to_bytes(buf))
        if len({len(p) for p in parts}) != 1:
            raise ValueError("all_gather: the ranks' buffers differ in size")
        return _like(b"".join(parts), buf)

    def all_reduce(self, buf, op, type_):
        self.calls.append("all_reduce:" + op)
        data = _to_bytes(buf)
        fmt = _FORMATS[(type_, len(data))]
        values = [struct.unpack(fmt, p)[0] for p in self._exchange(data)]
        r = _fold(values, op, 8 * len(data), type_[0] == "i")
        return _like(struct.pack(fmt, r), buf)


class PipeComm(_Comm):
    """One rank of a PipeGroup (made in the parent, used in the child)."""

    def __init__(self, rank, world, pipes):
        super().__init__(rank, world)
        self.pipes = pipes  # rank 0: one a peer; others: [the one to 0]

    def _exchange(self, data):
        if self.rank == 0:
            parts = [data] + [p.recv_bytes() for p in self.pipes]
            blob = struct.pack("<I", self.world) + b"".join(
                struct.pack("<Q", len(p)) + p for p in parts)
            for p in self.pipes:
                p.send_bytes(blob)
            return parts
        self.pipes[0].send_bytes(data)
        blob = self.pipes[0].recv_bytes()
        (world,), at, parts = struct.unpack_from("<I", blob), 4, []
        for _ in range(world):
            (size,) = struct.unpack_from("<Q", blob, at)
            parts.append(blob[at + 8:at + 8 + size])
            at += 8 + size
        return parts


def run_processes(world, target, *args):
    """Runs target(comm, *args) in `world` forked processes; returns their
    results in rank order (anything picklable), raising the first error."""
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    ends = [ctx.Pipe() for _ in range(world - 1)]
    results = ctx.Queue()

    def main(rank):
        pipes = [a for a, _ in ends] if rank == 0 else [ends[rank - 1][1]]
        try:
            results.put((rank, "ok", target(PipeComm(rank, world, pipes), *args)))
        except BaseException as e:  # reported to the parent
            import traceback
            results.put((rank, "error", traceback.format_exc()))
            raise SystemExit(1) from e

    procs = [ctx.Process(target=main, args=(r,)) for r in range(world)]
    for p in procs:
        p.start()
    got = {}
    for _ in range(world):
        rank, status, value = results.get(timeout=600)
        if status != "ok":
            for p in procs:
                p.kill()
            raise AssertionError(f"rank {rank} failed:\n{value}")
        got[rank] = value
    for p in procs:
        p.join(60)
    return [got[r] for r in range(world)]


class ThreadGroup:
    """`world` ranks as threads of this process: comm(rank) for each."""

    def __init__(self, world):
        self.world = world
        self.barrier = threading.Barrier(world)
        self.slots = [None] * world

    def comm(self, rank):
        group = self

        class ThreadComm(_Comm):
            def _exchange(self, data):
                group.slots[self.rank] = data
                group.barrier.wait()
                parts = list(group.slots)
                group.barrier.wait()  # everyone has read before the next
                return parts
        return ThreadComm(rank, self.world)

    def run(self, target, *args):
        """target(comm, *args) on `world` threads; results in rank order."""
        out, errors = [None] * self.world, []

        def main(rank):
            try:
                out[rank] = target(self.comm(rank), *args)
            except BaseException as e:
                errors.append(e)
                self.barrier.abort()
        threads = [threading.Thread(target=main, args=(r,)) for r in range(self.world)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return out
