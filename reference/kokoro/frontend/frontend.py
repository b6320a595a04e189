"""The whole Kokoro English frontend as the C core runs it (core/src/kokoro/text/frontend.c):
span -> normalization -> G2P -> phonemes in Kokoro's symbol set; plus override parsing."""

from __future__ import annotations

import json

from .chunk import next_span
from .g2p import G2P
from .lexicon import Lexicon
from ...text.normalize import Normalizer
from .vocab import KOKORO_VOCAB

__all__ = ["Frontend", "OverrideError", "parse_overrides", "next_span"]

MAX_OVERRIDE_WORD = 64


class OverrideError(ValueError):
    pass


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise OverrideError(f"pronunciation overrides: not valid JSON (duplicate key {_q(k)})")
        d[k] = v
    return d


def parse_overrides(text: str | None, vocab: dict[str, int] = KOKORO_VOCAB) -> dict[str, str]:
    """A JSON object word -> phonemes (docs/formats.md "Pronunciation overrides"), validated."""
    if text is None or text == "":
        return {}
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise OverrideError(f"pronunciation overrides: not valid JSON ({e.msg} at offset {e.pos})") from None
    if not isinstance(obj, dict):
        raise OverrideError("pronunciation overrides: expected a JSON object mapping words to phonemes")
    for word, ps in obj.items():
        if not word or len(word.encode("utf-8")) > MAX_OVERRIDE_WORD or any(c in " \t\n\r" for c in word):
            raise OverrideError(f"pronunciation overrides: bad word {_q(word)} (one word, 1 to {MAX_OVERRIDE_WORD} bytes)")
        if not isinstance(ps, str) or not ps:
            raise OverrideError(f"pronunciation overrides: {_q(word)} must map to a non-empty string of phonemes")
        for c in ps:
            if c not in vocab:
                raise OverrideError(f"override {_q(word)}: symbol {_q(c)} (U+{ord(c):04X}) is not in the Kokoro vocabulary")
    return obj


class Frontend:
    def __init__(self, lexicon_blob: bytes, final_blob: bytes | None = None):
        self.lexicon = Lexicon(lexicon_blob)
        self.final = Lexicon(final_blob) if final_blob is not None else None

    @classmethod
    def from_wheel(cls, misaki_wheel) -> "Frontend":
        from vox.families.kokoro.frontend_data import frontend_tensors

        tensors, _ = frontend_tensors(misaki_wheel)
        return cls(tensors["frontend.lexicon"].tobytes(), tensors["frontend.lexicon_final"].tobytes())

    def normalize(self, span: str, overrides: dict[str, str] | None = None):
        return Normalizer(overrides)(span)

    def phonemize(self, span: str, overrides: str | dict[str, str] | None = None) -> str:
        ov = parse_overrides(overrides) if isinstance(overrides, str) or overrides is None else overrides
        items = Normalizer(ov)(span)
        return G2P(self.lexicon, ov, self.final)(items)

    next_span = staticmethod(next_span)
