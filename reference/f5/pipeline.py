"""F5-TTS inference end to end, as f5_tts.infer.utils_infer.infer_process / infer_batch_process run it
(one utterance, the reference recording already through refaudio.preprocess):

  max_chars = int(bytes(ref_text) / ref_seconds * (22 - ref_seconds) * speed)      (infer_process)
  pieces    = chunk_text(gen_text, max_chars): sentences split after ; : , . ! ? followed by
              whitespace, or after ；：，。！？; sentences are packed into pieces of at most max_chars
              UTF-8 bytes (a sentence ending in a 1-byte character gets a trailing space)
  reference = mean of the channels; if its rms < target_rms (0.1) it is scaled up to target_rms;
              resampled to 24 kHz (resample.py); ref_text gets a trailing " " if its last character
              is 1 byte
  per piece p (in order; its noise is noise.initial_noise(seed, p)):
    speed_p  = 0.3 if bytes(piece) < 10 else speed
    R        = reference samples // 256                       (frames of the reference)
    duration = R + int(R / bytes(ref_text) * bytes(piece) / speed_p)
               or int(fix_duration_p * 24000 / 256) with fix_duration; over several pieces
               fix_duration is shared out: ref_s = R * 256 / 24000, each piece gets
               ref_s + (fix_duration - ref_s + 0.15 (P - 1)) * bytes(piece) / sum of bytes
    mel      = cfm.sample(log_mel(reference), tokens(ref_text + piece), duration, ...)[R:]
    wave     = Vocos(mel), scaled back by rms / target_rms when the reference was scaled up
  audio     = the pieces joined with a linear cross-fade of cross_fade_duration (0.15 s) seconds
              (float64 from the first cross-fade on, as the official numpy code computes it)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from . import cfm, vocos
from .config import F5Config
from .mel import log_mel
from .noise import initial_noise
from .resample import resample
from .textdata import TextData

_SENTENCE = re.compile(r"(?<=[;:,.!?])\s+|(?<=[；：，。！？])")


@dataclass
class F5Model:
    """What the reference runs on: the config, the weights ("transformer.*" DiT/CFM names and
    "vocos.*" Vocos names, float32 on access) and the text frontend data."""
    config: F5Config
    weights: Mapping[str, np.ndarray]
    text: TextData
    source: str = ""
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self._tok = None

    @property
    def tokenizer(self):
        if self._tok is None:
            self._tok = self.text.tokenizer()
        return self._tok


def chunk_text(text: str, max_chars: int = 135) -> list[str]:
    """utils_infer.chunk_text."""
    chunks, cur = [], ""
    for s in _SENTENCE.split(text):
        if not s:
            continue
        add = s + " " if len(s[-1].encode("utf-8")) == 1 else s
        if len(cur.encode("utf-8")) + len(s.encode("utf-8")) <= max_chars:
            cur += add
        else:
            if cur:
                chunks.append(cur.strip())
            cur = add
    if cur:
        chunks.append(cur.strip())
    return chunks


def max_chars(ref_text: str, ref_samples: int, sr: int, speed: float = 1.0) -> int:
    sec = ref_samples / sr
    return int(len(ref_text.encode("utf-8")) / sec * (22 - sec) * speed)


def fix_durations(fix_duration: float | None, pieces: list[str], ref_frames: int, hop: int = 256,
                  sr: int = 24000, cross_fade_duration: float = 0.15) -> list[float | None]:
    if fix_duration is None or len(pieces) <= 1:
        return [fix_duration] * len(pieces)
    ref_sec = ref_frames * hop / sr
    target_total = fix_duration - ref_sec
    weights = [len(p.encode("utf-8")) for p in pieces]
    total = sum(weights)
    allocatable = target_total + cross_fade_duration * (len(pieces) - 1)
    return [ref_sec + allocatable * w / total for w in weights]


def piece_duration(ref_frames: int, ref_text: str, piece: str, speed: float, fix_dur: float | None,
                   hop: int = 256, sr: int = 24000) -> int:
    if fix_dur is not None:
        return int(fix_dur * sr / hop)
    local_speed = 0.3 if len(piece.encode("utf-8")) < 10 else speed
    return ref_frames + int(ref_frames / len(ref_text.encode("utf-8")) * len(piece.encode("utf-8")) / local_speed)


def cross_fade(waves: list[np.ndarray], cross_fade_duration: float = 0.15, sr: int = 24000) -> np.ndarray:
    """infer_batch_process's joining of the pieces' audio."""
    if cross_fade_duration <= 0:
        return np.concatenate(waves)
    final = waves[0]
    for nxt in waves[1:]:
        n = min(int(cross_fade_duration * sr), len(final), len(nxt))
        if n <= 0:
            final = np.concatenate([final, nxt])
            continue
        faded = final[-n:] * np.linspace(1, 0, n) + nxt[:n] * np.linspace(0, 1, n)
        final = np.concatenate([final[:-n], faded, nxt[n:]])
    return final


@dataclass
class Reference:
    audio: np.ndarray   # float32 mono 24 kHz, after the loudness normalization
    rms: np.float32     # of the recording before normalization
    scaled: bool        # rms < target_rms: the output is scaled back
    text: str           # reference text with the trailing space infer_batch_process adds


def prepare_reference(audio: np.ndarray, sr: int, ref_text: str, target_rms: float = 0.1,
                      out_sr: int = 24000) -> Reference:
    """audio float32 [samples] or [channels, samples] (torchaudio.load layout) -> Reference."""
    a = np.asarray(audio, dtype=np.float32)
    if a.ndim == 2:
        a = a.mean(axis=0, dtype=np.float32) if a.shape[0] > 1 else a[0]
    rms = np.float32(np.sqrt(np.mean(a.astype(np.float64) ** 2)))
    scaled = bool(rms < np.float32(target_rms))
    if scaled:
        a = (a * np.float32(target_rms)) / rms
    a = resample(a, sr, out_sr)
    if len(ref_text[-1].encode("utf-8")) == 1:
        ref_text = ref_text + " "
    return Reference(a.astype(np.float32), rms, scaled, ref_text)


@dataclass
class Piece:
    text: str
    tokens: list[int]
    duration: int            # frames asked for
    total_frames: int        # after CFM.sample's minimum
    mel: np.ndarray          # generated mel [100, T] (reference part cut off)
    wave: np.ndarray
    sample: cfm.SampleOutput


@dataclass
class Result:
    audio: np.ndarray
    sample_rate: int
    spectrogram: np.ndarray  # [100, frames of all pieces]
    pieces: list[Piece]
    reference: Reference


def synthesize(model: F5Model, ref_audio: np.ndarray, ref_sr: int, ref_text: str, gen_text: str, *, seed: int = 0,
               nfe_step: int | None = None, cfg_strength: float | None = None,
               sway_sampling_coef: float | None | str = "default", speed: float | None = None,
               fix_duration: float | None = None, target_rms: float | None = None,
               cross_fade_duration: float | None = None, use_epss: bool | None = None) -> Result:
    """infer_process(ref_audio, ref_text, gen_text, ...) on a preprocessed reference (float32, the
    layout torchaudio.load gives) whose transcript is ref_text (already fixed up by
    refaudio.fix_ref_text). Unset options take the official defaults (config.InferDefaults)."""
    c = model.config
    d = c.infer
    nfe = d.nfe_step if nfe_step is None else nfe_step
    cfg_s = d.cfg_strength if cfg_strength is None else cfg_strength
    sway = d.sway_sampling_coef if sway_sampling_coef == "default" else sway_sampling_coef
    speed = d.speed if speed is None else speed
    target_rms = d.target_rms if target_rms is None else target_rms
    xfade = d.cross_fade_duration if cross_fade_duration is None else cross_fade_duration
    epss = d.use_epss if use_epss is None else use_epss
    sr, hop = c.mel.sample_rate, c.mel.hop_length
    a = np.asarray(ref_audio, dtype=np.float32)
    n_ref = a.shape[-1]
    pieces_text = chunk_text(gen_text, max_chars(ref_text, n_ref, ref_sr, speed))
    if not pieces_text:
        raise ValueError("nothing to synthesize: the text has no piece")
    ref = prepare_reference(a, ref_sr, ref_text, target_rms, sr)
    ref_frames = len(ref.audio) // hop
    fixes = fix_durations(fix_duration, pieces_text, ref_frames, hop, sr, xfade)
    cond = log_mel(ref.audio, sr, c.mel.n_fft, hop, c.mel.win_length, c.mel.n_mels).T
    pieces = []
    for p, (text, fix) in enumerate(zip(pieces_text, fixes)):
        tokens = model.tokenizer.encode(ref.text + text)
        dur = piece_duration(ref_frames, ref.text, text, speed, fix, hop, sr)
        out = cfm.sample(cond, np.array(tokens, np.int64), dur, lambda n, p=p: initial_noise(seed, p, n, c.mel.n_mels),
                         model.weights, c.dit, steps=nfe, cfg_strength=cfg_s, sway_sampling_coef=sway,
                         use_epss=epss, max_duration=d.max_duration)
        mel = np.ascontiguousarray(out.mel[ref_frames:].T)
        wave = vocos.decode(mel, model.weights, c.vocos)
        if ref.scaled:
            wave = (wave * ref.rms) / np.float32(target_rms)
        pieces.append(Piece(text, tokens, dur, out.duration, mel, wave.astype(np.float32), out))
    audio = cross_fade([pc.wave for pc in pieces], xfade, sr)
    return Result(audio, sr, np.concatenate([pc.mel for pc in pieces], axis=1), pieces, ref)
