"""Per-call overhead of warpgen.reduce from Python, against torch.sum and
cupy.sum on the same small array (2^10 elements by default), and the time of
the first call in a fresh process with a warm disk cache (against CuPy's
ReductionKernel and Triton).

Every figure is the median over --repeats runs of a loop of --calls calls,
divided by --calls: "event" is the GPU time between CUDA events recorded
before and after the loop (so it includes the gaps the CPU leaves), "wall"
the host time of the loop plus one synchronisation.

    PYTHONPATH=python WARPGEN_LIBRARY=build/libwarpgen.so \\
        python3 python/bench_overhead.py [--n 1024] [--json out.json]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(fn, sync, make_events, calls, repeats):
    """(event µs, wall µs) per call: medians over repeats."""
    for _ in range(max(calls // 10, 10)):  # warm up: compile, allocate
        fn()
    sync()
    events, walls = [], []
    for _ in range(repeats):
        start, end = make_events()
        sync()
        t0 = time.perf_counter()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        walls.append((time.perf_counter() - t0) / calls * 1e6)
        events.append(_elapsed_ms(start, end) / calls * 1e3)
    return statistics.median(events), statistics.median(walls)


def _elapsed_ms(start, end):
    if hasattr(start, "elapsed_time"):  # torch
        return start.elapsed_time(end)
    import cupy
    return cupy.cuda.get_elapsed_time(start, end)


def per_call(args):
    import warpgen
    rows = []
    try:
        import torch
        x = torch.rand(args.n, device="cuda")
        buf = torch.empty(1, device="cuda")

        def events():
            return (torch.cuda.Event(enable_timing=True),
                    torch.cuda.Event(enable_timing=True))
        sync = torch.cuda.synchronize
        assert abs(warpgen.reduce(x) - float(torch.sum(x))) < 1e-3
        for name, fn in [
                ("torch.sum(x)", lambda: torch.sum(x)),
                ("warpgen.reduce(x, out=buf) [torch]",
                 lambda: warpgen.reduce(x, "sum", out=buf)),
                ("torch.sum(x).item()", lambda: torch.sum(x).item()),
                ("warpgen.reduce(x) -> float [torch]",
                 lambda: warpgen.reduce(x, "sum")),
                ("warpgen.reduce_rows(x.view(32, -1)) [torch]",
                 lambda: warpgen.reduce_rows(x.view(32, -1))),
                ("torch.sum(x.view(32, -1), dim=1)",
                 lambda: torch.sum(x.view(32, -1), dim=1)),
                ("warpgen.warp_reduce(x) [torch]",
                 lambda: warpgen.warp_reduce(x))]:
            rows.append((name, *timed(fn, sync, events, args.calls,
                                      args.repeats)))
    except ImportError:
        print("torch: not installed, skipped", file=sys.stderr)
    try:
        import cupy
        xc = cupy.random.rand(args.n, dtype=cupy.float32)
        bufc = cupy.empty(1, dtype=cupy.float32)

        def events():
            return cupy.cuda.Event(), cupy.cuda.Event()
        sync = cupy.cuda.Device().synchronize
        for name, fn in [
                ("cupy.sum(x)", lambda: cupy.sum(xc)),
                ("warpgen.reduce(x, out=buf) [cupy]",
                 lambda: warpgen.reduce(xc, "sum", out=bufc)),
                ("float(cupy.sum(x))", lambda: float(cupy.sum(xc))),
                ("warpgen.reduce(x) -> float [cupy]",
                 lambda: warpgen.reduce(xc, "sum"))]:
            rows.append((name, *timed(fn, sync, events, args.calls,
                                      args.repeats)))
    except ImportError:
        print("cupy: not installed, skipped", file=sys.stderr)
    return rows


def host_side(args):
    """µs of Python work alone: a ctypes call, and reading an array."""
    import warpgen
    from warpgen import arrays
    from warpgen._lib import lib
    out = {}
    n = 100_000
    t0 = time.perf_counter()
    for _ in range(n):
        lib.wg_version_number()
    out["ctypes call (wg_version_number)"] = (time.perf_counter() - t0) / n * 1e6
    try:
        import torch
        x = torch.rand(args.n, device="cuda")
        t0 = time.perf_counter()
        for _ in range(n):
            arrays.view(x)
        out["arrays.view(torch tensor)"] = (time.perf_counter() - t0) / n * 1e6
    except ImportError:
        pass
    del warpgen
    return out


# --- first call in a fresh process --------------------------------------------

_FIRST_CALL = {
    "warpgen": """
import time, torch, warpgen
x = torch.ones({n}, device="cuda"); torch.cuda.synchronize()
t0 = time.perf_counter(); r = warpgen.reduce(x, "sum")
print(time.perf_counter() - t0, r)
""",
    "cupy.ReductionKernel": """
import time, cupy
x = cupy.ones({n}, dtype=cupy.float32); cupy.cuda.Device().synchronize()
t0 = time.perf_counter()
k = cupy.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "wgsum")
r = float(k(x))
print(time.perf_counter() - t0, r)
""",
    "triton": """
import time, torch, triton, triton.language as tl
@triton.jit
def wgsum(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out, tl.sum(tl.load(x + offs, mask=offs < n, other=0.0), 0))
x = torch.ones({n}, device="cuda"); o = torch.empty(1, device="cuda")
torch.cuda.synchronize()
t0 = time.perf_counter(); wgsum[(1,)](x, o, {n}, BLOCK={block})
r = o.item()
print(time.perf_counter() - t0, r)
""",
}


def first_calls(args):
    """Seconds of the first call in a fresh process: cold (empty caches)
    and warm (the caches the cold run filled)."""
    out = {}
    block = 1 << max(args.n - 1, 1).bit_length()
    for name, code in _FIRST_CALL.items():
        cache = tempfile.mkdtemp(prefix="wg-first-")
        env = dict(os.environ, WARPGEN_CACHE_DIR=cache, CUPY_CACHE_DIR=cache,
                   TRITON_CACHE_DIR=cache)
        # A file, not -c: Triton reads the source of what it compiles.
        script = os.path.join(cache, "first_call.py")
        with open(script, "w") as f:
            f.write(code.format(n=args.n, block=block))
        times = []
        for _ in range(2):
            done = subprocess.run([sys.executable, script], env=env,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                print(f"{name}: failed: {done.stderr.strip()[-300:]}",
                      file=sys.stderr)
                break
            times.append(float(done.stdout.split()[0]))
        if len(times) == 2:
            out[name] = {"cold_s": times[0], "warm_s": times[1]}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--no-first-call", action="store_true")
    args = parser.parse_args()

    rows = per_call(args)
    print(f"Per call, {args.n} float32 elements (median of {args.repeats} x "
          f"{args.calls} calls)\n")
    print("| call | event µs | wall µs |\n| --- | ---: | ---: |")
    for name, event, wall in rows:
        print(f"| `{name}` | {event:.1f} | {wall:.1f} |")
    host = host_side(args)
    print("\nHost side alone:")
    for name, us in host.items():
        print(f"- {name}: {us:.2f} µs")
    first = {} if args.no_first_call else first_calls(args)
    if first:
        print("\nFirst call in a fresh process (after import and CUDA "
              "start-up)\n")
        print("| | empty cache s | warm disk cache s |\n| --- | ---: | ---: |")
        for name, t in first.items():
            print(f"| {name} | {t['cold_s']:.3f} | {t['warm_s']:.3f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "per_call_us": rows, "host_us": host,
                       "first_call_s": first}, f, indent=1)


if __name__ == "__main__":
    main()
