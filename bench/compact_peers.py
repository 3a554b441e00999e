#!/usr/bin/env python3
"""compact_peers.py - stream compaction at 2^28 f32 from Python, on torch
tensors: torch.masked_select(x, x > t) against warpgen.compact(x, "x > p0",
p0=p0) (values only, and with indices), at 50% and 1% kept of uniform
[0, 1) inputs, with the copy ceiling (x.clone()) measured in the same run.
Each row is the median of 20 timed calls (CUDA events) after warm-up; like
masked_select, warpgen.compact reads the count back (one wait) and
allocates its outputs inside the timed call. GB/s: input read + kept values
written (+ 8 bytes a kept index for "+indices"). The results are compared
with masked_select's. Exits 0 with a note where torch or a GPU is missing.

usage: PYTHONPATH=python WARPGEN_LIBRARY=build/libwarpgen.so \\
           bench/compact_peers.py [--log2n 28]
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2n", type=int, default=28)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("compact_peers.py: torch is not installed; skipped")
        return 0
    if not torch.cuda.is_available():
        print("compact_peers.py: no CUDA device; skipped")
        return 0
    import warpgen
    n = 1 << args.log2n
    x = torch.rand(n, device="cuda", dtype=torch.float32)

    def median_us(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1e3)
        return sorted(times)[len(times) // 2]

    copy_us = median_us(lambda: x.clone())
    ceiling = 2 * n * 4 / copy_us / 1e3
    print(f"{torch.cuda.get_device_name()}, 2^{args.log2n} f32, copy ceiling "
          f"{ceiling:.0f} GB/s")
    print(f"{'kept':6} {'implementation':26} {'us':>10} {'GB/s':>8} {'x copy':>8} "
          f"{'x torch':>8}")
    failures = 0
    for t in (0.5, 0.99):
        # The threshold as an f32, as torch compares a float32 tensor with it.
        p0 = torch.tensor(t, dtype=torch.float32)
        want = torch.masked_select(x, x > t)
        kept = want.numel()
        label = f"{100 * kept / n:.0f}%"
        base = n * 4 + kept * 4
        torch_us = median_us(lambda: torch.masked_select(x, x > t))
        rows = [("torch.masked_select", torch_us, base)]
        wg_us = median_us(lambda: warpgen.compact(x, "x > p0", p0=p0, indices=False))
        rows.append(("warpgen.compact", wg_us, base))
        ix_us = median_us(lambda: warpgen.compact(x, "x > p0", p0=p0))
        rows.append(("warpgen.compact +indices", ix_us, base + kept * 8))
        for name, us, b in rows:
            gbs = b / us / 1e3
            print(f"{label:6} {name:26} {us:10.1f} {gbs:8.0f} {gbs / ceiling:8.3f} "
                  f"{torch_us / us:8.2f}")
        values, indices, count = warpgen.compact(x, "x > p0", p0=p0)
        ok = count == kept and torch.equal(values, want) and torch.equal(
            indices, torch.nonzero(x > t).flatten())
        if not ok:
            print(f"  CHECK FAILED at threshold {t}")
            failures += 1
    print("ok" if not failures else f"FAILED: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
