"""torch.nn.LSTM (one layer, batch_first, bidirectional), PyTorch layout: weights [4H, in] with gate
blocks (i, f, g, o); the backward direction ("_reverse") reads the sequence from its end.

The input projection of every step is one matmul over the whole sequence; only the recurrent
product is sequential.
"""

from __future__ import annotations

import numpy as np

from ..common.nn import sigmoid


def lstm_direction(x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray,
                   reverse: bool = False) -> np.ndarray:
    """x [T, in] -> h [T, H] for one direction, zero initial state."""
    t_len = x.shape[0]
    hid = w_hh.shape[1]
    gx = x @ w_ih.T + (b_ih + b_hh)  # [T, 4H]
    w_hh_t = np.ascontiguousarray(w_hh.T)
    h = np.zeros(hid, x.dtype)
    c = np.zeros(hid, x.dtype)
    out = np.empty((t_len, hid), x.dtype)
    steps = range(t_len - 1, -1, -1) if reverse else range(t_len)
    for t in steps:
        g = gx[t] + h @ w_hh_t
        i, f, gg, o = sigmoid(g[:hid]), sigmoid(g[hid:2 * hid]), np.tanh(g[2 * hid:3 * hid]), sigmoid(g[3 * hid:])
        c = f * c + i * gg
        h = o * np.tanh(c)
        out[t] = h
    return out


def bilstm(x: np.ndarray, w, prefix: str) -> np.ndarray:
    """x [T, in] -> [T, 2H]: forward and backward outputs side by side (PyTorch's order)."""
    fwd = lstm_direction(x, w[f"{prefix}.weight_ih_l0"], w[f"{prefix}.weight_hh_l0"], w[f"{prefix}.bias_ih_l0"],
                         w[f"{prefix}.bias_hh_l0"])
    bwd = lstm_direction(x, w[f"{prefix}.weight_ih_l0_reverse"], w[f"{prefix}.weight_hh_l0_reverse"],
                         w[f"{prefix}.bias_ih_l0_reverse"], w[f"{prefix}.bias_hh_l0_reverse"], reverse=True)
    return np.concatenate([fwd, bwd], axis=1)
