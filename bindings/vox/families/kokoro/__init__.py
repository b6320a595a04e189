"""The Kokoro-82M family (v1.0, the built-in default model): its options, voices (style packs) and
the hooks the generic layers call (vox.families.base.Family)."""

from __future__ import annotations

from .family import FAMILY, Options, trace

__all__ = ["FAMILY", "Options", "trace"]
