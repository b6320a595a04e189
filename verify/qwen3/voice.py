"""Voice creation (Base models) of the reference vs the official qwen-tts code.

Each function takes the official wrapper (vox.verify.qwen3.official.load(dir), a Qwen3TTSModel)
where it needs one, the reference weights (a Checkpoint) and a recording, and returns rows of the
tolerance table. The conformance suite (conformance/test_qwen3_voice.py) and `vox verify` call the
same functions; `standard_rows` is the battery for one model directory.

    filterbank_rows  reference slaney filterbank vs librosa.filters.mel (bit-exact)
    mel_rows         reference log-mel front end vs qwen_tts mel_spectrogram
    encoder_rows     speaker embedding + reference codes of 24 kHz audio vs the official modules
                     (extract_speaker_embedding, speech_tokenizer.encode), and the Mimi latent
    voice_rows       the whole of create_voice vs create_voice_clone_prompt for a recording at any
                     rate: at 24 kHz exact; otherwise (a) the reference given the official's own
                     resampled audio (the encoders alone: exact again) and (b) end to end with the
                     reference resampler (reported: soxr is not reproduced bit for bit)
    resampler_rows   reference resampler vs librosa.resample (soxr_hq) on a recording
    noise_rows       the same on white and on band-limited noise (transition band / pass band)
"""

from __future__ import annotations

import numpy as np

from .. import metrics
from ..tolerance import Row, measure

SR = 24000


# ----------------------------------------------------------------------------- official paths
def official_mel(wav24k: np.ndarray) -> np.ndarray:
    """qwen_tts mel_spectrogram with extract_speaker_embedding's arguments: [128, frames] float32."""
    import torch
    from qwen_tts.core.models.modeling_qwen3_tts import mel_spectrogram

    with torch.inference_mode():
        m = mel_spectrogram(torch.from_numpy(np.asarray(wav24k, dtype=np.float32)).unsqueeze(0), n_fft=1024,
                            num_mels=128, sampling_rate=24000, hop_size=256, win_size=1024, fmin=0, fmax=12000)
    return m[0].numpy().copy()


def official_resample(wav: np.ndarray, sr: int) -> np.ndarray:
    """What create_voice_clone_prompt does to a recording not at 24 kHz (librosa soxr_hq)."""
    import librosa

    wav = np.asarray(wav, dtype=np.float32)
    return wav if int(sr) == SR else librosa.resample(y=wav, orig_sr=int(sr), target_sr=SR)


def official_embedding(tts, wav24k: np.ndarray) -> np.ndarray:
    return tts.model.extract_speaker_embedding(np.asarray(wav24k, dtype=np.float32), SR).float().numpy().copy()


def official_codes(tts, wav: np.ndarray, sr: int = SR) -> np.ndarray:
    """Qwen3TTSTokenizer.encode(wav, sr).audio_codes[0]: [frames, 16] int64."""
    enc = tts.model.speech_tokenizer.encode(np.asarray(wav, dtype=np.float32), sr=int(sr))
    return enc.audio_codes[0].numpy().astype(np.int64)


def official_latent(tts, wav24k: np.ndarray) -> np.ndarray:
    """The Mimi encoder's input to the quantizer (after downsample), [hidden, frames], untrimmed."""
    import torch

    m = tts.model.speech_tokenizer.model.encoder
    with torch.inference_mode():
        x = torch.from_numpy(np.asarray(wav24k, dtype=np.float32))[None, None]
        h = m.encoder(x)
        h = m.encoder_transformer(h.transpose(1, 2), return_dict=True)[0].transpose(1, 2)
        h = m.downsample(h)
    return h[0].numpy().copy()


def official_prompt(tts, audio, sr: int | None, ref_text: str | None, x_vector_only: bool = False):
    """create_voice_clone_prompt for one recording: (embedding [enc_dim], codes [T, 16] or None).
    `audio` is a path (the official loads it: librosa.load(mono=True)) or samples with `sr`."""
    ref = audio if isinstance(audio, str) else (np.asarray(audio, dtype=np.float32), int(sr))
    item = tts.create_voice_clone_prompt(ref, ref_text=ref_text, x_vector_only_mode=x_vector_only)[0]
    codes = None if item.ref_code is None else item.ref_code.numpy().astype(np.int64)
    return item.ref_spk_embedding.float().numpy().copy(), codes


# ----------------------------------------------------------------------------- helpers
def code_margin(enc, latent: np.ndarray) -> float:
    """Smallest relative gap, over every frame and codebook, between the best and the second-best
    squared distance (float64, along the reference's own residual path from `latent`, the reference
    MimiEncoder's quantizer input): how far the codes are from a near-tie that float32 rounding could
    flip (float32 resolution is ~1e-7)."""
    c = enc.cfg
    worst = np.inf
    n_sem = c.num_semantic_quantizers
    for name, nq in (("quantizer.semantic_residual_vector_quantizer", n_sem),
                     ("quantizer.acoustic_residual_vector_quantizer", c.valid_num_quantizers - n_sem)):
        proj = enc.w(f"{name}.input_proj.weight")
        r = (proj[:, :, 0].astype(np.float64) @ latent).T
        for qi in range(nq):
            e = enc.codebook(f"{name}.layers.{qi}")[0].astype(np.float64)
            d2 = np.sum(r * r, 1)[:, None] - 2 * r @ e.T + np.sum(e * e, 1)[None]
            part = np.partition(d2, 1, axis=1)
            worst = min(worst, float(np.min((part[:, 1] - part[:, 0]) / np.maximum(np.abs(part[:, 1]), 1e-30))))
            r = r - e[np.argmin(d2, 1)]
    return worst


def _codes_row(check: str, ours: np.ndarray, off: np.ndarray, subject: str, note: str = "") -> Row:
    if ours.shape != off.shape:
        return Row(check, subject, 0.0, note=f"shape {ours.shape} vs official {off.shape}. {note}".strip())
    return measure(check, ours, off, subject, note=note)


# ----------------------------------------------------------------------------- rows
def filterbank_rows() -> list[Row]:
    """The slaney filterbank vs librosa.filters.mel with extract_speaker_embedding's arguments: bit-exact."""
    import librosa

    from vox.reference.qwen3 import mel

    fb = librosa.filters.mel(sr=24000, n_fft=1024, n_mels=128, fmin=0, fmax=12000)
    return [Row("qwen3.mel_filterbank", "librosa.filters.mel(sr=24000, n_fft=1024, n_mels=128, fmin=0, fmax=12000)",
                metrics.match_fraction(mel.mel_filterbank(), fb))]


def mel_rows(wav24k: np.ndarray, subject: str) -> list[Row]:
    """Mel energies (max_abs_rel) and log-mel (max_abs) of 24 kHz audio vs the official mel_spectrogram."""
    from vox.reference.qwen3 import mel

    ours = mel.mel_spectrogram(wav24k)
    off = official_mel(wav24k)
    i = np.unravel_index(np.argmax(np.abs(ours.astype(np.float64) - off)), off.shape) if off.size else None
    where = f"largest at log-mel {off[i]:.2f}" if i is not None else ""
    return [
        measure("qwen3.mel", np.exp(ours.astype(np.float64)), np.exp(off.astype(np.float64)), subject,
                note=f"{off.shape[1]} frames"),
        measure("qwen3.log_mel", ours, off, subject, note=where),
    ]


def encoder_rows(tts, ckpt, wav24k: np.ndarray, subject: str) -> list[Row]:
    """Speaker embedding, Mimi latent and reference codes of 24 kHz audio vs the official modules."""
    from vox.reference.qwen3 import voice
    from vox.reference.qwen3.mimi_encoder import MimiEncoder

    wav24k = np.asarray(wav24k, dtype=np.float32)
    enc = MimiEncoder(ckpt)
    latent = enc.latent(wav24k)
    codes = np.ascontiguousarray(enc.quantize(latent)[:, :enc.n_frames(len(wav24k))].T)
    off_codes = official_codes(tts, wav24k)
    return [
        measure("qwen3.speaker_embedding", voice.speaker_embedding(ckpt, wav24k), official_embedding(tts, wav24k),
                subject),
        measure("qwen3.mimi_latent", latent, official_latent(tts, wav24k), subject),
        _codes_row("qwen3.ref_codes", codes, off_codes, subject,
                   note=f"{off_codes.shape[0]} frames; smallest best/second-best distance gap "
                        f"{code_margin(enc, latent):.1e} (relative)"),
    ]


def voice_rows(tts, ckpt, wav: np.ndarray, sr: int, subject: str, ref_text: str = "reference") -> list[Row]:
    """create_voice vs create_voice_clone_prompt. At 24 kHz: exact (speaker_embedding, ref_codes).
    Otherwise: (a) reference encoders on the official's resampled audio (exact), (b) end to end."""
    from vox.reference.qwen3 import voice

    wav = np.asarray(wav, dtype=np.float32)
    off_emb, off_codes = official_prompt(tts, wav, sr, ref_text)
    ours = voice.create_voice(ckpt, wav, sr, ref_text=ref_text)
    if int(sr) == SR:
        return [measure("qwen3.speaker_embedding", ours.speaker_embedding, off_emb, f"{subject}, create_voice"),
                _codes_row("qwen3.ref_codes", ours.ref_codes, off_codes, f"{subject}, create_voice")]
    w24 = official_resample(wav, sr)
    iso = voice.create_voice(ckpt, w24, SR, ref_text=ref_text)
    rows = [
        measure("qwen3.speaker_embedding_official_resampled", iso.speaker_embedding, off_emb, subject),
        _codes_row("qwen3.ref_codes_official_resampled", iso.ref_codes, off_codes, subject),
        measure("qwen3.speaker_embedding_resampled", ours.speaker_embedding, off_emb, subject),
        measure("qwen3.speaker_embedding_resampled_cosine", ours.speaker_embedding, off_emb, subject,
                note=f"1 - cosine = {1 - metrics.cosine(ours.speaker_embedding, off_emb):.1e}"),
        _codes_row("qwen3.ref_codes_resampled", ours.ref_codes, off_codes, subject,
                   note=_per_codebook(ours.ref_codes, off_codes)),
    ]
    return rows


def _per_codebook(ours: np.ndarray, off: np.ndarray) -> str:
    if ours.shape != off.shape:
        return ""
    per = np.mean(ours == off, axis=0)
    return f"{off.shape[0]} frames; semantic codebook {per[0]:.3f}, worst codebook {per.min():.3f}"


def resampler_rows(wav: np.ndarray, sr: int, subject: str, check: str = "qwen3.resample_vs_soxr_speech") -> list[Row]:
    """Reference resampler vs librosa.resample(res_type="soxr_hq") (what the official calls)."""
    from vox.reference.dsp.resample import resample

    wav = np.asarray(wav, dtype=np.float32)
    ours = resample(wav, sr, SR)
    off = official_resample(wav, sr)
    if ours.shape != off.shape:
        return [Row(check, subject, float("inf"), note=f"length {ours.shape} vs official {off.shape}")]
    d = ours.astype(np.float64) - off
    snr = 20 * np.log10(np.linalg.norm(off) / max(np.linalg.norm(d), 1e-30))
    note = f"{len(off)} samples; SNR {snr:.1f} dB; max |diff| {np.max(np.abs(d)):.1e}"
    return [measure(check, ours, off, subject, note=note)]


def noise_rows(sr: int, seed: int = 0, seconds: float = 1.0) -> list[Row]:
    """Reference resampler vs soxr_hq on synthetic noise at `sr`: white (worst case, transition band)
    and band-limited to 0.8 of the lower Nyquist frequency (pass band; ends excluded)."""
    from vox.reference.dsp.resample import resample

    rng = np.random.default_rng(seed)
    n = int(sr * seconds)
    white = (0.1 * rng.standard_normal(n)).astype(np.float32)
    spec = np.fft.rfft(rng.standard_normal(n))
    spec[np.fft.rfftfreq(n, 1.0 / sr) > 0.8 * min(sr, SR) / 2] = 0
    band = np.fft.irfft(spec, n)
    band = (0.3 * band / np.max(np.abs(band))).astype(np.float32)
    rows = resampler_rows(white, sr, f"white noise {sr} Hz, {seconds:g} s", "qwen3.resample_vs_soxr_noise")
    ours, off = resample(band, sr, SR), official_resample(band, sr)
    rows.append(measure("qwen3.resample_vs_soxr_inband", ours[300:-300], off[300:-300],
                        f"noise below 0.8 Nyquist {sr} Hz, {seconds:g} s"))
    return rows


# ----------------------------------------------------------------------------- battery
def standard_rows(tts, ckpt, recordings, label: str = "") -> list[Row]:
    """Everything above for one Base model directory. recordings: [(name, wav, sr, transcript)]."""
    label = f"{label} " if label else ""
    rows: list[Row] = filterbank_rows()
    for name, wav, sr, text in recordings:
        subj = f"{label}{name}"
        if int(sr) == SR:
            rows += mel_rows(wav, subj)
            rows += encoder_rows(tts, ckpt, wav, subj)
        else:
            rows += resampler_rows(wav, sr, subj, "qwen3.resample_vs_soxr_speech")
        rows += voice_rows(tts, ckpt, wav, sr, subj, ref_text=text)
    for sr in sorted({int(r[2]) for r in recordings} - {SR}):
        rows += noise_rows(sr)
    return rows
