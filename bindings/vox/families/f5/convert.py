"""Official F5-TTS checkpoint + vocab.txt + Vocos directory -> .tmod (family "f5_tts").

    from vox.families.f5 import convert as f5
    f5.convert("F5TTS_v1_Base/model_1250000.safetensors", "F5TTS_v1_Base/vocab.txt", "vocos-mel-24khz/",
               "f5.tmod", dtype="bf16", quant="q8")

Checkpoint: .safetensors (released inference checkpoints) or .pt (training checkpoints). The weights
are the ones f5_tts.infer.utils_infer.load_checkpoint loads with use_ema=True (the default of every
official entry point): a .safetensors file is the EMA state; a .pt file's "ema_model_state_dict";
every key loses its "ema_model." part, "initted" and "step" are dropped, and so are the mel buffers of
older checkpoints (mel_spec.mel_stft.mel_scale.fb, mel_spec.mel_stft.spectrogram.window). With
use_ema=False: the .safetensors keys as they are, or the .pt's "model_state_dict". The .pt is read
without torch (vox.formats.torch_pickle: a restricted unpickler).

Variant: v0 (F5TTS_Base and its fine-tunes: text_mask_padding=False, pe_attn_head=1) or v1
(F5TTS_v1_Base: text_mask_padding=True, RoPE on every head). The weights do not tell them apart;
variant=None guesses from the checkpoint path (a path naming F5TTS_Base or F5TTS_Small is v0, any
other v1); text_mask_padding / pe_attn_head override single values. The other architecture values
(dim, depth, heads, head size, FF width, text width, ConvNeXt layers, vocabulary) come from the
tensor shapes; heads from the rotary buffer (dim_head = 2 len(inv_freq)).

Vocos: config.yaml (feature extractor, VocosBackbone, ISTFTHead with its padding) and
pytorch_model.bin, tensors stored under "vocos." (buffers dropped: windows and filterbanks are
recomputed). Text frontend: the vocabulary (CRLF-safe) and the segmentation / pinyin data of
vox.families.f5.sources, as tokenizer.* u8 tensors (docs/formats.md, "F5-TTS").

dtype (f32 | f16 | bf16) applies to the DiT's matrices, convolutions and text embedding; quant q8
stores the DiT's Linear weights (last axis a multiple of 32) as q8 instead; 1-D tensors (biases,
norms, GRN, the rotary buffer) stay f32; the Vocos tensors get vocoder_dtype (default f32).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Mapping

import numpy as np

from ... import __version__
from ...convert.common import ConvertResult, Progress, SafetensorsSource, model_id, sha256_file
from ...errors import FormatError
from ...formats import tmod
from . import sources as f5_sources
from .checkpoint import TOKENIZER_BLOBS
from .checkpoint import VARIANTS as VARIANTS

DTYPES = ("f32", "f16", "bf16")
QUANTS = ("none", "q8")
_DROP = ("mel_spec.mel_stft.mel_scale.fb", "mel_spec.mel_stft.spectrogram.window")
_V0_PATH = re.compile(r"F5TTS_(Base|Small)(?![A-Za-z0-9])")
_BLOCK = re.compile(r"transformer\.transformer_blocks\.(\d+)\.")
_TEXT_BLOCK = re.compile(r"transformer\.text_embed\.text_blocks\.(\d+)\.")
_VOCOS_KEEP = re.compile(r"(backbone|head\.out)\..*")


def guess_variant(path: str | os.PathLike) -> str:
    """v0 for a path naming F5TTS_Base / F5TTS_Small (the v0 releases and their fine-tunes), else v1."""
    return "v0" if _V0_PATH.search(str(Path(path).as_posix())) else "v1"


# ------------------------------------------------------------------------------------- checkpoint
def _ema_state(state: object, what: str, use_ema: bool, pt: bool) -> dict[str, np.ndarray]:
    """load_checkpoint's choice of weights, names as CFM.state_dict() has them."""
    if pt:
        if not isinstance(state, dict):
            raise FormatError(f"{what}: not an F5-TTS training checkpoint (a {type(state).__name__}, not a dict)")
        key = "ema_model_state_dict" if use_ema else "model_state_dict"
        if key not in state:
            raise FormatError(f"{what}: no {key!r} (it has {', '.join(map(str, state))})")
        state = state[key]
        if not isinstance(state, dict):
            raise FormatError(f"{what}: {key} is not a state dict")
    if not isinstance(state, Mapping):
        raise FormatError(f"{what}: not a state dict (a {type(state).__name__})")
    if not use_ema:
        return dict(state)
    out = {k.replace("ema_model.", ""): v for k, v in state.items() if k not in ("initted", "step")}
    for k in _DROP:
        out.pop(k, None)
    return out


def read_weights(ckpt: str | os.PathLike, *, use_ema: bool = True) -> dict[str, np.ndarray]:
    """The CFM state ("transformer.*") of an official checkpoint as float32 numpy arrays."""
    from ...formats.torch_pickle import read_torch_file
    from vox.reference.common.safetensors import bf16_to_f32

    p = Path(ckpt)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such checkpoint file")
    if p.suffix == ".safetensors":
        src = SafetensorsSource(p)
        try:
            raw = {}
            for name in src.entries:
                v = src.view(name)
                kind = src.kind(name)
                raw[name] = bf16_to_f32(v) if kind == "bf16" else np.array(v, dtype=np.float32) if kind == "float" \
                    else np.array(v)
        finally:
            src.close()
        state = _ema_state(raw, str(p), use_ema, pt=False)
    elif p.suffix in (".pt", ".pth", ".ckpt"):
        state = _ema_state(read_torch_file(p), str(p), use_ema, pt=True)
    else:
        raise FormatError(f"{p}: an F5-TTS checkpoint is a .safetensors or .pt file")
    out = {}
    for k, v in state.items():
        a = np.asarray(v)
        if not k.startswith("transformer."):
            raise FormatError(f"{p}: unexpected tensor {k!r} (an F5-TTS CFM holds transformer.* only)")
        if a.dtype.kind != "f":
            raise FormatError(f"{p}: tensor {k!r} is {a.dtype}, not floating point")
        out[k] = np.ascontiguousarray(a, dtype=np.float32)
    if "transformer.proj_out.weight" not in out:
        raise FormatError(f"{p}: not an F5-TTS DiT checkpoint (no transformer.proj_out.weight)")
    return out


def dit_config(w: Mapping[str, np.ndarray], variant: str, *, text_mask_padding: bool | None = None,
               pe_attn_head: int | None | str = "variant", what: str = "checkpoint"):
    """The DiTConfig the tensor shapes and the variant give."""
    from vox.reference.f5.config import DiTConfig, variant_flags

    for bad, why in (("transformer.long_skip_connection.weight", "long_skip_connection"),
                     ("transformer.transformer_blocks.0.attn.q_norm.weight", "qk_norm")):
        if bad in w:
            raise FormatError(f"{what}: uses {why}, which vox's F5-TTS does not implement")
    try:
        dim = w["transformer.proj_out.weight"].shape[1]
        mel_dim = w["transformer.proj_out.weight"].shape[0]
        emb = w["transformer.text_embed.text_embed.weight"]
        inv = w["transformer.rotary_embed.inv_freq"]
        inner = w["transformer.transformer_blocks.0.attn.to_q.weight"].shape[0]
        ff = w["transformer.transformer_blocks.0.ff.ff.0.0.weight"].shape[0]
    except KeyError as e:
        raise FormatError(f"{what}: not an F5-TTS DiT (missing {e.args[0]})") from None
    dim_head = 2 * inv.shape[0]
    depth = 1 + max((int(m.group(1)) for k in w if (m := _BLOCK.match(k))), default=-1)
    conv = 1 + max((int(m.group(1)) for k in w if (m := _TEXT_BLOCK.match(k))), default=-1)
    if inner % dim_head or ff % dim or depth < 1:
        raise FormatError(f"{what}: inconsistent DiT shapes (inner {inner}, head {dim_head}, ff {ff}, dim {dim})")
    flags = variant_flags(variant)
    if text_mask_padding is not None:
        flags["text_mask_padding"] = bool(text_mask_padding)
    if pe_attn_head != "variant":
        flags["pe_attn_head"] = pe_attn_head
    try:
        return DiTConfig(dim=dim, depth=depth, heads=inner // dim_head, dim_head=dim_head, ff_mult=ff // dim,
                         text_dim=emb.shape[1], text_num_embeds=emb.shape[0] - 1, mel_dim=mel_dim, conv_layers=conv,
                         **flags)
    except ValueError as e:
        raise FormatError(f"{what}: {e}") from None


def _dit_layout(cfg) -> dict[str, tuple[int, ...]]:
    """Every tensor the official DiT of `cfg` has, with its shape (the converter's completeness check)."""
    d, t, m = cfg.dim, cfg.text_dim, cfg.mel_dim
    inner = cfg.heads * cfg.dim_head
    L = {"transformer.time_embed.time_mlp.0.weight": (d, 256), "transformer.time_embed.time_mlp.0.bias": (d,),
         "transformer.time_embed.time_mlp.2.weight": (d, d), "transformer.time_embed.time_mlp.2.bias": (d,),
         "transformer.text_embed.text_embed.weight": (cfg.text_num_embeds + 1, t),
         "transformer.input_embed.proj.weight": (d, 2 * m + t), "transformer.input_embed.proj.bias": (d,),
         "transformer.rotary_embed.inv_freq": (cfg.dim_head // 2,),
         "transformer.norm_out.linear.weight": (2 * d, d), "transformer.norm_out.linear.bias": (2 * d,),
         "transformer.proj_out.weight": (m, d), "transformer.proj_out.bias": (m,)}
    for j in (0, 2):
        L[f"transformer.input_embed.conv_pos_embed.conv1d.{j}.weight"] = (d, d // 16, 31)
        L[f"transformer.input_embed.conv_pos_embed.conv1d.{j}.bias"] = (d,)
    for i in range(cfg.conv_layers):
        b = f"transformer.text_embed.text_blocks.{i}."
        L.update({b + "dwconv.weight": (t, 1, 7), b + "dwconv.bias": (t,), b + "norm.weight": (t,), b + "norm.bias": (t,),
                  b + "pwconv1.weight": (2 * t, t), b + "pwconv1.bias": (2 * t,), b + "grn.gamma": (1, 1, 2 * t),
                  b + "grn.beta": (1, 1, 2 * t), b + "pwconv2.weight": (t, 2 * t), b + "pwconv2.bias": (t,)})
    f = cfg.ff_mult * d
    for i in range(cfg.depth):
        b = f"transformer.transformer_blocks.{i}."
        L.update({b + "attn_norm.linear.weight": (6 * d, d), b + "attn_norm.linear.bias": (6 * d,),
                  b + "ff.ff.0.0.weight": (f, d), b + "ff.ff.0.0.bias": (f,), b + "ff.ff.2.weight": (d, f),
                  b + "ff.ff.2.bias": (d,), b + "attn.to_out.0.weight": (d, inner), b + "attn.to_out.0.bias": (d,)})
        for x in "qkv":
            L[b + f"attn.to_{x}.weight"] = (inner, d)
            L[b + f"attn.to_{x}.bias"] = (inner,)
    return L


def _check_layout(w: Mapping[str, np.ndarray], layout: dict[str, tuple[int, ...]], what: str) -> None:
    for k, shape in layout.items():
        if k not in w:
            raise FormatError(f"{what}: missing tensor {k!r}")
        if tuple(w[k].shape) != shape:
            raise FormatError(f"{what}: {k} has shape {list(w[k].shape)}, the architecture needs {list(shape)}")
    extra = sorted(set(w) - set(layout))
    if extra:
        raise FormatError(f"{what}: unexpected tensor {extra[0]!r}" + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""))


# ------------------------------------------------------------------------------------- vocos
def _yaml(path: Path) -> dict:
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with every F5-TTS / Vocos installation
        raise FormatError(f"{path}: reading the Vocos config.yaml needs PyYAML (pip install pyyaml)") from None
    try:
        d = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise FormatError(f"{path}: not a readable config.yaml ({e})") from None
    if not isinstance(d, dict):
        raise FormatError(f"{path}: not a Vocos config (a YAML mapping)")
    return d


def read_vocos(vocos_dir: str | os.PathLike, mel):
    """(VocosConfig, {"vocos.<name>": float32 array}) of a Vocos directory (config.yaml, pytorch_model.bin),
    checked against the mel features the DiT produces."""
    from ...formats.torch_pickle import read_torch_file
    from vox.reference.f5.config import VocosConfig
    from vox.reference.f5.vocos import PADDINGS

    d = Path(vocos_dir)
    cfg_path, bin_path = d / "config.yaml", d / "pytorch_model.bin"
    for f in (cfg_path, bin_path):
        if not f.is_file():
            raise FileNotFoundError(f"{d}: not a Vocos directory (no {f.name})")
    y = _yaml(cfg_path)

    def part(name: str, cls: str) -> dict:
        p = y.get(name)
        if not isinstance(p, dict) or not str(p.get("class_path", "")).endswith(cls):
            raise FormatError(f"{cfg_path}: {name} must be {cls} (vox runs the mel-spectrogram Vocos), "
                              f"found {p.get('class_path') if isinstance(p, dict) else p!r}")
        return p.get("init_args") or {}

    fe = part("feature_extractor", "MelSpectrogramFeatures")
    bb = part("backbone", "VocosBackbone")
    hd = part("head", "ISTFTHead")
    if bb.get("adanorm_num_embeddings"):
        raise FormatError(f"{cfg_path}: a backbone with AdaLayerNorm (adanorm_num_embeddings) is not supported")
    padding = hd.get("padding", "same")  # ISTFTHead's default
    if padding not in PADDINGS:
        raise FormatError(f"{cfg_path}: head padding {padding!r} is not one of {', '.join(PADDINGS)}")
    try:
        cfg = VocosConfig(input_channels=int(bb["input_channels"]), dim=int(bb["dim"]),
                          intermediate_dim=int(bb["intermediate_dim"]), num_layers=int(bb["num_layers"]),
                          n_fft=int(hd["n_fft"]), hop_length=int(hd["hop_length"]), padding=padding)
    except (KeyError, TypeError, ValueError) as e:
        raise FormatError(f"{cfg_path}: incomplete Vocos config ({e})") from None
    mismatch = [(k, a, b) for k, a, b in (("n_mels", fe.get("n_mels", 100), mel.n_mels),
                                          ("sample_rate", fe.get("sample_rate", 24000), mel.sample_rate),
                                          ("hop_length", cfg.hop_length, mel.hop_length),
                                          ("input_channels", cfg.input_channels, mel.n_mels)) if a != b]
    if mismatch:
        k, a, b = mismatch[0]
        raise FormatError(f"{cfg_path}: {k} {a} does not match the F5-TTS mel features ({b})")
    sd = read_torch_file(bin_path)
    if not isinstance(sd, dict):
        raise FormatError(f"{bin_path}: not a state dict")
    w = {}
    for k, v in sd.items():
        if _VOCOS_KEEP.fullmatch(k):
            w["vocos." + k] = np.ascontiguousarray(v, dtype=np.float32)
        elif not (k.startswith("feature_extractor.") or k == "head.istft.window"):
            raise FormatError(f"{bin_path}: unexpected tensor {k!r}")
    layout = {"vocos.backbone.embed.weight": (cfg.dim, cfg.input_channels, 7), "vocos.backbone.embed.bias": (cfg.dim,),
              "vocos.backbone.norm.weight": (cfg.dim,), "vocos.backbone.norm.bias": (cfg.dim,),
              "vocos.backbone.final_layer_norm.weight": (cfg.dim,), "vocos.backbone.final_layer_norm.bias": (cfg.dim,),
              "vocos.head.out.weight": (cfg.n_fft + 2, cfg.dim), "vocos.head.out.bias": (cfg.n_fft + 2,)}
    for i in range(cfg.num_layers):
        b = f"vocos.backbone.convnext.{i}."
        layout.update({b + "dwconv.weight": (cfg.dim, 1, 7), b + "dwconv.bias": (cfg.dim,), b + "norm.weight": (cfg.dim,),
                       b + "norm.bias": (cfg.dim,), b + "pwconv1.weight": (cfg.intermediate_dim, cfg.dim),
                       b + "pwconv1.bias": (cfg.intermediate_dim,), b + "pwconv2.weight": (cfg.dim, cfg.intermediate_dim),
                       b + "pwconv2.bias": (cfg.dim,)})
        if b + "gamma" in w:
            layout[b + "gamma"] = (cfg.dim,)
    _check_layout(w, layout, str(bin_path))
    return cfg, w


# ------------------------------------------------------------------------------------- model
def read_checkpoint(ckpt: str | os.PathLike, vocab: str | os.PathLike, vocos_dir: str | os.PathLike, *,
                    variant: str | None = None, text_mask_padding: bool | None = None,
                    pe_attn_head: int | None | str = "variant", use_ema: bool = True, text_data=None,
                    frontend_dir: str | os.PathLike | None = None):
    """The official files as the reference's F5Model (float32 weights), the way convert() reads them."""
    from vox.reference.f5.config import F5Config, InferDefaults, MelConfig
    from vox.reference.f5.pipeline import F5Model

    variant = variant or guess_variant(ckpt)
    if variant not in VARIANTS:
        raise ValueError(f"unknown F5-TTS variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    w = read_weights(ckpt, use_ema=use_ema)
    dit = dit_config(w, variant, text_mask_padding=text_mask_padding, pe_attn_head=pe_attn_head, what=str(ckpt))
    _check_layout(w, _dit_layout(dit), str(ckpt))
    mel = MelConfig()
    if dit.mel_dim != mel.n_mels:
        raise FormatError(f"{ckpt}: the DiT predicts {dit.mel_dim} mel bands; F5-TTS's vocos features have {mel.n_mels}")
    vcfg, vw = read_vocos(vocos_dir, mel)
    vocab_bytes = Path(vocab).read_bytes()
    if text_data is None:
        text_data = f5_sources.text_data(vocab_bytes, directory=frontend_dir)
    if len(text_data.vocab) != dit.text_num_embeds:
        raise FormatError(f"{vocab}: {len(text_data.vocab)} symbols, but the checkpoint's text embedding has "
                          f"{dit.text_num_embeds} (+1 filler) rows: not this model's vocabulary")
    cfg = F5Config(variant=variant, dit=dit, mel=mel, vocos=vcfg, infer=InferDefaults())
    return F5Model(cfg, {**w, **vw}, text_data, source=str(ckpt))


def tensor_dtype(name: str, shape: tuple[int, ...], dtype: str, quant: str, vocoder_dtype: str) -> str:
    """The stored dtype of a weight (docs/formats.md, F5-TTS)."""
    if len(shape) <= 1 or sum(s > 1 for s in shape) < 2:
        return "f32"  # biases, norms, GRN gamma/beta [1, 1, d], the rotary buffer
    if name.startswith("vocos."):
        return vocoder_dtype
    if (quant == "q8" and len(shape) == 2 and name.endswith(".weight") and shape[-1] % 32 == 0
            and name != "transformer.text_embed.text_embed.weight"):
        return "q8"
    return dtype


def _source_files(ckpt: Path, vocab: Path, vocos_dir: Path, progress) -> dict[str, str]:
    files = {ckpt.name: sha256_file(ckpt, progress), "vocab.txt": sha256_file(vocab),
             "vocos/config.yaml": sha256_file(vocos_dir / "config.yaml"),
             "vocos/pytorch_model.bin": sha256_file(vocos_dir / "pytorch_model.bin", progress)}
    return files


def convert(ckpt: str | os.PathLike, vocab: str | os.PathLike, vocos_dir: str | os.PathLike, out: str | os.PathLike,
            *, dtype: str = "f32", quant: str = "none", vocoder_dtype: str = "f32", variant: str | None = None,
            text_mask_padding: bool | None = None, pe_attn_head: int | None | str = "variant", use_ema: bool = True,
            frontend_dir: str | os.PathLike | None = None, jieba_source: str | os.PathLike | None = None,
            pypinyin_source: str | os.PathLike | None = None, text_data=None, overwrite: bool = True,
            progress: Progress | None = None) -> ConvertResult:
    """Write the .tmod `out` from an official F5-TTS checkpoint (see the module docstring). The frontend's
    pinned sources are taken from jieba_source / pypinyin_source, else from frontend_dir / $VOX_WHEELS /
    the cache, downloaded there when missing (text_data: an already parsed TextData of these sources and
    this vocabulary, to skip the parsing). Nothing is written unless everything checks out."""
    from vox.reference.f5.tokenizer import parse_vocab

    for what, v, allowed in (("dtype", dtype, DTYPES), ("quant", quant, QUANTS), ("vocoder dtype", vocoder_dtype, DTYPES)):
        if v not in allowed:
            raise ValueError(f"unknown {what} {v!r}; choose one of {', '.join(allowed)}")
    t0 = time.monotonic()
    ckpt, vocab, vocos_dir, out = Path(ckpt), Path(vocab), Path(vocos_dir), Path(out)
    if not vocab.is_file():
        raise FileNotFoundError(f"{vocab}: no such vocabulary file")
    vocab_bytes = vocab.read_bytes()
    jieba = jieba_source or f5_sources.fetch("jieba", directory=frontend_dir, progress=progress)
    pinyin = pypinyin_source or f5_sources.fetch("pypinyin", directory=frontend_dir, progress=progress)
    text = text_data or f5_sources.text_data(vocab_bytes, jieba=jieba, pypinyin=pinyin)
    if text.vocab != parse_vocab(vocab_bytes):
        raise ValueError("text_data was built for another vocabulary")
    model = read_checkpoint(ckpt, vocab, vocos_dir, variant=variant, text_mask_padding=text_mask_padding,
                            pe_attn_head=pe_attn_head, use_ema=use_ema, text_data=text)
    files = _source_files(ckpt, vocab, vocos_dir, progress)
    files[Path(jieba).name] = sha256_file(Path(jieba))
    files[Path(pinyin).name] = sha256_file(Path(pinyin))
    blobs = text.blobs()
    tensors: dict[str, np.ndarray] = dict(model.weights)
    for role, name in TOKENIZER_BLOBS.items():
        tensors[name] = np.frombuffer(blobs[role], dtype=np.uint8)
    manifest = {
        "format": "vox.tmod",
        "format_version": tmod.VERSION,
        "family": "f5_tts",
        "variant": model.config.variant,
        "model_id": model_id(files),
        "source": {"files": dict(sorted(files.items())), "converter": f"vox {__version__}",
                   "weights": "ema" if use_ema else "online"},
        "precision": {"dtype": dtype, "quant": quant, "vocoder_dtype": vocoder_dtype},
        "config": model.config.to_json(),
        "tokenizer": {
            "type": "f5_pinyin",
            **TOKENIZER_BLOBS,
            "segmenter": "rjieba 0.2.2 (jieba-rs 0.11) cut, hmm=True",
            "pinyin": "pypinyin 0.55.0 lazy_pinyin(style=TONE3, tone_sandhi=True)",
            "sources": {n: {"version": f5_sources.SOURCES[n][0], "file": f5_sources.SOURCES[n][1],
                            "sha256": f5_sources.SOURCES[n][2], "license": f5_sources.LICENSES[n]}
                        for n in f5_sources.SOURCES},
        },
        "noise": {"generator": "philox4x32-10", "counter": ["frame", "channel", 4, "piece"],
                  "key": ["seed & 0xffffffff", "seed >> 32"], "normal": "box-muller, one per counter"},
    }
    specs = []
    for name, arr in tensors.items():
        kind = "u8" if arr.dtype == np.uint8 else tensor_dtype(name, arr.shape, dtype, quant, vocoder_dtype)
        specs.append(tmod.TensorSpec(name, kind, arr.shape))
    try:
        with tmod.TmodWriter(out, manifest, specs, overwrite=overwrite) as w:
            for s in specs:
                w.write(s.name, tensors[s.name])
                if progress:
                    progress(tensors[s.name].nbytes, f"writing {s.name}")
    except ValueError as e:
        raise FormatError(f"{out}: {e}") from None
    return ConvertResult(path=str(out), tensors=len(specs), bytes=out.stat().st_size, seconds=time.monotonic() - t0,
                         model_id=manifest["model_id"], precision=manifest["precision"])


def read_tmod(path: str | os.PathLike):
    """A converted .tmod as the reference's F5Model (vox.families.f5.checkpoint.read_model)."""
    from .checkpoint import read_model

    return read_model(path)


__all__ = ["convert", "read_checkpoint", "read_tmod", "read_weights", "read_vocos", "guess_variant", "tensor_dtype",
           "DTYPES", "QUANTS", "VARIANTS"]
