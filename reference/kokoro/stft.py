"""The STFT / inverse STFT of the ISTFTNet generator (kokoro.istftnet.TorchSTFT): n_fft 20, hop 5,
periodic Hann window of 20, centered (reflect padding of n_fft/2), one-sided.

inverse() follows torch.istft: inverse real DFT of each frame, windowed, overlap-added, divided by
the overlap-added squared window, then n_fft/2 samples trimmed from each end. (The published ONNX
export skips that division: its audio is 1.5x louder, the constant envelope of hop 5 / n_fft 20.)
"""

from __future__ import annotations

import numpy as np


def hann(n: int) -> np.ndarray:
    """torch.hann_window(n, periodic=True)."""
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32)


def stft(x: np.ndarray, n_fft: int = 20, hop: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """x [N] -> magnitude, phase [n_fft/2 + 1, 1 + N // hop]."""
    pad = n_fft // 2
    xp = np.pad(x.astype(np.float64), (pad, pad), mode="reflect")
    frames = 1 + (len(xp) - n_fft) // hop
    idx = np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :]
    spec = np.fft.rfft(xp[idx] * hann(n_fft), axis=1).T  # [bins, frames]
    return np.abs(spec).astype(np.float32), np.angle(spec).astype(np.float32)


def window_envelope(frames: int, n_fft: int = 20, hop: int = 5) -> np.ndarray:
    w2 = hann(n_fft).astype(np.float64) ** 2
    env = np.zeros(n_fft + hop * (frames - 1))
    for t in range(frames):
        env[t * hop:t * hop + n_fft] += w2
    return env


def istft(mag: np.ndarray, phase: np.ndarray, n_fft: int = 20, hop: int = 5, normalize: bool = True) -> np.ndarray:
    """magnitude, phase [n_fft/2 + 1, frames] -> samples [hop * (frames - 1)]."""
    spec = mag.astype(np.float64) * np.exp(1j * phase.astype(np.float64))
    frames = spec.shape[1]
    y = np.fft.irfft(spec.T, n=n_fft, axis=1) * hann(n_fft)  # [frames, n_fft]
    out = np.zeros(n_fft + hop * (frames - 1))
    for k in range(n_fft // hop):  # frames t and t + n_fft/hop do not overlap: add in n_fft/hop strided passes
        seg = y[:, k * hop:(k + 1) * hop]  # samples t*hop + k*hop ...
        out[k * hop:k * hop + frames * hop] += seg.reshape(-1)
    if normalize:
        env = window_envelope(frames, n_fft, hop)
        out = np.divide(out, env, out=np.zeros_like(out), where=env > 1e-11)  # only the trimmed ends are ~0
    pad = n_fft // 2
    return out[pad:len(out) - pad].astype(np.float32)
