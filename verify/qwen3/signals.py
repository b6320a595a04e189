"""A deterministic speech-like test recording for `vox verify` when no --ref-audio is given.

Voice creation is checked for numerical agreement with the official encoders, which any signal with
speech's structure exercises: voiced syllables (a glottal pulse train with a gliding pitch, shaped by
moving formants), unvoiced bursts (shaped noise), pauses and a syllable envelope. Nothing here is
meant to sound good; it only has to be reproducible bit for bit and speech-like enough that the
speaker encoder and the Mimi encoder see realistic spectra.
"""

from __future__ import annotations

import numpy as np

# (F1, F2, F3) of a few vowels, Hz
VOWELS = [(730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240), (530, 1840, 2480), (570, 840, 2410)]
TEXT = "This is a synthetic reference recording made by vox verify."


def _resonator(x: np.ndarray, f: float, bw: float, sr: int) -> np.ndarray:
    """Two-pole resonator (a formant) run sample by sample, vectorized over nothing: short signals."""
    r = np.exp(-np.pi * bw / sr)
    a1, a2 = 2 * r * np.cos(2 * np.pi * f / sr), -r * r
    y = np.zeros_like(x)
    y1 = y2 = 0.0
    g = 1 - r
    for i, v in enumerate(x):
        y0 = g * v + a1 * y1 + a2 * y2
        y[i] = y0
        y2, y1 = y1, y0
    return y


def speech_like(sr: int = 24000, seconds: float = 5.0, seed: int = 0) -> np.ndarray:
    """float32 mono samples in [-1, 1): syllables of ~0.25 s with pauses, deterministic in `seed`."""
    rng = np.random.default_rng(seed)
    n = int(sr * seconds)
    out = np.zeros(n, dtype=np.float64)
    t = 0
    while t < n - sr // 10:
        dur = int(sr * rng.uniform(0.15, 0.35))
        seg = np.arange(min(dur, n - t))
        f0 = rng.uniform(100, 190) * (1 + 0.1 * np.sin(2 * np.pi * seg / max(len(seg), 1)))
        phase = np.cumsum(f0 / sr)
        pulses = (np.diff(np.floor(phase), prepend=0) > 0).astype(np.float64)  # glottal pulse train
        src = np.convolve(pulses, np.hanning(16), mode="same")
        if rng.random() < 0.3:  # an unvoiced syllable: noise instead of pulses
            src = rng.standard_normal(len(seg)) * 0.3
        f1, f2, f3 = VOWELS[rng.integers(len(VOWELS))]
        y = sum(_resonator(src, f, bw, sr) * g for f, bw, g in ((f1, 80, 1.0), (f2, 100, 0.6), (f3, 150, 0.3)))
        env = np.sin(np.pi * seg / max(len(seg), 1)) ** 0.7
        out[t:t + len(seg)] += y * env
        t += len(seg) + int(sr * rng.uniform(0.03, 0.2))
    peak = np.max(np.abs(out)) or 1.0
    return (0.7 * out / peak).astype(np.float32)
