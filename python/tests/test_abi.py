"""The ctypes structs match include/warpgen.h, field for field, so that a
change to the header cannot go unnoticed by the binding. Needs the source
tree (skips for an installed package without the header)."""

import os
import re

import pytest

from warpgen import _lib

HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "include",
                      "warpgen.h")


def header_fields(struct):
    """The field names of `typedef struct NAME { ... } NAME;`."""
    text = open(HEADER).read()
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (struct, struct),
                     text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    return [re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", decl.strip()).group(1)
            for decl in body.split(";") if decl.strip()]


@pytest.mark.skipif(not os.path.exists(HEADER), reason="no source tree")
@pytest.mark.parametrize("struct", ["wg_spec", "wg_options",
                                    "wg_cache_stats", "wg_device_info",
                                    "wg_launch_config", "wg_reduction",
                                    "wg_accumulator_field",
                                    "wg_accumulator_layout"])
def test_struct_fields_match_the_header(struct):
    ours = [name for name, _ in getattr(_lib, struct)._fields_]
    assert ours == header_fields(struct)


@pytest.mark.skipif(not os.path.exists(HEADER), reason="no source tree")
def test_scalar_union_matches_the_header():
    text = open(HEADER).read()
    body = re.search(r"typedef union wg_scalar \{(.*?)\} wg_scalar;", text,
                     re.S).group(1)
    names = [d.split()[-1] for d in body.split(";") if d.strip()]
    assert [n for n, _ in _lib.wg_scalar._fields_] == names


@pytest.mark.skipif(not os.path.exists(HEADER), reason="no source tree")
def test_every_declared_function_is_bound():
    text = open(HEADER).read()
    declared = set(re.findall(r"WG_API [^;(]*?\b(wg_\w+)\(", text))
    assert declared == set(_lib._SIGNATURES)
