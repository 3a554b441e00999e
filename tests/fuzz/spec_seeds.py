#!/usr/bin/env python3
"""spec_seeds.py - writes the seed corpus of the spec fuzzer (fuzz_spec.c):
a sample of `warpgen list` (every primitive, type, operator, variant and
layout), the same specs written other ways (auto, arch, spaces, key order,
numbers spelled differently), bad specs, and specs with expression keys
(map=, combine=, identity=, final=, inputs=, params=). Deterministic: the
committed tests/fuzz/corpus/spec/ is its output.
    spec_seeds.py WARPGEN_EXE OUTPUT_DIR
"""
import os
import random
import subprocess
import sys


def main():
    exe, out = sys.argv[1], sys.argv[2]
    rng = random.Random(9)
    listed = subprocess.run([exe, "list"], check=True, capture_output=True,
                            text=True).stdout.split("\n")
    listed = [s for s in listed if s]
    seeds = {}

    def add(name, text):
        seeds[name] = text.encode() if isinstance(text, str) else text

    # Stratified: every (primitive, variant, layout) and every
    # (primitive, type, operator) appears at least once.
    seen = set()
    for s in listed:
        words = s.split()
        key = dict(w.split("=", 1) for w in words if "=" in w)
        for group in ((words[0], key.get("variant"), key.get("layout")),
                      tuple(w for w in words if "=" not in w)):
            if group not in seen:
                seen.add(group)
                add("list-%03d" % len(seeds), s)
    for s in rng.sample(listed, 40):
        add("list-%03d" % len(seeds), s)

    # Other spellings of valid specs.
    warp = [s for s in listed if "width=" in s]
    for k, s in enumerate(rng.sample(warp, 40)):
        words = s.split()
        head = [w for w in words if "=" not in w]
        keys = [w for w in words if "=" in w]
        rng.shuffle(keys)
        if k % 4 == 0:
            keys = [w if not w.startswith("variant=") else "variant=auto" for w in keys]
        if k % 4 == 1:
            keys.append("arch=sm_%d" % rng.choice([1, 50, 75, 80, 86, 89, 90, 100, 120, 10000]))
        if k % 4 == 2:
            keys.append("arch=%d" % rng.choice([70, 90]))
        if k % 4 == 3:
            keys = [w.replace("width=", "width=0") for w in keys]
        sep = rng.choice([" ", "  ", "\t", "\n", " \t\n "])
        add("spelling-%02d" % k, sep.join(head + keys) + rng.choice(["", " ", "\n"]))
    for k, s in enumerate([
            "reduce f32 sum", "reduce-array f32 sum", "reduce-rows f64 mean cols=1",
            "reduce-rows f32 argmax cols=9223372036854775807", "reduce-rows i8 sum",
            "broadcast f32 lane=31", "broadcast u64 width=2 lane=1 variant=smem",
            "broadcast f16 lane=+3 width=4", "reduce-rows f32 sum cols=+0",
            "reduce i32 sum width=32 layout=lane arch=sm_80",
            "allreduce u32 max layout=lane variant=auto arch=sm_75",
            "scan bf16 sum layout=lane width=08", "ballot f32 width=16 layout=vec",
            "match u64 variant=smem", "any f16 arch=sm_0090"]):
        add("valid-%02d" % k, s)

    # Bad specs: every message path.
    for k, s in enumerate([
            "", " ", "reduce", "reduce f32 sum sum", "reduce f99 sum", "nope f32",
            "reduce f32 bogus", "reduce f32 sum width=3", "reduce f32 sum width=64",
            "reduce f32 sum width=", "reduce f32 sum =16", "=", "width=16 reduce f32",
            "reduce f32 width=16 sum", "reduce f32 sum width=16 width=16",
            "reduce f32 sum colour=red", "reduce f32 sum variant=redux",
            "reduce i32 sum variant=redux arch=sm_70", "reduce f32 sum arch=sm_",
            "reduce f32 sum arch=sm_0", "reduce f32 sum arch=10001", "reduce f32 sum arch=-90",
            "reduce f32 sum lane=1", "broadcast f32 lane=32", "broadcast f32 lane=-1",
            "broadcast f32 width=4 lane=4", "reduce-rows f32 sum cols=-1",
            "reduce-rows f32 sum cols=99999999999999999999", "reduce f32 sum cols=5",
            "reduce-array f32 sum width=16", "reduce-array f32 sum layout=lane",
            "reduce-array f32 sum variant=down", "reduce f32 mean", "reduce f32 sum layout=row",
            "ballot f32 sum", "broadcast f32 variant=up", "reduce f32 sum width=2147483648",
            "reduce f32 sum width=0x10", "reduce f32 sum width=1e1", "reduce f32 sum width= 16",
            "reduce f32 sum variant=", "reduce f32 sum layout==lane",
            "reduce f32 " + "x" * 300, "reduce f32 sum " + "k" * 200 + "=1",
            "reduce f32 sum width=" + "9" * 40]):
        add("bad-%02d" % k, s)
    for k, b in enumerate([b"reduce f32\x01sum", b"reduce f32 sum\xff", b"reduce\rf32 sum",
                           b"reduce f32 sum\x00width=3", b"\x1b[31mreduce f32 sum",
                           b"reduce f32 sum width=16\x7f", b"reduce f32 \xc3\xa9"]):
        add("bytes-%02d" % k, b)

    # Expression keys (docs/expressions.md); rejected until specs take them.
    for k, s in enumerate([
            'reduce-array f32 sum map="x*x"',
            'reduce-array f32 sum map="x * x"',
            'reduce-rows f32 max map="abs(x-y)" inputs=f32,f32',
            'reduce-rows f32 max map="abs(x - y)" inputs=f32,f32 cols=64',
            'reduce-array f32 sum combine="fmax(a, b)" identity="-p0" params=f32',
            'reduce-array f32 mean final="r / f32(n)"',
            'reduce-array f32 sum map="x > p0 && x == x" params=f32',
            'reduce-array f64 sum map="x*p0+p1" params=f64,f64 final="sqrt(r)"',
            'reduce-array i32 sum map="i % 3 == 0 ? x : -x"',
            'reduce-array u64 sum map="u64(x) * 0x9e3779b97f4a7c15"',
            'reduce-array f32 sum map="x*2" combine="a+b" identity="0" final="r"',
            'reduce-rows f16 sum map="x+y+z+w" inputs=f16,f16,f16,f16',
            'reduce-array f32 sum map="exp(x - p0)" params=f32 final="log(r) + p0"',
            'reduce-array f32 sum map=x',
            'reduce-array f32 sum map=""',
            'reduce-array f32 sum map="x',
            'reduce-array f32 sum map="x\\"); asm(\\"trap;"',
            'reduce-array f32 sum map="system(x)"',
            'reduce-array f32 sum map="x /* y */"',
            'reduce-array f32 sum map="q"',
            'reduce-array f32 sum map="x" map="y"',
            "reduce-array f32 sum map='x*x'",
            'reduce-array f32 sum inputs=f32,f32,f32,f32,f32',
            'reduce-array f32 sum params=f32,f32,f32,f32,f32,f32,f32,f32,f32',
            'reduce-array f32 sum inputs=',
            'reduce-array f32 sum identity="p0" params=',
            'reduce f32 sum width=16 map="x*x"',
            'reduce-array f32 sum map="((((((((((((((((((((x))))))))))))))))))))"',
            'reduce-array f32 sum map="1e400"',
            'reduce-array f32 sum map="-2147483648"',
            'reduce-array f32 sum map="x\tx"',
            'reduce-array f32 sum map="\u00e9"']):
        add("expr-%02d" % k, s)

    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("%d seeds in %s" % (len(seeds), out))


if __name__ == "__main__":
    main()
