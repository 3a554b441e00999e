#!/usr/bin/env python3
"""check_specs.py - runs generated warp kernels on the host (no GPU) and
checks every output against the CPU oracle (tests/oracle.h).

Each spec's source comes from `warpgen source`; the two inline-PTX half
conversions are swapped for host ones, the source is compiled with g++
between shim.h (the warp intrinsics, emulated with one thread a lane) and
harness.inc, and run at several sizes on fresh random inputs from the
oracle (refcli.c), which then checks every output.

usage: check_specs.py BUILD_DIR [--sample K] [--jobs J] [--listed] < SPECS
  SPECS: one spec a line (e.g. `warpgen list --arch sm_90`); --listed takes
  that list from BUILD_DIR/warpgen instead of stdin (for Meson). --sample
  keeps K specs chosen so that every (primitive, variant, type, operator,
  layout) appears when K allows. Exit 0 when every spec passes, 77 (Meson's
  skip) when there is no g++ with C++20 <barrier>.
"""
import argparse
import collections
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# Sizes around the trips of both layouts (the vec layout's trip is up to
# 2048 elements for the emulated block of two warps: 2047 and 2049 sit one
# off every trip boundary), then the shifted runs:
# both buffers one element off their 16-byte alignment.
SIZES = (1, 7, 33, 1000, 2047, 2049, 5003)
SHIFTED = (1000, 2047)
TYPE_SIZE = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "u32": 4, "f64": 8, "i64": 8, "u64": 8}


def have_compiler():
    try:
        r = subprocess.run(["g++", "-std=c++20", "-x", "c++", "-fsyntax-only", "-"],
                           input="#include <barrier>\n", capture_output=True, text=True)
    except OSError:
        return False
    return r.returncode == 0


def build_refcli(build, work):
    exe = os.path.join(work, "refcli")
    subprocess.run(["gcc", "-std=c11", "-D_GNU_SOURCE", "-O2",
                    "-I", os.path.join(ROOT, "include"), "-I", os.path.join(ROOT, "tests"),
                    "-I", os.path.join(ROOT, "src"),
                    os.path.join(HERE, "refcli.c"), os.path.join(ROOT, "tests/oracle_warp.c"),
                    os.path.join(ROOT, "tests/oracle.c"), os.path.join(ROOT, "tests/oracle_expr.c"),
                    os.path.join(build, "libwarpgen.a"), "-L/usr/local/cuda/lib64", "-lnvrtc",
                    "-ldl", "-lpthread", "-lm", "-Wl,-rpath,/usr/local/cuda/lib64", "-o", exe],
                   check=True)
    return exe


def host_source(warpgen, spec):
    src = subprocess.run([warpgen, "source", spec], capture_output=True, text=True,
                         check=True).stdout
    src = src.replace('asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));', "f = emu_h2f(h);")
    src = src.replace('asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));', "h = emu_f2h(f);")
    name = re.search(r'extern "C" __global__ void (\w+)\(', src).group(1)
    out_type = re.search(r"\n\s+([\w ]+?) \*__restrict__ out", src).group(1)
    return (f'#include "shim.h"\n{src}\n#define EMU_KERNEL {name}\n'
            f'#define EMU_OUT {out_type}\n#include "harness.inc"\n')


def check(spec, warpgen, refcli, work):
    tag = re.sub(r"\W", "_", spec)
    cpp, exe = os.path.join(work, tag + ".cpp"), os.path.join(work, tag + ".exe")
    with open(cpp, "w") as f:
        f.write(host_source(warpgen, spec))
    r = subprocess.run(["g++", "-std=c++20", "-O1", "-w", "-I", HERE, cpp, "-o", exe,
                        "-lpthread"], capture_output=True, text=True)
    if r.returncode:
        return f"FAIL {spec}: g++: {r.stderr[:1500]}"
    failures = []
    runs = [(n, 0) for n in SIZES] + [(n, TYPE_SIZE[spec.split()[1]]) for n in SHIFTED]
    for n, shift in runs:
        seed = random.getrandbits(63)
        inp, out = os.path.join(work, tag + ".in"), os.path.join(work, tag + ".out")
        out_bytes = subprocess.run([refcli, "fill", spec, str(n), str(seed), inp],
                                   capture_output=True, text=True, check=True).stdout.strip()
        r = subprocess.run([exe, inp, str(n), out, out_bytes, str(shift)], timeout=120,
                           capture_output=True, text=True)
        if r.returncode:
            failures.append(f"FAIL {spec}: {r.stderr.strip()} n={n} shift={shift}")
            continue
        r = subprocess.run([refcli, "check", spec, str(n), inp, out], capture_output=True,
                           text=True)
        if r.returncode:
            failures.append(f"{r.stdout.strip()} n={n} shift={shift} seed={seed}")
    for path in (cpp, exe):
        os.remove(path)
    return "\n".join(failures)


def sample(specs, k):
    groups = collections.defaultdict(list)
    for s in specs:
        words = s.split()
        op = words[2] if "=" not in words[2] else "none"
        layout = re.search(r"layout=(\w+)", s)
        groups[(words[0], re.search(r"variant=(\w+)", s).group(1), words[1], op,
                layout.group(1) if layout else "vec")].append(s)
    chosen = [random.choice(v) for v in groups.values()]
    random.shuffle(chosen)
    return chosen[:k]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build")
    p.add_argument("--sample", type=int, default=0)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--listed", action="store_true")
    a = p.parse_args()
    if not have_compiler():
        print("emulate: skipped, no g++ with C++20 <barrier>")
        return 77
    lines = (subprocess.run([os.path.join(a.build, "warpgen"), "list", "--arch", "sm_90"],
                            capture_output=True, text=True, check=True).stdout.splitlines()
             if a.listed else sys.stdin)
    # The warp primitives: the only specs whose text carries width=.
    specs = [l.strip() for l in lines if " width=" in l]
    if a.sample:
        specs = sample(specs, a.sample)
    warpgen = os.path.join(a.build, "warpgen")
    with tempfile.TemporaryDirectory() as work:
        refcli = build_refcli(a.build, work)
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            results = list(pool.map(lambda s: check(s, warpgen, refcli, work), specs))
    failed = [r for r in results if r]
    for r in failed:
        print(r)
    print(f"emulate: {len(specs)} specs x sizes {SIZES} (+ shifted {SHIFTED}): "
          f"{len(specs) - len(failed)} passed, "
          f"{len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
