"""`pip install .` installs exactly the modules python/meson.build lists:
a module missing there imports here (from the source tree) and fails only
in an installed package, as warpgen.expressions once did."""

import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "warpgen")
MESON = os.path.join(HERE, "..", "meson.build")


def test_every_module_is_installed():
    with open(MESON) as f:
        listed = set(re.findall(r"'warpgen/([A-Za-z0-9_]+\.py)'", f.read()))
    present = {n for n in os.listdir(PACKAGE) if n.endswith(".py")}
    assert present - listed == set(), "add these to python/meson.build"
    assert listed - present == set(), "python/meson.build lists missing files"
