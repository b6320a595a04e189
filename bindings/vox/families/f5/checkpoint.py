"""The F5-TTS parts of a .tmod: the manifest keys only this family has, the text frontend's blobs it
stores, and the file read back as the reference's F5Model (float32 on access)."""

from __future__ import annotations

import os
from typing import Mapping

from ...errors import FormatError
from ...formats import tmod

VARIANTS = ("v0", "v1")
# The text frontend's data: manifest tokenizer role -> tensor name (u8, UTF-8 text).
TOKENIZER_BLOBS = {
    "vocab": "tokenizer.vocab",
    "jieba_dict": "tokenizer.jieba_dict",
    "jieba_hmm": "tokenizer.jieba_hmm",
    "pinyin_chars": "tokenizer.pinyin_chars",
    "pinyin_phrases": "tokenizer.pinyin_phrases",
}


def check_manifest(path: str, m: dict, by_name: Mapping[str, tmod.TensorEntry]) -> None:
    """The config sections the runtime reads and the text frontend's blobs."""
    variant = m["variant"]
    if variant not in VARIANTS:
        raise FormatError(f"{path}: manifest: unknown f5_tts variant {variant!r} ({', '.join(VARIANTS)})")
    cfg = tmod.member(path, m, "config", dict)
    for section in ("dit", "mel", "vocos", "infer"):
        tmod.member(path, cfg, section, dict, "config: ")
    tok = tmod.member(path, m, "tokenizer", dict)
    for role in TOKENIZER_BLOBS:
        ref = tmod.member(path, tok, role, str, "tokenizer: ")
        e = by_name.get(ref)
        if e is None or e.dtype != "u8" or len(e.shape) != 1:
            raise FormatError(f"{path}: manifest: tokenizer {role} names {ref!r}, which is not a 1-D u8 tensor")


def read_model(path: str | os.PathLike):
    """An f5_tts .tmod as the reference's F5Model (vox.reference.f5.pipeline): config, weights (float32;
    q8 dequantized, bf16/f16 widened) and the text frontend data from the tokenizer blobs."""
    from vox.reference.f5.config import F5Config
    from vox.reference.f5.pipeline import F5Model
    from vox.reference.f5.textdata import TextData

    f = tmod.TmodFile(path)
    m = f.manifest
    if m["family"] != "f5_tts":
        f.close()
        raise FormatError(f"{f.path}: a {m['family']} model, not an F5-TTS one")
    blobs = {role: f.raw(m["tokenizer"][role]).tobytes() for role in TOKENIZER_BLOBS}
    names = [n for n in f.tensors if not n.startswith("tokenizer.")]
    try:
        cfg = F5Config.from_json(m["config"])
        text = TextData.from_blobs(blobs)
    except (KeyError, TypeError, ValueError) as e:
        raise FormatError(f"{f.path}: manifest: bad f5_tts config or tokenizer data ({e})") from None
    weights = {n: f.array(n) for n in names}  # dequantized once: the sampler reads every weight at every step
    return F5Model(cfg, weights, text, source=f.path,
                   extra={"model_id": m["model_id"], "precision": m["precision"], "variant": m["variant"],
                          "dtypes": {n: f.tensors[n].dtype for n in names}, "file": f})
