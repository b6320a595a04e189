"""The reference recording as f5_tts.infer.utils_infer.preprocess_ref_audio_text prepares it: clipped to
about 12 s at a silence, leading and trailing silence trimmed, 50 ms of silence appended; and the
reference text's closing punctuation. The official code does this with pydub (AudioSegment,
silence.split_on_silence, silence.detect_leading_silence) on the integer PCM of the file; this module
is that algorithm on 16-bit PCM frames, millisecond arithmetic included:

  length in ms       round(1000 * frames / rate)
  seg[a:b] (ms)      frames int(a * rate / 1000) .. int(b * rate / 1000), both ends first clamped to the
                     length in ms; frames past the end read as zeros (pydub pads up to 2 ms)
  rms                int(sqrt(sum of squares of all samples (all channels) / their number)) (audioop.rms)
  dBFS               20 log(rms / 32768, 10) (-inf for rms 0)

  1. split_on_silence(min_silence_len=1000, silence_thresh=-50 dBFS, keep_silence=1000, seek_step=10):
     windows of 1000 ms every 10 ms (plus the last one) whose rms <= 10^(-50/20) * 32768 are silent;
     overlapping silent windows merge; the non-silent ranges between them, widened by 1000 ms on each
     side (two ranges that then overlap meet at the midpoint), are the pieces. Pieces are appended
     while the result is at most 6 s, or appending keeps it within 12 s.
  2. If that is still longer than 12 s: the same with min_silence_len=100, silence_thresh=-40.
  3. If still longer than 12 s: its first 12000 ms.
  4. Leading and trailing silence: 10 ms chunks from each end while their dBFS < -42.
  5. + 50 ms of silence: pydub makes it at 11025 Hz (551 frames) and converts it to the recording's
     rate with audioop.ratecv, whose output length is what counts here (it is silence).
A recording that is silent throughout ends as 50 ms of silence at 11025 Hz, as in the official code.
Only 16-bit PCM is accepted (pydub keeps the file's sample width; the F5 pipeline reads the result
back as int16 / 32768); rates below 11025 Hz are refused (pydub would resample the recording itself).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_AMP = 32768.0  # 2^(16 - 1), pydub's max_possible_amplitude for 16-bit samples


@dataclass
class Seg:
    """Integer PCM frames [n, channels] (int16 range) at `rate` Hz: a pydub AudioSegment."""
    frames: np.ndarray
    rate: int

    def __post_init__(self):
        f = np.asarray(self.frames, dtype=np.int64)
        self.frames = f.reshape(len(f), -1) if f.ndim == 1 else f
        sq = (self.frames * self.frames).sum(axis=1)
        self._cum = np.concatenate([[0], np.cumsum(sq)])

    @property
    def channels(self) -> int:
        return self.frames.shape[1]

    def __len__(self) -> int:  # milliseconds
        return round(1000 * (len(self.frames) / self.rate))

    def _frame(self, ms: float) -> int:
        return int(ms * (self.rate / 1000.0))

    def _span(self, a: int, b: int) -> tuple[int, int, int]:
        """Frames [fa, fb) of seg[a:b] and how many of them lie past the end (read as zeros)."""
        n = len(self)
        a, b = min(a, n), min(b, n)
        fa, fb = self._frame(a), self._frame(b)
        have = max(0, min(fb, len(self.frames)) - fa)
        return fa, fb, max(0, fb - fa - have)

    def slice(self, a: int, b: int) -> "Seg":
        fa, fb, pad = self._span(a, b)
        part = self.frames[fa:max(fa, min(fb, len(self.frames)))]
        if pad:
            if pad > self._frame(2):
                raise ValueError(f"slice [{a}, {b}) ms would need {pad} frames of padding")
            part = np.concatenate([part, np.zeros((pad, self.channels), np.int64)])
        return Seg(part, self.rate)

    def rms(self, a: int, b: int) -> int:
        """audioop.rms of seg[a:b]."""
        fa, fb, pad = self._span(a, b)
        end = max(fa, min(fb, len(self.frames)))
        count = (end - fa + pad) * self.channels
        if count <= 0:
            return 0
        return int(math.sqrt(float(self._cum[end] - self._cum[fa]) / count))

    def dbfs(self, a: int, b: int) -> float:
        r = self.rms(a, b)
        return -math.inf if r == 0 else 20 * math.log(r / MAX_AMP, 10)

    def __add__(self, other: "Seg") -> "Seg":
        if other.rate != self.rate or other.channels != self.channels:
            raise ValueError("segments of different formats")
        return Seg(np.concatenate([self.frames, other.frames]), self.rate)


def db_to_float(db: float) -> float:
    return 10 ** (float(db) / 20)


def detect_silence(seg: Seg, min_silence_len: int, silence_thresh: float, seek_step: int) -> list[list[int]]:
    n = len(seg)
    if n < min_silence_len:
        return []
    thresh = db_to_float(silence_thresh) * MAX_AMP
    last = n - min_silence_len
    starts = list(range(0, last + 1, seek_step))
    if last % seek_step:
        starts.append(last)
    silent = [i for i in starts if seg.rms(i, i + min_silence_len) <= thresh]
    if not silent:
        return []
    ranges = []
    prev = silent.pop(0)
    cur = prev
    for s in silent:
        if s != prev + seek_step and s > prev + min_silence_len:
            ranges.append([cur, prev + min_silence_len])
            cur = s
        prev = s
    ranges.append([cur, prev + min_silence_len])
    return ranges


def detect_nonsilent(seg: Seg, min_silence_len: int, silence_thresh: float, seek_step: int) -> list[list[int]]:
    silent = detect_silence(seg, min_silence_len, silence_thresh, seek_step)
    n = len(seg)
    if not silent:
        return [[0, n]]
    if silent[0][0] == 0 and silent[0][1] == n:
        return []
    out, prev_end = [], 0
    for a, b in silent:
        out.append([prev_end, a])
        prev_end = b
    if silent[-1][1] != n:
        out.append([prev_end, n])
    if out[0] == [0, 0]:
        out.pop(0)
    return out


def split_on_silence(seg: Seg, min_silence_len: int, silence_thresh: float, keep_silence: int,
                     seek_step: int) -> list[Seg]:
    ranges = [[a - keep_silence, b + keep_silence]
              for a, b in detect_nonsilent(seg, min_silence_len, silence_thresh, seek_step)]
    for r0, r1 in zip(ranges, ranges[1:]):
        if r1[0] < r0[1]:
            r0[1] = (r0[1] + r1[0]) // 2
            r1[0] = r0[1]
    return [seg.slice(max(a, 0), min(b, len(seg))) for a, b in ranges]


def detect_leading_silence(seg: Seg, silence_threshold: float = -50.0, chunk_size: int = 10) -> int:
    trim = 0
    while seg.dbfs(trim, trim + chunk_size) < silence_threshold and trim < len(seg):
        trim += chunk_size
    return min(trim, len(seg))


def remove_silence_edges(seg: Seg, silence_threshold: float = -42) -> Seg:
    start = detect_leading_silence(seg, silence_threshold)
    seg = seg.slice(start, len(seg))
    rev = Seg(seg.frames[::-1], seg.rate)
    end = detect_leading_silence(rev, silence_threshold)
    return seg.slice(0, len(seg) - end) if end > 0 else seg


def ratecv_frames(n: int, rate_in: int, rate_out: int) -> int:
    """How many frames audioop.ratecv(fragment of n frames, ..., rate_in, rate_out, None) returns."""
    g = math.gcd(rate_in, rate_out)
    a, b = rate_in // g, rate_out // g
    d, out = -b, 0
    while True:
        while d < 0:
            if n == 0:
                return out
            n -= 1
            d += b
        while d >= 0:
            out += 1
            d -= a


def _accumulate(pieces: list[Seg]) -> Seg:
    """Append pieces while the result is at most 6 s or stays within 12 s. pydub starts from
    AudioSegment.silent(0), 11025 Hz mono, which takes the first piece's format when it is appended;
    with no piece at all it stays 11025 Hz mono."""
    if not pieces:
        return Seg(np.zeros((0, 1), np.int64), 11025)
    wave = Seg(np.zeros((0, pieces[0].channels), np.int64), pieces[0].rate)
    for p in pieces:
        if len(wave) > 6000 and len(wave + p) > 12000:
            break
        wave = wave + p
    return wave


def preprocess(frames: np.ndarray, rate: int) -> Seg:
    """preprocess_ref_audio_text's audio part on int16 PCM frames [n] or [n, channels]."""
    frames = np.asarray(frames)
    if frames.dtype != np.int16:
        raise ValueError(f"the reference audio must be 16-bit PCM (int16 samples), not {frames.dtype}")
    if rate < 11025:
        raise ValueError(f"the reference audio's rate {rate} Hz is below 11025 Hz, which the official "
                         "preprocessing resamples with audioop; resample it first")
    if len(frames) == 0:
        raise ValueError("the reference audio is empty")
    seg = Seg(frames.reshape(len(frames), -1), rate)
    wave = _accumulate(split_on_silence(seg, 1000, -50, 1000, 10))
    if len(wave) > 12000:
        wave = _accumulate(split_on_silence(seg, 100, -40, 1000, 10))
    if len(wave) > 12000:
        wave = wave.slice(0, 12000)
    wave = remove_silence_edges(wave)
    pad = ratecv_frames(int(11025 * (50 / 1000.0)), 11025, wave.rate)
    return wave + Seg(np.zeros((pad, wave.channels), np.int64), wave.rate)


def fix_ref_text(ref_text: str) -> str:
    """The end of preprocess_ref_audio_text: the reference text ends in ". " or "。"."""
    if not ref_text.strip():
        raise ValueError("the reference text is empty (the official code would transcribe the audio with "
                         "Whisper); give the transcript of the reference recording")
    if not ref_text.endswith(". ") and not ref_text.endswith("。"):
        ref_text += " " if ref_text.endswith(".") else ". "
    return ref_text
