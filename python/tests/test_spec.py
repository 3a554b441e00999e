"""Specs from Python: parsing, canonical text, fields, errors, value
behaviour. No GPU needed."""

import pickle

import pytest

import warpgen


def test_text_round_trip():
    spec = warpgen.Spec("reduce f32 sum width=16 variant=xor arch=sm_90")
    assert str(spec) == "reduce f32 sum width=16 variant=xor arch=sm_90"
    assert warpgen.Spec(str(spec)) == spec


def test_defaults_fill_missing_keys():
    assert str(warpgen.Spec("scan f64 sum")) == \
        "scan f64 sum width=32 variant=auto"
    assert str(warpgen.Spec()) == "reduce f32 sum width=32 variant=auto"


def test_attributes():
    spec = warpgen.Spec("broadcast u64 width=8 variant=idx lane=5 arch=sm_90")
    assert spec.primitive == "broadcast"
    assert spec.type == "u64"
    assert spec.op is None
    assert spec.width == 8
    assert spec.variant == "idx"
    assert spec.arch == 90
    assert spec.lane == 5
    assert spec.cols == 0
    assert spec.element_size == 8
    assert spec.as_dict()["lane"] == 5


def test_fields_as_keywords():
    spec = warpgen.Spec("reduce i32 sum", width=4, variant="redux",
                        arch="sm_90")
    assert str(spec) == "reduce i32 sum width=4 variant=redux arch=sm_90"
    assert warpgen.Spec(type="f16", op="max").type == "f16"
    assert spec.replace(width=8).width == 8
    assert spec.width == 4  # replace made a new one


def test_resolved_variant_and_kernel_name():
    spec = warpgen.Spec("reduce f32 sum width=16 variant=xor")
    assert spec.kernel_name == "wg_reduce_f32_sum_w16_xor_vec"
    assert spec.layout == "vec"
    lane = spec.replace(layout="lane")
    assert str(lane) == "reduce f32 sum width=16 variant=xor layout=lane"
    assert lane.kernel_name == "wg_reduce_f32_sum_w16_xor"
    assert warpgen.Spec(str(lane)) == lane
    assert spec.resolved_variant == "xor"
    assert warpgen.Spec("reduce f32 sum").resolved_variant != "auto"


def test_equality_hash_pickle():
    a = warpgen.Spec("allreduce f32 max width=16")
    b = warpgen.Spec("allreduce   f32 max   width=16 variant=auto")
    assert a == b and hash(a) == hash(b)
    assert len({a, b, warpgen.Spec("allreduce f32 min width=16")}) == 2
    assert a != "allreduce f32 max width=16 variant=auto"
    assert pickle.loads(pickle.dumps(a)) == a
    assert repr(a) == "Spec('allreduce f32 max width=16 variant=auto')"


def test_immutable():
    spec = warpgen.Spec("reduce f32 sum")
    with pytest.raises(AttributeError):
        spec.width = 8


@pytest.mark.parametrize("text, words", [
    ("reduce f32 xor", "integer"),
    ("reduce f32 sum width=3", "width"),
    ("reduce f33 sum", "f33"),
    ("frobnicate f32 sum", "frobnicate"),
    ("broadcast f32 width=8 lane=9", "lane"),
    ("reduce f32 sum variant=sideways", "sideways"),
    ("", ""),
])
def test_bad_specs_raise_spec_error(text, words):
    with pytest.raises(warpgen.SpecError) as info:
        warpgen.Spec(text)
    assert info.value.status == -2
    assert info.value.code == "WG_ESPEC"
    assert words in str(info.value)
    assert isinstance(info.value, ValueError)


def test_bad_keyword_fields():
    with pytest.raises(warpgen.SpecError):
        warpgen.Spec(type="f128")
    with pytest.raises(warpgen.SpecError, match="width"):
        warpgen.Spec(width=5)
    with pytest.raises(TypeError, match="colour"):
        warpgen.Spec(colour="red")
    # ctypes keeps only the low bits of a wider integer: width=2**32 + 16
    # would have been a valid width 16
    for field, value in (("width", 2**32 + 16), ("width", 16.0),
                         ("lane", True), ("arch", 2**32 + 90),
                         ("arch", "sm_4294967386"), ("cols", 2**64)):
        with pytest.raises(warpgen.SpecError, match=field):
            warpgen.Spec("reduce f32 sum", **{field: value})


def test_spec_list():
    specs = warpgen.spec_list(90)
    assert len(specs) > 100
    # Warp primitives name their shuffle; the other families have none.
    warp = {"reduce", "allreduce", "scan", "exscan", "broadcast", "ballot",
            "any", "all", "match"}
    assert all(s.variant != "auto" for s in specs if s.primitive in warp)
    assert {s.primitive for s in specs} >= {"reduce", "scan", "match",
                                            "reduce-array", "reduce-rows"}
    assert all(s.arch == 90 for s in specs)


def test_names():
    assert "reduce-rows" in warpgen.PRIMITIVES
    assert warpgen.TYPES == ("f16", "bf16", "f32", "f64", "i32", "u32",
                             "i64", "u64")
    assert "none" not in warpgen.OPERATORS
