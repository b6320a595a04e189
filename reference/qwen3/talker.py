"""The Qwen3-TTS-12Hz talker: the autoregressive transformer that predicts code group 0 of each frame.

Mirrors qwen_tts/core/models/modeling_qwen3_tts.py:
    Qwen3TTSTalkerForConditionalGeneration   text_projection, codec_head, forward
    Qwen3TTSTalkerModel                      codec_embedding, text_embedding, layers, norm, rotary_emb
    Qwen3TTSTalkerDecoderLayer / Qwen3TTSTalkerAttention / Qwen3TTSTalkerTextMLP / Qwen3TTSRMSNorm
    Qwen3TTSTalkerRotaryEmbedding + apply_multimodal_rotary_pos_emb   (3-axis "mrope")

The decoder stack (Qwen3Decoder) is shared with the code predictor, whose layers
(Qwen3TTSDecoderLayer / Qwen3TTSAttention) have the same structure and differ only in the rotary
embedding that is passed in. Everything runs in float32 (or float64 if the weights are cast), batch 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common import nn


# ----------------------------------------------------------------------------- config
@dataclass
class DecoderConfig:
    """The fields of a Qwen3 decoder config the reference needs (talker or code predictor)."""

    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    layer_windows: list  # per layer: None (full attention) or the sliding window length
    mrope_section: list | None = None  # talker: [t, h, w] sizes in frequency pairs
    mrope_interleaved: bool = False

    @classmethod
    def from_dict(cls, c: dict) -> "DecoderConfig":
        n = int(c["num_hidden_layers"])
        head_dim = int(c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"])
        types = c.get("layer_types") or ["full_attention"] * n
        window = c.get("sliding_window")
        # Talker layers (Qwen3TTSTalkerAttention) take config.sliding_window for every layer; the
        # predictor's (Qwen3TTSAttention) only where layer_types says "sliding_attention".
        if "layer_types" in c and c.get("layer_types"):
            windows = [window if t == "sliding_attention" else None for t in types]
        else:
            windows = [window] * n
        rs = c.get("rope_scaling") or {}
        if rs.get("rope_type", rs.get("type", "default")) != "default":
            raise NotImplementedError(f"rope type {rs.get('rope_type')!r}: only the default rope is used by Qwen3-TTS")
        if c.get("partial_rotary_factor", 1.0) != 1.0:
            raise NotImplementedError("partial rotary factor")
        return cls(hidden_size=int(c["hidden_size"]), num_layers=n, num_heads=int(c["num_attention_heads"]),
                   num_kv_heads=int(c["num_key_value_heads"]), head_dim=head_dim,
                   rms_norm_eps=float(c["rms_norm_eps"]), rope_theta=float(c["rope_theta"]),
                   layer_windows=windows, mrope_section=rs.get("mrope_section"),
                   mrope_interleaved=bool(rs.get("interleaved", False)))


# ----------------------------------------------------------------------------- rotary
def mrope_cos_sin(positions: np.ndarray, inv_freq: np.ndarray, section: list, interleaved: bool):
    """cos, sin [N, head_dim] for 3-axis positions [3, N] (temporal, height, width).

    Qwen3TTSTalkerRotaryEmbedding computes the angle table of each axis (pos * inv_freq, float32),
    then apply_multimodal_rotary_pos_emb picks, per frequency, which axis it comes from:
      interleaved: frequency j comes from axis a >= 1 if j % 3 == a and j < 3 * section[a], else
                   from axis 0 (apply_interleaved_rope; 3 = len(section));
      otherwise:   contiguous chunks of section sizes (over the duplicated table) from axes 0, 1, 2, ...
    For text-only input the three axes are equal and both reduce to the ordinary 1-D rope; this is
    written out in general so that the native engine can be checked against the real rule.
    """
    pos = np.asarray(positions)
    freqs = pos.astype(np.float32)[:, :, None] * inv_freq[None, None, :]  # [3, N, D/2]
    half = inv_freq.shape[0]
    if interleaved:
        axis = np.zeros(half, dtype=np.int64)
        for i, n in enumerate(section[1:], 1):
            axis[i: n * len(section): len(section)] = i
        sel = freqs[axis, :, np.arange(half)].T  # [N, D/2]: frequency j taken from axis[j]
        emb = np.concatenate([sel, sel], axis=-1)
    else:
        full = np.concatenate([freqs, freqs], axis=-1)  # [3, N, D]
        sizes = list(section) * 2
        parts, start = [], 0
        for i, n in enumerate(sizes):
            parts.append(full[i % 3, :, start:start + n])
            start += n
        emb = np.concatenate(parts, axis=-1)
    return np.cos(emb), np.sin(emb)


# ----------------------------------------------------------------------------- KV cache
@dataclass
class KVCache:
    """Keys and values of every layer so far: lists of [num_kv_heads, T, head_dim] (post-rope keys),
    as transformers' DynamicCache holds them."""

    k: list = field(default_factory=list)
    v: list = field(default_factory=list)

    @classmethod
    def empty(cls, num_layers: int) -> "KVCache":
        return cls([None] * num_layers, [None] * num_layers)

    @property
    def length(self) -> int:
        return 0 if not self.k or self.k[0] is None else self.k[0].shape[1]

    def append(self, layer: int, k: np.ndarray, v: np.ndarray):
        if self.k[layer] is None:
            self.k[layer], self.v[layer] = k, v
        else:
            self.k[layer] = np.concatenate([self.k[layer], k], axis=1)
            self.v[layer] = np.concatenate([self.v[layer], v], axis=1)
        return self.k[layer], self.v[layer]

    def copy(self) -> "KVCache":
        return KVCache(list(self.k), list(self.v))  # arrays are never modified in place


# ----------------------------------------------------------------------------- decoder
class Qwen3Decoder:
    """A stack of Qwen3 decoder layers and the final RMSNorm (Qwen3TTSTalkerModel.layers + norm,
    Qwen3TTSTalkerCodePredictorModel.layers + norm). `prefix` names the module in the state dict,
    e.g. "talker.model." or "talker.code_predictor.model."."""

    def __init__(self, ckpt, prefix: str, cfg: DecoderConfig):
        self.cfg = cfg

        def w(name):
            return ckpt.get(prefix + name)

        def opt(name):
            return ckpt.get(prefix + name) if ckpt.has(prefix + name) else None

        self.layers = []
        for i in range(cfg.num_layers):
            p = f"layers.{i}."
            self.layers.append({
                "input_layernorm": w(p + "input_layernorm.weight"),
                "post_attention_layernorm": w(p + "post_attention_layernorm.weight"),
                **{f"{n}_proj": w(p + f"self_attn.{n}_proj.weight") for n in "qkvo"},
                **{f"{n}_bias": opt(p + f"self_attn.{n}_proj.bias") for n in "qkvo"},  # attention_bias
                "q_norm": w(p + "self_attn.q_norm.weight"),
                "k_norm": w(p + "self_attn.k_norm.weight"),
                **{f"{n}_proj_mlp": w(p + f"mlp.{n}_proj.weight") for n in ("gate", "up", "down")},
            })
        self.norm = w("norm.weight")

    def __call__(self, x: np.ndarray, cache: KVCache, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
        """x [N, hidden] (the new tokens, at positions cache.length ..), cos/sin [N, head_dim].
        Appends to `cache`; returns the final-normed hidden states [N, hidden]."""
        cfg = self.cfg
        n = x.shape[0]
        past = cache.length
        for i, L in enumerate(self.layers):
            # Qwen3TTSTalkerDecoderLayer.forward: pre-norm attention, residual, pre-norm MLP, residual
            h = nn.rms_norm(x, L["input_layernorm"], cfg.rms_norm_eps)
            q = nn.linear(h, L["q_proj"], L["q_bias"]).reshape(n, cfg.num_heads, cfg.head_dim)
            k = nn.linear(h, L["k_proj"], L["k_bias"]).reshape(n, cfg.num_kv_heads, cfg.head_dim)
            v = nn.linear(h, L["v_proj"], L["v_bias"]).reshape(n, cfg.num_kv_heads, cfg.head_dim)
            # q_norm / k_norm: RMSNorm over each head's head_dim, before the rotary embedding
            q = nn.rms_norm(q, L["q_norm"], cfg.rms_norm_eps).transpose(1, 0, 2)  # [Hq, N, D]
            k = nn.rms_norm(k, L["k_norm"], cfg.rms_norm_eps).transpose(1, 0, 2)  # [Hkv, N, D]
            v = v.transpose(1, 0, 2)
            q = nn.apply_rope(q, cos, sin)
            k = nn.apply_rope(k, cos, sin)
            k_all, v_all = cache.append(i, k, v)
            mask = nn.causal_mask(n, past + n, cfg.layer_windows[i])
            a = nn.attention(q, k_all, v_all, mask, cfg.head_dim ** -0.5)
            x = x + nn.linear(a, L["o_proj"], L["o_bias"])
            h = nn.rms_norm(x, L["post_attention_layernorm"], cfg.rms_norm_eps)
            # Qwen3TTSTalkerTextMLP: down(silu(gate(x)) * up(x))
            g = nn.silu(nn.linear(h, L["gate_proj_mlp"]))
            x = x + nn.linear(g * nn.linear(h, L["up_proj_mlp"]), L["down_proj_mlp"])
        return nn.rms_norm(x, self.norm, cfg.rms_norm_eps)


# ----------------------------------------------------------------------------- talker
class Talker:
    """Qwen3TTSTalkerForConditionalGeneration without the generation loop.

    text_embed(ids)   text_projection(text_embedding(ids)): ResizeMLP fc1 -> silu -> fc2, with biases
    codec_embed(ids)  rows of the codec embedding (codes, special codec ids and CustomVoice speakers)
    forward(x, cache) the decoder over new input embeddings -> (hidden [N, H], codec_head logits [N, V])
    """

    def __init__(self, ckpt):
        c = ckpt.config["talker_config"]
        self.config = c
        self.cfg = DecoderConfig.from_dict(c)
        self.vocab_size = int(c["vocab_size"])
        self.num_code_groups = int(c["num_code_groups"])
        self.codec_embedding = ckpt.get("talker.model.codec_embedding.weight")
        self.text_embedding = ckpt.get("talker.model.text_embedding.weight")
        tp = "talker.text_projection."
        self.fc1_w, self.fc1_b = ckpt.get(tp + "linear_fc1.weight"), ckpt.get(tp + "linear_fc1.bias")
        self.fc2_w, self.fc2_b = ckpt.get(tp + "linear_fc2.weight"), ckpt.get(tp + "linear_fc2.bias")
        if c.get("hidden_act", "silu") != "silu":
            raise NotImplementedError(f"hidden_act {c.get('hidden_act')!r}")
        self.decoder = Qwen3Decoder(ckpt, "talker.model.", self.cfg)
        self.codec_head = ckpt.get("talker.codec_head.weight")
        # Qwen3TTSTalkerRotaryEmbedding, rope_type "default" (attention_scaling 1)
        self.inv_freq = nn.rope_inv_freq(self.cfg.head_dim, self.cfg.rope_theta)

    # --- embeddings
    def text_embed(self, ids) -> np.ndarray:
        """Qwen3TTSTalkerResizeMLP(text_embedding(ids)) -> [N, hidden]."""
        e = self.text_embedding[np.asarray(ids, dtype=np.int64).reshape(-1)]
        return nn.linear(nn.silu(nn.linear(e, self.fc1_w, self.fc1_b)), self.fc2_w, self.fc2_b)

    def codec_embed(self, ids) -> np.ndarray:
        return self.codec_embedding[np.asarray(ids, dtype=np.int64).reshape(-1)]

    # --- the decoder
    def new_cache(self) -> KVCache:
        return KVCache.empty(self.cfg.num_layers)

    def rope(self, start: int, n: int):
        """cos/sin for positions start .. start+n-1. Qwen3TTSTalkerForConditionalGeneration.get_rope_index
        gives a batch-1, unpadded prompt positions 0..L-1 on all three axes (rope_deltas = 0), and each
        generated token the next position, so the three axes always carry the same index here."""
        p = np.arange(start, start + n, dtype=np.int64)
        return mrope_cos_sin(np.stack([p, p, p]), self.inv_freq, self.cfg.mrope_section or [self.cfg.head_dim // 2],
                             self.cfg.mrope_interleaved)

    def forward(self, x: np.ndarray, cache: KVCache) -> tuple[np.ndarray, np.ndarray]:
        """New input embeddings x [N, hidden] -> (final-normed hidden [N, hidden], logits [N, vocab])."""
        x = np.asarray(x, dtype=self.codec_head.dtype)
        cos, sin = self.rope(cache.length, x.shape[0])
        h = self.decoder(x, cache, cos, sin)
        return h, nn.linear(h, self.codec_head)
