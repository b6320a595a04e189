"""`vox verify` for Qwen3-TTS-12Hz: a converted model (.tmod) against the official code on its checkpoint.

The checks, in order (each a list of tolerance-table rows):
  conversion   every tensor of the .tmod equals the checkpoint's tensor stored in its dtype
  voice        (Base) mel, speaker embedding and reference codes of a recording vs the official encoders
  talker       tokens, prompts, teacher-forced logits, greedy codes, stop rules, logits processing:
               exact on float32 weights (the .tmod's own when it is f32, else the checkpoint's), and
               for a bf16/f16/q8/q4 .tmod the format tolerance (mean KL, top-5) on its own weights
  codec        decoder audio in stream and reference modes vs the official decoder

  native       the C core on the same .tmod, stage by stage against the official code (vox.verify.qwen3.native)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np

from ..fpstate import keeps_fp_state
from ..tolerance import Row
from . import codec, official, talker, voice
from . import native as native_rows
from .signals import TEXT as SYNTH_TEXT, speech_like


def precision_key(precision: dict) -> str | None:
    """The tolerance-table prefix of a model's talker precision (None: float32, exact)."""
    if precision.get("quant", "none") != "none":
        return precision["quant"]
    return None if precision.get("dtype") == "f32" else precision["dtype"]


def conversion_rows(conv, src, label: str) -> list[Row]:
    """Each .tmod tensor (dequantized) vs quant.roundtrip(source tensor, stored dtype), bit for bit;
    the tokenizer files byte for byte."""
    from vox.formats.quant import roundtrip

    dtypes = conv.extra["dtypes"]
    bad, n = [], 0
    for name in conv.names():
        n += 1
        if not src.has(name):
            bad.append(f"{name} (not in the checkpoint)")
            continue
        ours = np.asarray(conv.tensors[name])
        ref = np.asarray(src.tensors[name])
        if ours.dtype.kind == "f":
            ref = roundtrip(ref, dtypes[name])
        if ours.shape != ref.shape or not np.array_equal(ours.view(np.uint8), np.ascontiguousarray(ref, dtype=ours.dtype).view(np.uint8)):
            bad.append(name)
    for fname, data in conv.tokenizer_files.items():
        n += 1
        if src.tokenizer_files.get(fname) != data:
            bad.append(fname)
    note = f"{n - len(bad)} of {n} tensors and tokenizer files identical"
    if bad:
        note += "; first differing: " + ", ".join(bad[:3])
    if conv.extra.get("model_id") != _model_id(src.source):
        note += "; the .tmod's model_id differs from this checkpoint's (converted from other files?)"
    p = conv.extra["precision"]
    subject = f"{label} ({p.get('dtype')}, quant {p.get('quant')}, codec {p.get('codec_dtype')})"
    return [Row("qwen3.conversion", subject, (n - len(bad)) / max(n, 1), note=note)]


def _model_id(model_dir: str) -> str | None:
    from vox.convert.common import model_id, sha256_file
    from vox.families.qwen3.convert import source_files

    try:
        return model_id({f: sha256_file(Path(model_dir) / f) for f in source_files(model_dir)})
    except (OSError, ValueError):
        return None


def load_recording(path: str | None, text: str | None) -> tuple[str, np.ndarray, int, str]:
    """(name, mono float32 samples, sample rate, transcript) of --ref-audio, or the synthetic one."""
    if path is None:
        return "synthetic speech-like 24 kHz", speech_like(24000), 24000, text or SYNTH_TEXT
    import soundfile as sf

    if not text:
        raise ValueError("--ref-audio needs --ref-text (the transcript of the recording)")
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such file")
    try:
        wav, sr = sf.read(path, dtype="float32", always_2d=True)
    except (RuntimeError, OSError) as e:   # soundfile's LibsndfileError is a RuntimeError
        raise ValueError(f"{path}: not an audio file soundfile can read ({e})") from None
    return os.path.basename(path), np.ascontiguousarray(wav.mean(axis=1), dtype=np.float32), int(sr), text


@keeps_fp_state
def verify(model_path: str, official_dir: str, *, ref_audio: str | None = None, ref_text: str | None = None,
           max_new_tokens: int = 24, native: bool = True, say: Callable[[str], None] = print) -> list[Row]:
    from vox.families.qwen3.checkpoint import read_checkpoint
    from vox.reference.common.checkpoint import Checkpoint

    label = Path(model_path).name
    recording = load_recording(ref_audio, ref_text)   # before the official model loads: a bad file fails at once
    say(f"loading the official model from {official_dir}")
    tts = official.load(str(official_dir))
    conv = read_checkpoint(model_path)
    src = Checkpoint.from_hf_dir(official_dir)
    kind = src.config.get("tts_model_type")
    if conv.config.get("tts_model_type") != kind:
        raise ValueError(f"{model_path} is a {conv.config.get('tts_model_type')} model but {official_dir} "
                         f"is {kind}: verify a model against the checkpoint it was converted from")
    precision = conv.extra["precision"]
    key = precision_key(precision)
    codec_ck = conv if precision.get("codec_dtype", "f32") == "f32" else src
    talker_ck = conv if key is None else src

    say("conversion: every tensor vs the checkpoint")
    rows = conversion_rows(conv, src, label)
    vc = None
    if kind == "base":
        name, wav, sr, text = recording
        say(f"voice: mel, speaker embedding and codes of {name}")
        rows += voice.standard_rows(tts, codec_ck, [(name, wav, sr, text)], label=label)
        vc = talker.official_voice(tts, wav, sr, text)
    say("talker: tokens, prompts, teacher-forced logits, greedy codes")
    rows += talker.standard_rows(tts, talker_ck, vc, label=f"{label}" if key is None else f"{label} (f32 checkpoint)",
                                 max_new_tokens=max_new_tokens, quants=("q8", "q4") if key is None else ())
    if key is not None:
        say(f"talker: {key} weights of {label} (format tolerance)")
        case = talker.standard_cases(src)[0]
        run = talker.official_generate(tts, case, vc, seed=0, max_new_tokens=max_new_tokens)
        rows += talker.format_rows(run, conv, case, vc, key, subject=f"{label} {case.name}",
                                   note=f"{precision['dtype']} + {precision['quant']}")
    say("codec: decoder audio, stream and reference modes")
    rows += codec.standard_rows(tts, codec_ck, vc.ref_codes if vc is not None else None, label=label)

    if native:
        import vox

        say("native core: voice, prompts, teacher-forced logits, greedy codes, decoder")
        with vox.Engine(model_path) as eng:
            nl = f"{label} native"
            if kind == "base":
                rows += native_rows.voice_rows(tts, eng, wav, sr, text, nl)
            rows += native_rows.talker_rows(tts, eng, src, vc, key, nl, max_new_tokens=max_new_tokens)
            rows += native_rows.decoder_rows(tts, eng, vc.ref_codes if vc is not None else None, nl)
    return rows
