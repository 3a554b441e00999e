"""Parameters are kernel arguments: 100 values of p0 in map="x*p0" make one
kernel (one compile in a fresh cache folder) and 99 calls served from the
context's memory, each with its own right answer. Skips without torch or a
GPU (the torch_cuda fixture); fails where a GPU is present."""

import numpy as np

import warpgen


def test_hundred_parameter_values_compile_once(torch_cuda, tmp_path):
    torch = torch_cuda
    host = np.random.default_rng(9).standard_normal(100_003).astype(np.float32)
    x = torch.from_numpy(host).cuda()
    # x (f32) times p0 (a Python float: f64) is f64, as C promotes it
    out = torch.empty((), dtype=torch.float64, device="cuda")
    total = float(host.astype(np.float64).sum())
    scale = float(np.abs(host.astype(np.float64)).sum())
    # A context of its own with an empty cache folder: nothing to hit but
    # what this test makes.
    with warpgen.Context(cache_dir=tmp_path, disk_cache=True) as ctx:
        before = ctx.cache_stats()
        got = []
        for p in range(100):
            out.fill_(float("nan"))  # poisoned: a call that writes nothing fails
            warpgen.reduce(x, "sum", map="x*p0", p0=float(p), out=out,
                           context=ctx)
            got.append(out.item())
        after = ctx.cache_stats()
    for p, value in enumerate(got):
        # f64 products and sums of 100003 terms: far inside 1e-9 of the scale
        assert abs(value - p * total) <= 1e-9 * p * scale + 1e-12, (p, value)
    assert after.compiles - before.compiles == 1
    assert after.disk_hits - before.disk_hits == 0
    assert after.memory_hits - before.memory_hits == 99
