"""The Qwen2 byte-level BPE text tokenizer of Qwen3-TTS, and the official prompt text templates.

Real checkpoints ship vocab.json + merges.txt + tokenizer_config.json, no tokenizer.json. The
official wrapper (qwen_tts.inference.qwen3_tts_model.Qwen3TTSModel.from_pretrained) loads them with
`AutoProcessor.from_pretrained(path, fix_mistral_regex=True)`, which builds a Qwen2TokenizerFast by
converting the slow tokenizer (transformers.convert_slow_tokenizer.Qwen2Converter):

    normalizer      NFC
    pre-tokenizer   Split(regex, "isolated") then ByteLevel(add_prefix_space=False, use_regex=False)
    model           BPE(vocab, merges), no unk token, no byte fallback
    added tokens    every entry of tokenizer_config.json's added_tokens_decoder, matched as a whole
                    before normalization (all have normalized=False), so "<|im_start|>" is one token
    post-processor  ByteLevel: adds no tokens

The pre-tokenizer regex is NOT always the Qwen2 one. transformers 4.57.3
(PreTrainedTokenizerBase._patch_mistral_regex) replaces it with a "fixed Mistral" regex when the
tokenizer is loaded from a local directory whose config.json says transformers_version > 4.57.2 and
< 5.0.0 (or does not say), and the caller passed fix_mistral_regex=True, which the official wrapper
always does. Real Qwen3-TTS config.json files say 4.57.3, so a local official load tokenizes with
the Mistral regex (no contraction rule; splits camelCase words; keeps "/" after punctuation). A load
by hub id skips the patch (it checks the repo's tags for "mistralai" instead), so the official stack
itself tokenizes differently depending on how the model was found. vox follows the local-directory
behaviour, the one `official.load(dir)` and every converted model share: official_regex(config).

The `tokenizers` library (the same Rust code the official fast tokenizer runs) does the work; this
module only assembles it from the three files, exactly as the conversion does.
"""

from __future__ import annotations

import json
import re

import numpy as np

# transformers.models.qwen2.tokenization_qwen2.PRETOKENIZE_REGEX
QWEN2_REGEX = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
               r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
# transformers 4.57.3 PreTrainedTokenizerBase._patch_mistral_regex
MISTRAL_FIX_REGEX = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
                     r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|"
                     r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
REGEXES = {"qwen2": QWEN2_REGEX, "mistral_fix": MISTRAL_FIX_REGEX}

_MISTRAL_MODEL_TYPES = ("mistral", "mistral3", "voxtral", "ministral", "pixtral")


def _version_tuple(v: str) -> tuple[int, ...]:
    """Release numbers of a version string ("4.57.0.dev0" -> (4, 57, 0)), for the comparisons below.
    packaging.version orders "4.57.0.dev0" before "4.57.0"; either way it is <= 4.57.2."""
    nums = []
    for part in v.split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        nums.append(int(m.group()))
    return tuple(nums)


def official_regex(config: dict) -> str:
    """Which pre-tokenizer regex ("qwen2" or "mistral_fix") the official wrapper ends up with when it
    loads a local checkpoint directory whose config.json is `config` (transformers 4.57.3, see the
    module docstring). Mirrors _patch_mistral_regex for _is_local=True, fix_mistral_regex=True."""
    version = config.get("transformers_version")
    model_type = config.get("model_type")
    if version:
        vt = _version_tuple(str(version))
        if vt <= (4, 57, 2):
            if model_type is not None and model_type not in _MISTRAL_MODEL_TYPES:
                return "qwen2"
        elif vt >= (5, 0, 0):
            return "qwen2"
    return "mistral_fix"


def _split_lines(data: bytes) -> list[str]:
    # Python text-mode reading (what the slow tokenizer does): universal newlines, nothing else.
    # str.splitlines would also split on \x85 and \u2028, which are not line ends here.
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def read_merges(data: bytes) -> list[tuple[str, str]]:
    """merges.txt as Qwen2Tokenizer.__init__ reads it: strip each line, skip a first-line
    "#version:" header and empty lines, split on whitespace."""
    merges = []
    for i, line in enumerate(_split_lines(data)):
        line = line.strip()
        if (i == 0 and line.startswith("#version:")) or not line:
            continue
        merges.append(tuple(line.split()))
    return merges


class Qwen2Tokenizer:
    """Text -> token ids, as the official processor (Qwen2TokenizerFast) computes them.

    files: {"vocab.json", "merges.txt", "tokenizer_config.json"} -> bytes (Checkpoint.tokenizer_files).
    regex: "qwen2" or "mistral_fix" (see official_regex); from_checkpoint picks it as the official does.
    """

    def __init__(self, files: dict[str, bytes], regex: str = "qwen2"):
        from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
        from tokenizers.models import BPE

        if regex not in REGEXES:
            raise ValueError(f"unknown pre-tokenizer regex {regex!r}; known: {', '.join(REGEXES)}")
        self.regex = regex
        vocab = json.loads(files["vocab.json"].decode("utf-8"))
        merges = read_merges(files["merges.txt"])
        config = json.loads(files["tokenizer_config.json"].decode("utf-8"))

        tok = Tokenizer(BPE(vocab=vocab, merges=merges, dropout=None, unk_token=None,
                            continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False,
                            byte_fallback=False))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(REGEXES[regex]), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=bool(config.get("add_prefix_space", False)), use_regex=False),
        ])
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(trim_offsets=False)

        # Added tokens in id order: the library numbers new tokens consecutively after the vocab, so
        # adding them in order reproduces the ids of added_tokens_decoder (checked below).
        added = sorted(((int(i), t) for i, t in config.get("added_tokens_decoder", {}).items()), key=lambda x: x[0])
        for tid, t in added:
            at = AddedToken(t["content"], single_word=t.get("single_word", False), lstrip=t.get("lstrip", False),
                            rstrip=t.get("rstrip", False), normalized=t.get("normalized", False),
                            special=t.get("special", False))
            if t.get("special", False):
                tok.add_special_tokens([at])
            else:
                tok.add_tokens([at])
            got = tok.token_to_id(t["content"])
            if got != tid:
                raise ValueError(f"added token {t['content']!r}: id {got}, tokenizer_config.json says {tid}")
        self._tok = tok

    @classmethod
    def from_checkpoint(cls, ckpt) -> "Qwen2Tokenizer":
        """The tokenizer of a reference Checkpoint, with the regex the official wrapper would use (or the
        one a converted model file recorded)."""
        return cls(ckpt.tokenizer_files, regex=ckpt.extra.get("pre_tokenizer") or official_regex(ckpt.config))

    def encode(self, text: str) -> np.ndarray:
        """Token ids (int64) of `text`; no tokens are added around it (the official post-processor
        adds none either)."""
        return np.asarray(self._tok.encode(text, add_special_tokens=True).ids, dtype=np.int64)

    def token_id(self, token: str) -> int:
        tid = self._tok.token_to_id(token)
        if tid is None:
            raise KeyError(f"no token {token!r}")
        return tid

    def decode(self, ids) -> str:
        return self._tok.decode([int(i) for i in ids], skip_special_tokens=False)


# ----------------------------------------------------------------------------- templates
# qwen_tts.inference.qwen3_tts_model.Qwen3TTSModel._build_assistant_text / _build_ref_text /
# _build_instruct_text. The prompt builder slices these token ids at fixed offsets (3 role tokens in
# front, 5 or 2 tokens behind), exactly as Qwen3TTSForConditionalGeneration.generate does.
def assistant_text(text: str) -> str:
    return f"<|im_start|>assistant\n{text}<|im_end|>\n<|im_start|>assistant\n"


def ref_text(text: str) -> str:
    return f"<|im_start|>assistant\n{text}<|im_end|>\n"


def instruct_text(instruct: str) -> str:
    return f"<|im_start|>user\n{instruct}<|im_end|>\n"
