"""Kokoro voices named in text: weighted blends of style packs, and the defaults for other APIs' voice
names (the server's `voice` field).

A blend is written as Kokoro-FastAPI writes it: "jm_kumo(2)+jf_alpha(1)" is two parts jm_kumo and one
part jf_alpha; a part without a weight weighs 1; the weights are normalized to sum to 1. The blended
pack is the weighted sum of the parts' style packs ([510, 256] each: a style row per phoneme count),
accumulated in float64 and rounded once to float32, then used as a Kokoro style voice (a .tvoice
built with convert.style_voice and loaded by the engine), so it is exactly what `vox voice pack` would
make from that pack.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from typing import TYPE_CHECKING, Callable, Mapping

import numpy as np

from ...errors import InvalidArgument

if TYPE_CHECKING:
    from ...engine import Engine, Voice

MAX_PARTS = 16
_PART = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\s*(?:\(\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*\))?\s*")


def parse_blend(spec: str) -> list[tuple[str, float]] | None:
    """[(name, weight)] of a blend ("a(2)+b(1)", "a+b"), normalized to sum 1; None when `spec` is not
    written as a blend (a plain name is not one); InvalidArgument for a blend that is malformed."""
    if "+" not in spec and "(" not in spec:
        return None
    parts = spec.split("+")
    if len(parts) > MAX_PARTS:
        raise InvalidArgument(f"a voice blend has at most {MAX_PARTS} parts, not {len(parts)}")
    out: list[tuple[str, float]] = []
    for p in parts:
        m = _PART.fullmatch(p)
        if not m:
            raise InvalidArgument(f"voice blend {spec!r}: {p.strip()!r} is not NAME or NAME(WEIGHT)")
        w = float(m.group(2)) if m.group(2) is not None else 1.0
        if not (math.isfinite(w) and w > 0):
            raise InvalidArgument(f"voice blend {spec!r}: the weight of {m.group(1)!r} must be a positive number")
        out.append((m.group(1), w))
    total = sum(w for _, w in out)
    return [(n, w / total) for n, w in out]


def blend_pack(packs: list[np.ndarray], weights: list[float]) -> np.ndarray:
    """sum_i weights[i] * packs[i], in float64, rounded once to float32."""
    acc = np.zeros(packs[0].shape, np.float64)
    for p, w in zip(packs, weights):
        acc += float(w) * p.astype(np.float64)
    return acc.astype(np.float32)


def blend_voice(engine: "Engine", spec: str, voice: Callable[[str], "Voice"]) -> "Voice | None":
    """The engine's voice for a blend `spec` (None when it is not one); `voice(name)` gives each part."""
    from ...formats import tvoice
    from .convert import style_voice

    parts = parse_blend(spec)
    if parts is None:
        return None
    packs: list[np.ndarray] = []
    first: "Voice | None" = None
    for name, _ in parts:
        v = voice(name)
        pack = v.array("style_pack")
        if v.family != "kokoro" or pack is None:
            raise InvalidArgument(f"voice blend {spec!r}: {name!r} is not a Kokoro style voice")
        packs.append(pack.reshape(pack.shape[0], -1))
        first = first or v
    pack = blend_pack(packs, [w for _, w in parts])
    language = (first.info.get("language") if first is not None else None) or "auto"
    fv = style_voice(pack, spec, language=language, model_id=engine.info["model_id"])
    fd, tmp = tempfile.mkstemp(suffix=".tvoice", prefix="vox-blend-")
    os.close(fd)
    try:
        tvoice.write_voice(tmp, fv)
        return engine.load_voice(tmp)
    finally:
        os.unlink(tmp)


def voice_aliases(engine: "Engine", names: Mapping[str, str]) -> dict[str, str]:
    """For each name heard as female / male, one of the model's packs of that gender (Kokoro names say
    it: the second letter is f or m; English packs, a* and b*, first), taken in turn so that the names
    spread over the packs; "neutral" names take any pack in turn."""
    packs = [s for s in engine.speakers if len(s) > 2 and s[2] == "_"]
    if not packs:
        return {}
    english = [s for s in packs if s[0] in "ab"]
    pool = {g: [s for s in (english or packs) if s[1] == g[0]] or [s for s in packs if s[1] == g[0]]
            for g in ("female", "male")}
    pool["neutral"] = english or packs
    turn = {g: 0 for g in pool}
    out = {}
    for name, heard in names.items():
        g = heard if pool.get(heard) else "neutral"
        out[name] = pool[g][turn[g] % len(pool[g])]
        turn[g] += 1
    return out
