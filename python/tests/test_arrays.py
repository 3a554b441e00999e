"""Arrays warpgen must refuse cleanly, and the layout rules, with stand-in
objects: no GPU needed."""

import pytest

import warpgen
from warpgen import arrays


class FakeCudaArray:
    """An object with a CUDA Array Interface and a pointer no kernel may
    touch: every test here fails before a launch."""

    def __init__(self, typestr="<f4", shape=(10,), strides=None):
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (0x7f0000000000, False),
            "strides": strides, "version": 3, "stream": 1}


def test_host_arrays_are_refused():
    np = pytest.importorskip("numpy")
    with pytest.raises(warpgen.ArrayError, match="host array"):
        warpgen.reduce(np.ones(4, np.float32))
    with pytest.raises(warpgen.ArrayError, match="host array"):
        warpgen.warp_scan(np.ones(4, np.float32))


def test_other_objects_are_refused():
    with pytest.raises(warpgen.ArrayError, match="not a GPU array"):
        warpgen.reduce([1.0, 2.0])
    with pytest.raises(warpgen.ArrayError, match="not a GPU array"):
        warpgen.reduce_rows(object())


@pytest.mark.parametrize("typestr", ["|b1", "|i1", "|u1", "<i2", "<c8",
                                     "<c16"])
def test_unsupported_dtypes(typestr):
    with pytest.raises(warpgen.DTypeError, match="no warpgen type"):
        warpgen.reduce(FakeCudaArray(typestr))
    with pytest.raises(TypeError):
        warpgen.warp_reduce(FakeCudaArray(typestr))


def test_unknown_operator():
    with pytest.raises(warpgen.SpecError, match="unknown operator"):
        warpgen.reduce(FakeCudaArray(), "median")


def test_whole_array_layouts_that_go_by_dims():
    # reduce(dim=None) reads memory in its own order only where that gives
    # the row-major answer; the rest goes over every dim (axis.py).
    from warpgen.arrays import input_views
    from warpgen.ops import _whole_as_dims as by_dims

    def _whole_as_dims(x, *args):
        return by_dims(input_views("test", x), *args)
    none = (None, None, None, None)
    c = FakeCudaArray(shape=(4, 8))
    t = FakeCudaArray(shape=(4, 8), strides=(4, 16))  # a transpose: dense
    gappy = FakeCudaArray(shape=(4, 4), strides=(32, 4))  # a column slice
    assert _whole_as_dims(c, "argmax", none, {}, False) is None
    assert _whole_as_dims(t, "sum", none, {}, False) is None
    assert _whole_as_dims(t, "argmax", none, {}, False) == (0, 1)
    assert _whole_as_dims(t, None, ("x * i", None, None, None), {},
                          False) == (0, 1)
    assert _whole_as_dims(t, "sum", none, {"p0": 1.0}, False) == (0, 1)
    assert _whole_as_dims((c, t), None, ("x * y", None, None, None), {},
                          False) == (0, 1)
    assert _whole_as_dims(gappy, "sum", none, {}, False) == (0, 1)
    assert _whole_as_dims(c, "sum", none, {}, True) == (0, 1)
    assert _whole_as_dims(FakeCudaArray(shape=()), "sum", none, {}, True) == 0


def test_layouts_the_kernels_cannot_read():
    transposed = FakeCudaArray(shape=(4, 8), strides=(4, 16))
    with pytest.raises(warpgen.ArrayError, match="C-contiguous"):
        warpgen.warp_scan(transposed)
    with pytest.raises(warpgen.ArrayError, match="column"):
        warpgen.reduce_rows(transposed)
    with pytest.raises(warpgen.ArrayError, match="2-D"):
        warpgen.reduce_rows(FakeCudaArray(shape=(2, 3, 4)))


def test_empty_arrays_with_odd_strides_are_fine(has_driver):
    """torch gives empty tensors strides like (0, 0): no layout error."""
    if has_driver:
        pytest.skip("a device is present: the fake pointer must not launch")
    for call in (warpgen.reduce_rows, warpgen.warp_scan, warpgen.reduce):
        with pytest.raises(warpgen.NoDeviceError):  # past the checks
            call(FakeCudaArray(shape=(0, 5), strides=(0, 0)))


def test_warp_spec_must_match_the_array():
    with pytest.raises(warpgen.DTypeError, match="f64"):
        warpgen.warp(FakeCudaArray("<f4"), "scan f64 sum")
    with pytest.raises(warpgen.SpecError, match="not a warp primitive"):
        warpgen.warp(FakeCudaArray("<f4"), "reduce-array f32 sum")


def test_a_valid_array_without_a_device(has_driver):
    if has_driver:
        pytest.skip("a device is present: the fake pointer must not launch")
    with pytest.raises(warpgen.NoDeviceError):
        warpgen.reduce(FakeCudaArray())
    with pytest.raises(warpgen.NoDeviceError):
        warpgen.warp_allreduce(FakeCudaArray("<u8"), "xor", width=8)
    # The failure left nothing behind.
    assert ".entry" in warpgen.ptx("reduce f32 sum arch=sm_90")


def test_layout_rules():
    assert arrays.is_c_contiguous((3, 4), None)
    assert arrays.is_c_contiguous((3, 4), (4, 1))
    assert arrays.is_c_contiguous((3, 1), (1, 99))
    assert arrays.is_c_contiguous((0, 4), (1, 1))
    assert arrays.is_c_contiguous((5, 0), (0, 0))  # empty: any strides
    assert not arrays.is_c_contiguous((3, 4), (1, 3))
    assert arrays.is_dense((3, 4), (1, 3))  # transposed, no gaps
    assert arrays.is_dense((2, 3, 4), (12, 1, 3))
    assert not arrays.is_dense((3, 4), (8, 1))
    assert not arrays.is_dense((3, 4), (0, 1))  # broadcast: repeats


def test_dlpack_host_array_is_refused():
    np = pytest.importorskip("numpy")
    a = np.ones(5, np.float32)
    if not hasattr(a, "__dlpack__"):
        pytest.skip("numpy without DLPack")

    class OnlyDLPack:
        def __dlpack__(self, stream=None):
            return a.__dlpack__()

        def __dlpack_device__(self):
            return a.__dlpack_device__()

    with pytest.raises(warpgen.ArrayError, match="host array"):
        warpgen.reduce(OnlyDLPack())


def test_several_inputs_must_agree():
    """Tuples of inputs: 1 to 4 arrays of one shape on one device, checked
    before anything compiles or launches (arrays.input_views)."""
    a, b = FakeCudaArray(shape=(10,)), FakeCudaArray(shape=(11,))
    calls = [
        lambda x: warpgen.reduce(x, "sum", map="x * y"),
        lambda x: warpgen.reduce(x, "sum", dim=0, map="x * y"),
        lambda x: warpgen.reduce_rows(x, "sum", map="x * y"),
        lambda x: warpgen.compact(x, "x > y"),
        lambda x: warpgen.warp_reduce(x, "sum", map="x * y"),
    ]
    for call in calls:
        with pytest.raises(warpgen.ArrayError, match="differ in shape"):
            call((a, b))
        with pytest.raises(warpgen.ArrayError, match="1 to 4 input arrays, not 5"):
            call((a,) * 5)
        with pytest.raises(warpgen.ArrayError, match="1 to 4 input arrays, not 0"):
            call(())


class Index:
    """An integer that is not an int: NumPy's int64, a 0-d integer tensor."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


def test_dims_take_any_integer_but_not_bool():
    from warpgen.axis import normalize_dim, normalize_dims
    assert normalize_dims(Index(1), 3) == (1,)
    assert normalize_dims((Index(0), -1), 3) == (0, 2)
    assert normalize_dims([2, 0], 3) == (0, 2)
    assert normalize_dim(Index(-1), 2, "softmax") == 1
    for bad in (True, (0, True), 1.0, "x", (0, 0), 3, -4, ()):
        with pytest.raises(warpgen.ArrayError, match="dim"):
            normalize_dims(bad, 3)
    for bad in (True, (0,), 1.5, None):
        with pytest.raises(warpgen.ArrayError, match="dim must be an int"):
            normalize_dim(bad, 3, "softmax")


def test_counts_are_integers():
    """bins= and minlength= as PyTorch takes them: integers (np.int64
    too), never a float truncated or a bool; checked before any GPU use."""
    for bad in (2.5, True, "256", None, 0, -1):
        with pytest.raises(warpgen.ArrayError, match="bins must be an integer"):
            warpgen.histogram(FakeCudaArray(), bad)
    for bad in (2.5, True, "3", -1):
        with pytest.raises(warpgen.ArrayError, match="minlength must be"):
            warpgen.bincount(FakeCudaArray("<i4"), bad)
    for bad in (5, (1.0,), (0, 1, 2), ("a", "b")):
        with pytest.raises(warpgen.ArrayError, match="range must be two numbers"):
            warpgen.histogram(FakeCudaArray(), 10, bad)


def test_scalars_are_numbers():
    """eps= and correction= must be real numbers (NumPy's too), refused
    with ArrayError, not a ValueError from float()."""
    for bad in ("1e-5", None, True, object()):
        with pytest.raises(warpgen.ArrayError, match="eps must be a number"):
            warpgen.layer_norm(FakeCudaArray(shape=(2, 4)), eps=bad)
    for bad in ("1", True):
        with pytest.raises(warpgen.ArrayError, match="correction must be a number"):
            warpgen.reduce(FakeCudaArray(), "var", correction=bad)
