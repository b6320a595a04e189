"""Qwen3-TTS-12Hz speech tokenizer decoder (codes -> 24 kHz audio), in numpy.

Read beside qwen_tts/core/tokenizer_12hz/modeling_qwen3_tts_tokenizer_v2.py (qwen-tts 0.1.1):

    Qwen3TTSTokenizerV2Decoder.forward          CodecDecoder.forward           (whole sequence)
    Qwen3TTSTokenizerV2Decoder.chunked_decode   CodecDecoder.chunked_decode    (300-frame pieces)
    Qwen3TTSTokenizerV2Model.decode             decode_codes                   (clamp, lengths)
    Qwen3TTSModel.generate_voice_clone (cut)    cut_reference, decode_reference (reference mode)
    -                                           StreamDecoder                  (stream mode)

One frame of 16 codes (1 semantic + 15 acoustic codebooks of 2048) becomes 1920 samples:

    quantizer   codes [T, 16] -> [codebook_dim, T]  (codebook lookups, two 1x1 output projections)
    pre_conv    causal conv k=3                     -> [latent, T]
    transformer input_proj, layers (RMSNorm, RoPE, sliding-window causal attention, layer scale,
                SiLU MLP, layer scale), norm, output_proj
    upsample    per ratio (2, 2): causal transposed conv (k = stride) + ConvNeXt block  -> [latent, 4T]
    decoder     causal conv k=7 -> [decoder_dim, 4T]; per rate r (8, 5, 4, 3): SnakeBeta, causal
                transposed conv (k=2r, stride r, right trim r), 3 residual units (dilation 1, 3, 9);
                SnakeBeta, causal conv k=7 -> [1, 1920 T]; clamp to [-1, 1]

Every stage is causal with no look-ahead: the samples of frame t depend on frames <= t only, and T
frames give exactly T * 1920 samples. That is what makes the stream mode seamless: StreamDecoder
carries the left context of every causal convolution, the overlap-add tail of every transposed
convolution and a ring of the last `sliding_window` keys/values of every attention layer, so
feeding frames in chunks of any size computes the whole-sequence forward (the same sums; in float32
only their rounding differs, because BLAS orders a sum by the matrix shape: a few 1e-7 on the
fixtures). See StreamState for the state layout.

The official pipeline does not run the whole sequence at once: Qwen3TTSTokenizerV2Model.decode uses
chunked_decode (300-frame pieces, each with up to 25 frames of left context whose audio is
dropped), so its audio has small seams every 300 frames; the voice-clone wrapper then decodes
(reference codes + generated codes) together and cuts int(ref_len / total_len * n_samples) samples.
decode_reference reproduces that scheme for A/B comparisons with official audio.

Activations are float32 unless the decoder is built with dtype=np.float64 (to measure rounding).
Ops beyond reference.common.nn (defined here): causal conv / causal transposed conv (and their
streaming forms), SnakeBeta, the float32 RoPE inverse frequencies as transformers computes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common import nn
from ..common.checkpoint import Checkpoint

PREFIX = "speech_tokenizer.decoder."


# ----------------------------------------------------------------------------- config
@dataclass(frozen=True)
class DecoderConfig:
    """Qwen3TTSTokenizerV2DecoderConfig fields the decoder uses; defaults are the official class
    defaults (codebook_dim has none: the official decoder needs it in config.json). The real 12 Hz
    codec: codebook_dim 512, hidden 512, latent 1024, 16 heads x 64, intermediate 1024, 8 layers,
    decoder_dim 1536 (note latent != hidden != heads * head_dim)."""

    codebook_dim: int
    codebook_size: int = 2048
    hidden_size: int = 1024
    latent_dim: int = 1024
    head_dim: int = 64
    num_attention_heads: int = 16
    num_key_value_heads: int = 16
    intermediate_size: int = 3072
    num_hidden_layers: int = 8
    num_quantizers: int = 16
    sliding_window: int = 72
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-5
    hidden_act: str = "silu"
    upsample_rates: tuple[int, ...] = (8, 5, 4, 3)
    upsampling_ratios: tuple[int, ...] = (2, 2)
    decoder_dim: int = 1536

    # Qwen3TTSTokenizerV2Decoder builds SplitResidualVectorQuantizer(n_q_semantic=1) whatever the
    # config's num_semantic_quantizers says: codebook 0 goes through rvq_first, 1.. through rvq_rest.
    n_semantic = 1

    @classmethod
    def from_speech_tokenizer_config(cls, st_config: dict) -> "DecoderConfig":
        d = dict(st_config.get("decoder_config", st_config))
        if "codebook_dim" not in d:
            raise KeyError("decoder_config has no codebook_dim (the official decoder requires it)")
        if d.get("attention_bias"):
            raise NotImplementedError("decoder attention_bias = true")
        rs = d.get("rope_scaling") or {}
        if rs.get("rope_type", rs.get("type", "default")) != "default":
            raise NotImplementedError(f"decoder rope_scaling {rs}")
        kw = {}
        for f in cls.__dataclass_fields__:
            if f in d:
                v = d[f]
                kw[f] = tuple(v) if isinstance(v, list) else v
        if "head_dim" not in d:  # official attention: getattr(config, "head_dim", hidden // heads)
            heads = kw.get("num_attention_heads", cls.num_attention_heads)
            kw["head_dim"] = kw.get("hidden_size", cls.hidden_size) // heads
        return cls(**kw)

    @property
    def samples_per_frame(self) -> int:
        """total_upsample = prod(upsample_rates + upsampling_ratios): 1920 for the 12 Hz codec."""
        return int(np.prod(self.upsample_rates + self.upsampling_ratios))


# ----------------------------------------------------------------------------- ops
def causal_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, dilation: int = 1) -> np.ndarray:
    """Qwen3TTSTokenizerV2CausalConvNet (stride 1): pad (k-1)*dilation zeros on the left, conv.
    With stride 1 the official 'extra padding' on the right is always 0, so T in -> T out."""
    pad = (w.shape[2] - 1) * dilation
    groups = x.shape[0] // w.shape[1]
    xp = np.concatenate([np.zeros((x.shape[0], pad), x.dtype), x], axis=1)
    return nn.conv1d(xp, w, b, dilation=dilation, groups=groups)


def causal_conv_step(x: np.ndarray, ctx: np.ndarray, w: np.ndarray, b: np.ndarray | None,
                     dilation: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The same conv on a chunk: `ctx` holds the last (k-1)*dilation inputs before the chunk (zeros
    at the start of the stream, exactly the official left padding). Returns (y, new ctx)."""
    groups = x.shape[0] // w.shape[1]
    xp = np.concatenate([ctx, x], axis=1)
    return nn.conv1d(xp, w, b, dilation=dilation, groups=groups), xp[:, xp.shape[1] - ctx.shape[1]:]


def causal_trans_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: int) -> np.ndarray:
    """Qwen3TTSTokenizerV2CausalTransConvNet: ConvTranspose1d, then drop the last k - stride
    samples (right_pad), so T in -> T * stride out."""
    y = nn.conv_transpose1d(x, w, b, stride=stride)
    return y[:, : y.shape[1] - (w.shape[2] - stride)]


def causal_trans_conv_step(x: np.ndarray, tail: np.ndarray, w: np.ndarray, b: np.ndarray | None,
                           stride: int) -> tuple[np.ndarray, np.ndarray]:
    """The same on a chunk of T inputs. The transposed conv of the chunk spans T*stride + (k - stride)
    outputs; its first k - stride outputs also receive the previous chunk's overhang, `tail` (partial
    sums without bias, zeros at the start). The first T*stride outputs are final (their bias is
    added now); the last k - stride become the new tail. Returns (y [C, T*stride], new tail).

    Order of additions equals the whole-sequence nn.conv_transpose1d for k <= 2*stride (each output
    gets at most two contributions, and a + b == b + a in floating point)."""
    n = x.shape[1] * stride
    y = nn.conv_transpose1d(x, w, None, stride=stride)
    y[:, : tail.shape[1]] += tail
    out = y[:, :n]
    if b is not None:
        out = out + b.astype(x.dtype, copy=False)[:, None]
    return out, y[:, n:].copy()


def snake_beta(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """SnakeBeta: x + 1 / (exp(beta) + 1e-9) * sin(x * exp(alpha))^2, per channel (x: [C, T])."""
    a = np.exp(alpha.astype(x.dtype))[:, None]
    bb = np.exp(beta.astype(x.dtype))[:, None]
    return x + (x.dtype.type(1.0) / (bb + x.dtype.type(1e-9))) * np.sin(x * a) ** 2


# ----------------------------------------------------------------------------- weights
class CodecDecoder:
    """The decoder's weights (from a Checkpoint) and its whole-sequence forward."""

    def __init__(self, ckpt: Checkpoint, dtype=np.float32):
        self.cfg = cfg = DecoderConfig.from_speech_tokenizer_config(ckpt.speech_tokenizer_config)
        self.dtype = np.dtype(dtype)
        if cfg.hidden_act != "silu":
            raise NotImplementedError(f"decoder hidden_act {cfg.hidden_act!r} (only silu)")
        self.w = {n[len(PREFIX):]: ckpt.get(n).astype(self.dtype) for n in ckpt.names(PREFIX)}
        if not self.w:
            raise KeyError(f"{ckpt.source or 'checkpoint'}: no speech tokenizer decoder tensors ({PREFIX}*)")
        # EuclideanCodebook.decode: embedding = embedding_sum / cluster_usage.clamp(min=1e-5)[:, None]
        self.codebooks = []
        for i in range(cfg.num_quantizers):
            part, j = ("rvq_first", i) if i < cfg.n_semantic else ("rvq_rest", i - cfg.n_semantic)
            p = f"quantizer.{part}.vq.layers.{j}._codebook."
            usage = np.maximum(self.w[p + "cluster_usage"], self.dtype.type(1e-5))
            self.codebooks.append(self.w[p + "embedding_sum"] / usage[:, None])
        self.inv_freq = nn.rope_inv_freq(cfg.head_dim, cfg.rope_theta)

    # ------------------------------------------------------------------ stages (frame-wise)
    def quantizer(self, codes: np.ndarray) -> np.ndarray:
        """SplitResidualVectorQuantizer.decode: codes [T, Q] -> [codebook_dim, T]. Each frame alone."""
        cfg, w = self.cfg, self.w
        if codes.ndim != 2 or codes.shape[1] != cfg.num_quantizers:
            raise ValueError(f"Expected {cfg.num_quantizers} layer of codes, got shape {codes.shape}")
        ns = cfg.n_semantic

        def rvq(part, lo, hi):
            q = None
            for i in range(lo, hi):  # quantized = 0 + layer_0 + layer_1 + ... (official order)
                e = self.codebooks[i][codes[:, i]]  # [T, dim]
                q = e if q is None else q + e
            return nn.linear(q, w[f"quantizer.{part}.output_proj.weight"][:, :, 0])  # 1x1 conv, no bias

        out = rvq("rvq_first", 0, ns)
        if cfg.num_quantizers > ns:
            out = out + rvq("rvq_rest", ns, cfg.num_quantizers)
        return np.ascontiguousarray(out.T)

    def attention_qkv(self, l: int, h: np.ndarray, positions: np.ndarray):
        """q [Hq, T, D], k/v [Hkv, T, D] of layer l for hidden states h [T, hidden] (after the norm),
        RoPE applied at the absolute `positions`."""
        cfg, w = self.cfg, self.w
        p = f"pre_transformer.layers.{l}.self_attn."
        t, d = h.shape[0], cfg.head_dim
        q = nn.linear(h, w[p + "q_proj.weight"]).reshape(t, cfg.num_attention_heads, d).transpose(1, 0, 2)
        k = nn.linear(h, w[p + "k_proj.weight"]).reshape(t, cfg.num_key_value_heads, d).transpose(1, 0, 2)
        v = nn.linear(h, w[p + "v_proj.weight"]).reshape(t, cfg.num_key_value_heads, d).transpose(1, 0, 2)
        cos, sin = nn.rope_cos_sin(positions, self.inv_freq)
        return nn.apply_rope(q, cos, sin), nn.apply_rope(k, cos, sin), v

    def layer_rest(self, l: int, x: np.ndarray, attn: np.ndarray) -> np.ndarray:
        """After attention: o_proj, layer scale, residual; MLP block. attn [T, Hq*D]."""
        cfg, w = self.cfg, self.w
        p = f"pre_transformer.layers.{l}."
        x = x + w[p + "self_attn_layer_scale.scale"] * nn.linear(attn, w[p + "self_attn.o_proj.weight"])
        h = nn.rms_norm(x, w[p + "post_attention_layernorm.weight"], cfg.rms_norm_eps)
        m = nn.linear(nn.silu(nn.linear(h, w[p + "mlp.gate_proj.weight"])) * nn.linear(h, w[p + "mlp.up_proj.weight"]),
                      w[p + "mlp.down_proj.weight"])
        return x + w[p + "mlp_layer_scale.scale"] * m

    def transformer_in(self, x: np.ndarray) -> np.ndarray:
        return nn.linear(x, self.w["pre_transformer.input_proj.weight"], self.w["pre_transformer.input_proj.bias"])

    def transformer_out(self, x: np.ndarray) -> np.ndarray:
        w = self.w
        x = nn.rms_norm(x, w["pre_transformer.norm.weight"], self.cfg.rms_norm_eps)
        return nn.linear(x, w["pre_transformer.output_proj.weight"], w["pre_transformer.output_proj.bias"])

    def convnext_rest(self, i: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """ConvNeXt block i after its depthwise conv: x [C, T] the block input, y the dwconv output."""
        w, p = self.w, f"upsample.{i}.1."
        h = nn.layer_norm(y.T, w[p + "norm.weight"], w[p + "norm.bias"], 1e-6)
        h = nn.linear(nn.gelu(nn.linear(h, w[p + "pwconv1.weight"], w[p + "pwconv1.bias"])),
                      w[p + "pwconv2.weight"], w[p + "pwconv2.bias"])
        return x + (w[p + "gamma"] * h).T

    def snake(self, name: str, x: np.ndarray) -> np.ndarray:
        return snake_beta(x, self.w[name + ".alpha"], self.w[name + ".beta"])

    def blocks(self):
        """(block index b, rate r, [(unit index u, dilation)]) for decoder.1 .. decoder.len(rates)."""
        return [(b, r, [(u, d) for u, d in zip((2, 3, 4), (1, 3, 9))])
                for b, r in enumerate(self.cfg.upsample_rates, start=1)]

    # ------------------------------------------------------------------ whole sequence
    def forward(self, codes: np.ndarray) -> np.ndarray:
        """Qwen3TTSTokenizerV2Decoder.forward for one sequence: codes [T, Q] (non-negative) ->
        audio [T * 1920] clamped to [-1, 1]."""
        return self.vocoder(self.latent(codes))

    def latent(self, codes: np.ndarray) -> np.ndarray:
        """First half of forward, at the frame rate: quantizer.decode, pre_conv, pre_transformer
        (its last_hidden_state): codes [T, Q] -> [T, latent]."""
        cfg, w = self.cfg, self.w
        codes = np.asarray(codes)
        t = codes.shape[0]
        hidden = self.quantizer(codes)
        hidden = causal_conv(hidden, w["pre_conv.conv.weight"], w["pre_conv.conv.bias"]).T  # [T, latent]

        # pre_transformer: positions 0..T-1, mask: key j visible to query i iff i - window < j <= i
        x = self.transformer_in(hidden)
        positions = np.arange(t)
        mask = nn.causal_mask(t, t, cfg.sliding_window)
        for l in range(cfg.num_hidden_layers):
            h = nn.rms_norm(x, w[f"pre_transformer.layers.{l}.input_layernorm.weight"], cfg.rms_norm_eps)
            q, k, v = self.attention_qkv(l, h, positions)
            x = self.layer_rest(l, x, nn.attention(q, k, v, mask, cfg.head_dim ** -0.5))
        return self.transformer_out(x)

    def vocoder(self, latent: np.ndarray) -> np.ndarray:
        """Second half of forward: upsample (x4) and decoder (x480): latent [T, latent] -> audio [T * 1920]."""
        cfg, w = self.cfg, self.w
        hidden = latent.T  # [latent, T]
        for i, factor in enumerate(cfg.upsampling_ratios):
            hidden = causal_trans_conv(hidden, w[f"upsample.{i}.0.conv.weight"], w[f"upsample.{i}.0.conv.bias"], factor)
            y = causal_conv(hidden, w[f"upsample.{i}.1.dwconv.conv.weight"], w[f"upsample.{i}.1.dwconv.conv.bias"])
            hidden = self.convnext_rest(i, hidden, y)

        wav = causal_conv(hidden, w["decoder.0.conv.weight"], w["decoder.0.conv.bias"])
        for b, r, units in self.blocks():
            p = f"decoder.{b}.block."
            wav = self.snake(p + "0", wav)
            wav = causal_trans_conv(wav, w[p + "1.conv.weight"], w[p + "1.conv.bias"], r)
            for u, d in units:
                q = f"{p}{u}."
                h = causal_conv(self.snake(q + "act1", wav), w[q + "conv1.conv.weight"], w[q + "conv1.conv.bias"], d)
                h = causal_conv(self.snake(q + "act2", h), w[q + "conv2.conv.weight"], w[q + "conv2.conv.bias"])
                wav = h + wav
        n = len(cfg.upsample_rates)
        wav = self.snake(f"decoder.{n + 1}", wav)
        wav = causal_conv(wav, w[f"decoder.{n + 2}.conv.weight"], w[f"decoder.{n + 2}.conv.bias"])
        return np.clip(wav[0], -1, 1)

    def chunked_decode(self, codes: np.ndarray, chunk_size: int = 300, left_context_size: int = 25) -> np.ndarray:
        """Qwen3TTSTokenizerV2Decoder.chunked_decode: forward on pieces of `chunk_size` frames, each
        preceded by up to `left_context_size` frames whose audio is dropped."""
        spf = self.cfg.samples_per_frame
        wavs = []
        start = 0
        while start < codes.shape[0]:
            end = min(start + chunk_size, codes.shape[0])
            context = left_context_size if start - left_context_size > 0 else start
            wavs.append(self.forward(codes[start - context: end])[context * spf:])
            start = end
        return np.concatenate(wavs) if wavs else np.zeros(0, self.dtype)


# ----------------------------------------------------------------------------- official decode paths
def decode(dec: CodecDecoder, codes: np.ndarray) -> np.ndarray:
    """The whole sequence at once (the official decoder forward): codes [T, 16] -> float [T * 1920].
    Codes are clamped at 0 as Qwen3TTSTokenizerV2Model.decode does before its decoder."""
    return dec.forward(np.maximum(np.asarray(codes, dtype=np.int64), 0))


def decode_codes(dec: CodecDecoder, codes: np.ndarray) -> np.ndarray:
    """Qwen3TTSTokenizerV2Model.decode for a batch of one (what Qwen3TTSTokenizer.decode returns):
    audio length = (number of frames whose first code is > -1) * 1920 (-1 is the batch padding value),
    codes clamped to >= 0, chunked_decode (300 frames, 25 of left context), cut to that length."""
    codes = np.asarray(codes, dtype=np.int64)
    length = int(np.sum(codes[:, 0] > -1)) * dec.cfg.samples_per_frame
    return dec.chunked_decode(np.maximum(codes, 0))[:length]


def reference_cut(ref_len: int, total_len: int, n_samples: int) -> int:
    """The voice-clone wrapper's cut, in the same (Python float) arithmetic:
    int(ref_len / max(total_len, 1) * n_samples). A C port must compute it in double the same way:
    it can differ from ref_len * 1920 when the quotient is not exact."""
    return int(ref_len / max(total_len, 1) * n_samples)


def cut_reference(wav: np.ndarray, ref_len: int, total_len: int) -> np.ndarray:
    """generate_voice_clone's last step: drop the reference part of the decoded (ref + generated)."""
    return wav[reference_cut(ref_len, total_len, wav.shape[0]):]


def decode_reference(dec: CodecDecoder, codes: np.ndarray, ref_codes: np.ndarray | None = None) -> np.ndarray:
    """Reference mode: bit-for-bit the official scheme. With reference codes (Base, ICL voice clone),
    decode (ref_codes + codes) together and cut the reference part as generate_voice_clone does;
    without (CustomVoice, VoiceDesign, x-vector-only clone), decode the generated codes alone."""
    codes = np.asarray(codes, dtype=np.int64)
    if ref_codes is None:
        return decode_codes(dec, codes)
    ref_codes = np.asarray(ref_codes, dtype=np.int64)
    total = np.concatenate([ref_codes, codes], axis=0)
    return cut_reference(decode_codes(dec, total), ref_codes.shape[0], total.shape[0])


# ----------------------------------------------------------------------------- stream mode
@dataclass
class StreamState:
    """Everything the decoder carries between chunks. `bufs` maps an official module name to one
    buffer, [channels, samples] (time last, oldest first) unless noted; all start as zeros, which is
    exactly the official zero left padding at the start of a sequence. N = len(upsample_rates),
    dim_B = decoder_dim / 2^B (block B = 1..N), d_U = 1, 3, 9 for residual unit U = 2, 3, 4.

      name                        shape                what it holds
      pos                         int                  frames consumed so far = RoPE position of the
                                                       next frame (counts on forever; no table)
      pre_conv                    [codebook_dim, 2]    last 2 quantizer outputs (input of k=3 conv)
      pre_transformer.layers.L.k  [Hkv, W, head_dim]   ring of the keys (after RoPE) of the last
      pre_transformer.layers.L.v  [Hkv, W, head_dim]   W = sliding_window positions, and their values;
                                                       position p lives in slot p % W. A new query at
                                                       p attends to p-W+1 .. p (cached, then its own
                                                       chunk); slots of positions < 0 are never read
      upsample.I.1.dwconv         [latent, 6]          last 6 inputs of ConvNeXt I's depthwise k=7
                                                       (upsample.I.0 has k = stride: nothing to carry)
      decoder.0                   [latent, 6]          last 6 inputs of the k=7 conv
      decoder.B.block.1           [dim_B, r_B]         overlap-add tail of block B's transposed conv
                                                       (k = 2 r_B): partial sums, without bias, of the
                                                       next r_B outputs, from the chunk's last input
      decoder.B.block.U.conv1     [dim_B, 6 d_U]       last 6 d_U inputs of the dilated k=7 conv of a
                                                       residual unit (its k=1 conv2 carries nothing)
      decoder.N+2                 [dim_B=N, 6]         last 6 inputs of the final k=7 conv

    SnakeBeta, LayerNorm, the MLPs and the quantizer act on one time step and keep nothing.
    StreamDecoder.sizes(cfg) lists the shapes. Real 12 Hz codec: 1,321,120 floats (5.3 MB in
    float32), of which the 8 layers' KV rings are 1,179,648 (2 x 16 x 72 x 64 each); the largest
    conv context is decoder.1.block.4.conv1, [768, 54].
    """

    pos: int = 0
    bufs: dict[str, np.ndarray] = field(default_factory=dict)


class StreamDecoder:
    """Stream mode: feed code frames in chunks of any size, get their audio at once (n frames ->
    n * 1920 samples); the concatenation equals CodecDecoder.forward on all frames fed.

    Warm-up: StreamDecoder(dec, ref_codes, warmup=50) first feeds the last `warmup` frames of the
    reference codes ("all": every frame; 0 or no ref_codes: none) and discards their audio, so the
    audio of the generated frames equals the official forward on (last N ref frames + generated)
    with the first N * 1920 samples dropped.
    """

    def __init__(self, dec: CodecDecoder, ref_codes: np.ndarray | None = None, warmup: int | str = 50):
        self.dec = dec
        self.state = StreamState(bufs=self.initial_buffers(dec.cfg, dec.dtype))
        if ref_codes is not None:
            self.prime(ref_codes, warmup)

    # ------------------------------------------------------------------ layout
    @staticmethod
    def sizes(cfg: DecoderConfig) -> dict[str, tuple[int, ...]]:
        """Shape of every state buffer (see StreamState) for a decoder config."""
        s: dict[str, tuple[int, ...]] = {"pre_conv": (cfg.codebook_dim, 2)}
        for l in range(cfg.num_hidden_layers):
            for kv in ("k", "v"):
                s[f"pre_transformer.layers.{l}.{kv}"] = (cfg.num_key_value_heads, cfg.sliding_window, cfg.head_dim)
        for i, _ in enumerate(cfg.upsampling_ratios):
            s[f"upsample.{i}.1.dwconv"] = (cfg.latent_dim, 6)
        s["decoder.0"] = (cfg.latent_dim, 6)
        for b, r in enumerate(cfg.upsample_rates, start=1):
            dim = cfg.decoder_dim // 2 ** b
            s[f"decoder.{b}.block.1"] = (dim, r)  # kernel 2r - stride r
            for u, d in zip((2, 3, 4), (1, 3, 9)):
                s[f"decoder.{b}.block.{u}.conv1"] = (dim, 6 * d)
        n = len(cfg.upsample_rates)
        s[f"decoder.{n + 2}"] = (cfg.decoder_dim // 2 ** n, 6)
        return s

    @classmethod
    def initial_buffers(cls, cfg: DecoderConfig, dtype=np.float32) -> dict[str, np.ndarray]:
        return {k: np.zeros(v, dtype) for k, v in cls.sizes(cfg).items()}

    # ------------------------------------------------------------------ use
    def prime(self, ref_codes: np.ndarray, warmup: int | str = 50) -> None:
        """Feed the last `warmup` reference frames ("all": all of them) and discard their audio."""
        ref_codes = np.asarray(ref_codes)
        n = ref_codes.shape[0] if warmup == "all" else min(int(warmup), ref_codes.shape[0])
        if n > 0:
            self.push(ref_codes[ref_codes.shape[0] - n:])

    def push(self, codes: np.ndarray) -> np.ndarray:
        """Decode a chunk of frames codes [n, 16] (n >= 0) -> audio [n * 1920], updating the state."""
        return self.push_vocoder(self.push_latent(codes))

    def push_latent(self, codes: np.ndarray) -> np.ndarray:
        """Frame-rate half of push: quantizer, pre_conv, transformer -> latent [n, latent]."""
        dec, cfg, w, st = self.dec, self.dec.cfg, self.dec.w, self.state
        buf = st.bufs
        codes = np.maximum(np.asarray(codes, dtype=np.int64).reshape(-1, cfg.num_quantizers), 0)
        n = codes.shape[0]
        if n == 0:
            return np.zeros((0, cfg.latent_dim), dec.dtype)
        hidden = dec.quantizer(codes)
        hidden, buf["pre_conv"] = causal_conv_step(hidden, buf["pre_conv"], w["pre_conv.conv.weight"],
                                                   w["pre_conv.conv.bias"])
        x = self._transformer_layers(dec.transformer_in(hidden.T), st.pos)
        st.pos += n
        return dec.transformer_out(x)

    def push_vocoder(self, latent: np.ndarray) -> np.ndarray:
        """Sample-rate half of push: upsample and decoder on latent [n, latent] -> audio [n * 1920]."""
        dec, cfg, w, buf = self.dec, self.dec.cfg, self.dec.w, self.state.bufs
        if latent.shape[0] == 0:
            return np.zeros(0, dec.dtype)
        hidden = latent.T
        for i, factor in enumerate(cfg.upsampling_ratios):
            # upsample.I.0 has kernel == stride: no overlap between inputs, nothing to carry
            hidden = causal_trans_conv(hidden, w[f"upsample.{i}.0.conv.weight"], w[f"upsample.{i}.0.conv.bias"], factor)
            key = f"upsample.{i}.1.dwconv"
            y, buf[key] = causal_conv_step(hidden, buf[key], w[key + ".conv.weight"], w[key + ".conv.bias"])
            hidden = dec.convnext_rest(i, hidden, y)

        wav, buf["decoder.0"] = causal_conv_step(hidden, buf["decoder.0"], w["decoder.0.conv.weight"],
                                                 w["decoder.0.conv.bias"])
        for b, r, units in dec.blocks():
            p = f"decoder.{b}.block."
            wav = dec.snake(p + "0", wav)
            wav, buf[p + "1"] = causal_trans_conv_step(wav, buf[p + "1"], w[p + "1.conv.weight"],
                                                       w[p + "1.conv.bias"], r)
            for u, d in units:
                q = f"{p}{u}."
                h, buf[q + "conv1"] = causal_conv_step(dec.snake(q + "act1", wav), buf[q + "conv1"],
                                                      w[q + "conv1.conv.weight"], w[q + "conv1.conv.bias"], d)
                h = causal_conv(dec.snake(q + "act2", h), w[q + "conv2.conv.weight"], w[q + "conv2.conv.bias"])  # k=1
                wav = h + wav
        nb = len(cfg.upsample_rates)
        wav = dec.snake(f"decoder.{nb + 1}", wav)
        key = f"decoder.{nb + 2}"
        wav, buf[key] = causal_conv_step(wav, buf[key], w[key + ".conv.weight"], w[key + ".conv.bias"])
        return np.clip(wav[0], -1, 1)

    def _transformer_layers(self, x: np.ndarray, p0: int) -> np.ndarray:
        """Sliding-window attention over the ring: the n new frames (positions p0 .. p0+n-1) attend
        to the cached positions max(0, p0 - W + 1) .. p0 - 1 and to each other (causally), each query
        p to keys p - W < j <= p, as transformers' sliding-window mask. Then their keys/values are
        written to slots p % W (for n > W only the last W survive)."""
        dec, cfg, w, buf = self.dec, self.dec.cfg, self.dec.w, self.state.bufs
        n, win = x.shape[0], cfg.sliding_window
        positions = np.arange(p0, p0 + n)
        past = np.arange(max(0, p0 - win + 1), p0)  # cached positions any new query can see
        kpos = np.concatenate([past, positions])
        mask = (kpos[None, :] <= positions[:, None]) & (kpos[None, :] > positions[:, None] - win)
        for l in range(cfg.num_hidden_layers):
            kr, vr = buf[f"pre_transformer.layers.{l}.k"], buf[f"pre_transformer.layers.{l}.v"]
            h = nn.rms_norm(x, w[f"pre_transformer.layers.{l}.input_layernorm.weight"], cfg.rms_norm_eps)
            q, k, v = dec.attention_qkv(l, h, positions)
            keys = np.concatenate([kr[:, past % win], k], axis=1)
            vals = np.concatenate([vr[:, past % win], v], axis=1)
            x = dec.layer_rest(l, x, nn.attention(q, keys, vals, mask, cfg.head_dim ** -0.5))
            keep = positions[-win:]
            kr[:, keep % win] = k[:, -win:]
            vr[:, keep % win] = v[:, -win:]
        return x


def stream_decode(dec: CodecDecoder, codes: np.ndarray, chunk: int | list[int] = 4, ref_codes: np.ndarray | None = None,
                  warmup: int | str = 50, return_latent: bool = False):
    """Convenience: stream `codes` through a fresh StreamDecoder (after the warm-up on `ref_codes`)
    in chunks of `chunk` frames (or the given list of chunk sizes, repeated) and concatenate the
    audio; with return_latent, also the latent frames [T, latent] (the transformer's output)."""
    sd = StreamDecoder(dec, ref_codes, warmup)
    codes = np.asarray(codes)
    sizes = [chunk] if isinstance(chunk, int) else list(chunk)
    if not sizes or min(sizes) < 1:
        raise ValueError(f"chunk sizes must be >= 1, got {chunk}")
    lat, wav = [np.zeros((0, dec.cfg.latent_dim), dec.dtype)], [np.zeros(0, dec.dtype)]
    i = k = 0
    while i < codes.shape[0]:
        c = sizes[k % len(sizes)]
        lat.append(sd.push_latent(codes[i: i + c]))
        wav.append(sd.push_vocoder(lat[-1]))
        i, k = i + c, k + 1
    audio = np.concatenate(wav)
    return (audio, np.concatenate(lat)) if return_latent else audio
