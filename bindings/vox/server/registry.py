"""The models a server speaks with: one Engine per model file, shared by every request (engines are
thread-safe and release the GIL in every native call).

A model is named by its id: the name given as `--model NAME=PATH`, else the file's stem
("base-q8" for base-q8.tmod). The first model is the default; OpenAI's model names (tts-1, tts-1-hd,
gpt-4o-mini-tts, ...) and a family's name (when one model of that family is loaded) are aliases, so
clients written for OpenAI or for other servers work unchanged.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..engine import Engine, Resources
from .errors import ApiError

# OpenAI's speech models (openai.types.audio.SpeechModel): they all mean "the default model" here.
OPENAI_MODELS = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts", "gpt-4o-mini-tts-2025-03-20", "gpt-4o-mini-tts-2025-12-15")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")


@dataclass
class ModelEntry:
    id: str
    path: str
    engine: Engine
    created: int
    aliases: list[str] = field(default_factory=list)

    @property
    def family(self) -> str:
        return self.engine.info["family"]

    def describe(self) -> dict:
        """The model as GET /v1/models lists it (OpenAI's fields first, then vox's)."""
        info = self.engine.info
        caps = dict(info.get("capabilities", {}))
        return {"id": self.id, "object": "model", "created": self.created, "owned_by": "vox",
                "family": info.get("family"), "variant": info.get("variant"), "size": info.get("size"),
                "sample_rate": self.engine.sample_rate, "languages": self.engine.languages,
                "speakers": self.engine.speakers, "capabilities": caps, "aliases": list(self.aliases),
                "options": [o["name"] for o in self.engine.options().get("options", [])]}


def parse_model_arg(arg: str) -> tuple[str | None, str]:
    """`NAME=PATH` or `PATH` -> (name or None, path)."""
    name, sep, path = arg.partition("=")
    if sep and _ID.fullmatch(name) and not os.path.exists(arg):
        return name, path
    return None, arg


class Models:
    """Loaded engines by id, with their aliases."""

    def __init__(self, specs: list[tuple[str | None, str | None]], *, device: str = "cpu", threads: int = 0):
        self.entries: dict[str, ModelEntry] = {}
        self._alias: dict[str, str] = {}
        try:
            for name, path in specs or [(None, None)]:
                self._load(name, path, device, threads)
        except BaseException:
            self.close()
            raise
        first = next(iter(self.entries.values()))
        self.default_id = first.id
        for a in OPENAI_MODELS + ("default",):
            self._add_alias(a, first)
        by_family: dict[str, list[ModelEntry]] = {}
        for e in self.entries.values():
            by_family.setdefault(e.family, []).append(e)
        for fam, es in by_family.items():
            if len(es) == 1:
                self._add_alias(fam, es[0])

    def _load(self, name: str | None, path: str | None, device: str, threads: int) -> None:
        if path is None:
            from ..models import ensure_default_model

            path = str(ensure_default_model())
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: no such model file")
        mid = name or Path(path).stem
        if not _ID.fullmatch(mid):
            raise ValueError(f"{mid!r} is not a usable model id: letters, digits and _ . : - (name it with "
                             f"--model NAME={path})")
        if mid in self.entries:
            raise ValueError(f"two models are named {mid!r}: name them with --model NAME=PATH")
        eng = Engine(path, resources=Resources(device=device, threads=threads))
        self.entries[mid] = ModelEntry(mid, path, eng, int(os.path.getmtime(path) or time.time()))

    def _add_alias(self, alias: str, entry: ModelEntry) -> None:
        if alias not in self.entries and alias not in self._alias:
            self._alias[alias] = entry.id
            entry.aliases.append(alias)

    def get(self, model: str | None) -> ModelEntry:
        """The model a request names (None or "": the default); 404 for an unknown one."""
        if model is None or model == "":
            return self.entries[self.default_id]
        if not isinstance(model, str):
            raise ApiError(400, "model must be a string", param="model", code="invalid_type")
        e = self.entries.get(model) or self.entries.get(self._alias.get(model, ""))
        if e is None:
            raise ApiError(404, f"the model {model!r} does not exist here (models: {', '.join(self.entries)})",
                           param="model", code="model_not_found")
        return e

    @property
    def engines(self) -> dict[str, Engine]:
        return {mid: e.engine for mid, e in self.entries.items()}

    def close(self) -> None:
        for e in self.entries.values():
            e.engine.close()
