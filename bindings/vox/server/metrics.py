"""The server's metrics in Prometheus' plain-text exposition format (version 0.0.4), without a client
library: counters, gauges and histograms with labels, rendered by GET /metrics.

    vox_server_requests_total{endpoint,status}       requests answered, by endpoint and HTTP status
    vox_server_active_sessions                       synthesis sessions running now
    vox_server_queued_requests                       requests waiting for a session slot
    vox_server_sessions_total{outcome}               sessions ended: completed, cancelled, failed
    vox_server_cancelled_total{reason}               cancelled sessions: disconnect, client
    vox_server_chunks_total                          audio chunks computed
    vox_server_chunks_after_cancel_total             chunks that finished computing after their session was cancelled
    vox_server_audio_seconds_total                   seconds of audio computed
    vox_server_compute_seconds_total                 seconds the workers spent computing it
    vox_server_first_audio_seconds                   histogram: request received -> first chunk ready
    vox_server_rtf                                   histogram: per session, compute time / audio time
    vox_engine_*                                     the engines' own counters (Engine.stats()), per model

Updates come from the event loop and from the worker threads: one lock guards them all (they are a
few additions per chunk).
"""

from __future__ import annotations

import math
import threading
from typing import Callable, Iterable

_LATENCY_BUCKETS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 60)
_RTF_BUCKETS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10)


def _labels(names: tuple[str, ...], values: tuple[str, ...]) -> str:
    if not names:
        return ""
    inner = ",".join(f'{n}="{_escape(v)}"' for n, v in zip(names, values))
    return "{" + inner + "}"


def _escape(v: str) -> str:
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _num(x: float) -> str:
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


class _Metric:
    kind = ""

    def __init__(self, name: str, help: str, labels: tuple[str, ...], lock: threading.Lock):
        self.name, self.help, self.label_names, self._lock = name, help, labels, lock

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}"]

    def lines(self) -> list[str]:
        raise NotImplementedError


class Counter(_Metric):
    kind = "counter"

    def __init__(self, *a):
        super().__init__(*a)
        self.values: dict[tuple[str, ...], float] = {} if self.label_names else {(): 0.0}

    def inc(self, amount: float = 1.0, *labels: str) -> None:
        with self._lock:
            self.values[labels] = self.values.get(labels, 0.0) + amount

    def get(self, *labels: str) -> float:
        with self._lock:
            return self.values.get(labels, 0.0)

    def lines(self) -> list[str]:
        return [f"{self.name}{_labels(self.label_names, k)} {_num(v)}" for k, v in sorted(self.values.items())]


class Gauge(Counter):
    kind = "gauge"

    def set(self, value: float, *labels: str) -> None:
        with self._lock:
            self.values[labels] = float(value)


class Histogram(_Metric):
    kind = "histogram"

    def __init__(self, name, help, labels, lock, buckets: Iterable[float]):
        super().__init__(name, help, labels, lock)
        self.buckets = tuple(sorted(buckets)) + (math.inf,)
        self.counts = [0] * len(self.buckets)
        self.sum = 0.0
        self.count = 0

    def observe(self, x: float) -> None:
        with self._lock:
            for i, b in enumerate(self.buckets):
                if x <= b:
                    self.counts[i] += 1
            self.sum += x
            self.count += 1

    def lines(self) -> list[str]:
        out = [f'{self.name}_bucket{{le="{_num(b)}"}} {c}' for b, c in zip(self.buckets, self.counts)]
        return out + [f"{self.name}_sum {_num(self.sum)}", f"{self.name}_count {self.count}"]


class Metrics:
    """Every metric of one server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        L = self._lock
        self.requests = Counter("vox_server_requests_total", "Requests answered, by endpoint and HTTP status.",
                                ("endpoint", "status"), L)
        self.active = Gauge("vox_server_active_sessions", "Synthesis sessions running now.", (), L)
        self.queued = Gauge("vox_server_queued_requests", "Requests waiting for a session slot.", (), L)
        self.sessions = Counter("vox_server_sessions_total", "Synthesis sessions ended, by outcome.", ("outcome",), L)
        self.cancelled = Counter("vox_server_cancelled_total", "Sessions cancelled, by reason.", ("reason",), L)
        self.chunks = Counter("vox_server_chunks_total", "Audio chunks computed.", (), L)
        self.chunks_after_cancel = Counter("vox_server_chunks_after_cancel_total",
                                           "Chunks whose computation finished after their session was cancelled.",
                                           (), L)
        self.audio_seconds = Counter("vox_server_audio_seconds_total", "Seconds of audio computed.", (), L)
        self.compute_seconds = Counter("vox_server_compute_seconds_total",
                                       "Seconds the synthesis workers spent computing audio.", (), L)
        self.first_audio = Histogram("vox_server_first_audio_seconds",
                                     "Time from a request's arrival to its first audio chunk.", (), L,
                                     _LATENCY_BUCKETS)
        self.rtf = Histogram("vox_server_rtf", "Real-time factor of each completed session (compute / audio).", (),
                             L, _RTF_BUCKETS)
        self._all: list[_Metric] = [self.requests, self.active, self.queued, self.sessions, self.cancelled,
                                    self.chunks, self.chunks_after_cancel, self.audio_seconds, self.compute_seconds,
                                    self.first_audio, self.rtf]
        self._collectors: list[Callable[[], list[str]]] = []

    def add_collector(self, fn: Callable[[], list[str]]) -> None:
        """fn() -> exposition lines computed at scrape time (e.g. the engines' counters)."""
        self._collectors.append(fn)

    def render(self) -> str:
        out: list[str] = []
        with self._lock:
            for m in self._all:
                out += m.header() + m.lines()
        for fn in self._collectors:
            out += fn()
        return "\n".join(out) + "\n"


def engine_lines(engines: dict) -> list[str]:
    """The engines' own counters (Engine.stats()), labelled by model id."""
    rows = {"sessions_created": ("counter", "Sessions the engine created."),
            "sessions_active": ("gauge", "Sessions alive in the engine."),
            "samples_produced": ("counter", "Samples the engine produced."),
            "compute_ms": ("counter", "Milliseconds the engine computed.")}
    stats = {}
    for mid, eng in engines.items():
        try:
            stats[mid] = eng.stats()
        except Exception:  # an engine closing during a scrape: leave it out
            continue
    out: list[str] = []
    for key, (kind, help) in rows.items():
        name = f"vox_engine_{key}" + ("_total" if kind == "counter" and not key.endswith("_total") else "")
        out += [f"# HELP {name} {help}", f"# TYPE {name} {kind}"]
        out += [f'{name}{{model="{_escape(mid)}"}} {_num(float(s.get(key, 0)))}' for mid, s in stats.items()]
    return out
