"""The speech tokenizer's encoder (Qwen3-TTS-Tokenizer-12Hz = a Mimi encoder) in numpy: 24 kHz audio
-> reference codes [frames, 16].

Official: qwen_tts/core/tokenizer_12hz/modeling_qwen3_tts_tokenizer_v2.py (Qwen3TTSTokenizerV2Model
.encode) on transformers/models/mimi/modeling_mimi.py (MimiModel.encode / _encode_frame), fed by
qwen_tts/inference/qwen3_tts_tokenizer.py (EncodecFeatureExtractor: a batch of one, no padding):

    x [1, samples]
    -> SEANet encoder     MimiConv1d(1 -> F, k7); per ratio r of reversed(upsampling_ratios):
                          residual block(s) (ELU, conv k3 dim -> dim/2, ELU, conv k1 -> dim, + x),
                          ELU, MimiConv1d(dim -> 2 dim, k 2r, stride r); ELU, MimiConv1d(-> hidden, k3)
    -> transformer        per layer: x += scale1 * attn(LN1(x)), x += scale2 * MLP(LN2(x)); causal
                          attention with RoPE (positions 0..T-1). transformers builds the mask with
                          create_causal_mask: a plain causal mask; the config's sliding_window (250) is
                          NOT applied by the encoder transformer (checked on 850-step inputs).
    -> downsample         MimiConv1d(hidden -> hidden, k4, stride 2, no bias, replicate padding): 25 -> 12.5 Hz
    -> split RVQ encode   semantic RVQ (1 codebook) and acoustic RVQ (the rest), each: 1x1 input_proj,
                          then per codebook: index = argmin_j ||r - e_j|| (torch.cdist), r -= e_index
    -> codes[:16], frames trimmed to ceil(samples / 1920)

MimiConv1d (causal, no streaming cache): with K = (k - 1) d + 1 and P = K - stride, pad P on the left
and E = ideal_length - length on the right (E completes the last stride), in the layer's pad mode
("constant" zeros for the SEANet convs, "replicate" for the downsample). The official computes E in
float32 (torch true division of int64 tensors), which is exact for inputs below 2^24 samples; here
it is integer arithmetic.

Codebooks: e = embed_sum / clamp(cluster_usage, 1e-5). Distances like torch.cdist's matrix-product
path (used when either side has more than 25 vectors): d^2 = [-2 r, |r|^2, 1] . [e, 1, |e|^2], one
float32 matrix product, clamped at 0, sqrt, argmin taking the first of equal values: the same
expression and precision as the official, so near-ties see rounding of the same kind and size (see
distances() for what is and is not bit-identical).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..common import nn
from ..common.checkpoint import Checkpoint

PREFIX = "speech_tokenizer.encoder."


# ------------------------------------------------------------------------------------------ config
@dataclass
class MimiEncoderConfig:
    sampling_rate: int = 24000
    hidden_size: int = 512
    num_filters: int = 64
    num_residual_layers: int = 1
    upsampling_ratios: list = field(default_factory=lambda: [8, 6, 5, 4])
    kernel_size: int = 7
    last_kernel_size: int = 3
    residual_kernel_size: int = 3
    dilation_growth_rate: int = 2
    compress: int = 2
    pad_mode: str = "constant"
    use_conv_shortcut: bool = False
    num_hidden_layers: int = 8
    num_attention_heads: int = 8
    num_key_value_heads: int = 8
    head_dim: int = 64
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    frame_rate: float = 12.5
    codebook_size: int = 2048
    num_quantizers: int = 32
    num_semantic_quantizers: int = 1
    valid_num_quantizers: int = 16     # Qwen3TTSTokenizerV2Config.encoder_valid_num_quantizers
    downsample_rate: int = 1920        # Qwen3TTSTokenizerV2Config.encode_downsample_rate

    @classmethod
    def from_checkpoint(cls, ckpt: Checkpoint) -> "MimiEncoderConfig":
        st = ckpt.speech_tokenizer_config
        e = dict(st["encoder_config"])
        kw = {k: e[k] for k in cls.__dataclass_fields__ if k in e}
        if "frame_rate" not in e and "_frame_rate" in e:
            kw["frame_rate"] = e["_frame_rate"]
        if "head_dim" not in e:
            kw["head_dim"] = e["hidden_size"] // e["num_attention_heads"]
        kw["valid_num_quantizers"] = int(st.get("encoder_valid_num_quantizers", 16))
        kw["downsample_rate"] = int(st.get("encode_downsample_rate", 1920))
        return cls(**kw)

    @property
    def encodec_frame_rate(self) -> int:
        """MimiConfig.encodec_frame_rate: the SEANet output rate, ceil(sr / prod(ratios)) (25 Hz)."""
        return int(np.ceil(self.sampling_rate / int(np.prod(self.upsampling_ratios))))


# ------------------------------------------------------------------------------------------ conv
def mimi_conv1d(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: int = 1, dilation: int = 1,
                pad_mode: str = "constant") -> np.ndarray:
    """MimiConv1d.forward for a causal convolution without padding cache: x [C_in, T] -> [C_out, T']."""
    k = (w.shape[-1] - 1) * dilation + 1
    padding_total = k - stride
    length = x.shape[-1]
    # _get_extra_padding_for_conv1d: n_frames = ceil((length - k + P) / stride + 1) - 1
    num = length - k + padding_total
    n_frames = -(-num // stride) + 1 - 1  # ceil(num / stride + 1) - 1 == ceil(num / stride)
    ideal_length = n_frames * stride + k - padding_total
    extra = ideal_length - length
    x = pad1d(x, padding_total, extra, pad_mode)
    return nn.conv1d(x, w, b, stride=stride, dilation=dilation)


def pad1d(x: np.ndarray, left: int, right: int, mode: str) -> np.ndarray:
    """torch.nn.functional.pad on the last axis, modes "constant" (zeros) and "replicate"."""
    if left == 0 and right == 0:
        return x
    if mode == "constant":
        return np.pad(x, ((0, 0), (left, right)))
    if mode == "replicate":
        if x.shape[-1] == 0:
            raise ValueError("replicate padding of an empty signal")
        return np.pad(x, ((0, 0), (left, right)), mode="edge")
    raise NotImplementedError(f"pad mode {mode!r}")


# ------------------------------------------------------------------------------------------ model
class MimiEncoder:
    """The encoder half of the 12 Hz speech tokenizer with a checkpoint's weights."""

    def __init__(self, ckpt: Checkpoint, prefix: str = PREFIX):
        self.cfg = MimiEncoderConfig.from_checkpoint(ckpt)
        self._ckpt = ckpt
        self._prefix = prefix
        self._w: dict[str, np.ndarray] = {}
        self._codebooks: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def w(self, name: str) -> np.ndarray | None:
        if name not in self._w:
            full = self._prefix + name
            self._w[name] = self._ckpt.get(full) if self._ckpt.has(full) else None
        return self._w[name]

    # ------------------------------------------------------------------------------ SEANet
    def _conv(self, x, name, stride=1, dilation=1, pad_mode=None):
        return mimi_conv1d(x, self.w(f"{name}.conv.weight"), self.w(f"{name}.conv.bias"), stride, dilation,
                           pad_mode or self.cfg.pad_mode)

    def seanet(self, audio: np.ndarray) -> np.ndarray:
        """MimiEncoder: audio [samples] -> [hidden, frames at 25 Hz]."""
        c = self.cfg
        x = np.asarray(audio, dtype=np.float32)[None, :]
        x = self._conv(x, "encoder.layers.0")
        i = 1
        for ratio in reversed(c.upsampling_ratios):
            for j in range(c.num_residual_layers):  # MimiResnetBlock, dilations [growth^j, 1]
                base = f"encoder.layers.{i}"
                h = self._conv(nn.elu(x), f"{base}.block.1", dilation=c.dilation_growth_rate ** j)
                h = self._conv(nn.elu(h), f"{base}.block.3")
                res = self._conv(x, f"{base}.shortcut") if c.use_conv_shortcut else x
                x = res + h
                i += 1
            i += 1  # ELU
            x = self._conv(nn.elu(x), f"encoder.layers.{i}", stride=ratio)
            i += 1
        i += 1  # ELU
        x = self._conv(nn.elu(x), f"encoder.layers.{i}")
        return x

    # ------------------------------------------------------------------------------ transformer
    def transformer(self, x: np.ndarray) -> np.ndarray:
        """MimiTransformerModel (encoder_transformer): x [T, hidden] -> [T, hidden]."""
        c = self.cfg
        t = x.shape[0]
        hq, hkv, d = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        inv_freq = nn.rope_inv_freq(d, c.rope_theta)
        cos, sin = nn.rope_cos_sin(np.arange(t), inv_freq)
        mask = nn.causal_mask(t, t)
        for li in range(c.num_hidden_layers):
            p = f"encoder_transformer.layers.{li}."
            h = nn.layer_norm(x, self.w(p + "input_layernorm.weight"), self.w(p + "input_layernorm.bias"), c.norm_eps)
            q = nn.linear(h, self.w(p + "self_attn.q_proj.weight")).reshape(t, hq, d).transpose(1, 0, 2)
            k = nn.linear(h, self.w(p + "self_attn.k_proj.weight")).reshape(t, hkv, d).transpose(1, 0, 2)
            v = nn.linear(h, self.w(p + "self_attn.v_proj.weight")).reshape(t, hkv, d).transpose(1, 0, 2)
            q = nn.apply_rope(q, cos, sin)
            k = nn.apply_rope(k, cos, sin)
            a = nn.attention(q, k, v, mask, 1.0 / np.sqrt(d))
            a = nn.linear(a, self.w(p + "self_attn.o_proj.weight"))
            x = x + self.w(p + "self_attn_layer_scale.scale") * a
            h = nn.layer_norm(x, self.w(p + "post_attention_layernorm.weight"),
                              self.w(p + "post_attention_layernorm.bias"), c.norm_eps)
            h = nn.linear(nn.gelu(nn.linear(h, self.w(p + "mlp.fc1.weight"))), self.w(p + "mlp.fc2.weight"))
            x = x + self.w(p + "mlp_layer_scale.scale") * h
        return x

    def downsample(self, x: np.ndarray) -> np.ndarray:
        """MimiModel.downsample: [hidden, T25] -> [hidden, T12.5] (k = 2 * encodec_rate / frame_rate, stride 2)."""
        return mimi_conv1d(x, self.w("downsample.conv.weight"), None, stride=2, pad_mode="replicate")

    def latent(self, audio: np.ndarray) -> np.ndarray:
        """Everything before quantization: audio [samples] -> [hidden, frames] (untrimmed)."""
        x = self.seanet(audio)
        x = self.transformer(x.T).T
        return self.downsample(x)

    # ------------------------------------------------------------------------------ quantizer
    def codebook(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(embed [size, dim], |embed|^2 [size]) of one codebook: embed_sum / clamp(cluster_usage, 1e-5)."""
        if name not in self._codebooks:
            es = self.w(f"{name}.codebook.embed_sum")
            cu = self.w(f"{name}.codebook.cluster_usage")
            e = es / np.maximum(cu, np.float32(1e-5))[:, None]
            self._codebooks[name] = (e, np.sum(e * e, axis=-1))
        return self._codebooks[name]

    def rvq_encode(self, latent: np.ndarray, name: str, n_q: int) -> np.ndarray:
        """MimiResidualVectorQuantizer.encode with n_q codebooks: latent [hidden, T] -> codes [n_q, T]."""
        proj = self.w(f"{name}.input_proj.weight")
        r = nn.conv1d(latent, proj) if proj is not None else latent
        r = np.ascontiguousarray(r.T)  # [T, dim]
        out = np.zeros((n_q, r.shape[0]), dtype=np.int64)
        for qi in range(n_q):
            e, e2 = self.codebook(f"{name}.layers.{qi}")
            idx = np.argmin(distances(r, e, e2), axis=-1)
            out[qi] = idx
            r = r - e[idx]
        return out

    def quantize(self, latent: np.ndarray, n_q: int | None = None) -> np.ndarray:
        """MimiSplitResidualVectorQuantizer.encode: [hidden, T] -> codes [n_q, T] (semantic first)."""
        c = self.cfg
        n_q = c.valid_num_quantizers if n_q is None else n_q
        n_sem = c.num_semantic_quantizers
        codes = [self.rvq_encode(latent, "quantizer.semantic_residual_vector_quantizer", min(n_q, n_sem))]
        if n_q > n_sem:
            codes.append(self.rvq_encode(latent, "quantizer.acoustic_residual_vector_quantizer", n_q - n_sem))
        return np.concatenate(codes, axis=0)

    # ------------------------------------------------------------------------------ encode
    def n_frames(self, n_samples: int) -> int:
        """Frames kept by Qwen3TTSTokenizerV2Model.encode: ceil(samples / 1920)."""
        return -(-int(n_samples) // self.cfg.downsample_rate)

    def encode(self, audio24k: np.ndarray) -> np.ndarray:
        """Reference codes of mono 24 kHz audio: int64 [frames, valid_num_quantizers] (official layout
        of VoiceClonePromptItem.ref_code)."""
        audio = np.asarray(audio24k, dtype=np.float32)
        if audio.ndim != 1:
            raise ValueError(f"the Mimi encoder expects mono audio [samples], got shape {audio.shape}")
        if len(audio) == 0:
            raise ValueError("empty audio")
        codes = self.quantize(self.latent(audio))
        return np.ascontiguousarray(codes[:, :self.n_frames(len(audio))].T)


def distances(r: np.ndarray, e: np.ndarray, e2: np.ndarray | None = None) -> np.ndarray:
    """Euclidean distances [N, K] between rows of r [N, D] and codebook rows e [K, D] in the form of
    torch.cdist's matrix-product path (aten _euclidean_dist, taken when either side has > 25 rows),
    float32:

        d = sqrt(clamp_min([-2 r, |r|^2, 1] @ [e, 1, |e|^2]^T, 0))

    The expanded form (not a direct sum of squared differences) is what decides near-ties, so the
    reference uses the same expression and precision. Bitwise agreement is not portable: torch sums
    |r|^2 with an 8-lane reduction, its MKL product is a sequential fused multiply-add chain for
    K = 18 (the fixtures) but blocked differently for K = 258 (the released 256-dim codebooks), and
    its float32 sqrt is off by one ulp on some CPUs. Measured on the fixtures with identical inputs,
    70% of these distances are bit-identical to torch.cdist and the argmins all agree; the
    conformance rows report the smallest best / second-best gap of each recording to show how far
    from a tie the codes are (the float32 error of d^2 is ~1e-7 relative)."""
    r = r.astype(np.float32, copy=False)
    e = e.astype(np.float32, copy=False)
    r2 = np.sum(r * r, axis=-1, keepdims=True)
    e2 = np.sum(e * e, axis=-1) if e2 is None else e2
    a = np.concatenate([np.float32(-2) * r, r2, np.ones_like(r2)], axis=-1)
    b = np.concatenate([e, np.ones((e.shape[0], 1), np.float32), e2[:, None].astype(np.float32)], axis=-1)
    d2 = a @ b.T
    return np.sqrt(np.maximum(d2, np.float32(0)))


def encode(ckpt: Checkpoint, audio24k: np.ndarray) -> np.ndarray:
    """Qwen3TTSTokenizer.encode(audio, sr=24000).audio_codes[0] for one 24 kHz signal: [frames, 16]."""
    return MimiEncoder(ckpt).encode(audio24k)
