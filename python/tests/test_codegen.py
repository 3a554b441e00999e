"""Source, PTX, cubin and SASS from Python. NVRTC only: no GPU needed."""

import os

import pytest

import warpgen

SPEC = "reduce f32 sum width=16 variant=xor arch=sm_90"


def test_source_names_the_kernel():
    text = warpgen.source(SPEC)
    assert "wg_reduce_f32_sum_w16_xor" in text
    assert "__shfl_xor_sync" in text
    assert warpgen.source(warpgen.Spec(SPEC)) == text


def test_ptx():
    text = warpgen.ptx(SPEC)
    assert ".target sm_90" in text
    assert ".entry wg_reduce_f32_sum_w16_xor" in text
    assert "shfl.sync.bfly" in text


def test_cubin_is_elf():
    image = warpgen.cubin(SPEC)
    assert isinstance(image, bytes)
    assert image[:4] == b"\x7fELF"
    assert len(image) > 1000


def test_every_array_reduction_has_source():
    for spec in warpgen.spec_list(90):
        if spec.primitive in ("reduce-array", "reduce-rows"):
            assert "__global__" in warpgen.source(spec)


def test_sass_or_a_clear_error():
    try:
        text = warpgen.sass(SPEC)
    except warpgen.NotFoundError as e:
        assert "nvdisasm" in str(e)
        pytest.skip("no disassembler here")
    assert "SHFL.BFLY" in text


def test_sass_without_tools_says_how(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    for name in ("CUDA_PATH", "CUDA_HOME", "WARPGEN_NVDISASM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WARPGEN_COMMAND", "/nonexistent")
    monkeypatch.setattr(warpgen.tools, "find_disassembler", lambda: None)
    monkeypatch.setattr(warpgen.tools, "find_command", lambda: None)
    with pytest.raises(warpgen.NotFoundError, match="nvdisasm"):
        warpgen.sass(SPEC)


def test_compile_error_carries_a_message(tmp_path):
    # A template folder with a kernel that does not compile.
    source = os.path.join(os.path.dirname(warpgen.__file__), "..", "..",
                          "templates")
    if not os.path.isdir(source):
        pytest.skip("templates/ not beside the package (installed copy)")
    for name in os.listdir(source):
        text = open(os.path.join(source, name)).read()
        if name == "warp_vec_reduce.cu":
            text += "\nthis is not CUDA;\n"
        (tmp_path / name).write_text(text)
    with warpgen.Context(template_dir=tmp_path, disk_cache=False) as ctx:
        with pytest.raises(warpgen.CompileError) as info:
            ctx.ptx(SPEC)
        assert info.value.code == "WG_ECOMPILE"
        assert "error" in str(info.value)
        # The failure does not poison the context.
        assert ".entry" in ctx.ptx("scan f32 sum width=8 arch=sm_90")


def test_nvrtc_facts():
    ctx = warpgen.default_context(None)
    major, minor = ctx.nvrtc_version()
    assert major >= 11
    assert 90 in ctx.supported_archs()
