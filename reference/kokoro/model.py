"""KModel.forward_with_tokens in numpy: token ids + a style row -> 24 kHz audio, with every
intermediate the conformance harness compares.

    out = synthesize(weights, config, ids, ref_s)          # ids without the 0 pads; ref_s [256]
    out.audio, out.durations, out.f0, out.n, out.t_en, out.mag, out.phase

A voice pack [510, 256] gives ref_s = pack[len(phonemes) - 1]; ref_s[:128] styles the decoder,
ref_s[128:] the prosody predictor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common.nn import linear
from .albert import albert
from .decoder import decoder_features, generator
from .predictor import duration_encoder, durations, f0_n
from .text_encoder import text_encoder

MAX_PHONEMES = 510


@dataclass
class Output:
    audio: np.ndarray            # [600 * frames] float32, 24 kHz
    durations: np.ndarray        # [T] int64, frames per token (T = phonemes + 2 pads)
    dur_float: np.ndarray        # [T] before rounding
    bert: np.ndarray             # [T, 768] PL-BERT output
    d: np.ndarray                # [T, 640] duration-encoder output
    f0: np.ndarray               # [2 * frames]
    n: np.ndarray                # [2 * frames]
    t_en: np.ndarray             # [512, T] text-encoder output
    taps: dict = field(default_factory=dict)  # generator: har_source, har, mag, phase

    @property
    def mag(self) -> np.ndarray:
        return self.taps["mag"]

    @property
    def phase(self) -> np.ndarray:
        return self.taps["phase"]


def tokenize(phonemes: str, vocab: dict) -> list[int]:
    """Phonemes -> ids, character by character; symbols outside the vocabulary are skipped."""
    return [vocab[c] for c in phonemes if c in vocab]


def style_row(pack: np.ndarray, n_phonemes: int) -> np.ndarray:
    """The style vector [256] a voice pack [510, 256] (or [510, 1, 256]) gives a span of n phonemes."""
    pack = pack.reshape(pack.shape[0], -1)
    return pack[max(1, min(n_phonemes, pack.shape[0])) - 1]


def predict_durations(w, cfg: dict, ids, ref_s: np.ndarray, speed: float = 1.0):
    """The text side up to the durations: (PL-BERT output, duration-encoder output d, float durations,
    integer durations). ids include the 0 pads."""
    s_pred = np.asarray(ref_s, dtype=np.float32).reshape(-1)[128:]
    bert = albert(ids, w, cfg["plbert"])
    d_en = linear(bert, w["bert_encoder.weight"], w["bert_encoder.bias"])  # [T, 512]
    d = duration_encoder(d_en, s_pred, w, cfg["n_layer"])
    dur_f, dur = durations(d, w, speed)
    return bert, d, dur_f, dur


def synthesize(w, cfg: dict, ids, ref_s: np.ndarray, speed: float = 1.0, *, noise: str = "zero",
               seed: int = 0, span: int = 0) -> Output:
    """ids: phoneme ids without the 0 pads; noise "zero" (as the official code with its randomness
    zeroed) or "philox" (the source's noise from Philox keyed by seed, at the span's index)."""
    ids = np.asarray(ids, dtype=np.int64)
    if len(ids) > MAX_PHONEMES:
        raise ValueError(f"{len(ids)} tokens; Kokoro takes at most {MAX_PHONEMES} per span")
    ids = np.concatenate([[0], ids, [0]])
    ref_s = np.asarray(ref_s, dtype=np.float32).reshape(-1)
    s_dec, s_pred = ref_s[:128], ref_s[128:]
    bert, d, dur_f, dur = predict_durations(w, cfg, ids, ref_s, speed)
    en = np.repeat(d.T, dur, axis=1)  # d^T @ alignment: each token's column repeated for its frames
    f0, n = f0_n(en, s_pred, w)
    t_en = text_encoder(ids, w, cfg)
    asr = np.repeat(t_en, dur, axis=1)
    x = decoder_features(asr, f0, n, s_dec, w)
    taps: dict = {}
    audio = generator(x, s_dec, f0, w, cfg, noise=noise, seed=seed, span=span, taps=taps)
    return Output(audio, dur, dur_f, bert, d, f0, n, t_en, taps)
