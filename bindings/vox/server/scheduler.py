"""Scheduling synthesis: admission (at most max_sessions at once, a bounded queue, 429 beyond it) and a
pool of worker threads that pull audio one chunk at a time per session, in turn.

Why chunk by chunk: a session of a long text would otherwise hold a worker until it is done, and a new
request would wait for it before its first audio. Here a worker pulls one chunk of one session and
puts the session back in line. Two lines: sessions that have not made their first chunk (first come,
first served) go before the others (which take turns). So a new request waits for the chunks already
being computed and for the new requests that came before it, never for the rest of a long one.

Back-pressure: a session is pulled at most `lookahead` chunks ahead of what its client has taken;
then it waits (out of line, holding no worker) until the client takes one. A client that stops
reading therefore costs no compute.

Cancellation (a client went away, or asked): Session.cancel() stops a pull in progress (the core
checks between stages), so a cancelled session stops within the chunk being computed; its worker then
closes it. Everything native runs on the workers, never on the event loop; results reach the loop
through call_soon_threadsafe.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from ..engine import Chunk, Session
from ..errors import Cancelled
from .errors import ApiError, retry_after_headers
from .metrics import Metrics

log = logging.getLogger("vox.server")


class Busy(ApiError):
    def __init__(self, message: str, retry_after: float):
        super().__init__(429, message, code="session_limit", headers=retry_after_headers(retry_after))


class Admission:
    """max_sessions slots; up to max_queue requests wait (FIFO, at most queue_timeout seconds) for one;
    beyond that a request is refused at once with 429 and a Retry-After. Used on the event loop only."""

    def __init__(self, max_sessions: int, max_queue: int, queue_timeout: float, metrics: Metrics):
        self.max_sessions, self.max_queue, self.queue_timeout = max_sessions, max_queue, queue_timeout
        self.metrics = metrics
        self.active = 0
        self._waiters: deque[asyncio.Future] = deque()
        self._recent: deque[float] = deque(maxlen=32)   # durations of recent sessions, for Retry-After

    def retry_after(self) -> float:
        """A guess at when a slot frees: the typical session's length, shared by the slots."""
        if not self._recent:
            return 1.0
        typical = sorted(self._recent)[len(self._recent) // 2]
        return max(1.0, typical * (1 + len(self._waiters)) / max(self.max_sessions, 1))

    async def acquire(self) -> "Ticket":
        if self.active < self.max_sessions and not self._waiters:
            return self._grant()
        if len(self._waiters) >= self.max_queue:
            raise Busy(f"the server is busy: {self.active} of {self.max_sessions} sessions run"
                       + (f" and {len(self._waiters)} wait" if self.max_queue else "") + "; retry later",
                       self.retry_after())
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self.metrics.queued.set(len(self._waiters))
        try:
            await asyncio.wait_for(asyncio.shield(fut), self.queue_timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError) as e:
            if fut.done() and not fut.cancelled():
                self._release()            # granted while we gave up: pass the slot on
            else:
                fut.cancel()
            if isinstance(e, asyncio.CancelledError):
                raise
            raise Busy(f"no session slot freed within {self.queue_timeout:g} s; retry later",
                       self.retry_after()) from None
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)
            self.metrics.queued.set(len(self._waiters))
        return Ticket(self)

    def _grant(self) -> "Ticket":
        self.active += 1
        self.metrics.active.set(self.active)
        return Ticket(self)

    def _release(self) -> None:
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)       # the slot passes to the waiter: active stays the same
                self.metrics.queued.set(len(self._waiters))
                return
        self.active -= 1
        self.metrics.active.set(self.active)


class Ticket:
    """One admitted session's slot; release() once (idempotent)."""

    def __init__(self, admission: Admission):
        self._a = admission
        self._t0 = time.monotonic()
        self._done = False

    def release(self) -> None:
        if not self._done:
            self._done = True
            self._a._recent.append(time.monotonic() - self._t0)
            self._a._release()


@dataclass
class Piece:
    """What a worker hands the event loop for one chunk: the bytes to send and facts about them."""

    data: bytes
    samples: int             # samples of audio in it
    first_sample: int        # where in the utterance they start
    sample_rate: int
    is_last: bool
    words: list | None = None
    pcm: Any = None          # the int16 samples (for the SSE and WebSocket paths)


_END = object()


class Job:
    """One utterance, pulled by the scheduler's workers. The event loop awaits next(); cancel() from the
    loop. open() runs on a worker and returns the Session (text fed, ended); encode(chunk) -> Piece
    and finish() -> bytes also run on the worker."""

    def __init__(self, scheduler: "Scheduler", open: Callable[[], Session], encode: Callable[[Chunk, int], Piece],
                 finish: Callable[[], bytes], received: float):
        self._s = scheduler
        self._open, self._encode, self._finish = open, encode, finish
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue = asyncio.Queue()
        self.session: Session | None = None
        self.received = received        # when the request arrived (time.monotonic), for first-audio latency
        self.cancelled = False
        self.cancel_reason = ""
        self.done = False               # no more pulls (finished, failed or cancelled)
        self.buffered = 0               # pieces handed on, not yet taken by the client
        self.parked = False
        self.in_line = False
        self.produced = 0               # samples
        self.sample_rate = 0
        self.seed: int | None = None    # the seed the session samples with
        self.chunks = 0
        self.compute = 0.0
        self.first_audio: float | None = None
        self.outcome = ""

    # ---------------------------------------------------------------- event-loop side
    async def next(self) -> Piece | None:
        """The next piece; None at the end; raises what the session raised."""
        item = await self.queue.get()
        if item is _END:
            self.queue.put_nowait(_END)      # the end stays the end for later calls
            return None
        if isinstance(item, BaseException):
            self.queue.put_nowait(_END)
            raise item
        self._s._taken(self)
        return item

    def cancel(self, reason: str = "client") -> None:
        if self.done or self.cancelled:
            return
        self.cancelled, self.cancel_reason = True, reason
        s = self.session
        if s is not None:
            s.cancel()                     # stops a pull in progress on a worker
        self._s._wake(self)

    # ---------------------------------------------------------------- worker side
    def _deliver(self, item) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:               # the loop is closed (shutdown): nobody is waiting
            pass


class Scheduler:
    """Worker threads pulling Jobs chunk by chunk, new jobs first, the others in turn."""

    def __init__(self, workers: int, metrics: Metrics, lookahead: int = 1):
        self.metrics = metrics
        self.lookahead = max(1, lookahead)
        self._new: deque[Job] = deque()     # jobs before their first chunk (and cancelled ones): FIFO
        self._line: deque[Job] = deque()    # the others, in turn
        self._cv = threading.Condition()
        self._stop = False
        self._threads = [threading.Thread(target=self._work, name=f"vox-synth-{i}", daemon=True)
                         for i in range(max(1, workers))]
        for t in self._threads:
            t.start()

    def submit(self, open: Callable[[], Session], encode, finish, received: float) -> Job:
        job = Job(self, open, encode, finish, received)
        with self._cv:
            job.in_line = True
            self._new.append(job)          # before every job that has audio out already
            self._cv.notify()
        return job

    def _taken(self, job: Job) -> None:
        with self._cv:
            job.buffered -= 1
            if job.parked and job.buffered < self.lookahead:
                job.parked = False
                job.in_line = True
                self._line.append(job)
                self._cv.notify()

    def _wake(self, job: Job) -> None:
        """A cancelled job not in line and not being pulled is put in line, so a worker closes it."""
        with self._cv:
            if job.parked:
                job.parked = False
            if not job.in_line and not getattr(job, "_running", False):
                job.in_line = True
                self._new.appendleft(job)      # closing it is quick: do it first
                self._cv.notify()

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._new and not self._line and not self._stop:
                    self._cv.wait()
                if self._stop:
                    return
                job = (self._new or self._line).popleft()
                job.in_line = False
                job._running = True  # type: ignore[attr-defined]
            again = False
            try:
                again = self._step(job)
            except BaseException:  # never lose a worker
                log.exception("synthesis worker")
                self._end(job, "failed")
            finally:
                with self._cv:
                    job._running = False  # type: ignore[attr-defined]
                    if again and not job.done:
                        if job.cancelled or job.buffered < self.lookahead:
                            job.in_line = True
                            if job.cancelled:
                                self._new.appendleft(job)
                            elif job.chunks == 0:
                                self._new.append(job)
                            else:
                                self._line.append(job)
                            self._cv.notify()
                        else:
                            job.parked = True

    def _step(self, job: Job) -> bool:
        """Pull one chunk of `job`; True when it has more to pull."""
        if job.cancelled:
            self._end(job, "cancelled")
            return False
        t0 = time.perf_counter()
        try:
            if job.session is None:
                job.session = job._open()
                job.seed = job.session.seed
                if job.cancelled:          # cancelled while opening: cancel() found no session
                    job.session.cancel()
            chunk = job.session.pull()
        except Cancelled:
            dt = time.perf_counter() - t0
            job.compute += dt
            self._end(job, "cancelled")
            return False
        except BaseException as e:
            job._deliver(e)
            self._end(job, "failed")
            return False
        dt = time.perf_counter() - t0
        job.compute += dt
        m = self.metrics
        m.compute_seconds.inc(dt)
        if chunk is None:                  # the utterance is complete (or more text was needed: none comes)
            self._finish(job)
            return False
        m.chunks.inc()
        if job.cancelled:
            m.chunks_after_cancel.inc()
            self._end(job, "cancelled")
            return False
        if job.first_audio is None:
            job.first_audio = time.monotonic() - job.received
            m.first_audio.observe(job.first_audio)
        job.sample_rate = chunk.sample_rate
        m.audio_seconds.inc(chunk.samples.size / chunk.sample_rate)
        try:
            piece = job._encode(chunk, job.produced)
        except BaseException as e:
            job._deliver(e)
            self._end(job, "failed")
            return False
        job.produced += chunk.samples.size
        job.chunks += 1
        with self._cv:
            job.buffered += 1
        job._deliver(piece)
        if chunk.is_last:
            self._finish(job)
            return False
        return True

    def _finish(self, job: Job) -> None:
        try:
            tail = job._finish()
        except BaseException as e:
            job._deliver(e)
            self._end(job, "failed")
            return
        if tail:
            with self._cv:
                job.buffered += 1
            job._deliver(Piece(tail, 0, job.produced, 0, True))
        if job.produced and job.sample_rate:
            self.metrics.rtf.observe(job.compute / (job.produced / job.sample_rate))
        self._end(job, "completed")

    def _end(self, job: Job, outcome: str) -> None:
        if job.done:
            return
        job.done = True
        job.outcome = outcome
        s, job.session = job.session, None
        if s is not None:
            try:
                s.close()
            except BaseException:
                log.exception("closing a session")
        m = self.metrics
        m.sessions.inc(1, outcome)
        if outcome == "cancelled":
            m.cancelled.inc(1, job.cancel_reason or "client")
        job._deliver(_END)

    def close(self) -> None:
        with self._cv:
            self._stop = True
            pending = list(self._new) + list(self._line)
            self._new.clear()
            self._line.clear()
            self._cv.notify_all()
        for job in pending:
            job.cancel("shutdown")
            self._end(job, "cancelled")
        for t in self._threads:
            t.join(timeout=5)
