"""The shapes issue 11 sets targets for, in one short run, to compare two
builds of the library (an A/B): run it once with each WARPGEN_LIBRARY, on
an otherwise idle GPU, and compare the JSON lines.

    PYTHONPATH=python WARPGEN_LIBRARY=old/libwarpgen.so python3 bench/shape_sweep.py
    PYTHONPATH=python WARPGEN_LIBRARY=new/libwarpgen.so python3 bench/shape_sweep.py

Prints one JSON line: the copy ceiling (y.copy_(x), GB/s read + write) and
the read ceiling (warpgen's whole-array f32 sum, GB/s read) over 2^26 f32
elements (256 MiB, past the 60 MB L2); f32 sums over one axis as the
fraction of the read ceiling (dim 0 of 65536 x 1024 and of 1024 x 65536,
the middle axis of 64 x 4096 x 256); and f32 row scans (warpgen.cumsum
along rows of 32 to 65536) as the fraction of the copy ceiling. Each time
is the median of 7 trials of 20 calls between CUDA events, after 3 calls
of warm-up; every result is checked against torch in float64 first.
"""

import json
import os

import torch

import warpgen
from axis_peers import time_ms as ms  # 7 trials of 20 calls between events


def main():
    n = 1 << 26
    res = {"lib": os.path.basename(os.environ.get("WARPGEN_LIBRARY", "(default)"))}
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    one = torch.empty(1, device="cuda")
    copy = 2 * n * 4 / ms(lambda: y.copy_(x)) / 1e6
    read = n * 4 / ms(lambda: warpgen.reduce(x, "sum", out=one)) / 1e6
    res["copy"], res["read"] = round(copy), round(read)
    for label, shape, dim in (("65536x1024/0", (65536, 1024), 0),
                              ("1024x65536/0", (1024, 65536), 0),
                              ("64x4096x256/1", (64, 4096, 256), 1)):
        m = x.view(shape)
        o = torch.empty(tuple(s for d, s in enumerate(shape) if d != dim), device="cuda")
        got = warpgen.reduce(m, "sum", dim=dim, out=o).double()
        want = m.double().sum(dim=dim)
        assert (got - want).abs().max().item() <= 1e-5 * m.abs().double().sum(dim=dim).max().item(), label
        res[label] = round(n * 4 / ms(lambda: warpgen.reduce(m, "sum", dim=dim, out=o)) / 1e6 / read, 3)
    for cols in (32, 128, 1024, 4096, 8192, 65536):
        m = x.view(-1, cols)
        o = torch.empty_like(m)
        got = warpgen.cumsum(m, 1, out=o).double()
        want = torch.cumsum(m.double(), 1)
        assert (got - want).abs().max().item() <= 1e-5 * m.abs().double().sum(1).max().item(), cols
        res[f"scan{cols}"] = round(2 * n * 4 / ms(lambda: warpgen.cumsum(m, 1, out=o)) / 1e6 / copy, 3)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
