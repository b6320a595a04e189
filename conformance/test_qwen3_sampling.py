"""Philox-driven sampling of the Qwen3-TTS reference: determinism and position addressing.

The official code samples with torch.multinomial (a stateful generator), so sampled codes cannot be
compared with it; what vox promises instead is that the codes are a pure function of (model, prompt,
parameters, seed): the same for any way the loop is driven (chunked, suspended and resumed), and
different for different seeds. The logits processing itself is compared with transformers in
test_qwen3_talker.py::test_logits_processing.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from vox.reference.common import philox
from vox.reference.common.checkpoint import Checkpoint
from vox.reference.qwen3 import sampling
from vox.reference.qwen3.generate import Session, TalkerModel, generate

FRAMES = 6
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="session")
def sampling_setup(qwen3_fixture):
    model = TalkerModel(Checkpoint.from_hf_dir(qwen3_fixture("custom06")))
    prompt = model.prompts.custom_voice("Seeds make the codes.", speaker="ryan", language="english")
    return model, prompt


seeds = st.integers(0, 2**64 - 1)


@settings(max_examples=6, **SETTINGS)
@given(seed=seeds)
def test_same_seed_same_codes(sampling_setup, seed):
    model, prompt = sampling_setup
    p = model.params(seed=seed, max_new_tokens=FRAMES + 1)
    a = generate(model, prompt, p)
    b = generate(model, prompt, p)
    assert a.shape == (FRAMES, 16)
    assert np.array_equal(a, b)


@settings(max_examples=6, **SETTINGS)
@given(seed=seeds, chunk=st.integers(1, FRAMES))
def test_chunked_driver_same_codes(sampling_setup, seed, chunk):
    """Stop every `chunk` frames, suspend (copy the session) and resume from the copy."""
    model, prompt = sampling_setup
    p = model.params(seed=seed, max_new_tokens=FRAMES + 1)
    whole = generate(model, prompt, p)
    s = Session(model, prompt, p)
    parts = []
    while True:
        part = s.run(max_frames=chunk)
        if part.shape[0] == 0:
            break
        parts.append(part)
        s = s.copy()
    assert np.array_equal(np.concatenate(parts), whole)


@settings(max_examples=4, **SETTINGS)
@given(seed=seeds)
def test_different_seeds_different_codes(sampling_setup, seed):
    model, prompt = sampling_setup
    a = generate(model, prompt, model.params(seed=seed, max_new_tokens=FRAMES + 1))
    b = generate(model, prompt, model.params(seed=seed ^ 1, max_new_tokens=FRAMES + 1))
    assert not np.array_equal(a, b)


@settings(max_examples=50, deadline=None)
@given(seed=seeds, frame=st.integers(0, 10_000), book=st.integers(0, 15),
       n=st.integers(1, 64), top=st.integers(1, 64))
def test_sample_respects_processing(seed, frame, book, n, top):
    """A sampled code is always one the processing kept, and the walk is monotone in u."""
    rng = np.random.default_rng(seed % 2**32)
    s = sampling.top_k((rng.standard_normal(n) * 3).astype(np.float32), top)
    u = philox.uniform(seed, frame, book)
    i = sampling.sample(s, u)
    assert np.isfinite(s[i])
    assert sampling.sample(s, 0.0) == int(np.flatnonzero(np.isfinite(s))[0])
    assert sampling.sample(s, 1 - 2**-53) == int(np.flatnonzero(np.isfinite(s))[-1])
    assert sampling.sample(s, min(u * 1.5, 1 - 2**-53)) >= i


def test_sample_distribution():
    """Inverse-CDF draws over Philox uniforms follow softmax(scores)."""
    s = np.array([0.0, 1.0, -np.inf, 2.0, 0.5, -1.0], dtype=np.float32)
    p = np.exp(np.where(np.isfinite(s), s, -np.inf).astype(np.float64) - 2.0)
    p /= p.sum()
    n = 20000
    u = philox.uniform(7, np.arange(n), 3)
    counts = np.bincount([sampling.sample(s, x) for x in u], minlength=s.size)
    assert counts[2] == 0
    # 5 sigma of a binomial count
    assert np.all(np.abs(counts - n * p) <= 5 * np.sqrt(n * p * (1 - p)) + 1e-9)


def test_greedy_lowest_index_on_ties():
    assert sampling.greedy(np.array([1.0, 3.0, 3.0, -np.inf], dtype=np.float32)) == 1
