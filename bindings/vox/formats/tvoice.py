""".tvoice voice files (docs/formats.md): a safetensors file with the voice's tensors and metadata.

`write_voice` validates a `Voice` and writes it atomically; `read_voice` validates a file completely
(format, version, family, mode, which tensors the mode needs, dtypes and shapes, per-tensor CRC-32)
and returns a `Voice`; `check_model` checks that a voice fits a model (same weights by model_id, same
variant, shapes and ids within the model's sizes).
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import zlib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Mapping, cast

import numpy as np

from ..errors import FormatError
from . import bounded

FORMAT = "vox.tvoice"
VERSION = 1
MAX_FILE = 1 << 30  # an hour of 48 kHz float audio is 0.7 GB; anything larger is not a voice
_HEX64 = re.compile(r"[0-9a-f]{64}")
# control characters as the session's text check defines them (C0 but tab, LF, CR; DEL; C1): a voice's
# texts reach the model as text does, and the C reader would see a NUL as the end of the text
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _control_char(s: str) -> tuple[int, int] | None:
    """(code point, byte offset in UTF-8) of the first control character of s, or None."""
    m = _CONTROL.search(s)
    return None if m is None else (ord(m.group()), len(s[:m.start()].encode("utf-8", "surrogatepass")))


@dataclass(frozen=True)
class VoiceSchema:
    """What a family's voices hold (the Python twin of the core's vx_voice_schema, family.h):
    arrays {name: ("F32" | "I64", ndim, fixed shape or None)}, modes {mode: (variant, required arrays,
    allowed arrays, required text or None)}, the texts a voice may hold, and whether a voice fits any
    weights of its family and variant (portable) or only the weights it was made with."""

    arrays: Mapping[str, tuple]
    modes: Mapping[str, tuple]
    texts: tuple[str, ...] = ()
    portable: bool = False


def schema(family: str, path: str = "<voice>") -> VoiceSchema:
    from .. import families

    if family not in families.names():
        raise FormatError(f"{path}: unknown model family {family!r} (this vox knows: {', '.join(families.names())})")
    return families.get(family).voice_schema


@dataclass
class Voice:
    """The contents of a .tvoice: its family's arrays (float32, or int64 ids) and texts by name, as
    the family's VoiceSchema defines them (e.g. speaker_embedding, ref_codes, source_wav at
    source_sample_rate, style_pack; ref_text, speaker, instruct)."""

    family: str
    mode: str
    model_id: str
    variant: str
    name: str = ""
    language: str = "auto"
    defaults: dict = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    source_sample_rate: int | None = None

    def tensors(self) -> dict[str, np.ndarray]:
        return {n: a for n, a in self.arrays.items() if a is not None}

    def validate(self, path: str = "<voice>") -> None:
        """FormatError naming `path` and the problem if this voice could not be read back."""
        _validate(self, path)

    def __eq__(self, other: object) -> bool:  # arrays compare by value
        if not isinstance(other, Voice):
            return NotImplemented
        for f in fields(self):
            if f.name == "arrays":
                a, b = self.tensors(), other.tensors()
                if set(a) != set(b) or any(a[n].dtype != b[n].dtype or not np.array_equal(a[n], b[n]) for n in a):
                    return False
            elif getattr(self, f.name) != getattr(other, f.name):
                return False
        return True


def _validate(v: Voice, path: str) -> None:
    sc = schema(v.family, path)
    if v.mode not in sc.modes:
        from .. import families

        owner = [f.name for f in families.all() if v.mode in f.voice_schema.modes]
        if owner:
            raise FormatError(f"{path}: a {v.mode} voice belongs to the {owner[0]} family, not {v.family}")
        raise FormatError(f"{path}: unknown voice mode {v.mode!r} ({', '.join(sc.modes)})")
    variant, required, allowed, text = sc.modes[v.mode]
    if variant is not None and v.variant != variant:
        raise FormatError(f"{path}: a {v.mode} voice belongs to the {variant} variant, not {v.variant!r}")
    if not isinstance(v.model_id, str) or not _HEX64.fullmatch(v.model_id):
        raise FormatError(f"{path}: model_id must be 64 lowercase hex digits")
    for key in ("name", "language"):
        if not isinstance(getattr(v, key), str):
            raise FormatError(f"{path}: {key} must be a string")
    for key, t in v.texts.items():
        if key not in sc.texts:
            raise FormatError(f"{path}: a {v.family} voice has no text {key!r} ({', '.join(sc.texts) or 'none'})")
        if not isinstance(t, str):
            raise FormatError(f"{path}: {key} must be a string")
    if not v.language:
        raise FormatError(f"{path}: language must not be empty (use 'auto')")
    for key, t in (("name", v.name), ("language", v.language), *v.texts.items()):
        if (c := _control_char(t)) is not None:
            raise FormatError(f"{path}: {key} holds the control character U+{c[0]:04X} at byte {c[1]}")
    if text and not v.texts.get(text):
        raise FormatError(f"{path}: a {v.mode} voice needs {text}")
    if not isinstance(v.defaults, dict):
        raise FormatError(f"{path}: defaults must be a JSON object")
    have = v.tensors()
    for n in required:
        if n not in have:
            raise FormatError(f"{path}: a {v.mode} voice needs the tensor {n}")
    for n in have:
        if n not in required and n not in allowed:
            raise FormatError(f"{path}: a {v.mode} voice has no {n}")
    for n, a in have.items():
        if n not in sc.arrays:
            raise FormatError(f"{path}: unknown tensor {n!r} (a {v.family} voice holds {', '.join(sc.arrays)})")
        want_dtype, ndim, fixed = sc.arrays[n]
        npdt = np.float32 if want_dtype == "F32" else np.int64
        if not isinstance(a, np.ndarray) or a.dtype != npdt:
            raise FormatError(f"{path}: {n} must be {want_dtype}, got {getattr(a, 'dtype', type(a).__name__)}")
        if a.ndim != ndim or any(d < 1 for d in a.shape):
            raise FormatError(f"{path}: {n} has shape {list(a.shape)}; it must have {ndim} non-empty axes")
        if want_dtype == "F32" and not np.isfinite(a).all():
            raise FormatError(f"{path}: {n} holds non-finite values")
        if want_dtype == "I64" and (a < 0).any():
            raise FormatError(f"{path}: {n} holds negative ids")
        if fixed is not None and tuple(a.shape) != tuple(fixed):
            raise FormatError(f"{path}: {n} has shape {list(a.shape)}, it must be {list(fixed)}")
    if "source_wav" in have:
        sr = v.source_sample_rate
        if type(sr) is not int or not 0 < sr <= 1_000_000:
            raise FormatError(f"{path}: source_wav needs a positive integer source_sample_rate, got {sr!r}")
    elif v.source_sample_rate is not None:
        raise FormatError(f"{path}: source_sample_rate given without source_wav")


def _crc(a: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes())


def write_voice(path: str | os.PathLike, voice: Voice, *, overwrite: bool = True) -> None:
    """Validate `voice` and write it to `path` atomically (temporary file + rename)."""
    from vox.reference.common import safetensors

    path = os.fspath(path)
    voice.validate(path)
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(f"{path} is a directory")
    if not overwrite and target.exists():
        raise FileExistsError(f"{path} exists (use --force to overwrite)")
    tensors = voice.tensors()
    meta = {
        "format": FORMAT, "format_version": str(VERSION), "family": voice.family, "model_id": voice.model_id,
        "variant": voice.variant, "mode": voice.mode, "name": voice.name, "language": voice.language,
        "defaults": json.dumps(voice.defaults, sort_keys=True, allow_nan=False),
        "crc32": json.dumps({n: _crc(a) for n, a in tensors.items()}, sort_keys=True),
    }
    for key, t in voice.texts.items():
        if t:
            meta[key] = t
    if voice.source_sample_rate is not None:
        meta["source_sample_rate"] = str(voice.source_sample_rate)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        safetensors.save(tmp, tensors, meta)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _meta_json(path: str, meta: dict, key: str) -> object:
    try:
        return bounded.loads(meta[key], key)
    except FormatError:
        raise FormatError(f"{path}: metadata {key} is not valid JSON") from None


def read_voice(path: str | os.PathLike) -> Voice:
    """Read and completely validate a .tvoice (including every tensor's CRC-32)."""
    from vox.reference.common.safetensors import SafetensorsError, parse_header

    from .tmod import loads_strict, open_regular

    path = os.fspath(path)
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_FILE:
            raise FormatError(f"{path}: {size} bytes is too large for a voice file")
        buf = f.read()
    # The header as strictly as the C reader parses it (its limits, no duplicate keys, no NaN), before
    # the generic safetensors reader builds it with a plain json.loads.
    (n,) = struct.unpack_from("<Q", buf) if len(buf) >= 8 else (0,)
    if 8 + n <= len(buf):
        try:
            loads_strict(bytes(buf[8:8 + n]), bounded.MAX_VALUES, "the header")
        except ValueError as e:
            raise FormatError(f"{path}: not a valid .tvoice (safetensors) file: corrupt header ({e})") from None
    try:
        entries, meta, start = parse_header(buf, path)
    except SafetensorsError as e:
        raise FormatError(f"{path}: not a valid .tvoice (safetensors) file: {str(e).removeprefix(path + ': ')}") from None
    except (RecursionError, OverflowError, TypeError, ValueError) as e:
        # the generic safetensors reader trips over some hostile headers (deep nesting, shapes whose
        # element count overflows int64) with errors of its own
        raise FormatError(f"{path}: not a valid .tvoice (safetensors) file: invalid header ({type(e).__name__})") from None
    for key, val in meta.items():
        if isinstance(val, str) and (c := _control_char(val)) is not None:
            raise FormatError(f"{path}: metadata {key!r} holds the control character U+{c[0]:04X} at byte {c[1]}")
    fmt = meta.get("format")
    if fmt != FORMAT:
        raise FormatError(f"{path}: not a .tvoice file (metadata format is {fmt!r}, expected {FORMAT!r})")
    ver = meta.get("format_version", "")
    if not re.fullmatch(r"[0-9]{1,9}", ver):
        raise FormatError(f"{path}: invalid format_version {ver!r}")
    if int(ver) > VERSION:
        raise FormatError(f"{path}: voice format version {ver} was written by a newer vox; this one reads version {VERSION}")
    if int(ver) < VERSION:
        raise FormatError(f"{path}: voice format version {ver} is no longer supported; this vox reads version {VERSION}")
    for key in ("family", "mode", "model_id", "variant"):
        if key not in meta:
            raise FormatError(f"{path}: metadata has no {key}")
    sc = schema(meta["family"], path)
    for name in entries:
        if name not in sc.arrays:
            raise FormatError(f"{path}: unknown tensor {name!r} (a {meta['family']} voice holds {', '.join(sc.arrays)})")
        if entries[name]["dtype"] != sc.arrays[name][0]:
            raise FormatError(f"{path}: {name} is {entries[name]['dtype']}, expected {sc.arrays[name][0]}")
    # As the reference safetensors implementation requires: the tensors tile the data section exactly,
    # with no holes, overlaps or trailing bytes (which would otherwise hide anything).
    end = 0
    for ent in sorted(entries.values(), key=lambda ent: tuple(ent["data_offsets"])):
        if ent["data_offsets"][0] != end:
            raise FormatError(f"{path}: tensor data has holes or overlaps (at byte {end} of the data)")
        end = ent["data_offsets"][1]
    if start + end != len(buf):
        raise FormatError(f"{path}: {len(buf) - start - end} trailing bytes after the last tensor")
    crcs = _meta_json(path, meta, "crc32") if "crc32" in meta else None
    if (not isinstance(crcs, dict) or set(crcs) != set(entries)
            or not all(type(c) is int and 0 <= c <= 0xFFFFFFFF for c in crcs.values())):
        raise FormatError(f"{path}: metadata crc32 must give a CRC-32 for every tensor")
    arrays = {}
    for name, ent in entries.items():
        a, b = ent["data_offsets"]
        if math.prod(ent["shape"]) * 8 > MAX_FILE or math.prod(ent["shape"]) * (4 if ent["dtype"] == "F32" else 8) != b - a:
            # parse_header multiplies in int64, which a hostile shape can overflow back to a small count
            raise FormatError(f"{path}: {name} has shape {ent['shape']}, which does not match its {b - a} bytes")
        raw = buf[start + a:start + b]
        got = zlib.crc32(raw)
        if got != crcs[name]:
            raise FormatError(f"{path}: tensor {name} is corrupt: CRC-32 {got:08x}, the metadata says {crcs[name]:08x}")
        dt = np.dtype("<f4") if ent["dtype"] == "F32" else np.dtype("<i8")
        arrays[name] = np.frombuffer(raw, dtype=dt).reshape(ent["shape"]).astype(dt.newbyteorder("="))
    defaults = _meta_json(path, meta, "defaults") if "defaults" in meta else {}
    sr = meta.get("source_sample_rate")
    if sr is not None:
        if not re.fullmatch(r"[0-9]{1,9}", sr):
            raise FormatError(f"{path}: invalid source_sample_rate {sr!r}")
        sr = int(sr)
    v = Voice(mode=meta["mode"], model_id=meta["model_id"], variant=meta["variant"], family=meta["family"],
              name=meta.get("name", ""), language=meta.get("language", "auto"),
              defaults=cast(dict, defaults),  # validate() refuses anything but an object, in the C reader's order
              texts={k: meta[k] for k in sc.texts if k in meta}, arrays=arrays, source_sample_rate=sr)
    v.validate(path)
    return v


def check_model(voice: Voice, manifest: Mapping, voice_path: str = "<voice>") -> None:
    """FormatError unless `voice` works with the model whose .tmod manifest is `manifest`: same family,
    same weights (model_id) unless the family's voices are portable, same variant, and what the family
    checks against the model's configuration (shapes, ids, speakers, languages)."""
    from .. import families

    p = voice_path
    if voice.family != manifest.get("family"):
        raise FormatError(f"{p}: a {voice.family} voice cannot be used with a {manifest.get('family')} model")
    fam = families.get(voice.family)
    if fam.voice_schema.portable:
        # a portable voice works with any conversion of the same variant: its model_id is informational
        if voice.variant != manifest.get("variant"):
            raise FormatError(f"{p}: a {fam.title} {voice.variant} voice cannot be used with a {fam.title} "
                              f"{manifest.get('variant')} model")
        return
    mid = manifest.get("model_id", "")
    if voice.model_id != mid:
        raise FormatError(f"{p}: the voice was made with model {voice.model_id[:12]}, this model is {str(mid)[:12]} "
                          "(other weights): re-create the voice from its source recording")
    if voice.variant != manifest.get("variant"):
        raise FormatError(f"{p}: a {voice.mode} voice needs the {voice.variant} variant, the model is "
                          f"{manifest.get('variant')}")
    fam.check_voice(voice, manifest, p)


def lengths(voice: Voice) -> dict:
    """Sizes worth showing: reference frames, text tokens, seconds of source audio, embedding size."""
    from .. import families

    out: dict = {}
    wav = voice.arrays.get("source_wav")
    if wav is not None and voice.source_sample_rate:
        out["source_seconds"] = round(wav.shape[0] / voice.source_sample_rate, 3)
    out.update(families.get(voice.family).voice_lengths(voice))
    return out


__all__ = ["Voice", "VoiceSchema", "schema", "read_voice", "write_voice", "check_model", "lengths", "FORMAT",
           "VERSION"]
