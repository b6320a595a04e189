"""Loading the official qwen-tts 0.1.1 model (torch), for comparisons only.

torch and qwen-tts are optional: only `vox verify` and the conformance suite need them. Install
torch first, pinned (`pip install torch==2.13.0`), then `pip install qwen-tts==0.1.1`.
qwen-tts pulls a CUDA build of torchaudio whose native libraries fail to load on a CPU-only torch;
scripts/install-official.sh moves them aside (the pure-Python parts qwen-tts uses keep working).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path


class OfficialUnavailable(RuntimeError):
    pass


def import_official():
    """Import torch and qwen_tts with the settings comparisons need; a clear error if missing."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import contextlib
        import io

        import torch

        with contextlib.redirect_stdout(io.StringIO()):  # qwen_tts prints a flash-attn banner on import
            import qwen_tts  # noqa: F401
        import transformers

        transformers.logging.set_verbosity_error()  # "Setting pad_token_id ..." on every generate
    except ImportError as e:
        raise OfficialUnavailable(
            f"the official Qwen3-TTS code is not importable ({e}). Install it with "
            "`pip install torch==2.13.0 && pip install qwen-tts==0.1.1` (see scripts/install-official.sh)") from e
    # Random weights produce denormals; without flushing them torch runs up to 20x slower.
    torch.set_flush_denormal(True)
    return torch


@functools.lru_cache(maxsize=8)
def load(model_dir: str | Path):
    """Qwen3TTSModel (the official inference wrapper) for a checkpoint directory, float32, eager CPU."""
    torch = import_official()
    from qwen_tts import Qwen3TTSModel

    return Qwen3TTSModel.from_pretrained(str(model_dir), dtype=torch.float32, attn_implementation="sdpa")
