"""The Qwen3-TTS-12Hz code predictor ("sub-talker"): code groups 1..15 of a frame.

Mirrors qwen_tts/core/models/modeling_qwen3_tts.py:
    Qwen3TTSTalkerCodePredictorModelForConditionalGeneration   small_to_mtp_projection, lm_head[15], forward
    Qwen3TTSTalkerCodePredictorModel                           codec_embedding[15], layers, norm, rotary_emb
    Qwen3TTSDecoderLayer / Qwen3TTSAttention                   (same structure as the talker's layers)
and the per-frame call in Qwen3TTSTalkerForConditionalGeneration.forward:

    code_predictor.generate(inputs_embeds=cat(past_hidden, codec_embedding(code0)), max_new_tokens=15)

Each frame starts a fresh KV cache. Step 0 is a prefill over two inputs: the talker's final-normed
hidden state of the position that predicted group 0, and the talker's codec embedding of the group-0
code; lm_head[0] on the last position gives the logits of group 1. Step g (1..14) feeds the code of
group g through codec_embedding[g - 1] and lm_head[g] gives group g + 1. Every input goes through
small_to_mtp_projection (a Linear with bias when the talker is wider than the predictor, else the
identity). Positions are 0, 1, 2, ... 16 with ordinary (1-D) rope.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..common import nn
from .talker import DecoderConfig, KVCache, Qwen3Decoder


class CodePredictor:
    """predict(hidden, code0, choose) -> (codes of groups 1..15, their logits).

    code0_embedding: the talker's codec embedding table (shared with a Talker to avoid a second
    copy); read from the checkpoint when not given."""

    def __init__(self, ckpt, code0_embedding: np.ndarray | None = None):
        tc = ckpt.config["talker_config"]
        c = tc["code_predictor_config"]
        self.cfg = DecoderConfig.from_dict(c)
        self.num_groups = int(c["num_code_groups"])  # 16: group 0 from the talker + 15 here
        self.vocab_size = int(c["vocab_size"])
        p = "talker.code_predictor."
        self.decoder = Qwen3Decoder(ckpt, p + "model.", self.cfg)
        n = self.num_groups - 1
        # codec_embedding[i] embeds the code of group i + 1; its width is the TALKER's hidden size
        self.codec_embedding = [ckpt.get(f"{p}model.codec_embedding.{i}.weight") for i in range(n)]
        self.lm_head = [ckpt.get(f"{p}lm_head.{i}.weight") for i in range(n)]
        if ckpt.has(p + "small_to_mtp_projection.weight"):
            self.proj_w = ckpt.get(p + "small_to_mtp_projection.weight")
            self.proj_b = ckpt.get(p + "small_to_mtp_projection.bias")
        else:  # torch.nn.Identity when talker and predictor have the same width
            self.proj_w = self.proj_b = None
        # group 0 is embedded by the talker's codec embedding (Qwen3TTSTalkerForConditionalGeneration.forward)
        self.code0_embedding = (ckpt.get("talker.model.codec_embedding.weight") if code0_embedding is None
                                else code0_embedding)
        self.inv_freq = nn.rope_inv_freq(self.cfg.head_dim, self.cfg.rope_theta)  # Qwen3TTSRotaryEmbedding

    def group_embed(self, group: int, code: int) -> np.ndarray:
        """Embedding (talker width) of `code` in group 1..15; the next talker input sums these."""
        return self.codec_embedding[group - 1][int(code)]

    def _project(self, x: np.ndarray) -> np.ndarray:
        return x if self.proj_w is None else nn.linear(x, self.proj_w, self.proj_b)

    def _step(self, x: np.ndarray, cache: KVCache, head: int) -> np.ndarray:
        start = cache.length
        cos, sin = nn.rope_cos_sin(np.arange(start, start + x.shape[0]), self.inv_freq)
        h = self.decoder(self._project(x), cache, cos, sin)
        return nn.linear(h[-1], self.lm_head[head])

    def predict(self, hidden: np.ndarray, code0: int,
                choose: Callable[[int, np.ndarray], int]) -> tuple[np.ndarray, np.ndarray]:
        """One frame: groups 1..15 given the talker's final-normed hidden state [H] at the position
        that predicted group 0, and the group-0 code. choose(group, logits) -> code picks each
        group's code from its raw logits (sampling, greedy or teacher forcing).
        Returns (codes [15] int64, logits [15, vocab])."""
        cache = KVCache.empty(self.cfg.num_layers)
        x = np.stack([np.asarray(hidden), self.code0_embedding[int(code0)]]).astype(self.lm_head[0].dtype)
        codes = np.zeros(self.num_groups - 1, dtype=np.int64)
        logits = np.zeros((self.num_groups - 1, self.vocab_size), dtype=self.lm_head[0].dtype)
        for g in range(1, self.num_groups):
            lg = self._step(x, cache, g - 1)
            logits[g - 1] = lg
            codes[g - 1] = int(choose(g, lg))
            x = self.codec_embedding[g - 1][codes[g - 1]][None, :]
        return codes, logits
