"""Numbers as English words (American style: no "and" inside numbers, as misaki reads them).

Every function returns a list of words; hyphenated tens ("twenty-one") are two words, as misaki
splits num2words' output before looking words up. Inputs are ASCII digit strings.
"""

from __future__ import annotations

ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
        "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SCALES = ["", "thousand", "million", "billion", "trillion"]
# Longest integer read as a cardinal; longer digit strings are read digit by digit.
MAX_CARDINAL_DIGITS = 15

ORDINAL_IRREGULAR = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                     "nine": "ninth", "twelve": "twelfth"}


def _below_1000(n: int) -> list[str]:
    out = []
    if n >= 100:
        out += [ONES[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        out.append(TENS[n // 10])
        if n % 10:
            out.append(ONES[n % 10])
    elif n > 0:
        out.append(ONES[n])
    return out


def cardinal(digits: str) -> list[str]:
    """An integer (decimal digits, leading zeros ignored) as words; digit by digit when it has more
    than MAX_CARDINAL_DIGITS significant digits."""
    d = digits.lstrip("0")
    if not d:
        return ["zero"]
    if len(d) > MAX_CARDINAL_DIGITS:
        return digit_words(digits)
    n = int(d)
    groups = []
    while n:
        groups.append(n % 1000)
        n //= 1000
    out = []
    for i in range(len(groups) - 1, -1, -1):
        if groups[i]:
            out += _below_1000(groups[i])
            if SCALES[i]:
                out.append(SCALES[i])
    return out


def digit_words(digits: str) -> list[str]:
    return [ONES[ord(c) - 48] for c in digits]


def ordinal_word(word: str) -> str:
    """The ordinal of one cardinal word: "twenty" -> "twentieth", "three" -> "third"."""
    if word in ORDINAL_IRREGULAR:
        return ORDINAL_IRREGULAR[word]
    if word.endswith("y"):
        return word[:-1] + "ieth"
    return word + "th"


def ordinal(digits: str) -> list[str]:
    words = cardinal(digits)
    return words[:-1] + [ordinal_word(words[-1])]


def plural_word(word: str) -> str:
    """Plural of a number word (decades: "nineties", "sixes")."""
    if word.endswith("y"):
        return word[:-1] + "ies"
    if word.endswith("x"):
        return word + "es"
    return word + "s"


def year(digits: str) -> list[str]:
    """A four-digit year as spoken: 1999 nineteen ninety-nine, 1905 nineteen oh five, 1900 nineteen
    hundred, 2000 two thousand, 2005 two thousand five, 2010 twenty ten, 2024 twenty twenty-four."""
    n = int(digits)
    hi, lo = n // 100, n % 100
    if lo == 0:
        return cardinal(digits) if hi % 10 == 0 else _below_1000(hi) + ["hundred"]
    if hi % 10 == 0 and lo < 10:
        return cardinal(digits)
    if lo < 10:
        return _below_1000(hi) + ["oh", ONES[lo]]
    return _below_1000(hi) + _below_1000(lo)


def decimal(int_part: str, frac_part: str) -> list[str]:
    """int_part.frac_part: "three point one four"; an empty int_part reads "point five"."""
    out = cardinal(int_part) if int_part else []
    return out + ["point"] + digit_words(frac_part)
