#!/usr/bin/env python3
"""torch_reduce.py - times torch.sum (whole arrays) and torch.sum(dim=1) (rows)
on the sizes and shapes of bench/reduce_bench, with CUDA events, and writes
CSV rows in reduce_bench's format so that bench/report.py can put PyTorch
beside warpgen and CUB. Exits 0 with a note where torch or a GPU is missing.

Small arrays rotate through slices of a 2 GiB arena (as reduce_bench does),
so that L2 does not hold the input from one call to the next; each call's
output is preallocated (out=) so that no allocation is timed.

usage: torch_reduce.py [--csv FILE] [--quick]
"""
import argparse
import sys


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="torch_reduce.csv")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("torch_reduce: torch is not installed; skipped")
        return 0
    if not torch.cuda.is_available():
        print("torch_reduce: no CUDA device; skipped")
        return 0
    dev = torch.device("cuda")
    arena_bytes = 2 << 30
    arena = torch.empty(arena_bytes, dtype=torch.uint8, device=dev)
    arena.random_(0, 256)  # random bits: never time on zeros
    dtypes = {"f32": torch.float32, "f64": torch.float64, "i32": torch.int32,
              "f16": torch.float16}
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)

    def timed(fn, batch, reps):
        for i in range(batch * 2 + 3):
            fn(i)
        torch.cuda.synchronize()
        times, call = [], 0
        for _ in range(reps):
            start.record()
            for _ in range(batch):
                fn(call)
                call += 1
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1000.0 / batch)
        return median(times)

    rows_out = []
    with open(args.csv, "w") as f:
        f.write("section,kernel,type,mode,n_or_rows,cols,bytes,us,GBps\n")
        for tname, dtype in dtypes.items():
            size = torch.tensor([], dtype=dtype).element_size()
            # Values in [-1, 1) for floats, any bits for integers.
            if dtype.is_floating_point:
                view = arena.view(dtype)
                view.uniform_(-1, 1)
            else:
                view = arena.view(dtype)
            out = torch.empty((), dtype=torch.int64 if not dtype.is_floating_point
                              else dtype, device=dev)
            step = 3 if args.quick else 1
            for lg in range(10, 29, step):
                n = 1 << lg
                nbytes = n * size
                for mode in ("cold", "warm"):
                    if mode == "warm" and nbytes > (32 << 20):
                        continue
                    slots = max(1, (arena_bytes - nbytes) // max(nbytes, 4096))
                    cold = mode == "cold" and nbytes * 4 <= arena_bytes
                    elems_per_slot = max(nbytes, 4096) // size

                    def call(i):
                        first = (i % slots) * elems_per_slot if cold else 0
                        torch.sum(view[first:first + n], dim=0, out=out)

                    batch = 1 if nbytes >= (64 << 20) else (10 if nbytes >= (4 << 20) else 50)
                    reps = 15 if nbytes >= (256 << 20) else 25
                    us = timed(call, batch, reps)
                    f.write("array,torch,%s,%s,%d,0,%d,%.4f,%.2f\n"
                            % (tname, mode, n, nbytes, us, nbytes / us / 1e3))
                    if mode == "cold":
                        rows_out.append((tname, lg, us, nbytes / us / 1e3))
        # Rows: f32, 2^26 elements.
        view = arena.view(torch.float32)
        view.uniform_(-1, 1)
        shapes = [(1 << 24, 4), (1 << 21, 32), (1 << 19, 128), (1 << 16, 1000),
                  (1 << 16, 1024), (1 << 13, 8192), (1 << 10, 65536)]
        print("torch.sum(dim=1), f32: rows cols us GB/s (input + output bytes)")
        for rows, cols in shapes:
            mat = view[: rows * cols].view(rows, cols)
            out = torch.empty(rows, dtype=torch.float32, device=dev)
            us = timed(lambda i: torch.sum(mat, dim=1, out=out), 1, 15)
            nbytes = (rows * cols + rows) * 4
            f.write("rows,torch,f32,sum,%d,%d,%d,%.4f,%.2f\n"
                    % (rows, cols, nbytes, us, nbytes / us / 1e3))
            print("%8d %6d %9.2f %8.1f" % (rows, cols, us, nbytes / us / 1e3))
    print("torch.sum, cold: type log2n us GB/s")
    for tname, lg, us, gbs in rows_out:
        if lg % 3 == 1 or lg == 28:
            print("%s %2d %9.2f %8.1f" % (tname, lg, us, gbs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
