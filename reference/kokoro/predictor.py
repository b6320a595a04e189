"""kokoro.modules.ProsodyPredictor and DurationEncoder: durations, then F0 and noise (N) curves.

Duration encoder: [d_en; s] -> 3 x (bidirectional LSTM -> AdaLayerNorm(s) -> concatenate s).
Durations: LSTM -> Linear(512, 50) -> sigmoid summed over the 50 bins, divided by speed, rounded half
to even and clamped to at least 1 (KModel.forward_with_tokens). F0 / N: a shared LSTM over the
frame-aligned encoder output, then 3 AdainResBlk1d each (the second upsamples 2x) and a 1x1 conv.
"""

from __future__ import annotations

import numpy as np

from ..common.nn import linear, sigmoid
from .adain import adain_resblk1d
from .lstm import bilstm
from .text_encoder import conv


def ada_layer_norm(x: np.ndarray, s: np.ndarray, w, prefix: str, eps: float = 1e-5) -> np.ndarray:
    """x [T, C]: LayerNorm without affine over channels, then (1 + gamma) x + beta from Linear(s)."""
    c = x.shape[1]
    h = linear(s, w[prefix + ".fc.weight"], w[prefix + ".fc.bias"])
    mu = x.mean(axis=1, keepdims=True)
    d = x - mu
    n = d / np.sqrt((d * d).mean(axis=1, keepdims=True) + x.dtype.type(eps))
    return (1 + h[:c]) * n + h[c:]


def duration_encoder(d_en: np.ndarray, s: np.ndarray, w, n_layer: int) -> np.ndarray:
    """d_en [T, 512], s [128] -> d [T, 640]."""
    st = np.broadcast_to(s, (d_en.shape[0], s.shape[0]))
    x = np.concatenate([d_en, st], axis=1)
    for i in range(n_layer):
        x = bilstm(x, w, f"predictor.text_encoder.lstms.{2 * i}")
        x = ada_layer_norm(x, s, w, f"predictor.text_encoder.lstms.{2 * i + 1}")
        x = np.concatenate([x, st], axis=1)
    return x


def durations(d: np.ndarray, w, speed: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """d [T, 640] -> (float durations [T] before rounding, integer durations [T])."""
    x = bilstm(d, w, "predictor.lstm")
    logits = linear(x, w["predictor.duration_proj.linear_layer.weight"], w["predictor.duration_proj.linear_layer.bias"])
    dur = sigmoid(logits).sum(axis=-1) / np.float32(speed)
    return dur, np.maximum(np.round(dur), 1).astype(np.int64)


def f0_n(en: np.ndarray, s: np.ndarray, w) -> tuple[np.ndarray, np.ndarray]:
    """en [640, F] (frame-aligned duration-encoder output), s [128] -> F0 [2F], N [2F]."""
    x = bilstm(np.ascontiguousarray(en.T), w, "predictor.shared").T  # [512, F]
    out = []
    for branch in ("F0", "N"):
        y = x
        for i in range(3):
            y = adain_resblk1d(y, s, w, f"predictor.{branch}.{i}", upsample=(i == 1))
        out.append(conv(y, w, f"predictor.{branch}_proj")[0])
    return out[0], out[1]
