"""warpgen's exceptions: one class per C status code, all under Error.

A failed C call becomes the class for its status, carrying the library's
message (wg_errmsg). Problems found in Python before any C call (an array of
an unsupported dtype, a host array, a wrong device) raise ArrayError or
DTypeError, which are Errors too, so `except warpgen.Error` catches all.
"""

from . import _lib


class Error(Exception):
    """A warpgen failure. `status` is the C status code (a negative WG_E*
    value), `code` its name, and str() the library's message."""

    def __init__(self, message, status=_lib.WG_EINVAL):
        super().__init__(message)
        self.status = status
        self.message = message

    @property
    def code(self):
        return _CODE_NAMES.get(self.status, str(self.status))


class InvalidArgumentError(Error, ValueError):
    """WG_EINVAL: a bad argument."""


class SpecError(Error, ValueError):
    """WG_ESPEC: a spec that does not parse or names no kernel warpgen makes."""


class OutOfMemoryError(Error, MemoryError):
    """WG_ENOMEM: out of host memory."""


class TemplateError(Error):
    """WG_ETEMPLATE: a template is missing or malformed."""


class CompileError(Error):
    """WG_ECOMPILE: NVRTC failed; the message holds its log."""


class NoDeviceError(Error):
    """WG_ENODRIVER or WG_ENODEVICE: no CUDA driver, or no usable device."""


class CudaError(Error):
    """WG_ECUDA: a CUDA driver call failed."""


class ArchError(Error):
    """WG_EARCH: the spec's architecture does not match the device."""


class AlignmentError(Error, ValueError):
    """WG_EALIGN: a device pointer is not aligned to its element."""


class RangeError(Error, OverflowError):
    """WG_ERANGE: a count or size is more than the kernel can take."""


class FileError(Error):
    """WG_EIO: a file could not be read or written."""


class NotFoundError(Error):
    """WG_ENOTFOUND: a named tool or item does not exist."""


class LaunchError(Error):
    """WG_ELAUNCH: a kernel faulted; the CUDA context is now unusable."""


class ArrayError(Error, ValueError):
    """An array warpgen cannot work on as given: on the host, on another
    device, with a layout the kernel cannot read, or a wrong `out=`."""


class DTypeError(ArrayError, TypeError):
    """An array whose element type has no warpgen type (bool, int8, complex),
    or that does not match the spec."""


_CLASSES = {
    _lib.WG_EINVAL: InvalidArgumentError,
    _lib.WG_ESPEC: SpecError,
    _lib.WG_ENOMEM: OutOfMemoryError,
    _lib.WG_ETEMPLATE: TemplateError,
    _lib.WG_ECOMPILE: CompileError,
    _lib.WG_ENODRIVER: NoDeviceError,
    _lib.WG_ENODEVICE: NoDeviceError,
    _lib.WG_ECUDA: CudaError,
    _lib.WG_EARCH: ArchError,
    _lib.WG_EALIGN: AlignmentError,
    _lib.WG_ERANGE: RangeError,
    _lib.WG_EIO: FileError,
    _lib.WG_ENOTFOUND: NotFoundError,
    _lib.WG_ELAUNCH: LaunchError,
}

_CODE_NAMES = {
    value: name for name, value in vars(_lib).items()
    if name.startswith("WG_E") and isinstance(value, int)
}


def error_for(status, message=None):
    """The exception for a C status, with `message` (else wg_strerror)."""
    if not message:
        message = _lib.strerror(status)
    return _CLASSES.get(status, Error)(message, status)
