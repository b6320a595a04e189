"""Spectral comparison of two renderings of the same utterance (ours vs the official model's).

A runtime can say every word right and still sound wrong: the artifact that made seed 001 change
runtimes was a distributed numerical divergence in the harmonic source that tilted high-frequency
content upward ("metallic"). Two loudness-aware measures catch that, per sentence:

  high_band_db   10 log10(high-band share of ours / high-band share of the official), where the share
                 is the power above 4 kHz over the total power, summed over the speech frames. A
                 tilt of the top band by x dB moves it by about x dB times the band's share of the
                 energy change; 0 for identical spectra. The absolute value is checked.
  lsd_db         log-spectral distance: per speech frame, the RMS over frequency of the dB difference
                 of the two power spectra, averaged over frames. Both spectra are floored at 60 dB
                 below the official utterance's peak bin, so near-silent bins (where the harmonic
                 source's random phase and noise live) do not dominate.

"Speech frames" are the frames of the official rendering within 40 dB of its loudest frame; the same
frames are used for ours. The two signals must have the same length (the same integer durations,
which the stage-level conformance checks); a different length fails (inf), it is never aligned away.
STFT: Hann window of 1024 samples (43 ms at 24 kHz), hop 256.
"""

from __future__ import annotations

import numpy as np

N_FFT = 1024
HOP = 256
HIGH_BAND_HZ = 4000.0
FRAME_RANGE_DB = 40.0
FLOOR_DB = 60.0


def power_spectrogram(x: np.ndarray) -> np.ndarray:
    """|STFT|^2, [frames, N_FFT // 2 + 1], Hann window, frames centered with zero padding."""
    x = np.asarray(x, dtype=np.float64)
    pad = np.pad(x, (N_FFT // 2, N_FFT // 2))
    n = 1 + max(len(pad) - N_FFT, 0) // HOP
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(n)[:, None]
    frames = pad[idx] * np.hanning(N_FFT + 1)[:-1]
    return np.abs(np.fft.rfft(frames, axis=1)) ** 2


def speech_frames(p_ref: np.ndarray) -> np.ndarray:
    e = p_ref.sum(1)
    return e >= e.max() * 10 ** (-FRAME_RANGE_DB / 10) if e.size and e.max() > 0 else np.zeros(len(e), bool)


def high_band_share(p: np.ndarray, frames: np.ndarray, sr: int) -> float:
    f = np.fft.rfftfreq(N_FFT, 1.0 / sr)
    sel = p[frames]
    return float(sel[:, f >= HIGH_BAND_HZ].sum() / max(sel.sum(), 1e-30))


def compare(ours: np.ndarray, official: np.ndarray, sr: int) -> dict:
    """{"high_band_db", "lsd_db", "hb_ours", "hb_official", "frames"} for one utterance."""
    if len(ours) != len(official):
        return {"high_band_db": float("inf"), "lsd_db": float("inf"), "hb_ours": float("nan"),
                "hb_official": float("nan"), "frames": 0,
                "note": f"length {len(ours)} vs official {len(official)} samples"}
    po, pr = power_spectrogram(ours), power_spectrogram(official)
    frames = speech_frames(pr)
    hb_o, hb_r = high_band_share(po, frames, sr), high_band_share(pr, frames, sr)
    floor = pr.max() * 10 ** (-FLOOR_DB / 10)
    d = 10 * np.log10(np.maximum(po[frames], floor) / np.maximum(pr[frames], floor))
    lsd = float(np.mean(np.sqrt(np.mean(d ** 2, axis=1)))) if frames.any() else float("inf")
    return {"high_band_db": float(10 * np.log10(max(hb_o, 1e-30) / max(hb_r, 1e-30))), "lsd_db": lsd,
            "hb_ours": hb_o, "hb_official": hb_r, "frames": int(frames.sum())}


def tilt_high_band(x: np.ndarray, sr: int, gain_db: float, start_hz: float = HIGH_BAND_HZ) -> np.ndarray:
    """A "metallic" copy for the negative control: the band above start_hz raised by gain_db (a
    zero-phase shelf applied in the frequency domain, with a one-octave linear-in-dB ramp below it so
    there is no brick-wall edge). The words stay intelligible; the timbre does not."""
    x = np.asarray(x, dtype=np.float64)
    spec = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), 1.0 / sr)
    ramp = np.clip((np.log2(np.maximum(f, 1.0)) - np.log2(start_hz / 2)), 0.0, 1.0)
    spec *= 10 ** (gain_db * ramp / 20)
    return np.fft.irfft(spec, n=len(x)).astype(np.float32)
