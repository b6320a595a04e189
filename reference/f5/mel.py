"""The log-mel spectrogram of F5-TTS with mel_spec_type "vocos" (f5_tts.model.modules.get_vocos_mel_spectrogram),
the features the DiT is conditioned on and Vocos decodes.

    mel = log(clamp(fb^T |STFT(x)|, min=1e-5))                      [n_mels, 1 + len(x) // hop]

torchaudio.transforms.MelSpectrogram(sample_rate, n_fft, win_length, hop_length, n_mels, power=1,
center=True, normalized=False, norm=None): the signal is reflect-padded by n_fft/2 on both sides,
framed every hop samples, windowed by the periodic Hann window of win_length (centred in n_fft),
transformed, and the magnitudes (power 1) are weighted by an HTK-scale triangular filterbank from
0 Hz to sample_rate/2 without area normalization (torchaudio.functional.melscale_fbanks):

    m(f) = 2595 log10(1 + f / 700),   f(m) = 700 (10^(m / 2595) - 1)
    bin frequencies  linspace(0, sample_rate // 2, n_fft/2 + 1)
    band edges       f(linspace(m(0), m(sample_rate / 2), n_mels + 2))
    fb[k, j] = max(0, min((f_k - e_j) / (e_{j+1} - e_j), (e_{j+2} - f_k) / (e_{j+2} - e_{j+1})))

The filterbank is built in float32 step by step as torchaudio does (torch.linspace as its CPU kernel
rounds, see linspace_f32; the power 10^x rounded once from float64, where torch's vectorized powf can
be an ulp away); the FFT runs in float64 on the float32 windowed frames, rounded to float32.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from ..qwen3.mel import hann_window, reflect_pad


def round_f32(r: Fraction) -> np.float32:
    """The float32 nearest to the exact rational r (ties to even): one rounding, as a fused multiply-add."""
    f = np.float32(float(r))  # float() rounds to double first: check the two float32 neighbours
    best = f
    for g in (np.nextafter(f, np.float32(-np.inf)), np.nextafter(f, np.float32(np.inf))):
        dg, db = abs(Fraction(float(g)) - r), abs(Fraction(float(best)) - r)
        if dg < db or (dg == db and (int(g.view(np.uint32)) & 1) == 0):
            best = g
    return np.float32(best)


def linspace_f32(start: float, end: float, steps: int) -> np.ndarray:
    """torch.linspace(start, end, steps) in float32, as its CPU kernel computes it (a scalar loop,
    compiled with fused multiply-adds): step = (end - start) / (steps - 1) in float32; element i is
    fma(step, i, start) for i < steps / 2 and fma(-step, steps - 1 - i, end) after, each rounded once."""
    s, e = np.float32(start), np.float32(end)
    if steps == 1:
        return np.array([s], dtype=np.float32)
    step = np.float32(np.float32(e - s) / np.float32(steps - 1))
    fs, fe, fstep = Fraction(float(s)), Fraction(float(e)), Fraction(float(step))
    out = [round_f32(fs + fstep * i) if i < steps // 2 else round_f32(fe - fstep * (steps - 1 - i))
           for i in range(steps)]
    return np.array(out, dtype=np.float32)


@functools.lru_cache(maxsize=8)
def mel_filterbank(sample_rate: int = 24000, n_fft: int = 1024, n_mels: int = 100) -> np.ndarray:
    """torchaudio.functional.melscale_fbanks(n_fft // 2 + 1, 0, sample_rate / 2, n_mels, sample_rate,
    norm=None, mel_scale="htk"), transposed: float32 [n_mels, n_fft // 2 + 1]."""
    n_freqs = n_fft // 2 + 1
    all_freqs = linspace_f32(0, sample_rate // 2, n_freqs)
    m_min = 2595.0 * math.log10(1.0 + 0.0 / 700.0)
    m_max = 2595.0 * math.log10(1.0 + (float(sample_rate // 2) / 700.0))
    m_pts = linspace_f32(m_min, m_max, n_mels + 2)
    # 700.0 * (10.0 ** (mels / 2595.0) - 1.0), each step rounded to float32
    p = (m_pts / np.float32(2595.0)).astype(np.float32)
    pw = (np.float64(10.0) ** p.astype(np.float64)).astype(np.float32)
    f_pts = (np.float32(700.0) * (pw - np.float32(1.0))).astype(np.float32)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = (np.float32(-1.0) * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = np.maximum(np.float32(0), np.minimum(down, up)).astype(np.float32)
    out = np.ascontiguousarray(fb.T)
    out.flags.writeable = False
    return out


def stft_magnitude(x: np.ndarray, n_fft: int = 1024, hop: int = 256, win: int = 1024) -> np.ndarray:
    """|torch.stft(x, n_fft, hop, win, hann(win), center=True, pad_mode="reflect")|: float32
    [n_fft/2 + 1, 1 + len(x) // hop]."""
    x = np.asarray(x, dtype=np.float32)
    pad = n_fft // 2
    xp = reflect_pad(x, pad, pad)
    frames = 1 + (len(xp) - n_fft) // hop
    w = np.zeros(n_fft, dtype=np.float32)
    off = (n_fft - win) // 2
    w[off:off + win] = hann_window(win)
    idx = np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :]
    spec = np.fft.rfft((xp[idx] * w).astype(np.float64), n=n_fft, axis=-1)
    re = spec.real.astype(np.float32).astype(np.float64)
    im = spec.imag.astype(np.float32).astype(np.float64)
    return np.sqrt(re * re + im * im).astype(np.float32).T


def log_mel(x: np.ndarray, sample_rate: int = 24000, n_fft: int = 1024, hop: int = 256, win: int = 1024,
            n_mels: int = 100) -> np.ndarray:
    """The conditioning features of mono 24 kHz audio x: float32 [n_mels, 1 + len(x) // hop]."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 1:
        raise ValueError(f"log_mel expects mono audio [samples], got shape {x.shape}")
    if len(x) <= n_fft // 2:
        raise ValueError(f"the reference audio is too short: {len(x)} samples; the centred STFT needs more "
                         f"than {n_fft // 2}")
    spec = stft_magnitude(x, n_fft, hop, win)
    mel = mel_filterbank(sample_rate, n_fft, n_mels) @ spec
    return np.log(np.maximum(mel, np.float32(1e-5))).astype(np.float32)
