"""Converting official checkpoints to .tmod: the family that knows the checkpoint converts it.

    from vox.convert import convert
    convert("Qwen3-TTS-12Hz-1.7B-Base", "base17.tmod", dtype="bf16", quant="q8")

Each family's converter lives in its package (vox.families.<family>.convert); this module finds the
family: a checkpoint directory by its config.json "model_type", a file by the family's can_convert.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import FormatError
from .common import ConvertResult


def _model_types() -> dict[str, str]:
    from .. import families

    return {t: f.name for f in families.all() for t in f.model_types}


def detect_family(source: str | os.PathLike) -> str:
    """The family that converts `source`: a checkpoint directory (by its config.json model_type) or a
    file a family recognizes (e.g. kokoro-v1_0.pth)."""
    from .. import families

    d = Path(source)
    if not d.exists():
        raise FileNotFoundError(f"{d}: no such directory" if not d.suffix else f"{d}: no such file")
    if d.is_file():
        for f in families.all():
            if f.can_convert(str(d)):
                return f.name
        raise NotADirectoryError(f"{d}: not a directory (pass the checkpoint directory, not a file in it)")
    cfg = d / "config.json"
    if not cfg.is_file():
        raise FileNotFoundError(f"{d}: not a model checkpoint directory (no config.json)")
    try:
        model_type = json.loads(cfg.read_text(encoding="utf-8")).get("model_type")
    except (ValueError, AttributeError) as e:
        raise FormatError(f"{cfg}: not a valid config.json ({e})") from None
    types = _model_types()
    if model_type not in types:
        raise FormatError(f"{cfg}: unknown model_type {model_type!r}; vox converts: {', '.join(types)}")
    return types[model_type]


def convert(source: str | os.PathLike, out: str | os.PathLike, **options) -> ConvertResult:
    """Convert the checkpoint `source` to the .tmod `out` with its family's converter.

    options are the family's (Qwen3-TTS: dtype "f32" | "f16" | "bf16", quant "none" | "q8" | "q4",
    codec_dtype; every family: overwrite, progress (callable(nbytes, note))). docs/formats.md says
    which tensor gets which dtype.
    """
    from .. import families

    return families.get(detect_family(source)).convert(os.fspath(source), out, **options)


def work_bytes(source: str | os.PathLike) -> int:
    """The total that `convert` reports progress against."""
    from .. import families

    return families.get(detect_family(source)).work_bytes(os.fspath(source))


__all__ = ["convert", "detect_family", "work_bytes", "ConvertResult"]
