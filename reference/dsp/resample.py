"""Resampling to 24 kHz: a Kaiser-windowed sinc, polyphase resampler for rational rate ratios.

The official code resamples reference audio with librosa.resample(..., res_type="soxr_hq"), i.e. the
SoX resampler (libsoxr) at "high quality": a linear-phase low-pass whose pass band ends at 0.913 of
the lower Nyquist frequency, whose stop band begins at the lower Nyquist frequency, with about
20 bits of precision, the output time-aligned with the input (no delay) and the length fixed by
librosa to ceil(n * sr_out / sr_in). libsoxr builds that response in several stages (half-band and
FFT/polyphase stages, single-precision arithmetic) which are not practical to mirror bit for bit;
this module implements the same *specification* with one closed-form filter that a C port can
rebuild from the four numbers below, and the conformance suite measures how close the result is to
soxr (verify/tolerances.toml: qwen3.resample_vs_soxr_*).

The filter (all frequencies relative to the lower of the two Nyquist frequencies, f_lo = min(sr_in,
sr_out) / 2):

    PASSBAND_END   = 0.913   pass band edge (soxr HQ's passband_end)
    STOPBAND_BEGIN = 1.0     stop band edge (soxr's default stopband_begin)
    ATTENUATION_DB = 126.43  stop-band rejection, (20 + 1) bits * 20 log10(2): soxr HQ's precision
    cutoff fc      = (PASSBAND_END + STOPBAND_BEGIN) / 2 * f_lo   (the -6 dB point: 0.9565 f_lo)
    Kaiser beta    = 0.1102 * (ATTENUATION_DB - 8.7)              (Kaiser's formula; 12.974)
    half length W  = (ATTENUATION_DB - 7.95) / (2.285 * 2 pi * df / sr_in) / 2   input samples,
                     df = (STOPBAND_BEGIN - PASSBAND_END) * f_lo  (Kaiser's length estimate)

The continuous impulse response, in units of input samples t:

    h(t) = 2 fc / sr_in * sinc(2 fc / sr_in * t) * I0(beta * sqrt(1 - (t / W)^2)) / I0(beta),  |t| < W
    h(t) = 0 otherwise                        (sinc(x) = sin(pi x) / (pi x))

and output sample n (time n / sr_out, i.e. input position p = n * M / L with sr_out / sr_in = L / M in
lowest terms) is

    y[n] = sum_k x[k] h(p - k),     x[k] = 0 outside 0 <= k < len(x),

for n < round(len(x) * L / M) (half up: the length soxr produces); librosa then fixes the length to
ceil(len(x) * (sr_out / sr_in)) by padding zeros (output_length, produced_length).

There are only L distinct fractional positions (phase (n * M) mod L), so the taps form an L x TAPS
table computed once in float64, TAPS = 2 ceil(W), tap j of phase ph at t = ph / L - (j - ceil(W) + 1)
(16k -> 24k: L = 3, M = 2, W = 94.86, 190 taps; 44.1k -> 24k: L = 80, M = 147, W = 174.30, 350 taps).
Accumulation is in float64, the output is rounded to float32 once.

Measured against soxr (conformance/test_qwen3_voice.py): pass-band content agrees to float32
precision at 3:2 / 1:2 / 3:1 (soxr's own pass-band droop, ~1e-3 at 0.9 f_lo, shows at 80:147);
white noise differs by ~2e-3 (rel. L2), all of it in the 0.913-1.0 transition band, where soxr's
-6 dB point is ~0.957 f_lo and its edge slightly steeper; the fixture speech by 2e-4 (16 kHz) and
4e-6 (44.1 kHz). The first few output samples of a down-sampling differ more (soxr's start-up).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

PASSBAND_END = 0.913
STOPBAND_BEGIN = 1.0
ATTENUATION_DB = 21 * 20 * math.log10(2.0)  # 126.43 dB


def bessel_i0(x: np.ndarray) -> np.ndarray:
    """Modified Bessel function I0 by its power series sum_k ((x/2)^k / k!)^2, summed until the terms
    no longer change the sum (the form a C port uses; agrees with np.i0 to ~1e-16 relative)."""
    x = np.asarray(x, dtype=np.float64)
    half = x / 2
    term = np.ones_like(x)
    total = np.ones_like(x)
    k = 1
    while True:
        term = term * (half / k) ** 2
        new = total + term
        if np.array_equal(new, total):
            return total
        total = new
        k += 1


@dataclass(frozen=True)
class Filter:
    """The polyphase table for one rate pair: taps[phase, j] multiplies x[k0 + j - first]."""

    sr_in: int
    sr_out: int
    up: int            # L
    down: int          # M
    cutoff_hz: float   # fc
    beta: float
    half_width: float  # W, input samples
    first: int         # offset of tap 0 relative to k0 = floor(n M / L)
    taps: np.ndarray   # [L, TAPS] float64


@functools.lru_cache(maxsize=16)
def design(sr_in: int, sr_out: int) -> Filter:
    """The Kaiser-windowed sinc table for sr_in -> sr_out (see the module docstring)."""
    sr_in, sr_out = int(sr_in), int(sr_out)
    if sr_in <= 0 or sr_out <= 0:
        raise ValueError(f"sample rates must be positive, got {sr_in} -> {sr_out}")
    g = math.gcd(sr_in, sr_out)
    up, down = sr_out // g, sr_in // g
    f_lo = min(sr_in, sr_out) / 2.0
    fc = 0.5 * (PASSBAND_END + STOPBAND_BEGIN) * f_lo
    df = (STOPBAND_BEGIN - PASSBAND_END) * f_lo
    beta = 0.1102 * (ATTENUATION_DB - 8.7)
    half_width = (ATTENUATION_DB - 7.95) / (2.285 * 2.0 * math.pi * df / sr_in) / 2.0
    # k ranges over k0 - J + 1 .. k0 + J with J = ceil(W): covers |p - k| < W for any frac in [0, 1)
    j_max = int(math.ceil(half_width))
    first = -j_max + 1
    n_taps = 2 * j_max
    frac = np.arange(up, dtype=np.float64)[:, None] / up              # p - k0 for each phase
    t = frac - (first + np.arange(n_taps, dtype=np.float64))[None, :]  # p - k
    r = t / half_width
    inside = np.abs(r) < 1.0
    window = np.where(inside, bessel_i0(beta * np.sqrt(np.clip(1.0 - r * r, 0.0, None))), 0.0) / bessel_i0(beta)
    a = 2.0 * fc / sr_in
    taps = a * np.sinc(a * t) * window
    return Filter(sr_in, sr_out, up, down, fc, beta, half_width, first, taps)


def output_length(n: int, sr_in: int, sr_out: int) -> int:
    """The length librosa.resample fixes its output to: ceil(n * ratio) with the ratio as a double,
    int(np.ceil(n * (sr_out / sr_in))). Mostly ceil(n * sr_out / sr_in), but the rounding of the ratio
    can add one sample: 44100 samples at 44.1 kHz give 24001 (44100 * 0.54421768707483 =
    24000.000000000004). A C port computes the same double product."""
    return int(math.ceil(int(n) * (float(sr_out) / int(sr_in))))


def produced_length(n: int, sr_in: int, sr_out: int) -> int:
    """How many samples soxr produces: n * L / M rounded half up. librosa pads soxr's output with
    zeros (or trims it) to output_length(); so the official's samples from here on are exactly 0,
    and so are ours."""
    g = math.gcd(int(sr_in), int(sr_out))
    up, down = int(sr_out) // g, int(sr_in) // g
    return (2 * int(n) * up + down) // (2 * down)


def resample(x: np.ndarray, sr_in: int, sr_out: int = 24000) -> np.ndarray:
    """Resample a mono signal from sr_in to sr_out (float32 out; the input itself when the rates agree)."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 1:
        raise ValueError(f"resample expects mono audio [samples], got shape {x.shape}")
    if int(sr_in) == int(sr_out):
        return x
    f = design(int(sr_in), int(sr_out))
    n_out = output_length(len(x), sr_in, sr_out)
    n_val = min(n_out, produced_length(len(x), sr_in, sr_out))
    n_taps = f.taps.shape[1]
    # zero-extend so that every tap index k0 + first + j lands inside the array
    left = -f.first
    xp = np.concatenate([np.zeros(left), x.astype(np.float64), np.zeros(n_taps + 1)])
    y = np.zeros(n_out, dtype=np.float64)
    pos = np.arange(n_val, dtype=np.int64) * f.down
    k0, phase = pos // f.up, pos % f.up
    idx_j = np.arange(n_taps)
    for ph in range(f.up):  # one gather + matrix-vector product per phase
        sel = np.nonzero(phase == ph)[0]
        if not len(sel):
            continue
        for s in range(0, len(sel), 8192):  # bounded memory: 8192 x TAPS windows at a time
            part = sel[s:s + 8192]
            win = xp[(k0[part] + f.first + left)[:, None] + idx_j[None, :]]
            y[part] = win @ f.taps[ph]
    return y.astype(np.float32)
