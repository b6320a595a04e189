"""kokoro.istftnet.Decoder and Generator (ISTFTNet): style-conditioned AdainResBlk1d stack on the
frame-aligned text features with F0 and N, then two transposed-conv upsamplings (x10, x6) with
Snake resblocks, each fed the harmonic source's STFT through a noise conv and resblock, then
conv_post -> log-magnitude and phase of an n_fft 20 / hop 5 spectrogram -> iSTFT.
"""

from __future__ import annotations

import math

import numpy as np

from .adain import adain_resblk1d, adain_resblock1, conv_transpose
from .source import harmonic_source
from .stft import istft, stft
from .text_encoder import conv, leaky_relu


def decoder_features(asr: np.ndarray, f0: np.ndarray, n: np.ndarray, s: np.ndarray, w) -> np.ndarray:
    """asr [512, F], F0 and N [2F], s [128] -> generator input [512, 2F]."""
    f0d = conv(f0[None].astype(np.float32), w, "decoder.F0_conv", padding=1, stride=2)
    nd = conv(n[None].astype(np.float32), w, "decoder.N_conv", padding=1, stride=2)
    x = adain_resblk1d(np.concatenate([asr, f0d, nd]), s, w, "decoder.encode")
    asr_res = conv(asr, w, "decoder.asr_res.0")
    for i in range(4):  # the last (upsampling) block is also the last to take the residual inputs
        x = adain_resblk1d(np.concatenate([x, asr_res, f0d, nd]), s, w, f"decoder.decode.{i}", upsample=(i == 3))
    return x


def generator(x: np.ndarray, s: np.ndarray, f0: np.ndarray, w, cfg: dict, *, noise: str = "zero", seed: int = 0,
              span: int = 0, taps: dict | None = None, har: np.ndarray | None = None) -> np.ndarray:
    """x [512, 2F], F0 [2F] -> audio [600 F] (24 kHz).

    har: the source's STFT [magnitude; phase] to use instead of computing it (teacher forcing: the
    phase of a near-silent source bin is the rounding noise of whichever FFT computed it, and the
    generator does not ignore it)."""
    ic = cfg["istftnet"]
    rates, kernels = ic["upsample_rates"], ic["upsample_kernel_sizes"]
    n_fft, hop = ic["gen_istft_n_fft"], ic["gen_istft_hop_size"]
    rk, rd = ic["resblock_kernel_sizes"], ic["resblock_dilation_sizes"]
    har_source = harmonic_source(f0, w, math.prod(rates) * hop, noise=noise, seed=seed, span=span)
    if har is None:
        har_mag, har_phase = stft(har_source, n_fft, hop)
        har = np.concatenate([har_mag, har_phase])
    for i, (u, k) in enumerate(zip(rates, kernels)):
        x = leaky_relu(x, 0.1)
        if i + 1 < len(rates):
            sf = math.prod(rates[i + 1:])
            xs = conv(har, w, f"decoder.generator.noise_convs.{i}", padding=(sf + 1) // 2, stride=sf)
            xs = adain_resblock1(xs, s, w, f"decoder.generator.noise_res.{i}", 7, (1, 3, 5))
        else:
            xs = conv(har, w, f"decoder.generator.noise_convs.{i}")
            xs = adain_resblock1(xs, s, w, f"decoder.generator.noise_res.{i}", 11, (1, 3, 5))
        x = conv_transpose(x, w, f"decoder.generator.ups.{i}", stride=u, padding=(k - u) // 2)
        if i == len(rates) - 1:
            x = np.concatenate([x[:, 1:2], x], axis=1)  # ReflectionPad1d((1, 0))
        x = x + xs
        acc = None
        for j in range(len(rk)):
            y = adain_resblock1(x, s, w, f"decoder.generator.resblocks.{i * len(rk) + j}", rk[j], rd[j])
            acc = y if acc is None else acc + y
        x = acc / np.float32(len(rk))
    x = conv(leaky_relu(x, 0.01), w, "decoder.generator.conv_post", padding=3)
    half = n_fft // 2 + 1
    mag, phase = np.exp(x[:half]), np.sin(x[half:])
    if taps is not None:
        taps.update(har_source=har_source, har=har, mag=mag, phase=phase)
    return istft(mag, phase, n_fft, hop)
