"""Reading a reference recording (voice cloning: `Engine.clone_voice(path)`, `vox say --ref-audio`,
`vox voice clone`) with its cost checked before the samples are decoded (docs/reliability.md).

The file must be a regular file in one of the containers a recording comes in (WAV / RF64 / W64, FLAC,
Ogg, AIFF, MP3, told by its first bytes, so libsndfile's rarer format parsers never see user input);
its header's channel count and sample rate must be ones vox_voice_clone takes, and its length at most
MAX_SECONDS and MAX_SAMPLES (what the decoded float32 samples may occupy), all before anything is read:
a header that claims billions of frames is refused instead of being allocated. Every sample decoded
must be finite.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import FormatError
from .bounded import open_regular

MAX_SECONDS = 600          # a cloning reference is seconds long; ten minutes is far beyond any use
MAX_SAMPLES = 1 << 26      # frames x channels: 256 MiB of float32 (23 minutes of 48 kHz mono)
MAX_CHANNELS = 64          # vox_voice_clone's limits
RATES = (1000, 768000)


def _container(head: bytes) -> str | None:
    if head[:4] in (b"RIFF", b"RIFX", b"RF64", b"BW64") and head[8:12] == b"WAVE":
        return "WAV"
    if head[:4] == b"riff" and head[:16] == b"riff.\x91\xcf\x11\xa5\xd6\x28\xdb\x04\xc1\x00\x00":
        return "W64"
    if head[:4] == b"fLaC":
        return "FLAC"
    if head[:4] == b"OggS":
        return "OGG"
    if head[:4] == b"FORM" and head[8:12] in (b"AIFF", b"AIFC"):
        return "AIFF"
    if head[:3] == b"ID3" or (len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "MP3"
    return None


def read_audio_file(path: str | os.PathLike, max_seconds: float = MAX_SECONDS) -> tuple[np.ndarray, int]:
    """(samples float32 [frames] or [frames, channels], sample rate) of a recording of at most
    `max_seconds`; FormatError naming the file and the problem otherwise."""
    import soundfile as sf

    p = os.fspath(path)
    try:
        f = open_regular(p)
    except FileNotFoundError:
        raise FileNotFoundError(f"{p}: no such file") from None
    except OSError as e:
        raise FormatError(f"{p}: cannot read audio ({e.strerror or str(e).removeprefix(p + ': ')})") from None
    with f:
        head = f.read(16)
        kind = _container(head)
        if kind is None:
            raise FormatError(f"{p}: not a recording vox reads (WAV, FLAC, Ogg, AIFF or MP3)")
        f.seek(0)
        try:
            with sf.SoundFile(f) as snd:
                frames, ch, sr = snd.frames, snd.channels, snd.samplerate
                if not 1 <= ch <= MAX_CHANNELS:
                    raise FormatError(f"{p}: {ch} audio channels (vox takes 1 to {MAX_CHANNELS})")
                if not RATES[0] <= sr <= RATES[1]:
                    raise FormatError(f"{p}: sample rate {sr} Hz is not supported ({RATES[0]} to {RATES[1]} Hz)")
                if frames <= 0:
                    raise FormatError(f"{p}: the recording is empty")
                if frames > max_seconds * sr or frames * ch > MAX_SAMPLES:
                    raise FormatError(f"{p}: {frames} frames ({frames / sr:.0f} s of {ch}-channel audio) is too "
                                      f"long for a reference recording (at most {max_seconds:g} s and "
                                      f"{MAX_SAMPLES} samples)")
                x = snd.read(frames, dtype="float32", always_2d=False)
        except FormatError:
            raise
        except (RuntimeError, ValueError, TypeError, OSError, EOFError) as e:
            # soundfile.LibsndfileError (a RuntimeError): "Format not recognised", "Unspecified internal
            # error", ...; its message names the file object, so only the library's reason is kept
            why = getattr(e, "error_string", None) or str(e)
            raise FormatError(f"{p}: cannot read audio as {kind} ({why})") from None
    if x.shape[0] == 0:
        raise FormatError(f"{p}: the recording is empty")
    bad = ~np.isfinite(x)
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        raise FormatError(f"{p}: sample {i // ch} is not finite")
    return np.ascontiguousarray(x, dtype=np.float32), int(sr)
