"""Qwen3-TTS talker side: reference (tokenizer, prompts, talker, code predictor, sampling) vs official.

All comparison logic lives in vox.verify.qwen3.talker (shared with `vox verify`); this file picks the
fixtures and requests and records the rows. Official runs are cached per session.
"""

from __future__ import annotations

import numpy as np
import pytest

from vox.reference.common.checkpoint import Checkpoint
from vox.verify.qwen3 import talker as vt

VARIANTS = ["base06", "base17", "custom17", "custom06", "design17"]
MAX_NEW_TOKENS = 24  # 23 frames (the official loop never expands its last code) unless EOS comes first
SEED = 1234


@pytest.fixture(scope="session")
def talker_env(qwen3_fixture, official, ref_audio):
    """env(variant) -> (official wrapper, reference Checkpoint, reference TalkerModel, Voice or None)."""
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
            cache[variant] = (tts, ckpt, model, voice)
        return cache[variant]

    return get


@pytest.fixture(scope="session")
def sampled_run(talker_env):
    """run(variant) -> (case, OfficialRun): an official sampled generation (do_sample=True for the
    talker and the predictor, generation_config defaults) with every step's logits captured."""
    cache = {}

    def get(variant):
        if variant not in cache:
            tts, ckpt, _, voice = talker_env(variant)
            case = vt.standard_cases(ckpt)[0]
            cache[variant] = case, vt.official_generate(tts, case, voice, seed=SEED, max_new_tokens=MAX_NEW_TOKENS,
                                                        do_sample=True, subtalker_dosample=True)
        return cache[variant]

    return get


@pytest.mark.parametrize("variant", VARIANTS)
def test_text_tokens(variant, talker_env, record):
    tts, _, model, _ = talker_env(variant)
    record(vt.text_token_rows(tts, model, subject=f"{variant}: {len(vt.TEXT_SAMPLES)} texts x 4 templates"))


def test_official_regex_rule():
    """The pre-tokenizer the official wrapper ends up with (transformers 4.57.3, local directory)."""
    from vox.reference.qwen3.tokenizer import official_regex

    assert official_regex({"transformers_version": "4.57.3", "model_type": "qwen3_tts"}) == "mistral_fix"
    assert official_regex({"model_type": "qwen3_tts"}) == "mistral_fix"
    assert official_regex({"transformers_version": "4.57.2", "model_type": "qwen3_tts"}) == "qwen2"
    assert official_regex({"transformers_version": "4.57.0.dev0", "model_type": "qwen3_tts"}) == "qwen2"
    assert official_regex({"transformers_version": "4.57.1", "model_type": "mistral"}) == "mistral_fix"
    assert official_regex({"transformers_version": "5.0.0", "model_type": "qwen3_tts"}) == "qwen2"


@pytest.mark.parametrize("variant", VARIANTS)
def test_prompts(variant, talker_env, record):
    tts, ckpt, model, voice = talker_env(variant)
    rows = []
    for case in vt.standard_cases(ckpt):
        rows += vt.prompt_rows(tts, model, case, voice, subject=f"{variant} {case.name}")
    record(rows)
    if variant == "custom06":  # the official wrapper drops instructions for 0b6 CustomVoice models
        with_instruct = next(c for c in vt.standard_cases(ckpt) if c.instruct)
        from dataclasses import replace

        a = vt.reference_prompt(model, with_instruct).embeds
        b = vt.reference_prompt(model, replace(with_instruct, instruct=None)).embeds
        assert np.array_equal(a, b)


@pytest.mark.parametrize("variant", VARIANTS)
def test_teacher_forced_logits(variant, talker_env, sampled_run, record):
    _, _, model, voice = talker_env(variant)
    case, run = sampled_run(variant)
    assert run.codes.shape[0] >= 2
    record(vt.teacher_forced_rows(run, model, case, voice, subject=f"{variant} {case.name} sampled"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_quantized_weights(variant, talker_env, sampled_run, record):
    _, ckpt, _, voice = talker_env(variant)
    case, run = sampled_run(variant)
    rows = []
    for quant in ("q8", "q4"):
        rows += vt.quant_rows(run, ckpt, case, voice, quant, subject=f"{variant} {case.name}")
    record(rows)


@pytest.mark.parametrize("variant", VARIANTS)
def test_greedy_codes(variant, talker_env, record):
    tts, ckpt, model, voice = talker_env(variant)
    case = vt.standard_cases(ckpt)[0]
    record(vt.greedy_rows(tts, model, case, voice, max_new_tokens=MAX_NEW_TOKENS, subject=f"{variant} {case.name}"))


def test_logits_processing(talker_env, record):
    tts, ckpt, model, voice = talker_env("custom17")
    rows = vt.logits_processing_rows(tts, model, vt.standard_cases(ckpt)[0], voice, n=48, subject="custom17 ")
    record(rows)


@pytest.mark.parametrize("variant", ["base17", "custom17"])
def test_stop_rules(variant, talker_env, record):
    """EOS (after min_new_tokens) and the max_new_tokens guard give the official frame counts."""
    tts, ckpt, model, voice = talker_env(variant)
    rows = record(vt.eos_rows(tts, model, vt.standard_cases(ckpt)[0], voice, subject=f"{variant}"))
    assert "official 2 " in rows[0].note and "reference 2 " in rows[0].note


def test_mrope_general(official, record):
    """The 3-axis rope with distinct axis positions (never exercised by text prompts)."""
    record(vt.mrope_rows())
