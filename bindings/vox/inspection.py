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


def format_bytes(n: int) -> str:
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
    if man["family"] == "kokoro":
        math, why = kokoro_generator_math(man["precision"].get("dtype", "f32"))
        out["runtime"] = {"generator_math": math, "generator_math_why": why}
    return out


def kokoro_generator_math(weights_dtype: str = "f32") -> tuple[str, str]:
    """What a Kokoro engine loaded now on this CPU runs its decoder and generator convolutions in, and
    why (the rule of core/src/kokoro/weights.c, choose_generator_math; its engine info says the same):
    the generator's resblocks as int8 dot products where the kernel path has an int8 convolution kernel,
    the other convolutions as bf16 products where it has a bf16 one ("int8+bf16", "int8+f32", "bf16"),
    else f32; VOX_KOKORO_GEN=int8|bf16|f32 asks for one. Weights other than f32/bf16 run f32. What the
    path offers comes from vox.devices()["cpu"]["dots"] (the kernels' own answer, kernels.h vx_cpu_dots)."""
    from .engine import devices

    env = os.environ.get("VOX_KOKORO_GEN", "") or "auto"
    if env not in ("auto", "int8", "bf16", "f32"):
        raise ValueError(f"VOX_KOKORO_GEN={env}: use auto, int8, bf16 or f32")
    if env == "f32":
        return "f32", "VOX_KOKORO_GEN=f32"
    cpu = devices()["cpu"]
    dots = cpu["dots"]
    want_int8, want_bf16 = bool(dots["int8"]) and env != "bf16", bool(dots["bf16"])
    ask = "" if env == "auto" else f"VOX_KOKORO_GEN={env}; "
    parts = ([f"int8: {dots['int8']}"] if want_int8 else []) + ([f"bf16: {dots['bf16']}"] if want_bf16 else [])
    why = ask + ("; ".join(parts) if parts else f"the CPU path {cpu['kernels']} has no int8 or bf16 convolution kernel")
    if (want_int8 or want_bf16) and weights_dtype not in ("f32", "bf16"):
        return "f32", "weights not f32/bf16"
    math = ("int8+bf16" if want_bf16 else "int8+f32") if want_int8 else ("bf16" if want_bf16 else "f32")
    return math, why


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
        "speaker": v.speaker,
        "instruct": v.instruct,
        "ref_text": v.ref_text,
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
