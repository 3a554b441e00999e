#!/usr/bin/env python3
"""expr_peers.py - warpgen's fused reductions beside PyTorch, eager and
torch.compile, on one GPU in one run (issue 9, "Performance").

  PYTHONPATH=python WARPGEN_LIBRARY=build-gpu/libwarpgen.so \\
      python3 bench/expr_peers.py [--quick] [--markdown FILE]

Prints, in order:
 1. throughput at 2^28 f32 (and rows of 1024, 2^18 rows): GB/s of the
    bytes each reduction must read, the fraction of two read ceilings
    measured in the same run over the same bytes (warpgen's plain f32 sum
    and torch's x.sum()), and the speedup over eager PyTorch and over
    torch.compile; each warpgen answer is checked against a float64 one.
    Then the same as a Markdown table for the README.
 2. host time per call (Python, out= given, a tiny input): what a call
    costs before its kernel runs.
 3. first calls: a new expression with an empty cache folder, then in a new
    process from the disk cache; torch.compile with a fresh
    TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR, then warm in a new process.
 4. 100 parameter values (map="x*p0", p0 = 0..99): the cache counters must
    show one kernel made and 99 calls served from memory.

GPU times: each call alone between two CUDA events, behind a sleep kernel so
the host has queued the call before the first event runs (no launch gap is
timed); 3 warm-up calls; the median of --reps calls (30). The inputs (1 GiB
and 2 GiB) are far larger than L2 (60 MB). torch.compile is called once
before timing, so its compile is never timed in section 1.

Exits 0 with a note where torch or a GPU is missing. A warpgen answer that
disagrees with the float64 one is reported as BAD and makes the exit status 1.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

N = 1 << 28      # elements of x (and of y)
COLS = 1024      # row length of the row reductions
# The first-call expressions: never compiled before in a fresh cache folder.
NEW_EXPRS = ("x * x + 0.25 * x", "abs(x - 0.5) * 3")


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


# --- 3. first calls, each in a process of its own -------------------------

def child_warpgen():
    """Times the first call of each NEW_EXPRS expression in this process
    (the cache folder is the parent's choice) and prints a JSON line."""
    t0 = time.perf_counter()
    import torch
    torch.cuda.init()
    x = torch.randn(1 << 20, device="cuda")
    o = torch.empty((), device="cuda")
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    import warpgen
    t2 = time.perf_counter()
    times = []
    for e in NEW_EXPRS:
        s = time.perf_counter()
        warpgen.reduce(x, "sum", map=e, out=o)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - s) * 1e3)
    s = time.perf_counter()
    warpgen.reduce(x, "sum", map=NEW_EXPRS[0], out=o)
    torch.cuda.synchronize()
    again = (time.perf_counter() - s) * 1e3
    st = warpgen.default_context(0).cache_stats()
    print(json.dumps({"torch_ms": (t1 - t0) * 1e3, "import_ms": (t2 - t1) * 1e3,
                      "first_ms": times, "again_ms": again,
                      "compiles": st.compiles, "disk_hits": st.disk_hits}))


def child_torch_compile():
    """Times the first call of two new torch.compile'd functions in this
    process (its cache folders are the parent's choice)."""
    import torch
    x = torch.randn(1 << 20, device="cuda")
    torch.cuda.synchronize()

    def f1(x):
        return (x * x + 0.25 * x).sum()

    def f2(x):
        return ((x - 0.5).abs() * 3).sum()

    times = []
    for f in (f1, f2):
        c = torch.compile(f)
        s = time.perf_counter()
        c(x)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - s) * 1e3)
    print(json.dumps({"first_ms": times}))


def run_child(mode, env):
    full = dict(os.environ, **env)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode],
                       env=full, capture_output=True, text=True, timeout=300)
    for line in reversed(r.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"child {mode} failed (status {r.returncode}):\n"
                       f"{r.stdout[-2000:]}\n{r.stderr[-4000:]}")


def first_calls():
    print("\n== 3. first call of a new expression (ms, wall, includes the "
          "launch and a synchronize)")
    wg_dir = tempfile.mkdtemp(prefix="wg-first-")
    cold = run_child("warpgen", {"WARPGEN_CACHE_DIR": wg_dir})
    warm = run_child("warpgen", {"WARPGEN_CACHE_DIR": wg_dir})
    print(f"warpgen, empty cache folder  : first call {cold['first_ms'][0]:8.1f}"
          f"  (the process's first: context, NVRTC load, compile, load)")
    print(f"                               second new expression "
          f"{cold['first_ms'][1]:8.1f}  (compile + load; target <= 20)")
    print(f"                               same expression again "
          f"{cold['again_ms']:8.3f}  (memory)   compiles={cold['compiles']}")
    print(f"warpgen, new process, disk   : first call {warm['first_ms'][0]:8.2f}"
          f"  (the process's first: context + disk + load)")
    print(f"                               second expression     "
          f"{warm['first_ms'][1]:8.2f}  (disk + load; target <= 2)"
          f"   compiles={warm['compiles']} disk_hits={warm['disk_hits']}")
    print(f"                               import warpgen {warm['import_ms']:.1f} ms")
    try:
        tc_env = {"TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="ind-"),
                  "TRITON_CACHE_DIR": tempfile.mkdtemp(prefix="tri-")}
        tcold = run_child("torch_compile", tc_env)
        twarm = run_child("torch_compile", tc_env)
        print(f"torch.compile, fresh caches  : first call {tcold['first_ms'][0]:8.1f}"
              f"   second function {tcold['first_ms'][1]:8.1f}")
        print(f"torch.compile, new process   : first call {twarm['first_ms'][0]:8.1f}"
              f"   second function {twarm['first_ms'][1]:8.1f}")
    except Exception as e:  # torch.compile may be unusable (no compiler)
        print(f"torch.compile: could not be timed: {e}")
        tcold = twarm = None
    return cold, warm, tcold, twarm


# --- the main run ---------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--quick", action="store_true",
                    help="2^24 elements, 20 reps, no first-call section")
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "warpgen":
        return child_warpgen()
    if args.child == "torch_compile":
        return child_torch_compile()
    # Everything this run compiles goes to a fresh folder: the counters of
    # section 4 then show a compile, and the user's cache stays as it was.
    os.environ["WARPGEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="wg-expr-peers-")
    try:
        import torch
    except ImportError:
        print("expr_peers: torch is not installed; skipped")
        return 0
    if not torch.cuda.is_available():
        print("expr_peers: no CUDA device; skipped")
        return 0
    import warpgen as wg

    n = (1 << 24) if args.quick else N
    reps = 20 if args.quick else max(20, args.reps)
    rows = n // COLS
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(9)
    xy = torch.randn(2 * n, device=dev, generator=gen)  # x and y, end to end
    x, y = xy[:n], xy[n:]
    m = x.view(rows, COLS)
    o = torch.empty((), device=dev)
    o64 = torch.empty((), dtype=torch.float64, device=dev)  # x*p0, p0 a float: f64
    oi = torch.empty((), dtype=torch.int64, device=dev)
    orow = torch.empty(rows, device=dev)
    props = torch.cuda.get_device_properties(dev)
    print(f"== {props.name}, torch {torch.__version__}, warpgen "
          f"{getattr(wg, '__version__', '?')}, n = 2^{n.bit_length() - 1} f32, "
          f"rows {rows} x {COLS}, median of {reps}")

    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)

    def gpu_us(fn):
        """Median GPU microseconds of one call of fn."""
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            torch.cuda._sleep(2_000_000)  # ~1 ms: the host queues fn meanwhile
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1e3)
        return median(times)

    def gbps(nbytes, us):
        return nbytes / (us * 1e-6) / 1e9

    # Read ceilings over the same bytes: 1 input (x) and 2 inputs (x, y).
    ceil = {}
    for k, buf in ((1, x), (2, xy)):
        wg_us = gpu_us(lambda b=buf: wg.reduce(b, "sum", out=o))
        t_us = gpu_us(lambda b=buf: b.sum())
        ceil[k] = (gbps(buf.numel() * 4, wg_us), gbps(buf.numel() * 4, t_us))
    print(f"read ceilings: 1 GiB-class (x): warpgen sum {ceil[1][0]:.0f} GB/s, "
          f"torch x.sum() {ceil[1][1]:.0f} GB/s; 2 inputs (x and y as one "
          f"array): warpgen {ceil[2][0]:.0f}, torch {ceil[2][1]:.0f}")

    inf = float("inf")
    # name, inputs, warpgen call, PyTorch function (eager and compiled),
    # float64 reference, output[, the scale errors are measured against when
    # the answer itself may be near 0: a sum of magnitudes]
    cases = [
        ("sum of x*x", 1, lambda: wg.reduce(x, "sum", map="x*x", out=o),
         lambda x, y: (x * x).sum(), lambda X, Y: (X * X).sum(), o),
        ("dot(x, y)", 2, lambda: wg.reduce((x, y), "sum", map="x*y", out=o),
         lambda x, y: torch.dot(x, y), lambda X, Y: torch.dot(X, Y), o,
         lambda X, Y: (X * Y).abs().sum()),
        ("sum of (x-y)^2", 2,
         lambda: wg.reduce((x, y), "sum", map="(x-y)*(x-y)", out=o),
         lambda x, y: ((x - y) ** 2).sum(), lambda X, Y: ((X - Y) ** 2).sum(), o),
        ("abs max (max map=abs(x))", 1,
         lambda: wg.reduce(x, "max", map="abs(x)", out=o),
         lambda x, y: x.abs().max(), lambda X, Y: X.abs().max(), o),
        ("abs max (norminf)", 1, lambda: wg.norm(x, inf, out=o),
         lambda x, y: torch.linalg.vector_norm(x, inf),
         lambda X, Y: X.abs().max(), o),
        ("mean", 1, lambda: wg.mean(x, out=o), lambda x, y: x.mean(),
         lambda X, Y: X.mean(), o, lambda X, Y: X.abs().mean()),
        ("var", 1, lambda: wg.var(x, out=o), lambda x, y: x.var(),
         lambda X, Y: X.var(), o),
        ("argmax", 1, lambda: wg.argmax(x, out=oi), lambda x, y: x.argmax(),
         lambda X, Y: X.argmax(), oi),
        ("logsumexp", 1, lambda: wg.logsumexp(x, out=o),
         lambda x, y: torch.logsumexp(x, 0), lambda X, Y: torch.logsumexp(X, 0), o),
        ("norm2", 1, lambda: wg.norm(x, 2, out=o),
         lambda x, y: torch.linalg.vector_norm(x), lambda X, Y: X.norm(), o),
        ("rows of 1024: logsumexp", 1, lambda: wg.logsumexp(m, dim=1, out=orow),
         lambda x, y: torch.logsumexp(x.view(-1, COLS), 1),
         lambda X, Y: torch.logsumexp(X.view(-1, COLS), 1), orow),
        ("rows of 1024: var", 1, lambda: wg.var(m, dim=1, out=orow),
         lambda x, y: x.view(-1, COLS).var(dim=1),
         lambda X, Y: X.view(-1, COLS).var(dim=1), orow),
    ]

    X64, Y64 = x.double(), y.double()
    results, bad = [], 0
    print(f"\n== 1. throughput (GB/s of input bytes; x ceiling = / warpgen's "
          f"plain sum over the same bytes, / torch's x.sum())")
    print(f"{'reduction':28} {'warpgen':>8} {'xceil':>6} {'xtorch':>6} "
          f"{'eager':>8} {'compile':>8} {'x eager':>7} {'x comp':>7}  check")
    for name, k, wg_fn, torch_fn, ref_fn, out, *scale in cases:
        nbytes = k * n * 4
        # Correctness first: one call, against float64.
        wg_fn()
        torch.cuda.synchronize()
        ref = ref_fn(X64, Y64)
        got = out.double()
        if out is oi:
            ok = int(got.item()) == int(ref.item())
            err = 0.0 if ok else 1.0
        else:
            floor = scale[0](X64, Y64).item() if scale else 1e-30
            err = ((got - ref).abs() / ref.abs().clamp_min(floor)).max().item()
            ok = err <= 1e-4
        bad += not ok
        wg_us = gpu_us(wg_fn)
        e_us = gpu_us(lambda: torch_fn(x, y))
        compiled = torch.compile(torch_fn)
        try:
            compiled(x, y)  # the compile, outside the timing
            c_us = gpu_us(lambda: compiled(x, y))
        except Exception as exc:  # no Triton or no compiler on the machine
            print(f"  torch.compile failed for {name}: {exc}")
            c_us = math.nan
        r = dict(name=name, wg=gbps(nbytes, wg_us), eager=gbps(nbytes, e_us),
                 comp=gbps(nbytes, c_us), frac=gbps(nbytes, wg_us) / ceil[k][0],
                 frac_t=gbps(nbytes, wg_us) / ceil[k][1], sp_e=e_us / wg_us,
                 sp_c=c_us / wg_us, ok=ok, err=err)
        results.append(r)
        print(f"{name:28} {r['wg']:8.0f} {r['frac']:6.2f} {r['frac_t']:6.2f} "
              f"{r['eager']:8.0f} {r['comp']:8.0f} {r['sp_e']:7.2f} {r['sp_c']:7.2f}"
              f"  {'ok' if ok else 'BAD'} (rel err {err:.1e})")

    table = ["| reduction | warpgen GB/s | × read ceiling | PyTorch eager GB/s | "
             "torch.compile GB/s | × eager | × torch.compile |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        table.append(f"| {r['name']} | {r['wg']:.0f} | {r['frac']:.2f} | "
                     f"{r['eager']:.0f} | {r['comp']:.0f} | {r['sp_e']:.1f}× | "
                     f"{r['sp_c']:.2f}× |")
    table.append(f"\nRead ceiling (warpgen's f32 sum over the same bytes): "
                 f"{ceil[1][0]:.0f} GB/s for one input, {ceil[2][0]:.0f} for two; "
                 f"torch's x.sum(): {ceil[1][1]:.0f} and {ceil[2][1]:.0f}. "
                 f"{props.name}, torch {torch.__version__}.")
    print("\nMarkdown for the README:\n")
    print("\n".join(table))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(table) + "\n")

    # --- 2. host cost per call --------------------------------------------
    print("\n== 2. host time per call (µs, Python, out= given, 1024 elements; "
          "the stream is held by a sleep kernel so no call waits on the GPU)")
    small = torch.randn(1024, device=dev)
    small2 = torch.randn(1024, device=dev)
    host = [("warpgen reduce(x, 'sum')", lambda: wg.reduce(small, "sum", out=o)),
            ("warpgen reduce(x, 'sum', map='x*x')",
             lambda: wg.reduce(small, "sum", map="x*x", out=o)),
            ("warpgen reduce((x, y), 'sum', map='x*y')",
             lambda: wg.reduce((small, small2), "sum", map="x*y", out=o)),
            ("warpgen reduce(x, map='x*p0', p0=2.0)",
             lambda: wg.reduce(small, "sum", map="x*p0", p0=2.0, out=o64)),
            ("torch (x*x).sum()", lambda: (small * small).sum())]
    for name, fn in host:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        calls = 200
        samples = []
        for _ in range(5):
            torch.cuda._sleep(200_000_000)  # ~0.1 s: longer than the calls
            s = time.perf_counter()
            for _ in range(calls):
                fn()
            samples.append((time.perf_counter() - s) / calls * 1e6)
            torch.cuda.synchronize()
        print(f"{name:44} {median(samples):7.1f}")

    # --- 3. first calls -----------------------------------------------------
    if not args.quick:
        first_calls()

    # --- 4. parameters compile nothing --------------------------------------
    print("\n== 4. map='x*p0' with 100 values of p0 (a Python float: f64, so the "
          "output is f64): kernels made")
    ctx = wg.default_context(0)
    before = ctx.cache_stats()
    worst = 0.0
    ref = (x.double()).sum().item()
    # A map this process has not run yet (section 2 ran "x*p0"), so that the
    # first value makes the kernel and the other 99 find it in memory.
    fresh = f"x*p0 + {os.getpid() % 1000 + 1}.0 * 0.0"
    for p in range(100):
        wg.reduce(x, "sum", map=fresh, p0=float(p), out=o64)
        if p % 25 == 0:
            torch.cuda.synchronize()
            want = ref * p
            worst = max(worst, abs(o64.item() - want) / max(abs(want), 1e-30))
    torch.cuda.synchronize()
    after = ctx.cache_stats()
    made = (after.compiles - before.compiles) + (after.disk_hits - before.disk_hits)
    mem = after.memory_hits - before.memory_hits
    one = made == 1 and mem == 99  # one kernel made (compiled, or from disk)
    print(f"compiles {after.compiles - before.compiles}, disk hits "
          f"{after.disk_hits - before.disk_hits}, memory hits {mem} "
          f"-> {'ONE compile: ok' if one else 'NOT one compile: BAD'} "
          f"(worst rel err {worst:.1e})")
    bad += not one
    print(f"\n{'all answers ok' if not bad else f'{bad} BAD'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
