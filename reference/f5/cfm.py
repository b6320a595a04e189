"""Conditional flow matching sampling (Lipman et al. 2023; F5-TTS's CFM.sample with the Euler solver of
torchdiffeq): from Gaussian noise x0 at t = 0 to the mel spectrogram at t = 1 along the flow the DiT
predicts, with classifier-free guidance (Ho & Salimans 2022), sway sampling and EPSS time grids.

    cond = [log-mel of the reference | zeros]                 [D, 100], D = total frames
    D    = max(max(len(text), len(ref mel)) + 1, duration)     (at most 65536)
    t_0..t_S: EPSS grid for S in {5, 6, 7, 10, 12, 16} when use_epss (get_epss_timesteps: eighths of
              1/32 pruned at the start), else linspace(0, 1, S + 1); then sway sampling
              t <- t + s (cos(pi/2 t) - 1 + t)  (s = sway_sampling_coef, -1 by default: denser near 0)
    v(t, x) = v_c + (v_c - v_u) * cfg_strength         v_c: DiT with text and audio condition,
              v_u: DiT with both dropped (cfg_strength < 1e-5: v_c alone)
    x_{k+1} = x_k + (t_{k+1} - t_k) v(t_k, x_k)        (Euler, float32)
    out = [ref mel | x_S[len(ref mel):]]               (the reference frames are put back)

All arithmetic on the time grid is float32, as torch does it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .config import DiTConfig
from .dit import dit, text_embedding
from .mel import linspace_f32

EPSS = {
    5: [0, 2, 4, 8, 16, 32],
    6: [0, 2, 4, 6, 8, 16, 32],
    7: [0, 2, 4, 6, 8, 16, 24, 32],
    10: [0, 2, 4, 6, 8, 12, 16, 20, 24, 28, 32],
    12: [0, 2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32],
    16: [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32],
}


def timesteps(steps: int, sway_sampling_coef: float | None = -1.0, use_epss: bool = True) -> np.ndarray:
    """The time grid t_0 = 0 .. t_steps = 1, float32 [steps + 1]."""
    if steps < 1:
        raise ValueError(f"nfe_step must be at least 1, got {steps}")
    if use_epss and steps in EPSS:
        t = (np.float32(1 / 32) * np.array(EPSS[steps], dtype=np.float32)).astype(np.float32)
    else:
        t = linspace_f32(0.0, 1.0, steps + 1)
    if sway_sampling_coef is not None:
        s = np.float32(sway_sampling_coef)
        c = np.cos((np.float32(np.pi / 2) * t).astype(np.float64)).astype(np.float32)
        t = (t + s * (c - np.float32(1) + t)).astype(np.float32)
    return t


@dataclass
class SampleOutput:
    mel: np.ndarray                    # [D, 100] with the reference frames restored
    duration: int                      # D
    cond_frames: int                   # frames of the reference mel
    t: np.ndarray                      # the time grid
    taps: dict = field(default_factory=dict)


def total_frames(text_len: int, cond_frames: int, duration: int, max_duration: int = 65536) -> int:
    """CFM.sample: the duration is at least the text / reference length plus one frame."""
    return min(max(max(text_len, cond_frames) + 1, int(duration)), max_duration)


def sample(cond_mel: np.ndarray, text: np.ndarray, duration: int, x0_fn, w, cfg: DiTConfig, *, steps: int = 32,
           cfg_strength: float = 2.0, sway_sampling_coef: float | None = -1.0, use_epss: bool = True,
           max_duration: int = 65536, keep_trajectory: bool = False) -> SampleOutput:
    """CFM.sample for one utterance. cond_mel [Nc, 100]: log-mel of the reference (frames x channels);
    text: vocabulary ids [Nt]; x0_fn(D) -> the initial noise [D, 100] (reference.f5.noise)."""
    nc = cond_mel.shape[0]
    d = total_frames(len(text), nc, duration, max_duration)
    cond = np.zeros((d, cond_mel.shape[1]), np.float32)
    cond[:nc] = cond_mel[:d]
    x = np.asarray(x0_fn(d), dtype=np.float32)
    if x.shape != cond.shape:
        raise ValueError(f"initial noise has shape {x.shape}, expected {cond.shape}")
    t = timesteps(steps, sway_sampling_coef, use_epss)
    guided = cfg_strength >= 1e-5
    te_c = text_embedding(text, d, w, cfg, drop_text=False)
    te_u = text_embedding(text, d, w, cfg, drop_text=True) if guided else None
    cs = np.float32(cfg_strength)
    taps: dict = {"x0": x.copy()}
    if keep_trajectory:
        taps["trajectory"] = [x.copy()]
    for k in range(len(t) - 1):
        v = dit(x, cond, te_c, t[k], w, cfg)
        if guided:
            vu = dit(x, cond, te_u, t[k], w, cfg, drop_audio_cond=True)
            v = v + (v - vu) * cs
        x = x + np.float32(t[k + 1] - t[k]) * v
        if keep_trajectory:
            taps["trajectory"].append(x.copy())
    out = x.copy()
    out[:nc] = cond[:nc]
    return SampleOutput(out, d, nc, t, taps)
