"""Layers shared by the reference models, in numpy, written to match PyTorch's float32 semantics.

Activations are float32 unless a caller passes float64 arrays (the functions keep the input dtype),
so the reference can also run in double precision to measure the official code's own rounding.
Layouts follow PyTorch: Linear weights are [out, in]; Conv1d inputs are [channels, time] (batch 1)
with weights [out, in / groups, kernel]; ConvTranspose1d weights are [in, out / groups, kernel].
"""

from __future__ import annotations

import numpy as np


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """y = x W^T + b (torch.nn.Linear)."""
    y = x @ w.T.astype(x.dtype, copy=False)
    if b is not None:
        y = y + b.astype(x.dtype, copy=False)
    return y


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """Qwen/T5 RMSNorm: x / sqrt(mean(x^2) + eps), scaled by the weight (in the input dtype)."""
    var = np.mean(x * x, axis=-1, keepdims=True)
    return w.astype(x.dtype, copy=False) * (x / np.sqrt(var + x.dtype.type(eps)))


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """torch.nn.LayerNorm over the last axis (biased variance)."""
    mu = np.mean(x, axis=-1, keepdims=True)
    d = x - mu
    var = np.mean(d * d, axis=-1, keepdims=True)
    return d / np.sqrt(var + x.dtype.type(eps)) * w.astype(x.dtype, copy=False) + b.astype(x.dtype, copy=False)


def sigmoid(x: np.ndarray) -> np.ndarray:
    # split by sign so that exp never overflows
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1 / (1 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1 + e)
    return out


def silu(x: np.ndarray) -> np.ndarray:
    return x * sigmoid(x)


def elu(x: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def erf(x: np.ndarray) -> np.ndarray:
    """Error function (numpy has none). Chebyshev-fitted erfc (Numerical Recipes, erfcc), evaluated in
    float64: fractional error below 1.2e-7 everywhere, i.e. at float32 resolution."""
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    erfc = t * np.exp(poly)
    return np.where(x >= 0, 1.0 - erfc, erfc - 1.0).astype(x.dtype)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, torch.nn.GELU() / ACT2FN["gelu"]."""
    return (x * 0.5 * (1.0 + erf(x / np.sqrt(2.0).astype(x.dtype)))).astype(x.dtype)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0))
    return e / np.sum(e, axis=axis, keepdims=True)


# ------------------------------------------------------------------------------------- rotary
def rope_inv_freq(head_dim: int, theta: float) -> np.ndarray:
    """Inverse frequencies of transformers' default rope init, with its float32 steps:
    e = float32(2i) / float32(d); x = theta ** e rounded to float32; inv = float32(1 / x).

    torch evaluates the power with its own vectorized powf (1-ulp accurate); here it is correctly
    rounded (a float64 pow rounded once), which equals torch's value (x86-64) at every frequency of
    head_dim 16..64 and all but one (1 ulp, a low frequency) of head_dim 128; cos/sin then agree to
    1.2e-7 up to position 4096. Rounding the whole expression once from float64 instead differs from
    torch at a third of the frequencies of head_dim 128, which moves cos/sin by 6e-5 at position 1000
    (the angle is position * inv_freq). The C core computes
    1.0f / (float)pow((double)theta, (double)((float)(2 * i) / (float)d)).
    """
    e = np.arange(0, head_dim, 2).astype(np.float32) / np.float32(head_dim)
    x = (np.float64(theta) ** e.astype(np.float64)).astype(np.float32)
    return (np.float32(1.0) / x).astype(np.float32)


def rope_cos_sin(positions: np.ndarray, inv_freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin of shape [len(positions), head_dim]: the angle table duplicated, as in HF (cat(f, f))."""
    freqs = positions.astype(np.float32)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb), np.sin(emb)


def rotate_half(x: np.ndarray) -> np.ndarray:
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x: [..., T, head_dim]; cos/sin: [T, head_dim]."""
    return x * cos.astype(x.dtype) + rotate_half(x) * sin.astype(x.dtype)


# ------------------------------------------------------------------------------------- attention
def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None, scale: float) -> np.ndarray:
    """Scaled dot-product attention with grouped KV heads.

    q: [Hq, Tq, D], k/v: [Hkv, Tk, D]; query head h reads KV head h // (Hq / Hkv) (repeat_kv).
    mask: boolean [Tq, Tk], True where attending is allowed. Returns [Tq, Hq * D].
    """
    hq, hkv = q.shape[0], k.shape[0]
    rep = hq // hkv
    k = np.repeat(k, rep, axis=0)
    v = np.repeat(v, rep, axis=0)
    s = (q @ np.swapaxes(k, -1, -2)) * q.dtype.type(scale)
    if mask is not None:
        s = np.where(mask[None], s, -np.inf)
    p = softmax(s, axis=-1)
    o = p @ v  # [Hq, Tq, D]
    return np.swapaxes(o, 0, 1).reshape(q.shape[1], hq * q.shape[2])


def causal_mask(tq: int, tk: int, window: int | None = None) -> np.ndarray:
    """Query i (absolute position tk - tq + i) may see key j <= its position; with `window`, only the
    last `window` positions (j > pos - window), the transformers sliding-window rule."""
    qpos = np.arange(tk - tq, tk)[:, None]
    kpos = np.arange(tk)[None, :]
    m = kpos <= qpos
    if window is not None:
        m &= kpos > qpos - window
    return m


# ------------------------------------------------------------------------------------- convolutions
def conv1d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, stride: int = 1, dilation: int = 1,
           groups: int = 1) -> np.ndarray:
    """torch.nn.functional.conv1d without padding: x [C_in, T] -> [C_out, T_out]."""
    c_in, t = x.shape
    c_out, cpg, k = w.shape
    span = (k - 1) * dilation + 1
    t_out = (t - span) // stride + 1
    if t_out <= 0:
        return np.zeros((c_out, 0), dtype=x.dtype)
    # windows[c, t_out, k] = x[c, t*stride + k*dilation]
    idx = np.arange(t_out)[:, None] * stride + np.arange(k)[None, :] * dilation
    cols = x[:, idx]  # [C_in, T_out, K]
    w = w.astype(x.dtype, copy=False)
    if groups == 1:
        y = np.einsum("ctk,ock->ot", cols, w, optimize=True) if k > 1 else w[:, :, 0] @ cols[:, :, 0]
    else:
        og = c_out // groups
        cols = cols.reshape(groups, cpg, t_out, k)
        wg = w.reshape(groups, og, cpg, k)
        y = np.einsum("gctk,gock->got", cols, wg, optimize=True).reshape(c_out, t_out)
    if b is not None:
        y = y + b.astype(x.dtype, copy=False)[:, None]
    return y


def conv_transpose1d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None, stride: int = 1,
                     groups: int = 1) -> np.ndarray:
    """torch.nn.functional.conv_transpose1d without padding: x [C_in, T] -> [C_out, (T-1)*stride + K]."""
    c_in, t = x.shape
    _, opg, k = w.shape
    c_out = opg * groups
    w = w.astype(x.dtype, copy=False)
    ipg = c_in // groups
    # y[o, t, k] = sum_c x[c, t] w[c, o, k] within each group
    xg = x.reshape(groups, ipg, t)
    wg = w.reshape(groups, ipg, opg, k)
    y = np.einsum("gct,gcok->gotk", xg, wg, optimize=True).reshape(c_out, t, k)
    out = np.zeros((c_out, (t - 1) * stride + k), dtype=x.dtype)
    for j in range(k):  # overlap-add: input step t lands on outputs t*stride .. t*stride + K - 1
        out[:, j: j + stride * (t - 1) + 1: stride] += y[:, :, j]
    if b is not None:
        out = out + b.astype(x.dtype, copy=False)[:, None]
    return out
