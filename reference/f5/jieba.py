"""Chinese word segmentation as f5-tts 1.1.22 does it: rjieba 0.2.2's `cut(text)` (hmm=True), i.e.
jieba-rs 0.11 (Rust port of jieba), in Python.

The text is split into maximal runs of "han" characters (CJK ideographs, ASCII letters and digits,
and + # & . _ % -) and the rest; every character of the rest is its own token (CR LF stays one).
Each han run is segmented on its word graph:
  * DAG: from every position, each dictionary word that starts there (dict.txt of jieba 0.42.1,
    349045 words with frequencies; the same set rjieba embeds);
  * route: dynamic programming from the end, route[i] = max over words w = s[i:j] of
    (ln freq(w) - ln total + route[j], j) (ties to the larger j); a position where no word starts
    steps one character with ln 1 - ln total;
  * along the route, consecutive one-character steps are buffered: a single one is a word, a run
    that is itself a dictionary word is split into characters, any other run is cut by the HMM.
HMM (jieba's finalseg, B/M/E/S tagging, Viterbi; emission log-probabilities as jieba-rs stores them,
6 decimals): runs of U+4E00..U+9FD5 of two or more characters are tagged, a word is each B..E or S;
other characters are split into alphanumeric tokens (letters and digits, joined across single '.',
'_' or '-', with an optional trailing '%') and the text between them.
Ties between equal scores go to the larger end position / state index, as Rust's max_by on
(score, index) pairs does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MIN_FLOAT = -3.14e100
STATES = "BEMS"  # jieba-rs state indices: Begin 0, End 1, Middle 2, Single 3
B, E, M, S = 0, 1, 2, 3
_PREV = {B: (E, S), E: (B, M), M: (M, B), S: (S, E)}  # allowed previous states, in jieba-rs order


def is_cjk(c: str) -> bool:
    o = ord(c)
    return (0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2A6DF
            or 0x2A700 <= o <= 0x2B73F or 0x2B740 <= o <= 0x2B81F or 0x2B820 <= o <= 0x2CEAF
            or 0x2CEB0 <= o <= 0x2EBEF or 0x2F800 <= o <= 0x2FA1F)


def is_han_default(c: str) -> bool:
    return is_cjk(c) or (c.isascii() and c.isalnum()) or c in "+#&._%-"


def _is_hmm_han(c: str) -> bool:
    return "\u4e00" <= c <= "\u9fd5"


@dataclass
class HmmModel:
    start: list[float]                 # [4]
    trans: list[list[float]]           # [4][4]
    emit: list[dict[str, float]]       # [4] char -> log-probability

    @classmethod
    def parse(cls, text: str) -> "HmmModel":
        """jieba-rs hmm.model: '#' comment lines; start probabilities; 4 lines of transitions; 4 lines
        of "char:logprob,..." emissions (B, E, M, S)."""
        lines = [x for x in text.splitlines() if x and not x.startswith("#")]
        if len(lines) != 9:
            raise ValueError(f"HMM model: expected 9 data lines, found {len(lines)}")
        start = [float(v) for v in lines[0].split()]
        trans = [[float(v) for v in ln.split()] for ln in lines[1:5]]
        emit = []
        for ln in lines[5:9]:
            m = {}
            for kv in ln.split(","):
                k, v = kv.rsplit(":", 1)
                if len(k) != 1:
                    raise ValueError(f"HMM model: emission key {k!r} is not one character")
                m[k] = float(v)
            emit.append(m)
        if len(start) != 4 or any(len(r) != 4 for r in trans):
            raise ValueError("HMM model: start must have 4 values and the transition matrix 4x4")
        return cls(start, trans, emit)

    def dumps(self) -> str:
        out = ["#prob_start", " ".join(repr(v) for v in self.start), "#prob_trans 4x4 matrix"]
        out += [" ".join(repr(v) for v in r) for r in self.trans]
        out.append("#prob_emit 4 lines")
        for st, m in zip(STATES, self.emit):
            out.append("#" + st)
            out.append(",".join(f"{k}:{v!r}" for k, v in m.items()))
        return "\n".join(out) + "\n"


class Jieba:
    """jieba-rs Jieba::cut(text, hmm=True) over a word -> frequency dictionary and an HMM."""

    def __init__(self, freqs: dict[str, int], hmm: HmmModel):
        self.freqs = freqs
        self.log_freq = {w: (math.log(f) if f > 0 else -math.inf) for w, f in freqs.items()}
        self.total = sum(freqs.values())
        self.logtotal = math.log(self.total)
        self.max_len = max(len(w) for w in freqs)
        self.hmm = hmm

    # -- the word graph
    def _route(self, s: str) -> list[int]:
        n = len(s)
        score = [0.0] * (n + 1)
        nxt = [0] * (n + 1)
        log1 = 0.0 - self.logtotal
        for i in range(n - 1, -1, -1):
            best = None
            for j in range(i + 1, min(n, i + self.max_len) + 1):
                lf = self.log_freq.get(s[i:j])
                if lf is None:
                    continue
                cand = (lf - self.logtotal + score[j], j)
                if best is None or cand >= best:
                    best = cand
            if best is None:
                best = (log1 + score[i + 1], i + 1)
            score[i], nxt[i] = best
        return nxt

    def _cut_dag_hmm(self, s: str, out: list[str]) -> None:
        nxt = self._route(s)
        x, left = 0, None

        def flush(word: str) -> None:
            if len(word) == 1:
                out.append(word)
            elif word not in self.freqs:
                self._hmm_cut(word, out)
            else:
                out.extend(word)

        while x < len(s):
            y = nxt[x]
            if y - x == 1:
                if left is None:
                    left = x
            else:
                if left is not None:
                    flush(s[left:x])
                    left = None
                out.append(s[x:y])
            x = y
        if left is not None:
            flush(s[left:])

    # -- the HMM for words outside the dictionary
    def _viterbi(self, s: str) -> list[int]:
        h = self.hmm
        em = lambda st, ch: h.emit[st].get(ch, MIN_FLOAT)  # noqa: E731
        v = [[0.0] * 4 for _ in s]
        prev = [[None] * 4 for _ in s]
        for y in (B, M, E, S):
            v[0][y] = h.start[y] + em(y, s[0])
        for t in range(1, len(s)):
            for y in (B, M, E, S):
                e = em(y, s[t])
                # (score, state) tuples: an equal score goes to the larger state index, as max_by on
                # jieba-rs's (f64, State) pairs does
                best = max((v[t - 1][y0] + h.trans[y0][y] + e, y0) for y0 in _PREV[y])
                v[t][y], prev[t][y] = best
        last = max((v[-1][E], E), (v[-1][S], S))[1]
        path = [0] * len(s)
        path[-1] = last
        for t in range(len(s) - 1, 0, -1):
            last = prev[t][last]
            path[t - 1] = last
        return path

    def _hmm_words(self, s: str, out: list[str]) -> None:
        path = self._viterbi(s)
        begin, nxt = 0, 0
        for i, st in enumerate(path):
            if st == B:
                begin = i
            elif st == E:
                out.append(s[begin:i + 1])
                nxt = i + 1
            elif st == S:
                out.append(s[i])
                nxt = i + 1
        if nxt < len(s):
            out.append(s[nxt:])

    def _hmm_cut(self, word: str, out: list[str]) -> None:
        for run, han in _runs(word, _is_hmm_han):
            if han:
                if len(run) > 1:
                    self._hmm_words(run, out)
                else:
                    out.append(run)
            else:
                _skip_split(run, out)

    def cut(self, text: str) -> list[str]:
        out: list[str] = []
        for run, han in _runs(text, is_han_default):
            if han:
                self._cut_dag_hmm(run, out)
                continue
            i = 0
            while i < len(run):
                if run[i] == "\r" and i + 1 < len(run) and run[i + 1] == "\n":
                    out.append("\r\n")
                    i += 2
                else:
                    out.append(run[i])
                    i += 1
        return out


def _alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _skip_split(run: str, out: list[str]) -> None:
    """Outside the HMM's han range: alphanumeric tokens (an ASCII alphanumeric run, then any number of
    '.', '_' or '-' each followed by another run, then an optional '%'), and the gaps between them."""
    pos = 0
    while pos < len(run):
        cur = pos
        while cur < len(run) and not _alnum(run[cur]):
            cur += 1
        if cur > pos:
            out.append(run[pos:cur])
        if cur == len(run):
            break
        end = cur
        while True:
            while end < len(run) and _alnum(run[end]):
                end += 1
            if end + 1 < len(run) and run[end] in "._-" and _alnum(run[end + 1]):
                end += 1
            else:
                break
        if end < len(run) and run[end] == "%":
            end += 1
        out.append(run[cur:end])
        pos = end


def _runs(text: str, pred):
    """Maximal runs of characters on which pred is True / False, in order: (run, pred value)."""
    i = 0
    while i < len(text):
        k = pred(text[i])
        j = i + 1
        while j < len(text) and pred(text[j]) == k:
            j += 1
        yield text[i:j], k
        i = j


def parse_dict(text: str) -> dict[str, int]:
    """jieba dict.txt ("word freq [tag]" per line, whitespace-separated; a repeated word keeps its last
    frequency, as jieba-rs load_dict does)."""
    freqs: dict[str, int] = {}
    for n, line in enumerate(text.split("\n"), 1):
        parts = line.split()
        if not parts:
            continue
        try:
            freqs[parts[0]] = int(parts[1]) if len(parts) > 1 else 0
        except ValueError:
            raise ValueError(f"jieba dictionary line {n}: frequency {parts[1]!r} is not an integer") from None
    if not freqs:
        raise ValueError("the jieba dictionary is empty")
    return freqs
