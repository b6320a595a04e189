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

A model family's own synthesis options (sampling settings, speed, decoder choices, ...) are keyword
arguments, checked against the family's typed options (eng.family.Options, a dataclass: see
vox.families) before they reach the core, which checks them again against its own table
(eng.options()). Every native call releases the GIL, so several threads can run sessions of one
engine at once (synthesize_many does). Text is NFC-normalized here before it reaches the core.

Thread safety: an Engine may be used from any thread; a Session by one thread at a time, except
cancel() and close(), which work from any thread (close cancels a pull in progress on another thread
and waits for it). Closing an engine closes its sessions first.
"""

from __future__ import annotations

import json
import os
import threading
import time
import unicodedata
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

import numpy as np

from ._native import ffi, lib, string
from .errors import InvalidArgument, Unsupported, VoxError, raise_for_status

if TYPE_CHECKING:
    from .duplex import Duplex
    from .families import Family

AudioInput = "str | os.PathLike[str] | tuple[np.ndarray, int]"  # for the docs; annotated in full below
_INT32 = (-(2**31), 2**31 - 1)
_U64 = 2**64


def _check(status: int) -> None:
    if status != lib.VOX_OK:
        raise_for_status(status, string(lib.vox_last_error()))


def _cstr(s: str | None):
    return ffi.NULL if s is None else ffi.new("char[]", s.encode("utf-8"))


def check_text(text: str, what: str = "the text") -> str:
    """NFC text for the core; a NUL or other control character is an InvalidArgument naming its offset
    (the core would stop at a NUL and silently drop the rest)."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, not {type(text).__name__}")
    for i, ch in enumerate(text):
        o = ord(ch)
        if (o < 0x20 and ch not in "\t\n\r") or 0x7F <= o < 0xA0:
            raise InvalidArgument(f"{what} holds the control character U+{o:04X} at offset {i}")
        if 0xD800 <= o < 0xE000:
            raise InvalidArgument(f"{what} holds a lone surrogate U+{o:04X} at offset {i}")
    return unicodedata.normalize("NFC", text)


def _int_in(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    v = int(value)
    if not lo <= v <= hi:
        raise InvalidArgument(f"{name} must be in [{lo}, {hi}], not {v}")
    return v


def _seed(seed) -> int:
    return _int_in("seed", seed, 0, _U64 - 1)


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


def _array_out(a) -> np.ndarray:
    """A copy of a vox_array the library owns, as numpy."""
    dt = {lib.VOX_DTYPE_F32: np.float32, lib.VOX_DTYPE_I32: np.int32, lib.VOX_DTYPE_U8: np.uint8}.get(a.dtype)
    if dt is None:
        raise VoxError(f"array {string(a.name)}: unexpected dtype {a.dtype}")
    shape = tuple(int(a.shape[i]) for i in range(a.ndim))
    n = int(np.prod(shape)) if shape else 1
    if n == 0:
        return np.zeros(shape, dt)
    return np.frombuffer(ffi.buffer(a.data, n * np.dtype(dt).itemsize), dtype=dt).reshape(shape).copy()


class Voice:
    """Who speaks: a cloned voice, a built-in speaker or a described voice, as the model's family makes
    them. Immutable; share it between sessions and threads freely. Its data are named arrays
    (voice.arrays) and texts (voice.texts), as its family's voice schema defines."""

    def __init__(self, handle):
        self._h = ffi.gc(handle, lib.vox_voice_free)

    @property
    def info(self) -> dict:
        return json.loads(string(lib.vox_voice_info(self._h)))

    @property
    def family(self) -> str:
        return self.info["family"]

    @property
    def mode(self) -> str:
        return self.info["mode"]

    @property
    def name(self) -> str:
        return self.info["name"]

    @property
    def texts(self) -> dict[str, str]:
        return dict(self.info.get("texts", {}))

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """Every array of the voice (copies)."""
        out: dict[str, np.ndarray] = {}
        for name in self.info.get("arrays", {}):
            a = self.array(name)
            if a is not None:
                out[name] = a
        return out

    def array(self, name: str) -> np.ndarray | None:
        """The voice's array `name` (a copy), or None when it has none of that name."""
        if name not in self.info.get("arrays", {}):
            return None
        a = ffi.new("vox_array *")
        _check(lib.vox_voice_array(self._h, name.encode(), a))
        return _array_out(a)

    def save(self, path: str | os.PathLike) -> None:
        """Write the voice as .tvoice (atomically)."""
        _check(lib.vox_voice_save(self._h, os.fsencode(path)))

    @classmethod
    def load(cls, path: str | os.PathLike, engine: "Engine") -> "Voice":
        """Read a .tvoice for `engine` (made with the same weights, or portable within its family)."""
        out = ffi.new("vox_voice **")
        with engine._use():
            _check(lib.vox_voice_load(engine._h, os.fsencode(path), out))
        return cls(out[0])

    def __repr__(self) -> str:
        i = self.info
        return f"<vox.Voice {i['family']} {i['mode']} {i['name']!r}>"


@dataclass
class Chunk:
    """A piece of audio: float32 samples at sample_rate; is_last on the final one. first_frame and
    n_frames count in the family's unit (codec frames, spans, pieces). words: the chunk's words and
    when they are spoken ([{"word", "start", "end"}], seconds from the utterance's first sample) for
    sessions made with timestamps=True on a family that knows them (capabilities["timestamps"])."""

    samples: np.ndarray
    sample_rate: int
    first_frame: int
    n_frames: int
    is_last: bool
    words: list | None = None


class _NFCStream:
    """NFC-normalize text that arrives in pieces: a base character and the combining marks after it
    are held back until the next piece (or the end), so composition across pieces is not lost. The
    held-back tail is only the last base character and its marks, scanned once from where the
    previous piece ended, so a run of marks costs linear time."""

    def __init__(self):
        self.pending: list[str] = []   # the held-back tail: a base character (maybe) and its marks
        self.base = False              # pending starts with a base character

    def push(self, text: str) -> str:
        out: list[str] = []
        for ch in text:
            if unicodedata.combining(ch):
                self.pending.append(ch)
                continue
            if self.pending:
                out.append("".join(self.pending))
            self.pending = [ch]
        # everything but the tail is final (a mark after the tail's base still composes with it)
        return unicodedata.normalize("NFC", "".join(out))

    def flush(self) -> str:
        out, self.pending = "".join(self.pending), []
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

    def __init__(self, engine: "Engine", voice: Voice, seed: int | None, language: str | None, options: str | None,
                 timestamps: bool = False):
        # calls into the core in progress (a pull, and writers on other threads): close() waits for them
        self._cv = threading.Condition()
        self._calls = 0
        self._pull_lock = threading.Lock()  # one pull at a time
        self._engine, self._voice = engine, voice  # kept alive as long as the session
        self._recipe = (seed, language, options)
        self._h = None
        out = ffi.new("vox_session **")
        with engine._use():
            p = ffi.new("vox_synth_params *", lib.vox_synth_default_params(engine._h, voice._h))
            if seed is not None:
                p.seed = seed
            keep = [_cstr(language), _cstr(options)]
            p.language, p.options = keep
            _check(lib.vox_session_create(engine._h, voice._h, p, out))
        self._h = out[0]
        self._seed = int(p.seed)
        self._nfc = _NFCStream()
        self._text: list[str] = []
        self._done = False
        self._chunk = ffi.new("vox_chunk *")
        if timestamps and not engine.capabilities.get("timestamps"):
            self.close()
            raise Unsupported(f"{engine.family.title} models do not give word timestamps")
        self._timestamps = timestamps

    @property
    def seed(self) -> int:
        """The seed the session samples with (the given one, else the voice's default, else 0)."""
        return self._seed

    @contextmanager
    def _use(self):
        """A call into the core: the handle stays valid until it returns (close() waits)."""
        with self._cv:
            if self._h is None:
                raise VoxError("the session is closed")
            self._calls += 1
            h = self._h
        try:
            yield h
        finally:
            with self._cv:
                self._calls -= 1
                if self._calls == 0:
                    self._cv.notify_all()

    def feed(self, text: str) -> None:
        """Append text (any piece: a word, a token, a sentence); any thread, also while another pulls."""
        # the core is called even when NFC holds the whole piece back (piece == ""): a closed or ended
        # session refuses it now, not silently
        with self._use() as h:
            piece = self._nfc.push(check_text(text))
            _check(lib.vox_session_feed(h, piece.encode("utf-8")))
        if piece:
            self._text.append(piece)

    def flush(self) -> None:
        """What was fed so far is complete: speak it without waiting for the rest of a sentence or word."""
        rest = self._nfc.flush()
        with self._use() as h:
            if rest:
                _check(lib.vox_session_feed(h, rest.encode("utf-8")))
                self._text.append(rest)
            _check(lib.vox_session_flush(h))

    def set_pending(self, keep: int, text: str) -> None:
        """Keep the first `keep` bytes (UTF-8) of the text fed so far and replace the rest with `text`
        (typing mode). vox.InvalidArgument, with .used (the bytes already spoken), when the model has
        used more than `keep` bytes."""
        rest = self._nfc.flush()
        new = check_text(text)
        used = ffi.new("size_t *")
        with self._use() as h:
            if rest:
                _check(lib.vox_session_feed(h, rest.encode("utf-8")))
                self._text.append(rest)
            st = lib.vox_session_set_pending(h, keep, new.encode("utf-8"), used)
        if st != lib.VOX_OK:
            try:
                _check(st)
            except InvalidArgument as e:
                e.used = int(used[0])  # type: ignore[attr-defined]
                raise
        fed = "".join(self._text).encode("utf-8")[:keep].decode("utf-8", "ignore")
        self._text = [fed, new]

    def end(self) -> None:
        """No more text: the rest of the utterance can be made."""
        rest = self._nfc.flush()
        with self._use() as h:
            if rest:
                _check(lib.vox_session_feed(h, rest.encode("utf-8")))
                self._text.append(rest)
            _check(lib.vox_session_end(h))

    def pull(self) -> Chunk | None:
        """The next chunk, or None when more text is needed or the utterance is complete."""
        if self._done:
            return None
        with self._pull_lock, self._use() as h:
            c = self._chunk
            _check(lib.vox_session_pull(h, c))
            if c.kind == lib.VOX_CHUNK_END:
                self._done = True
                return None
            if c.kind == lib.VOX_CHUNK_NEED_TEXT:
                return None
            samples = np.frombuffer(ffi.buffer(c.samples, c.n_samples * 4), dtype=np.float32).copy() \
                if c.n_samples else np.zeros(0, dtype=np.float32)
            chunk = Chunk(samples, c.sample_rate, c.first_frame, c.n_frames, bool(c.is_last))
            if self._timestamps:
                a = ffi.new("vox_array *")
                _check(lib.vox_session_output(h, b"timestamps", a))
                chunk.words = json.loads(_array_out(a).tobytes().decode("utf-8"))
        if chunk.is_last:
            self._done = True
        return chunk

    def ready(self) -> Iterator[Chunk]:
        """Chunks that can be made from the text fed so far."""
        while (c := self.pull()) is not None:
            yield c

    def __iter__(self) -> Iterator[Chunk]:
        return self.ready()

    def cancel(self) -> None:
        """Stop a running or future pull (from any thread); pulls then raise vox.Cancelled."""
        h = self._h
        if h is not None:
            lib.vox_session_cancel(h)

    def output(self, name: str) -> np.ndarray:
        """A named output of the session so far (eng.info["session_outputs"]; e.g. "codes", the codec
        codes [frames, groups] of a codec model)."""
        a = ffi.new("vox_array *")
        with self._pull_lock, self._use() as h:
            _check(lib.vox_session_output(h, name.encode(), a))
            return _array_out(a)

    def run(self, entry: str, taps: str | Sequence[str] | None = None, **inputs) -> dict[str, np.ndarray]:
        """A verification entry (Engine.run) with this session's voice, seed, language and options, on
        the text fed so far (a fresh run: this session's own state is untouched)."""
        seed, language, options = self._recipe
        return self._engine._run(entry, self._voice, seed, language, options, taps,
                                 {"text": "".join(self._text), **inputs})

    def close(self) -> None:
        """Free the session; from another thread, this cancels a pull in progress and waits for it."""
        if getattr(self, "_h", None) is None:
            return
        self.cancel()
        with self._cv:
            h, self._h = self._h, None   # no new call starts
            while self._calls:
                self._cv.wait()
        if h is None:
            return
        # The engine's free frees its live sessions. An engine closed first (at interpreter exit both are
        # finalized in any order, and the engine's weak set of sessions is already empty then) has freed
        # this one: freeing it again was a use after free. Counted as a call on the engine, so a close of
        # the engine on another thread waits for this free.
        eng = self._engine
        with eng._cv:
            if eng._h is None:
                return
            eng._calls += 1
        try:
            lib.vox_session_free(h)
        finally:
            with eng._cv:
                eng._calls -= 1
                if eng._calls == 0:
                    eng._cv.notify_all()


class Engine(_Closing):
    """A model loaded for synthesis: its weights mapped from the .tmod, its own thread pool.

    Engine(model=None, device="cpu", resources=None, threads=None); no model: the default model
    (vox.models, built once into the cache). Use as a context manager, or close()."""

    def __init__(self, model: str | os.PathLike | None = None, device: str | None = None,
                 resources: Resources | None = None, threads: int | None = None):
        self._h = None
        self._cv = threading.Condition()
        self._calls = 0
        res = resources or Resources()
        p = ffi.new("vox_engine_params *", lib.vox_engine_default_params())
        keep = [_cstr(device or res.device), _cstr(res.cpu_affinity)]
        p.device, p.cpu_affinity = keep
        p.n_threads = _int_in("threads", res.threads if threads is None else threads, 0, 1024)
        p.nice = _int_in("nice", res.nice, -20, 19)
        p.max_sessions = _int_in("max_sessions", res.max_sessions, 0, 65536)
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
        from .families import get as _family

        self.family: "Family" = _family(self.info["family"])

    @contextmanager
    def _use(self):
        """A call into the core on this engine: close() waits until none is in progress."""
        with self._cv:
            if self._h is None:
                raise VoxError("the engine is closed")
            self._calls += 1
        try:
            yield
        finally:
            with self._cv:
                self._calls -= 1
                if self._calls == 0:
                    self._cv.notify_all()

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
        """Sessions, samples, compute time, and per stage of the family's pipeline ({"stages": {name:
        {"ms", "count"}}}, in the pipeline's order)."""
        s = ffi.new("vox_engine_stats *")
        s.struct_size = ffi.sizeof("vox_engine_stats")
        with self._use():
            _check(lib.vox_engine_stats_get(self._h, s))
            n = ffi.new("size_t *")
            _check(lib.vox_engine_stage_stats(self._h, ffi.NULL, 0, n))
            st = ffi.new("vox_stage_stat[]", max(n[0], 1))
            _check(lib.vox_engine_stage_stats(self._h, st, n[0], n))
        out: dict[str, Any] = {k: getattr(s, k) for k in ("sessions_created", "sessions_active", "samples_produced",
                                                          "compute_ms", "weights_bytes")}
        out["stages"] = {string(st[i].name): {"ms": st[i].ms, "count": st[i].count} for i in range(n[0])}
        return out

    def options(self, voice: Voice | None = None) -> dict:
        """The family's synthesis options as the core describes them, with the defaults that apply to
        `voice` (the model's when None): {"family", "options": [{"name", "type", "default", ...}]}."""
        n = ffi.new("size_t *")
        vh = voice._h if voice is not None else ffi.NULL
        with self._use():
            _check(lib.vox_engine_options(self._h, vh, ffi.NULL, 0, n))
            buf = ffi.new("char[]", n[0] + 1)
            _check(lib.vox_engine_options(self._h, vh, buf, n[0] + 1, n))
        return json.loads(ffi.string(buf).decode())

    def tokenize(self, text: str) -> np.ndarray:
        """Token ids of `text` (NFC-normalized first), as the model's text frontend sees them."""
        b = check_text(text).encode("utf-8")
        n = ffi.new("size_t *")
        with self._use():
            _check(lib.vox_engine_tokenize(self._h, b, ffi.NULL, 0, n))
            ids = np.empty(n[0], dtype=np.int32)
            _check(lib.vox_engine_tokenize(self._h, b, ffi.from_buffer("int32_t[]", ids), n[0], n))
        return ids

    # ---------------------------------------------------------------------------------- voices
    def clone_voice(self, audio: "str | os.PathLike[str] | tuple[np.ndarray, int]", ref_text: str | None = None, *, name: str | None = None,
                    language: str | None = None, seed: int | None = None, **options) -> Voice:
        """A voice from a recording (a path, or (samples, sample_rate)) and its transcript. `seed`
        becomes the voice's default seed; options are the family's cloning options (e.g.
        x_vector_only=True for Qwen3-TTS: the speaker embedding alone, no transcript needed)."""
        samples, sr = read_audio(audio)
        cp = ffi.new("vox_clone_params *", lib.vox_clone_default_params())
        defaults = json.dumps({"seed": _seed(seed)}) if seed is not None else None
        copts = self.family.clone_options_json(options)
        keep = [_cstr(check_text(ref_text, "ref_text") if ref_text else None), _cstr(name),
                _cstr(language), _cstr(defaults), _cstr(copts)]
        cp.ref_text, cp.name, cp.language, cp.defaults, cp.options = keep
        samples = np.ascontiguousarray(samples, dtype=np.float32)
        if samples.ndim not in (1, 2) or samples.size == 0:
            raise InvalidArgument(f"the recording must be [samples] or [samples, channels] with samples, "
                                  f"not shape {list(samples.shape)}")
        channels = 1 if samples.ndim == 1 else samples.shape[1]
        out = ffi.new("vox_voice **")
        with self._use():
            _check(lib.vox_voice_clone(self._h, ffi.from_buffer("float[]", samples), samples.shape[0], channels, sr,
                                       cp, out))
        return Voice(out[0])

    def speaker_voice(self, name: str, instruct: str | None = None) -> Voice:
        """A built-in speaker, with an optional style instruction."""
        out = ffi.new("vox_voice **")
        instr = _cstr(check_text(instruct, "instruct") if instruct else None)
        with self._use():
            _check(lib.vox_voice_speaker(self._h, check_text(name, "the speaker").encode("utf-8"), instr, out))
        return Voice(out[0])

    def design_voice(self, description: str) -> Voice:
        """A voice from a description."""
        out = ffi.new("vox_voice **")
        with self._use():
            _check(lib.vox_voice_design(self._h, check_text(description, "the description").encode("utf-8"), out))
        return Voice(out[0])

    def load_voice(self, path: str | os.PathLike) -> Voice:
        return Voice.load(path, self)

    def default_voice(self) -> Voice:
        """The voice the model speaks with when none is named (the family decides: e.g. Kokoro's default
        speaker); InvalidArgument when the model needs one."""
        if self._h is None:  # a closed engine says so first, not that it needs a speaker
            raise VoxError("the engine is closed")
        return self.family.default_voice(self)

    # ---------------------------------------------------------------------------------- synthesis
    def _options(self, options: Any, kw: Mapping[str, Any]) -> str | None:
        return self.family.options_json(options, kw)

    def session(self, voice: Voice, seed: int | None = None, language: str | None = None, *,
                options: Any = None, timestamps: bool = False, **kw) -> Session:
        """A session (one utterance) of `voice`; keyword arguments are the family's synthesis options
        (eng.family.Options), or pass them as options=Options(...). timestamps: chunks carry their
        words' timings (Chunk.words)."""
        s = Session(self, voice, None if seed is None else _seed(seed), language, self._options(options, kw),
                    timestamps)
        self._sessions.add(s)
        return s

    def synthesize(self, text: str, voice: Voice | None = None, seed: int | None = None, language: str | None = None,
                   *, options: Any = None, timestamps: bool = False, **kw):
        """The whole utterance as float32 samples at sample_rate (voice None: the default voice); with
        timestamps=True, (samples, words): the words and when they are spoken (Chunk.words)."""
        if not text or not text.strip():
            raise InvalidArgument("the text is empty")
        voice = voice if voice is not None else self.default_voice()
        words: list = []
        with self.session(voice, seed, language, options=options, timestamps=timestamps, **kw) as s:
            s.feed(text)
            s.end()
            parts = []
            for c in s:
                parts.append(c.samples)
                words += c.words or []
        audio = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
        return (audio, words) if timestamps else audio

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
        n = 0
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

    def duplex(self, voice: Voice | None = None, *, commit: str = "auto", idle_ms: int | None = None,
               utterance_gap_ms: int | None = None, on_conflict: str = "keep", seed: int | None = None,
               language: str | None = None, options: Any = None, timestamps: bool = False, **kw) -> "Duplex":
        """A duplex stream (vox.duplex.Duplex): write / set_text / flush / end / cancel from any thread
        while audio() (or aaudio(), final()) yields the chunks as they are made."""
        from .duplex import Duplex

        return Duplex(self, voice if voice is not None else self.default_voice(), commit=commit, idle_ms=idle_ms,
                      utterance_gap_ms=utterance_gap_ms, on_conflict=on_conflict,
                      seed=None if seed is None else _seed(seed), language=language, options=options,
                      timestamps=timestamps, **kw)

    # ---------------------------------------------------------------------------------- verification
    def run(self, entry: str, voice: Voice | None = None, *, inputs: Mapping[str, Any] | None = None,
            taps: str | Sequence[str] | None = None, seed: int | None = None, language: str | None = None,
            options: Any = None, **kw) -> dict[str, np.ndarray]:
        """A verification entry of the family (eng.info["entries"]): its named inputs (numpy arrays,
        ints, or the text as a str) through the native stages; returns the outputs named in `taps`
        (all when None), e.g. run("teacher_force", voice, inputs={"text": ..., "codes": codes})."""
        return self._run(entry, voice, None if seed is None else _seed(seed), language,
                         self._options(options, kw) if voice is not None else None, taps, dict(inputs or {}))

    def _run(self, entry, voice, seed, language, options, taps, inputs: dict) -> dict[str, np.ndarray]:
        arrays, keep = [], []
        for name, value in inputs.items():
            if value is None:
                continue
            if isinstance(value, str):
                data = np.frombuffer(check_text(value).encode("utf-8"), np.uint8).copy()
            elif isinstance(value, (bool, int, np.integer)):
                data = np.asarray(_int_in(name, int(value), *_INT32), np.int32)
            else:
                data = np.ascontiguousarray(value)
                if data.dtype.kind == "f":
                    data = data.astype(np.float32, copy=False)
                elif data.dtype.kind in "iu" and data.dtype != np.uint8:
                    if data.size and (data.min() < _INT32[0] or data.max() > _INT32[1]):
                        raise InvalidArgument(f"input {name} holds values beyond int32")
                    data = data.astype(np.int32, copy=False)
                elif data.dtype != np.uint8:
                    raise TypeError(f"input {name}: arrays of float, int or uint8, not {data.dtype}")
                data = np.ascontiguousarray(data)
            if data.ndim > 4:
                raise InvalidArgument(f"input {name} has {data.ndim} dimensions (at most 4)")
            a = ffi.new("vox_array *")
            nm = ffi.new("char[]", name.encode())
            a.name = nm
            a.dtype = {np.float32: lib.VOX_DTYPE_F32, np.int32: lib.VOX_DTYPE_I32,
                       np.uint8: lib.VOX_DTYPE_U8}[data.dtype.type]
            a.ndim = data.ndim
            for i, d in enumerate(data.shape):
                a.shape[i] = d
            a.data = ffi.from_buffer(data) if data.size else ffi.NULL
            keep += [nm, data, a]
            arrays.append(a)
        arr = ffi.new("vox_array[]", max(len(arrays), 1))
        for i, a in enumerate(arrays):
            arr[i] = a[0]
        params = ffi.NULL
        tap = None if taps is None else taps if isinstance(taps, str) else ",".join(taps)
        out = ffi.new("vox_trace **")
        with self._use():
            if voice is not None:
                params = ffi.new("vox_synth_params *", lib.vox_synth_default_params(self._h, voice._h))
                if seed is not None:
                    params.seed = seed
                pk = [_cstr(language), _cstr(options)]
                params.language, params.options = pk
                keep += pk
            _check(lib.vox_engine_run(self._h, entry.encode(), voice._h if voice is not None else ffi.NULL, params,
                                      arr, len(arrays), _cstr(tap), out))
        trace = ffi.gc(out[0], lib.vox_trace_free)
        res: dict[str, np.ndarray] = {}
        a = ffi.new("vox_array *")
        for i in range(lib.vox_trace_count(trace)):
            _check(lib.vox_trace_get(trace, i, a))
            res.setdefault(string(a.name), _array_out(a))
        return res

    # ---------------------------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Free the engine; sessions still open on it are closed first, and calls in progress on other
        threads are waited for (new ones raise VoxError)."""
        if getattr(self, "_h", None) is None:
            return
        for s in list(self._sessions):
            s.close()
        with self._cv:
            h, self._h = self._h, None
            while self._calls:
                self._cv.wait()
        if h is not None:
            lib.vox_engine_free(h)

    def __repr__(self) -> str:
        i = self.info
        return f"<vox.Engine {i.get('family')} {i.get('variant')} {i.get('size')} {os.path.basename(self.model_path)}>"


def read_audio(audio) -> tuple[np.ndarray, int]:
    """(samples, rate) of a recording: a path (WAV, FLAC, ...: whatever libsndfile reads) or a
    (samples, rate) pair; a clear error for what is not audio."""
    if isinstance(audio, tuple) and len(audio) == 2:
        x, sr = audio
        return np.asarray(x, dtype=np.float32), _int_in("sample rate", sr, 1, 2**31 - 1)
    if isinstance(audio, (str, os.PathLike)):
        from .formats.audio import read_audio_file  # sizes checked before decoding, regular files only

        return read_audio_file(audio)
    raise TypeError("audio must be a path or a (samples, sample_rate) tuple")
