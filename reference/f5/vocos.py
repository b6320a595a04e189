"""Vocos (Siuzdak 2023, "Vocos: Closing the gap between time-domain and Fourier-based neural vocoders"):
mel [100, T] -> 24 kHz audio, as vocos 0.1.0's Vocos.decode with a VocosBackbone and an ISTFTHead.

Backbone (vocos.models.VocosBackbone, no AdaLN): Conv1d(100 -> dim, k 7, pad 3), LayerNorm, then
num_layers ConvNeXt blocks (vocos.modules.ConvNeXtBlock)

    y = x + gamma * pwconv2(GELU(pwconv1(LayerNorm(dwconv7(x)))))      (gamma: the layer scale)

and a final LayerNorm (all LayerNorms eps 1e-6, over channels).
Head (vocos.heads.ISTFTHead): Linear(dim -> n_fft + 2) gives per frame n_fft/2 + 1 log-magnitudes and
as many phases; S = min(exp(logmag), 100) * (cos p + i sin p); audio = ISTFT(S) with a periodic Hann
window of n_fft and
  padding "center" (charactr/vocos-mel-24khz): torch.istft(center=True): overlap-add of the windowed
      inverse real FFTs, divided by the overlap-added squared window, n_fft/2 samples trimmed from each
      end: hop * (T - 1) samples;
  padding "same": the same overlap-add with (win - hop)/2 samples trimmed from each end: hop * T samples.
The padding comes from the vocoder's config.yaml (head.init_args.padding); reading it wrong shifts
the audio by n_fft/2 - (win - hop)/2 samples.
"""

from __future__ import annotations

import numpy as np

from ..common.nn import conv1d, gelu, layer_norm, linear
from ..qwen3.mel import hann_window

PADDINGS = ("center", "same")


def backbone(mel: np.ndarray, w, num_layers: int, prefix: str = "vocos.") -> np.ndarray:
    """mel [C_in, T] -> features [T, dim]."""
    p = prefix + "backbone."
    x = conv1d(np.pad(mel.astype(np.float32), ((0, 0), (3, 3))), w[p + "embed.weight"], w[p + "embed.bias"])
    x = layer_norm(x.T, w[p + "norm.weight"], w[p + "norm.bias"], 1e-6)  # [T, dim]
    dim = x.shape[1]
    for i in range(num_layers):
        b = f"{p}convnext.{i}."
        h = conv1d(np.pad(x.T, ((0, 0), (3, 3))), w[b + "dwconv.weight"], w[b + "dwconv.bias"], groups=dim).T
        h = layer_norm(h, w[b + "norm.weight"], w[b + "norm.bias"], 1e-6)
        h = gelu(linear(h, w[b + "pwconv1.weight"], w[b + "pwconv1.bias"]))
        h = linear(h, w[b + "pwconv2.weight"], w[b + "pwconv2.bias"])
        if b + "gamma" in w:
            h = w[b + "gamma"] * h
        x = x + h
    return layer_norm(x, w[p + "final_layer_norm.weight"], w[p + "final_layer_norm.bias"], 1e-6)


def head_spectrum(x: np.ndarray, w, n_fft: int, prefix: str = "vocos.") -> tuple[np.ndarray, np.ndarray]:
    """features [T, dim] -> (magnitude, phase), float32 [n_fft/2 + 1, T]."""
    y = linear(x, w[prefix + "head.out.weight"], w[prefix + "head.out.bias"]).T  # [n_fft + 2, T]
    bins = n_fft // 2 + 1
    mag = np.minimum(np.exp(y[:bins].astype(np.float64)).astype(np.float32), np.float32(100.0))
    return mag, y[bins:]


def istft(mag: np.ndarray, phase: np.ndarray, n_fft: int, hop: int, padding: str = "center") -> np.ndarray:
    """The ISTFT of vocos.spectral_ops.ISTFT (win = n_fft) of S = mag * e^{i phase} [n_fft/2 + 1, T]."""
    if padding not in PADDINGS:
        raise ValueError(f"ISTFT padding must be one of {', '.join(PADDINGS)}, not {padding!r}")
    mag64 = mag.astype(np.float64)
    ph = phase.astype(np.float32)
    re = (mag64 * np.cos(ph.astype(np.float64))).astype(np.float32)
    im = (mag64 * np.sin(ph.astype(np.float64))).astype(np.float32)
    t = mag.shape[1]
    win = hann_window(n_fft).astype(np.float64)
    frames = np.fft.irfft(re.T.astype(np.float64) + 1j * im.T.astype(np.float64), n=n_fft, axis=1) * win
    total = n_fft + hop * (t - 1)
    out = np.zeros(total)
    env = np.zeros(total)
    w2 = win * win
    for f in range(t):
        out[f * hop:f * hop + n_fft] += frames[f]
        env[f * hop:f * hop + n_fft] += w2
    trim = n_fft // 2 if padding == "center" else (n_fft - hop) // 2
    out, env = out[trim:total - trim], env[trim:total - trim]
    if len(env) and env.min() <= 1e-11:
        raise ValueError("ISTFT window envelope vanishes (too few frames)")
    return (out / env).astype(np.float32)


def decode(mel: np.ndarray, w, cfg) -> np.ndarray:
    """Vocos.decode: mel [n_mels, T] -> audio float32. cfg: a VocosConfig."""
    x = backbone(mel, w, cfg.num_layers)
    mag, phase = head_spectrum(x, w, cfg.n_fft)
    return istft(mag, phase, cfg.n_fft, cfg.hop_length, cfg.padding)
