"""Loading and driving the official F5-TTS code (f5-tts 1.1.22, vocos 0.1.0, torch), for comparisons only.

Offline and deterministic:
  * models come from local files only: `load_model(DiT, arch, ckpt_file, vocab_file=...)` and
    `load_vocoder(is_local=True, local_path=...)` (no hub calls); a reference text is always given
    (an empty one starts a Whisper download for transcription);
  * utils_infer reads the reference audio with torchaudio.load, which needs torchcodec (a CUDA build
    on PyPI that cannot load here): utils_infer sees a torchaudio whose load() reads with soundfile
    (float32, as torchaudio returns PCM: int16 / 32768) and whose transforms are torchaudio's own;
  * `philox_noise(seed)` hands CFM.sample OUR initial noise: the k-th torch.randn(duration, 100)
    inside f5_tts.model.cfm returns vox.reference.f5.noise.initial_noise(seed, k, duration), and
    infer_batch_process runs its pieces one after the other (its ThreadPoolExecutor is replaced by a
    serial one), so the k-th draw is piece k's. Both sides then integrate the same x0.
"""

from __future__ import annotations

import contextlib
import io
import os
import types
import warnings
from pathlib import Path

import numpy as np


class OfficialUnavailable(RuntimeError):
    pass


_U = None


def import_official():
    """torch, with f5_tts.infer.utils_infer imported and patched as described above."""
    global _U
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import soundfile as sf
        import torch
        import torchaudio

        with contextlib.redirect_stdout(io.StringIO()):
            import f5_tts.infer.utils_infer as U
            import f5_tts.model.cfm  # noqa: F401
    except ImportError as e:
        raise OfficialUnavailable(f"the official F5-TTS code is not importable ({e}); install torch==2.13.0 "
                                  "and f5-tts==1.1.22 vocos==0.1.0") from e
    if _U is None:
        def load(path, *a, **k):
            x, sr = sf.read(str(path), dtype="float32", always_2d=True)
            return torch.from_numpy(x.T.copy()), sr

        U.torchaudio = types.SimpleNamespace(load=load, transforms=torchaudio.transforms)
        _U = U
    torch.set_flush_denormal(True)
    return torch


def utils_infer():
    import_official()
    return _U


def load_cfm(arch: dict, ckpt: str | os.PathLike, vocab: str | os.PathLike, *, use_ema: bool = True):
    """The official CFM (DiT backbone) as infer_cli builds it: load_model(DiT, arch, ckpt, vocos mel)."""
    import_official()
    from f5_tts.model import DiT

    with contextlib.redirect_stdout(io.StringIO()):
        m = _U.load_model(DiT, dict(arch), str(ckpt), mel_spec_type="vocos", vocab_file=str(vocab), device="cpu",
                          use_ema=use_ema)
    return m.eval()


def load_vocoder(vocos_dir: str | os.PathLike):
    import_official()
    with contextlib.redirect_stdout(io.StringIO()):
        return _U.load_vocoder(vocoder_name="vocos", is_local=True, local_path=str(vocos_dir), device="cpu")


def load_fixture(fx, *, pt: bool = False):
    """(CFM, Vocos) of a fixtures.f5_tiny.Fixture, from its .safetensors (or its .pt)."""
    return load_cfm(fx.arch, fx.pt if pt else fx.safetensors, fx.vocab), load_vocoder(fx.vocos)


class _SerialExecutor:
    """concurrent.futures.ThreadPoolExecutor's interface, running each task at submit time."""

    def __init__(self, *a, **k):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, fn, *args, **kwargs):
        from concurrent.futures import Future

        f = Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - delivered through the future, as the pool does
            f.set_exception(e)
        return f


@contextlib.contextmanager
def philox_noise(seed: int, draws: list | None = None):
    """Inside: CFM.sample's k-th torch.randn(duration, channels) is piece k's Philox noise, and
    infer_batch_process is serial. `draws` (a list) receives (piece, duration) for each draw."""
    torch = import_official()
    import f5_tts.model.cfm as cfm_mod

    from vox.reference.f5.noise import initial_noise

    real = cfm_mod.torch
    count = [0]

    def randn(*shape, device=None, dtype=None, **kw):
        dims = [int(s) for s in (shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)]
        if len(dims) != 2:
            raise AssertionError(f"unexpected randn shape {dims} in CFM.sample")
        piece = count[0]
        count[0] += 1
        if draws is not None:
            draws.append((piece, dims[0]))
        x = torch.from_numpy(initial_noise(seed, piece, dims[0], dims[1]))
        return x.to(dtype=dtype or torch.float32)

    fake = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")})
    fake.randn = randn
    pool = _U.ThreadPoolExecutor
    cfm_mod.torch = fake
    _U.ThreadPoolExecutor = _SerialExecutor
    try:
        yield
    finally:
        cfm_mod.torch = real
        _U.ThreadPoolExecutor = pool


def quiet():
    """A context that swallows the official code's prints (and tqdm bars on stderr)."""
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    return stack


def preprocess_ref(path: str | os.PathLike, ref_text: str) -> tuple[Path, str]:
    """The official preprocess_ref_audio_text (pydub silence clipping and trimming, 50 ms pad) on a file;
    returns the processed temporary WAV and the fixed-up reference text."""
    import_official()
    if not ref_text.strip():
        raise ValueError("an empty reference text would start an ASR download; give the transcript")
    _U._ref_audio_cache.clear()
    with quiet():
        p, t = _U.preprocess_ref_audio_text(str(path), ref_text, show_info=lambda *a, **k: None)
    return Path(p), t


def infer(ref_wav: str | os.PathLike, ref_text: str, gen_text: str, cfm, vocoder, *, seed: int, **kw):
    """The official infer_process on an already preprocessed reference, with piece k's initial noise
    drawn from Philox (seed, k). Returns (wave float32, sample rate, combined mel [100, frames], draws)."""
    import_official()
    draws: list = []
    with philox_noise(seed, draws), quiet():
        wave, sr, spec = _U.infer_process(str(ref_wav), ref_text, gen_text, cfm, vocoder, mel_spec_type="vocos",
                                          show_info=lambda *a, **k: None, progress=None, device="cpu", **kw)
    return wave, sr, spec, draws


def official_arch(dit) -> dict:
    """The keyword arguments of the official DiT (model_cfg of load_model) for a reference DiTConfig."""
    return dict(dim=dit.dim, depth=dit.depth, heads=dit.heads, dim_head=dit.dim_head, ff_mult=dit.ff_mult,
                text_dim=dit.text_dim, conv_layers=dit.conv_layers, text_mask_padding=dit.text_mask_padding,
                pe_attn_head=dit.pe_attn_head, qk_norm=None, attn_backend="torch", attn_mask_enabled=False)


def load_from_model(model, directory: str | os.PathLike):
    """(CFM, Vocos) of the official code holding a reference F5Model's weights (a .tmod read back:
    reduced-precision weights as stored, widened to float32). The weights are written in the released
    files' formats into `directory` (an EMA .safetensors, vocab.txt, a Vocos config.yaml and
    pytorch_model.bin) and read by the official loaders, as a downloaded checkpoint would be."""
    torch = import_official()
    import yaml
    from safetensors.torch import save_file
    from vocos import Vocos

    d = Path(directory)
    (d / "vocos").mkdir(parents=True, exist_ok=True)
    w = model.weights
    with warnings.catch_warnings():  # the .tmod's mapped arrays are read-only; save_file only reads them
        warnings.filterwarnings("ignore", "The given NumPy array is not writable")
        save_file({"ema_model." + k: torch.from_numpy(np.ascontiguousarray(v, np.float32))
                   for k, v in w.items() if k.startswith("transformer.")}, str(d / "model.safetensors"))
    # get_tokenizer("custom") maps line i, its last character dropped, to id i
    (d / "vocab.txt").write_text("".join(s + "\n" for s in model.text.vocab), encoding="utf-8")
    v, mel = model.config.vocos, model.config.mel
    cfg = {"feature_extractor": {"class_path": "vocos.feature_extractors.MelSpectrogramFeatures",
                                 "init_args": {"sample_rate": mel.sample_rate, "n_fft": v.n_fft,
                                               "hop_length": v.hop_length, "n_mels": v.input_channels,
                                               "padding": "center"}},
           "backbone": {"class_path": "vocos.models.VocosBackbone",
                        "init_args": {"input_channels": v.input_channels, "dim": v.dim,
                                      "intermediate_dim": v.intermediate_dim, "num_layers": v.num_layers}},
           "head": {"class_path": "vocos.heads.ISTFTHead",
                    "init_args": {"dim": v.dim, "n_fft": v.n_fft, "hop_length": v.hop_length, "padding": v.padding}}}
    with open(d / "vocos" / "config.yaml", "w") as f:
        yaml.safe_dump(cfg, f, sort_keys=False)
    # the feature extractor's and the ISTFT's fixed buffers are not model weights: a fresh Vocos's
    sd = Vocos.from_hparams(str(d / "vocos" / "config.yaml")).state_dict()
    for k, a in w.items():
        if k.startswith("vocos."):
            sd[k[len("vocos."):]] = torch.from_numpy(np.array(a, np.float32))
    torch.save(sd, d / "vocos" / "pytorch_model.bin")
    return (load_cfm(official_arch(model.config.dit), d / "model.safetensors", d / "vocab.txt"),
            load_vocoder(d / "vocos"))
