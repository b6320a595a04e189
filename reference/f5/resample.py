"""Resampling of the reference audio to 24 kHz as infer_batch_process does it:
torchaudio.transforms.Resample(orig, 24000) with its defaults (sinc_interp_hann, lowpass_filter_width 6,
rolloff 0.99), i.e. torchaudio.functional._get_sinc_resample_kernel + _apply_sinc_resample_kernel.

With g = gcd(orig, new), o = orig / g, n = new / g, base = min(o, n) * 0.99, W = ceil(6 o / base):
kernel phase j (0 <= j < n), tap k (0 <= k < 2W + o):

    t = clamp((-j / n  +  (k - W) / o) * base, -6, 6)          (-j / n in float32, the rest float64)
    h[j, k] = sinc(pi t) * cos(pi t / 12)^2 * base / o         (rounded to float32 once)

and output sample n q + j = sum_k x[o q + k - W] h[j, k] (zeros outside the input), ceil(n len / o)
samples. The products are accumulated in float64 here and rounded once (torch: a float32 conv1d).
"""

from __future__ import annotations

import math

import numpy as np


def kernel(orig: int, new: int, width: int = 6, rolloff: float = 0.99) -> tuple[np.ndarray, int]:
    g = math.gcd(orig, new)
    o, n = orig // g, new // g
    base = min(o, n) * rolloff
    w = math.ceil(width * o / base)
    idx = np.arange(-w, w + o, dtype=np.float64)[None, :] / o
    t = (np.arange(0, -n, -1, dtype=np.float32) / np.float32(n)).astype(np.float64)[:, None] + idx
    t = np.clip(t * base, -width, width)
    window = np.cos(t * math.pi / width / 2) ** 2
    t = t * math.pi
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.where(t == 0, 1.0, np.sin(t) / t)
    k = k * (window * (base / o))
    return k.astype(np.float32), w


def resample(x: np.ndarray, orig: int, new: int = 24000) -> np.ndarray:
    """x float32 [samples] at `orig` Hz -> float32 at `new` Hz."""
    x = np.asarray(x, dtype=np.float32)
    if orig == new:
        return x
    g = math.gcd(orig, new)
    o, n = orig // g, new // g
    h, w = kernel(orig, new)
    xp = np.concatenate([np.zeros(w, np.float32), x, np.zeros(w + o, np.float32)])
    taps = h.shape[1]
    frames = (len(xp) - taps) // o + 1
    idx = np.arange(frames)[:, None] * o + np.arange(taps)[None, :]
    y = xp[idx].astype(np.float64) @ h.T.astype(np.float64)  # [frames, n]
    out = y.reshape(-1)
    target = math.ceil(n * len(x) / o)
    return out[:target].astype(np.float32)
