"""Writing WAV files atomically (a temporary file renamed into place: never a half-written file)."""

from __future__ import annotations

import os
import tempfile

import numpy as np


def write_wav(path: str, samples: np.ndarray, sample_rate: int, float32: bool = False) -> None:
    import soundfile as sf

    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".vox-", suffix=".wav", dir=d)
    os.close(fd)
    try:
        sf.write(tmp, np.asarray(samples, dtype=np.float32), sample_rate, subtype="FLOAT" if float32 else "PCM_16",
                 format="WAV")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
