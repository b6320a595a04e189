"""Voices of a server: the stored ones (.tvoice files in --voices), each model's own (speakers, voice
packs, its default), other APIs' names for them (OpenAI's alloy, ash, ... through the voice map),
and what a family writes in its own notation (weighted blends of voice packs, "a(2)+b(1)").

How a request's `voice` is read, for model M (first match wins):
    "default"                    M's default voice (Engine.default_voice())
    a stored voice's name        DIR/NAME.tvoice, loaded for M (it must fit M: vox.Voice.load checks)
    one of M's speakers          Engine.speaker_voice(name, instructions) (case-insensitive)
    a name in the voice map      the voice it maps to (another name, a blend, ...), for M
    M's family's notation        Family.voice_from_spec (e.g. a blend of voice packs and stored voices)
Anything else is a 404 naming the voice.

Stored voices: names are 1-64 characters of letters, digits and _ . - (starting with a letter or
digit), so a name is always a plain file name inside --voices, never a path. A voice is written to a
hidden temporary file in the same directory and linked to its name only when complete (a link fails if
the name exists, so two uploads of one name cannot overwrite each other); a failed upload leaves
nothing behind.
"""

from __future__ import annotations

import json
import os
import re
import struct
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Mapping

from ..engine import Voice
from ..errors import InvalidArgument
from .errors import ApiError
from .registry import ModelEntry

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
RESERVED = ("default",)
SUFFIX = ".tvoice"
_MAX_HEADER = 1 << 20

# OpenAI's built-in voices and how they are commonly heard (female / male / neutral): the hint a family
# uses to pick a default for each among its own voices (Family.voice_aliases). --voice-map overrides.
OPENAI_VOICES = {"alloy": "neutral", "ash": "male", "ballad": "male", "coral": "female", "echo": "male",
                 "fable": "male", "nova": "female", "onyx": "male", "sage": "female", "shimmer": "female",
                 "verse": "male", "marin": "female", "cedar": "male"}


def check_name(name: Any, param: str = "name") -> str:
    """A stored voice's name, or a 400 saying what a name may be."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or name.endswith(SUFFIX) or name in RESERVED:
        shown = name if isinstance(name, str) and len(name) <= 80 else (type(name).__name__ if not isinstance(name, str)
                                                                         else name[:80] + "...")
        raise ApiError(400, f"invalid voice name {shown!r}: use 1 to 64 letters, digits, '_', '.' or '-', starting "
                            f"with a letter or digit (not {', '.join(RESERVED)}, not ending in {SUFFIX})",
                       param=param, code="invalid_name")
    return name


def read_voice_meta(path: Path) -> dict[str, str]:
    """The metadata of a .tvoice (its safetensors header only: family, mode, name, language, model_id,
    variant), without reading its arrays."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError("truncated")
        (n,) = struct.unpack("<Q", head)
        if n > _MAX_HEADER:
            raise ValueError("header too large")
        header = json.loads(f.read(n).decode("utf-8"))
    meta = header.get("__metadata__", {}) if isinstance(header, dict) else {}
    if not isinstance(meta, dict) or meta.get("format") != "vox.tvoice":
        raise ValueError("not a .tvoice")
    return {k: v for k, v in meta.items() if isinstance(v, str) and k != "crc32"}


class VoiceStore:
    """The .tvoice files of one directory."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).resolve()
        if self.root.exists() and not self.root.is_dir():
            raise NotADirectoryError(f"--voices {root}: not a directory")
        self.root.mkdir(parents=True, exist_ok=True)
        if not os.access(self.root, os.W_OK):
            raise PermissionError(f"{self.root}: the voices directory is not writable")
        self._lock = threading.Lock()
        self.generation = 0          # bumped on every change, so caches of loaded voices notice
        self.clean_temporaries()

    def path(self, name: str) -> Path:
        p = self.root / (check_name(name) + SUFFIX)
        if p.parent != self.root:  # cannot happen with a checked name; kept as the invariant it is
            raise ApiError(400, "invalid voice name", param="name", code="invalid_name")
        return p

    def exists(self, name: str) -> bool:
        if not isinstance(name, str) or not NAME.fullmatch(name) or name in RESERVED:
            return False
        return (self.root / (name + SUFFIX)).is_file()

    def names(self) -> list[str]:
        out = []
        for p in sorted(self.root.glob("*" + SUFFIX)):
            stem = p.name[:-len(SUFFIX)]
            if NAME.fullmatch(stem) and stem not in RESERVED and p.is_file():
                out.append(stem)
        return out

    def describe(self, name: str) -> dict | None:
        p = self.root / (name + SUFFIX)
        try:
            meta = read_voice_meta(p)
            st = p.stat()
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        return {"family": meta.get("family"), "mode": meta.get("mode"), "language": meta.get("language", "auto"),
                "model_id": meta.get("model_id"), "variant": meta.get("variant"), "bytes": st.st_size,
                "created": int(st.st_mtime)}

    def save(self, name: str, voice: Voice, *, overwrite: bool = False) -> Path:
        """Write `voice` as NAME.tvoice atomically; 409 if the name exists (unless overwrite)."""
        final = self.path(name)
        tmp = self.root / f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
        try:
            voice.save(tmp)
            with self._lock:
                if overwrite:
                    os.replace(tmp, final)
                else:
                    try:
                        os.link(tmp, final)      # fails if the name exists: no check-then-write race
                    except FileExistsError:
                        raise ApiError(409, f"a voice named {name!r} exists (DELETE /v1/voices/{name} first)",
                                       param="name", code="voice_exists") from None
                self.generation += 1
        finally:
            tmp.unlink(missing_ok=True)
        return final

    def delete(self, name: str) -> None:
        p = self.path(name)
        with self._lock:
            try:
                p.unlink()
            except FileNotFoundError:
                raise ApiError(404, f"no stored voice named {name!r}", param="name", code="voice_not_found") from None
            self.generation += 1

    def clean_temporaries(self) -> None:
        """Temporary files a killed server left behind (never a voice: voices are linked into place)."""
        for p in self.root.glob(".*.tmp"):
            try:
                p.unlink()
            except OSError:
                pass


def load_voice_map(path: str | None) -> dict:
    """--voice-map FILE: {"voices": {name: voice}, "models": {model id: {name: voice}}}, or a plain
    {name: voice} object (the same as "voices")."""
    if not path:
        return {"voices": {}, "models": {}}
    try:
        with open(path, "rb") as f:
            raw = f.read((1 << 20) + 1)
    except OSError as e:
        raise ValueError(f"--voice-map {path}: {e.strerror or e}") from None
    if len(raw) > 1 << 20:
        raise ValueError(f"--voice-map {path}: larger than 1 MiB")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"--voice-map {path}: not a JSON document ({e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"--voice-map {path}: must be a JSON object")
    if "voices" not in data and "models" not in data:
        data = {"voices": data}
    voices, models = data.get("voices", {}), data.get("models", {})
    unknown = set(data) - {"voices", "models"}
    if unknown:
        raise ValueError(f"--voice-map {path}: unknown key {sorted(unknown)[0]!r} (use \"voices\" and \"models\")")

    def table(t: Any, where: str) -> dict[str, str]:
        if not isinstance(t, dict) or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in t.items()):
            raise ValueError(f"--voice-map {path}: {where} must map names to voice names (strings)")
        return dict(t)

    out_models = {}
    if not isinstance(models, dict):
        raise ValueError(f"--voice-map {path}: \"models\" must map model ids to tables")
    for mid, t in models.items():
        out_models[mid] = table(t, f"models.{mid}")
    return {"voices": table(voices, "voices"), "models": out_models}


class Voices:
    """Reads a request's voice for a model (the order in the module's docstring), with a cache of
    loaded voices. Call resolve() off the event loop: loading and blending are native calls."""

    def __init__(self, store: VoiceStore, voice_map: Mapping, cache_size: int = 128):
        self.store = store
        self._user_map = voice_map
        self._cache: "OrderedDict[tuple, Voice]" = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._aliases: dict[str, dict[str, str]] = {}

    # ------------------------------------------------------------------ the voice map
    def aliases(self, entry: ModelEntry) -> dict[str, str]:
        """The voice map for a model: the family's defaults for OpenAI's names (every one of them: the
        model's default voice where the family has no better choice), then --voice-map's tables."""
        if entry.id not in self._aliases:
            eng = entry.engine
            table = {n: "default" for n in OPENAI_VOICES}
            table.update(eng.family.voice_aliases(eng, OPENAI_VOICES))
            table.update(self._user_map.get("voices", {}))
            table.update(self._user_map.get("models", {}).get(entry.id, {}))
            self._aliases[entry.id] = table
        return self._aliases[entry.id]

    # ------------------------------------------------------------------ resolution
    def _cached(self, key: tuple, make: Callable[[], Voice]) -> Voice:
        with self._lock:
            v = self._cache.get(key)
            if v is not None:
                self._cache.move_to_end(key)
                return v
        v = make()
        with self._lock:
            self._cache[key] = v
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return v

    def resolve(self, entry: ModelEntry, spec: Any, instructions: str | None = None) -> Voice:
        """The Voice that `spec` names for `entry`'s model (instructions: CustomVoice's style
        instruction, or VoiceDesign's description)."""
        if isinstance(spec, Mapping) and set(spec) == {"id"}:
            spec = spec["id"]           # OpenAI's custom-voice form {"id": "voice_1234"}
        if spec is None:
            spec = "default"
        if not isinstance(spec, str) or not spec.strip():
            raise ApiError(400, "voice must be a non-empty string (or {\"id\": name})", param="voice",
                           code="invalid_type")
        if len(spec) > 1024:
            raise ApiError(400, "voice is longer than 1024 characters", param="voice", code="invalid_value")
        eng = entry.engine
        caps = eng.capabilities
        if instructions is not None:
            if not isinstance(instructions, str):
                raise ApiError(400, "instructions must be a string", param="instructions", code="invalid_type")
            instructions = instructions.strip() or None
        if instructions and not (caps.get("instruct") or caps.get("design")):
            raise ApiError(400, f"the model {entry.id!r} takes no instructions (only CustomVoice and VoiceDesign "
                                "models do)", param="instructions", code="unsupported")
        if caps.get("design") and (spec == "default" or spec in OPENAI_VOICES):
            # a VoiceDesign model speaks the voice its instructions describe
            desc = instructions or ""
            return self._cached((entry.id, "design", desc), lambda: eng.design_voice(desc))
        v = self._lookup(entry, spec.strip(), instructions, depth=0)
        if v is None:
            raise ApiError(404, f"the voice {spec!r} does not exist for the model {entry.id!r} (GET /v1/voices?model="
                                f"{entry.id} lists them)", param="voice", code="voice_not_found")
        return v

    def _lookup(self, entry: ModelEntry, name: str, instructions: str | None, depth: int) -> Voice | None:
        eng = entry.engine
        if depth > 8:
            raise ApiError(400, f"the voice map loops at {name!r}", param="voice", code="invalid_value")
        if name == "default":
            if instructions:
                raise ApiError(400, "instructions need a speaker: name one in voice", param="instructions",
                               code="invalid_value")
            return self._cached((entry.id, "default"), lambda: self._default(entry))
        if self.store.exists(name):
            if instructions:
                raise ApiError(400, f"{name!r} is a stored voice: instructions apply to a model's speakers",
                               param="instructions", code="invalid_value")
            p = self.store.path(name)
            st = p.stat()
            return self._cached((entry.id, "stored", name, st.st_mtime_ns, st.st_size, self.store.generation),
                                lambda: eng.load_voice(p))
        speakers = {s.lower(): s for s in eng.speakers}
        if name.lower() in speakers:
            spk = speakers[name.lower()]
            return self._cached((entry.id, "speaker", spk, instructions),
                                lambda: eng.speaker_voice(spk, instructions))
        aliases = self.aliases(entry)
        if name in aliases:
            got = self._lookup(entry, aliases[name], instructions, depth + 1)
            if got is None:
                raise ApiError(404, f"the voice map maps {name!r} to {aliases[name]!r}, which does not exist for the "
                                    f"model {entry.id!r}", param="voice", code="voice_not_found")
            return got
        if instructions:
            raise ApiError(400, f"instructions apply to a model's speakers, and {name!r} is not one",
                           param="instructions", code="invalid_value")

        def part(n: str) -> Voice:
            got = self._lookup(entry, n, None, depth + 1)
            if got is None:
                raise InvalidArgument(f"the voice {n!r} (in {name!r}) does not exist for the model {entry.id!r}")
            return got

        key = (entry.id, "spec", name, self.store.generation)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        v = eng.family.voice_from_spec(eng, name, part)
        if v is not None:
            self._cached(key, lambda: v)
        return v

    def _default(self, entry: ModelEntry) -> Voice:
        eng = entry.engine
        try:
            return eng.default_voice()
        except InvalidArgument:
            if eng.speakers:       # a model of speakers only: its first one stands for "default"
                return eng.speaker_voice(eng.speakers[0])
            raise

    def default_name(self, entry: ModelEntry) -> str | None:
        """The name of the model's default voice, for listings (None when it has none)."""
        try:
            return self._cached((entry.id, "default"), lambda: self._default(entry)).name or "default"
        except (InvalidArgument, ApiError):
            return None

    # ------------------------------------------------------------------ listing
    def listing(self, entries: list[ModelEntry]) -> list[dict]:
        """GET /v1/voices: every voice a request may name for these models."""
        out: list[dict] = []
        for entry in entries:
            eng = entry.engine
            default = self.default_name(entry)
            if default is not None:
                out.append({"id": "default", "object": "voice", "kind": "default", "model": entry.id,
                            "target": default})
            for s in eng.speakers:
                out.append({"id": s, "object": "voice", "kind": "speaker", "model": entry.id,
                            "instructions": bool(eng.capabilities.get("instruct"))})
            for alias, target in sorted(self.aliases(entry).items()):
                out.append({"id": alias, "object": "voice", "kind": "alias", "model": entry.id, "target": target})
        fits: dict[str, list[str]] = {}
        for name in self.store.names():
            d = self.store.describe(name)
            if d is None:
                continue
            models = [e.id for e in entries if _fits(d, e)]
            fits[name] = models
            out.append({"id": name, "object": "voice", "kind": "stored", "models": models, **d})
        return out


def _fits(meta: dict, entry: ModelEntry) -> bool:
    """Whether a stored voice's metadata fit a model (the full check happens when it is loaded)."""
    from .. import families

    info = entry.engine.info
    if meta.get("family") != info.get("family"):
        return False
    try:
        portable = families.get(meta["family"]).voice_schema.portable
    except Exception:
        return False
    if portable:
        return meta.get("variant") == info.get("variant")
    return meta.get("model_id") == info.get("model_id")
