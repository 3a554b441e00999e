"""torch.cumsum against warpgen.cumsum on the same tensors, in one run:
whole arrays of 2^28 f32, i32 and f64, and f32 rows of 32 to 65536 columns
(2^26 elements each), dim = the last axis. Prints GB/s (read + write) and
the fraction of the copy ceiling (y.copy_(x) of the same bytes, measured in
the same run), with CUDA events: three warm-up calls, then the median of
15 batches of 8 calls queued back to back, a call's time the batch's over
8 (a single call between two events counted the host's 10 µs of Python
and launch before the kernel: rows of 2^26 f32 at 0.80-0.85 of copy
where the C benchmark, bench/scan_peers.cu, measured 0.85-0.91).

torch.cumsum of int32 writes int64 (PyTorch promotes); it is timed as
PyTorch users call it, and its bytes counted as what it moves (4 read + 8
written an element). warpgen keeps i32.

usage: python3 bench/scan_peers.py [--log2n 28]   (PYTHONPATH=python,
WARPGEN_LIBRARY=build/libwarpgen.so)
"""

import argparse
import statistics

import torch

import warpgen


def median_us(call, batch=8):
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(15):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(batch):
            call()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / batch)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=28)
    args = ap.parse_args()
    n = 1 << args.log2n
    x = torch.rand(n, device="cuda")
    y = torch.empty_like(x)
    copy_us = median_us(lambda: y.copy_(x))
    ceiling = 2 * n * 4 / copy_us / 1e3
    print(f"{torch.cuda.get_device_name()}; copy ceiling {ceiling:.0f} GB/s "
          f"(y.copy_(x), 2^{args.log2n} f32)")

    def row(workload, impl, bytes_, us):
        gbs = bytes_ / us / 1e3
        print(f"  {workload:30s} {impl:26s} {us:10.1f} us {gbs:8.1f} GB/s "
              f" {gbs / ceiling:5.2f} of copy")

    for dtype, name in ((torch.float32, "f32"), (torch.int32, "i32"),
                        (torch.float64, "f64")):
        if dtype.is_floating_point:
            a = torch.rand(n, device="cuda", dtype=dtype) * 2 - 1
        else:
            a = torch.randint(-1, 2, (n,), device="cuda", dtype=dtype)
        size = a.element_size()
        work = f"cumsum {name} 2^{args.log2n}"
        t_us = median_us(lambda: torch.cumsum(a, 0))
        out_size = 8 if name == "i32" else size
        row(work, "torch.cumsum", n * (size + out_size), t_us)
        w_out = torch.empty_like(a)
        for det in (True, False):
            us = median_us(lambda: warpgen.cumsum(a, 0, out=w_out,
                                                  deterministic=det))
            row(work, f"warpgen deterministic={int(det)}", 2 * n * size, us)
        want = torch.cumsum(a, 0, dtype=dtype)
        got = warpgen.cumsum(a, 0)
        if name == "i32":
            assert torch.equal(got, want), "warpgen i32 cumsum differs"
        del a, w_out, want, got
    for cols in (32, 128, 1024, 8192, 65536):
        m = torch.rand((1 << 26) // cols, cols, device="cuda")
        work = f"cumsum(dim=1) f32 {m.shape[0]}x{cols}"
        bytes_ = 2 * m.numel() * 4
        row(work, "torch.cumsum", bytes_, median_us(lambda: torch.cumsum(m, 1)))
        out = torch.empty_like(m)
        for det in (True, False):
            row(work, f"warpgen deterministic={int(det)}", bytes_,
                median_us(lambda: warpgen.cumsum(m, 1, out=out,
                                                 deterministic=det)))


if __name__ == "__main__":
    main()
