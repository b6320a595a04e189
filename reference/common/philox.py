"""Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3", SC'11).

A counter-based generator: the output is a pure function of (counter, key), so any draw can be made
independently of every other. vox keys it by the user seed and addresses it by position; this is
what makes the audio independent of thread count, chunk size and the order frames are computed in.
Vectorized over counters with numpy uint64 arithmetic; matches core/src/philox.c bit for bit.
"""

from __future__ import annotations

import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(counter, key) -> np.ndarray:
    """counter: [..., 4] uint32-valued; key: [2] (or broadcastable [..., 2]). Returns [..., 4] uint32."""
    c = np.asarray(counter, dtype=np.uint64)
    k = np.asarray(key, dtype=np.uint64)
    c0, c1, c2, c3 = c[..., 0], c[..., 1], c[..., 2], c[..., 3]
    k0, k1 = k[..., 0], k[..., 1]
    for _ in range(10):
        p0 = M0 * c0  # < 2^64: both factors are < 2^32
        p1 = M1 * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & MASK32
        hi1, lo1 = p1 >> np.uint64(32), p1 & MASK32
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0 = (k0 + np.uint64(W0)) & MASK32
        k1 = (k1 + np.uint64(W1)) & MASK32
    return np.stack([c0, c1, c2, c3], axis=-1).astype(np.uint32)


def seed_key(seed: int) -> np.ndarray:
    seed &= 0xFFFFFFFFFFFFFFFF
    return np.array([seed & 0xFFFFFFFF, seed >> 32], dtype=np.uint64)


def uniform(seed: int, frame, codebook) -> np.ndarray | float:
    """The sampling uniform in [0, 1) at (seed, frame, codebook): counter (frame, codebook, 0, 0),
    key (seed low 32 bits, seed high 32 bits), 53 bits from output words 0 and 1 (27 + 26)."""
    frame = np.asarray(frame, dtype=np.uint64)
    codebook = np.asarray(codebook, dtype=np.uint64)
    frame, codebook = np.broadcast_arrays(frame, codebook)
    zeros = np.zeros_like(frame)
    r = philox4x32_10(np.stack([frame, codebook, zeros, zeros], axis=-1), seed_key(seed))
    a = r[..., 0].astype(np.uint64) >> np.uint64(5)
    b = r[..., 1].astype(np.uint64) >> np.uint64(6)
    u = (a * np.uint64(67108864) + b).astype(np.float64) / 9007199254740992.0
    return float(u) if u.ndim == 0 else u
