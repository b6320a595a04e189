"""The initial noise x0 of the flow-matching sampler, from Philox4x32-10 (reference/common/philox.py).

The official CFM.sample draws x0 = torch.randn(duration, 100) from the global torch generator, so the
audio depends on everything that ran before. Here x0 is a pure function of (seed, piece): element
(frame n, mel channel c) of piece p (the index of the text piece in the utterance, from 0) is

    r = Philox4x32-10(counter = (n, c, STREAM, p), key = (seed low 32 bits, seed high 32 bits))
    u1 = 1 - u53(r0, r1),  u2 = u53(r2, r3)          u53(a, b) = ((a >> 5) * 2^26 + (b >> 6)) / 2^53
    x0[n, c] = float32( sqrt(-2 ln u1) * cos(2 pi u2) )

the Box-Muller construction vox uses for every Gaussian draw (reference/kokoro/source.py, whose
streams are 1 and 3), with STREAM = 4. Any frame of any piece can be drawn independently, so the
result does not depend on thread count or on the order pieces are computed in.
"""

from __future__ import annotations

import numpy as np

from ..common.philox import philox4x32_10, seed_key

STREAM = 4


def _u53(w_hi: np.ndarray, w_lo: np.ndarray) -> np.ndarray:
    a = w_hi.astype(np.uint64) >> np.uint64(5)
    b = w_lo.astype(np.uint64) >> np.uint64(6)
    return (a * np.uint64(67108864) + b).astype(np.float64) / 9007199254740992.0


def initial_noise(seed: int, piece: int, frames: int, channels: int = 100) -> np.ndarray:
    """x0 of piece `piece`: float32 [frames, channels], standard normal."""
    if frames < 0 or channels <= 0 or piece < 0:
        raise ValueError(f"bad noise shape: piece {piece}, {frames} frames, {channels} channels")
    n = np.repeat(np.arange(frames, dtype=np.uint64), channels)
    c = np.tile(np.arange(channels, dtype=np.uint64), frames)
    ctr = np.stack([n, c, np.full_like(n, STREAM), np.full_like(n, piece)], axis=-1)
    r = philox4x32_10(ctr, seed_key(seed))
    u1 = 1.0 - _u53(r[:, 0], r[:, 1])  # (0, 1]: the log is finite
    u2 = _u53(r[:, 2], r[:, 3])
    return (np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)).astype(np.float32).reshape(frames, channels)
