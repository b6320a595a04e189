"""A model checkpoint as the reference sees it: configs, tokenizer files and named float tensors.

Tensor names are the official PyTorch state-dict names. The speech tokenizer (codec) lives in its
own safetensors file in the official layout; here its tensors carry the prefix "speech_tokenizer."
so one namespace holds the whole model. The same object can be built from an official Hugging Face
directory (Checkpoint.from_hf_dir) or from a .tmod (vox.formats.tmod.read_checkpoint), which is
how `vox verify` runs the reference on converted and quantized weights.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import numpy as np

from . import safetensors

SPEECH_TOKENIZER_PREFIX = "speech_tokenizer."
TOKENIZER_FILES = ("vocab.json", "merges.txt", "tokenizer_config.json")


class _Union(Mapping[str, np.ndarray]):
    """Several tensor mappings seen as one, each under a name prefix."""

    def __init__(self, parts: list[tuple[str, Mapping[str, np.ndarray]]]):
        self._parts = parts

    def __getitem__(self, name: str) -> np.ndarray:
        for prefix, m in self._parts:
            if name.startswith(prefix) and name[len(prefix):] in m:
                return m[name[len(prefix):]]
        raise KeyError(name)

    def __iter__(self):
        for prefix, m in self._parts:
            for k in m:
                yield prefix + k

    def __len__(self) -> int:
        return sum(len(m) for _, m in self._parts)


@dataclass
class Checkpoint:
    config: dict                       # config.json (Qwen3TTSConfig)
    speech_tokenizer_config: dict      # speech_tokenizer/config.json
    generation_config: dict            # generation_config.json
    tokenizer_files: dict[str, bytes]  # vocab.json, merges.txt, tokenizer_config.json
    tensors: Mapping[str, np.ndarray]  # official names, float32 on access (or the stored int dtype)
    source: str = ""
    extra: dict = field(default_factory=dict)

    def get(self, name: str, dtype=np.float32) -> np.ndarray:
        """Tensor `name` as an array of `dtype` (float32 by default)."""
        try:
            t = self.tensors[name]
        except KeyError:
            raise KeyError(f"{self.source or 'checkpoint'}: no tensor named {name!r}") from None
        return np.asarray(t, dtype=dtype)

    def has(self, name: str) -> bool:
        try:
            self.tensors[name]
            return True
        except KeyError:
            return False

    def names(self, prefix: str = "") -> list[str]:
        return [n for n in self.tensors if n.startswith(prefix)]

    @classmethod
    def from_hf_dir(cls, path: str | Path) -> "Checkpoint":
        """Read an official Qwen3-TTS checkpoint directory (Hugging Face layout)."""
        p = Path(path)
        need = ["config.json", "model.safetensors", "speech_tokenizer/config.json",
                "speech_tokenizer/model.safetensors", *TOKENIZER_FILES]
        missing = [n for n in need if not (p / n).is_file()]
        if missing:
            raise FileNotFoundError(f"{p}: not a Qwen3-TTS checkpoint directory, missing {', '.join(missing)}")
        gen = json.loads((p / "generation_config.json").read_text()) if (p / "generation_config.json").is_file() else {}
        return cls(
            config=json.loads((p / "config.json").read_text()),
            speech_tokenizer_config=json.loads((p / "speech_tokenizer" / "config.json").read_text()),
            generation_config=gen,
            tokenizer_files={n: (p / n).read_bytes() for n in TOKENIZER_FILES},
            tensors=_Union([("", safetensors.load(p / "model.safetensors")),
                            (SPEECH_TOKENIZER_PREFIX, safetensors.load(p / "speech_tokenizer" / "model.safetensors"))]),
            source=str(p),
        )
