"""Choosing codes from logits: the official logits processing, greedy, and Philox-driven sampling.

Logits processing mirrors what transformers' GenerationMixin._get_logits_processor builds for the two
generate calls of Qwen3-TTS (transformers 4.57.3, generation/logits_process.py):

  talker (Qwen3TTSForConditionalGeneration.generate -> talker.generate), in this order:
    1. RepetitionPenaltyLogitsProcessor(repetition_penalty)  over the group-0 codes generated so far
       (each distinct code once): s < 0 ? s * p : s / p                   (skipped when p == 1.0)
    2. MinLengthLogitsProcessor(min_length=2) and MinNewTokensLengthLogitsProcessor(min_new_tokens=2):
       EOS -> -inf while fewer than 2 codes have been generated (generate derives min_length =
       min_new_tokens + 0 prompt ids, so both are present and do the same thing)
    3. SuppressTokensLogitsProcessor(vocab-1024 .. vocab-1 except EOS)  -> -inf
    then, only when sampling:
    4. TemperatureLogitsWarper(temperature)  s / t                          (skipped when t == 1.0)
    5. TopKLogitsWarper(top_k)               s < (k-th largest s) -> -inf, ties kept   (skipped when k == 0)
    6. TopPLogitsWarper(top_p)               (skipped unless top_p < 1.0)
  code predictor (talker.code_predictor.generate, once per frame): its generation config is empty
    and generate gets only do_sample/top_k/top_p/temperature, so only 4-6 with the subtalker_*
    parameters (no repetition penalty, no suppression, no EOS).
  Greedy (do_sample=False) is the argmax of the processed scores, the lowest index on ties
  (torch.argmax).

Elementwise steps are float32 IEEE operations with the parameters rounded to float32 first, which is
what torch does with a Python scalar (checked bit for bit): s * float32(p), s / float32(p),
s / float32(t). A C implementation reproduces them exactly with float arithmetic (no FMA involved).

Sampling is NOT torch.multinomial: vox draws from a counter-based generator so that the codes depend
only on (seed, frame, codebook). With processed scores s (float32, removed entries -inf) and
u = philox.uniform(seed, frame, codebook) in [0, 1) (codebook 0 = the talker's group 0, 1..15 = the
predictor's groups; frame = 0-based index of the generated frame):

    m   = max_i s_i                                   (as float64)
    w_i = exp(float64(s_i) - m), 0 for s_i = -inf    (float64)
    c_i = w_0 + w_1 + ... + w_i                       (float64, accumulated in index order)
    t   = u * c_{V-1}                                 (float64)
    code = the first i with t < c_i; if none (only possible by rounding when u is within 2^-53 of 1),
           the last i with w_i > 0.

Top-p, defined in float64 in the same spirit: p_i = w_i / c_{V-1}; order the entries by ascending
score (stable: equal scores by ascending index); accumulate p in that order (float64, sequentially);
remove an entry when its accumulated value is <= 1 - top_p (float64), never the last (largest) one.
transformers does the same in float32 with an unstable sort, so the two can differ only for an entry
whose accumulated probability lies within float32 rounding of the threshold, or in WHICH of several
tokens with exactly equal scores at the threshold are removed (torch.sort leaves their order
unspecified; here the lower indices go first; the number removed is the same).

Everything above except exp is exact IEEE arithmetic in a fixed order; exp (float64) may differ by
an ulp between libms, which changes a code only if t falls within ~1e-16 (relative) of a bucket
boundary. With that caveat a C implementation reproduces the codes bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..common import philox

NEG_INF = np.float32(-np.inf)


# ----------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class SamplerParams:
    """One generate call's sampling settings (talker: do_sample/temperature/top_k/top_p; predictor:
    the subtalker_* values)."""

    do_sample: bool = True
    temperature: float = 0.9
    top_k: int = 50
    top_p: float = 1.0


@dataclass(frozen=True)
class TalkerRules:
    """What Qwen3TTSForConditionalGeneration.generate adds to the talker's generate call."""

    vocab_size: int
    eos_id: int
    repetition_penalty: float = 1.05
    min_new_tokens: int = 2

    @property
    def suppress_tokens(self) -> np.ndarray:
        """range(vocab - 1024, vocab) without EOS: the control codes the talker must never emit."""
        ids = np.arange(self.vocab_size - 1024, self.vocab_size)
        return ids[ids != self.eos_id]

    @classmethod
    def from_config(cls, config: dict, repetition_penalty: float = 1.05) -> "TalkerRules":
        tc = config["talker_config"]
        return cls(vocab_size=int(tc["vocab_size"]), eos_id=int(tc["codec_eos_token_id"]),
                   repetition_penalty=float(repetition_penalty))


# ----------------------------------------------------------------------------- processors
def repetition_penalty(scores: np.ndarray, history, penalty: float) -> np.ndarray:
    """RepetitionPenaltyLogitsProcessor: every code in `history` (once each) is made less likely."""
    out = np.array(scores, dtype=np.float32)
    ids = np.unique(np.asarray(history, dtype=np.int64))
    if ids.size:
        p = np.float32(penalty)
        s = out[ids]
        out[ids] = np.where(s < 0, s * p, s / p)
    return out


def min_new_tokens(scores: np.ndarray, n_generated: int, minimum: int, eos_id: int) -> np.ndarray:
    """MinNewTokensLengthLogitsProcessor: no EOS before `minimum` codes have been generated."""
    out = np.array(scores, dtype=np.float32)
    if n_generated < minimum:
        out[eos_id] = NEG_INF
    return out


def suppress(scores: np.ndarray, ids) -> np.ndarray:
    """SuppressTokensLogitsProcessor."""
    out = np.array(scores, dtype=np.float32)
    out[np.asarray(ids, dtype=np.int64)] = NEG_INF
    return out


def temperature(scores: np.ndarray, t: float) -> np.ndarray:
    """TemperatureLogitsWarper: s / float32(t)."""
    return (np.asarray(scores, dtype=np.float32) / np.float32(t)).astype(np.float32)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """TopKLogitsWarper: keep every score >= the k-th largest (ties at the boundary are all kept)."""
    s = np.asarray(scores, dtype=np.float32)
    k = min(max(int(k), 1), s.shape[-1])
    kth = np.partition(s, s.shape[-1] - k)[s.shape[-1] - k]
    return np.where(s < kth, NEG_INF, s).astype(np.float32)


def _weights(scores: np.ndarray) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float32).astype(np.float64)
    m = np.max(s)
    w = np.zeros_like(s)
    fin = s > -np.inf
    w[fin] = np.exp(s[fin] - m)
    return w


def top_p(scores: np.ndarray, p: float) -> np.ndarray:
    """TopPLogitsWarper (nucleus), in float64 (see the module docstring)."""
    s = np.asarray(scores, dtype=np.float32)
    w = _weights(s)
    probs = w / np.cumsum(w)[-1]
    order = np.argsort(s, kind="stable")  # ascending; equal scores by ascending index
    cum = np.cumsum(probs[order])         # sequential accumulation
    remove_sorted = cum <= (1.0 - float(p))
    remove_sorted[-1] = False             # min_tokens_to_keep = 1
    remove = np.zeros(s.shape, dtype=bool)
    remove[order] = remove_sorted
    return np.where(remove, NEG_INF, s).astype(np.float32)


def warp(scores: np.ndarray, params: SamplerParams) -> np.ndarray:
    """The sampling-only warpers, in transformers' order: temperature, top-k, top-p."""
    s = np.asarray(scores, dtype=np.float32)
    if not params.do_sample:
        return s
    if params.temperature is not None and params.temperature != 1.0:
        s = temperature(s, params.temperature)
    if params.top_k is not None and params.top_k != 0:
        s = top_k(s, params.top_k)
    if params.top_p is not None and params.top_p < 1.0:
        s = top_p(s, params.top_p)
    return s


def process_talker(logits: np.ndarray, history, rules: TalkerRules, params: SamplerParams) -> np.ndarray:
    """The talker's processed scores for the next group-0 code; history = group-0 codes generated
    so far in this generation (not the prompt's reference codes)."""
    s = np.asarray(logits, dtype=np.float32)
    if rules.repetition_penalty is not None and rules.repetition_penalty != 1.0:
        s = repetition_penalty(s, history, rules.repetition_penalty)
    if rules.min_new_tokens:
        s = min_new_tokens(s, len(history), rules.min_new_tokens, rules.eos_id)
    s = suppress(s, rules.suppress_tokens)
    return warp(s, params)


def process_predictor(logits: np.ndarray, params: SamplerParams) -> np.ndarray:
    """The code predictor's processed scores for one group."""
    return warp(logits, params)


# ----------------------------------------------------------------------------- choosing
def greedy(scores: np.ndarray) -> int:
    """argmax, the lowest index on ties (torch.argmax)."""
    return int(np.argmax(np.asarray(scores, dtype=np.float32)))


def sample(scores: np.ndarray, u: float) -> int:
    """Inverse-CDF draw from softmax(scores) with the uniform u in [0, 1) (see the module docstring)."""
    w = _weights(scores)
    c = np.cumsum(w)  # sequential, index order
    t = float(u) * c[-1]
    i = int(np.searchsorted(c, t, side="right"))  # first i with t < c_i
    if i >= w.shape[0]:
        i = int(np.flatnonzero(w > 0)[-1])
    return i


def choose(scores: np.ndarray, do_sample: bool, seed: int, frame: int, codebook: int) -> int:
    """Greedy, or a sample driven by philox.uniform(seed, frame, codebook)."""
    if not do_sample:
        return greedy(scores)
    return sample(scores, philox.uniform(seed, frame, codebook))
