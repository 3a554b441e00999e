#!/usr/bin/env python3
"""rownorm_peers.py - warpgen's fused row kernels beside PyTorch's, in one
run on one GPU: softmax, log_softmax, layer_norm (weight and bias) and
rms_norm (weight) over rows x cols = 2^26 elements (f32 and bf16; 256 MiB
of f32 in, as much out: far beyond the 60 MB L2), cols 32, 128, 1024, 4096,
16384, 32768. Each kernel is timed with CUDA events: warm-up, then the median of
repetitions. GB/s counts the input read once and the output written once;
"ceil" is that rate as a fraction of the copy ceiling measured in the same
run (out.copy_(x) of the same bytes: read + write). --compile adds
torch.compile of the same functions (slow to start). Each timing queues 8 calls between
two events, so that the host's per-call cost (ctypes for warpgen) hides
behind the GPU's work as it does in a real program.

Prints one line per (type, cols, op):
  type cols op  warpgen_GB/s torch_GB/s [compile_GB/s]  ceil  x_torch
and a last line with the slowest warpgen fraction of the ceiling and the
smallest speed-up over PyTorch. Exits 0 with a note where torch or a GPU
is missing.

--shapes times, for each row length, the kernels made for other lengths
(wg_rownorm_spec with another cols=: every kernel is correct for every
length), so that the shape table in src/fam_rownorm.c can be checked:
  shape type cols op cols=K GB/s  [resident: K >= cols, else streamed]

--ops layer_norm,rms_norm times only those operations (names as printed;
the default is all four, and the _bare ones with --bare).

--bare adds layer_norm without weight and bias and rms_norm without
weight (ops layer_norm_bare, rms_norm_bare, beside PyTorch's same calls):
how much of the norms' shortfall is the weight and bias they read each
row (from shared memory where it fits, else from L2).

usage: bench/rownorm_peers.py [--types f32,bf16] [--cols 32,128,...]
                              [--ops softmax,...] [--reps N] [--compile]
                              [--shapes] [--bare]
                              [--csv FILE]
"""
import argparse
import sys


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--types", default="f32,bf16")
    ap.add_argument("--cols", default="32,128,1024,4096,16384,32768")
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--shapes", action="store_true")
    ap.add_argument("--bare", action="store_true")
    ap.add_argument("--ops", default=None)
    ap.add_argument("--csv", default=None)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("rownorm_peers: torch is not installed; skipped")
        return 0
    if not torch.cuda.is_available():
        print("rownorm_peers: no CUDA device; skipped")
        return 0
    import ctypes
    import warpgen
    from warpgen._lib import lib
    F = torch.nn.functional
    dev = torch.device("cuda")
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)

    def timed(fn, batch=8):
        """Seconds a call, median over reps of `batch` calls queued back to
        back (the host's per-call cost hides behind the GPU's)."""
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(args.reps):
            start.record()
            for _ in range(batch):
                fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1e-3 / batch)
        return median(times)

    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16,
              "f16": torch.float16, "f64": torch.float64}
    n = 1 << args.log2n
    csv = open(args.csv, "w") if args.csv else None
    if csv:
        csv.write("type,cols,op,peer,seconds,GBps,ceiling_GBps\n")
    print("rownorm_peers: %s, rows x cols = 2^%d, GB/s of input + output"
          % (torch.cuda.get_device_name(), args.log2n))
    print("%-5s %6s %-12s %9s %9s %9s %6s %7s"
          % ("type", "cols", "op", "warpgen", "torch",
             "compile" if args.compile else "-", "ceil", "x_torch"))
    worst_ceil, worst_speedup = 9.9, 99.0
    for tname in args.types.split(","):
        dt = dtypes[tname]
        x_all = torch.randn(n, device=dev, dtype=torch.float32).to(dt)
        out_all = torch.empty_like(x_all)
        nbytes = 2 * n * x_all.element_size()
        # The copy ceiling: the same bytes read and written.
        copy_s = timed(lambda: out_all.copy_(x_all))
        ceiling = nbytes / copy_s / 1e9
        print("%-5s copy ceiling %.0f GB/s" % (tname, ceiling))
        for cols in (int(c) for c in args.cols.split(",")):
            rows = n // cols
            x = x_all[:rows * cols].view(rows, cols)
            out = out_all[:rows * cols].view(rows, cols)
            nb = 2 * rows * cols * x_all.element_size()  # what this shape moves
            w = torch.randn(cols, device=dev).to(dt)
            b = torch.randn(cols, device=dev).to(dt)
            eps = 1e-5
            ops = {
                "softmax": (lambda: warpgen.softmax(x, out=out),
                            lambda: torch.softmax(x, -1),
                            lambda t: torch.softmax(t, -1)),
                "log_softmax": (lambda: warpgen.log_softmax(x, out=out),
                                lambda: torch.log_softmax(x, -1),
                                lambda t: torch.log_softmax(t, -1)),
                "layer_norm": (lambda: warpgen.layer_norm(x, w, b, eps, out=out),
                               lambda: F.layer_norm(x, (cols,), w, b, eps),
                               lambda t: F.layer_norm(t, (cols,), w, b, eps)),
                "rms_norm": (lambda: warpgen.rms_norm(x, w, eps, out=out),
                             (lambda: F.rms_norm(x, (cols,), w, eps))
                             if hasattr(F, "rms_norm") else None,
                             (lambda t: F.rms_norm(t, (cols,), w, eps))
                             if hasattr(F, "rms_norm") else None),
            }
            if args.bare:
                ops["layer_norm_bare"] = (
                    lambda: warpgen.layer_norm(x, None, None, eps, out=out),
                    lambda: F.layer_norm(x, (cols,), None, None, eps),
                    lambda t: F.layer_norm(t, (cols,), None, None, eps))
                if hasattr(F, "rms_norm"):
                    ops["rms_norm_bare"] = (
                        lambda: warpgen.rms_norm(x, None, eps, out=out),
                        lambda: F.rms_norm(x, (cols,), None, eps),
                        lambda t: F.rms_norm(t, (cols,), None, eps))
            if args.ops:
                wanted = args.ops.split(",")
                unknown = [o for o in wanted if o not in ops]
                if unknown:
                    print("rownorm_peers: no op %s (ops: %s)"
                          % (",".join(unknown), ",".join(ops)))
                    return 2
                ops = {o: ops[o] for o in wanted}
            if args.shapes:
                ctx = warpgen.default_context(x.device.index)
                warpgen.softmax(x, out=out)  # binds the context
                stream = torch.cuda.current_stream().cuda_stream
                prims = {"softmax": "softmax-rows", "layer_norm": "layernorm-rows"}
                for op, prim in prims.items():
                    for k in sorted({1024, 4096, 16384, 32768, 0}):
                        c = ctx.c_spec("%s %s cols=%d" % (prim, tname, k))
                        wp = w.data_ptr() if op == "layer_norm" else 0
                        bp = b.data_ptr() if op == "layer_norm" else 0

                        def launch():
                            ctx.call(lib.wg_rownorm_spec, ctypes.byref(c),
                                     x.data_ptr(), wp, bp, out.data_ptr(),
                                     rows, cols, cols, cols, eps, stream)
                        g = nb / timed(launch) / 1e9
                        print("shape %-5s %6d %-12s cols=%-6d %7.0f  %.3f"
                              % (tname, cols, op, k, g, g / ceiling))
            for op, (mine, theirs, plain) in ops.items():
                s_mine = timed(mine)
                s_torch = timed(theirs) if theirs else float("nan")
                s_comp = float("nan")
                if args.compile and plain is not None:
                    try:
                        compiled = torch.compile(plain)
                        s_comp = timed(lambda: compiled(x))
                    except Exception as e:  # noqa: BLE001 - report, go on
                        print("  torch.compile %s: %s" % (op, e))
                g_mine = nb / s_mine / 1e9
                g_torch = nb / s_torch / 1e9
                g_comp = nb / s_comp / 1e9
                frac = g_mine / ceiling
                speedup = s_torch / s_mine
                worst_ceil = min(worst_ceil, frac)
                if speedup == speedup:
                    worst_speedup = min(worst_speedup, speedup)
                print("%-5s %6d %-12s %9.0f %9.0f %9.0f %6.3f %7.2f"
                      % (tname, cols, op, g_mine, g_torch, g_comp, frac,
                         speedup))
                if csv:
                    for peer, s, g in (("warpgen", s_mine, g_mine),
                                       ("torch", s_torch, g_torch),
                                       ("torch.compile", s_comp, g_comp)):
                        if s == s:
                            csv.write("%s,%d,%s,%s,%.6g,%.1f,%.1f\n"
                                      % (tname, cols, op, peer, s, g, ceiling))
        del x_all, out_all
        torch.cuda.empty_cache()
    print("rownorm_peers: slowest warpgen = %.3f of the copy ceiling; "
          "smallest speed-up over torch = %.2fx" % (worst_ceil, worst_speedup))
    return 0


if __name__ == "__main__":
    sys.exit(main())
