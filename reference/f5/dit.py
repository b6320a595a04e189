"""The F5-TTS flow estimator: a DiT with adaLN-Zero conditioning on the flow time (Chen et al. 2024,
"F5-TTS: A Fairytaler that Fakes Fluent and Faithful Speech with Flow Matching"; Peebles & Xie 2023
for DiT), as f5_tts.model.backbones.dit.DiT with batch 1 (no attention mask: the official sampler
passes mask=None for a single utterance).

    v = DiT(x_t, cond, text, t)      x_t, cond [N, 100] (noisy mel, masked reference mel), text [Nt] ids

1. Text encoder (TextEmbedding): ids + 1 (0 is the filler), cut or padded with 0 to N frames;
   embedding; + a fixed sinusoidal table (precompute_freqs_cis: [cos | sin] of position * 10000^(-2i/d));
   ConvNeXt-V2 blocks (Woo et al. 2023) x conv_layers:
       y = x + pwconv2(GRN(GELU(pwconv1(LayerNorm(dwconv7(x))))))
       GRN(x) = gamma * (x * Nx) + beta + x,  Nx = |x|_time / (mean_channels |x|_time + 1e-6)
   (the L2 norm runs over the TIME axis, all N positions). v1 (text_mask_padding) zeroes the filler
   positions before the blocks and after each one; v0 does not. Dropping the text (the unconditional
   branch of classifier-free guidance) replaces every id by the filler 0 after the filler mask is taken.
2. Input embedding: h = proj([x_t, cond, text]); h = h + Mish(conv31(Mish(conv31(h)))) (grouped 16).
   Dropping the audio condition (unconditional branch) zeroes cond.
3. Time embedding: sinusoidal(1000 t) of 256 (sin | cos), Linear, SiLU, Linear -> c.
4. depth x DiT block (adaLN-Zero):
       shift1, scale1, gate1, shift2, scale2, gate2 = Linear(SiLU(c))
       h = h + gate1 * Attn(LN(h) (1 + scale1) + shift1)
       h = h + gate2 * FF(LN(h) (1 + scale2) + shift2)          FF: Linear, GELU(tanh), Linear
   Attention: 16 heads of 64, softmax(q k^T / sqrt(64)) v, with rotary embedding (x_transformers'
   RotaryEmbedding: interleaved pairs (2i, 2i+1) rotated by position * inv_freq_i) on all heads (v1)
   or on the first pe_attn_head heads (v0: 1).
5. Output: LN(h) (1 + scale) + shift with scale, shift = Linear(SiLU(c)); Linear -> [N, 100].
LayerNorms are eps 1e-6 without affine parameters in the blocks; those of the ConvNeXt blocks have them.
"""

from __future__ import annotations

import math

import numpy as np

from ..common.nn import attention, conv1d, gelu, layer_norm, linear, rope_inv_freq, silu
from .config import DiTConfig

P = "transformer."


def _ln(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    mu = np.mean(x, axis=-1, keepdims=True)
    d = x - mu
    return d / np.sqrt(np.mean(d * d, axis=-1, keepdims=True) + np.float32(eps))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """torch.nn.GELU(approximate="tanh"), evaluated in float64 and rounded."""
    x64 = x.astype(np.float64)
    return (0.5 * x64 * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64 ** 3)))).astype(x.dtype)


def mish(x: np.ndarray) -> np.ndarray:
    """torch.nn.Mish: x tanh(ln(1 + e^x)), in float64 and rounded."""
    x64 = x.astype(np.float64)
    return (x64 * np.tanh(np.logaddexp(0.0, x64))).astype(x.dtype)


def sinus_table(dim: int, length: int, theta: float = 10000.0) -> np.ndarray:
    """precompute_freqs_cis(dim, length): [cos(n f_i) | sin(n f_i)], f_i = 1 / theta^(2i/dim), float32."""
    f = rope_inv_freq(dim, theta)
    ang = (np.arange(length, dtype=np.float32)[:, None] * f[None, :]).astype(np.float32)
    a64 = ang.astype(np.float64)
    return np.concatenate([np.cos(a64), np.sin(a64)], axis=-1).astype(np.float32)


def _grn(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    gx = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=0, keepdims=True)).astype(np.float32)  # over time
    nx = gx / (np.mean(gx, axis=-1, keepdims=True) + np.float32(1e-6))
    return gamma.reshape(1, -1) * (x * nx) + beta.reshape(1, -1) + x


def convnext_v2(x: np.ndarray, w, b: str) -> np.ndarray:
    """f5_tts ConvNeXtV2Block on x [N, d]."""
    d = x.shape[1]
    h = conv1d(np.pad(x.T, ((0, 0), (3, 3))), w[b + "dwconv.weight"], w[b + "dwconv.bias"], groups=d).T
    h = layer_norm(h, w[b + "norm.weight"], w[b + "norm.bias"], 1e-6)
    h = gelu(linear(h, w[b + "pwconv1.weight"], w[b + "pwconv1.bias"]))
    h = _grn(h, w[b + "grn.gamma"], w[b + "grn.beta"])
    return x + linear(h, w[b + "pwconv2.weight"], w[b + "pwconv2.bias"])


def text_embedding(text: np.ndarray, seq_len: int, w, cfg: DiTConfig, drop_text: bool = False) -> np.ndarray:
    """TextEmbedding.forward: ids [Nt] (vocabulary indices, no +1) -> [seq_len, text_dim]."""
    ids = np.asarray(text, dtype=np.int64)[:seq_len] + 1
    ids = np.concatenate([ids, np.zeros(seq_len - len(ids), np.int64)])
    filler = ids == 0
    if drop_text:
        ids = np.zeros_like(ids)
    table = w[P + "text_embed.text_embed.weight"]
    if ids.size and (ids.max() >= table.shape[0]):
        raise ValueError(f"token id {int(ids.max()) - 1} is outside the text embedding ({table.shape[0] - 1} symbols)")
    x = np.asarray(table, dtype=np.float32)[ids]
    if cfg.conv_layers > 0:
        x = x + sinus_table(cfg.text_dim, seq_len)
        if cfg.text_mask_padding:
            x[filler] = 0
        for i in range(cfg.conv_layers):
            x = convnext_v2(x, w, f"{P}text_embed.text_blocks.{i}.")
            if cfg.text_mask_padding:
                x[filler] = 0
    return x.astype(np.float32)


def input_embedding(x: np.ndarray, cond: np.ndarray, text_emb: np.ndarray, w, drop_audio_cond: bool = False) -> np.ndarray:
    """InputEmbedding.forward: [N, 100] x2 + [N, text_dim] -> [N, dim]."""
    if drop_audio_cond:
        cond = np.zeros_like(cond)
    b = P + "input_embed."
    h = linear(np.concatenate([x, cond, text_emb], axis=-1), w[b + "proj.weight"], w[b + "proj.bias"])
    c0, c2 = b + "conv_pos_embed.conv1d.0.", b + "conv_pos_embed.conv1d.2."
    k0 = w[c0 + "weight"]
    groups = h.shape[1] // k0.shape[1]
    pad = k0.shape[2] // 2
    y = mish(conv1d(np.pad(h.T, ((0, 0), (pad, pad))), k0, w[c0 + "bias"], groups=groups))
    y = mish(conv1d(np.pad(y, ((0, 0), (pad, pad))), w[c2 + "weight"], w[c2 + "bias"], groups=groups))
    return y.T + h


def time_embedding(t: float, w) -> np.ndarray:
    """TimestepEmbedding: float32 scalar t -> [dim]. SinusPositionEmbedding(256) with scale 1000:
    f_i = exp(-i ln(10000) / 127), angle = (1000 t) f_i, [sin | cos]; then Linear, SiLU, Linear."""
    half = 128
    k = np.float32(-(math.log(10000) / (half - 1)))
    f = np.exp((np.arange(half, dtype=np.float32) * k).astype(np.float64)).astype(np.float32)
    ang = (np.float32(1000) * np.float32(t)) * f
    a64 = ang.astype(np.float64)
    emb = np.concatenate([np.sin(a64), np.cos(a64)]).astype(np.float32)
    b = P + "time_embed.time_mlp."
    h = silu(linear(emb[None], w[b + "0.weight"], w[b + "0.bias"]))
    return linear(h, w[b + "2.weight"], w[b + "2.bias"])[0]


def rope_tables(n: int, w, dim_head: int) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin [n, dim_head] of x_transformers' RotaryEmbedding: angle (position * inv_freq_i) repeated
    for the pair (2i, 2i+1). inv_freq is the checkpoint's buffer when it has one (it is what the
    official model uses), else 1 / 10000^(2i / dim_head)."""
    key = P + "rotary_embed.inv_freq"
    inv = np.asarray(w[key], np.float32) if key in w else rope_inv_freq(dim_head, 10000.0)
    ang = (np.arange(n, dtype=np.float32)[:, None] * inv[None, :]).astype(np.float32)
    ang = np.repeat(ang, 2, axis=1).astype(np.float64)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def _rotate_pairs(x: np.ndarray) -> np.ndarray:
    """x_transformers rotate_half: (x0, x1) -> (-x1, x0) for each interleaved pair."""
    y = np.empty_like(x)
    y[..., 0::2] = -x[..., 1::2]
    y[..., 1::2] = x[..., 0::2]
    return y


def attention_block(h: np.ndarray, w, b: str, cfg: DiTConfig, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    n = h.shape[0]
    hd, dh = cfg.heads, cfg.dim_head
    q = linear(h, w[b + "to_q.weight"], w[b + "to_q.bias"]).reshape(n, hd, dh).transpose(1, 0, 2)
    k = linear(h, w[b + "to_k.weight"], w[b + "to_k.bias"]).reshape(n, hd, dh).transpose(1, 0, 2)
    v = linear(h, w[b + "to_v.weight"], w[b + "to_v.bias"]).reshape(n, hd, dh).transpose(1, 0, 2)
    r = hd if cfg.pe_attn_head is None else cfg.pe_attn_head
    q, k = q.copy(), k.copy()
    q[:r] = q[:r] * cos + _rotate_pairs(q[:r]) * sin
    k[:r] = k[:r] * cos + _rotate_pairs(k[:r]) * sin
    o = attention(q, k, v, None, 1.0 / math.sqrt(dh))
    return linear(o, w[b + "to_out.0.weight"], w[b + "to_out.0.bias"])


def dit_block(h: np.ndarray, c: np.ndarray, w, i: int, cfg: DiTConfig, cos, sin) -> np.ndarray:
    b = f"{P}transformer_blocks.{i}."
    mod = linear(silu(c)[None], w[b + "attn_norm.linear.weight"], w[b + "attn_norm.linear.bias"])[0]
    shift1, scale1, gate1, shift2, scale2, gate2 = np.split(mod, 6)
    x = _ln(h) * (1 + scale1) + shift1
    h = h + gate1 * attention_block(x, w, b + "attn.", cfg, cos, sin)
    x = _ln(h) * (1 + scale2) + shift2
    ff = linear(gelu_tanh(linear(x, w[b + "ff.ff.0.0.weight"], w[b + "ff.ff.0.0.bias"])),
                w[b + "ff.ff.2.weight"], w[b + "ff.ff.2.bias"])
    return h + gate2 * ff


def transformer(h: np.ndarray, c: np.ndarray, w, cfg: DiTConfig) -> np.ndarray:
    """The DiT blocks and the output layer on the input embedding h [N, dim] with time embedding c."""
    cos, sin = rope_tables(h.shape[0], w, cfg.dim_head)
    for i in range(cfg.depth):
        h = dit_block(h, c, w, i, cfg, cos, sin)
    mod = linear(silu(c)[None], w[P + "norm_out.linear.weight"], w[P + "norm_out.linear.bias"])[0]
    scale, shift = np.split(mod, 2)
    h = _ln(h) * (1 + scale) + shift
    return linear(h, w[P + "proj_out.weight"], w[P + "proj_out.bias"])


def dit(x: np.ndarray, cond: np.ndarray, text_emb: np.ndarray, t: float, w, cfg: DiTConfig,
        drop_audio_cond: bool = False) -> np.ndarray:
    """One DiT evaluation: the predicted flow [N, 100]. text_emb from text_embedding (computed once per
    branch: the official model caches it across steps)."""
    h = input_embedding(x.astype(np.float32), cond.astype(np.float32), text_emb, w, drop_audio_cond)
    return transformer(h, time_embedding(t, w), w, cfg)
