"""Text -> token ids, as F5-TTS does it (f5_tts.model.utils: get_tokenizer "custom",
convert_char_to_pinyin, list_str_to_idx).

Vocabulary: vocab.txt, one symbol per line; symbol i is line i without its last character (the line
break: Python's text mode reads CR LF as LF, so a CRLF file gives the same symbols). Characters are
symbols ("a", ",", " ", "é", "你" ...) and so are tone-numbered pinyin syllables ("ni3", "hao3").
A symbol outside the vocabulary becomes id 0 (the space, by convention of the released vocabulary).

convert_char_to_pinyin(text):
  text <- text with ; -> ,  “ ” -> "  ‘ ’ -> '
  for each segment of the word segmenter (reference/f5/jieba.py, rjieba.cut):
    ASCII only:           its characters; a segment of 2+ characters gets a " " before it unless the
                          previous symbol is one of  space : ' "
    all 3-byte UTF-8:     pinyin of the whole segment (reference/f5/pinyin.py, context-dependent
                          readings and tone sandhi inside the segment); every character in
                          U+3100..U+9FFF is preceded by a " " symbol
    mixed:                per character: < U+0100 as is; U+3100..U+9FFF " " + its pinyin alone;
                          anything else as is
"""

from __future__ import annotations

from dataclasses import dataclass

from .jieba import Jieba
from .pinyin import PinyinData, lazy_pinyin_tone3

CUSTOM_TRANS = str.maketrans({";": ",", "“": '"', "”": '"', "‘": "'", "’": "'"})


def parse_vocab(data: bytes) -> list[str]:
    """The symbols of a vocab.txt (bytes), in id order, as get_tokenizer(path, "custom") reads them:
    universal newlines (CR LF and CR are line breaks), each line minus its final character. A repeated
    symbol keeps its LAST line number in the official map; such a vocabulary is refused here."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"vocab.txt is not UTF-8 (byte {e.start})") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
        symbols = [ln for ln in lines]                # every line ended with its line break
    else:
        symbols = lines[:-1] + [lines[-1][:-1]] if lines else []  # the last line loses a character
    if len(set(symbols)) != len(symbols):
        seen, dup = set(), None
        for s in symbols:
            if s in seen:
                dup = s
                break
            seen.add(s)
        raise ValueError(f"vocab.txt lists the symbol {dup!r} twice")
    if not symbols:
        raise ValueError("vocab.txt is empty")
    return symbols


def _is_chinese(c: str) -> bool:
    return "\u3100" <= c <= "\u9fff"


def convert_char_to_pinyin(text: str, seg: Jieba, py: PinyinData) -> list[str]:
    """f5_tts.model.utils.convert_char_to_pinyin([text])[0] (polyphone=True)."""
    out: list[str] = []
    for s in seg.cut(text.translate(CUSTOM_TRANS)):
        nbytes = len(s.encode("utf-8"))
        if nbytes == len(s):
            if out and nbytes > 1 and out[-1] not in " :'\"":
                out.append(" ")
            out.extend(s)
        elif nbytes == 3 * len(s):
            readings = lazy_pinyin_tone3(s, py)
            if len(readings) < len(s):
                raise ValueError(f"segment {s!r}: pinyin gave {len(readings)} items for {len(s)} characters "
                                 "(the official code fails here too)")
            for i, c in enumerate(s):
                if _is_chinese(c):
                    out.append(" ")
                out.append(readings[i])
        else:
            for c in s:
                if ord(c) < 256:
                    out.append(c)
                elif _is_chinese(c):
                    out.append(" ")
                    out.extend(lazy_pinyin_tone3(c, py))
                else:
                    out.append(c)
    return out


@dataclass
class Tokenizer:
    symbols: list[str]
    seg: Jieba
    pinyin: PinyinData

    def __post_init__(self):
        self.ids = {s: i for i, s in enumerate(self.symbols)}

    def symbols_of(self, text: str) -> list[str]:
        return convert_char_to_pinyin(text, self.seg, self.pinyin)

    def encode(self, text: str) -> list[int]:
        """list_str_to_idx: each symbol's id, 0 for a symbol outside the vocabulary."""
        return [self.ids.get(s, 0) for s in self.symbols_of(text)]
