"""Loading the official Kokoro KModel (kokoro 0.9.4, torch), for comparisons only.

kokoro 0.9.4 is installed with --no-deps: `import kokoro` runs kokoro/__init__.py, which imports the
text pipeline (misaki -> spaCy, not installed). The model modules (model, modules, istftnet,
custom_stft) need only torch, transformers, loguru and huggingface_hub, so they are imported through
a stub package that points at the installed directory without running its __init__.

`zero_source_randomness` makes the harmonic source deterministic: SineGen draws a random initial
phase per harmonic and additive Gaussian noise (torch.rand / torch.randn); with both zeroed the model
computes what the ONNX export computes and what the reference computes in its "zero" noise mode.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys
import types
from pathlib import Path

TOPS = ("bert", "bert_encoder", "predictor", "text_encoder", "decoder")


class OfficialUnavailable(RuntimeError):
    pass


def import_official():
    """torch and the kokoro model modules, importable without kokoro's pipeline; a clear error if missing."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch
        import transformers

        transformers.logging.set_verbosity_error()
        if "kokoro.model" not in sys.modules:
            spec = importlib.util.find_spec("kokoro")
            if spec is None or not spec.submodule_search_locations:
                raise ImportError("no module named kokoro")
            if "kokoro" not in sys.modules or not hasattr(sys.modules["kokoro"], "__path__"):
                pkg = types.ModuleType("kokoro")
                pkg.__path__ = list(spec.submodule_search_locations)
                pkg.__version__ = "0.9.4"
                pkg.__spec__ = spec  # importlib.util.find_spec("kokoro") elsewhere in the process still works
                sys.modules["kokoro"] = pkg
            import kokoro.istftnet  # noqa: F401
            import kokoro.model  # noqa: F401
            import kokoro.modules  # noqa: F401
    except ImportError as e:
        raise OfficialUnavailable(
            f"the official Kokoro code is not importable ({e}). Install it with `pip install torch==2.13.0 "
            "transformers==4.57.3 loguru huggingface_hub && pip install --no-deps kokoro==0.9.4`") from e
    torch.set_flush_denormal(True)  # random weights produce denormals: 20x slower without this
    return torch


def config() -> dict:
    from vox.families.kokoro.convert import config as published

    return published()


def empty_kmodel():
    """A KModel with its own random initialization (no checkpoint loaded), eval mode, CPU."""
    torch = import_official()
    from kokoro.model import KModel

    km = KModel.__new__(KModel)
    # KModel.__init__ insists on loading a checkpoint; an empty dict loads nothing.
    buf = io.BytesIO()
    torch.save({}, buf)
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"vox-kokoro-empty-{os.getpid()}.pth"
    tmp.write_bytes(buf.getvalue())
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            KModel.__init__(km, repo_id="hexgrad/Kokoro-82M", config=config(), model=str(tmp))
    finally:
        tmp.unlink(missing_ok=True)
    return km.eval()


def state_dict_template() -> dict:
    """{"bert.embeddings.word_embeddings.weight": torch tensor, ...}: every KModel tensor by its .tmod name."""
    km = empty_kmodel()
    return {f"{top}.{k}": v for top in TOPS for k, v in getattr(km, top).state_dict().items()}


def load_kmodel(pth: str | os.PathLike, *, strict: bool = True):
    """The official KModel with the checkpoint `pth` ({component: state_dict}) loaded; strict by default
    (KModel's own loader falls back to strict=False silently, which would hide a missing tensor)."""
    torch = import_official()
    km = empty_kmodel()
    sd = torch.load(str(pth), map_location="cpu", weights_only=True)
    for top in TOPS:
        part = sd[top]
        if strict:
            part = {k[7:] if k.startswith("module.") else k: v for k, v in part.items()}
        getattr(km, top).load_state_dict(part, strict=strict)
    return km.eval()


def kmodel_from_state(state: dict):
    """The official KModel holding `state` ({"bert.x": array, ...}, every tensor), loaded strictly."""
    torch = import_official()
    km = empty_kmodel()
    for top in TOPS:
        part = {k[len(top) + 1:]: torch.from_numpy(v.copy()) if not isinstance(v, torch.Tensor) else v
                for k, v in state.items() if k.split(".", 1)[0] == top}
        getattr(km, top).load_state_dict(part, strict=True)
    return km.eval()


@contextlib.contextmanager
def zero_source_randomness():
    """SineGen's random initial phases and additive noise become zeros (torch.rand/randn inside
    kokoro.istftnet only), so the official output is deterministic."""
    torch = import_official()
    import kokoro.istftnet as ist

    real = ist.torch
    fake = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")})
    fake.rand = lambda *a, **k: torch.zeros(*a, **{x: y for x, y in k.items() if x in ("device", "dtype")})
    fake.randn_like = lambda x, *a, **k: torch.zeros_like(x)
    fake.rand_like = lambda x, *a, **k: torch.zeros_like(x)
    fake.randn = lambda *a, **k: torch.zeros(*a, **{x: y for x, y in k.items() if x in ("device", "dtype")})
    ist.torch = fake
    try:
        yield
    finally:
        ist.torch = real
