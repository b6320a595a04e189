"""The Qwen3-TTS-12Hz generation loop: prompt -> codes [T, 16], and its teacher-forced twin.

Mirrors the loop that Qwen3TTSForConditionalGeneration.generate drives through talker.generate
(transformers' GenerationMixin._sample) and Qwen3TTSTalkerForConditionalGeneration.forward:

    prefill the talker with the prompt embeddings -> hidden h, logits
    frame f = 0, 1, ...:
        code0 = choose(process_talker(logits, history))       Philox codebook 0
        stop if code0 is EOS
        codes 1..15 = code predictor(h, embed(code0))          Philox codebooks 1..15
        x = sum of the 16 code embeddings + (trailing text f, or tts_pad after it)
        h, logits = talker(x)                                  one new position

max_new_tokens = N gives at most N - 1 frames: the official loop samples N group-0 codes, but the
N-th is never expanded into a frame (its code predictor would run in the forward of step N + 1) and
Qwen3TTSForConditionalGeneration.generate keeps only expanded frames. An EOS as code j gives j - 1
frames.

Session is the loop as a resumable state machine (one next_frame() call = one frame); since every
random draw is addressed by (seed, frame, codebook), stopping and resuming anywhere gives the same
codes as one uninterrupted run.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields, replace

import numpy as np

from . import sampling
from .code_predictor import CodePredictor
from .prompt import Prompt, PromptBuilder
from .talker import Talker
from .tokenizer import Qwen2Tokenizer


@dataclass(frozen=True)
class GenerationParams:
    """The generation settings of Qwen3TTSModel (names as the official keyword arguments)."""

    do_sample: bool = True
    temperature: float = 0.9
    top_k: int = 50
    top_p: float = 1.0
    repetition_penalty: float = 1.05
    subtalker_dosample: bool = True
    subtalker_temperature: float = 0.9
    subtalker_top_k: int = 50
    subtalker_top_p: float = 1.0
    max_new_tokens: int = 2048
    seed: int = 0

    @classmethod
    def from_generation_config(cls, generation_config: dict | None = None, **overrides) -> "GenerationParams":
        """Qwen3TTSModel._merge_generate_kwargs: an explicit value, else generation_config.json's,
        else the hard default (the dataclass defaults are the official hard defaults)."""
        names = {f.name for f in fields(cls)}
        bad = set(overrides) - names
        if bad:
            raise TypeError(f"unknown generation parameters: {', '.join(sorted(bad))}")
        vals = {k: v for k, v in (generation_config or {}).items() if k in names}
        vals.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**vals)

    @property
    def talker(self) -> sampling.SamplerParams:
        return sampling.SamplerParams(self.do_sample, self.temperature, self.top_k, self.top_p)

    @property
    def predictor(self) -> sampling.SamplerParams:
        return sampling.SamplerParams(self.subtalker_dosample, self.subtalker_temperature,
                                      self.subtalker_top_k, self.subtalker_top_p)


class TalkerModel:
    """The talker side of one checkpoint: talker, code predictor, tokenizer and prompt builder."""

    def __init__(self, ckpt):
        self.ckpt = ckpt
        self.config = ckpt.config
        self.talker = Talker(ckpt)
        self.predictor = CodePredictor(ckpt, code0_embedding=self.talker.codec_embedding)
        self.tokenizer = Qwen2Tokenizer.from_checkpoint(ckpt)
        self.prompts = PromptBuilder(ckpt.config, self.talker, self.predictor, self.tokenizer)
        self.num_code_groups = self.talker.num_code_groups
        self.eos_id = int(self.config["talker_config"]["codec_eos_token_id"])

    def params(self, **overrides) -> GenerationParams:
        """GenerationParams with this checkpoint's generation_config.json as the defaults."""
        return GenerationParams.from_generation_config(self.ckpt.generation_config, **overrides)

    def frame_embed(self, codes) -> np.ndarray:
        """Sum of a frame's 16 code embeddings (talker width), group 0 first, in order."""
        acc = self.talker.codec_embed([codes[0]])[0]
        for g in range(1, self.num_code_groups):
            acc = acc + self.predictor.group_embed(g, codes[g])
        return acc


class Session:
    """The generation loop, one frame per next_frame() call."""

    def __init__(self, model: TalkerModel, prompt: Prompt, params: GenerationParams):
        self.model = model
        self.prompt = prompt
        self.params = params
        self.rules = sampling.TalkerRules.from_config(model.config, params.repetition_penalty)
        self.cache = model.talker.new_cache()
        h, logits = model.talker.forward(prompt.embeds, self.cache)
        self.hidden, self.logits = h[-1], logits[-1]  # the last prompt position predicts frame 0
        self.frame = 0
        self.history: list[int] = []  # group-0 codes generated so far (repetition penalty, min tokens)
        self.done = False

    def next_frame(self) -> np.ndarray | None:
        """The codes [16] of the next frame, or None once EOS or the max_new_tokens guard is reached."""
        if self.done:
            return None
        p, m, f = self.params, self.model, self.frame
        if f >= p.max_new_tokens - 1:  # the N-th group-0 code would never be expanded
            self.done = True
            return None
        scores = sampling.process_talker(self.logits, self.history, self.rules, p.talker)
        code0 = sampling.choose(scores, p.do_sample, p.seed, f, 0)
        self.history.append(code0)
        if code0 == m.eos_id:
            self.done = True
            return None
        sub = p.predictor

        def choose(group: int, logits: np.ndarray) -> int:
            return sampling.choose(sampling.process_predictor(logits, sub), sub.do_sample, p.seed, f, group)

        rest, _ = m.predictor.predict(self.hidden, code0, choose)
        codes = np.concatenate([[code0], rest]).astype(np.int64)
        self._advance(codes)
        return codes

    def _advance(self, codes: np.ndarray) -> None:
        x = self.model.frame_embed(codes) + self.prompt.trailing_at(self.frame)
        h, logits = self.model.talker.forward(x[None, :], self.cache)
        self.hidden, self.logits = h[-1], logits[-1]
        self.frame += 1

    def run(self, max_frames: int | None = None) -> np.ndarray:
        """Up to max_frames more frames (all remaining if None) as [n, 16]."""
        out = []
        while max_frames is None or len(out) < max_frames:
            c = self.next_frame()
            if c is None:
                break
            out.append(c)
        return np.array(out, dtype=np.int64).reshape(-1, self.model.num_code_groups)

    def copy(self) -> "Session":
        """An independent copy (suspend/resume): caches and history are duplicated."""
        s = copy.copy(self)
        s.cache = self.cache.copy()
        s.history = list(self.history)
        return s


def generate(model: TalkerModel, prompt: Prompt, params: GenerationParams) -> np.ndarray:
    """Codes [T, 16] (EOS not included), as Qwen3TTSForConditionalGeneration.generate returns them."""
    return Session(model, prompt, params).run()


def teacher_force(model: TalkerModel, prompt: Prompt, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Run the loop on known codes [T, 16] instead of choosing them.

    Returns (talker logits [T + 1, vocab]: row f is the raw codec_head output that chooses frame f's
    group 0, row T the one after the last frame (where the official loop sampled EOS or its last,
    unexpanded code); predictor logits [T, 15, predictor vocab]: raw lm_head outputs of groups 1..15).
    """
    codes = np.asarray(codes, dtype=np.int64).reshape(-1, model.num_code_groups)
    s = Session(model, prompt, replace(GenerationParams(), max_new_tokens=codes.shape[0] + 2))
    talker_logits = [s.logits]
    predictor_logits = []
    for f in range(codes.shape[0]):
        _, lg = model.predictor.predict(s.hidden, codes[f, 0], lambda g, _l, f=f: codes[f, g])
        predictor_logits.append(lg)
        s._advance(codes[f])
        talker_logits.append(s.logits)
    n_pred = model.num_code_groups - 1
    return (np.stack(talker_logits).astype(np.float32),
            np.array(predictor_logits, dtype=np.float32).reshape(-1, n_pred, model.predictor.vocab_size))
