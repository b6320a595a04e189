"""The floating-point state of the calling thread around a comparison with the official code.

Each family's import_official turns flush-to-zero and denormals-are-zero on (torch.set_flush_denormal:
random weights produce denormals, on which torch runs up to 20x slower). That is processor state of the
thread, so without care a `verify` called from a user's program would leave the program's numpy and torch
arithmetic flushing denormals afterwards. `keeps_fp_state` puts the state back when the call returns."""

from __future__ import annotations

import functools
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)


def flushes_denormals() -> bool | None:
    """Whether the thread flushes denormals now (None: torch is not importable, nothing to restore)."""
    try:
        import torch
    except ImportError:
        return None
    # a denormal operand reads as 0 under denormals-are-zero, a denormal result is 0 under flush-to-zero
    return float((torch.tensor([1e-40], dtype=torch.float32) * 2).item()) == 0.0


def keeps_fp_state(fn: F) -> F:
    """fn, with the thread's flush-to-zero state as it was before the call restored after it."""
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        before = flushes_denormals()
        try:
            return fn(*args, **kw)
        finally:
            if before is not None:
                import torch

                torch.set_flush_denormal(before)
    return wrapper  # type: ignore[return-value]
