"""Block quantization of weights: q8 and q4, blocks of 32 along the last axis, one f32 scale per block.

The layout (docs/formats.md): a q8/q4 tensor is two planes, the quantized values in row-major order,
then the f32 scales in the same order. These numpy functions are the definition; the native kernels
read exactly this layout.
"""

from __future__ import annotations

import numpy as np

BLOCK = 32


def _blocks(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim < 1 or x.shape[-1] % BLOCK:
        raise ValueError(f"block quantization needs the last axis to be a multiple of {BLOCK}, got shape {x.shape}")
    return x.reshape(-1, BLOCK)


def _round_away(v: np.ndarray) -> np.ndarray:
    """round half away from zero (C's roundf), not numpy's half-to-even.

    Not floor(|v| + 0.5): in float32 that addition rounds 0.49999997 + 0.5 up to 1.0. The fractional
    part |v| - floor(|v|) is exact, so comparing it with 0.5 rounds every value as roundf does.
    """
    a = np.abs(v)
    f = np.floor(a)
    return np.sign(v) * (f + (a - f >= 0.5))


def quantize_q8(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x [..., K] -> (int8 values [..., K], f32 scales [..., K/32]); s = max|x| / 127."""
    b = _blocks(x)
    amax = np.max(np.abs(b), axis=1)
    s = (amax / 127.0).astype(np.float32)
    inv = np.divide(1.0, s, out=np.zeros_like(s), where=s > 0)
    q = np.clip(_round_away(b * inv[:, None]), -127, 127).astype(np.int8)
    shape = np.shape(x)
    return q.reshape(shape), s.reshape(shape[:-1] + (shape[-1] // BLOCK,))


def dequantize_q8(q: np.ndarray, s: np.ndarray) -> np.ndarray:
    qb = q.reshape(-1, BLOCK).astype(np.float32)
    return (qb * s.reshape(-1, 1)).reshape(q.shape)


# q4: 16 candidate divisors; the scale maps the block's largest-magnitude value m to -d * s.
Q4_DIVISORS = np.linspace(-8.0, -6.5, 16, dtype=np.float32)


def quantize_q4(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x [..., K] -> (uint8 packed nibbles [..., K/2], f32 scales [..., K/32]).

    A value q in [0, 15] stands for (q - 8) * s. For each block, with m the value of largest
    magnitude (the first on ties), the scale is the candidate s = m / d, d in Q4_DIVISORS
    (-8.0, -7.9, ..., -6.5), that minimizes the block's squared error (the first on ties).
    d = -8 puts m on the code 0 (the extra negative level of a 4-bit two's-complement-like range).
    Byte j of a block holds element j in its low nibble and element j + 16 in its high nibble.
    """
    b = _blocks(x)
    idx = np.argmax(np.abs(b), axis=1)
    m = b[np.arange(len(b)), idx]
    best_err = np.full(len(b), np.inf, dtype=np.float64)
    best_s = np.zeros(len(b), dtype=np.float32)
    best_q = np.zeros(b.shape, dtype=np.uint8)
    for d in Q4_DIVISORS:
        s = (m / d).astype(np.float32)
        inv = np.divide(1.0, s, out=np.zeros_like(s), where=s != 0)
        q = np.clip(_round_away(b * inv[:, None]) + 8, 0, 15)
        err = np.sum(((q - 8) * s[:, None] - b).astype(np.float64) ** 2, axis=1)
        better = err < best_err
        best_err = np.where(better, err, best_err)
        best_s = np.where(better, s, best_s)
        best_q[better] = q[better].astype(np.uint8)
    packed = (best_q[:, :16] & 0xF) | (best_q[:, 16:] << 4)
    shape = np.shape(x)
    return packed.astype(np.uint8).reshape(shape[:-1] + (shape[-1] // 2,)), \
        best_s.reshape(shape[:-1] + (shape[-1] // BLOCK,))


def dequantize_q4(packed: np.ndarray, s: np.ndarray) -> np.ndarray:
    p = packed.reshape(-1, BLOCK // 2)
    q = np.concatenate([p & 0xF, p >> 4], axis=1).astype(np.float32) - 8.0
    out = q * s.reshape(-1, 1)
    return out.reshape(packed.shape[:-1] + (packed.shape[-1] * 2,))


def roundtrip(x: np.ndarray, dtype: str) -> np.ndarray:
    """x as the engine sees it after storing it as `dtype` (f32, f16, bf16, q8, q4), in float32."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "f32":
        return x
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "bf16":
        from vox.reference.common.safetensors import bf16_to_f32, f32_to_bf16

        return bf16_to_f32(f32_to_bf16(x))
    if dtype == "q8":
        return dequantize_q8(*quantize_q8(x))
    if dtype == "q4":
        return dequantize_q4(*quantize_q4(x))
    raise ValueError(f"unknown dtype {dtype!r}")
