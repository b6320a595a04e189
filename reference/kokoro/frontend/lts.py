"""Letter-to-sound rules: the last step of the out-of-vocabulary chain, for words that neither the
lexicon, suffix stripping nor compound splitting covers. A word is never spelled letter by letter.

The rules are deliberately small: graphemes are matched longest first at each position (a rule may
ask for the word start, the word end, or a following e/i/y; a final "ie" is /i/ as in names,
Kenzie, Bessie: the one-syllable words that read it /I/ are all in the lexicon), a vowel letter followed by one
consonant and a final "e" is long ("magic e"), the final "e" is then silent, and the primary stress
goes before the first vowel; later syllables reduce æ ʌ ɑ ɜ to ə. The output uses Kokoro's symbols
only (misaki's US set). core/src/kokoro/text/lts.c holds the same table.
"""

from __future__ import annotations

# Context of a rule: 0 anywhere, 1 at the word start, 2 at the word end, 3 before e/i/y,
# 4 at the word end after a consonant letter.
ANY, START, END, SOFT, END_AFTER_CONS = 0, 1, 2, 3, 4

# (graphemes, phonemes, context); for one position the longest matching graphemes win, and among
# rules of that length the first in the table.
RULES = [
    ("tion", "ʃən", ANY), ("sion", "ʒən", ANY), ("ture", "ʧəɹ", ANY), ("ough", "O", END), ("ought", "ɔt", ANY),
    ("augh", "ɔ", ANY), ("eigh", "A", ANY), ("igh", "I", ANY), ("tch", "ʧ", ANY), ("sch", "sk", ANY),
    ("air", "ɛɹ", ANY), ("ear", "ɪɹ", ANY), ("eer", "ɪɹ", ANY), ("are", "ɛɹ", END), ("ire", "Iəɹ", END),
    ("ore", "ɔɹ", END), ("ure", "jʊɹ", END), ("ous", "əs", END),
    ("ch", "ʧ", ANY), ("sh", "ʃ", ANY), ("th", "θ", ANY), ("ph", "f", ANY), ("wh", "w", ANY), ("ck", "k", ANY),
    ("ng", "ŋ", ANY), ("nk", "ŋk", ANY), ("gh", "", ANY), ("qu", "kw", ANY), ("kn", "n", START),
    ("wr", "ɹ", START), ("gn", "n", START), ("ps", "s", START), ("dg", "ʤ", ANY), ("mb", "m", END),
    ("bb", "b", ANY), ("dd", "d", ANY), ("ff", "f", ANY), ("gg", "ɡ", ANY), ("ll", "l", ANY), ("mm", "m", ANY),
    ("nn", "n", ANY), ("pp", "p", ANY), ("rr", "ɹ", ANY), ("ss", "s", ANY), ("tt", "t", ANY), ("zz", "z", ANY),
    ("le", "əl", END_AFTER_CONS),
    ("ee", "i", ANY), ("ea", "i", ANY), ("oo", "u", ANY), ("ou", "W", ANY), ("ow", "O", END), ("ow", "W", ANY),
    ("oi", "Y", ANY), ("oy", "Y", ANY), ("ai", "A", ANY), ("ay", "A", ANY), ("au", "ɔ", ANY), ("aw", "ɔ", ANY),
    ("ie", "i", ANY), ("ei", "A", ANY), ("ey", "i", END), ("ey", "A", ANY), ("eu", "u", ANY),
    ("ew", "u", ANY), ("ue", "u", ANY), ("oa", "O", ANY), ("oe", "O", END),
    ("ar", "ɑɹ", ANY), ("or", "ɔɹ", ANY), ("er", "ɜɹ", ANY), ("ir", "ɜɹ", ANY), ("ur", "ɜɹ", ANY),
    ("c", "s", SOFT), ("c", "k", ANY), ("g", "ʤ", SOFT), ("g", "ɡ", ANY), ("x", "z", START), ("x", "ks", ANY),
    ("j", "ʤ", ANY), ("y", "j", START), ("y", "i", END), ("y", "ɪ", ANY), ("r", "ɹ", ANY), ("q", "k", ANY),
    ("w", "w", ANY), ("b", "b", ANY), ("d", "d", ANY), ("f", "f", ANY), ("h", "h", ANY), ("k", "k", ANY),
    ("l", "l", ANY), ("m", "m", ANY), ("n", "n", ANY), ("p", "p", ANY), ("s", "s", ANY), ("t", "t", ANY),
    ("v", "v", ANY), ("z", "z", ANY),
    ("a", "æ", ANY), ("e", "ɛ", ANY), ("i", "ɪ", ANY), ("o", "ɑ", ANY), ("u", "ʌ", ANY),
]
LONG = {"a": "A", "e": "i", "i": "I", "o": "O", "u": "u", "y": "I"}
VOWEL_LETTERS = frozenset("aeiouy")
PHONEME_VOWELS = frozenset("AIOWYiuæɑɔəɛɜɪʊʌ")
REDUCE = {"æ": "ə", "ʌ": "ə", "ɑ": "ə", "ɜ": "ə"}
MAX_LETTERS = 128  # longer words are read up to here (the C twin works in a fixed buffer)


def _context_ok(w: str, i: int, g: str, ctx: int) -> bool:
    j = i + len(g)
    if ctx == START:
        return i == 0
    if ctx == END:
        return j == len(w)
    if ctx == SOFT:
        return j < len(w) and w[j] in "eiy"
    if ctx == END_AFTER_CONS:
        return j == len(w) and i > 0 and w[i - 1] not in VOWEL_LETTERS
    return True


def letters_to_sounds(word: str) -> str:
    """Phonemes for a word; letters other than ASCII a-z (after lowercasing) are skipped."""
    w = "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in word if "a" <= c <= "z" or "A" <= c <= "Z")
    w = w[:MAX_LETTERS]
    n = len(w)
    has_other_vowel = sum(1 for c in w if c in VOWEL_LETTERS) > 1
    out = []
    i = 0
    while i < n:
        c = w[i]
        # magic e: vowel + one consonant letter + final e
        if c in "aeiouy" and i + 3 == n and w[i + 2] == "e" and w[i + 1] not in VOWEL_LETTERS and w[i + 1] not in "wxr" \
                and (c != "y" or i > 0):
            out.append(LONG[c])
            i += 1
            continue
        if c == "e" and i == n - 1 and has_other_vowel:
            i += 1  # silent final e
            continue
        best = None
        for g, p, ctx in RULES:
            if len(g) <= (best[0] if best else 0):
                continue
            if w.startswith(g, i) and _context_ok(w, i, g, ctx):
                best = (len(g), p)
        if best is None:
            i += 1
            continue
        out.append(best[1])
        i += best[0]
    ps = "".join(out)
    # primary stress before the first vowel; later short vowels reduce
    first = next((k for k, ch in enumerate(ps) if ch in PHONEME_VOWELS), -1)
    if first < 0:
        return ps
    tail = "".join(REDUCE.get(ch, ch) for ch in ps[first + 1:])
    return ps[:first] + "ˈ" + ps[first] + tail
