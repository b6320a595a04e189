"""The F5-TTS family (DiT + conditional flow matching + Vocos): its .tmod layout, conversion from the
official checkpoints and the pinned frontend sources (the numpy reference is vox.reference.f5)."""

from __future__ import annotations

from .family import FAMILY

__all__ = ["FAMILY"]
