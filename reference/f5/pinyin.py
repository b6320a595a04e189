"""Chinese characters -> pinyin with tone numbers, as pypinyin 0.55.0's
lazy_pinyin(text, style=Style.TONE3, tone_sandhi=True) computes it (the call f5-tts makes on every
segment the word segmenter returns).

  1. The text is split into runs of characters that have pinyin (pypinyin's RE_HANS ranges) and runs
     that do not; a run without pinyin is one output item, unchanged.
  2. A han run is cut by forward maximum matching against the phrase dictionary (pypinyin's mmseg,
     strict: a candidate is kept only while it is a prefix of some phrase, and only a complete
     phrase is emitted; otherwise one character).
  3. Each word gets the first reading of each character from the phrase dictionary when the word is
     a phrase, else each character's first reading from the character dictionary (a character
     without one stands for itself).
  4. Tone sandhi inside the word (pypinyin ToneSandhiMixin), in this order:
       third tone: if the word ENDS with a run of k >= 2 third-tone syllables, the first syllable
                   containing a 3 becomes 2 (k = 2), or the first k - 1 such syllables do (k > 2);
       不: before a 4th tone it becomes 2, otherwise (and at the end) 4;
       一: before a 4th tone it becomes 2, otherwise 4; at the end of the word 1.
  5. Style TONE3: tone marks become a digit after the syllable (nǐ -> ni3), ü -> v (lǜ -> lv4), the
     neutral tone has no digit.

The readings are kept in TONE3 form (PinyinData.from_pypinyin converts pypinyin's tone-marked data
once), and the sandhi rules act on the digit; that this equals pypinyin's tone-mark round trip for
every reading in the data is a conformance test.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from dataclasses import dataclass

# pypinyin.phonetic_symbol (MIT): tone-marked letters -> letter + tone digit
PHONETIC_SYMBOL = {
    "ā": "a1", "á": "a2", "ǎ": "a3", "à": "a4", "ē": "e1", "é": "e2", "ě": "e3", "è": "e4",
    "ō": "o1", "ó": "o2", "ǒ": "o3", "ò": "o4", "ī": "i1", "í": "i2", "ǐ": "i3", "ì": "i4",
    "ū": "u1", "ú": "u2", "ǔ": "u3", "ù": "u4", "ü": "v", "ǖ": "v1", "ǘ": "v2", "ǚ": "v3", "ǜ": "v4",
    "ń": "n2", "ň": "n3", "ǹ": "n4", "m̄": "m1", "ḿ": "m2", "m̀": "m4", "ê̄": "ê1", "ế": "ê2", "ê̌": "ê3",
    "ề": "ê4",
}
_SINGLE = {k: v for k, v in PHONETIC_SYMBOL.items() if len(k) == 1}
_MULTI = [(k, v) for k, v in PHONETIC_SYMBOL.items() if len(k) > 1]
_RE_SYMBOL = re.compile("[" + re.escape("".join(_SINGLE)) + "]")
_RE_TONE3 = re.compile(r"^([a-zêü]+)([1-5])([a-zêü]*)$")
_RE_DIGIT = re.compile(r"\d")

# pypinyin.constants.RE_HANS (wide build): the characters that have pinyin
_HANS_RANGES = [
    (0x3007, 0x3007), (0xE815, 0xE864), (0xFA18, 0xFA18), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A703, 0x2B73F), (0x2B740, 0x2B81D), (0x2B825, 0x2BF6E),
    (0x2C029, 0x2CE93), (0x2D016, 0x2D016), (0x2D11B, 0x2EBD9), (0x2F80A, 0x2FA1F), (0x30000, 0x3134A),
    (0x300F7, 0x31288), (0x30EDD, 0x30EDD), (0x30EDE, 0x30EDE), (0x31350, 0x32389),
]


def is_hans(c: str) -> bool:
    o = ord(c)
    return any(a <= o <= b for a, b in _HANS_RANGES)


@functools.lru_cache(maxsize=8192)
def to_tone3(tone_marked: str) -> str:
    """pypinyin's Style.TONE3 conversion of one tone-marked reading (ToneConverter.to_tone3)."""
    s = _RE_SYMBOL.sub(lambda m: _SINGLE[m.group(0)], tone_marked)
    for k, v in _MULTI:
        s = s.replace(k, v)
    return _RE_TONE3.sub(r"\1\3\2", s)


@dataclass
class PinyinData:
    chars: dict[str, str]              # character -> first reading, TONE3
    phrases: dict[str, list[str]]      # phrase -> first reading of each character, TONE3

    def __post_init__(self):
        self._sorted = sorted(self.phrases)

    @classmethod
    def from_pypinyin(cls, pinyin_dict_json: str, phrases_dict_json: str) -> "PinyinData":
        """From pypinyin's pinyin_dict.json ({codepoint: "r1,r2"}) and phrases_dict.json
        ({phrase: [[r1, ...], ...]}); heteronyms are dropped (lazy_pinyin keeps the first reading)."""
        chars = {chr(int(k)): to_tone3(v.split(",")[0]) for k, v in json.loads(pinyin_dict_json).items()}
        phrases = {}
        for k, v in json.loads(phrases_dict_json).items():
            if len(v) != len(k):
                raise ValueError(f"pypinyin phrase {k!r} has {len(v)} readings for {len(k)} characters")
            phrases[k] = [to_tone3(r[0]) for r in v]
        return cls(chars, phrases)

    # -- the compact text form stored in a .tmod: one entry per line, key TAB value
    def dumps_chars(self) -> bytes:
        return "".join(f"{k}\t{v}\n" for k, v in sorted(self.chars.items())).encode("utf-8")

    def dumps_phrases(self) -> bytes:
        return "".join(f"{k}\t{' '.join(v)}\n" for k, v in sorted(self.phrases.items())).encode("utf-8")

    @classmethod
    def loads(cls, chars: bytes, phrases: bytes) -> "PinyinData":
        c = dict(_tab_lines(chars, "pinyin characters"))
        p = {k: v.split(" ") for k, v in _tab_lines(phrases, "pinyin phrases")}
        for k, v in p.items():
            if len(v) != len(k):
                raise ValueError(f"pinyin phrase {k!r}: {len(v)} readings for {len(k)} characters")
        return cls(c, p)

    def is_prefix(self, s: str) -> bool:
        """Whether s starts some phrase (mmseg's PrefixSet)."""
        i = bisect.bisect_left(self._sorted, s)
        return i < len(self._sorted) and self._sorted[i].startswith(s)


def _tab_lines(data: bytes, what: str):
    for n, line in enumerate(data.decode("utf-8").split("\n"), 1):
        if not line:
            continue
        k, sep, v = line.partition("\t")
        if not sep or not k:
            raise ValueError(f"{what}, line {n}: expected KEY<TAB>VALUE")
        yield k, v


def _simple_seg(text: str) -> list[str]:
    """pypinyin simpleseg._seg: maximal runs of characters with / without pinyin."""
    out: list[str] = []
    for c in text:
        if out and is_hans(out[-1][-1]) == is_hans(c):
            out[-1] += c
        else:
            out.append(c)
    return out


def mmseg(text: str, data: PinyinData) -> list[str]:
    """pypinyin.seg.mmseg.Seg(no_non_phrases=True).cut."""
    out: list[str] = []
    remain = text
    while remain:
        last_valid, last_index = "", 0
        for index in range(len(remain)):
            word = remain[:index + 1]
            if data.is_prefix(word):
                if word in data.phrases:
                    last_valid, last_index = word, index + 1
            else:
                if last_valid:
                    out.append(last_valid)
                    remain = remain[last_index:]
                else:
                    out.append(remain[0])
                    remain = remain[1:]
                break
        else:
            if last_valid:
                out.append(last_valid)
                remain = remain[last_index:]
            else:
                if remain not in data.phrases:
                    out.extend(remain)
                else:
                    out.append(remain)
                break
    return out


def _third_tone(py: list[str]) -> list[str]:
    if "3" not in "".join(py):
        return py
    run = 0
    for p in py:
        run = run + 1 if "3" in p else 0
    py = list(py)
    if run == 2:
        for i, p in enumerate(py):
            if "3" in p:
                py[i] = p.replace("3", "2")
                break
    elif run > 2:
        n = 1
        for i, p in enumerate(py):
            if "3" in p:
                if n == run:
                    break
                py[i] = p.replace("3", "2")
                n += 1
    return py


def _bu_yi(word: str, py: list[str], char: str, final: str) -> list[str]:
    if char not in word:
        return py
    py = list(py)
    for i, h in enumerate(word):
        if h != char:
            continue
        if i < len(word) - 1:
            py[i] = py[i].replace("4", "2") if "4" in py[i + 1] else _RE_DIGIT.sub("4", py[i])
        else:
            py[i] = _RE_DIGIT.sub(final, py[i])
    return py


def tone_sandhi(word: str, py: list[str]) -> list[str]:
    """pypinyin ToneSandhiMixin.post_pinyin on TONE3 readings of the characters of `word`."""
    py = _third_tone(py)
    py = _bu_yi(word, py, "不", "4")
    return _bu_yi(word, py, "一", "1")


def word_pinyin(word: str, data: PinyinData) -> list[str]:
    if word in data.phrases:
        return list(data.phrases[word])
    return [data.chars.get(c, c) for c in word]


def lazy_pinyin_tone3(text: str, data: PinyinData) -> list[str]:
    """lazy_pinyin(text, style=Style.TONE3, tone_sandhi=True)."""
    out: list[str] = []
    for run in _simple_seg(text):
        if not is_hans(run[0]):
            out.append(run)
            continue
        for word in mmseg(run, data):
            out.extend(tone_sandhi(word, word_pinyin(word, data)))
    return out
