"""The Kokoro family object: typed options (mirroring core/src/kokoro/family.c's table), the default
voice, and the verification entry's helper."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...errors import InvalidArgument
from ..base import Family, OptionsBase, opt

if TYPE_CHECKING:
    from ...engine import Engine, Voice


@dataclass
class Options(OptionsBase):
    """Kokoro synthesis options; None: the defaults (speed 1, pause 200 ms, text in, noise on)."""

    speed: float | None = opt("speaking rate: the predicted durations are divided by it", 0.25, 4)
    pause_ms: int | None = opt("silence between sentences after each one's own silence is cut", 0, 10000)
    phonemes: bool | None = opt("the text is already phonemes in the model's symbol set")
    pronunciations: dict[str, str] | None = opt("word -> phonemes, applied before the frontend's readings")
    noise: bool | None = opt("the harmonic source's randomness (False zeroes it, for comparisons)")


class KokoroFamily(Family):
    name = "kokoro"
    title = "Kokoro"
    Options = Options

    def default_voice(self, engine: "Engine") -> "Voice":
        default = engine.info.get("default_speaker") or (engine.speakers[0] if engine.speakers else None)
        if not default:
            raise InvalidArgument("this Kokoro model has no built-in voices: give a voice (.tvoice)")
        return engine.speaker_voice(default)


FAMILY = KokoroFamily()


def trace(engine: "Engine", ids, style: np.ndarray, tap: str, *, speed: float = 1.0, seed: int = 0,
          noise: bool = False, voice: "Voice | None" = None) -> np.ndarray:
    """One span of model input ids ([0] + phoneme ids + [0]) with a style row [256] through the native
    model; the intermediate `tap` as a time-major array [rows, cols] (vox_engine_info "entries")."""
    st = np.ascontiguousarray(style, dtype=np.float32).reshape(-1)
    if st.size != 256:
        raise InvalidArgument(f"style must be a voice pack row of 256 values, got {st.size}")
    out = engine.run("forward", voice or engine.default_voice(), inputs={"ids": np.asarray(ids, np.int32), "style": st},
                     taps=tap, seed=seed, speed=speed, noise=noise)
    if tap not in out:
        from ...errors import NotFound

        raise NotFound(f"the forward pass has no intermediate named {tap!r}")
    return out[tap]
