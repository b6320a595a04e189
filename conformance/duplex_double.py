"""A stand-in for Engine.duplex, for the WebSocket tests while the engine has none: the documented
duplex interface (write / set_text / flush / end / cancel from any thread, audio() / aaudio() of
vox.Chunk, final(), close()) for commit="manual" only, over vox.Session: nothing is spoken until
flush() or end(); each flush speaks what was committed since the last one as one utterance (one
Session, seeded with the duplex's seed), in order. set_text(whole) replaces the text not yet
committed (what was committed is kept: on_conflict="keep").

It is a test double of the interface the server is written against, not an implementation of
duplex streaming: the server's WebSocket protocol is checked against it, and against Engine.duplex
itself once the engine has it (conformance/test_server_duplex.py runs both).
"""

from __future__ import annotations

import asyncio
import queue
import threading

import numpy as np

import vox
from vox.errors import Cancelled, InvalidArgument, Unsupported


class SessionDuplex:
    def __init__(self, engine: vox.Engine, voice: vox.Voice, commit: str = "auto", idle_ms=None, utterance_gap_ms=None,
                 on_conflict: str = "keep", seed=None, language=None, **options):
        if commit != "manual":
            raise Unsupported(f"this duplex double speaks commit='manual' only, not {commit!r}")
        self.engine, self.voice, self.seed, self.language, self.options = engine, voice, seed, language, options
        self._lock = threading.Lock()
        self._committed = ""
        self._pending = ""
        self._ended = False
        self._cancelled = threading.Event()
        self._utterances: "queue.Queue[str | None]" = queue.Queue()
        self._session: vox.Session | None = None

    # ------------------------------------------------------------------ text, from any thread
    def write(self, text: str) -> None:
        with self._lock:
            self._check_open()
            self._pending += text

    def set_text(self, whole: str) -> None:
        with self._lock:
            self._check_open()
            self._pending = whole[len(self._committed):] if whole.startswith(self._committed) else self._pending

    def flush(self) -> None:
        with self._lock:
            self._check_open()
            self._commit()

    def end(self) -> None:
        with self._lock:
            if self._ended:
                return
            self._commit()
            self._ended = True
            self._utterances.put(None)

    def cancel(self) -> None:
        self._cancelled.set()
        s = self._session
        if s is not None:
            s.cancel()
        self._utterances.put(None)

    def _check_open(self) -> None:
        if self._ended:
            raise InvalidArgument("the text has ended")

    def _commit(self) -> None:
        if self._pending.strip():
            self._utterances.put(self._pending)
        self._committed += self._pending
        self._pending = ""

    # ------------------------------------------------------------------ audio
    def audio(self):
        while not self._cancelled.is_set():
            text = self._utterances.get()
            if text is None or self._cancelled.is_set():
                return
            s = self.engine.session(self.voice, seed=self.seed, language=self.language, **self.options)
            self._session = s
            try:
                if self._cancelled.is_set():
                    return
                s.feed(text)
                s.end()
                for c in s:
                    yield c
            except Cancelled:
                return
            finally:
                self._session = None
                s.close()

    async def aaudio(self):
        loop = asyncio.get_running_loop()
        q: asyncio.Queue = asyncio.Queue()
        end = object()

        def pump():
            try:
                for c in self.audio():
                    loop.call_soon_threadsafe(q.put_nowait, c)
            except BaseException as e:
                loop.call_soon_threadsafe(q.put_nowait, e)
            finally:
                loop.call_soon_threadsafe(q.put_nowait, end)

        threading.Thread(target=pump, daemon=True).start()
        while True:
            item = await q.get()
            if item is end:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def final(self) -> np.ndarray:
        parts = [c.samples for c in self.audio()]
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def close(self) -> None:
        self.cancel()


def factory(engine, voice, **kw):
    return SessionDuplex(engine, voice, **kw)
