"""Voice creation (Base): mel front end, speaker encoder, Mimi encoder + RVQ, resampler, create_voice.

The comparisons live in vox.verify.qwen3.voice (shared with `vox verify`); these tests choose the
inputs: the committed recordings (24 kHz, 34 s at 24 kHz, 16 kHz, 44.1 kHz), synthetic noise for the
resampler, and edge cases (shorter than a frame, exactly one frame, one sample more, silence,
stereo, too short for the speaker encoder).
"""

from __future__ import annotations

import numpy as np
import pytest

from vox.reference.common.checkpoint import Checkpoint
from vox.reference.qwen3 import voice as ref_voice
from vox.verify.qwen3 import voice as V
from vox.verify.tolerance import measure

BASES = ["base06", "base17"]


@pytest.fixture(scope="module")
def model(qwen3_fixture, official):
    """model(variant) -> (official Qwen3TTSModel, reference Checkpoint)."""
    cache = {}

    def get(variant):
        if variant not in cache:
            d = qwen3_fixture(variant)
            cache[variant] = (official(d), Checkpoint.from_hf_dir(d))
        return cache[variant]

    return get


# ----------------------------------------------------------------------------- front end
def test_mel_filterbank(record):
    record(V.filterbank_rows())


@pytest.mark.parametrize("name", ["ref_en_24k.wav", "ref_long_24k.wav"])
def test_mel(record, ref_audio, name):
    wav, sr, _ = ref_audio(name)
    assert sr == 24000
    record(V.mel_rows(wav, name))


# ----------------------------------------------------------------------------- 24 kHz: exact
@pytest.mark.parametrize("variant", BASES)
@pytest.mark.parametrize("name", ["ref_en_24k.wav", "ref_long_24k.wav"])
def test_encoders_24k(record, model, ref_audio, variant, name):
    tts, ckpt = model(variant)
    wav, sr, text = ref_audio(name)
    rows = V.encoder_rows(tts, ckpt, wav, f"{variant} {name}")
    if name == "ref_en_24k.wav":  # the whole create_voice path once per model (the long file: same code)
        rows += V.voice_rows(tts, ckpt, wav, sr, f"{variant} {name}", ref_text=text)
    else:
        frames = [r for r in rows if r.check == "qwen3.ref_codes"][0]
        assert "426 frames" in frames.note  # > 300 frames
    record(rows)


# ----------------------------------------------------------------------------- 16 / 44.1 kHz
@pytest.mark.parametrize("variant", BASES)
@pytest.mark.parametrize("name", ["ref_en_16k.wav", "ref_en_44k.wav"])
def test_voice_resampled(record, model, ref_audio, variant, name):
    """(a) the reference on the official's own 24 kHz audio: exact; (b) end to end: reported."""
    tts, ckpt = model(variant)
    wav, sr, text = ref_audio(name)
    assert sr != 24000
    record(V.voice_rows(tts, ckpt, wav, sr, f"{variant} {name}", ref_text=text))


@pytest.mark.parametrize("name", ["ref_en_16k.wav", "ref_en_44k.wav"])
def test_resampler_speech(record, ref_audio, name):
    wav, sr, _ = ref_audio(name)
    record(V.resampler_rows(wav, sr, name))


@pytest.mark.parametrize("sr", [16000, 44100, 22050, 48000, 8000])
def test_resampler_noise(record, sr):
    record(V.noise_rows(sr))


def test_resampler_lengths():
    """librosa's length: ceil(n * ratio) in double (44100 samples at 44.1 kHz -> 24001), the samples past
    soxr's round(n * L / M) are zeros; equal rates pass the signal through."""
    import librosa

    from vox.reference.dsp.resample import produced_length, resample

    rng = np.random.default_rng(3)
    for sr in (16000, 44100, 22050):
        for n in (1, 2, 3, 146, 147, 148, 1000, sr):
            x = (0.1 * rng.standard_normal(n)).astype(np.float32)
            ours = resample(x, sr, 24000)
            off = librosa.resample(x, orig_sr=sr, target_sr=24000)
            assert ours.shape == off.shape, (sr, n)
            p = produced_length(n, sr, 24000)
            assert np.all(ours[p:] == 0) and np.all(off[p:] == 0), (sr, n)
    x = rng.standard_normal(100).astype(np.float32)
    assert resample(x, 24000, 24000) is not None and np.array_equal(resample(x, 24000, 24000), x)


# ----------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("n", [1280, 1500, 1920, 1921])
def test_short_audio(record, model, n):
    """Shorter than a frame (1 frame), exactly one frame, one sample more (2 frames); 1280 samples is
    the shortest audio the speaker encoder accepts (5 mel frames)."""
    tts, ckpt = model("base06")
    x = (0.1 * np.random.default_rng(n).standard_normal(n)).astype(np.float32)
    rows = V.voice_rows(tts, ckpt, x, 24000, f"base06 noise, {n} samples", ref_text="hi")
    v = ref_voice.create_voice(ckpt, x, 24000, ref_text="hi")
    assert v.ref_codes.shape == (-(-n // 1920), 16)
    record(rows)


def test_too_short_for_speaker_encoder(model):
    """Below 1280 samples the official fails (reflect padding longer than the signal); so do we, with a
    clear error. The codes alone still exist for any length, and match."""
    tts, ckpt = model("base06")
    x = (0.1 * np.random.default_rng(0).standard_normal(1279)).astype(np.float32)
    with pytest.raises(RuntimeError):
        V.official_prompt(tts, x, 24000, "hi")
    with pytest.raises(ValueError, match="too short"):
        ref_voice.create_voice(ckpt, x, 24000, ref_text="hi")
    for n in (1, 100, 1279):
        x = (0.1 * np.random.default_rng(n).standard_normal(n)).astype(np.float32)
        assert np.array_equal(ref_voice.ref_codes(ckpt, x), V.official_codes(tts, x)), n


def test_silence(record, model):
    tts, ckpt = model("base06")
    x = np.zeros(24000, dtype=np.float32)
    record(V.mel_rows(x, "silence, 1 s") + V.voice_rows(tts, ckpt, x, 24000, "base06 silence, 1 s", ref_text="hi"))


@pytest.mark.parametrize("name", ["ref_en_24k.wav", "ref_en_16k.wav"])
def test_stereo(record, model, ref_audio, tmp_path, name):
    """A stereo file: the official loads it averaged to mono (librosa.load(mono=True)); the reference
    averages a [samples, channels] array over the channels (np.mean(axis=-1), the official's rule for
    arrays). (Passing a stereo (array, sr) tuple to the official create_voice_clone_prompt fails: it
    assigns into the tuple.)"""
    import soundfile as sf

    tts, ckpt = model("base06")
    wav, sr, text = ref_audio(name)
    other = np.roll(wav, 2400) * np.float32(0.5)
    stereo = np.stack([wav, other], axis=-1)
    path = tmp_path / "stereo.wav"
    sf.write(path, stereo, sr, subtype="FLOAT")
    off_emb, off_codes = V.official_prompt(tts, str(path), None, text)
    ours = ref_voice.create_voice(ckpt, stereo, sr, ref_text=text)
    assert ours.wav.ndim == 1 and ours.wav.dtype == np.float32
    if sr == 24000:
        record([measure("qwen3.speaker_embedding", ours.speaker_embedding, off_emb, f"base06 stereo {name}"),
                measure("qwen3.ref_codes", ours.ref_codes, off_codes, f"base06 stereo {name}")])
    else:
        mono24 = V.official_resample(stereo.mean(axis=-1).astype(np.float32), sr)
        iso = ref_voice.create_voice(ckpt, mono24, 24000, ref_text=text)
        record([measure("qwen3.speaker_embedding_official_resampled", iso.speaker_embedding, off_emb,
                        f"base06 stereo {name}"),
                measure("qwen3.ref_codes_official_resampled", iso.ref_codes, off_codes, f"base06 stereo {name}"),
                measure("qwen3.speaker_embedding_resampled", ours.speaker_embedding, off_emb, f"base06 stereo {name}"),
                measure("qwen3.ref_codes_resampled", ours.ref_codes, off_codes, f"base06 stereo {name}")])


# ----------------------------------------------------------------------------- modes
def test_modes(model, ref_audio):
    """x-vector-only: no transcript needed, no codes, the same embedding; ICL without a transcript is
    an error (as in the official)."""
    tts, ckpt = model("base06")
    wav, sr, text = ref_audio("ref_en_24k.wav")
    wav = wav[:48000]
    xv = ref_voice.create_voice(ckpt, wav, sr, x_vector_only=True)
    assert xv.ref_codes is None and xv.x_vector_only and not xv.icl_mode and xv.ref_text is None
    icl = ref_voice.create_voice(ckpt, wav, sr, ref_text=text)
    assert icl.icl_mode and icl.ref_text == text and icl.sr == sr
    assert np.array_equal(xv.speaker_embedding, icl.speaker_embedding)
    off_emb, off_codes = V.official_prompt(tts, wav, sr, None, x_vector_only=True)
    assert off_codes is None
    assert np.linalg.norm(xv.speaker_embedding - off_emb) <= 1e-5 * np.linalg.norm(off_emb)
    with pytest.raises(ValueError):
        V.official_prompt(tts, wav, sr, None)
    with pytest.raises(ValueError, match="ref_text"):
        ref_voice.create_voice(ckpt, wav, sr)
