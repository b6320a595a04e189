"""PL-BERT: transformers' AlbertModel (kokoro's CustomAlbert returns last_hidden_state).

Config (Kokoro v1.0 "plbert"): embedding 128, hidden 768, 12 heads, FFN 2048, 12 layers that all share
one layer's weights (one group, one inner layer), activation gelu_new (the tanh approximation),
LayerNorm eps 1e-12, absolute positions, token type 0. Batch 1 with no padding: the attention mask is
all ones, so it changes nothing.
"""

from __future__ import annotations

import numpy as np

from ..common.nn import layer_norm, linear, softmax

EPS = 1e-12
P = "bert.encoder.albert_layer_groups.0.albert_layers.0."


def gelu_new(x: np.ndarray) -> np.ndarray:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (transformers' NewGELUActivation)."""
    c = x.dtype.type(np.sqrt(2.0 / np.pi))
    return x.dtype.type(0.5) * x * (1 + np.tanh(c * (x + x.dtype.type(0.044715) * x ** 3)))


def albert(ids: np.ndarray, w, cfg: dict) -> np.ndarray:
    """token ids [T] -> hidden states [T, 768]."""
    t = len(ids)
    x = (w["bert.embeddings.word_embeddings.weight"][ids] + w["bert.embeddings.position_embeddings.weight"][:t]
         + w["bert.embeddings.token_type_embeddings.weight"][0])
    x = layer_norm(x, w["bert.embeddings.LayerNorm.weight"], w["bert.embeddings.LayerNorm.bias"], EPS)
    x = linear(x, w["bert.encoder.embedding_hidden_mapping_in.weight"], w["bert.encoder.embedding_hidden_mapping_in.bias"])
    heads = cfg["num_attention_heads"]
    d = x.shape[1] // heads
    scale = x.dtype.type(1.0 / np.sqrt(d))
    for _ in range(cfg["num_hidden_layers"]):  # every layer runs the one shared layer
        q = linear(x, w[P + "attention.query.weight"], w[P + "attention.query.bias"]).reshape(t, heads, d)
        k = linear(x, w[P + "attention.key.weight"], w[P + "attention.key.bias"]).reshape(t, heads, d)
        v = linear(x, w[P + "attention.value.weight"], w[P + "attention.value.bias"]).reshape(t, heads, d)
        p = softmax(np.einsum("qhd,khd->hqk", q, k) * scale, axis=-1)
        ctx = np.einsum("hqk,khd->qhd", p, v).reshape(t, heads * d)
        a = layer_norm(x + linear(ctx, w[P + "attention.dense.weight"], w[P + "attention.dense.bias"]),
                       w[P + "attention.LayerNorm.weight"], w[P + "attention.LayerNorm.bias"], EPS)
        f = linear(gelu_new(linear(a, w[P + "ffn.weight"], w[P + "ffn.bias"])), w[P + "ffn_output.weight"],
                   w[P + "ffn_output.bias"])
        x = layer_norm(f + a, w[P + "full_layer_layer_norm.weight"], w[P + "full_layer_layer_norm.bias"], EPS)
    return x
