"""The Kokoro parts of a .tmod manifest: the keys only this family has."""

from __future__ import annotations

from typing import Mapping

from ...errors import FormatError
from ...formats import tmod

VARIANTS = ("v1.0",)
STYLE_SHAPE = (510, 256)  # a voice pack: one style row per phoneme count


def check_manifest(path: str, m: dict, by_name: Mapping[str, tmod.TensorEntry]) -> None:
    """Built-in voice packs named in "speakers", each an f32 voices.<name> tensor [510, 256];
    "default_speaker" one of them; "frontend" an object when present."""
    variant = m["variant"]
    if variant not in VARIANTS:
        raise FormatError(f"{path}: manifest: unknown kokoro variant {variant!r} ({', '.join(VARIANTS)})")
    speakers = tmod.member(path, m, "speakers", list)
    for s in speakers:
        if not isinstance(s, str) or not s:
            raise FormatError(f'{path}: manifest: "speakers" must list non-empty voice names')
        e = by_name.get("voices." + s)
        if e is None or e.dtype != "f32" or e.shape != STYLE_SHAPE:
            raise FormatError(f"{path}: manifest: speaker {s!r} needs an f32 tensor voices.{s} of shape "
                              f"{list(STYLE_SHAPE)}")
    if "default_speaker" in m:
        d = tmod.member(path, m, "default_speaker", str)
        if d not in speakers:
            raise FormatError(f'{path}: manifest: "default_speaker" {d!r} is not one of "speakers"')
    if "frontend" in m:
        tmod.member(path, m, "frontend", dict)
