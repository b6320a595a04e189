"""The Qwen3-TTS parts of a .tmod: the manifest keys only this family has, the tokenizer files it
stores, and the file read back as a reference Checkpoint (dequantized on access)."""

from __future__ import annotations

import os
from typing import Iterator, Mapping

import numpy as np

from ...errors import FormatError
from ...formats import tmod

VARIANTS = ("base", "custom_voice", "voice_design")
# The tokenizer files of a Qwen3 model: manifest role -> (file name in the checkpoint, tensor name).
TOKENIZER_FILES = {
    "vocab": ("vocab.json", "tokenizer.vocab.json"),
    "merges": ("merges.txt", "tokenizer.merges.txt"),
    "config": ("tokenizer_config.json", "tokenizer.tokenizer_config.json"),
}


def check_manifest(path: str, m: dict, by_name: Mapping[str, tmod.TensorEntry]) -> None:
    variant = m["variant"]
    if variant not in VARIANTS:
        raise FormatError(f"{path}: manifest: unknown qwen3_tts variant {variant!r} ({', '.join(VARIANTS)})")
    tmod.member(path, m, "speech_tokenizer_config", dict)
    tmod.member(path, m, "generation", dict)
    for table in ("speakers", "languages"):
        for k, v in tmod.member(path, m, table, dict).items():
            if not tmod.uint(v):
                raise FormatError(f'{path}: manifest: "{table}" entry {k!r} must be a non-negative integer id')
    tok = tmod.member(path, m, "tokenizer", dict)
    tmod.member(path, tok, "type", str, "tokenizer: ")
    for role in TOKENIZER_FILES:
        ref = tmod.member(path, tok, role, str, "tokenizer: ")
        e = by_name.get(ref)
        if e is None or e.dtype != "u8" or len(e.shape) != 1:
            raise FormatError(f"{path}: manifest: tokenizer {role} names {ref!r}, which is not a 1-D u8 tensor")


def tokenizer_files(f: tmod.TmodFile) -> dict[str, bytes]:
    """The tokenizer files stored in the model: {"vocab.json": bytes, ...}."""
    tok = f.manifest["tokenizer"]
    return {fname: f.raw(tok[role]).tobytes() for role, (fname, _) in TOKENIZER_FILES.items()}


class _DequantizedTensors(Mapping[str, np.ndarray]):
    def __init__(self, f: tmod.TmodFile, names: list[str]):
        self._f, self._names = f, names
        self._set = set(names)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._set:
            raise KeyError(name)
        return self._f.array(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def read_checkpoint(path: str | os.PathLike):
    """A .tmod as a reference Checkpoint (float32 on access; q8/q4 dequantized, bf16/f16 widened).

    `extra` carries the manifest's model_id, precision and each tensor's stored dtype.
    """
    from vox.reference.common.checkpoint import Checkpoint

    f = tmod.TmodFile(path)
    m = f.manifest
    tok_tensors = {m["tokenizer"][role] for role in TOKENIZER_FILES}
    names = [n for n in f.tensors if n not in tok_tensors]
    return Checkpoint(
        config=m["config"],
        speech_tokenizer_config=m["speech_tokenizer_config"],
        generation_config=m["generation"],
        tokenizer_files=tokenizer_files(f),
        tensors=_DequantizedTensors(f, names),
        source=f.path,
        extra={"model_id": m["model_id"], "precision": m["precision"], "variant": m["variant"],
               "pre_tokenizer": m["tokenizer"].get("pre_tokenizer"),
               "dtypes": {n: f.tensors[n].dtype for n in names}, "file": f},
    )
