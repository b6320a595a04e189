"""A server's settings (`vox serve` flags, or create_app(ServerConfig(...)) from Python)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def default_workers() -> int:
    """Synthesis threads: one per CPU this process may use, at most 4 (each pull already runs on the
    engine's own thread pool; a few workers keep the pool busy between pulls)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 4))


@dataclass
class ServerConfig:
    models: list[tuple[str | None, str | None]] = field(default_factory=list)  # (id or None, path or None)
    voices_dir: str = "voices"
    api_key: str | None = None
    max_sessions: int = 8              # synthesis sessions at once (all models together)
    max_queue: int = 0                 # requests that may wait for a slot (beyond: 429 at once)
    queue_timeout: float = 30.0        # seconds a queued request waits before its 429
    max_input_chars: int = 4096        # as OpenAI
    max_body_bytes: int = 1 << 20      # JSON request bodies
    max_upload_bytes: int = 20 << 20   # a recording for POST /v1/voices
    max_upload_seconds: float = 60.0
    min_upload_seconds: float = 0.5
    voice_map: str | None = None       # --voice-map FILE.json
    workers: int = 0                   # 0: default_workers()
    lookahead: int = 1                 # chunks computed ahead of what a client has taken
    device: str = "cpu"
    threads: int = 0                   # engine threads (0: every CPU)
    duplex_idle_timeout: float = 300.0  # a WebSocket with no message for this long is closed
    max_duplex_chars: int = 65536      # text one duplex session may receive in all

    def check(self) -> None:
        def need(ok: bool, what: str) -> None:
            if not ok:
                raise ValueError(what)

        need(1 <= self.max_sessions <= 4096, "--max-sessions must be in [1, 4096]")
        need(0 <= self.max_queue <= 65536, "--max-queue must be in [0, 65536]")
        need(self.queue_timeout > 0, "--queue-timeout must be positive")
        need(1 <= self.max_input_chars <= 1 << 20, "--max-input-chars must be in [1, 1048576]")
        need(1024 <= self.max_body_bytes <= 1 << 30, "--max-body-bytes must be in [1024, 1 GiB]")
        need(1024 <= self.max_upload_bytes <= 1 << 30, "--max-upload-bytes must be in [1024, 1 GiB]")
        need(0 < self.max_upload_seconds <= 600, "--max-upload-seconds must be in (0, 600]")
        need(0 <= self.workers <= 256, "--workers must be in [0, 256]")
        need(1 <= self.lookahead <= 64, "--lookahead must be in [1, 64]")
        need(self.api_key is None or len(self.api_key) >= 1, "--api-key must not be empty")
