"""`import warpgen` is cheap: it loads libwarpgen and nothing heavy. NVRTC
and the CUDA driver are loaded by the first call that needs them, torch,
CuPy and NumPy by the first array of their kind. Checked in a fresh
interpreter, since this one has imported the tests' own helpers."""

import os
import subprocess
import sys

HEAVY = ("torch", "cupy", "numpy", "subprocess")
PROBE = r"""
import sys
before = set(sys.modules)
import warpgen
maps = open("/proc/self/maps").read()
print("nvrtc" if "libnvrtc" in maps else "-")
print("cuda" if "libcuda.so" in maps else "-")
print(" ".join(m for m in %r if m in sys.modules and m not in before)
      or "-")
warpgen.source("reduce f32 sum arch=sm_90")
maps = open("/proc/self/maps").read()
print("nvrtc" if "libnvrtc" in maps else "-")
""" % (HEAVY,)


def test_import_loads_nothing_heavy():
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-c", PROBE], env=env,
                          capture_output=True, text=True, check=True)
    nvrtc, cuda, modules, nvrtc_after_source = done.stdout.split("\n")[:4]
    assert nvrtc == "-", "import warpgen loaded NVRTC"
    assert cuda == "-", "import warpgen loaded the CUDA driver"
    assert modules == "-", f"import warpgen imported {modules}"
    assert nvrtc_after_source == "-", "generating source loaded NVRTC"


def test_all_names_the_public_api():
    # from warpgen import * gives every public function and class (the
    # rownorm calls were once left out), and nothing it does not define.
    import types

    import warpgen
    public = {name for name, value in vars(warpgen).items()
              if not name.startswith("_") and
              not isinstance(value, types.ModuleType) and
              (callable(value) or name.isupper())}
    public -= {"library_path"}
    assert public <= set(warpgen.__all__), sorted(public - set(warpgen.__all__))
    assert all(hasattr(warpgen, name) for name in warpgen.__all__)
