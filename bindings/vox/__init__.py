"""vox: a native text-to-speech engine.

    import vox
    vox.inspect("model.tmod")          # what a model file holds, without loading it

The engine itself (vox.Engine) runs on the C core; the numpy golden implementation every native
stage is checked against lives in vox.reference, the comparison with the official code in vox.verify.
"""

from __future__ import annotations

from .engine import Chunk, Engine, Resources, Session, Voice, devices
from .errors import (Cancelled, DeviceError, FormatError, InternalError, InvalidArgument, IOError, LimitExceeded,
                     NotFound, OutOfMemory, SessionLimit, Unsupported, VoxError)
from .inspection import inspect

__version__ = "0.1.0"

__all__ = ["Engine", "Voice", "Session", "Chunk", "Resources", "devices", "inspect", "VoxError", "InvalidArgument",
           "IOError", "FormatError", "Unsupported", "OutOfMemory", "NotFound", "InternalError", "Cancelled",
           "LimitExceeded", "DeviceError", "SessionLimit", "native_version", "philox_uniform", "__version__"]


def native_version() -> str:
    """Version of the loaded C library."""
    from ._native import lib, string

    return string(lib.vox_version())


def philox_uniform(seed: int, frame: int, codebook: int) -> float:
    """The uniform in [0, 1) that the engine samples with at (seed, frame, codebook)."""
    from ._native import lib

    return float(lib.vox_philox_uniform(seed & 0xFFFFFFFFFFFFFFFF, frame, codebook))
