"""Exceptions raised by vox: one class per status of the C ABI (vox.h, vox_status), each with the
library's message, so a caller (a server, a CLI) can act on the kind of failure:

    ==========================  =================  ===============================================
    C status                    exception          also a
    ==========================  =================  ===============================================
    VOX_ERR_INVALID_ARGUMENT    InvalidArgument    ValueError (bad text, option, value, handle)
    VOX_ERR_IO                  IOError            OSError (a file cannot be opened or read)
    VOX_ERR_FORMAT              FormatError        ValueError (a corrupt or foreign file)
    VOX_ERR_UNSUPPORTED         Unsupported        (valid, but this model or build cannot do it)
    VOX_ERR_OUT_OF_MEMORY       OutOfMemory        MemoryError (RAM or VRAM)
    VOX_ERR_NOT_FOUND           NotFound           KeyError (a speaker, tensor, entry, output)
    VOX_ERR_INTERNAL            InternalError      (a bug: please report it)
    VOX_ERR_CANCELLED           Cancelled          (cancel() was called, or the session closed)
    VOX_ERR_LIMIT               LimitExceeded      (frames, phonemes, input length)
    VOX_ERR_DEVICE              DeviceError        (a device does not exist, cannot be used, failed)
    VOX_ERR_SESSION_LIMIT       SessionLimit       (max_sessions sessions already run: retry later)
    ==========================  =================  ===============================================

Every one of them is a VoxError.
"""

from __future__ import annotations


class VoxError(Exception):
    """Base class of every vox error."""

    status: int | None = None   # the vox_status it came from (None for errors raised in Python)


class InvalidArgument(VoxError, ValueError):
    """An argument is invalid: text, an option out of range, an unknown name, a wrong shape."""


class IOError(VoxError, OSError):  # noqa: A001 - the C ABI's name; vox.IOError, not the builtin
    """A file could not be opened, read, mapped or written."""


class FormatError(VoxError, ValueError):
    """A model or voice file is truncated, corrupt, or of a wrong magic, version or layout."""


class Unsupported(VoxError):
    """Valid input this model or this build cannot handle (e.g. cloning on a model without an encoder)."""


class OutOfMemory(VoxError, MemoryError):
    """Memory (RAM or video memory) ran out."""


class NotFound(VoxError, KeyError):
    """A named thing (tensor, speaker, language, entry, output) does not exist."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class InternalError(VoxError):
    """Something vox did not expect happened (a bug)."""


class Cancelled(VoxError):
    """The session was cancelled (Session.cancel(), or closed from another thread)."""


class LimitExceeded(VoxError):
    """A size limit was reached (frames, phonemes, an input's length)."""


class DeviceError(VoxError):
    """A requested compute device does not exist, cannot be used, or failed."""


class SessionLimit(VoxError):
    """The engine already runs its max_sessions sessions; retry when one ends."""


_BY_NAME = {
    "VOX_ERR_INVALID_ARGUMENT": InvalidArgument,
    "VOX_ERR_IO": IOError,
    "VOX_ERR_FORMAT": FormatError,
    "VOX_ERR_UNSUPPORTED": Unsupported,
    "VOX_ERR_OUT_OF_MEMORY": OutOfMemory,
    "VOX_ERR_NOT_FOUND": NotFound,
    "VOX_ERR_INTERNAL": InternalError,
    "VOX_ERR_CANCELLED": Cancelled,
    "VOX_ERR_LIMIT": LimitExceeded,
    "VOX_ERR_DEVICE": DeviceError,
    "VOX_ERR_SESSION_LIMIT": SessionLimit,
}


def error_class(status: int) -> type[VoxError]:
    """The exception class of a vox_status code (VoxError for a code this version does not know)."""
    from ._native import lib

    for name, cls in _BY_NAME.items():
        if status == getattr(lib, name):
            return cls
    return VoxError


def raise_for_status(status: int, message: str) -> None:
    """Raise the exception of a vox_status code from the C ABI (nothing for VOX_OK)."""
    from ._native import lib

    if status == lib.VOX_OK:
        return
    err = error_class(status)(message or f"vox error {status}")
    err.status = status
    raise err


__all__ = ["VoxError", "InvalidArgument", "IOError", "FormatError", "Unsupported", "OutOfMemory", "NotFound",
           "InternalError", "Cancelled", "LimitExceeded", "DeviceError", "SessionLimit", "raise_for_status",
           "error_class"]
