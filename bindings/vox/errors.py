"""Exceptions raised by vox. Every native failure becomes one of these, with the library's message."""

from __future__ import annotations


class VoxError(Exception):
    """Base class of every vox error."""


class FormatError(VoxError, ValueError):
    """A model or voice file is truncated, corrupt, or of a wrong magic, version or layout."""


class OutOfMemory(VoxError, MemoryError):
    """A memory limit would be exceeded (RAM, VRAM, or the session limit)."""


class DeviceError(VoxError):
    """A requested compute device does not exist or cannot be used."""


class NotFound(VoxError, KeyError):
    """A named thing (tensor, speaker, language, device) does not exist."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def raise_for_status(status: int, message: str) -> None:
    """Map a vox_status code from the C ABI to the matching exception."""
    from ._native import lib

    if status == lib.VOX_OK:
        return
    cls = {
        lib.VOX_ERR_FORMAT: FormatError,
        lib.VOX_ERR_OUT_OF_MEMORY: OutOfMemory,
        lib.VOX_ERR_NOT_FOUND: NotFound,
        lib.VOX_ERR_IO: VoxError,
        lib.VOX_ERR_INVALID_ARGUMENT: VoxError,
        lib.VOX_ERR_LIMIT: OutOfMemory,  # the session limit counts as memory (the seed's contract)
    }.get(status, VoxError)
    raise cls(message or f"vox error {status}")
