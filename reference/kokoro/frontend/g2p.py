"""Words -> phonemes: user overrides, misaki's special words, the lexicon (with misaki's case rules
and capital stress), then the out-of-vocabulary chain: suffix strip, compound split, letter-to-sound.

Where misaki has a behaviour it is followed (misaki/en.py of 0.9.4, run without a POS tagger):
- "a" -> ɐ, "an" -> ɐn, "I" -> ˌI, "in" -> ɪn (ˈɪn phrase-final), "the" -> ði before a vowel else ðə, "to" -> tʊ / tə /
  tu (before a vowel / a consonant / nothing), "am" -> ɐm before more words.
- a capitalized word takes stress 0.5, an all-caps word stress 2 (misaki's cap_stresses, apply_stress);
  an unknown all-caps word is spelled ("FBI" -> ˌɛfbˌiˈI; "NASA" is in the lexicon and is read).
- suffixes -s/-es/-ies, -ed, -ing with misaki's stem rules and phonology (/s z ᵻz/, /t d ᵻd/, flap
  before -ing); vox adds -er, -est, -ly, -ness, -ment, -ful, -less, doubled consonants and -ied.
Compound split (both halves >= 3 letters, lexicon words, the right one possibly suffixed): the split
with the longest shorter half wins (ties: the longer left half); the right half's stress becomes
secondary.
"""

from __future__ import annotations

from .lexicon import Lexicon
from .lts import letters_to_sounds
from ...text.normalize import Item, ascii_lower, is_lower, is_upper

PRIMARY, SECONDARY = "ˈ", "ˌ"
VOWELS = frozenset("AIOQWYaiuæɑɒɔəɛɜɪʊʌᵻ")
CONSONANTS = frozenset("bdfhjklmnpstvwzðŋɡɹɾʃʒʤʧθ")
NON_QUOTE_PUNCTS = frozenset(";:,.!?—…")
US_TAUS = frozenset("AIOWYiuæɑəɛɪɹʊʌ")
OPENING = frozenset("(“")
DIPHTHONGS = frozenset("AIOQWYʤʧ")
DOUBLE = frozenset("bcdgklmnprstvxz")
# (suffix, phonemes added, minimum word length) for the suffixes beyond misaki's -s -ed -ing.
EXTRA_SUFFIXES = [("er", "əɹ", 5), ("est", "əst", 6), ("ly", "li", 5), ("ness", "nəs", 6), ("ment", "mənt", 7),
                  ("ful", "fəl", 6), ("less", "ləs", 7)]


def ascii_upper(s: str) -> str:
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in s)


def has_vowel(ps: str) -> bool:
    return any(c in VOWELS for c in ps)


def _stress_first_vowel(ps: str, mark: str) -> str:
    for k, c in enumerate(ps):
        if c in VOWELS:
            return ps[:k] + mark + ps[k:]
    return ps


def apply_stress(ps: str, stress: float | None) -> str:
    """misaki.en.apply_stress for the stress values vox uses (None, -1, -0.5, 0, 0.5, 2)."""
    if stress is None:
        return ps
    if stress == -1 or (stress in (0, -0.5) and PRIMARY in ps):
        return ps.replace(SECONDARY, "").replace(PRIMARY, SECONDARY)
    marks = PRIMARY in ps or SECONDARY in ps
    if stress in (0, 0.5) and not marks:
        return _stress_first_vowel(ps, SECONDARY) if has_vowel(ps) else ps
    if stress >= 1 and PRIMARY not in ps and SECONDARY in ps:
        return ps.replace(SECONDARY, PRIMARY)
    if stress > 1 and not marks:
        return _stress_first_vowel(ps, PRIMARY) if has_vowel(ps) else ps
    return ps


def _s(stem: str) -> str:
    if stem[-1] in "ptkfθ":
        return stem + "s"
    if stem[-1] in "szʃʒʧʤ":
        return stem + "ᵻz"
    return stem + "z"


def _ed(stem: str) -> str:
    if stem[-1] in "pkfθʃsʧ":
        return stem + "t"
    if stem[-1] == "d":
        return stem + "ᵻd"
    if stem[-1] != "t":
        return stem + "d"
    if len(stem) < 2:
        return stem + "ɪd"
    if stem[-2] in US_TAUS:
        return stem[:-1] + "ɾᵻd"
    return stem + "ᵻd"


def _ing(stem: str) -> str:
    if len(stem) > 1 and stem[-1] == "t" and stem[-2] in US_TAUS:
        return stem[:-1] + "ɾɪŋ"
    return stem + "ɪŋ"


class G2P:
    def __init__(self, lexicon: Lexicon, overrides: dict[str, str] | None = None, final: Lexicon | None = None):
        self.lex = lexicon
        self.final = final  # phrase-final readings ("there" ðˈɛɹ before punctuation or the end)
        self.overrides = overrides or {}
        self.overrides_ci: dict[str, str] = {}
        for k, v in self.overrides.items():
            self.overrides_ci.setdefault(ascii_lower(k), v)

    # ---- lexicon-level steps ----
    def spell(self, word: str) -> str | None:
        """misaki's get_NNP: the letters' readings, joined, the last stress primary."""
        ps = ""
        for c in word:
            if c == ".":
                continue
            p = self.lex.get(ascii_upper(c)) if ("a" <= c <= "z" or "A" <= c <= "Z") else None
            if p is None:
                return None
            ps += p
        ps = apply_stress(ps, 0)
        k = ps.rfind(SECONDARY)
        return ps if k < 0 else ps[:k] + PRIMARY + ps[k + 1:]

    def stems(self, word: str, resolve, extra: bool = True) -> str | None:
        """Suffix stripping: word = known stem + suffix (misaki's stem_s, stem_ed, stem_ing, then with
        extra the suffixes vox adds)."""
        n = len(word)
        # -s, -es, -ies, 's
        if n >= 3 and word.endswith("s"):
            for stem, cond in ((word[:-1], not word.endswith("ss")),
                               (word[:-2], word.endswith("'s") or (n > 4 and word.endswith("es") and not word.endswith("ies"))),
                               (word[:-3] + "y", n > 4 and word.endswith("ies"))):
                if cond:
                    ps = resolve(stem)
                    if ps:
                        return _s(ps)
        # -ed, -ied, doubled consonant + ed
        if n >= 4 and word.endswith("d"):
            for stem, cond in ((word[:-1], not word.endswith("dd")),
                               (word[:-2], n > 4 and word.endswith("ed") and not word.endswith("eed")),
                               (word[:-3] + "y", n > 4 and word.endswith("ied")),
                               (word[:-3], n > 5 and word.endswith("ed") and word[-3] == word[-4] and word[-3] in DOUBLE)):
                if cond:
                    ps = resolve(stem)
                    if ps:
                        return _ed(ps)
        # -ing
        if n >= 5 and word.endswith("ing"):
            for stem, cond in ((word[:-3], n > 5), (word[:-3] + "e", True),
                               (word[:-4], n > 5 and ((word[-4] == word[-5] and word[-4] in DOUBLE) or word.endswith("cking")))):
                if cond:
                    ps = resolve(stem)
                    if ps:  # misaki looks the -ing stem up with stress 0.5
                        return _ing(apply_stress(ps, 0.5))
        for suf, add, minlen in EXTRA_SUFFIXES if extra else ():
            if n < minlen or not word.endswith(suf):
                continue
            base = word[:-len(suf)]
            cands = [(base, False)]
            if suf in ("er", "est"):
                cands.append((base + "e", False))
            if base.endswith("i"):
                cands.append((base[:-1] + "y", True))
            if len(base) >= 4 and base[-1] == base[-2] and base[-1] in DOUBLE:
                cands.append((base[:-1], False))
            for stem, y_stem in cands:
                ps = resolve(stem)
                if ps:
                    if y_stem and ps.endswith("i") and suf in ("ly", "ful"):
                        return ps[:-1] + "ə" + add  # happy -> happily hˈæpəli (but happiness hˈæpinəs)
                    return ps + add
        return None

    def lex_word(self, word: str) -> str | None:
        return self.lex.get(word) if len(word) >= 2 else None

    def compound(self, word: str) -> str | None:
        n = len(word)
        if n >= 129:  # beyond any lexicon word (the C twin keeps split points in a fixed array)
            return None
        best, best_score = None, 0
        for i in range(n - 3, 2, -1):
            left, right = word[:i], word[i:]
            lp = self.lex_word(left)
            if lp is None:
                continue
            rp = self.lex_word(right)
            if rp is None:
                rp = self.stems(right, self.lex_word)
            if rp is None:
                continue
            if word[i - 1] == word[i] and rp[:1] == lp[-1:]:
                rp = rp[1:]   # a doubled letter at the joint is one sound: con|nor, book|keeper
            score = min(i, n - i)
            if score > best_score:
                best, best_score = lp + apply_stress(rp, -1), score
        return best

    def oov(self, lw: str, possessive: bool = True) -> str:
        """The chain for a lower-case word no lexicon entry covers ('s is stripped once)."""
        ps = self.stems(lw, self.lex_word)
        if ps is None and len(lw) >= 6:
            ps = self.compound(lw)
            if ps is None:
                ps = self.stems(lw, lambda s: self.compound(s) if len(s) >= 6 else None)
        if ps is None and "'" in lw:
            bare = lw.replace("'", "")
            ps = self.lex_word(bare) or self.stems(bare, self.lex_word)
        if ps is None and possessive and len(lw) > 2 and lw.endswith("'s"):
            ps = self.oov(lw[:-2], False)
            ps = _s(ps) if ps else None
        if ps is None and len(lw) >= 5 and lw.endswith("s") and lw[-2] not in "sui'":
            ps = letters_to_sounds(lw[:-1])
            ps = _s(ps) if ps else None
        if ps is None:
            ps = letters_to_sounds(lw)
        return ps

    def override(self, word: str) -> str | None:
        if word in self.overrides:
            return self.overrides[word]
        return self.overrides_ci.get(ascii_lower(word))

    def lex_final(self, w: str, final: bool) -> str | None:
        """The lexicon reading of w, the phrase-final one when final and w has one."""
        if final and self.final is not None:
            ps = self.final.get(w)
            if ps is not None:
                return ps
        return self.lex.get(w)

    def word(self, w: str, final: bool = False) -> str:
        """A word -> phonemes; final: nothing but punctuation follows (misaki's future_vowel None)."""
        o = self.override(w)
        if o is not None:
            return o
        if "." in w:
            ps = self.spell(w)
            if ps is not None:
                return ps
            w = w.replace(".", "")
            if not w:
                return ""
        lw = ascii_lower(w)
        uw = ascii_upper(w)
        stress = None if w == lw else (2 if w == uw else 0.5)
        ps = self.lex_final(w, final)
        if ps is not None:
            return apply_stress(ps, stress)
        if w != lw and (w == uw or w[1:] == lw[1:]):
            # misaki lower-cases a capitalized or all-caps word when the lexicon or its -s/-ed/-ing
            # rules read it; an all-caps word it cannot read that way is spelled
            ps = (self.lex_final(lw, final) if len(lw) >= 2 else None) or self.stems(lw, self.lex_word, extra=False)
            if ps is not None:
                return apply_stress(ps, stress)
            if w == uw and any(is_upper(c) for c in w) and all(is_upper(c) or c == "'" for c in w):
                ps = self.spell(w.replace("'", ""))
                if ps is not None:
                    return ps
        if len(w) >= 3 and w.endswith("s") and all(is_upper(c) for c in w[:-1]):
            # plural of an acronym ("APIs", "CEOs"): misaki strips the -s off the all-caps stem
            ps = self.word(w[:-1])
            if ps:
                return _s(ps)
        if len(w) == 1 and ("a" <= w <= "z"):
            ps = self.spell(w)
            if ps is not None:
                return ps
        if w != lw:
            # misaki's -s/-ed/-ing rules on the word as written ("PhDs" -> PhD + z)
            ps = self.stems(w, self.lex_word, extra=False)
            if ps is not None:
                return apply_stress(ps, stress)
        if "-" not in w and w != uw and any(is_upper(c) for c in w[1:]):
            ps = self.mixed_case(w)
            if ps is not None:
                return ps
        if "-" in w:
            texts = [part for part in w.split("-") if part]
            return self.hyphenated(texts, [self.word(part) for part in texts])
        return apply_stress(self.oov(lw), stress)

    def mixed_case(self, w: str) -> str | None:
        """Names and brands with a capital inside that no lexicon entry holds (vox's rules, not
        misaki's, which hands them to espeak): O'Neill -> O + Neill, McKenzie -> mə(k) + the rest,
        short mixed-case initialisms spelled (PhD, PhDs), CamelCase read part by part like a
        hyphenated word (iPhone -> i + Phone, YouTube, MacBook; MacArthur too: "Mac" is ambiguous)."""
        n = len(w)
        if n >= 4 and w.startswith("O'") and is_upper(w[2]):
            rest = self.word(w[2:])
            return "ˌO" + rest if rest else None
        if n >= 4 and w.startswith("Mc") and is_upper(w[2]):
            rest = self.word(w[2:])   # McGregor, McKenzie: mə + a rest that starts with its own k/g
            return ("mə" if rest[:1] in ("k", "ɡ") else "mək") + rest if rest else None
        core = w[:-1] if n >= 3 and w.endswith("s") and is_upper(w[-2]) else w
        if 2 <= len(core) <= 4 and sum(is_upper(c) for c in core) >= 2 and all(is_upper(c) or is_lower(c) for c in core):
            ps = self.spell(core)
            if ps is not None:
                return _s(ps) if core != w else ps
        cuts = [i for i in range(1, n) if is_upper(w[i]) and is_lower(w[i - 1])]
        if not cuts or "'" in w:
            return None
        texts = [w[a:b] for a, b in zip([0] + cuts, cuts + [n])]
        return self.hyphenated(texts, [self.word(t) for t in texts])

    @staticmethod
    def hyphenated(texts: list[str], parts: list[str]) -> str:
        """misaki's resolve_tokens for the parts of a hyphenated word ("well-known" -> wˌɛlnˈOn): joined
        without spaces; with exactly two parts read and the first one letter long, the second is
        demoted (primary -> secondary); else, when more than half the parts carry a primary stress,
        the lighter half of them (by misaki's stress_weight, then position) is demoted."""
        idx = [(PRIMARY in p, sum(2 if c in DIPHTHONGS else 1 for c in p), i) for i, p in enumerate(parts) if p]
        parts = list(parts)
        if len(idx) == 2 and len(texts[idx[0][2]]) == 1:
            parts[idx[1][2]] = apply_stress(parts[idx[1][2]], -0.5)
        elif len(idx) >= 2 and sum(b for b, _, _ in idx) > (len(idx) + 1) // 2:
            for _, _, i in sorted(idx)[: len(idx) // 2]:
                parts[i] = apply_stress(parts[i], -0.5)
        return "".join(parts)

    def special(self, w: str, future_vowel: bool | None) -> str | None:
        """misaki's get_special_case for the words it handles without a tagger."""
        if w in ("a", "A"):
            return "ɐ"
        if w in ("an", "An", "AN"):
            return "ɐn"
        if w == "I":
            return "ˌI"
        if w in ("am", "Am", "AM"):
            return "ɐm" if (w == "am" and future_vowel is not None) else self.lex.get("am")
        if w in ("to", "To", "TO"):
            return {None: self.lex.get("to"), False: "tə", True: "tʊ"}[future_vowel]
        if w in ("in", "In", "IN"):
            # as misaki reads it with the tag spaCy gives "in" almost always (IN): stressed only at
            # the end of a phrase ("come in.")
            return "ˈɪn" if future_vowel is None else "ɪn"
        if w in ("the", "The", "THE"):
            return "ði" if future_vowel is True else "ðə"
        return None

    def __call__(self, items: list[Item]) -> str:
        """Items (normalize.py) -> the phoneme string: words separated by spaces, closing punctuation
        attached to the word before, opening marks to the word after."""
        pss: list[str] = [""] * len(items)
        future_vowel: bool | None = None
        for k in range(len(items) - 1, -1, -1):
            kind, text = items[k]
            if kind == "p":
                ps = text
            elif kind == "o":
                ps = text
            else:
                ps = self.override(text)
                if ps is None:
                    ps = self.special(text, future_vowel)
                if ps is None:
                    ps = self.word(text, future_vowel is None)
            pss[k] = ps
            for c in ps:
                if c in NON_QUOTE_PUNCTS:
                    future_vowel = None
                    break
                if c in VOWELS or c in CONSONANTS:
                    future_vowel = c in VOWELS
                    break
        out = ""
        for (kind, text), ps in zip(items, pss):
            if not ps:
                continue
            if kind == "p" and ps not in OPENING and ps != "—":
                out += ps
                continue
            if out and not out.endswith(" ") and out[-1] not in OPENING:
                out += " "
            out += ps
        # misaki's G2P for Kokoro v1.0 (version != "2.0") writes the flap ɾ as T and the glottal stop ʔ
        # as t: the symbols the model was trained on
        return out.strip(" ").replace("ɾ", "T").replace("ʔ", "t")
