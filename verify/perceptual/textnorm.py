"""Text normalization for word error rate: reference text and ASR transcript are brought to one
canonical spelling, so that only what was *said* differently counts as an error.

Both sides go through the same function (normalize). The canonical form is lower-case words with
numbers written out, because that is what a TTS frontend speaks and an ASR model may write either
way ("$3.50" or "three dollars and fifty cents", "1999" or "nineteen ninety-nine"):

  1. Unicode NFKC, lower case, typographic quotes/dashes to ASCII.
  2. Abbreviations to words (mr -> mister, dr -> doctor, vs -> versus, a.m. -> am, ...).
  3. Numbers to words: currency ($, £, €, with cents/pence and million/billion scales), percentages,
     ordinals (1st, 22nd), times (3:30 -> three thirty; 3:00 -> three o'clock), decimals (3.14 -> three
     point one four), years (four-digit 1100-1999 and 2010-2099 without a thousands comma read as
     years: 1999 -> nineteen ninety nine, 2024 -> twenty twenty four), thousands commas, plain
     cardinals.
  4. Hyphens and slashes split words; other punctuation goes; possessive/contraction apostrophes
     are dropped inside a word (it's -> its, o'clock ->
     oclock), the same on both sides.
  5. Spoken fillers of number phrases: "and" between number words ("one hundred and five",
     "three dollars and fifty cents") and a leading "a" before hundred/thousand ("a hundred") are
     dropped, so both readings compare equal.
  6. Spelling variants with one meaning: okay/ok, percent/per cent, the year readings
     "two thousand and twenty four" vs "twenty twenty four" (both become the year form).

Word-boundary differences in compounds ("master class" vs "masterclass") are not a normalization of
one string: wer.py merges them when the two sides are aligned.
"""

from __future__ import annotations

import re
import unicodedata

ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SCALES = [(10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand")]
ORD_IRREGULAR = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                 "nine": "ninth", "twelve": "twelfth"}
NUMBER_WORDS = set(ONES) | set(TENS[2:]) | {"hundred", "thousand", "million", "billion", "trillion", "point"}

ABBREVIATIONS = {
    "mr": "mister", "mrs": "missus", "ms": "miz", "dr": "doctor", "prof": "professor", "jr": "junior",
    "sr": "senior", "vs": "versus", "etc": "et cetera", "approx": "approximately", "dept": "department",
    "ok": "okay", "no": None,  # "no." is handled as "number" only before a digit (below)
    # units as an ASR model may write them ("3 kg"); the plural is the spoken form after a number
    "kg": "kilograms", "km": "kilometers", "cm": "centimeters", "mm": "millimeters", "lbs": "pounds",
    "lb": "pounds", "oz": "ounces", "ft": "feet", "mph": "miles per hour", "kmh": "kilometers per hour",
}
CURRENCY = {"$": ("dollar", "dollars", "cent", "cents"), "£": ("pound", "pounds", "penny", "pence"),
            "€": ("euro", "euros", "cent", "cents")}


def cardinal(n: int) -> str:
    """0 -> 'zero', 1234 -> 'one thousand two hundred thirty four' (no 'and', no hyphens)."""
    if n < 0:
        return "minus " + cardinal(-n)
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    if n < 1000:
        return ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + cardinal(n % 100))
    for value, word in SCALES:
        if n >= value:
            head, rest = divmod(n, value)
            return cardinal(head) + " " + word + ("" if rest == 0 else " " + cardinal(rest))
    raise AssertionError(n)


def ordinal(n: int) -> str:
    words = cardinal(n).split()
    last = words[-1]
    if last in ORD_IRREGULAR:
        words[-1] = ORD_IRREGULAR[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


def year(n: int) -> str:
    """1999 -> 'nineteen ninety nine', 1905 -> 'nineteen oh five', 2024 -> 'twenty twenty four',
    1900 -> 'nineteen hundred'."""
    hi, lo = divmod(n, 100)
    if lo == 0:
        return cardinal(hi) + " hundred"
    return cardinal(hi) + " " + (("oh " + ONES[lo]) if lo < 10 else cardinal(lo))


def _is_year(text: str) -> bool:
    if not re.fullmatch(r"\d{4}", text):
        return False
    n = int(text)
    return 1100 <= n <= 1999 and n % 100 != 0 or 2010 <= n <= 2099 or n in (1200, 1300, 1400, 1500, 1600, 1700,
                                                                               1800, 1900)


def _digits(s: str) -> str:
    return " ".join(ONES[int(c)] for c in s)


def _number(text: str) -> str:
    """A plain number token (digits, optional thousands commas and decimal part) to words."""
    if "," in text:
        text = text.replace(",", "")
        if "." not in text:
            return cardinal(int(text))
    if "." in text:
        whole, frac = text.split(".", 1)
        return (cardinal(int(whole)) if whole else "zero") + " point " + _digits(frac)
    if _is_year(text):
        return year(int(text))
    return cardinal(int(text))


_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"


def _currency(m: re.Match) -> str:
    sym, amount, scale = m.group(1), m.group(2), m.group(3)
    one, many, sub_one, sub_many = CURRENCY[sym]
    amount = amount.replace(",", "")
    if scale:  # $1.5 million -> one point five million dollars
        return f" {_number(amount)} {scale} {many} "
    whole, _, frac = amount.partition(".")
    whole_n = int(whole) if whole else 0
    out = []
    if whole_n or not frac:
        out.append(f"{cardinal(whole_n)} {one if whole_n == 1 else many}")
    if frac:
        cents = int((frac + "0")[:2])
        if cents:
            out.append(f"{cardinal(cents)} {sub_one if cents == 1 else sub_many}")
    return " " + " ".join(out) + " "


def _time(m: re.Match) -> str:
    h, mnt = int(m.group(1)), int(m.group(2))
    if mnt == 0:
        return f" {cardinal(h)} o'clock "
    return f" {cardinal(h)} {('oh ' + ONES[mnt]) if mnt < 10 else cardinal(mnt)} "


def _ordinal(m: re.Match) -> str:
    return " " + ordinal(int(m.group(1).replace(",", ""))) + " "


def normalize(text: str) -> str:
    """The canonical word sequence of `text` (a string of lower-case words separated by one space)."""
    t = unicodedata.normalize("NFKC", text).lower()
    t = (t.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
         .replace("\u2013", "-").replace("\u2014", " - ").replace("\u2212", "-"))
    # abbreviations written with periods first, so the period is not taken for a sentence end
    t = re.sub(r"\b([ap])\.?\s?m\b\.?", r" \1m ", t)                       # a.m., p.m., a m, am
    t = re.sub(r"\be\.g\.", " for example ", t)
    t = re.sub(r"\bi\.e\.", " that is ", t)
    t = re.sub(r"\bu\.s\.a?\.?(?=\W|$)", lambda m: " u s a " if m.group(0).rstrip(".").endswith("a") else " u s ", t)
    t = re.sub(r"\bno\.\s*(?=\d)", " number ", t)
    t = re.sub(r"\bper\s+cent\b", " percent ", t)
    # numbers
    t = re.sub(r"([$£€])\s?(" + _NUM + r")(?:\s+(million|billion|trillion)\b)?", _currency, t)
    t = re.sub(r"(" + _NUM + r")\s?%", lambda m: f" {_number(m.group(1))} percent ", t)
    t = re.sub(r"\b(\d{1,3}(?:,\d{3})*|\d+)(?:st|nd|rd|th)\b", _ordinal, t)
    t = re.sub(r"\b(\d{1,2}):(\d{2})\b", _time, t)
    # whisper writes a clock time the British way after "at" ("at 7.45"): read H.MM there as a time
    t = re.sub(r"\b(at|by|until|till|before|after|around|from) (\d{1,2})\.(\d{2})\b(?!\.\d)",
               lambda m: f" {m.group(1)}" + _time(re.match(r"(\d+)\.(\d+)", f"{m.group(2)}.{m.group(3)}")), t)
    t = re.sub(_NUM, lambda m: f" {_number(m.group(0))} ", t)
    # words
    t = re.sub(r"[-/]", " ", t)
    t = re.sub(r"[^\w' ]+", " ", t)
    words = []
    for w in t.split():
        w = w.strip("'")
        if not w:
            continue
        if w.endswith("'s") and w[:-2] in ABBREVIATIONS and ABBREVIATIONS[w[:-2]]:
            w = ABBREVIATIONS[w[:-2]] + "'s"
        elif w in ABBREVIATIONS and ABBREVIATIONS[w] and not (w == "no"):
            w = ABBREVIATIONS[w]
        words.extend(w.replace("'", "") for w in w.split())  # it's/its, o'clock/oclock: one spelling
    return " ".join(_number_phrases(words))


def _cents_follow(words: list[str], i: int) -> bool:
    """words[i:] is a number phrase followed by cents/pence ("three dollars and fifty cents")."""
    while i < len(words) and words[i] in NUMBER_WORDS:
        i += 1
    return i < len(words) and words[i] in ("cent", "cents", "penny", "pence")


def _number_phrases(words: list[str]) -> list[str]:
    """Drop the fillers that a number phrase may or may not be spoken with, and give a year one form."""
    money = {"dollar", "dollars", "pound", "pounds", "euro", "euros"}
    out: list[str] = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        prev = out[-1] if out else ""
        if w == "and" and nxt in NUMBER_WORDS and (prev in NUMBER_WORDS or prev in money and _cents_follow(words, i + 1)):
            continue
        if w == "a" and nxt in ("hundred", "thousand", "million", "billion"):
            out.append("one")
            continue
        out.append(w)
    # "two thousand twenty four" (a year read as a cardinal) -> "twenty twenty four" when a year
    # reading exists: 2010..2099 are read both ways
    s = " ".join(out)
    s = re.sub(r"\btwo thousand (ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|"
               r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?: (?:one|two|three|four|five|six|seven|"
               r"eight|nine))?)\b", r"twenty \1", s)
    # "one thousand five hundred" -> "fifteen hundred" (both readings of 1500)
    s = re.sub(r"\bone thousand (one|two|three|four|five|six|seven|eight|nine) hundred\b",
               lambda m: ONES[10 + ONES.index(m.group(1))] + " hundred", s)
    return s.split()
