"""vox.inspect(path): what a .tmod or .tvoice holds, as a dict, without loading any weights.

A .tmod is opened by the C core (vox_model_open), so inspecting a model exercises exactly the
validation the engine relies on; check=True also recomputes every tensor's CRC-32 there
(vox_model_verify). A .tvoice is read and validated completely by vox.formats.tvoice, CRCs included.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import FormatError
from .formats import tmod as _tmod

_DTYPE_ORDER = _tmod.DTYPES


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KB' (decimal units, as file managers and disks count)."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _inspect_tmod(path: str, check: bool) -> dict:
    from .formats.native import NativeModel

    with NativeModel(path) as m:
        man = m.manifest
        infos = m.tensors()
        if check:
            m.verify()
    by_dtype: dict[str, dict] = {}
    for t in sorted(infos, key=lambda t: _DTYPE_ORDER.index(t.dtype)):
        d = by_dtype.setdefault(t.dtype, {"tensors": 0, "bytes": 0})
        d["tensors"] += 1
        d["bytes"] += t.nbytes
    out = {
        "path": path,
        "kind": "tmod",
        "format_version": man["format_version"],
        "file_bytes": os.stat(path).st_size,
        "family": man["family"],
        "variant": man["variant"],
        "size": man.get("size", ""),
        "model_id": man["model_id"],
        "precision": man["precision"],
        "source": man.get("source", {}),
        "tensor_count": len(infos),
        "tensor_bytes": sum(t.nbytes for t in infos),
        "dtypes": by_dtype,
        "speakers": sorted(man.get("speakers", {})),
        "languages": sorted(man.get("languages", {})),
        "checksums": "ok" if check else "not checked",
    }
    from . import families

    out.update(families.get(man["family"]).inspect(man))
    return out


def _inspect_tvoice(path: str) -> dict:
    from .formats.tvoice import lengths, read_voice

    v = read_voice(path)
    return {
        "path": path,
        "kind": "tvoice",
        "format_version": 1,
        "file_bytes": os.stat(path).st_size,
        "family": v.family,
        "mode": v.mode,
        "name": v.name,
        "variant": v.variant,
        "model_id": v.model_id,
        "language": v.language,
        "texts": dict(v.texts),
        "lengths": lengths(v),
        "defaults": v.defaults,
        "tensors": {n: {"dtype": str(a.dtype), "shape": list(a.shape)} for n, a in v.tensors().items()},
        "checksums": "ok",  # a voice's CRCs are always checked when it is read
    }


def inspect(path: str | os.PathLike, check: bool = False) -> dict:
    """Describe the .tmod or .tvoice at `path` (FormatError if it is neither, or invalid).

    For a .tmod: family, variant, size, model_id, precision, tensor count and bytes per dtype,
    speakers and languages; check=True verifies every tensor's CRC-32 (reads the whole file).
    For a .tvoice: mode, name, variant, model_id, language, texts, lengths, default parameters.
    """
    path = os.fspath(path)
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such file" if not Path(path).exists() else f"{path}: not a file")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == _tmod.MAGIC or path.endswith(".tmod"):
        return _inspect_tmod(path, check)
    try:
        return _inspect_tvoice(path)
    except FormatError as e:
        if path.endswith(".tvoice") or "not a valid .tvoice" not in str(e):
            raise
        raise FormatError(f"{path}: neither a .tmod nor a .tvoice file") from None


__all__ = ["inspect", "format_bytes"]
