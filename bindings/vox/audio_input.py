"""Reading a recording that a user hands to vox (voice cloning): bounded, checked, one clear error.

A header can promise hours of audio over a few bytes, a file can hold NaNs or be no audio at all:
the size a header declares is checked against the limit and against the bytes really there before
anything is allocated, and every sample must be finite.
"""

from __future__ import annotations

import os

import numpy as np

from .errors import FormatError, InvalidArgument

# A voice needs seconds of speech; ten minutes is far more than any family uses.
MAX_SECONDS = 600.0
MAX_CHANNELS = 64


def read_recording(path: str, max_seconds: float = MAX_SECONDS) -> tuple[np.ndarray, int]:
    """(samples [n] or [n, channels] float32, sample rate) of the audio file at `path`."""
    import soundfile as sf

    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise InvalidArgument(f"{path}: not a regular file")
    try:
        info = sf.info(path)
    except (RuntimeError, sf.LibsndfileError) as e:  # "Format not recognised", truncated headers
        raise FormatError(f"{path}: cannot read audio ({e})") from None
    sr, ch, frames = int(info.samplerate), int(info.channels), int(info.frames)
    if not 1000 <= sr <= 768000:
        raise InvalidArgument(f"{path}: sample rate {sr} Hz is not supported (1 kHz to 768 kHz)")
    if not 1 <= ch <= MAX_CHANNELS:
        raise InvalidArgument(f"{path}: {ch} channels (1 to {MAX_CHANNELS})")
    if frames <= 0:
        raise InvalidArgument(f"{path}: the recording is empty (0 samples)")
    if frames > max_seconds * sr:
        raise InvalidArgument(f"{path}: {frames / sr:.0f} s of audio is too long for a voice (at most "
                              f"{max_seconds:.0f} s)")
    try:
        x, sr2 = sf.read(path, dtype="float32", always_2d=False)
    except (RuntimeError, sf.LibsndfileError, MemoryError) as e:
        raise FormatError(f"{path}: cannot read audio ({e})") from None
    if x.size == 0:
        raise InvalidArgument(f"{path}: the recording is empty (0 samples)")
    bad = ~np.isfinite(x)
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        raise InvalidArgument(f"{path}: sample {i // ch} is not finite")
    return np.ascontiguousarray(x), int(sr2)
