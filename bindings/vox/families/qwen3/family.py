"""The Qwen3-TTS family object: typed options (mirroring core/src/qwen3/lm.c's table), voices, and the
verification entries' helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...errors import InvalidArgument
from ..base import Family, OptionsBase, opt

if TYPE_CHECKING:
    from ...engine import Engine, Voice

_BIG = 1 << 20


@dataclass
class Options(OptionsBase):
    """Qwen3-TTS synthesis options; None: the model's generation config, then the official defaults."""

    do_sample: bool | None = opt("sample the talker's codes (False: greedy)")
    temperature: float | None = opt("the talker's sampling temperature (> 0 when sampling)", 0, 100)
    top_k: int | None = opt("keep the k most likely talker codes (0: off)", 0, _BIG)
    top_p: float | None = opt("nucleus sampling of the talker (1: off)", 0, 1, lo_open=True)
    repetition_penalty: float | None = opt("penalty on talker codes already generated (1: off)", 0, 100,
                                           lo_open=True)
    subtalker_do_sample: bool | None = opt("sample the code predictor's codes (False: greedy)")
    subtalker_temperature: float | None = opt("the code predictor's temperature", 0, 100)
    subtalker_top_k: int | None = opt("top-k of the code predictor (0: off)", 0, _BIG)
    subtalker_top_p: float | None = opt("top-p of the code predictor (1: off)", 0, 1, lo_open=True)
    max_new_tokens: int | None = opt("talker steps at most (0: a guard that grows with the text)", 0, _BIG)
    decoder: str | None = opt("stream (seamless, carried state) or reference (the official chunked decode, one "
                              "chunk at the end)", choices=("stream", "reference"))
    decoder_context: int | None = opt("stream decoder warm-up: reference frames (-1: all)", -1, _BIG)
    chunk_frames: int | None = opt("codec frames per audio chunk (4 = 320 ms)", 1, _BIG)
    non_streaming_text: bool | None = opt("the whole text in the prompt (the official non_streaming_mode)")


@dataclass
class CloneOptions(OptionsBase):
    """Qwen3-TTS (Base) cloning options."""

    x_vector_only: bool | None = opt("the speaker embedding alone: no transcript, no reference codes")


class Qwen3Family(Family):
    name = "qwen3_tts"
    title = "Qwen3-TTS"
    Options = Options
    CloneOptions = CloneOptions

    def default_voice(self, engine: "Engine") -> "Voice":
        caps = engine.capabilities
        if caps.get("design"):
            return engine.design_voice("")
        if caps.get("speakers"):
            raise InvalidArgument(f"this model needs a speaker (one of: {', '.join(engine.speakers)})")
        raise InvalidArgument("this model needs a voice: clone one from a recording (vox voice create)")


FAMILY = Qwen3Family()


# ---------------------------------------------------------------------------- verification entries
def teacher_force(engine: "Engine", voice: "Voice", text: str, codes: np.ndarray, **kw) -> tuple[np.ndarray, np.ndarray]:
    """Raw talker logits [frames + 1, vocab] and predictor logits [frames, groups - 1, codebook] with the
    given codes [frames, groups] instead of sampling (keyword arguments: seed, language, options)."""
    out = engine.run("teacher_force", voice, inputs={"text": text, "codes": np.asarray(codes, np.int32)}, **kw)
    return out["talker_logits"], out["predictor_logits"]


def prompt(engine: "Engine", voice: "Voice", text: str, **kw) -> np.ndarray:
    """The talker's prefill input embeddings [rows, hidden] for the voice, text and options."""
    return engine.run("prompt", voice, inputs={"text": text}, **kw)["prompt"]


def decode(engine: "Engine", codes: np.ndarray, ref_codes: np.ndarray | None = None, mode: str = "stream",
           context: int = 50, chunk_frames: int = 4) -> np.ndarray:
    """Codes [frames, groups] after optional reference codes through the codec decoder: stream mode
    (warmed up with `context` reference frames, `chunk_frames` at a time) or reference mode (the
    official scheme, the reference part cut)."""
    if mode not in ("stream", "reference"):
        raise InvalidArgument(f"mode must be 'stream' or 'reference', not {mode!r}")
    inputs = {"codes": np.asarray(codes, np.int32), "reference": int(mode == "reference"), "context": context,
              "chunk_frames": chunk_frames}
    if ref_codes is not None:
        inputs["ref_codes"] = np.asarray(ref_codes, np.int32)
    return engine.run("decode", inputs=inputs)["audio"]
