"""Converters from official checkpoints to .tmod, one module per model family.

    from vox.convert import convert
    convert("Qwen3-TTS-12Hz-1.7B-Base", "base17.tmod", dtype="bf16", quant="q8")
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import FormatError
from .common import ConvertResult

# config.json "model_type" -> converter module (vox.convert.<module>)
FAMILIES = {"qwen3_tts": "qwen3"}


def detect_family(model_dir: str | os.PathLike) -> str:
    """The family of the official checkpoint in `model_dir`, from its config.json model_type."""
    d = Path(model_dir)
    if not d.exists():
        raise FileNotFoundError(f"{d}: no such directory")
    if not d.is_dir():
        raise NotADirectoryError(f"{d}: not a directory (pass the checkpoint directory, not a file in it)")
    cfg = d / "config.json"
    if not cfg.is_file():
        raise FileNotFoundError(f"{d}: not a model checkpoint directory (no config.json)")
    try:
        model_type = json.loads(cfg.read_text(encoding="utf-8")).get("model_type")
    except (ValueError, AttributeError) as e:
        raise FormatError(f"{cfg}: not a valid config.json ({e})") from None
    if model_type not in FAMILIES:
        raise FormatError(f"{cfg}: unknown model_type {model_type!r}; vox converts: {', '.join(FAMILIES)}")
    return model_type


def convert(model_dir: str | os.PathLike, out: str | os.PathLike, **options) -> ConvertResult:
    """Convert the checkpoint in `model_dir` to the .tmod `out` with the family's converter.

    options: dtype ("f32" | "f16" | "bf16"), quant ("none" | "q8" | "q4"), codec_dtype, overwrite,
    progress (callable(nbytes, note)). See docs/formats.md for which tensor gets which dtype.
    """
    import importlib

    family = detect_family(model_dir)
    module = importlib.import_module(f"{__name__}.{FAMILIES[family]}")
    return module.convert(model_dir, out, **options)


def work_bytes(model_dir: str | os.PathLike) -> int:
    """The total that `convert` reports progress against (bytes hashed + bytes converted)."""
    import importlib

    return importlib.import_module(f"{__name__}.{FAMILIES[detect_family(model_dir)]}").work_bytes(model_dir)


__all__ = ["convert", "detect_family", "work_bytes", "ConvertResult", "FAMILIES"]
