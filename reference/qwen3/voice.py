"""Voice creation for Qwen3-TTS-12Hz Base models: reference audio (+ transcript) -> a voice.

Mirrors Qwen3TTSModel.create_voice_clone_prompt (qwen_tts/inference/qwen3_tts_model.py) for one
reference recording:

    wav, sr  (multi-channel [samples, channels] is averaged to mono, float32)
    ref_code      = speech_tokenizer.encode(wav, sr)      resampled to 24 kHz first when sr != 24000
                    -> Mimi encoder + split RVQ, 16 codebooks, ceil(samples / 1920) frames
    ref_spk_embedding = extract_speaker_embedding(resample(wav, sr -> 24000), 24000)
                    -> log-mel (mel.py) -> ECAPA-TDNN (speaker_encoder.py)
    x_vector_only_mode: the codes are dropped (official: computed, then set to None) and no
                    transcript is needed; otherwise (ICL mode) ref_text is required.

The official resamples with librosa.resample (soxr HQ); the reference uses its own windowed-sinc
resampler (resample.py), so for recordings not at 24 kHz the result is close to, not identical with,
the official (measured by the conformance suite). At 24 kHz it is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common.checkpoint import Checkpoint
from .mel import mel_spectrogram
from .mimi_encoder import MimiEncoder
from ..dsp.resample import resample
from .speaker_encoder import SpeakerEncoder, min_samples

SAMPLE_RATE = 24000


@dataclass
class Voice:
    """A cloned voice, the reference's counterpart of the official VoiceClonePromptItem."""

    speaker_embedding: np.ndarray   # [enc_dim] float32 (ref_spk_embedding)
    ref_codes: np.ndarray | None    # [frames, 16] int64 (ref_code); None in x-vector-only mode
    ref_text: str | None
    x_vector_only: bool
    wav: np.ndarray                 # the source recording, mono float32, at its own rate
    sr: int

    @property
    def icl_mode(self) -> bool:
        return not self.x_vector_only


def to_mono(wav: np.ndarray) -> np.ndarray:
    """float32 mono: multi-channel audio [samples, channels] (soundfile's layout) is averaged over the
    last axis, like the official's np.mean(audio, axis=-1)."""
    wav = np.asarray(wav)
    if wav.ndim > 1:
        wav = np.mean(wav.astype(np.float32), axis=-1)
    return wav.astype(np.float32)


def to_24k(wav: np.ndarray, sr: int) -> np.ndarray:
    """The audio both encoders see: mono float32 at 24 kHz (resampled when sr differs)."""
    wav = to_mono(wav)
    return wav if int(sr) == SAMPLE_RATE else resample(wav, int(sr), SAMPLE_RATE)


def speaker_embedding(ckpt: Checkpoint, wav24k: np.ndarray) -> np.ndarray:
    """extract_speaker_embedding of 24 kHz audio: [enc_dim] float32."""
    enc = SpeakerEncoder(ckpt)
    need = min_samples(enc.min_frames)
    if len(wav24k) < need:
        raise ValueError(f"reference audio too short: {len(wav24k)} samples at 24 kHz, the speaker encoder needs at "
                         f"least {need} ({enc.min_frames} mel frames); the official code fails on it too")
    return enc(mel_spectrogram(wav24k))


def ref_codes(ckpt: Checkpoint, wav24k: np.ndarray) -> np.ndarray:
    """speech_tokenizer.encode of 24 kHz audio: [frames, 16] int64."""
    return MimiEncoder(ckpt).encode(wav24k)


def create_voice(ckpt: Checkpoint, wav: np.ndarray, sr: int, ref_text: str | None = None,
                 x_vector_only: bool = False) -> Voice:
    """A voice from one reference recording (create_voice_clone_prompt for a single item)."""
    if ckpt.config.get("tts_model_type", "base") != "base":
        raise ValueError(f"voice cloning needs a Base model, this one is {ckpt.config.get('tts_model_type')!r}")
    if not x_vector_only and not ref_text:
        raise ValueError("ref_text is required when x_vector_only=False (ICL mode)")
    mono = to_mono(wav)
    if mono.ndim != 1 or mono.size == 0:
        raise ValueError(f"expected a non-empty mono or [samples, channels] recording, got shape {np.shape(wav)}")
    wav24k = to_24k(mono, sr)
    codes = None if x_vector_only else ref_codes(ckpt, wav24k)
    return Voice(speaker_embedding=speaker_embedding(ckpt, wav24k), ref_codes=codes, ref_text=ref_text,
                 x_vector_only=bool(x_vector_only), wav=mono, sr=int(sr))
