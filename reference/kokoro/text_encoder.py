"""kokoro.modules.TextEncoder: embedding, 3 x (conv k5 -> channel LayerNorm -> LeakyReLU 0.2),
bidirectional LSTM. Batch 1 without padding, so the masks are no-ops."""

from __future__ import annotations

import numpy as np

from ..common.nn import layer_norm
from .lstm import bilstm


def leaky_relu(x: np.ndarray, slope: float) -> np.ndarray:
    return np.where(x >= 0, x, x * x.dtype.type(slope))


def conv(x: np.ndarray, w, prefix: str, *, padding: int = 0, stride: int = 1, dilation: int = 1,
         bias: bool = True) -> np.ndarray:
    """Conv1d with symmetric zero padding; x [C_in, T] -> [C_out, T_out]. One matmul per kernel tap
    (y += W[:, :, k] @ x[:, k*dilation :: stride]): the same sum as an im2col GEMM, without the copy."""
    if padding:
        x = np.pad(x, ((0, 0), (padding, padding)))
    wt = w[prefix + ".weight"]
    c_out, _, k = wt.shape
    t_out = (x.shape[1] - (k - 1) * dilation - 1) // stride + 1
    y = np.zeros((c_out, max(t_out, 0)), dtype=x.dtype)
    for j in range(k):
        a = j * dilation
        y += wt[:, :, j] @ x[:, a:a + (t_out - 1) * stride + 1:stride]
    if bias:
        y += w[prefix + ".bias"][:, None]
    return y


def text_encoder(ids: np.ndarray, w, cfg: dict) -> np.ndarray:
    """token ids [T] -> t_en [512, T]."""
    x = w["text_encoder.embedding.weight"][ids].T  # [C, T]
    k = cfg["text_encoder_kernel_size"]
    for i in range(cfg["n_layer"]):
        x = conv(x, w, f"text_encoder.cnn.{i}.0", padding=(k - 1) // 2)
        x = layer_norm(x.T, w[f"text_encoder.cnn.{i}.1.gamma"], w[f"text_encoder.cnn.{i}.1.beta"], 1e-5).T
        x = leaky_relu(x, 0.2)
    return bilstm(np.ascontiguousarray(x.T), w, "text_encoder.lstm").T
