"""The speaker encoder's front end: qwen_tts mel_spectrogram, in numpy.

Official (qwen_tts/core/models/modeling_qwen3_tts.py, extract_speaker_embedding -> mel_spectrogram):
24 kHz audio, n_fft 1024, hop 256, Hann window 1024, 128 slaney mel bands 0..12 kHz:

    mel_basis = librosa.filters.mel(sr, n_fft, n_mels, fmin, fmax)      # slaney scale + slaney norm
    y = reflect-pad(y, (n_fft - hop) / 2 on both sides)
    spec = |torch.stft(y, n_fft, hop, win, hann, center=False)|  as sqrt(re^2 + im^2 + 1e-9)
    mel = log(clamp(mel_basis @ spec, min=1e-5))                        # [n_mels, frames]

Frames: 1 + (len(y) + 2 * 384 - 1024) // 256. The reflect pad needs len(y) > 384 (torch refuses
otherwise, and so do we).

The filterbank is librosa's, recomputed step by step in the same float64 / float32 roundings (the
triangles are rounded to float32 before the slaney normalisation is applied), so it is bit-identical
to librosa.filters.mel. The STFT uses numpy's FFT in float64 on the float32 frames and rounds the
real and imaginary parts to float32 (torch: a float32 FFT), which agrees to ~1e-7 relative.
"""

from __future__ import annotations

import functools

import numpy as np

N_FFT = 1024
HOP = 256
WIN = 1024
N_MELS = 128
SAMPLE_RATE = 24000
FMIN = 0.0
FMAX = 12000.0

# slaney mel scale (librosa.hz_to_mel / mel_to_hz with htk=False): linear below 1 kHz, log above
_F_SP = 200.0 / 3
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = np.log(6.4) / 27.0


def hz_to_mel(f: np.ndarray) -> np.ndarray:
    f = np.asarray(f, dtype=np.float64)
    mel = f / _F_SP
    log_t = f >= _MIN_LOG_HZ
    return np.where(log_t, _MIN_LOG_MEL + np.log(np.maximum(f, 1e-300) / _MIN_LOG_HZ) / _LOGSTEP, mel)


def mel_to_hz(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    hz = _F_SP * m
    log_t = m >= _MIN_LOG_MEL
    return np.where(log_t, _MIN_LOG_HZ * np.exp(_LOGSTEP * (m - _MIN_LOG_MEL)), hz)


@functools.lru_cache(maxsize=8)
def mel_filterbank(sr: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS, fmin: float = FMIN,
                   fmax: float = FMAX) -> np.ndarray:
    """librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax) (slaney, float32),
    [n_mels, 1 + n_fft // 2]."""
    fftfreqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    weights = np.zeros((n_mels, 1 + n_fft // 2), dtype=np.float32)
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))  # rounded to float32 here (as librosa)
    enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
    weights *= enorm[:, None]  # float64 product, rounded to float32 again
    weights.flags.writeable = False
    return weights


@functools.lru_cache(maxsize=4)
def hann_window(n: int) -> np.ndarray:
    """torch.hann_window(n) (periodic) the way torch computes it, in float32:
    cos(k * float32(2 pi / n)) * -0.5 + 0.5 (agrees with torch to 1 ulp; 90% of values bit-equal)."""
    k = np.arange(n, dtype=np.float32)
    w = (np.cos(k * np.float32(2.0 * np.pi / n)) * np.float32(-0.5) + np.float32(0.5)).astype(np.float32)
    w.flags.writeable = False
    return w


def reflect_pad(x: np.ndarray, left: int, right: int) -> np.ndarray:
    """torch.nn.functional.pad(mode="reflect") on the last axis (edge sample not repeated)."""
    t = x.shape[-1]
    if left >= t or right >= t:
        raise ValueError(f"reflect padding ({left}, {right}) needs more than {max(left, right)} samples, got {t}")
    parts = [x[..., 1:left + 1][..., ::-1], x, x[..., t - 1 - right:t - 1][..., ::-1]]
    return np.concatenate(parts, axis=-1)


def stft_magnitude(y: np.ndarray, n_fft: int = N_FFT, hop: int = HOP, win: int = WIN) -> np.ndarray:
    """|STFT| (center=False, periodic Hann) as sqrt(re^2 + im^2 + 1e-9), float32 [1 + n_fft/2, frames]."""
    if win != n_fft:
        raise NotImplementedError("win_size != n_fft is not used by Qwen3-TTS")
    n_frames = 1 + (len(y) - n_fft) // hop
    if n_frames <= 0:
        return np.zeros((n_fft // 2 + 1, 0), dtype=np.float32)
    idx = np.arange(n_frames)[:, None] * hop + np.arange(n_fft)[None, :]
    frames = y[idx] * hann_window(win)  # float32, like torch's windowed frames
    spec = np.fft.rfft(frames.astype(np.float64), n=n_fft, axis=-1)
    re = spec.real.astype(np.float32)
    im = spec.imag.astype(np.float32)
    mag = np.sqrt(re * re + im * im + np.float32(1e-9))
    return mag.T


def mel_spectrogram(y: np.ndarray, sr: int = SAMPLE_RATE, n_fft: int = N_FFT, n_mels: int = N_MELS,
                    hop: int = HOP, win: int = WIN, fmin: float = FMIN, fmax: float = FMAX) -> np.ndarray:
    """Log-mel spectrogram of a mono float32 signal: [n_mels, frames] (official layout before the
    transpose in extract_speaker_embedding)."""
    y = np.asarray(y, dtype=np.float32)
    if y.ndim != 1:
        raise ValueError(f"mel_spectrogram expects mono audio [samples], got shape {y.shape}")
    pad = (n_fft - hop) // 2
    y = reflect_pad(y, pad, pad)
    spec = stft_magnitude(y, n_fft, hop, win)
    mel = mel_filterbank(sr, n_fft, n_mels, fmin, fmax) @ spec
    return np.log(np.maximum(mel, np.float32(1e-5)))
