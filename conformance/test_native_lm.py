"""The native Qwen3-TTS language model (core/src/qwen3: talker, code predictor, prompts, sampling,
generation, sessions) vs the reference and the official code, for every fixture variant and dtype.

    prompts          native prefill embeddings vs official (f32) and vs the reference on the same .tmod
    teacher forcing  native talker/predictor logits on the codes of an official sampled run, vs the
                     reference on the same weights and vs the official f32 logits
    generation       free greedy codes == official greedy codes (f32); sampled codes == the reference's
                     sampled codes for several seeds (Philox sampling is bit-identical)
    sessions         same seed => same codes and audio for any thread count and chunk size, text fed in
                     pieces == text fed at once, cancellation, the stop rules, invalid inputs, stats

Official runs and engines are cached per session (tiny fixtures; the whole file runs in about a minute).
"""

from __future__ import annotations

import threading
import time
import unicodedata
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import vox
from vox.families.qwen3 import decode
from vox.families.qwen3.checkpoint import read_checkpoint
from vox.formats.tvoice import Voice as TVoice, write_voice
from vox.reference.common.checkpoint import Checkpoint
from vox.reference.qwen3 import tokenizer as tk
from vox.reference.qwen3.generate import generate, teacher_force
from vox.verify import metrics
from vox.verify.qwen3 import talker as vt
from vox.verify.tolerance import Row, measure

VARIANTS = ["base06", "base17", "custom17", "custom06", "design17"]
# name -> (dtype, quant) of `vox build`
DTYPES = {"f32": ("f32", "none"), "f16": ("f16", "none"), "bf16": ("bf16", "none"), "q8": ("f32", "q8"),
          "q4": ("f32", "q4")}
MAX_NEW_TOKENS = 24
SEED = 1234
CPU = "cpu"
HYP = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def streaming_default(case: vt.Case) -> bool:
    """The official wrappers' non_streaming_mode default: clone False, custom / design True."""
    return case.non_streaming_mode if case.non_streaming_mode is not None else case.kind != "clone"


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def lm_env(qwen3_fixture, official, ref_audio):
    """env(variant) -> dict(tts, ckpt, model, voice, cases): the official wrapper, the reference on
    the official weights, the official Base voice."""
    cache = {}

    def get(variant):
        if variant not in cache:
            d = qwen3_fixture(variant)
            tts = official(d)
            ckpt = Checkpoint.from_hf_dir(d)
            model = vt.reference_model(ckpt)
            voice = None
            if ckpt.config["tts_model_type"] == "base":
                wav, sr, text = ref_audio("ref_en_24k.wav")
                voice = vt.official_voice(tts, wav, sr, text)
            cache[variant] = dict(tts=tts, ckpt=ckpt, model=model, voice=voice, cases=vt.standard_cases(ckpt))
        return cache[variant]

    return get


@pytest.fixture(scope="session")
def native(qwen3_tmod, lm_env, tmp_path_factory):
    """native(variant, dtype, threads=1) -> dict(eng, tmod, ref (reference TalkerModel on the .tmod
    weights), voices {"icl", "xvector"} for Base)."""
    cache = {}

    def get(variant, dtype="f32", threads=1):
        key = (variant, dtype, threads)
        if key not in cache:
            tmod = qwen3_tmod(variant, *DTYPES[dtype])
            eng = vox.Engine(tmod, threads=threads)
            env = lm_env(variant)
            voices = {}
            if env["voice"] is not None:
                d = tmp_path_factory.mktemp("voices")
                for xv in (False, True):
                    path = d / f"{variant}-{'xvector' if xv else 'icl'}.tvoice"
                    write_voice(path, base_tvoice(env, eng.info["model_id"], xv))
                    voices["xvector" if xv else "icl"] = eng.load_voice(path)
            ref = None
            if dtype != "f32" and threads == 1:
                ref = vt.reference_model(read_checkpoint(tmod))
            elif dtype == "f32":
                ref = env["model"]
            cache[key] = dict(eng=eng, tmod=tmod, ref=ref, voices=voices)
        return cache[key]

    return get


def base_tvoice(env, model_id: str, x_vector_only: bool) -> TVoice:
    v = env["voice"]
    if x_vector_only:
        return TVoice("qwen3_tts", "xvector", model_id, "base", name="ref",
                      arrays={"speaker_embedding": v.speaker_embedding.astype(np.float32)})
    ids = env["model"].tokenizer.encode(tk.ref_text(v.ref_text)).astype(np.int64)
    return TVoice("qwen3_tts", "icl", model_id, "base", name="ref", texts={"ref_text": v.ref_text},
                  arrays={"speaker_embedding": v.speaker_embedding.astype(np.float32),
                          "ref_codes": v.ref_codes.astype(np.int64), "ref_text_tokens": ids})


def native_voice(nat, case: vt.Case):
    eng = nat["eng"]
    if case.kind == "clone":
        return nat["voices"]["xvector" if case.x_vector_only else "icl"]
    if case.kind == "custom":
        return eng.speaker_voice(case.speaker, case.instruct)
    return eng.design_voice(case.instruct or "")


def open_session(nat, case: vt.Case, text: str | None = None, end: bool = True, **kw):
    s = nat["eng"].session(native_voice(nat, case), language=case.language,
                           non_streaming_text=streaming_default(case), **kw)
    if text is None:
        text = case.text
    if text:
        s.feed(text)
    if end:
        s.end()
    return s


def run_session(nat, case: vt.Case, **kw):
    """(codes [T, 16], audio chunks) of a whole native session."""
    s = open_session(nat, case, **kw)
    chunks = list(s)
    codes = s.output("codes")
    s.close()
    return codes, chunks


def audio_of(chunks) -> np.ndarray:
    return np.concatenate([c.samples for c in chunks]) if chunks else np.zeros(0, np.float32)


@pytest.fixture(scope="session")
def sampled_runs(lm_env):
    """run(variant) -> (case, OfficialRun) of an official sampled generation with captured logits."""
    cache = {}

    def get(variant):
        if variant not in cache:
            env = lm_env(variant)
            case = env["cases"][0]
            cache[variant] = case, vt.official_generate(env["tts"], case, env["voice"], seed=SEED,
                                                        max_new_tokens=MAX_NEW_TOKENS, do_sample=True,
                                                        subtalker_dosample=True)
        return cache[variant]

    return get


# ----------------------------------------------------------------------------- prompts
@pytest.mark.parametrize("variant", VARIANTS)
def test_prompt_embeddings(variant, lm_env, native, record):
    """Every standard case: f32 vs the official prefill; every dtype vs the reference on the same weights."""
    env = lm_env(variant)
    rows = []
    for case in env["cases"]:
        off = vt.official_prompt(env["tts"], case, env["voice"])
        for dtype in DTYPES:
            nat = native(variant, dtype)
            s = open_session(nat, case)
            ours = s.run("prompt")["prompt"]
            s.close()
            ref = vt.reference_prompt(nat["ref"], case, env["voice"]).embeds
            sub = f"{variant} {dtype} {case.name}"
            if dtype == "f32":
                rows.append(vt._shape_row("qwen3.prompt_embeds", ours, off.embeds, sub))
                rows[-1].backend = CPU
            rows.append(vt._shape_row("qwen3.native_vs_reference_prompt", ours, ref, sub))
            rows[-1].backend = CPU
    record(rows)


# ----------------------------------------------------------------------------- teacher forcing
LOGIT_CHECKS = {"f32": "qwen3.native_vs_reference_logits", "f16": "qwen3.native_vs_reference_logits",
                "bf16": "qwen3.native_vs_reference_logits", "q8": "qwen3.native_vs_reference_q8_logits",
                "q4": "qwen3.native_vs_reference_q4_logits"}


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("variant", VARIANTS)
def test_teacher_forced_logits(variant, dtype, lm_env, native, sampled_runs, record):
    env = lm_env(variant)
    nat = native(variant, dtype)
    case, run = sampled_runs(variant)
    codes = run.codes
    assert codes.shape[0] >= 2
    s = open_session(nat, case)
    out = s.run("teacher_force", codes=codes)
    s.close()
    tl, pl = out["talker_logits"], out["predictor_logits"]
    assert tl.shape == (codes.shape[0] + 1, run.talker_logits.shape[1])
    assert pl.shape == (codes.shape[0], codes.shape[1] - 1, run.predictor_logits.shape[2])
    rtl, rpl = teacher_force(nat["ref"], vt.reference_prompt(nat["ref"], case, env["voice"]), codes)
    pr, rpr = pl.reshape(-1, pl.shape[-1]), rpl.reshape(-1, rpl.shape[-1])
    po = run.predictor_logits.reshape(-1, run.predictor_logits.shape[-1])
    sub_t = f"{variant} {dtype} {case.name}, {tl.shape[0]} steps"
    sub_p = f"{variant} {dtype} {case.name}, {codes.shape[0]} frames x 15"
    rows = [measure(LOGIT_CHECKS[dtype], tl, rtl, sub_t + " talker", backend=CPU),
            measure(LOGIT_CHECKS[dtype], pr, rpr, sub_p + " predictor", backend=CPU)]
    if dtype == "f32":
        rows += [measure("qwen3.talker_logits", tl, run.talker_logits, sub_t, backend=CPU),
                 measure("qwen3.talker_argmax", tl, run.talker_logits, sub_t, backend=CPU),
                 measure("qwen3.predictor_logits", pr, po, sub_p, backend=CPU),
                 measure("qwen3.predictor_argmax", pr, po, sub_p, backend=CPU)]
    else:
        for part, ours, off in (("talker", tl, run.talker_logits), ("predictor", pr, po)):
            sub = f"{variant} {case.name} {dtype} {part}, {off.shape[0]} rows"
            rows += [measure(f"qwen3.{dtype}_kl", ours, off, sub, backend=CPU),
                     measure(f"qwen3.{dtype}_top5", ours, off, sub, backend=CPU)]
    record(rows)


# ----------------------------------------------------------------------------- generation
@pytest.mark.parametrize("variant", VARIANTS)
def test_greedy_codes(variant, lm_env, native, record):
    """Free greedy generation (f32): native codes == the official generate's codes."""
    env = lm_env(variant)
    case = env["cases"][0]
    off = vt.official_generate(env["tts"], case, env["voice"], do_sample=False, subtalker_dosample=False,
                               max_new_tokens=MAX_NEW_TOKENS)
    ours, _ = run_session(native(variant), case, do_sample=False, subtalker_do_sample=False,
                          max_new_tokens=MAX_NEW_TOKENS)
    record(Row("qwen3.greedy_codes", f"{variant} {case.name}, {off.codes.shape[0]} frames",
               metrics.match_fraction(ours, off.codes), note=f"native {ours.shape[0]} frames", backend=CPU))


@pytest.mark.parametrize("variant", VARIANTS)
def test_sampled_codes(variant, lm_env, native, record):
    """Default sampling (generation config), several seeds and every case: native codes == the
    reference's codes (Philox sampling keyed by seed, frame, codebook), f32 weights."""
    env = lm_env(variant)
    model = env["model"]
    rows = []
    for i, case in enumerate(env["cases"]):
        prompt = vt.reference_prompt(model, case, env["voice"])
        for seed in (0, 7 + i, 2**63 + 12345):
            ref = generate(model, prompt, model.params(seed=seed, max_new_tokens=16))
            ours, _ = run_session(native(variant), case, seed=seed, max_new_tokens=16, chunk_frames=5)
            rows.append(Row("qwen3.sampled_codes_native", f"{variant} {case.name} seed {seed}",
                            metrics.match_fraction(ours, ref), note=f"{ref.shape[0]} frames", backend=CPU))
    record(rows)


@pytest.mark.parametrize("variant", ["base17", "custom06"])
def test_stop_rules(variant, lm_env, native, record):
    """max_new_tokens N gives N - 1 frames (as the official loop); EOS is held back for 2 codes."""
    env = lm_env(variant)
    case = env["cases"][0]
    model = env["model"]
    prompt = vt.reference_prompt(model, case, env["voice"])
    rows = []
    for n in (1, 2, 3, 5):
        ref = generate(model, prompt, model.params(do_sample=False, subtalker_dosample=False, max_new_tokens=n))
        ours, chunks = run_session(native(variant), case, do_sample=False, subtalker_do_sample=False,
                                   max_new_tokens=n, chunk_frames=2)
        assert ours.shape[0] == max(n - 1, 0) == ref.shape[0]
        assert sum(c.n_frames for c in chunks) == ours.shape[0]
        if chunks:
            assert chunks[-1].is_last and not any(c.is_last for c in chunks[:-1])
        rows.append(Row("qwen3.greedy_codes", f"{variant} native max_new_tokens={n}",
                        metrics.match_fraction(ours, ref), note=f"{ours.shape[0]} frames", backend=CPU))
    record(rows)


def test_guard(native, lm_env):
    """max_new_tokens = 0: the guard, 64 + 8 steps per text token (capped by the generation config's
    max_new_tokens), ends a generation that never samples EOS; the tiny model's greedy run never does."""
    env = lm_env("custom06")
    case = replace(env["cases"][0], text="Hi")
    nat = native("custom06")
    n_text = len(env["model"].tokenizer.encode(tk.assistant_text(case.text))) - 8
    codes, chunks = run_session(nat, case, chunk_frames=64, do_sample=False, subtalker_do_sample=False,
                                max_new_tokens=0)
    assert codes.shape[0] == 64 + 8 * n_text - 1
    assert chunks[-1].is_last and sum(c.n_frames for c in chunks) == codes.shape[0]


# ----------------------------------------------------------------------------- determinism and streaming
@pytest.fixture(scope="session")
def icl_case(lm_env):
    return replace(lm_env("base06")["cases"][0], text="Streaming text, one piece at a time.")


@settings(max_examples=4, **HYP)
@given(seed=st.integers(0, 2**64 - 1), chunk=st.sampled_from([1, 4, 7]))
def test_threads_and_chunks_same_audio(seed, chunk, native, icl_case):
    """Same seed => identical codes and audio for 1 vs 2 threads and any chunk_frames."""
    base_codes, base_chunks = run_session(native("base06", threads=1), icl_case, seed=seed, max_new_tokens=14,
                                          chunk_frames=4)
    codes, chunks = run_session(native("base06", threads=2), icl_case, seed=seed, max_new_tokens=14,
                                chunk_frames=chunk)
    assert np.array_equal(codes, base_codes)
    assert np.array_equal(audio_of(chunks), audio_of(base_chunks))
    assert audio_of(chunks).size == codes.shape[0] * 1920
    assert [c.first_frame for c in chunks] == list(range(0, codes.shape[0], chunk))


def test_two_engines_concurrently(native, icl_case):
    """Two engines of different thread counts in one process, running at the same time."""
    out = {}

    def work(threads):
        out[threads] = run_session(native("base06", threads=threads), icl_case, seed=99, max_new_tokens=12)

    ts = [threading.Thread(target=work, args=(n,)) for n in (1, 2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert np.array_equal(out[1][0], out[2][0])
    assert np.array_equal(audio_of(out[1][1]), audio_of(out[2][1]))


@settings(max_examples=6, **HYP)
@given(data=st.data())
def test_text_in_pieces(data, native, lm_env):
    """Text fed in random pieces (streaming text) gives the same codes as fed at once, for a plain
    and an ICL voice; NFC across piece boundaries is the Python layer's."""
    variant = data.draw(st.sampled_from(["custom17", "base17"]))
    env = lm_env(variant)
    case = replace(env["cases"][1] if variant == "custom17" else env["cases"][0], non_streaming_mode=False,
                   text="Cafe\u0301 au lait, then tea; numbers 1234 and CamelCase words.")
    nat = native(variant)
    whole, _ = run_session(nat, case, seed=5, max_new_tokens=20)
    text = case.text
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    pieces = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    s = open_session(nat, case, text="", end=False, seed=5, max_new_tokens=20, chunk_frames=3)
    got = []
    for p in pieces:
        s.feed(p)
        got += list(s.ready())
    s.end()
    got += list(s)
    assert np.array_equal(s.output("codes"), whole)
    assert sum(c.n_frames for c in got) == whole.shape[0]
    # the composed text gives the same codes
    nfc, _ = run_session(nat, replace(case, text=unicodedata.normalize("NFC", text)), seed=5, max_new_tokens=20)
    assert np.array_equal(nfc, whole)


@pytest.mark.parametrize("variant", ["custom17", "base17"])
@pytest.mark.parametrize("first", ["", " "])
def test_empty_first_piece(native, lm_env, variant, first):
    """An empty (or whitespace) first piece, then the text: the same codes as the text at once. The
    role template's last token is not stable before text follows it; an ICL session used to build its
    prompt on placeholder role ids then and fail with "the tokens of the text changed" (found by
    test_text_in_pieces with the cut [0])."""
    env = lm_env(variant)
    case = replace(env["cases"][1] if variant == "custom17" else env["cases"][0], non_streaming_mode=False,
                   text="then tea; numbers 1234 and CamelCase words.")
    nat = native(variant)
    whole, _ = run_session(nat, replace(case, text=first + case.text), seed=5, max_new_tokens=20)
    s = open_session(nat, case, text="", end=False, seed=5, max_new_tokens=20, chunk_frames=3)
    s.feed(first)
    got = list(s.ready())
    assert got == []  # nothing to speak yet
    s.feed(case.text)
    got += list(s.ready())
    s.end()
    got += list(s)
    assert np.array_equal(s.output("codes"), whole)
    assert sum(c.n_frames for c in got) == whole.shape[0]


def test_need_text(native, lm_env):
    env = lm_env("custom06")
    case = replace(env["cases"][1], non_streaming_mode=False)
    s = open_session(native("custom06"), case, text="", end=False, seed=1)
    assert s.pull() is None  # no text yet: VOX_CHUNK_NEED_TEXT
    s.close()
    s = open_session(native("custom06"), replace(case, non_streaming_mode=True), text="Hello there", end=False)
    assert s.pull() is None  # non-streaming text needs the whole text
    s.end()
    assert s.pull() is not None
    s.close()


def test_cancel_from_another_thread(native, lm_env):
    env = lm_env("custom17")
    nat = native("custom17", threads=2)
    s = open_session(nat, replace(env["cases"][0], text=" ".join(["A long text to keep the talker busy."] * 40)),
                     max_new_tokens=100000, decoder="reference", top_k=1, subtalker_top_k=1)
    # the tiny model tokenizes and prefills in milliseconds: the cancel 0.3 s later lands in the generation
    t = threading.Timer(0.3, s.cancel)
    t.start()
    t0 = time.perf_counter()
    with pytest.raises(vox.VoxError, match="cancelled"):
        s.pull()
    dt = time.perf_counter() - t0
    t.join()
    assert dt < 2.0
    assert s.output("codes").shape[0] > 0
    with pytest.raises(vox.VoxError, match="cancelled"):
        s.pull()
    s.close()


def test_reference_decoder_mode(native, lm_env):
    """decoder='reference': all audio in one last chunk, = the "decode" entry's reference mode (the
    reference part of an ICL voice cut as the official wrapper does)."""
    nat = native("base06")
    env = lm_env("base06")
    case = env["cases"][0]
    codes, chunks = run_session(nat, case, seed=3, max_new_tokens=10, decoder="reference")
    assert len(chunks) == 1 and chunks[0].is_last and chunks[0].n_frames == codes.shape[0]
    ref = env["voice"].ref_codes
    want = decode(nat["eng"], codes, ref, mode="reference")
    assert np.array_equal(chunks[0].samples, want)
    codes2, chunks2 = run_session(nat, case, seed=3, max_new_tokens=10, decoder_context=-1)
    assert np.array_equal(codes2, codes)
    assert np.array_equal(audio_of(chunks2), decode(nat["eng"], codes, ref, mode="stream", context=-1))


def test_invalid_inputs(native, lm_env, qwen3_tmod):
    nat = native("custom06")
    env = lm_env("custom06")
    case = env["cases"][0]
    with pytest.raises(vox.VoxError, match="empty"):
        run_session(nat, case, text="")
    with pytest.raises(vox.VoxError, match="language"):
        open_session(nat, replace(case, language="klingon"))
    with pytest.raises(vox.VoxError, match="language"):  # dialects are chosen by the speaker, not asked for
        open_session(nat, replace(case, language="sichuan_dialect"))
    design = native("design17")["eng"].design_voice("calm")
    with pytest.raises(vox.VoxError):
        nat["eng"].session(design)
    icl = native("base06")["voices"]["icl"]
    with pytest.raises(vox.VoxError):
        native("base17")["eng"].session(icl)
    with pytest.raises(vox.VoxError):  # voice of the wrong variant (same weights is impossible: model_id)
        native("custom17")["eng"].session(icl)
    s = open_session(nat, case)
    with pytest.raises(vox.VoxError, match="range"):
        s.run("teacher_force", codes=np.full((2, 16), 5000, np.int32))


def test_stats_and_profile(native, lm_env, capfd, monkeypatch):
    nat = native("custom06")
    case = lm_env("custom06")["cases"][0]
    before = nat["eng"].stats()
    monkeypatch.setenv("VOX_PROFILE", "1")
    codes, chunks = run_session(nat, case, seed=2, max_new_tokens=9)
    after = nat["eng"].stats()
    st0, st1 = before["stages"], after["stages"]
    assert list(st1) == ["prefill", "talker", "predictor", "decoder", "voice"]
    assert st1["talker"]["count"] - st0["talker"]["count"] == codes.shape[0] == 8
    assert after["samples_produced"] - before["samples_produced"] == audio_of(chunks).size
    for k in ("prefill", "talker", "predictor", "decoder"):
        assert st1[k]["ms"] > st0[k]["ms"]
    assert after["compute_ms"] > before["compute_ms"]
    err = capfd.readouterr().err
    assert "vox profile" in err and "talker" in err and "predictor" in err
