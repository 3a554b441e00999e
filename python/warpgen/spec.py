"""Spec: which kernel to make, as a Python value.

A Spec wraps the C wg_spec. It is made from the text form
("reduce f32 sum width=16 variant=xor") and/or keyword fields, is validated
by the library, is immutable, and compares and hashes by its canonical text,
so it can key a dict.
"""

import ctypes

from . import _lib
from ._lib import lib
from .arrays import integer
from .errors import SpecError

_FIELDS = ("primitive", "type", "op", "width", "variant", "arch", "lane",
           "cols", "layout")
# Fields that hold an enum, and the names the library gives its values.
_ENUMS = {
    "primitive": _lib.PRIMITIVES,
    "type": _lib.TYPES,
    "op": _lib.OPERATORS,
    "variant": _lib.VARIANTS,
    "layout": _lib.LAYOUTS,
}


def _enum_value(field, value):
    names = _ENUMS[field]
    if value is None and field == "op":
        value = "none"
    try:
        return names.index(str(value))
    except ValueError:
        raise SpecError(f"{field}: unknown value {value!r}; one of: " +
                        ", ".join(names), _lib.WG_ESPEC) from None


def _int_field(field, value):
    """value for the integer field `field` of wg_spec: an integer that fits
    the field's C type (ctypes would keep only its low bits: width=2**32 + 16
    would have been width 16), else SpecError."""
    ctype = dict(_lib.wg_spec._fields_)[field]
    bits = 8 * ctypes.sizeof(ctype)
    signed = ctype(-1).value < 0
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    v = integer(value)
    if v is None or not lo <= v <= hi:
        raise SpecError(f"{field}: {value!r} is not an integer from {lo} to {hi}",
                        _lib.WG_ESPEC)
    return v


def _arch_value(value):
    """arch as an int: 90, "sm_90", "90", or 0/None for the device's."""
    if value is None:
        return 0
    if isinstance(value, str):
        text = value[3:] if value.startswith("sm_") else value
        if not text.isdigit():
            raise SpecError(f"arch: {value!r} is not like 'sm_90'",
                            _lib.WG_ESPEC)
        return _int_field("arch", int(text))
    return _int_field("arch", value)


def _format(c):
    buf = ctypes.create_string_buffer(160)
    needed = lib.wg_spec_format(buf, len(buf), ctypes.byref(c))
    if needed < 0:
        raise SpecError("spec has a field out of range", needed)
    if needed >= len(buf):
        buf = ctypes.create_string_buffer(needed + 1)
        lib.wg_spec_format(buf, len(buf), ctypes.byref(c))
    return buf.value.decode()


class Spec:
    """A kernel description: Spec("reduce f32 sum width=16 variant=xor").

    Keyword fields override the text (or the defaults, "reduce f32 sum
    width=32 variant=auto", without text): Spec("scan f64 sum", width=8).
    Enum fields are names (primitive, type, op, variant, layout); width, lane and
    cols are ints; arch is an int (90 for sm_90, 0 for the device's).
    Invalid specs raise SpecError with the library's explanation.
    """

    __slots__ = ("_c", "_text", "__weakref__")

    def __init__(self, text=None, *, context=None, **fields):
        from .context import default_context
        ctx = context if context is not None else default_context(None)
        if isinstance(text, Spec):
            c = copy_spec(text._c)
        elif text is None:
            c = _lib.wg_spec()
            lib.wg_spec_init(c)
        else:
            c = ctx.parse_spec(text)
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise TypeError("Spec: unknown field(s) " +
                            ", ".join(sorted(unknown)) + "; fields: " +
                            ", ".join(_FIELDS))
        for field, value in fields.items():
            if field in _ENUMS:
                setattr(c, field, _enum_value(field, value))
            elif field == "arch":
                c.arch = _arch_value(value)
            else:
                setattr(c, field, _int_field(field, value))
        if fields:
            ctx.validate_spec(c)
        self._c = c
        self._text = _format(c)

    @classmethod
    def _from_c(cls, c):
        self = cls.__new__(cls)
        self._c = c
        self._text = _format(c)
        return self

    def replace(self, **fields):
        """A new Spec with some fields changed: spec.replace(width=8)."""
        return Spec(self, **fields)

    # --- fields -----------------------------------------------------------

    @property
    def primitive(self):
        return _lib.PRIMITIVES[self._c.primitive]

    @property
    def type(self):
        return _lib.TYPES[self._c.type]

    @property
    def op(self):
        """The operator's name, or None for broadcast and the votes."""
        name = _lib.OPERATORS[self._c.op]
        return None if name == "none" else name

    @property
    def width(self):
        return self._c.width

    @property
    def variant(self):
        return _lib.VARIANTS[self._c.variant]

    @property
    def arch(self):
        """90 for sm_90; 0 when the device (else sm_90) decides."""
        return self._c.arch

    @property
    def lane(self):
        return self._c.lane

    @property
    def cols(self):
        return self._c.cols

    @property
    def layout(self):
        """"vec" (16 bytes a lane, the default) or "lane" (one element a
        lane); see wg_layout in warpgen.h."""
        return _lib.LAYOUTS[self._c.layout]

    @property
    def resolved_variant(self):
        """The concrete variant `auto` stands for in this spec."""
        return _lib.VARIANTS[lib.wg_spec_resolve_variant(
            ctypes.byref(self._c))]

    @property
    def kernel_name(self):
        """The kernel's entry point, e.g. wg_reduce_f32_sum_w16_xor."""
        buf = ctypes.create_string_buffer(160)
        needed = lib.wg_kernel_name(buf, len(buf), ctypes.byref(self._c))
        if needed < 0:
            raise SpecError("spec has a field out of range", needed)
        return buf.value.decode()

    @property
    def element_size(self):
        return _lib.TYPE_SIZES[self.type]

    def as_dict(self):
        return {field: getattr(self, field) for field in _FIELDS}

    # --- value behaviour --------------------------------------------------

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"Spec({self._text!r})"

    def __eq__(self, other):
        if isinstance(other, Spec):
            return self._text == other._text
        return NotImplemented

    def __hash__(self):
        return hash(self._text)

    def __setattr__(self, name, value):
        if name in _FIELDS:
            raise AttributeError(
                f"Spec is immutable; use spec.replace({name}=...)")
        object.__setattr__(self, name, value)

    def __reduce__(self):
        return (Spec, (self._text,))


def copy_spec(c):
    """A copy of a C wg_spec (C arrays hand out views, not values)."""
    out = _lib.wg_spec()
    ctypes.memmove(ctypes.byref(out), ctypes.byref(c), ctypes.sizeof(out))
    return out
