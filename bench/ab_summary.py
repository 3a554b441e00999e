"""ab_summary.py - the table of an A/B run (bench/ab_variants.sh): for every
line a benchmark printed, its fraction of the copy ceiling in each run of
each variant, side by side.

usage: python3 bench/ab_summary.py OUTDIR ROUNDS VARIANT...

Reads OUTDIR/ab-VARIANT-N.txt (N = 1..ROUNDS) and knows two benchmarks'
lines:
  bench/rownorm_peers.py  "f32  32768 layer_norm  3041 ... 0.733  1.35"
                          (type cols op, then the fraction second to last)
  bench/scan_peers.py     "  cumsum f32 2^28  warpgen deterministic=1 ...
                          0.78 of copy" (workload and implementation)
Other lines are ignored. Prints one line a measurement:
  KEY   VARIANT a b | VARIANT c d | ...
"""
import re
import sys

SCAN = re.compile(r"^\s+(\S.*?)\s{2,}(\S.*?)\s+[0-9.]+ us\s+[0-9.]+ GB/s\s+([0-9.]+) of copy")


def measurements(text):
    """(key, fraction of copy) for every line of a known form."""
    for line in text.splitlines():
        m = SCAN.match(line)
        if m:
            yield "%s | %s" % (m.group(1), m.group(2)), float(m.group(3))
            continue
        f = line.split()
        if len(f) >= 6 and f[1].isdigit():
            try:
                yield " ".join(f[:3]), float(f[-2])
            except ValueError:
                pass


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out, rounds, variants = argv[1], int(argv[2]), argv[3:]
    order, runs = [], {}
    for v in variants:
        for n in range(1, rounds + 1):
            try:
                text = open("%s/ab-%s-%d.txt" % (out, v, n)).read()
            except OSError:
                continue
            for key, frac in measurements(text):
                if key not in runs:
                    order.append(key)
                    runs[key] = {w: [] for w in variants}
                runs[key][v].append(frac)
    width = max([len(k) for k in order] + [10])
    for key in order:
        cells = ["%s %s" % (v, " ".join("%.3f" % x for x in runs[key][v]) or "-")
                 for v in variants]
        print("%-*s  %s" % (width, key, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
