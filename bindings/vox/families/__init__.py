"""The model families vox knows, in one registry: every layer that differs by family (conversion,
file checks, options, the CLI's family flags, verification, benchmarks) asks the family it is given
through the interface of vox.families.base.Family, and nothing outside a family's package names one.

    import vox.families
    fam = vox.families.get("kokoro")       # by the name a .tmod's manifest gives
    fam.Options(speed=1.1)                  # its typed synthesis options
    [f.name for f in vox.families.all()]

A new family adds a package here (vox/families/<name>/, exporting FAMILY) and a line to _PACKAGES.
"""

from __future__ import annotations

import importlib

from ..errors import FormatError
from .base import Family, OptionsBase

# manifest family name -> the package holding it (imported on first use)
_PACKAGES = {"qwen3_tts": "qwen3", "kokoro": "kokoro", "f5_tts": "f5"}
_LOADED: dict[str, Family] = {}


def names() -> list[str]:
    """The families' manifest names, in registry order."""
    return list(_PACKAGES)


def get(name: str) -> Family:
    """The family of manifest name `name`; FormatError naming the known ones for any other."""
    if name not in _PACKAGES:
        raise FormatError(f"unknown model family {name!r} (this vox knows: {', '.join(_PACKAGES)})")
    if name not in _LOADED:
        _LOADED[name] = importlib.import_module(f"{__name__}.{_PACKAGES[name]}").FAMILY
    return _LOADED[name]


def all() -> list[Family]:  # noqa: A001 - vox.families.all() reads as what it is
    """Every family, in registry order."""
    return [get(n) for n in _PACKAGES]


__all__ = ["Family", "OptionsBase", "get", "all", "names"]
