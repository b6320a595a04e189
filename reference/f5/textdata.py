"""The data behind the F5-TTS text frontend, from its published sources and in the compact form a
.tmod stores.

Sources (all MIT licensed):
  vocab.txt                      the model's vocabulary (shipped with the checkpoint / the f5_tts wheel)
  jieba 0.42.1: jieba/dict.txt   349045 words with frequencies (the dictionary rjieba / jieba-rs embed)
  jieba 0.42.1: jieba/finalseg/prob_start.py, prob_trans.py, prob_emit.py
                                 the HMM of the segmenter; jieba-rs (hmm.model) keeps the emission
                                 log-probabilities to 6 decimals ("%f"), the others as they are
  pypinyin 0.55.0: pinyin_dict.json, phrases_dict.json
                                 character and phrase readings (from the pinyin-data and
                                 phrase-pinyin-data projects)

Compact form (UTF-8 text, LF line ends), one blob each:
  vocab           one symbol per line, in id order
  jieba_dict      "word<SP>freq" per line, sorted by word (a repeated word of dict.txt keeps its last
                  frequency); the total is the sum of the frequencies
  jieba_hmm       jieba-rs's hmm.model format (start line, 4 transition lines, 4 emission lines
                  "char:logprob,...", B E M S order; '#' lines are comments)
  pinyin_chars    "char<TAB>reading" per line, first reading, TONE3 ("ni3", "lv4", "ma")
  pinyin_phrases  "phrase<TAB>r1 r2 ..." per line, first reading of each character, TONE3
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .jieba import STATES, HmmModel, Jieba, parse_dict
from .pinyin import PinyinData
from .tokenizer import Tokenizer, parse_vocab

BLOBS = ("vocab", "jieba_dict", "jieba_hmm", "pinyin_chars", "pinyin_phrases")


def _dict_literal(src: str, what: str) -> dict:
    """The dict literal a finalseg prob_*.py assigns (`P = {...}`), read without executing it."""
    i = src.find("{")
    if i < 0:
        raise ValueError(f"{what}: no dict literal")
    try:
        d = ast.literal_eval(src[i:].strip())
    except (ValueError, SyntaxError) as e:
        raise ValueError(f"{what}: not a literal dict ({e})") from None
    if not isinstance(d, dict):
        raise ValueError(f"{what}: not a dict")
    return d


def hmm_from_finalseg(prob_start: str, prob_trans: str, prob_emit: str) -> HmmModel:
    start = _dict_literal(prob_start, "prob_start.py")
    trans = _dict_literal(prob_trans, "prob_trans.py")
    emit = _dict_literal(prob_emit, "prob_emit.py")
    return HmmModel([float(start[s]) for s in STATES],
                    [[float(trans[a].get(b, -3.14e100)) for b in STATES] for a in STATES],
                    [{k: float("%f" % v) for k, v in emit[s].items()} for s in STATES])


@dataclass
class TextData:
    vocab: list[str]
    jieba_freqs: dict[str, int]
    hmm: HmmModel
    pinyin: PinyinData

    @classmethod
    def from_sources(cls, vocab_txt: bytes, jieba_dict_txt: str, prob_start: str, prob_trans: str,
                     prob_emit: str, pinyin_dict_json: str, phrases_dict_json: str) -> "TextData":
        return cls(parse_vocab(vocab_txt), parse_dict(jieba_dict_txt),
                   hmm_from_finalseg(prob_start, prob_trans, prob_emit),
                   PinyinData.from_pypinyin(pinyin_dict_json, phrases_dict_json))

    def blobs(self) -> dict[str, bytes]:
        for s in self.vocab:
            if "\n" in s or "\r" in s:
                raise ValueError(f"vocabulary symbol {s!r} holds a line break")
        return {
            "vocab": "".join(s + "\n" for s in self.vocab).encode("utf-8"),
            "jieba_dict": "".join(f"{w} {f}\n" for w, f in sorted(self.jieba_freqs.items())).encode("utf-8"),
            "jieba_hmm": self.hmm.dumps().encode("utf-8"),
            "pinyin_chars": self.pinyin.dumps_chars(),
            "pinyin_phrases": self.pinyin.dumps_phrases(),
        }

    @classmethod
    def from_blobs(cls, blobs: dict[str, bytes]) -> "TextData":
        missing = [b for b in BLOBS if b not in blobs]
        if missing:
            raise ValueError(f"text frontend data lacks {', '.join(missing)}")
        vocab = blobs["vocab"].decode("utf-8").split("\n")
        if vocab and vocab[-1] == "":
            vocab.pop()
        return cls(vocab, parse_dict(blobs["jieba_dict"].decode("utf-8")),
                   HmmModel.parse(blobs["jieba_hmm"].decode("utf-8")),
                   PinyinData.loads(blobs["pinyin_chars"], blobs["pinyin_phrases"]))

    def tokenizer(self) -> Tokenizer:
        return Tokenizer(self.vocab, Jieba(self.jieba_freqs, self.hmm), self.pinyin)
