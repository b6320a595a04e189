"""Official Qwen3-TTS-12Hz checkpoint directory (Hugging Face layout) -> .tmod.

The directory holds config.json, generation_config.json, model.safetensors (or shards with
model.safetensors.index.json), the Qwen2 tokenizer files (vocab.json, merges.txt,
tokenizer_config.json) and speech_tokenizer/{config.json, model.safetensors}. The speech tokenizer's
tensors are stored under the prefix "speech_tokenizer."; which tensor gets which dtype is
`tensor_dtype` (the table in docs/formats.md). Tensors are converted one at a time, in chunks, so
memory stays small whatever the model size.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from ... import __version__
from ...errors import FormatError
from ...formats import tmod
from ...convert.common import ConvertResult, Progress, SafetensorsSource, model_id, sha256_file

DTYPES = ("f32", "f16", "bf16")
QUANTS = ("none", "q8", "q4")
from .checkpoint import TOKENIZER_FILES, VARIANTS
SPEECH_TOKENIZER_PREFIX = "speech_tokenizer."
# Files every checkpoint has; the weights are model.safetensors or the shards of an index.
REQUIRED = ("config.json", "speech_tokenizer/config.json", "speech_tokenizer/model.safetensors",
            "vocab.json", "merges.txt", "tokenizer_config.json")
OPTIONAL = ("generation_config.json",)

# The attention and MLP layers of the talker and of the code predictor: the ones q4 applies to. The
# talker's are the bulk of the bytes; the predictor's are read 15 times a frame (once per codebook), so
# on a CPU, where the language model's frames are bound by memory bandwidth, they are the larger share
# of the bytes read per frame. The heads (each read once a frame) and the text projection stay q8.
_TALKER_BLOCK = re.compile(r"talker\.(model|code_predictor\.model)\.layers\.\d+\."
                           r"(self_attn\.[qkvo]_proj|mlp\.(gate|up|down)_proj)\.weight")
_EMBEDDING = re.compile(r"talker\.(model\.(text|codec)_embedding|code_predictor\.model\.codec_embedding\.\d+)\.weight")
# The codec (decoder and Mimi encoder) and the speaker encoder run convolutions whose outputs feed
# discrete choices (codes) or a whole-utterance embedding: they keep codec_dtype (default f32).
_CODEC_PREFIXES = (SPEECH_TOKENIZER_PREFIX, "speaker_encoder.")


def tensor_dtype(name: str, shape: tuple[int, ...], dtype: str, quant: str, codec_dtype: str) -> str:
    """The stored dtype of a float tensor (docs/formats.md, "Which tensors get which dtype")."""
    if len(shape) <= 1:
        return "f32"  # norms, biases, SnakeBeta, layer scales: tiny, and precision-critical
    if name.startswith(_CODEC_PREFIXES):
        return codec_dtype
    if _EMBEDDING.fullmatch(name):
        return dtype  # a lookup reads one row: nothing to gain from block quantization
    if quant != "none" and name.startswith("talker.") and len(shape) == 2 and name.endswith(".weight"):
        if shape[-1] % 32:
            return dtype  # blocks of 32 along the input axis; a narrower layer stays unquantized
        return "q4" if quant == "q4" and _TALKER_BLOCK.fullmatch(name) else "q8"
    return dtype


def _check_options(dtype: str, quant: str, codec_dtype: str) -> None:
    for what, value, allowed in (("dtype", dtype, DTYPES), ("quant", quant, QUANTS),
                                 ("codec dtype", codec_dtype, DTYPES)):
        if value not in allowed:
            raise ValueError(f"unknown {what} {value!r}; choose one of {', '.join(allowed)}")


def _weight_files(d: Path) -> list[str]:
    if (d / "model.safetensors").is_file():
        return ["model.safetensors"]
    index = d / "model.safetensors.index.json"
    if index.is_file():
        try:
            wm = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            shards = sorted(set(wm.values()))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise FormatError(f"{index}: not a valid safetensors index ({e})") from None
        for s in shards:
            if not isinstance(s, str) or "/" in s or s.startswith("."):
                raise FormatError(f"{index}: invalid shard file name {s!r}")
        return ["model.safetensors.index.json", *shards]
    return []


def source_files(model_dir: str | os.PathLike) -> list[str]:
    """The files (relative names) a conversion reads; a clear error naming any that are missing."""
    d = Path(model_dir)
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: no such directory" if not d.exists() else f"{d}: not a directory")
    weights = _weight_files(d)
    missing = [n for n in REQUIRED if not (d / n).is_file()]
    if not weights:
        missing.insert(0, "model.safetensors")
    missing += [n for n in weights if not (d / n).is_file()]
    if missing:
        raise FileNotFoundError(f"{d}: incomplete Qwen3-TTS checkpoint, missing {', '.join(missing)}")
    return [*REQUIRED[:1], *[n for n in OPTIONAL if (d / n).is_file()], *weights, *REQUIRED[1:]]


def _read_json(path: Path) -> dict:
    try:
        v = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise FormatError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(v, dict):
        raise FormatError(f"{path}: expected a JSON object")
    return v


def _id_table(cfg: dict, key: str, path: Path) -> dict[str, int]:
    table = cfg.get(key) or {}
    if not isinstance(table, dict) or not all(isinstance(k, str) and type(v) is int and v >= 0
                                              for k, v in table.items()):
        raise FormatError(f"{path}: talker_config.{key} must map names to non-negative token ids")
    return dict(table)


def work_bytes(model_dir: str | os.PathLike) -> int:
    """How many bytes `convert` reports through its progress callback: every source file once for
    its sha256, then every source tensor once as it is converted."""
    d = Path(model_dir)
    files = source_files(d)
    total = sum((d / n).stat().st_size for n in files)
    for n in files:
        if n.endswith(".safetensors"):
            src = SafetensorsSource(d / n)
            total += sum(src.nbytes(t) for t in src.entries)
            src.close()
    return total


def convert(model_dir: str | os.PathLike, out: str | os.PathLike, *, dtype: str = "bf16", quant: str = "none",
            codec_dtype: str = "f32", overwrite: bool = False, progress: Progress | None = None) -> ConvertResult:
    """Convert the official checkpoint in `model_dir` to the .tmod `out` (see the module docstring)."""
    t0 = time.monotonic()
    _check_options(dtype, quant, codec_dtype)
    d = Path(model_dir)
    files = source_files(d)
    out = Path(out)
    if not overwrite and out.exists():
        raise FileExistsError(f"{out} exists (use --force to overwrite)")

    config = _read_json(d / "config.json")
    if config.get("model_type") != "qwen3_tts":
        raise FormatError(f"{d / 'config.json'}: model_type {config.get('model_type')!r} is not qwen3_tts")
    variant = config.get("tts_model_type")
    if variant not in VARIANTS:
        raise FormatError(f"{d / 'config.json'}: unknown tts_model_type {variant!r} ({', '.join(VARIANTS)})")
    talker = config.get("talker_config")
    if not isinstance(talker, dict):
        raise FormatError(f"{d / 'config.json'}: no talker_config")
    st_config = _read_json(d / "speech_tokenizer" / "config.json")
    generation = _read_json(d / "generation_config.json") if "generation_config.json" in files else {}

    sources: list[tuple[str, SafetensorsSource]] = []  # (name prefix, file)
    try:
        weights = [n for n in files if n.endswith(".safetensors") and not n.startswith("speech_tokenizer/")]
        for n in weights:
            sources.append(("", SafetensorsSource(d / n)))
        sources.append((SPEECH_TOKENIZER_PREFIX, SafetensorsSource(d / "speech_tokenizer" / "model.safetensors")))

        tick = progress or (lambda n, note: None)
        hashes = {n: sha256_file(d / n, tick) for n in files}

        plan: list[tuple[tmod.TensorSpec, SafetensorsSource | bytes, str]] = []  # (spec, source, source name)
        seen: set[str] = set()
        for prefix, src in sources:
            for n in src.entries:
                name = prefix + n
                if name in seen:
                    raise FormatError(f"{src.path}: tensor {n!r} appears twice in the checkpoint")
                seen.add(name)
                shape = src.shape(n) or (1,)  # a scalar is stored as [1]: .tmod shapes have 1 to 4 dims
                if len(shape) > 4:
                    raise FormatError(f"{src.path}: tensor {n!r} has {len(shape)} dimensions; .tmod holds at most 4")
                kind = src.kind(n)
                target = tensor_dtype(name, shape, dtype, quant, codec_dtype) if kind in ("float", "bf16") else kind
                plan.append((tmod.TensorSpec(name, target, shape), src, n))
        # The pre-tokenizer regex the official loader ends up with for this checkpoint directory
        # (transformers 4.57.3 swaps in its "Mistral fix" regex for local checkpoints whose config says
        # 4.57.3); recorded so that every runtime tokenizes exactly as the official code does.
        from vox.reference.qwen3.tokenizer import official_regex

        tok = {"type": "qwen2_bpe", "pre_tokenizer": official_regex(config)}
        for role, (fname, tname) in TOKENIZER_FILES.items():
            data = (d / fname).read_bytes()
            plan.append((tmod.TensorSpec(tname, "u8", (len(data),)), data, fname))
            tok[role] = tname

        manifest = {
            "format": "vox.tmod",
            "format_version": tmod.VERSION,
            "family": "qwen3_tts",
            "variant": variant,
            "size": str(config.get("tts_model_size", "")),
            "model_id": model_id(hashes),
            "source": {"files": hashes, "converter": f"vox {__version__}"},
            "precision": {"dtype": dtype, "quant": quant, "codec_dtype": codec_dtype},
            "config": config,
            "speech_tokenizer_config": st_config,
            "generation": generation,
            "tokenizer": tok,
            "speakers": _id_table(talker, "spk_id", d / "config.json"),
            "languages": _id_table(talker, "codec_language_id", d / "config.json"),
        }
        with tmod.TmodWriter(out, manifest, [p[0] for p in plan], overwrite=overwrite) as w:
            for spec, item, n in plan:
                if isinstance(item, bytes):
                    w.write(spec.name, item)
                    continue
                x = item.view(n).reshape(spec.shape)
                try:
                    with w.open_tensor(spec.name) as sink:
                        for chunk in tmod.encode_chunks(x, spec.dtype, bf16_bits=item.kind(n) == "bf16"):
                            sink.write(chunk)
                except ValueError as e:
                    raise ValueError(f"{item.path}: tensor {n!r}: {e}") from None
                tick(item.nbytes(n), spec.name)
            entries = w.entries
    finally:
        for _, src in sources:
            src.close()
    return ConvertResult(path=str(out), tensors=len(entries), bytes=out.stat().st_size,
                         seconds=time.monotonic() - t0, model_id=manifest["model_id"],
                         precision=manifest["precision"])
