#!/usr/bin/env python3
"""reduce_report.py - turns the CSVs of bench/reduce_bench (warpgen, CUB and
the bandwidth ceilings) and bench/torch_reduce.py (PyTorch) into
docs/performance.md (tables, the targets of issue 5 checked), one merged
CSV and two SVG plots (GB/s against size for whole arrays, GB/s per shape
for rows). Standard library only; the SVG is written by hand.

usage: reduce_report.py BENCH_CSV [TORCH_CSV] [--out-dir docs] [--run-note TEXT]
"""
import argparse
import csv
import math
import os
import sys

TYPES = ["f32", "i32", "f64", "f16"]
TABLE_LOGS = [10, 12, 14, 16, 18, 20, 21, 22, 24, 26, 27, 28]
SHAPES = [(1 << 24, 4), (1 << 21, 32), (1 << 19, 128), (1 << 16, 1000),
          (1 << 16, 1024), (1 << 13, 8192), (1 << 10, 65536)]
COLORS = {"warpgen": "#d62728", "cub": "#1f77b4", "torch": "#2ca02c",
          "read": "#7f7f7f", "warpgen unaligned": "#ff9896"}


def load(paths):
    rows = []
    for path in paths:
        if not path or not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                impl = r.get("impl") or r.get("kernel")
                rows.append({
                    "section": r["section"], "impl": impl, "type": r["type"],
                    "mode": r["mode"], "n": int(r["n_or_rows"]),
                    "cols": int(r["cols"]), "bytes": float(r["bytes"]),
                    "us": float(r["us"]), "gbps": float(r["GBps"]),
                })
    return rows


def find(data, section, impl, type_=None, mode=None, n=None, cols=None):
    for r in data:
        if (r["section"] == section and r["impl"] == impl
                and (type_ is None or r["type"] == type_)
                and (mode is None or r["mode"] == mode)
                and (n is None or r["n"] == n)
                and (cols is None or r["cols"] == cols)):
            return r
    return None


def fmt(x, digits=2):
    return "-" if x is None else ("%.*f" % (digits, x))


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def array_table(data, type_, mode):
    lines = ["| n | warpgen µs | GB/s | CUB µs | torch µs | read GB/s "
             "| × CUB | × torch | × read |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for lg in TABLE_LOGS:
        n = 1 << lg
        w = find(data, "array", "warpgen", type_, mode, n)
        if not w:
            continue
        c = find(data, "array", "cub", type_, mode, n)
        t = find(data, "array", "torch", type_, mode, n)
        rd = find(data, "array", "read", type_, mode, n)
        lines.append("| 2^%d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            lg, fmt(w["us"]), fmt(w["gbps"], 0), fmt(c and c["us"]),
            fmt(t and t["us"]), fmt(rd and rd["gbps"], 0),
            fmt(ratio(c and c["us"], w["us"])),
            fmt(ratio(t and t["us"], w["us"])),
            fmt(ratio(rd and rd["us"], w["us"]), 3)))
    return "\n".join(lines)


def rows_table(data):
    read = find(data, "rows", "read")
    lines = ["| rows × cols | warpgen µs | GB/s | unaligned GB/s | CUB GB/s "
             "| torch GB/s | × read | × CUB | × torch |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for rows, cols in SHAPES:
        w = find(data, "rows", "warpgen", n=rows, cols=cols)
        if not w:
            continue
        u = find(data, "rows", "warpgen unaligned", n=rows, cols=cols)
        c = find(data, "rows", "cub", n=rows, cols=cols)
        t = find(data, "rows", "torch", n=rows, cols=cols)
        lines.append("| 2^%d × %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            int(math.log2(rows)), cols, fmt(w["us"]), fmt(w["gbps"], 0),
            fmt(u and u["gbps"], 0), fmt(c and c["gbps"], 0),
            fmt(t and t["gbps"], 0),
            fmt(ratio(w["gbps"], read and read["gbps"]), 3),
            fmt(ratio(c and c["us"], w["us"]), 1),
            fmt(ratio(t and t["us"], w["us"]), 1)))
    return "\n".join(lines)


def targets(data):
    """The targets of issue 5, each with the numbers behind it."""
    out = []
    for type_ in ["f32", "i32", "f64"]:
        n = 1 << 28
        w = find(data, "array", "warpgen", type_, "cold", n)
        c = find(data, "array", "cub", type_, "cold", n)
        rd = find(data, "array", "read", type_, "cold", n)
        if w and c and rd:
            xc, xr = c["us"] / w["us"], rd["us"] / w["us"]
            out.append("- whole array 2^28 %s: %.3f× CUB, %.3f× plain read "
                       "(target 0.99 and 0.99): %s" % (
                           type_, xc, xr,
                           "met" if xc >= 0.99 and xr >= 0.99 else "NOT met"))
    for type_ in TYPES:
        missed = []
        for lg in range(16, 23):
            w = find(data, "array", "warpgen", type_, "cold", 1 << lg)
            c = find(data, "array", "cub", type_, "cold", 1 << lg)
            if w and c and c["us"] / w["us"] < 1.5:
                missed.append("2^%d: %.2f×" % (lg, c["us"] / w["us"]))
        out.append("- whole array 2^16..2^22 %s, cold, ≥ 1.5× CUB: %s" % (
            type_, "met at every size" if not missed
            else "NOT met at " + ", ".join(missed)))
    read = find(data, "rows", "read")
    for rows, cols in SHAPES:
        w = find(data, "rows", "warpgen", n=rows, cols=cols)
        if not (w and read) or cols < 32:
            continue
        need = 0.9 if cols >= 128 else 0.8
        x = w["gbps"] / read["gbps"]
        out.append("- rows 2^%d × %d: %.3f× plain read (target %.1f): %s" % (
            int(math.log2(rows)), cols, x, need, "met" if x >= need else "NOT met"))
    return "\n".join(out)


def svg_array(data, path):
    """GB/s against log2 n, one panel a type, cold inputs."""
    W, H, pw, ph = 900, 640, 420, 270
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'font-family="sans-serif" font-size="11">' % (W, H),
             '<rect width="100%" height="100%" fill="white"/>']
    for k, type_ in enumerate(TYPES):
        ox, oy = 50 + (k % 2) * (pw + 30), 30 + (k // 2) * (ph + 50)
        parts.append('<text x="%d" y="%d" font-size="13">%s sum, cold: GB/s '
                     'against n</text>' % (ox, oy - 8, type_))
        parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
                     'stroke="#999"/>' % (ox, oy, pw, ph))
        gmax = 5000.0
        for g in range(0, 5001, 1000):
            y = oy + ph - ph * g / gmax
            parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>'
                         % (ox, y, ox + pw, y))
            parts.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>'
                         % (ox - 4, y + 4, g))
        for lg in range(10, 29, 2):
            x = ox + pw * (lg - 10) / 18.0
            parts.append('<text x="%.1f" y="%d" text-anchor="middle">2^%d</text>'
                         % (x, oy + ph + 14, lg))
        for impl in ["read", "cub", "torch", "warpgen"]:
            pts = []
            for lg in range(10, 29):
                r = find(data, "array", impl, type_, "cold", 1 << lg)
                if r:
                    pts.append((ox + pw * (lg - 10) / 18.0,
                                oy + ph - ph * min(r["gbps"], gmax) / gmax))
            if len(pts) > 1:
                parts.append('<polyline fill="none" stroke="%s" stroke-width="2" '
                             'points="%s"/>' % (COLORS[impl], " ".join(
                                 "%.1f,%.1f" % p for p in pts)))
        if k == 0:
            for j, impl in enumerate(["warpgen", "cub", "torch", "read"]):
                parts.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                             '<text x="%d" y="%d">%s</text>' % (
                                 ox + 10, oy + 10 + 15 * j, COLORS[impl],
                                 ox + 25, oy + 19 + 15 * j,
                                 "plain read" if impl == "read" else impl))
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def svg_rows(data, path):
    """GB/s per shape, grouped bars, with the plain-read ceiling."""
    W, H, ox, oy, pw, ph = 900, 360, 60, 30, 800, 260
    impls = ["warpgen", "warpgen unaligned", "cub", "torch"]
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'font-family="sans-serif" font-size="11">' % (W, H),
             '<rect width="100%" height="100%" fill="white"/>',
             '<text x="%d" y="%d" font-size="13">row sums, f32, 2^26 elements: '
             'GB/s (input + output)</text>' % (ox, oy - 10)]
    gmax = 5000.0
    for g in range(0, 5001, 1000):
        y = oy + ph - ph * g / gmax
        parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>'
                     '<text x="%d" y="%.1f" text-anchor="end">%d</text>'
                     % (ox, y, ox + pw, y, ox - 4, y + 4, g))
    read = find(data, "rows", "read")
    if read:
        y = oy + ph - ph * read["gbps"] / gmax
        parts.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" '
                     'stroke-dasharray="5,3"/><text x="%d" y="%.1f">plain read</text>'
                     % (ox, y, ox + pw, y, COLORS["read"], ox + pw - 60, y - 4))
    gw = pw / len(SHAPES)
    bw = gw / (len(impls) + 1)
    for i, (rows, cols) in enumerate(SHAPES):
        gx = ox + i * gw
        parts.append('<text x="%.1f" y="%d" text-anchor="middle">2^%d×%d</text>'
                     % (gx + gw / 2, oy + ph + 14, int(math.log2(rows)), cols))
        for j, impl in enumerate(impls):
            r = find(data, "rows", impl, n=rows, cols=cols)
            if not r:
                continue
            h = ph * min(r["gbps"], gmax) / gmax
            parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" '
                         'fill="%s"/>' % (gx + bw / 2 + j * bw, oy + ph - h, bw - 1, h,
                                          COLORS[impl]))
    for j, impl in enumerate(impls):
        parts.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                     '<text x="%d" y="%d">%s</text>' % (
                         ox + 10 + 150 * j, oy + ph + 28, COLORS[impl],
                         ox + 25 + 150 * j, oy + ph + 37, impl))
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench_csv")
    ap.add_argument("torch_csv", nargs="?")
    ap.add_argument("--out-dir", default="docs")
    ap.add_argument("--run-note", default="")
    args = ap.parse_args()
    data = load([args.bench_csv, args.torch_csv])
    if not data:
        print("reduce_report: no data", file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    merged = os.path.join(args.out_dir, "reduce_results.csv")
    with open(merged, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["section", "impl", "type", "mode", "n_or_rows", "cols",
                    "bytes", "us", "GBps"])
        for r in data:
            w.writerow([r["section"], r["impl"], r["type"], r["mode"], r["n"],
                        r["cols"], "%.0f" % r["bytes"], "%.4f" % r["us"],
                        "%.2f" % r["gbps"]])
    svg_array(data, os.path.join(args.out_dir, "reduce_array.svg"))
    svg_rows(data, os.path.join(args.out_dir, "reduce_rows.svg"))
    copy = find(data, "ceiling", "copy")
    read = find(data, "ceiling", "read")
    md = []
    md.append("# Performance: whole-array and row reductions\n")
    md.append("Generated by `bench/reduce_report.py` from one run of "
              "`bench/reduce_bench` and `bench/torch_reduce.py`%s. The raw "
              "numbers are in `reduce_results.csv`; the kernel designs and "
              "the measurements that chose them are in `reduce-design.md`.\n"
              % ((" (" + args.run_note + ")") if args.run_note else ""))
    md.append("## Reproduce\n")
    md.append("```sh\n"
              "meson setup build && ninja -C build\n"
              "mkdir -p bench/out\n"
              "nvcc -arch=sm_90 -O3 -std=c++17 -Iinclude -o bench/out/reduce_bench \\\n"
              "     bench/reduce_bench.cu build/libwarpgen.a -L/usr/local/cuda/lib64 \\\n"
              "     -lnvrtc -ldl -lpthread -Xlinker -rpath=/usr/local/cuda/lib64\n"
              "bench/out/reduce_bench --csv bench/out/reduce_bench.csv\n"
              "python3 bench/torch_reduce.py --csv bench/out/torch_reduce.csv\n"
              "python3 bench/reduce_report.py bench/out/reduce_bench.csv "
              "bench/out/torch_reduce.csv --out-dir docs\n"
              "```\n")
    md.append("## Method\n")
    md.append("- Every implementation runs on the same buffers in the same run, "
              "timed with CUDA events: a warm-up (which also loads warpgen's "
              "kernels from its cache), then the median of 15 to 25 timed "
              "batches; arrays of 1 GiB and more: the median of three "
              "interleaved passes.\n"
              "- *cold*: each call reads another slice of a 2 GiB arena, so the "
              "60 MB L2 never holds a call's input from an earlier call; "
              "*warm* (in the CSV): one slice reused.\n"
              "- Calls of less than 64 MiB are timed in batches of 10 or 50 back "
              "to back on one stream (time / calls): launch costs included, "
              "as a caller issuing reductions in a loop sees them.\n"
              "- GB/s counts bytes read (arrays) or bytes read plus written "
              "(rows). *× CUB*, *× torch*: their time over warpgen's (higher "
              "is faster); *× read*: the plain read's time over warpgen's.\n"
              "- Ceilings, 1 GiB: device-to-device copy %s GB/s (read + write), "
              "plain 16-byte-load read %s GB/s.\n" % (
                  fmt(copy and copy["gbps"], 0), fmt(read and read["gbps"], 0)))
    md.append("## Targets (issue 5)\n")
    md.append(targets(data) + "\n")
    md.append("What limits the misses (measurements in reduce-design.md): a "
              "one-launch reduction ends with a chain a plain read does not "
              "have (each block folds and publishes its partial, the last one "
              "to take the ticket folds the partials), about 2 µs; at 2^28 "
              "that is the 1 % between warpgen and the plain read, while "
              "warpgen stays at or above CUB. At 2^21 and 2^22 elements (8 to "
              "32 MB) even the plain read takes more than two thirds of CUB's "
              "time on cold inputs, so 1.5× CUB is out of reach there for any "
              "kernel that reads the data; fewer, larger blocks (512, 1024 "
              "threads) did not shorten the end of the launch.\n")
    md.append("## Whole array, sum, cold\n")
    md.append("![GB/s against size](reduce_array.svg)\n")
    for type_ in TYPES:
        md.append("### %s\n" % type_)
        md.append(array_table(data, type_, "cold") + "\n")
    md.append("## Rows, f32 sum, 2^26 elements\n")
    md.append("![GB/s per shape](reduce_rows.svg)\n")
    md.append("*unaligned*: the same rows from one element further, so that "
              "no row starts on a 16-byte boundary.\n")
    md.append(rows_table(data) + "\n")
    with open(os.path.join(args.out_dir, "performance.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
