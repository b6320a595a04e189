"""A dependency-free progress bar for long work (conversion, verification), on stderr.

Draws only when stderr is a terminal (or VOX_PROGRESS=1); otherwise prints nothing, so logs stay clean.
"""

from __future__ import annotations

import os
import sys
import time


class Progress:
    def __init__(self, total: float, label: str = "", unit: str = "", enabled: bool | None = None):
        self.total, self.label, self.unit = max(total, 1), label, unit
        self.done = 0.0
        self.t0 = time.monotonic()
        self._last = 0.0
        if enabled is None:
            enabled = sys.stderr.isatty() or os.environ.get("VOX_PROGRESS") == "1"
        self.enabled = enabled

    def update(self, n: float = 1, note: str = "") -> None:
        self.done += n
        now = time.monotonic()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            frac = min(self.done / self.total, 1.0)
            bar = "#" * int(frac * 30)
            eta = (now - self.t0) / frac * (1 - frac) if frac > 0 else 0
            sys.stderr.write(f"\r{self.label} [{bar:<30}] {frac * 100:5.1f}% eta {eta:4.0f}s {note[:40]:<40}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write(f"\r{self.label} done in {time.monotonic() - self.t0:.1f}s" + " " * 60 + "\n")
            sys.stderr.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
