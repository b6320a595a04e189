"""The talker side of the reference (tokenizer, prompts, talker, code predictor, sampling) vs the official code.

Every function takes the official wrapper (vox.verify.qwen3.official.load(dir), a Qwen3TTSModel), the
reference weights (a Checkpoint, or a TalkerModel built from one) and the inputs, and returns rows of
the tolerance table. The conformance suite (conformance/test_qwen3_talker.py) and `vox verify` call
the same functions; `standard_rows` is the battery for one model directory.

What the official code computed is captured where it happens, not recomputed:
    talker.generate           wrapped: the prefill inputs_embeds, trailing_text_hidden, tts_pad_embed
                              (optionally aborting there: prompt checks need no generation)
    talker.codec_head         forward hook: raw talker logits of every step (last position)
    code_predictor.lm_head[i] forward hooks: raw predictor logits of every group of every frame
    model.generate            wrapped: the codes it returns
    _get_logits_processor     wrapped on talker and code predictor: the processor lists generate used
    speech_tokenizer.decode   replaced by a stub while capturing (the codec is checked elsewhere)

Voices (Base): the reference codes and speaker embedding come from the official
create_voice_clone_prompt (teacher forcing by stage; the voice encoders are checked in voice.py).

    text_token_rows        reference tokenizer vs the official processor
    prompt_rows            prefill embeddings + trailing text vs the official generate
    teacher_forced_rows    talker + predictor logits on the codes of an official sampled run
    quant_rows             the same with q8/q4 round-tripped weights (mean KL, top-5)
    greedy_rows            free greedy generation codes vs the official generate
    logits_processing_rows reference processing vs the processors the official generate built
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np

from .. import metrics
from ..tolerance import Row, measure

# ----------------------------------------------------------------------------- requests
TEXT_SAMPLES = [
    "Hello world! This is a test of the text tokenizer.",
    "I don't think it's HelloWorld's fault; CamelCase and HTMLParser, McDonald's.",
    "你好，世界！今天是2024年1月1日，气温-3.5℃。",
    "Numbers: 1234567.89, $5,000, 3/4, 10:30, +1-800-555-0199, 1e-9 and 2^10.",
    "Emoji 😀👍🏽 🇨🇳 ❤️ and symbols © ® ™ → ≤ ∑.",
    "multiple   spaces\n\n\nnewlines\r\n\ttabs  and trailing spaces   ",
    "Cafe\u0301 vs café, naïve, ﬁ ligature, Å and Å, ẞ ß.",
    "日本語のテキスト、カタカナ。한국어 텍스트입니다. Привет, мир! Ça va? ¿Qué tal?",
    "\"Quotes\" 'single' — em dash… ellipsis (parens) [brackets] {braces} <angle> a/b//c.",
    "<|im_start|>user\nspecial tokens <tts_pad> inline<|im_end|>\n<tts_text_bos_single>",
    "",
]


@dataclass(frozen=True)
class Case:
    """One synthesis request, as the official wrapper methods take it."""

    name: str
    kind: str                       # clone | custom | design
    text: str
    language: str = "auto"
    speaker: str | None = None      # custom
    instruct: str | None = None     # custom / design
    x_vector_only: bool = False     # clone
    non_streaming_mode: bool | None = None  # None: the wrapper's default (clone False, others True)


@dataclass
class Voice:
    """A Base voice from the official create_voice_clone_prompt (numpy copies + the official item)."""

    ref_codes: np.ndarray
    speaker_embedding: np.ndarray
    ref_text: str
    item: object = None  # the official VoiceClonePromptItem (ICL)

    def official_item(self, x_vector_only: bool):
        if not x_vector_only:
            return self.item
        # what create_voice_clone_prompt(x_vector_only_mode=True) returns: the same x-vector, no codes
        return replace(self.item, ref_code=None, x_vector_only_mode=True, icl_mode=False)


def official_voice(tts, wav: np.ndarray, sr: int, ref_text: str) -> Voice:
    item = tts.create_voice_clone_prompt((np.asarray(wav, dtype=np.float32), int(sr)), ref_text=ref_text,
                                         x_vector_only_mode=False)[0]
    return Voice(ref_codes=item.ref_code.detach().cpu().numpy().astype(np.int64),
                 speaker_embedding=item.ref_spk_embedding.detach().cpu().float().numpy().copy(),
                 ref_text=ref_text, item=item)


def standard_cases(ckpt_or_config, text: str = "Hello world, this is a small test.") -> list[Case]:
    """The requests checked for a model type: every mode, both text modes, auto and a language."""
    config = getattr(ckpt_or_config, "config", ckpt_or_config)
    kind = config.get("tts_model_type")
    zh = "四川的火锅真好吃。"
    if kind == "base":
        # streaming ICL sums text and reference codes position by position: a text longer than the
        # reference codes leaves trailing text, a shorter one is padded (two branches)
        long_text = " ".join([text] * 12)
        return [Case("icl stream", "clone", text, "english", non_streaming_mode=False),
                Case("icl non-stream", "clone", text, "auto", non_streaming_mode=True),
                Case("x-vector stream", "clone", text, "auto", x_vector_only=True, non_streaming_mode=False),
                Case("x-vector non-stream", "clone", text, "english", x_vector_only=True, non_streaming_mode=True),
                Case("icl stream long text", "clone", long_text, "english", non_streaming_mode=False)]
    if kind == "custom_voice":
        spk = config["talker_config"]["spk_id"]
        dialect = [s for s, d in config["talker_config"]["spk_is_dialect"].items() if d]
        plain = next(s for s in spk if s not in dialect)
        cases = [Case("speaker", "custom", text, "english", speaker=plain),
                 Case("speaker stream", "custom", text, "auto", speaker=plain, non_streaming_mode=False),
                 Case("speaker+instruct", "custom", text, "english", speaker=plain,
                      instruct="Speak slowly, in a warm and cheerful voice.")]
        if dialect:
            cases += [Case("dialect chinese", "custom", zh, "chinese", speaker=dialect[0]),
                      Case("dialect auto stream", "custom", zh, "auto", speaker=dialect[-1], non_streaming_mode=False)]
        return cases
    if kind == "voice_design":
        desc = "A deep, calm male voice with a slight British accent."
        return [Case("design", "design", text, "english", instruct=desc),
                Case("design auto stream", "design", text, "auto", instruct=desc, non_streaming_mode=False),
                Case("no description", "design", text, "auto", instruct="")]
    raise ValueError(f"unknown tts_model_type {kind!r}")


# ----------------------------------------------------------------------------- reference side
def reference_model(ref):
    """A reference TalkerModel from a Checkpoint (or pass one through)."""
    from vox.reference.qwen3.generate import TalkerModel

    return ref if isinstance(ref, TalkerModel) else TalkerModel(ref)


def reference_prompt(model, case: Case, voice: Voice | None = None):
    pb = model.prompts
    kw = {} if case.non_streaming_mode is None else {"non_streaming_mode": case.non_streaming_mode}
    if case.kind == "clone":
        if voice is None:
            raise ValueError("a clone case needs a voice")
        return pb.voice_clone(case.text, ref_codes=None if case.x_vector_only else voice.ref_codes,
                              speaker_embedding=voice.speaker_embedding, ref_text=voice.ref_text,
                              x_vector_only=case.x_vector_only, language=case.language, **kw)
    if case.kind == "custom":
        return pb.custom_voice(case.text, speaker=case.speaker, language=case.language, instruct=case.instruct, **kw)
    if case.kind == "design":
        return pb.voice_design(case.text, instruct=case.instruct, language=case.language, **kw)
    raise ValueError(f"unknown case kind {case.kind!r}")


# ----------------------------------------------------------------------------- official side
class _Abort(Exception):
    pass


@dataclass
class OfficialRun:
    """What one official wrapper call computed."""

    embeds: np.ndarray = None         # [L, H] talker prefill inputs
    trailing: np.ndarray = None       # [Lt, H]
    tts_pad: np.ndarray = None        # [H]
    codes: np.ndarray = None          # [T, 16]
    talker_logits: np.ndarray = None  # [steps, vocab] raw codec_head output, last position
    predictor_logits: np.ndarray = None  # [T, 15, vocab]
    talker_processors: object = None     # the LogitsProcessorList talker.generate built
    predictor_processors: object = None  # the one code_predictor.generate built (first frame)


@contextlib.contextmanager
def _capture(tts, run: OfficialRun, abort_at_generate: bool):
    m = tts.model
    talker = m.talker
    cp = talker.code_predictor
    t_rows, p_rows, handles = [], [], []

    def talker_generate(*a, **kw):
        run.embeds = kw["inputs_embeds"][0].detach().float().numpy().copy()
        run.trailing = kw["trailing_text_hidden"][0].detach().float().numpy().copy()
        run.tts_pad = kw["tts_pad_embed"].reshape(-1).detach().float().numpy().copy()
        if abort_at_generate:
            raise _Abort()
        return type(talker).generate(talker, *a, **kw)

    def model_generate(*a, **kw):
        out = type(m).generate(m, *a, **kw)
        run.codes = out[0][0].detach().cpu().numpy().astype(np.int64).reshape(-1, talker.config.num_code_groups)
        return out

    def get_processors(module, attr):
        def f(*a, **kw):
            procs = type(module)._get_logits_processor(module, *a, **kw)
            if getattr(run, attr) is None:
                setattr(run, attr, procs)
            return procs
        return f

    def decode_stub(items, *a, **kw):
        return [np.zeros(1, dtype=np.float32) for _ in items], 24000

    handles.append(talker.codec_head.register_forward_hook(
        lambda mod, inp, out: t_rows.append(out[0, -1].detach().float().numpy().copy())))
    for i, head in enumerate(cp.lm_head):
        handles.append(head.register_forward_hook(
            lambda mod, inp, out, i=i: p_rows.append((i, out[0, -1].detach().float().numpy().copy()))))
    talker.generate = talker_generate
    m.generate = model_generate
    talker._get_logits_processor = get_processors(talker, "talker_processors")
    cp._get_logits_processor = get_processors(cp, "predictor_processors")
    st = m.speech_tokenizer
    st.decode = decode_stub
    try:
        yield
    finally:
        for h in handles:
            h.remove()
        for obj, name in ((talker, "generate"), (m, "generate"), (talker, "_get_logits_processor"),
                          (cp, "_get_logits_processor"), (st, "decode")):
            obj.__dict__.pop(name, None)
    n = len(cp.lm_head)
    run.talker_logits = np.array(t_rows, dtype=np.float32).reshape(len(t_rows), talker.config.vocab_size)
    groups = [i for i, _ in p_rows]
    if groups != list(range(n)) * (len(groups) // n) or len(groups) % n:
        raise RuntimeError(f"unexpected code predictor head order: {groups[:20]}...")
    run.predictor_logits = np.array([r for _, r in p_rows], dtype=np.float32).reshape(-1, n, cp.vocab_size)


def _call(tts, case: Case, voice: Voice | None, gen: dict):
    kw = dict(gen)
    if case.non_streaming_mode is not None:
        kw["non_streaming_mode"] = case.non_streaming_mode
    if case.kind == "clone":
        return tts.generate_voice_clone(case.text, language=case.language,
                                        voice_clone_prompt=[voice.official_item(case.x_vector_only)], **kw)
    if case.kind == "custom":
        return tts.generate_custom_voice(case.text, speaker=case.speaker, language=case.language,
                                         instruct=case.instruct, **kw)
    if case.kind == "design":
        return tts.generate_voice_design(case.text, instruct=case.instruct, language=case.language, **kw)
    raise ValueError(f"unknown case kind {case.kind!r}")


def official_prompt(tts, case: Case, voice: Voice | None = None) -> OfficialRun:
    """The prompt the official generate builds (generation is aborted before it starts)."""
    run = OfficialRun()
    with _capture(tts, run, abort_at_generate=True):
        try:
            _call(tts, case, voice, {"max_new_tokens": 2})
        except _Abort:
            pass
    return run


def official_generate(tts, case: Case, voice: Voice | None = None, seed: int = 0, **gen) -> OfficialRun:
    """A full official generation (torch RNG seeded with `seed`), with every step's logits captured."""
    import torch

    run = OfficialRun()
    torch.manual_seed(seed)
    with _capture(tts, run, abort_at_generate=False):
        _call(tts, case, voice, gen)
    return run


# ----------------------------------------------------------------------------- comparisons
def _shape_row(check: str, ours, off, subject: str, note: str = "") -> Row:
    """measure(), but a shape mismatch is a failing row rather than an exception."""
    ours, off = np.asarray(ours), np.asarray(off)
    if ours.shape != off.shape:
        bad = 0.0 if "min" in _entry(check) else float("inf")
        return Row(check, subject, bad, note=f"shape {ours.shape} vs official {off.shape}. {note}".strip())
    return measure(check, ours, off, subject, note=note)


def _entry(check: str) -> dict:
    from ..tolerance import TABLE

    return TABLE[check]


def text_token_rows(tts, ref, texts=None, subject: str = "") -> list[Row]:
    """Reference tokenizer vs the official processor on `texts`, raw and in the three templates.
    One row: the worst match fraction over all strings (1.0 = every id of every string equal)."""
    from vox.reference.qwen3 import tokenizer as tk

    tok = reference_model(ref).tokenizer if not isinstance(ref, tk.Qwen2Tokenizer) else ref
    texts = TEXT_SAMPLES if texts is None else texts
    worst, bad, n = 1.0, [], 0
    for t in texts:
        for s in (t, tk.assistant_text(t), tk.ref_text(t), tk.instruct_text(t)):
            ours = tok.encode(s)
            off = tts.processor(text=s, return_tensors="pt", padding=True)["input_ids"][0].numpy()
            v = metrics.match_fraction(ours, off)
            n += 1
            if v < worst or (v < 1.0 and len(bad) < 3):
                bad.append(repr(s[:40]))
            worst = min(worst, v)
    note = f"{n} strings, regex {tok.regex}" + (f"; differing: {', '.join(bad)}" if worst < 1.0 else "")
    return [Row("qwen3.text_tokens", subject or f"{len(texts)} texts x 4 templates", worst, note=note)]


def prompt_rows(tts, ref, case: Case, voice: Voice | None = None, subject: str = "") -> list[Row]:
    """Prefill embeddings and trailing text (+ tts_pad) vs what the official generate passes to talker.generate."""
    model = reference_model(ref)
    ours = reference_prompt(model, case, voice)
    off = official_prompt(tts, case, voice)
    subject = subject or case.name
    note = f"L={off.embeds.shape[0]}, trailing {off.trailing.shape[0]}"
    return [_shape_row("qwen3.prompt_embeds", ours.embeds, off.embeds, subject, note),
            _shape_row("qwen3.trailing_text", np.concatenate([ours.trailing, ours.tts_pad[None]]),
                       np.concatenate([off.trailing, off.tts_pad[None]]), subject, "trailing rows + tts_pad")]


def teacher_forced_rows(run: OfficialRun, ref, case: Case, voice: Voice | None = None, subject: str = "") -> list[Row]:
    """Reference talker/predictor logits at every step, fed the codes of the official run."""
    from vox.reference.qwen3.generate import teacher_force

    model = reference_model(ref)
    prompt = reference_prompt(model, case, voice)
    tl, pl = teacher_force(model, prompt, run.codes)
    T = run.codes.shape[0]
    subject = subject or case.name
    sub_t = f"{subject}, {run.talker_logits.shape[0]} steps"
    sub_p = f"{subject}, {T} frames x 15"
    pr, po = pl.reshape(-1, pl.shape[-1]), run.predictor_logits.reshape(-1, run.predictor_logits.shape[-1])
    return [_shape_row("qwen3.talker_logits", tl, run.talker_logits, sub_t),
            _shape_row("qwen3.talker_argmax", tl, run.talker_logits, sub_t),
            _shape_row("qwen3.predictor_logits", pr, po, sub_p),
            _shape_row("qwen3.predictor_argmax", pr, po, sub_p)]


# --- quantized weights
def quant_dtype(name: str, shape: tuple, quant: str) -> str:
    """The dtype `vox build --dtype f32 --quant quant` stores a tensor in: the converter's own plan
    (docs/formats.md), so these checks measure exactly what a converted model holds."""
    from vox.families.qwen3.convert import tensor_dtype

    return tensor_dtype(name, tuple(shape), "f32", quant, "f32")


class _Overlay(Mapping):
    def __init__(self, base, over: dict):
        self.base, self.over = base, over

    def __getitem__(self, k):
        return self.over[k] if k in self.over else self.base[k]

    def __iter__(self):
        return iter(self.base)

    def __len__(self):
        return len(self.base)


def quantized_checkpoint(ckpt, quant: str):
    """A Checkpoint whose talker-side weights are what the engine sees after storing them as `quant`.
    Returns (checkpoint, {dtype: count of linear weights}); embeddings and 1-D tensors stay float."""
    from vox.formats.quant import roundtrip

    over, counts = {}, {}
    for name in ckpt.names("talker."):
        shape = tuple(np.shape(ckpt.tensors[name]))
        dt = quant_dtype(name, shape, quant)
        if dt != "f32":
            over[name] = roundtrip(ckpt.get(name), dt)
        elif len(shape) == 2 and "embedding" not in name and shape[-1] % 32:
            dt = "f32 (width % 32 != 0)"
        else:
            continue
        counts[dt] = counts.get(dt, 0) + 1
    return replace(ckpt, tensors=_Overlay(ckpt.tensors, over), source=f"{ckpt.source} ({quant})"), counts


def quant_rows(run: OfficialRun, ckpt, case: Case, voice: Voice | None, quant: str, subject: str = "") -> list[Row]:
    """Teacher-forced logits of the reference with `quant` weights (round-tripped from `ckpt`) vs the
    official f32 logits: mean KL(official || ours) and top-5 agreement, talker and predictor rows."""
    qckpt, counts = quantized_checkpoint(ckpt, quant)
    note = "linear weights: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return format_rows(run, qckpt, case, voice, quant, subject=f"{subject or case.name} {quant}", note=note)


def format_rows(run: OfficialRun, ckpt, case: Case, voice: Voice | None, key: str, subject: str = "",
                note: str = "") -> list[Row]:
    """Teacher-forced logits of the reference on weights stored in a lossy format (`ckpt`, e.g. read
    from a bf16 or q8 .tmod) vs the official f32 logits: the qwen3.{key}_kl and qwen3.{key}_top5 rows,
    talker and predictor separately (raw logits)."""
    from vox.reference.qwen3.generate import teacher_force

    model = reference_model(ckpt)
    tl, pl = teacher_force(model, reference_prompt(model, case, voice), run.codes)
    subject = subject or case.name
    pr, po = pl.reshape(-1, pl.shape[-1]), run.predictor_logits.reshape(-1, run.predictor_logits.shape[-1])
    rows = []
    for part, ours, off in (("talker", tl, run.talker_logits), ("predictor", pr, po)):
        s = f"{subject} {part}, {off.shape[0]} rows"
        # random tiny nets give nearly flat distributions: say how flat, so the KL can be judged
        n = f"{note + '; ' if note else ''}official logit std {float(np.mean(np.std(off, axis=-1))):.3g}"
        rows += [_shape_row(f"qwen3.{key}_kl", ours, off, s, n), _shape_row(f"qwen3.{key}_top5", ours, off, s, n)]
    return rows


# --- greedy generation
def greedy_rows(tts, ref, case: Case, voice: Voice | None = None, max_new_tokens: int = 24, subject: str = "") -> list[Row]:
    """Free greedy generation (do_sample=False, subtalker_dosample=False, default repetition
    penalty): reference codes vs the official generate's codes."""
    from vox.reference.qwen3.generate import generate

    model = reference_model(ref)
    off = official_generate(tts, case, voice, do_sample=False, subtalker_dosample=False, max_new_tokens=max_new_tokens)
    params = model.params(do_sample=False, subtalker_dosample=False, max_new_tokens=max_new_tokens)
    ours = generate(model, reference_prompt(model, case, voice), params)
    subject = subject or case.name
    return [Row("qwen3.greedy_codes", f"{subject}, {off.codes.shape[0]} frames", metrics.match_fraction(ours, off.codes),
                note=f"reference {ours.shape[0]} frames, official {off.codes.shape[0]}")]


def eos_rows(tts, ref, case: Case, voice: Voice | None = None, bias: float = 1000.0, subject: str = "") -> list[Row]:
    """The stop rules, end to end: with the talker's EOS logit raised by `bias` at every step (a
    forward hook on the official codec_head, the same shift on the reference logits), greedy
    generation must hold EOS back for min_new_tokens=2 codes and then stop: 2 frames on both sides.
    And max_new_tokens=3 without the bias gives 2 frames (the last code is never expanded)."""
    from vox.reference.qwen3.generate import generate

    model = reference_model(ref)
    eos = model.eos_id
    head = tts.model.talker.codec_head

    def hook(mod, inp, out):
        out = out.clone()
        out[..., eos] += bias
        return out

    h = head.register_forward_hook(hook)
    try:
        off = official_generate(tts, case, voice, do_sample=False, subtalker_dosample=False, max_new_tokens=24)
    finally:
        h.remove()
    forward = model.talker.forward

    def biased(x, cache):
        hs, logits = forward(x, cache)
        logits = logits.copy()
        logits[:, eos] += np.float32(bias)
        return hs, logits

    model.talker.forward = biased
    try:
        ours = generate(model, reference_prompt(model, case, voice),
                        model.params(do_sample=False, subtalker_dosample=False, max_new_tokens=24))
    finally:
        del model.talker.forward
    subject = subject or case.name
    rows = [Row("qwen3.greedy_codes", f"{subject}, EOS raised by {bias:g}", metrics.match_fraction(ours, off.codes),
                note=f"reference {ours.shape[0]} frames, official {off.codes.shape[0]} (expected 2)")]
    off3 = official_generate(tts, case, voice, do_sample=False, subtalker_dosample=False, max_new_tokens=3)
    ours3 = generate(model, reference_prompt(model, case, voice),
                     model.params(do_sample=False, subtalker_dosample=False, max_new_tokens=3))
    rows.append(Row("qwen3.greedy_codes", f"{subject}, max_new_tokens=3", metrics.match_fraction(ours3, off3.codes),
                    note=f"reference {ours3.shape[0]} frames, official {off3.codes.shape[0]} (expected 2)"))
    return rows


# --- logits processing
def _inf_aware(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Processed scores hold -inf for removed tokens: equal masks compare as 0, a token removed on one
    side only as a difference of 1e30 (so max_abs fails loudly)."""
    a = np.where(np.isneginf(a), -1e30, a.astype(np.float64))
    b = np.where(np.isneginf(b), -1e30, b.astype(np.float64))
    return a, b


def official_processors(tts, case: Case, voice: Voice | None = None, **gen) -> tuple[list, list]:
    """The LogitsProcessorLists the official talker.generate and code_predictor.generate build for
    the generation settings `gen` (one short official run)."""
    run = official_generate(tts, case, voice, max_new_tokens=3, **gen)
    return run.talker_processors, run.predictor_processors


def logits_processing_rows(tts, ref, case: Case, voice: Voice | None = None, settings: list[dict] | None = None,
                           n: int = 64, seed: int = 0, subject: str = "") -> list[Row]:
    """Reference process_talker / process_predictor vs the processor lists the official generate
    built (captured from real runs with each setting), on random logits and random histories."""
    import torch

    from vox.reference.qwen3 import sampling

    model = reference_model(ref)
    if settings is None:
        settings = [dict(), dict(temperature=0.7, top_k=20, top_p=0.8, repetition_penalty=1.3,
                                 subtalker_temperature=1.3, subtalker_top_k=5, subtalker_top_p=0.6),
                    dict(top_k=0, temperature=1.0, subtalker_top_k=0, subtalker_top_p=0.95),
                    dict(do_sample=False, subtalker_dosample=False)]
    rng = np.random.default_rng(seed)
    rows = []
    for st in settings:
        tp, pp = official_processors(tts, case, voice, **st)
        params = model.params(**st)
        rules = sampling.TalkerRules.from_config(model.config, params.repetition_penalty)
        vt, vp = model.talker.vocab_size, model.predictor.vocab_size
        # Coarse values make ties at the top-k boundary (kept, as transformers keeps them). Not with
        # top-p < 1: which of several exactly tied tokens torch.sort puts first is unspecified there
        # (see reference/qwen3/sampling.py), so those draws use continuous values only.
        ties_t = not (params.do_sample and params.top_p < 1.0)
        ties_p = not (params.subtalker_dosample and params.subtalker_top_p < 1.0)
        worst_t = worst_p = 0.0
        for i in range(n):
            logits = (rng.standard_normal(vt) * 3).astype(np.float32)
            if i % 4 == 1 and ties_t:
                logits = np.round(logits * 2) / 2
            hist = rng.integers(0, 2048, size=int(rng.integers(0, 30)) if i % 8 else i % 3)
            if i % 5 == 2 and hist.size:
                hist[: hist.size // 2] = hist[0]  # repeats
            ours = sampling.process_talker(logits, hist.tolist(), rules, params.talker)
            off = tp(torch.from_numpy(hist[None].astype(np.int64)), torch.from_numpy(logits[None].copy()))[0].numpy()
            worst_t = max(worst_t, metrics.max_abs(*_inf_aware(ours, off)))
            pl = (rng.standard_normal(vp) * 3).astype(np.float32)
            if i % 4 == 1 and ties_p:
                pl = np.round(pl * 2) / 2
            ours = sampling.process_predictor(pl, params.predictor)
            off = pp(torch.zeros((1, int(rng.integers(0, 15))), dtype=torch.long), torch.from_numpy(pl[None].copy()))[0].numpy()
            worst_p = max(worst_p, metrics.max_abs(*_inf_aware(ours, off)))
        desc = ", ".join(f"{k}={v}" for k, v in st.items()) or "generation_config defaults"
        tnames = "+".join(type(p).__name__.replace("LogitsProcessor", "").replace("LogitsWarper", "") for p in tp)
        pnames = "+".join(type(p).__name__.replace("LogitsProcessor", "").replace("LogitsWarper", "") for p in pp) or "none"
        tie = lambda on: f", {(n + 2) // 4} with ties" if on else ""  # noqa: E731
        rows.append(Row("qwen3.logits_processing", f"{subject}talker, {desc}", worst_t,
                        note=f"{n} draws{tie(ties_t)}; {tnames}"))
        rows.append(Row("qwen3.logits_processing", f"{subject}predictor, {desc}", worst_p,
                        note=f"{n} draws{tie(ties_p)}; {pnames}"))
    return rows


def mrope_rows(n: int = 256, max_pos: int = 4096, seed: int = 0) -> list[Row]:
    """The general 3-axis rope (talker.mrope_cos_sin + nn.apply_rope) vs the official
    Qwen3TTSTalkerRotaryEmbedding + apply_multimodal_rotary_pos_emb with DISTINCT positions per
    axis (text prompts make the axes equal, so the conformance runs never exercise the selection),
    interleaved and sectioned, for the tiny fixtures' and the real models' head layout."""
    import torch
    from qwen_tts.core.models.configuration_qwen3_tts import Qwen3TTSTalkerConfig
    from qwen_tts.core.models.modeling_qwen3_tts import Qwen3TTSTalkerRotaryEmbedding, apply_multimodal_rotary_pos_emb

    from vox.reference.common import nn
    from vox.reference.common.nn import rope_inv_freq
    from vox.reference.qwen3.talker import mrope_cos_sin

    rng = np.random.default_rng(seed)
    rows = []
    for head_dim, section in ((16, [4, 2, 2]), (128, [24, 20, 20])):
        for interleaved in (True, False):
            cfg = Qwen3TTSTalkerConfig(hidden_size=head_dim * 4, num_attention_heads=4, num_key_value_heads=2,
                                       head_dim=head_dim, rope_theta=1000000,
                                       rope_scaling={"rope_type": "default", "mrope_section": section,
                                                     "interleaved": interleaved})
            rot = Qwen3TTSTalkerRotaryEmbedding(cfg)
            pos = rng.integers(0, max_pos, size=(3, n))
            q = rng.standard_normal((4, n, head_dim)).astype(np.float32)
            x = torch.from_numpy(q)[None]
            cos, sin = rot(x, torch.from_numpy(pos)[:, None, :])
            off, _ = apply_multimodal_rotary_pos_emb(x, x, cos, sin, section, interleaved)
            c, s = mrope_cos_sin(pos, rope_inv_freq(head_dim, 1000000), section, interleaved)
            ours = nn.apply_rope(q, c, s)
            kind = "interleaved" if interleaved else "sectioned"
            rows.append(measure("qwen3.mrope", ours, off[0].numpy(),
                                f"head_dim {head_dim} {section} {kind}, positions < {max_pos}"))
    return rows


# ----------------------------------------------------------------------------- battery
def standard_rows(tts, ckpt, voice: Voice | None = None, label: str = "", max_new_tokens: int = 24,
                  quants=("q8", "q4"), seed: int = 0) -> list[Row]:
    """Everything above for one model directory (what `vox verify` runs on the talker side).
    A Base model needs `voice` (official_voice(tts, wav, sr, transcript)); ckpt is the reference
    Checkpoint of the same weights (from the directory or a .tmod)."""
    model = reference_model(ckpt)
    label = f"{label} " if label else ""
    rows = text_token_rows(tts, model, subject=f"{label}tokenizer")
    cases = standard_cases(ckpt)
    for case in cases:
        rows += prompt_rows(tts, model, case, voice, subject=f"{label}{case.name}")
    case = cases[0]
    run = official_generate(tts, case, voice, seed=seed, max_new_tokens=max_new_tokens)
    rows += teacher_forced_rows(run, model, case, voice, subject=f"{label}{case.name}")
    for q in quants:
        rows += quant_rows(run, ckpt, case, voice, q, subject=f"{label}{case.name}")
    rows += greedy_rows(tts, model, case, voice, max_new_tokens=max_new_tokens, subject=f"{label}{case.name}")
    rows += eos_rows(tts, model, case, voice, subject=f"{label}{case.name}")
    rows += logits_processing_rows(tts, model, case, voice, n=32, subject=label)
    return rows
