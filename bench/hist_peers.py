"""PyTorch's histograms beside warpgen's, from Python, in GB/s of keys read:
torch.bincount on uniform i32 keys (256 and 65536 bins) and torch.histc on
uniform f32 keys, against warpgen.bincount / warpgen.histogram (with the
bins known, so that no max reduction runs first, and with it), at 2^28
keys by default. bench/hist_peers.cu times CUB in the same way.

Run: PYTHONPATH=python WARPGEN_LIBRARY=build/libwarpgen.so \
         python3 bench/hist_peers.py [--n N] [--reps R]
Each figure is the median of R calls after three warm-ups, timed with CUDA
events on the current stream; the answers are compared first (bincount
exactly, histc on the counts)."""

import argparse
import sys

try:
    import torch
except ImportError:
    print("hist_peers.py: skipped: no torch")
    sys.exit(0)

import warpgen


def median_us(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1 << 28)
    p.add_argument("--reps", type=int, default=10)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("hist_peers.py: skipped: no CUDA device visible to torch")
        return 0
    n, reps = a.n, a.reps
    g = torch.Generator(device="cuda").manual_seed(1)
    bad = 0
    print(f"hist_peers.py on {torch.cuda.get_device_name()}, n = {n}, torch "
          f"{torch.__version__}, GB/s of keys read (median of {reps})")
    print(f"{'case':44s} {'torch':>8s} {'warpgen':>8s} {'wg+max':>8s}")
    for bins in (256, 65536):
        x = torch.randint(0, bins, (n,), device="cuda", dtype=torch.int32,
                          generator=g)
        want = torch.bincount(x, minlength=bins)
        ok = torch.equal(warpgen.histogram(x, bins), want) and \
            torch.equal(warpgen.bincount(x), want)
        bad += not ok
        t = median_us(lambda: torch.bincount(x, minlength=bins), reps)
        w = median_us(lambda: warpgen.histogram(x, bins), reps)
        wm = median_us(lambda: warpgen.bincount(x), reps)
        gb = lambda us: x.numel() * 4 / us / 1e3
        print(f"{f'bincount, {bins} bins, uniform i32':44s} {gb(t):8.0f} "
              f"{gb(w):8.0f} {gb(wm):8.0f}  {'ok' if ok else 'WRONG'}")
        f = torch.rand(n, device="cuda", generator=g)
        ok = torch.equal(warpgen.histogram(f, bins, (0.0, 1.0)),
                         torch.histc(f, bins, 0.0, 1.0).long())
        bad += not ok
        t = median_us(lambda: torch.histc(f, bins, 0.0, 1.0), reps)
        w = median_us(lambda: warpgen.histogram(f, bins, (0.0, 1.0)), reps)
        wm = median_us(lambda: warpgen.histogram(f, bins), reps)
        print(f"{f'histc, {bins} bins, uniform f32 (wg+max: range)':44s} "
              f"{gb(t):8.0f} {gb(w):8.0f} {gb(wm):8.0f}  {'ok' if ok else 'WRONG'}")
        del x, f, want
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
