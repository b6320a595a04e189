"""Audio as the response formats of OpenAI's speech API, encoded chunk by chunk as synthesis goes.

    pcm    raw signed 16-bit little-endian mono at 24 kHz (OpenAI's definition), no header
    wav    a 16-bit PCM WAV whose RIFF and data sizes are 0xFFFFFFFF: the length is not known when the
           header leaves (readers take the data to the end of the stream; soundfile, ffmpeg and
           browsers do)
    flac   FLAC (libsndfile), lossless 16-bit; STREAMINFO says "length unknown" (0 samples)
    mp3    MPEG-1/2 layer III (libsndfile + LAME), constant bit rate, no Xing/LAME tag
    opus   Ogg Opus (libsndfile + libopus)

Every format starts from the same 16-bit samples: round(clip(x, -1, 1) * 32767) of the engine's
float samples, so a lossless format decodes to exactly those values.

libsndfile writes to a file it can seek in, and at the end goes back to patch lengths into the header
(FLAC's STREAMINFO, the LAME tag of MP3). A streamed response cannot be patched: the encoders write
into _ForwardSink, which hands on each byte once it is written and ignores writes behind what it has
already handed on. FLAC then keeps its "unknown length" STREAMINFO (valid FLAC); LAME's tag frame is
reserved as a frame of zeros at the start, which is dropped so that the stream is plain CBR MP3
(a decoder reads it to its end; the encoder's delay stays at the start, as in any untagged MP3).
"""

from __future__ import annotations

import struct

import numpy as np

from .errors import ApiError

OPENAI_RATE = 24000     # OpenAI's pcm (and this server's WebSocket frames) are 24 kHz

MEDIA_TYPES = {"pcm": "audio/pcm", "wav": "audio/wav", "flac": "audio/flac", "mp3": "audio/mpeg",
               "opus": "audio/ogg; codecs=opus"}
FORMATS = tuple(MEDIA_TYPES)
_NOT_HERE = {"aac": "AAC needs an encoder libsndfile does not have"}


def check_format(fmt: object, sample_rate: int) -> str:
    """A response_format this server writes, for a model of `sample_rate` Hz; else a 400."""
    if fmt is None:
        return "mp3"
    if not isinstance(fmt, str):
        raise ApiError(400, "response_format must be a string", param="response_format", code="invalid_type")
    if fmt in _NOT_HERE:
        raise ApiError(400, f"response_format {fmt!r} is not supported by this server ({_NOT_HERE[fmt]}); use one of "
                            f"{', '.join(FORMATS)}", param="response_format", code="unsupported_format")
    if fmt not in MEDIA_TYPES:
        raise ApiError(400, f"unknown response_format {fmt!r}: use one of {', '.join(FORMATS)}",
                       param="response_format", code="invalid_value")
    if fmt == "pcm" and sample_rate != OPENAI_RATE:
        raise ApiError(400, f"pcm is {OPENAI_RATE} Hz; this model makes {sample_rate} Hz audio: use wav or flac, "
                            "which say their rate", param="response_format", code="unsupported_format")
    if fmt == "opus" and sample_rate not in (8000, 12000, 16000, 24000, 48000):
        raise ApiError(400, f"Opus takes 8, 12, 16, 24 or 48 kHz, this model makes {sample_rate} Hz",
                       param="response_format", code="unsupported_format")
    return fmt


def to_s16(samples: np.ndarray) -> np.ndarray:
    """float samples -> int16: round(clip(x, -1, 1) * 32767)."""
    x = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    return np.rint(x * 32767.0).astype("<i2")


def wav_header(sample_rate: int, channels: int = 1) -> bytes:
    """A 16-bit PCM WAV header for a stream of unknown length (sizes 0xFFFFFFFF)."""
    block = 2 * channels
    return (b"RIFF" + struct.pack("<I", 0xFFFFFFFF) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, sample_rate, sample_rate * block, block, 16)
            + b"data" + struct.pack("<I", 0xFFFFFFFF))


class _ForwardSink:
    """A write-only file for libsndfile's virtual I/O that hands its bytes on as they are written
    (take()); a write behind what was taken (a header patch at the end) is ignored, a write into
    what is still held applies."""

    def __init__(self) -> None:
        self.held = bytearray()
        self.base = 0            # bytes taken so far (absolute offset of held[0])
        self.pos = 0

    def write(self, data) -> int:
        b = bytes(data)
        n = len(b)
        p = self.pos
        if p < self.base:
            cut = min(n, self.base - p)
            b, p = b[cut:], p + cut
        off = p - self.base
        if off > len(self.held):
            self.held += bytes(off - len(self.held))
        self.held[off:off + len(b)] = b
        self.pos = p + len(b)
        return n

    def seek(self, offset: int, whence: int = 0) -> int:
        end = self.base + len(self.held)
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else end + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def read(self, n: int = -1) -> bytes:
        return b""

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        out = bytes(self.held)
        self.base += len(out)
        self.held.clear()
        return out


class Encoder:
    """feed(int16 samples) -> bytes to send now; finish() -> the last bytes."""

    def __init__(self, fmt: str, sample_rate: int):
        self.fmt, self.sample_rate = fmt, sample_rate
        self._sf = None
        self._started = False
        if fmt in ("flac", "mp3", "opus"):
            import soundfile as sf

            self._sink = _ForwardSink()
            kw: dict = {}
            if fmt == "flac":
                kw = {"format": "FLAC", "subtype": "PCM_16"}
            elif fmt == "mp3":
                # CBR: without the LAME tag a decoder sizes the stream by its first frame's bit rate
                kw = {"format": "MP3", "subtype": "MPEG_LAYER_III", "bitrate_mode": "CONSTANT",
                      "compression_level": 0.4}
            else:
                kw = {"format": "OGG", "subtype": "OPUS"}
            self._sf = sf.SoundFile(self._sink, "w", samplerate=sample_rate, channels=1, **kw)
            self._mp3_head = fmt == "mp3"
            self._head = b""

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.fmt]

    def start(self) -> bytes:
        self._started = True
        return wav_header(self.sample_rate) if self.fmt == "wav" else b""

    def feed(self, s16: np.ndarray) -> bytes:
        head = b"" if self._started else self.start()
        if self._sf is None:
            return head + np.ascontiguousarray(s16, "<i2").tobytes()
        self._sf.write(s16)
        return head + self._taken()

    def finish(self) -> bytes:
        head = b"" if self._started else self.start()
        if self._sf is None:
            return head
        self._sf.close()
        self._sf = None
        return head + self._taken(final=True)

    def close(self) -> None:
        """Drop an encoder that will not finish (the stream was cancelled)."""
        if self._sf is not None:
            try:
                self._sf.close()
            except Exception:
                pass
            self._sf = None

    def _taken(self, final: bool = False) -> bytes:
        out = self._sink.take()
        if not self._mp3_head:
            return out
        # LAME reserves its first frame for the tag it writes at the end: a frame header and zeros
        self._head += out
        n = _mp3_frame_length(self._head[:4]) if len(self._head) >= 4 else None
        if not final and (n is None or (n and len(self._head) < n)):
            return b""                     # not the whole first frame yet
        self._mp3_head = False
        out, self._head = self._head, b""
        if n and len(out) >= n and not any(out[4:n]):
            out = out[n:]
        return out


_BITRATES = {  # kbit/s by (MPEG-1?, index), layer III
    True: (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    False: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}
_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


def _mp3_frame_length(h: bytes) -> int:
    """Bytes of the layer III frame whose 4-byte header is `h` (0 if it is not one)."""
    if len(h) < 4 or h[0] != 0xFF or (h[1] & 0xE0) != 0xE0:
        return 0
    version = (h[1] >> 3) & 3          # 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
    layer = (h[1] >> 1) & 3            # 1: layer III
    bi, ri, pad = h[2] >> 4, (h[2] >> 2) & 3, (h[2] >> 1) & 1
    if version == 1 or layer != 1 or bi in (0, 15) or ri == 3:
        return 0
    kbps = _BITRATES[version == 3][bi]
    rate = _RATES[version][ri]
    return (144 if version == 3 else 72) * kbps * 1000 // rate + pad
