"""The native core (libvox, through vox.Engine) vs the official code, for `vox verify`.

Stage by stage, on the model file being verified:
    voice    native clone (resampling, mel, ECAPA-TDNN, Mimi + RVQ) vs the official voice encoders
    prompt   native prefill embeddings vs the official generate (exact rows on float32 weights)
    logits   native teacher-forced talker and predictor logits on the codes of an official sampled
             run: exact rows on float32 weights, the format tolerance (mean KL, top-5) otherwise
    greedy   native free greedy codes vs the official generate (float32 weights)
    decoder  native codec decoder, stream and reference modes, vs the official decoder
The voice used for the talker checks is the official one (teacher forcing by stage), handed to the
core as a .tvoice. Rows carry backend "cpu".
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from .. import metrics
from ..tolerance import Row, measure
from . import talker as vt

CPU = "cpu"


def _row(row: Row) -> Row:
    row.backend = CPU
    return row


def official_voice_file(eng, tts_voice: vt.Voice, tokenizer, x_vector_only: bool, path: str):
    """Write the official voice as a .tvoice bound to `eng`'s model and load it natively."""
    from vox.formats.tvoice import Voice as TVoice, write_voice
    from vox.reference.qwen3 import tokenizer as tk

    emb = tts_voice.speaker_embedding.astype(np.float32)
    mid = eng.info["model_id"]
    if x_vector_only:
        v = TVoice("qwen3_tts", "xvector", mid, "base", name="official", arrays={"speaker_embedding": emb})
    else:
        ids = tokenizer.encode(tk.ref_text(tts_voice.ref_text)).astype(np.int64)
        v = TVoice("qwen3_tts", "icl", mid, "base", name="official", texts={"ref_text": tts_voice.ref_text},
                   arrays={"speaker_embedding": emb, "ref_codes": tts_voice.ref_codes.astype(np.int64),
                           "ref_text_tokens": ids})
    write_voice(path, v)
    return eng.load_voice(path)


def native_voice(eng, case: vt.Case, voices: dict):
    if case.kind == "clone":
        return voices["xvector" if case.x_vector_only else "icl"]
    if case.kind == "custom":
        return eng.speaker_voice(case.speaker, case.instruct)
    return eng.design_voice(case.instruct or "")


def open_session(eng, case: vt.Case, voices: dict, **kw):
    """A native session for an official request, in the official wrapper's text mode."""
    streaming_default = case.non_streaming_mode if case.non_streaming_mode is not None else case.kind != "clone"
    s = eng.session(native_voice(eng, case, voices), language=case.language,
                    non_streaming_text=bool(streaming_default), **kw)
    s.feed(case.text)
    s.end()
    return s


def voice_rows(tts, eng, wav: np.ndarray, sr: int, text: str, label: str) -> list[Row]:
    """Native cloning of a recording vs the official create_voice_clone_prompt."""
    off = vt.official_voice(tts, wav, sr, text)
    v = eng.clone_voice((wav, sr), text)
    sub = f"{label} clone ({sr} Hz)"
    emb, codes = v.array("speaker_embedding"), v.array("ref_codes")
    if sr == 24000:
        return [_row(measure("qwen3.speaker_embedding", emb, off.speaker_embedding, sub)),
                _row(Row("qwen3.ref_codes", sub, metrics.match_fraction(codes, off.ref_codes)))]
    return [_row(measure("qwen3.speaker_embedding_resampled", emb, off.speaker_embedding, sub)),
            _row(Row("qwen3.ref_codes_resampled", sub, metrics.match_fraction(codes, off.ref_codes)))]


def talker_rows(tts, eng, ckpt, voice: vt.Voice | None, key: str | None, label: str,
                max_new_tokens: int = 24) -> list[Row]:
    """Prompts, teacher-forced logits and greedy codes of the native core. `ckpt` is the checkpoint
    (for the request list and the tokenizer); `key` is the weights' precision key (None: float32,
    exact rows; else the format-tolerance rows qwen3.{key}_kl/_top5)."""
    from vox.reference.qwen3.tokenizer import Qwen2Tokenizer

    cases = vt.standard_cases(ckpt)
    tokenizer = Qwen2Tokenizer.from_checkpoint(ckpt)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="vox-verify-") as tmp:
        voices = {}
        if voice is not None:
            for xv in (False, True):
                voices["xvector" if xv else "icl"] = official_voice_file(
                    eng, voice, tokenizer, xv, os.path.join(tmp, f"{xv}.tvoice"))
        if key is None:
            for case in cases:
                off = vt.official_prompt(tts, case, voice)
                with open_session(eng, case, voices) as s:
                    ours = s.run("prompt")["prompt"]
                rows.append(_row(vt._shape_row("qwen3.prompt_embeds", ours, off.embeds, f"{label} {case.name}")))
        case = cases[0]
        run = vt.official_generate(tts, case, voice, seed=0, max_new_tokens=max_new_tokens)
        with open_session(eng, case, voices) as s:
            out = s.run("teacher_force", codes=run.codes)
        tl, pl = out["talker_logits"], out["predictor_logits"]
        pr, po = pl.reshape(-1, pl.shape[-1]), run.predictor_logits.reshape(-1, run.predictor_logits.shape[-1])
        sub_t = f"{label} {case.name}, {tl.shape[0]} steps"
        sub_p = f"{label} {case.name}, {run.codes.shape[0]} frames x 15"
        if key is None:
            rows += [_row(measure("qwen3.talker_logits", tl, run.talker_logits, sub_t)),
                     _row(measure("qwen3.talker_argmax", tl, run.talker_logits, sub_t)),
                     _row(measure("qwen3.predictor_logits", pr, po, sub_p)),
                     _row(measure("qwen3.predictor_argmax", pr, po, sub_p))]
            greedy = vt.official_generate(tts, case, voice, do_sample=False, subtalker_dosample=False,
                                          max_new_tokens=max_new_tokens)
            with open_session(eng, case, voices, do_sample=False, subtalker_do_sample=False,
                              max_new_tokens=max_new_tokens) as s:
                list(s)
                codes = s.output("codes")
            rows.append(_row(Row("qwen3.greedy_codes", f"{label} {case.name}, {greedy.codes.shape[0]} frames",
                                 metrics.match_fraction(codes, greedy.codes), note=f"native {codes.shape[0]} frames")))
        else:
            for part, ours, off in (("talker", tl, run.talker_logits), ("predictor", pr, po)):
                sub = f"{label} {case.name} {part}, {off.shape[0]} rows"
                rows += [_row(measure(f"qwen3.{key}_kl", ours, off, sub)),
                         _row(measure(f"qwen3.{key}_top5", ours, off, sub))]
    return rows


def decoder_rows(tts, eng, ref_codes: np.ndarray | None, label: str, seed: int = 0) -> list[Row]:
    """Native decoder vs the official one: stream mode (chunks of 4, warm-up 50) against the official
    decoder on the same frames, and reference mode against the official decode + cut."""
    import torch

    from vox.families.qwen3 import decode

    rng = np.random.default_rng(seed)
    gen = rng.integers(0, 2048, size=(90, 16)).astype(np.int64)
    dec = tts.model.speech_tokenizer.model.decoder
    rows = []
    with torch.inference_mode():
        ctx = min(50, len(ref_codes)) if ref_codes is not None else 0
        frames = np.concatenate([ref_codes[len(ref_codes) - ctx:], gen]) if ctx else gen
        want = dec(torch.from_numpy(frames.T[None])).numpy().reshape(-1)[ctx * 1920:]
        ours = decode(eng, gen, ref_codes, mode="stream", context=50, chunk_frames=4)
        rows.append(_row(measure("qwen3.decoder_audio_stream", ours, want, f"{label} 90 frames, warm-up {ctx}, chunk 4")))
        allc = np.concatenate([ref_codes, gen]) if ref_codes is not None else gen
        full = tts.model.speech_tokenizer.decode([{"audio_codes": torch.from_numpy(allc)}])[0][0]
        n_ref = 0 if ref_codes is None else len(ref_codes)
        cut = int(n_ref / max(len(allc), 1) * full.shape[0])
        ours = decode(eng, gen, ref_codes, mode="reference")
        rows.append(_row(measure("qwen3.decoder_audio_reference", ours, full[cut:], f"{label} ref {n_ref} + 90 frames")))
    return rows
