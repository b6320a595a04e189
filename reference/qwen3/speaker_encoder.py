"""The Base model's speaker encoder (Qwen3TTSSpeakerEncoder, ECAPA-TDNN) in numpy.

Official: qwen_tts/core/models/modeling_qwen3_tts.py. Input: the log-mel spectrogram of 24 kHz audio
(reference/qwen3/mel.py), [128, frames]; output: one speaker embedding of size enc_dim (= the
talker's hidden size), float32. Tensor names are the official ones under "speaker_encoder.".

    blocks.0        TimeDelayNetBlock(mel_dim -> C0, k0, d0)             conv 'same' (reflect) + ReLU
    blocks.1..n-2   SE-Res2Net block(C[i-1] -> C[i], k_i, d_i):
                      tdnn1 (1x1) -> Res2Net(scale s: chunk 0 passes, chunk i = TDNN(chunk i + out i-1))
                      -> tdnn2 (1x1) -> squeeze-excitation (time mean, 1x1 + ReLU, 1x1 + sigmoid) -> + input
    mfa             TimeDelayNetBlock(cat(blocks 1..n-2 outputs) -> C[-1])
    asp             attentive statistics pooling: global mean/std appended per frame, 1x1 TDNN, tanh,
                    1x1 conv, softmax over time per channel, attention-weighted mean and std
    fc              1x1 conv (2 C[-1] -> enc_dim)

Every op is float32 like the official; the reductions follow the official formulas (the global
mean is sum(x * (1 / T)), not mean(x); std = sqrt(clamp(sum(w (x - mean)^2), 1e-12))).
"""

from __future__ import annotations

import numpy as np

from ..common import nn
from ..common.checkpoint import Checkpoint
from .mel import reflect_pad

PREFIX = "speaker_encoder."


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, x.dtype.type(0))


def conv1d_same_reflect(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, dilation: int = 1) -> np.ndarray:
    """nn.Conv1d(padding="same", padding_mode="reflect"): total pad d (k - 1), left = total // 2."""
    k = w.shape[-1]
    total = dilation * (k - 1)
    left = total // 2
    if total:
        x = reflect_pad(x, left, total - left)
    return nn.conv1d(x, w, b, dilation=dilation)


class SpeakerEncoder:
    """Qwen3TTSSpeakerEncoder with the weights of a checkpoint; __call__(mel [128, T]) -> [enc_dim]."""

    def __init__(self, ckpt: Checkpoint, prefix: str = PREFIX):
        cfg = ckpt.config["speaker_encoder_config"]
        self.channels = list(cfg["enc_channels"])
        self.kernels = list(cfg["enc_kernel_sizes"])
        self.dilations = list(cfg["enc_dilations"])
        self.scale = int(cfg.get("enc_res2net_scale", 8))
        self.mel_dim = int(cfg.get("mel_dim", 128))
        self.sample_rate = int(cfg.get("sample_rate", 24000))
        self._ckpt = ckpt
        self._prefix = prefix
        self._w: dict[str, np.ndarray] = {}

    def w(self, name: str) -> np.ndarray:
        if name not in self._w:
            self._w[name] = self._ckpt.get(self._prefix + name)
        return self._w[name]

    # -------------------------------------------------------------------------------- blocks
    def tdnn(self, x: np.ndarray, name: str, dilation: int = 1) -> np.ndarray:
        return relu(conv1d_same_reflect(x, self.w(f"{name}.conv.weight"), self.w(f"{name}.conv.bias"), dilation))

    def conv1x1(self, x: np.ndarray, name: str) -> np.ndarray:
        return nn.conv1d(x, self.w(f"{name}.weight"), self.w(f"{name}.bias"))

    def res2net(self, x: np.ndarray, name: str, dilation: int) -> np.ndarray:
        c = x.shape[0]
        size = -(-c // self.scale)  # torch.chunk: chunks of ceil(C / scale)
        parts = [x[i:i + size] for i in range(0, c, size)]
        outs = []
        for i, part in enumerate(parts):
            if i == 0:
                out = part
            elif i == 1:
                out = self.tdnn(part, f"{name}.blocks.{i - 1}", dilation)
            else:
                out = self.tdnn(part + out, f"{name}.blocks.{i - 1}", dilation)
            outs.append(out)
        return np.concatenate(outs, axis=0)

    def squeeze_excitation(self, x: np.ndarray, name: str) -> np.ndarray:
        s = np.mean(x, axis=1, keepdims=True)
        s = relu(self.conv1x1(s, f"{name}.conv1"))
        s = nn.sigmoid(self.conv1x1(s, f"{name}.conv2"))
        return x * s

    def se_res2net_block(self, x: np.ndarray, i: int) -> np.ndarray:
        name = f"blocks.{i}"
        h = self.tdnn(x, f"{name}.tdnn1")
        h = self.res2net(h, f"{name}.res2net_block", self.dilations[i])
        h = self.tdnn(h, f"{name}.tdnn2")
        h = self.squeeze_excitation(h, f"{name}.se_block")
        return h + x

    @staticmethod
    def _statistics(x: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """AttentiveStatisticsPooling._compute_statistics over time with weights m ([C or 1, T])."""
        mean = np.sum(m * x, axis=1)
        var = np.sum(m * (x - mean[:, None]) ** 2, axis=1)
        std = np.sqrt(np.maximum(var, np.float32(1e-12)))
        return mean, std

    def attentive_statistics_pooling(self, x: np.ndarray) -> np.ndarray:
        t = x.shape[1]
        m = np.full((1, t), np.float32(1.0) / np.float32(t), dtype=np.float32)  # mask / mask.sum()
        mean, std = self._statistics(x, m)
        att = np.concatenate([x, np.repeat(mean[:, None], t, 1), np.repeat(std[:, None], t, 1)], axis=0)
        att = self.conv1x1(np.tanh(self.tdnn(att, "asp.tdnn")), "asp.conv")
        att = nn.softmax(att, axis=1)
        mean, std = self._statistics(x, att)
        return np.concatenate([mean, std])[:, None]  # [2C, 1]

    # -------------------------------------------------------------------------------- forward
    @property
    def min_frames(self) -> int:
        """Fewest mel frames the encoder accepts: every 'same' reflect padding must be shorter than the
        signal (torch refuses otherwise; the official fails with a RuntimeError there). 5 for the
        released configuration (kernel 3, dilation 4: 4 frames of padding per side)."""
        pads = [(k - 1) * d - (k - 1) * d // 2 for k, d in zip(self.kernels, self.dilations)]
        return max(pads) + 1

    def __call__(self, mel: np.ndarray) -> np.ndarray:
        """mel: [mel_dim, T] float32 (mel.mel_spectrogram) -> speaker embedding [enc_dim] float32."""
        x = np.asarray(mel, dtype=np.float32)
        if x.ndim != 2 or x.shape[0] != self.mel_dim:
            raise ValueError(f"speaker encoder expects a [{self.mel_dim}, frames] mel spectrogram, got {x.shape}")
        if x.shape[1] < self.min_frames:
            raise ValueError(f"audio too short for the speaker encoder: {x.shape[1]} mel frames, it needs at least "
                             f"{self.min_frames} (at 24 kHz: {min_samples(self.min_frames)} samples); the official "
                             "code fails on such input too")
        hs = []
        x = self.tdnn(x, "blocks.0", self.dilations[0])
        hs.append(x)
        for i in range(1, len(self.channels) - 1):
            x = self.se_res2net_block(x, i)
            hs.append(x)
        x = self.tdnn(np.concatenate(hs[1:], axis=0), "mfa", self.dilations[-1])
        x = self.attentive_statistics_pooling(x)
        x = self.conv1x1(x, "fc")
        return x[:, 0]


def min_samples(frames: int) -> int:
    """Fewest 24 kHz samples whose mel spectrogram has `frames` frames (1 + (n + 768 - 1024) // 256)."""
    from .mel import HOP, N_FFT

    pad = (N_FFT - HOP) // 2
    return max(N_FFT - 2 * pad + (frames - 1) * HOP, pad + 1)


def speaker_embedding(ckpt: Checkpoint, wav24k: np.ndarray) -> np.ndarray:
    """Qwen3TTSForConditionalGeneration.extract_speaker_embedding: mel of 24 kHz audio -> embedding."""
    from .mel import mel_spectrogram

    enc = SpeakerEncoder(ckpt)
    return enc(mel_spectrogram(np.asarray(wav24k, dtype=np.float32)))
