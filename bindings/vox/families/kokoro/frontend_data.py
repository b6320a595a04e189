"""The Kokoro English text frontend's data, packed for the .tmod (docs/formats.md, "Kokoro frontend").

The pronunciation lexicon is misaki 0.9.4's American English dictionaries (us_gold.json, then
us_silver.json for words gold lacks; Apache-2.0), read straight from the misaki wheel ZIP (misaki is
never imported). Both the C core (core/src/kokoro/text/lexicon.c) and the Python twin
(reference/kokoro/frontend/lexicon.py) read the packed blob in place by binary search.

Packing rules (the same ones misaki applies when it loads the files):
- case variants: misaki's Lexicon.grow_dictionary adds "Word" for a lower-case key "word" and "word"
  for a capitalized key "Word" (keys of 2+ characters) unless the variant is already a key. Done here
  once, so a reader needs exact lookups only.
- gold first: a silver entry is used only for a key (after growing) that gold lacks.
- entries whose value is a dict keyed by part-of-speech tag ({"DEFAULT": ..., "NOUN": ..., "VERB":
  ...}): vox has no tagger, so the "DEFAULT" reading (the one misaki uses when the tag matches no
  other key; always present) is stored; the "None" reading of such an entry, which misaki uses at the
  end of a phrase, goes to a second, small table (frontend.lexicon_final).
Every stored phoneme symbol must be in the model's vocab (config.json "vocab").
"""

from __future__ import annotations

import hashlib
import json
import struct
import zipfile
from pathlib import Path

import numpy as np

from ...errors import FormatError

LEXICON_MAGIC = b"VXL1"
LEXICON_TENSOR = "frontend.lexicon"
LEXICON_FINAL_TENSOR = "frontend.lexicon_final"
MISAKI_MEMBERS = ("misaki/data/us_gold.json", "misaki/data/us_silver.json")
FORMAT = "vox.kokoro.frontend"
FORMAT_VERSION = 1


def _grow(d: dict) -> dict:
    """misaki.en.Lexicon.grow_dictionary: case variants added, existing keys win."""
    e = {}
    for k, v in d.items():
        if len(k) < 2:
            continue
        if k == k.lower():
            if k != k.capitalize():
                e[k.capitalize()] = v
        elif k == k.lower().capitalize():
            e[k.lower()] = v
    return {**e, **d}


def _reading(key: str, value, member: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("DEFAULT"), str):
        return value["DEFAULT"]
    raise FormatError(f"{member}: entry {key!r} has no usable reading ({value!r})")


def pack_lexicon(entries: dict[str, str]) -> bytes:
    """The lexicon blob: "VXL1", u32 count, u32 offsets[count] (from the blob start, ascending), then
    per entry "key\\0phonemes\\0" (UTF-8), entries sorted by the bytes of their key (all little-endian)."""
    items = sorted(((k.encode("utf-8"), v.encode("utf-8")) for k, v in entries.items()), key=lambda kv: kv[0])
    head = 8 + 4 * len(items)
    offsets, body, pos = [], bytearray(), head
    for k, v in items:
        if b"\0" in k or b"\0" in v or not k:
            raise FormatError(f"lexicon key {k!r}: empty or holds a NUL byte")
        offsets.append(pos)
        rec = k + b"\0" + v + b"\0"
        body += rec
        pos += len(rec)
    return LEXICON_MAGIC + struct.pack("<I", len(items)) + struct.pack(f"<{len(items)}I", *offsets) + bytes(body)


def lexicon_from_wheel(misaki_wheel: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(word -> phonemes, member -> sha256) from the misaki wheel."""
    entries, final, sources = lexicons_from_wheel(misaki_wheel)
    return entries, sources


def lexicons_from_wheel(misaki_wheel: Path) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(word -> phonemes, word -> phrase-final phonemes, member -> sha256) from the misaki wheel.

    The phrase-final table holds the "None" readings of POS-keyed entries (32 gold words such as
    "there" ðɛɹ / ðˈɛɹ, "be", "have", "my"): misaki uses them when no vowel, consonant or other word
    follows before punctuation or the end (its TokenContext.future_vowel is None)."""
    sources: dict[str, str] = {}
    dicts = []
    with zipfile.ZipFile(misaki_wheel) as z:
        for member in MISAKI_MEMBERS:
            try:
                raw = z.read(member)
            except KeyError:
                raise FormatError(f"{misaki_wheel}: no member {member} (is this the misaki wheel?)") from None
            sources[member] = hashlib.sha256(raw).hexdigest()
            d = json.loads(raw.decode("utf-8"))
            if not isinstance(d, dict):
                raise FormatError(f"{misaki_wheel}:{member}: not a JSON object")
            dicts.append((member, _grow(d)))
    merged: dict[str, str] = {}
    final: dict[str, str] = {}
    for member, d in dicts:  # gold first: silver only fills keys gold lacks
        for k, v in d.items():
            if k not in merged:
                merged[k] = _reading(k, v, member)
                if isinstance(v, dict) and isinstance(v.get("None"), str):
                    final[k] = v["None"]
    return merged, final, sources


def check_vocab(entries: dict[str, str], vocab: dict[str, int]) -> None:
    for k, v in entries.items():
        bad = [c for c in v if c not in vocab]
        if bad:
            raise FormatError(f"lexicon entry {k!r} -> {v!r}: symbol {bad[0]!r} (U+{ord(bad[0]):04X}) is not in the model vocab")


def frontend_tensors(misaki_wheel: Path, vocab: dict[str, int] | None = None) -> tuple[dict[str, np.ndarray], dict]:
    """u8 tensors "frontend.*" and the manifest's "frontend" object for a Kokoro .tmod.

    vocab: the model's config "vocab" (symbol -> id); every stored phoneme symbol is checked against
    it. Defaults to the Kokoro v1.0 vocab of the reference frontend."""
    misaki_wheel = Path(misaki_wheel)
    if vocab is None:
        from vox.reference.kokoro.frontend.vocab import KOKORO_VOCAB

        vocab = KOKORO_VOCAB
    entries, final, sources = lexicons_from_wheel(misaki_wheel)
    check_vocab(entries, vocab)
    check_vocab(final, vocab)
    tensors = {LEXICON_TENSOR: np.frombuffer(pack_lexicon(entries), dtype=np.uint8),
               LEXICON_FINAL_TENSOR: np.frombuffer(pack_lexicon(final), dtype=np.uint8)}
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "language": "en-us",
        "lexicon": LEXICON_TENSOR,
        "lexicon_entries": len(entries),
        "lexicon_final": LEXICON_FINAL_TENSOR,
        "lexicon_final_entries": len(final),
        "lexicon_pos_choice": "DEFAULT",
        "source": {"wheel": misaki_wheel.name, "files": sources, "license": "Apache-2.0",
                   "origin": "misaki 0.9.4 (hexgrad), us_gold.json + us_silver.json"},
    }
    return tensors, manifest


# A pronunciation file is a user's word list: 100k words take ~3 MB. The limit is checked before reading.
MAX_PRONUNCIATIONS_BYTES = 16 << 20


def read_pronunciations(path) -> dict[str, str]:
    """The JSON object word -> phonemes of a pronunciation file (`vox say --pronunciations FILE`):
    a regular file of at most MAX_PRONUNCIATIONS_BYTES, UTF-8 JSON within the C parser's limits, an
    object of strings; FormatError naming the file otherwise (the phonemes themselves are checked by
    the native frontend, against the model's vocabulary)."""
    from ...formats import bounded

    text = bounded.read_text(path, MAX_PRONUNCIATIONS_BYTES, "pronunciation file")
    obj = bounded.loads(text, str(path))
    if not isinstance(obj, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in obj.items()):
        raise FormatError(f"{path}: must be a JSON object of word -> phonemes strings")
    return obj


def pronunciations_json(source, vocab: dict[str, int] | None = None) -> str:
    """Pronunciation overrides (docs/formats.md "Pronunciation overrides") as the validated JSON text
    the native frontend takes: `source` is a dict word -> phonemes, a JSON string, or a path to a JSON
    file. A bad file fails as a whole with a FormatError naming the file, the word and the symbol."""
    from vox.reference.kokoro.frontend.frontend import OverrideError, parse_overrides
    from vox.reference.kokoro.frontend.vocab import KOKORO_VOCAB

    from ...formats import bounded

    where = ""
    if isinstance(source, dict):
        text = json.dumps(source, ensure_ascii=False)
    elif isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        where = f"{source}: "
        text = bounded.read_text(source, MAX_PRONUNCIATIONS_BYTES, "pronunciation file")
    else:
        text = source
    try:
        bounded.check_json(text.encode("utf-8", "surrogatepass"))  # the C parser's limits, before json.loads
    except ValueError as e:
        raise FormatError(f"{where}pronunciation overrides: not valid JSON ({e})") from None
    try:
        parse_overrides(text, vocab or KOKORO_VOCAB)
    except OverrideError as e:
        raise FormatError(f"{where}{e}") from None
    return text
