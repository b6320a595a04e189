"""Duplex streaming: text written in pieces (from any thread) while audio is read as it is made.

    with eng.duplex(voice, commit="auto", idle_ms=600) as d:
        d.write("Hello, ")                 # from an LLM stream, a keyboard, any thread
        d.write("how are you?")
        d.end()
        for chunk in d.audio():            # vox.Chunk objects as they are ready
            play(chunk.samples)

The engine decides what reaches the model and when (the core's stream options, vox.h): commit
"auto" gives the model what it can take (Qwen3-TTS: words as they arrive, an unfinished word held
back; Kokoro: whole sentences), "sentence" complete sentences only, "manual" nothing until flush() or
end(). idle_ms flushes after a pause in writing (an unfinished sentence or word is spoken as it is).
utterance_gap_ms closes the utterance after a longer pause: the next text starts a new one (for an
autoregressive model, a new session). set_text(whole_text) is typing mode: additions and edits of the
not-yet-spoken tail are applied, what was spoken is never spoken again (on_conflict says what an edit
of spoken text does: "keep" leaves it, "raise" raises vox.InvalidArgument, "respeak" closes the
utterance and speaks the text again from the changed word).

With commit "auto" and no flush or pause, a family whose capabilities["stream"]["exact"] is true
makes the same audio as for the whole text given at once.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator

import numpy as np

from .errors import InvalidArgument, VoxError

if TYPE_CHECKING:
    from .engine import Chunk, Engine, Session, Voice

_END = object()
COMMITS = ("auto", "sentence", "manual")
CONFLICTS = ("keep", "raise", "respeak")


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class Duplex:
    """A duplex stream over one engine and voice; see the module's text. Make it with Engine.duplex."""

    def __init__(self, engine: "Engine", voice: "Voice", *, commit: str = "auto", idle_ms: int | None = None,
                 utterance_gap_ms: int | None = None, on_conflict: str = "keep", seed: int | None = None,
                 language: str | None = None, options: Any = None, timestamps: bool = False, **kw):
        if commit not in COMMITS:
            raise InvalidArgument(f"commit must be one of {', '.join(COMMITS)}, not {commit!r}")
        if on_conflict not in CONFLICTS:
            raise InvalidArgument(f"on_conflict must be one of {', '.join(CONFLICTS)}, not {on_conflict!r}")
        for name, v in (("idle_ms", idle_ms), ("utterance_gap_ms", utterance_gap_ms)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 3_600_000):
                raise InvalidArgument(f"{name} must be an integer in [0, 3600000] (ms), not {v!r}")
        self._engine, self._voice = engine, voice
        self._seed, self._language, self._timestamps = seed, language, timestamps
        self._stream = {"commit": commit, **({"idle_ms": idle_ms} if idle_ms else {})}
        self._family_json = engine.family.options_json(options, kw)   # checked now, not at the first write
        self._gap = utterance_gap_ms / 1000.0 if utterance_gap_ms else None
        self._idle = idle_ms / 1000.0 if idle_ms else None
        self._on_conflict = on_conflict
        self._cv = threading.Condition()
        self._q: "queue.Queue[Any]" = queue.Queue()
        self._session: "Session | None" = None
        self._closing: "Session | None" = None   # an utterance that takes no more text but still speaks
        self._pulling: tuple = ()
        self._text = ""          # what this utterance's session was fed
        self._done_text = ""     # the text of the utterances already closed
        self._last_write = time.monotonic()
        self._events = 0         # writes since the reader last looked
        self._ended = self._closed = False
        self._reader: threading.Thread | None = None
        self._error: BaseException | None = None
        self.utterances = 0
        self._offset = self._utt_samples = 0   # samples of the closed utterances / of the current one

    # ------------------------------------------------------------------ writing (any thread)
    def _options_json(self) -> str:
        import json

        opts = dict(self._stream)
        if self._family_json:
            opts.update(json.loads(self._family_json))
        return json.dumps(opts, ensure_ascii=False)

    def _ensure_session(self) -> "Session":
        if self._closed:
            raise VoxError("the duplex stream is closed")
        if self._ended:
            raise InvalidArgument("the duplex stream was ended: no more text")
        if self._session is None:
            from .engine import Session

            s = Session(self._engine, self._voice, self._seed, self._language, self._options_json(), self._timestamps)
            self._engine._sessions.add(s)
            self._session, self._text = s, ""
            self.utterances += 1
            if self._reader is None:
                self._reader = threading.Thread(target=self._read, name="vox-duplex", daemon=True)
                self._reader.start()
        return self._session

    def _poke(self) -> None:
        self._last_write = time.monotonic()
        self._events += 1
        self._cv.notify_all()

    def write(self, text: str) -> None:
        """Append text (a token, a word, a sentence)."""
        if not text:
            return
        with self._cv:
            s = self._ensure_session()
            s.feed(text)
            self._text += text
            self._poke()

    def flush(self) -> None:
        """Speak what was written so far without waiting for the end of a sentence or word."""
        with self._cv:
            if self._session is not None:
                self._session.flush()
                self._poke()

    def set_text(self, whole_text: str) -> None:
        """Typing mode: the whole text as it is now (a text field's content). The not-yet-spoken tail
        follows it; what was spoken stays spoken (on_conflict for an edit of it)."""
        with self._cv:
            full = self._done_text + self._text
            if whole_text.startswith(full):
                tail = whole_text[len(full):]
                if tail:
                    self._ensure_session().feed(tail)
                    self._text += tail
                    self._poke()
                return
            d = _common_prefix(whole_text, full)
            if d < len(self._done_text):  # an edit of an utterance already closed
                self._conflict(whole_text, d)
                return
            s = self._ensure_session()
            keep_chars = d - len(self._done_text)
            keep = len(self._text[:keep_chars].encode("utf-8"))
            new_tail = whole_text[d:]
            try:
                s.set_pending(keep, new_tail)
            except InvalidArgument as e:
                used = getattr(e, "used", None)
                if self._on_conflict == "raise":
                    raise InvalidArgument(f"the edit changes text already spoken: {e}") from None
                if self._on_conflict == "respeak":
                    self._conflict(whole_text, d)
                    return
                # keep: what was spoken stays; the rest of the new text follows it
                used_b = used if used is not None else len(self._text.encode("utf-8"))
                spoken = self._text.encode("utf-8")[:used_b].decode("utf-8", "ignore")
                at = len(self._done_text) + len(spoken)
                s.set_pending(len(spoken.encode("utf-8")), whole_text[at:] if at <= len(whole_text) else "")
                self._text = spoken + (whole_text[at:] if at <= len(whole_text) else "")
                self._poke()
                return
            self._text = self._text[:keep_chars] + new_tail
            self._poke()

    def _conflict(self, whole_text: str, d: int) -> None:
        if self._on_conflict == "raise":
            raise InvalidArgument("the edit changes text already spoken")
        if self._on_conflict == "keep":
            return
        # respeak: close this utterance and speak the text again from the start of the changed word
        start = whole_text.rfind(" ", 0, d) + 1
        self._close_utterance()
        self._done_text = whole_text[:start]
        rest = whole_text[start:]
        if rest:
            self._ensure_session().feed(rest)
            self._text = rest
        self._poke()

    def _close_utterance(self) -> None:
        """Under the lock: the current utterance takes no more text (its audio still comes)."""
        if self._session is not None:
            try:
                self._session.end()
            except VoxError:
                pass
            self._closing = self._session
            self._done_text += self._text
            self._session, self._text = None, ""

    def end(self) -> None:
        """No more text: the rest is spoken and audio() ends after it."""
        with self._cv:
            if self._ended:
                return
            if self._session is not None:
                self._session.end()
            self._ended = True
            self._poke()
            if self._reader is None:     # nothing was written: no reader will end audio(), so end it here
                self._q.put(_END)

    def cancel(self) -> None:
        """Stop at once (any thread): audio() ends, a pull in progress stops."""
        with self._cv:
            first = not self._ended
            self._ended = True
            s = self._session
            self._closed = True
            self._poke()
            if self._reader is None and first:   # nothing was written: end audio() here (no reader will)
                self._q.put(_END)
        if s is not None:
            s.cancel()
        for s2 in list(getattr(self, "_pulling", ()) or ()):
            s2.cancel()

    # ------------------------------------------------------------------ reading
    def _read(self) -> None:
        """The reader thread: pulls the current utterance's session, waits for text when it needs some."""
        try:
            while True:
                with self._cv:
                    s = self._session if self._session is not None else getattr(self, "_closing", None)
                    if s is None:
                        if self._ended or self._closed:
                            break
                        self._cv.wait(0.5)
                        continue
                    seen = self._events
                self._pulling = (s,)
                c = s.pull()
                if c is not None:
                    if c.words and self._offset:   # times from the stream's first sample, across utterances
                        for w in c.words:
                            w["start"] += self._offset / c.sample_rate
                            w["end"] += self._offset / c.sample_rate
                    self._utt_samples += c.samples.size
                    self._q.put(c)
                    continue
                if s._done:  # the utterance is complete
                    self._offset += self._utt_samples
                    self._utt_samples = 0
                    with self._cv:
                        if getattr(self, "_closing", None) is s:
                            self._closing = None
                        if self._session is s:
                            self._session = None
                            self._done_text += self._text
                            self._text = ""
                    s.close()
                    continue
                # more text is needed: wait for a write, the idle flush or the utterance gap
                with self._cv:
                    if self._closed:
                        break
                    if self._events == seen and self._session is s:
                        waits = [w for w in (self._idle, self._gap) if w]
                        timeout = None
                        if waits:
                            timeout = max(0.0, min(waits) - (time.monotonic() - self._last_write)) + 0.005
                        self._cv.wait(timeout if timeout is not None else 0.5)
                        quiet = time.monotonic() - self._last_write
                        if self._gap and quiet >= self._gap and self._session is s and self._events == seen:
                            self._close_utterance()
        except VoxError as e:
            if not self._closed:
                self._error = e
        finally:
            self._q.put(_END)

    def audio(self) -> Iterator["Chunk"]:
        """The audio chunks as they are made, until end() has been spoken (or cancel())."""
        while True:
            c = self._q.get()
            if c is _END:
                self._q.put(_END)   # later readers end too
                if self._error is not None:
                    raise self._error
                return
            yield c

    async def aaudio(self) -> AsyncIterator["Chunk"]:
        """audio() for asyncio. The blocking wait runs on a thread of its own (one per call, ended by
        the end of the stream), not in the loop's default executor: idle duplex streams would otherwise
        hold its few threads and starve every other run_in_executor of the application."""
        loop = asyncio.get_running_loop()
        aq: "asyncio.Queue[Any]" = asyncio.Queue()

        def pump() -> None:
            while True:
                c = self._q.get()
                try:
                    loop.call_soon_threadsafe(aq.put_nowait, c)
                except RuntimeError:   # the loop is closed: nobody listens any more
                    if c is _END:
                        self._q.put(_END)
                    return
                if c is _END:
                    self._q.put(_END)  # for the next reader, as audio() leaves it
                    return

        threading.Thread(target=pump, name="vox-duplex-aaudio", daemon=True).start()
        while True:
            c = await aq.get()
            if c is _END:
                if self._error is not None:
                    raise self._error
                return
            yield c

    def final(self) -> np.ndarray:
        """The whole recording: waits for end() to be spoken (call end() first, from any thread)."""
        parts = [c.samples for c in self.audio()]
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Cancel what is still running and free the sessions."""
        self.cancel()
        if self._reader is not None:
            self._reader.join(60)
        for s in (self._session, getattr(self, "_closing", None)):
            if s is not None:
                s.close()

    def __enter__(self) -> "Duplex":
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            with self._cv:
                ended = self._ended
            if not ended:
                self.end()
            # the reader finishes what was written; audio not read is dropped
            if self._reader is not None:
                self._reader.join()
        self.close()
