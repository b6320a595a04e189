"""The harmonic-plus-noise source of the ISTFTNet generator (kokoro.istftnet.SourceModuleHnNSF, SineGen).

F0 (one value per 300 samples at 24 kHz) is repeated to sample rate; harmonics 1..9 of it become
phase increments (f / sr mod 1) whose running sum is taken at frame rate (linear interpolation down
by 300, cumulative sum, times 2 pi, times 300, linear interpolation back up), giving sines of
amplitude 0.1 where F0 > 10 Hz (voiced). Additive Gaussian noise has std 0.003 where voiced and
0.1/3 where not. A Linear(9, 1) and tanh merge the harmonics into one excitation signal.

The official code draws a random initial phase per harmonic (torch.rand; the fundamental's is 0)
and the noise (torch.randn_like), N(0, amp^2) on each of the 9 harmonics, which the Linear(9, 1) then
sums: a sum of independent normals, i.e. one normal of std amp * sqrt(sum of the weights squared).
Here the merged noise is drawn once per sample (the same distribution, 9x fewer draws), and both
come from Philox4x32-10 keyed by the seed, with the index of the span (sentence) in a session as the
counter's last word:
  initial phase of harmonic h:  uniform from counter (0, h, 1, span)
  noise of sample n:            standard normal from counter (n, 0, 3, span), Box-Muller on
                                u1 = 1 - uniform(words 0, 1), u2 = uniform(words 2, 3),
                                times amp(n) * sqrt(sum_h w_h^2), added before the tanh
(each uniform takes 27 + 26 bits as reference/common/philox.uniform does), or, with noise="zero",
are zero: the mode that matches the official code with its randomness zeroed and the ONNX export.
The initial phase is added to sample 0 only, which the x300 linear downsampling (it reads samples
300 i + 149 and 300 i + 150) never reads: in the official code as here, it has no effect.
"""

from __future__ import annotations

import numpy as np

from ..common.philox import philox4x32_10, seed_key

SR = 24000
HARMONICS = 9
SINE_AMP = np.float32(0.1)
NOISE_STD = np.float32(0.003)
VOICED_THRESHOLD = 10.0
STREAM_PHASE, STREAM_NOISE = 1, 3  # stream 2 was the per-harmonic noise of earlier versions


def _u53(w_hi: np.ndarray, w_lo: np.ndarray) -> np.ndarray:
    a = w_hi.astype(np.uint64) >> np.uint64(5)
    b = w_lo.astype(np.uint64) >> np.uint64(6)
    return (a * np.uint64(67108864) + b).astype(np.float64) / 9007199254740992.0


def philox_phases(seed: int, span: int = 0) -> np.ndarray:
    """Initial phase (in cycles, [0, 1)) of each harmonic; the fundamental's is 0."""
    h = np.arange(HARMONICS, dtype=np.uint64)
    z = np.zeros_like(h)
    r = philox4x32_10(np.stack([z, h, z + np.uint64(STREAM_PHASE), z + np.uint64(span)], -1), seed_key(seed))
    u = _u53(r[:, 0], r[:, 1]).astype(np.float32)
    u[0] = 0
    return u


def philox_normal(seed: int, n: int, span: int = 0) -> np.ndarray:
    """Standard normal noise [n], one per sample."""
    s = np.arange(n, dtype=np.uint64)
    z = np.zeros_like(s)
    r = philox4x32_10(np.stack([s, z, z + np.uint64(STREAM_NOISE), z + np.uint64(span)], -1), seed_key(seed))
    u1 = 1.0 - _u53(r[:, 0], r[:, 1])  # (0, 1]: the log is finite
    u2 = _u53(r[:, 2], r[:, 3])
    return (np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)).astype(np.float32)


def noise_amplitude(f0: np.ndarray) -> np.ndarray:
    """The official per-harmonic noise std at sample rate: 0.003 where voiced, 0.1 / 3 where not."""
    uv = (f0 > VOICED_THRESHOLD).astype(np.float32)
    return uv * NOISE_STD + (1 - uv) * (SINE_AMP / np.float32(3))


def merged_noise(f0: np.ndarray, lw: np.ndarray, *, seed: int = 0, span: int = 0) -> np.ndarray:
    """The source noise after the Linear(9, 1) merge [N]: amp * |lw| * one standard normal per sample."""
    gain = np.float32(np.sqrt(np.sum(lw.astype(np.float64) ** 2)))
    return noise_amplitude(f0) * gain * philox_normal(seed, f0.shape[0], span)


def _interp_linear(x: np.ndarray, out_len: int, scale: np.float32) -> np.ndarray:
    """F.interpolate(mode="linear", align_corners=False) along axis 0, rounded as PyTorch's CPU kernel
    rounds (compiled with fused multiply-adds): src = fma(scale, i + 0.5, -0.5) clamped at 0, then
    y = fma(w0, x[i0], w1 * x[i1]). The phase being interpolated reaches 1e5 radians, where one
    float32 rounding is a visible phase error, so the order of operations is part of the spec."""
    i = np.arange(out_len, dtype=np.float32)
    src = (np.float64(scale) * (i + np.float32(0.5)) - 0.5).astype(np.float32)  # one rounding, as fma
    src = np.maximum(src, np.float32(0))
    i0 = src.astype(np.int64)
    i1 = np.minimum(i0 + 1, x.shape[0] - 1)
    l1 = (src - i0.astype(np.float32))[:, None]
    l0 = np.float32(1) - l1
    return (l0.astype(np.float64) * x[i0] + l1 * x[i1]).astype(np.float32)


def sine_source(f0: np.ndarray, upsample: int, *, noise: str = "zero", seed: int = 0, span: int = 0) -> np.ndarray:
    """f0 at sample rate [N] (N a multiple of `upsample`) -> voiced harmonic sines [N, 9] (the noise is
    added after the merge: merged_noise)."""
    if noise not in ("zero", "philox"):
        raise ValueError(f"noise must be 'zero' or 'philox', not {noise!r}")
    n = f0.shape[0]
    fn = f0[:, None] * np.arange(1, HARMONICS + 1, dtype=np.float32)
    rad = np.mod(fn / np.float32(SR), np.float32(1))
    if noise == "philox":
        rad[0] = rad[0] + philox_phases(seed, span)
    frames = n // upsample
    # torch passes scale_factor 1/300 down; the kernel uses 1 / scale_factor, which is 300 in float32
    down = _interp_linear(rad, frames, np.float32(upsample))
    phase = np.cumsum(down.astype(np.float64), axis=0).astype(np.float32) * np.float32(2) * np.float32(np.pi)
    up = _interp_linear(phase * np.float32(upsample), n, np.float32(1.0 / upsample))
    sines = np.sin(up) * SINE_AMP
    uv = (f0 > VOICED_THRESHOLD).astype(np.float32)[:, None]
    return sines * uv


def harmonic_source(f0_frames: np.ndarray, w, upsample: int, *, noise: str = "zero", seed: int = 0,
                    span: int = 0) -> np.ndarray:
    """F0 curve [L] -> merged excitation [L * upsample] (f0_upsamp nearest, SineGen, Linear, tanh)."""
    f0 = np.repeat(f0_frames.astype(np.float32), upsample)
    s = sine_source(f0, upsample, noise=noise, seed=seed, span=span)
    lw = w["decoder.generator.m_source.l_linear.weight"]
    lb = w["decoder.generator.m_source.l_linear.bias"]
    pre = s @ lw[0] + lb[0]
    if noise == "philox":
        pre = pre + merged_noise(f0, lw[0], seed=seed, span=span)
    return np.tanh(pre)
