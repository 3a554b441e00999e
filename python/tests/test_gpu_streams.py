"""warpgen.reduce and warpgen.reduce_rows on many torch streams at once, and
captured in CUDA graphs: every result checked.

Each stream is held behind torch.cuda._sleep while 64 calls are queued on
it, so that the streams' calls start together and overlap; the grids do not
fill the GPU (2^17-element arrays: about 32 blocks; three split rows of 2^18
columns: 24 blocks). Every call reads its own data and writes its own
output. The same calls run one at a time give the expected bits (checked
against float64 / exact integer references); concurrent and replayed
results must be exactly those bits. Skips without torch or a GPU."""

import math

import numpy as np
import pytest

import warpgen
from refs import float_tolerance

N = 1 << 17
COLS = (1 << 18) + 5
ROWS = 3


@pytest.fixture(scope="module")
def torch(torch_cuda):
    return torch_cuda


class Jobs:
    """`count` calls of three kinds: an f32 array sum, an i32 array sum
    (wrapping), the f32 sums of three long rows (several blocks a row)."""

    def __init__(self, torch, count, seed):
        self.torch = torch
        self.count = count
        self.kinds = [j % 3 for j in range(count)]
        per_kind = (count + 2) // 3
        self.gen = torch.Generator(device="cuda")
        self.seed = seed
        self.floats = torch.empty((per_kind, N + 1088), device="cuda")
        self.ints = torch.empty((per_kind, N + 1088), dtype=torch.int32,
                                device="cuda")
        self.rows = torch.empty((per_kind, ROWS, COLS), device="cuda")
        self.refill(0)
        # One output slot a job: rows jobs write ROWS values, arrays one.
        self.out = torch.empty((count, ROWS), device="cuda")

    def refill(self, round_):
        """Fresh data, in place (graphs keep the addresses)."""
        torch = self.torch
        self.gen.manual_seed(self.seed * 1000 + round_)
        self.floats.uniform_(-1, 1, generator=self.gen)
        self.rows.uniform_(-1, 1, generator=self.gen)
        self.ints.copy_(torch.randint(-2**31, 2**31 - 1, self.ints.shape,
                                      dtype=torch.int32, device="cuda",
                                      generator=self.gen))

    def args(self, j):
        """The input of job j; arrays start at varied (unaligned) offsets
        and have varied lengths."""
        i, off, n = j // 3, j * 13 % 64, N + 37 * j % 1000
        kind = self.kinds[j]
        if kind == 0:
            return self.floats[i, off:off + n]
        if kind == 1:
            return self.ints[i, off:off + n]
        return self.rows[i]

    def run(self, j, out):
        """Queues job j on the current stream, writing into out[j]."""
        x = self.args(j)
        if self.kinds[j] == 0:
            warpgen.reduce(x, "sum", out=out[j, :1])
        elif self.kinds[j] == 1:
            warpgen.reduce(x, "sum", out=out[j, :1].view(self.torch.int32))
        else:
            warpgen.reduce_rows(x, "sum", out=out[j])

    def bits(self, out):
        """What the jobs wrote, as bits (NaN-safe exact comparison)."""
        host = out.view(self.torch.int32).cpu().numpy().copy()
        for j, kind in enumerate(self.kinds):
            if kind != 2:
                host[j, 1:] = 0
        return host

    def alone(self):
        """Each job run by itself, in turn: the expected bits, checked
        against the references."""
        torch = self.torch
        out = torch.full_like(self.out, math.nan)
        for j in range(self.count):
            self.run(j, out)
            torch.cuda.synchronize()
        self.check_reference(out)
        return self.bits(out)

    def check_reference(self, out):
        torch = self.torch
        for j, kind in enumerate(self.kinds):
            x = self.args(j)
            if kind == 1:
                want = int(x.cpu().numpy().astype(np.int64).sum())
                want = (want + 2**31) % 2**32 - 2**31
                got = int(out[j, :1].view(torch.int32).item())
                assert got == want, (j, got, want)
                continue
            x64 = x.double()
            refs = x64.sum(dim=-1).reshape(-1).tolist()
            absums = x64.abs().sum(dim=-1).reshape(-1).tolist()
            got = out[j, :len(refs)].double().tolist()
            for g, r, a in zip(got, refs, absums):
                tol = float_tolerance("f32", r, a, x.shape[-1])
                assert abs(g - r) <= tol, (j, g, r, tol)


def sleep_cycles(ms):
    return int(ms * 2e6)  # up to 2 GHz


@pytest.mark.parametrize("nstreams", [2, 8])
def test_streams_overlap(torch, nstreams):
    per_stream = 64
    jobs = Jobs(torch, nstreams * per_stream, seed=nstreams)
    expected = jobs.alone()
    streams = [torch.cuda.Stream() for _ in range(nstreams)]
    for round_ in range(2):
        out = torch.full_like(jobs.out, math.nan)
        torch.cuda.synchronize()
        for s in streams:
            with torch.cuda.stream(s):
                torch.cuda._sleep(sleep_cycles(30))
        # Stream s gets jobs s, s + nstreams, ...: queued in turn.
        for k in range(per_stream):
            for s, stream in enumerate(streams):
                with torch.cuda.stream(stream):
                    jobs.run(k * nstreams + s, out)
        torch.cuda.synchronize()
        got = jobs.bits(out)
        wrong = [j for j in range(jobs.count)
                 if not np.array_equal(got[j], expected[j])]
        assert not wrong, (f"{len(wrong)} of {jobs.count} results on "
                           f"{nstreams} streams (round {round_}) differ from "
                           f"the same calls run alone; first: job {wrong[0]}")


def test_graph_capture_and_replay(torch):
    count = 24
    jobs = Jobs(torch, count, seed=99)
    outs = [torch.full_like(jobs.out, math.nan) for _ in range(2)]
    streams = [torch.cuda.Stream() for _ in range(3)]
    # Warm up on a side stream (kernels load outside the capture).
    side = streams[2]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for j in range(3):
            jobs.run(j, outs[0])
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graphs = []
    for g in range(2):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for j in range(count):
                jobs.run(j, outs[g])
        graphs.append(graph)
    for round_ in range(3):
        jobs.refill(round_ + 1)
        expected = jobs.alone()
        eager = torch.full_like(jobs.out, math.nan)
        for o in outs:
            o.fill_(math.nan)
        torch.cuda.synchronize()
        # Both graphs and eager calls at once, each behind a sleep.
        for g, stream in enumerate(streams):
            with torch.cuda.stream(stream):
                torch.cuda._sleep(sleep_cycles(20))
                if g < 2:
                    graphs[g].replay()
                else:
                    for j in range(count):
                        jobs.run(j, eager)
        torch.cuda.synchronize()
        for what, out in (("graph 0", outs[0]), ("graph 1", outs[1]),
                          ("eager", eager)):
            got = jobs.bits(out)
            wrong = [j for j in range(count)
                     if not np.array_equal(got[j], expected[j])]
            assert not wrong, (what, round_, wrong)
