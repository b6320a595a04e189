"""The Python library over the C core: Engine, Voice, Session.

    import vox
    with vox.Engine("model.tmod", threads=2) as eng:
        voice = eng.clone_voice("ref.wav", "What the recording says.")
        audio = eng.synthesize("Hello!", voice, seed=1)        # numpy float32, eng.sample_rate Hz
        with eng.session(voice, seed=1) as s:                    # text in pieces, audio as it is ready
            s.feed("First sentence. ")
            chunks = list(s.ready())
            s.end()
            chunks += list(s)

Every native call releases the GIL (cffi does so for every C call), so several threads can run
sessions of one engine at once (synthesize_many does). Text is NFC-normalized here before it
reaches the core, which expects NFC.
"""

from __future__ import annotations

import json
import os
import time
import unicodedata
import weakref
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from ._native import ffi, lib, string
from .errors import raise_for_status

AudioInput = "str | os.PathLike | tuple[np.ndarray, int]"

SAMPLING_KEYS = ("do_sample", "temperature", "top_k", "top_p", "repetition_penalty", "subtalker_do_sample",
                 "subtalker_temperature", "subtalker_top_k", "subtalker_top_p", "max_new_tokens",
                 "decoder_context", "chunk_frames", "non_streaming_text")
# Kokoro's synthesis parameters (the other keys above do not apply to it)
KOKORO_KEYS = ("speed", "pronunciations", "phonemes", "pause_ms")


def _check(status: int) -> None:
    if status != lib.VOX_OK:
        raise_for_status(status, string(lib.vox_last_error()))


def _cstr(s: str | None):
    return ffi.NULL if s is None else ffi.new("char[]", s.encode("utf-8"))


@dataclass
class Resources:
    """What an engine may use: device, threads and their placement, sessions at once."""

    device: str = "cpu"
    threads: int = 0                   # 0: every CPU the process may use
    cpu_affinity: str | None = None    # e.g. "0-3,6": pin compute thread i to the i-th listed CPU
    nice: int = 0                      # added to the compute threads' nice value (priority)
    max_sessions: int = 0              # 0: unlimited


def devices() -> dict:
    """The CPU (name, threads, features, the kernel path vox uses), memory, and usable GPUs."""
    return json.loads(string(lib.vox_devices()))


class Voice:
    """Who speaks: a cloned voice (Base), a built-in speaker (CustomVoice) or a description (VoiceDesign).
    Immutable; share it between sessions and threads freely."""

    def __init__(self, handle):
        self._h = ffi.gc(handle, lib.vox_voice_free)

    @property
    def info(self) -> dict:
        return json.loads(string(lib.vox_voice_info(self._h)))

    @property
    def mode(self) -> str:
        return self.info["mode"]

    @property
    def name(self) -> str:
        return self.info["name"]

    @property
    def speaker_embedding(self) -> np.ndarray | None:
        data, n = ffi.new("float **"), ffi.new("size_t *")
        _check(lib.vox_voice_embedding(self._h, data, n))
        if n[0] == 0:
            return None
        return np.frombuffer(ffi.buffer(data[0], n[0] * 4), dtype=np.float32).copy()

    @property
    def ref_codes(self) -> np.ndarray | None:
        data, n, g = ffi.new("int32_t **"), ffi.new("size_t *"), ffi.new("size_t *")
        _check(lib.vox_voice_ref_codes(self._h, data, n, g))
        if n[0] == 0:
            return None
        return np.frombuffer(ffi.buffer(data[0], n[0] * g[0] * 4), dtype=np.int32).reshape(n[0], g[0]).copy()

    @property
    def style_pack(self) -> np.ndarray | None:
        """A Kokoro voice's style pack [510, 256] (row = phoneme count - 1; [:128] decoder, [128:]
        predictor style); None for other families."""
        e = self.speaker_embedding
        if e is None or e.size != 510 * 256 or self.info.get("family", "kokoro") != "kokoro":
            return None
        return e.reshape(510, 256)

    def save(self, path: str | os.PathLike) -> None:
        """Write the voice as .tvoice (atomically)."""
        _check(lib.vox_voice_save(self._h, os.fsencode(path)))

    @classmethod
    def load(cls, path: str | os.PathLike, engine: "Engine") -> "Voice":
        """Read a .tvoice for `engine` (it must have been made with the same weights)."""
        out = ffi.new("vox_voice **")
        _check(lib.vox_voice_load(engine._h, os.fsencode(path), out))
        return cls(out[0])

    def __repr__(self) -> str:
        i = self.info
        return f"<vox.Voice {i['mode']} {i['name']!r}>"


@dataclass
class Chunk:
    """A piece of audio: float32 samples at sample_rate; is_last on the final one."""

    samples: np.ndarray
    sample_rate: int
    first_frame: int
    n_frames: int
    is_last: bool


class _NFCStream:
    """NFC-normalize text that arrives in pieces: a base character and the combining marks after it
    are held back until the next piece (or the end), so composition across pieces is not lost."""

    def __init__(self):
        self.pending = ""

    def push(self, text: str) -> str:
        self.pending += text
        cut = len(self.pending)
        while cut > 0 and unicodedata.combining(self.pending[cut - 1]):
            cut -= 1
        cut = max(cut - 1, 0)  # the last base character may still take marks
        out, self.pending = self.pending[:cut], self.pending[cut:]
        return unicodedata.normalize("NFC", out)

    def flush(self) -> str:
        out, self.pending = self.pending, ""
        return unicodedata.normalize("NFC", out)


class _Closing:
    """Context manager and finalizer around close()."""

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Session(_Closing):
    """One utterance: feed() text (whole or in pieces), pull audio chunks; end() when the text is done.

    ready() yields the chunks that can be made from the text so far; iterating the session yields the
    remaining chunks (call end() first, or iteration stops when more text is needed)."""

    def __init__(self, engine: "Engine", voice: Voice, params):
        out = ffi.new("vox_session **")
        _check(lib.vox_session_create(engine._h, voice._h, params, out))
        self._h = out[0]
        self._engine, self._voice = engine, voice  # keep both alive as long as the session
        self._nfc = _NFCStream()
        self._done = False
        self._chunk = ffi.new("vox_chunk *")

    def feed(self, text: str) -> None:
        piece = self._nfc.push(text)
        if piece:
            _check(lib.vox_session_feed(self._h, piece.encode("utf-8")))

    def end(self) -> None:
        rest = self._nfc.flush()
        if rest:
            _check(lib.vox_session_feed(self._h, rest.encode("utf-8")))
        _check(lib.vox_session_end(self._h))

    def pull(self) -> Chunk | None:
        """The next chunk, or None when more text is needed or the utterance is complete."""
        if self._done:
            return None
        c = self._chunk
        _check(lib.vox_session_pull(self._h, c))
        if c.kind == lib.VOX_CHUNK_END:
            self._done = True
            return None
        if c.kind == lib.VOX_CHUNK_NEED_TEXT:
            return None
        samples = np.frombuffer(ffi.buffer(c.samples, c.n_samples * 4), dtype=np.float32).copy() \
            if c.n_samples else np.zeros(0, dtype=np.float32)
        if c.is_last:
            self._done = True
        return Chunk(samples, c.sample_rate, c.first_frame, c.n_frames, bool(c.is_last))

    def ready(self) -> Iterator[Chunk]:
        """Chunks that can be made from the text fed so far."""
        while (c := self.pull()) is not None:
            yield c

    def __iter__(self) -> Iterator[Chunk]:
        return self.ready()

    def cancel(self) -> None:
        """Stop a running or future pull (from any thread); pulls then raise vox.VoxError."""
        lib.vox_session_cancel(self._h)

    @property
    def codes(self) -> np.ndarray:
        """The codec codes generated so far, [frames, groups]."""
        data, n, g = ffi.new("int32_t **"), ffi.new("size_t *"), ffi.new("size_t *")
        _check(lib.vox_session_codes(self._h, data, n, g))
        if n[0] == 0:
            return np.zeros((0, g[0]), dtype=np.int32)
        return np.frombuffer(ffi.buffer(data[0], n[0] * g[0] * 4), dtype=np.int32).reshape(n[0], g[0]).copy()

    def prompt_embeddings(self) -> np.ndarray:
        """The talker's prefill input (verification)."""
        data, n, d = ffi.new("float **"), ffi.new("size_t *"), ffi.new("size_t *")
        _check(lib.vox_session_prompt(self._h, data, n, d))
        return np.frombuffer(ffi.buffer(data[0], n[0] * d[0] * 4), dtype=np.float32).reshape(n[0], d[0]).copy()

    def teacher_force(self, codes: np.ndarray, vocab: int, codebook: int) -> tuple[np.ndarray, np.ndarray]:
        """Raw talker logits [frames + 1, vocab] and predictor logits [frames, groups - 1, codebook] with
        the given codes instead of sampling (verification)."""
        codes = np.ascontiguousarray(codes, dtype=np.int32)
        if codes.ndim != 2:
            raise ValueError(f"codes must be [frames, groups], got shape {list(codes.shape)}")
        t, g = codes.shape
        tl = np.empty((t + 1, vocab), dtype=np.float32)
        pl = np.empty((t, g - 1, codebook), dtype=np.float32)
        _check(lib.vox_session_teacher_force(self._h, ffi.from_buffer("int32_t[]", codes), t,
                                             ffi.from_buffer("float[]", tl), ffi.from_buffer("float[]", pl)))
        return tl, pl

    def close(self) -> None:
        if self._h is not None:
            lib.vox_session_free(self._h)
            self._h = None



class Engine(_Closing):
    """A model loaded for synthesis: its weights mapped from the .tmod, its own thread pool.

    Engine(model=None, device="cpu", resources=None, threads=None); no model: the default model
    (vox.models, built once into the cache). Use as a context manager, or close()."""

    def __init__(self, model: str | os.PathLike | None = None, device: str | None = None, resources: Resources | None = None,
                 threads: int | None = None):
        res = resources or Resources()
        p = ffi.new("vox_engine_params *", lib.vox_engine_default_params())
        keep = [_cstr(device or res.device), _cstr(res.cpu_affinity)]
        p.device, p.cpu_affinity = keep
        p.n_threads = res.threads if threads is None else threads
        p.nice, p.max_sessions = res.nice, res.max_sessions
        if model is None:
            from .models import ensure_default_model

            model = ensure_default_model()
        path = os.fspath(model)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file")
        out = ffi.new("vox_engine **")
        _check(lib.vox_engine_create(os.fsencode(path), p, out))
        self._h = out[0]
        self._sessions: "weakref.WeakSet[Session]" = weakref.WeakSet()
        self.model_path = path
        self.info: dict = json.loads(string(lib.vox_engine_info(self._h)))

    # ---------------------------------------------------------------------------------- facts
    @property
    def capabilities(self) -> dict:
        return self.info["capabilities"]

    @property
    def speakers(self) -> list[str]:
        return list(self.info.get("speakers", []))

    @property
    def languages(self) -> list[str]:
        return list(self.info.get("languages", []))

    @property
    def sample_rate(self) -> int:
        return int(self.info["sample_rate"])

    def stats(self) -> dict:
        s = ffi.new("vox_engine_stats *")
        s.struct_size = ffi.sizeof("vox_engine_stats")
        _check(lib.vox_engine_stats_get(self._h, s))
        return {k: getattr(s, k) for k in ("sessions_created", "sessions_active", "frames_generated",
                                           "samples_produced", "prefill_ms", "talker_ms", "predictor_ms",
                                           "decoder_ms", "voice_ms", "weights_bytes")}

    def tokenize(self, text: str) -> np.ndarray:
        """Token ids of `text` (NFC-normalized first), as the model's prompt builder sees them."""
        b = unicodedata.normalize("NFC", text).encode("utf-8")
        n = ffi.new("size_t *")
        _check(lib.vox_engine_tokenize(self._h, b, ffi.NULL, 0, n))
        ids = np.empty(n[0], dtype=np.int32)
        _check(lib.vox_engine_tokenize(self._h, b, ffi.from_buffer("int32_t[]", ids), n[0], n))
        return ids

    # ---------------------------------------------------------------------------------- voices
    def clone_voice(self, audio: AudioInput, ref_text: str | None = None, *, name: str | None = None,
                    language: str | None = None, x_vector_only: bool = False, seed: int | None = None) -> Voice:
        """A voice from a recording (a path, or (samples, sample_rate)) and its transcript (Base models).
        x_vector_only: the speaker embedding alone (no transcript needed). `seed` becomes the voice's
        default seed."""
        samples, sr = _read_audio(audio)
        cp = ffi.new("vox_clone_params *", lib.vox_clone_default_params())
        defaults = json.dumps({"seed": int(seed)}) if seed is not None else None
        keep = [_cstr(unicodedata.normalize("NFC", ref_text) if ref_text else None), _cstr(name), _cstr(language),
                _cstr(defaults)]
        cp.ref_text, cp.name, cp.language, cp.defaults = keep
        cp.x_vector_only = int(bool(x_vector_only))
        samples = np.ascontiguousarray(samples, dtype=np.float32)
        channels = 1 if samples.ndim == 1 else samples.shape[1]
        out = ffi.new("vox_voice **")
        _check(lib.vox_voice_clone(self._h, ffi.from_buffer("float[]", samples), samples.shape[0], channels, sr, cp, out))
        return Voice(out[0])

    def speaker_voice(self, name: str, instruct: str | None = None) -> Voice:
        """A built-in speaker of a CustomVoice model, with an optional style instruction."""
        out = ffi.new("vox_voice **")
        _check(lib.vox_voice_speaker(self._h, name.encode("utf-8"), _cstr(instruct and unicodedata.normalize("NFC", instruct)), out))
        return Voice(out[0])

    def design_voice(self, description: str) -> Voice:
        """A voice from a description (VoiceDesign models)."""
        out = ffi.new("vox_voice **")
        _check(lib.vox_voice_design(self._h, unicodedata.normalize("NFC", description).encode("utf-8"), out))
        return Voice(out[0])

    def load_voice(self, path: str | os.PathLike) -> Voice:
        return Voice.load(path, self)

    # ---------------------------------------------------------------------------------- synthesis
    def params(self, voice: Voice | None = None, seed: int | None = None, language: str | None = None,
               decoder: str = "stream", **sampling):
        """A vox_synth_params with the model's and the voice's defaults (seed None: the voice's default
        seed, else 0), overridden by the arguments."""
        p = ffi.new("vox_synth_params *", lib.vox_synth_default_params(self._h, voice._h if voice else ffi.NULL))
        if seed is not None:
            p.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        if decoder not in ("stream", "reference"):
            raise ValueError(f"decoder must be 'stream' or 'reference', not {decoder!r}")
        p.decoder = lib.VOX_DECODER_STREAM if decoder == "stream" else lib.VOX_DECODER_REFERENCE
        keep = []
        for k, v in sampling.items():
            if k in KOKORO_KEYS:
                if v is None:
                    continue
                if k == "phonemes":
                    p.phoneme_input = int(bool(v))
                elif k == "pronunciations":
                    if not isinstance(v, str):
                        v = json.dumps({str(w): str(ph) for w, ph in dict(v).items()}, ensure_ascii=False)
                    keep.append(_cstr(unicodedata.normalize("NFC", v)))
                    p.pronunciations = keep[-1]
                elif k == "speed":
                    if not 0.25 <= float(v) <= 4.0:
                        raise ValueError(f"speed must be in [0.25, 4], not {v}")
                    p.speed = float(v)
                else:
                    p.pause_ms = int(v)
                continue
            if k not in SAMPLING_KEYS:
                raise TypeError(f"unknown synthesis parameter {k!r}; known: {', '.join(SAMPLING_KEYS + KOKORO_KEYS)}")
            if v is not None:
                setattr(p, k, int(v) if isinstance(v, bool) else v)
        lang = _cstr(language)
        p.language = lang
        return p, (lang, keep)

    def session(self, voice: Voice, seed: int | None = None, language: str | None = None, decoder: str = "stream",
                **sampling) -> Session:
        if self._h is None:
            raise ValueError("the engine is closed")
        p, keep = self.params(voice, seed, language, decoder, **sampling)
        s = Session(self, voice, p)
        s._keep = keep
        self._sessions.add(s)
        return s

    def synthesize(self, text: str, voice: Voice, seed: int | None = None, language: str | None = None,
                   decoder: str = "stream", **sampling) -> np.ndarray:
        """The whole utterance as float32 samples at sample_rate."""
        if not text or not text.strip():
            raise ValueError("the text is empty")
        with self.session(voice, seed, language, decoder, **sampling) as s:
            s.feed(text)
            s.end()
            parts = [c.samples for c in s]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def synthesize_many(self, texts: Sequence[str], voice: Voice, seed: int = 0, threads: int | None = None,
                        **kw) -> list[np.ndarray]:
        """Several utterances in parallel sessions (one Python thread each, the GIL released while the
        core computes). Text i uses seed + i."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=threads or min(len(texts), os.cpu_count() or 1) or 1) as ex:
            futs = [ex.submit(self.synthesize, t, voice, seed + i, **kw) for i, t in enumerate(texts)]
            return [f.result() for f in futs]

    def benchmark(self, text: str, voice: Voice, runs: int = 3, seed: int = 0, **kw) -> dict:
        """Time synthesis: real-time factor (compute / audio, lower is better) and time to first chunk."""
        rtf, first = [], []
        for r in range(runs):
            t0 = time.perf_counter()
            t_first, n = None, 0
            with self.session(voice, seed, **kw) as s:
                s.feed(text)
                s.end()
                for c in s:
                    if t_first is None:
                        t_first = time.perf_counter() - t0
                    n += c.samples.size
            dt = time.perf_counter() - t0
            rtf.append(dt / max(n / self.sample_rate, 1e-9))
            first.append(t_first or dt)
        return {"runs": runs, "rtf": float(np.median(rtf)), "rtf_all": rtf, "first_chunk_s": float(np.median(first)),
                "audio_s": n / self.sample_rate}

    def trace(self, ids, style: np.ndarray, tap: str, *, speed: float = 1.0, seed: int = 0,
              noise: bool = False) -> np.ndarray:
        """Kokoro verification: one span of model input ids ([0] + phoneme ids + [0]) with a style row
        [256] through the native model; the intermediate `tap` as a time-major array [rows, cols]
        (see vox.h, vox_engine_trace). noise=False zeroes the sine source's randomness."""
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        st = np.ascontiguousarray(style, dtype=np.float32).reshape(-1)
        if st.size != 256:
            raise ValueError(f"style must be a voice pack row of 256 values, got {st.size}")
        r, c = ffi.new("size_t *"), ffi.new("size_t *")
        args = (self._h, ffi.from_buffer("int32_t[]", ids), ids.size, ffi.from_buffer("float[]", st), float(speed),
                int(seed) & 0xFFFFFFFFFFFFFFFF, int(bool(noise)), tap.encode())
        _check(lib.vox_engine_trace(*args, ffi.NULL, 0, r, c))
        out = np.empty((r[0], c[0]), dtype=np.float32)
        _check(lib.vox_engine_trace(*args, ffi.from_buffer("float[]", out), out.size, r, c))
        return out

    def decode(self, codes: np.ndarray, ref_codes: np.ndarray | None = None, mode: str = "stream",
               context: int = 50, chunk_frames: int = 4) -> np.ndarray:
        """Codes [frames, groups] -> audio with the model's codec decoder (see vox.h, vox_engine_decode)."""
        codes = np.ascontiguousarray(codes, dtype=np.int32)
        ref = None if ref_codes is None else np.ascontiguousarray(ref_codes, dtype=np.int32)
        groups = int(self.info.get("code_groups", 16))
        for name, c in (("codes", codes), ("ref_codes", ref)):
            if c is not None and (c.ndim != 2 or c.shape[1] != groups):
                raise ValueError(f"{name} must be [frames, {groups}], got shape {list(c.shape)}")
        if mode not in ("stream", "reference"):
            raise ValueError(f"mode must be 'stream' or 'reference', not {mode!r}")
        m = lib.VOX_DECODER_STREAM if mode == "stream" else lib.VOX_DECODER_REFERENCE
        n = ffi.new("size_t *")
        args = (ffi.from_buffer("int32_t[]", codes) if codes.size else ffi.NULL, codes.shape[0],
                ffi.from_buffer("int32_t[]", ref) if ref is not None and ref.size else ffi.NULL,
                0 if ref is None else ref.shape[0], m, context, chunk_frames)
        _check(lib.vox_engine_decode(self._h, *args, ffi.NULL, 0, n))
        pcm = np.empty(n[0], dtype=np.float32)
        _check(lib.vox_engine_decode(self._h, *args, ffi.from_buffer("float[]", pcm) if n[0] else ffi.NULL, n[0], n))
        return pcm

    # ---------------------------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Free the engine; sessions still open on it are closed first."""
        if getattr(self, "_h", None) is not None:
            for s in list(self._sessions):
                s.close()
            lib.vox_engine_free(self._h)
            self._h = None


    def __repr__(self) -> str:
        i = self.info
        return f"<vox.Engine {i.get('family')} {i.get('variant')} {i.get('size')} {os.path.basename(self.model_path)}>"


def _read_audio(audio) -> tuple[np.ndarray, int]:
    if isinstance(audio, tuple) and len(audio) == 2:
        x, sr = audio
        return np.asarray(x, dtype=np.float32), int(sr)
    if isinstance(audio, (str, os.PathLike)):
        from .formats.audio import read_audio_file  # sizes checked before decoding, regular files only

        return read_audio_file(audio)
    raise TypeError("audio must be a path or a (samples, sample_rate) tuple")
