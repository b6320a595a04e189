"""Style-conditioned blocks shared by the prosody predictor and the decoder (kokoro/istftnet.py).

AdaIN1d: InstanceNorm1d (per-channel statistics over time, biased variance, eps 1e-5, affine
weight/bias) scaled by (1 + gamma) and shifted by beta, both from a Linear of the style vector.
AdainResBlk1d: StyleGAN-style residual block with LeakyReLU(0.2), an optional 2x upsampling (a
depthwise transposed conv on the residual path, nearest repeat on the shortcut) and a 1x1 shortcut
conv when the width changes; the sum is scaled by 1/sqrt(2).
AdaINResBlock1: HiFi-GAN resblock with AdaIN and Snake activations, x + sin(a x)^2 / a.
"""

from __future__ import annotations

import numpy as np

from ..common.nn import conv_transpose1d, linear
from .text_encoder import conv, leaky_relu

RSQRT2 = np.float32(1 / np.sqrt(np.float32(2)))  # torch.rsqrt(torch.tensor(2)) in float32


def instance_norm(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mu = x.mean(axis=1, keepdims=True)
    d = x - mu
    return d / np.sqrt((d * d).mean(axis=1, keepdims=True) + x.dtype.type(eps))


def adain(x: np.ndarray, s: np.ndarray, w, prefix: str) -> np.ndarray:
    """x [C, T], s [style] -> [C, T]."""
    c = x.shape[0]
    h = linear(s, w[prefix + ".fc.weight"], w[prefix + ".fc.bias"])
    gamma, beta = h[:c, None], h[c:, None]
    n = instance_norm(x) * w[prefix + ".norm.weight"][:, None] + w[prefix + ".norm.bias"][:, None]
    return (1 + gamma) * n + beta


def conv_transpose(x: np.ndarray, w, prefix: str, *, stride: int, padding: int, output_padding: int = 0,
                   groups: int = 1) -> np.ndarray:
    """ConvTranspose1d with padding / output_padding, x [C_in, T]."""
    k = w[prefix + ".weight"].shape[2]
    full = conv_transpose1d(x, w[prefix + ".weight"], None, stride=stride, groups=groups)
    n = (x.shape[1] - 1) * stride - 2 * padding + k + output_padding
    if padding + n > full.shape[1]:  # output_padding reaches past the last tap: those columns hold only bias
        full = np.pad(full, ((0, 0), (0, padding + n - full.shape[1])))
    return full[:, padding:padding + n] + w[prefix + ".bias"][:, None]


def adain_resblk1d(x: np.ndarray, s: np.ndarray, w, prefix: str, *, upsample: bool = False) -> np.ndarray:
    r = leaky_relu(adain(x, s, w, prefix + ".norm1"), 0.2)
    if upsample:
        r = conv_transpose(r, w, prefix + ".pool", stride=2, padding=1, output_padding=1, groups=r.shape[0])
    r = conv(r, w, prefix + ".conv1", padding=1)
    r = leaky_relu(adain(r, s, w, prefix + ".norm2"), 0.2)
    r = conv(r, w, prefix + ".conv2", padding=1)
    sc = np.repeat(x, 2, axis=1) if upsample else x
    if prefix + ".conv1x1.weight" in w:
        sc = conv(sc, w, prefix + ".conv1x1", bias=False)
    return (r + sc) * RSQRT2


def snake(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    a = a.reshape(-1, 1)
    return x + (1 / a) * np.sin(a * x) ** 2


def adain_resblock1(x: np.ndarray, s: np.ndarray, w, prefix: str, kernel: int, dilations) -> np.ndarray:
    for j, d in enumerate(dilations):
        xt = snake(adain(x, s, w, f"{prefix}.adain1.{j}"), w[f"{prefix}.alpha1.{j}"])
        xt = conv(xt, w, f"{prefix}.convs1.{j}", padding=(kernel * d - d) // 2, dilation=d)
        xt = snake(adain(xt, s, w, f"{prefix}.adain2.{j}"), w[f"{prefix}.alpha2.{j}"])
        xt = conv(xt, w, f"{prefix}.convs2.{j}", padding=(kernel - 1) // 2)
        x = xt + x
    return x
