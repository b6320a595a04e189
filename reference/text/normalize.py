"""Text normalization: a span of text -> items (words, punctuation symbols, override phonemes).

The phonemizer must never see a digit: numerals, decimals, negative numbers, currency, percentages,
ordinals, dates, times, years, decades, ranges, units, phone-like digit strings and common
abbreviations become words here.

How a span is read (core/src/kokoro/text/normalize.c follows the same steps):
1. A few characters are mapped: ‘ ’ -> ', – (en dash) and − (minus sign) -> -.
2. The span is cut at whitespace into chunks; each chunk is (lead, core, trail): opening marks
   ( [ { " “ ' in front, closing marks . , ; : ! ? … ) ] } " ” ' behind. A core that with its
   first trailing "." is a known abbreviation or an initialism ("Dr.", "e.g.", "U.S.") keeps the dot.
3. The core is looked up in the user's overrides, then the abbreviation table, then read as a
   number pattern when it holds a digit, else split into words at symbols (& + @ / = % ...).
   Some readings look at the neighbouring chunk: "$3 million", "5 km", "3:45 pm", "March 3".
Letter case is ASCII only ("A"-"Z"), in the C core too, so the two agree on every input.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import numbers as num

# Items: ("w", word) a word for G2P, ("p", symbol) punctuation, ("o", phonemes) an override.
Item = tuple[str, str]

WHITESPACE = frozenset(" \t\n\r\f\v\u00a0\u2028\u2029\u3000\u202f\u205f" + "".join(chr(c) for c in range(0x2000, 0x200B)))
CHAR_MAP = {"\u2018": "'", "\u2019": "'", "\u2013": "-", "\u2212": "-"}
# Accented Latin letters fold to their base letter (the lexicon's keys are ASCII: "café" -> "cafe").
ACCENTS = {"àáâãäå": "a", "ÀÁÂÃÄÅ": "A", "èéêë": "e", "ÈÉÊË": "E", "ìíîï": "i", "ÌÍÎÏ": "I", "òóôõö": "o",
           "ÒÓÔÕÖ": "O", "ùúûü": "u", "ÙÚÛÜ": "U", "ýÿ": "y", "Ý": "Y", "ç": "c", "Ç": "C", "ñ": "n", "Ñ": "N"}
for _chars, _base in ACCENTS.items():
    for _c in _chars:
        CHAR_MAP[_c] = _base
LEAD = frozenset("([{\"“'")
TRAIL = frozenset(".,;:!?…)]}\"”'")
TRAIL_SYMBOL = {".": ".", ",": ",", ";": ";", ":": ":", "!": "!", "?": "?", "…": "…", ")": ")", "]": ")",
                "}": ")", '"': "”", "”": "”"}
CURRENCY = {"$": ("dollar", "dollars", "cent", "cents"), "£": ("pound", "pounds", "penny", "pence"),
            "€": ("euro", "euros", "cent", "cents")}
SCALE_WORDS = frozenset(["thousand", "million", "billion", "trillion"])
SCALE_SUFFIXES = {"K": "thousand", "k": "thousand", "M": "million", "m": "million", "B": "billion", "bn": "billion",
                  "T": "trillion", "tn": "trillion"}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
SYMBOL_WORDS = {"&": "and", "+": "plus", "@": "at", "=": "equals", "%": "percent", "°": "degrees"}
# Inside a core these become punctuation items; other non-word symbols only separate words.
INNER_PUNCT = {",": ",", ";": ";", ":": ":", "!": "!", "?": "?", "—": "—", "…": "…"}

# Abbreviations (exact spelling, with the dot) -> words. flag "n": only before a number ("No. 5").
ABBREVIATIONS = {
    "Dr.": "Doctor", "Mr.": "Mister", "Mrs.": "Missus", "Ms.": "Mizz", "Jr.": "Junior", "Sr.": "Senior",
    "Prof.": "Professor", "Mt.": "Mount", "Ave.": "Avenue", "Rd.": "Road", "Blvd.": "Boulevard",
    "Inc.": "Incorporated", "Ltd.": "Limited", "Co.": "Company", "Corp.": "Corporation",
    "Dept.": "Department", "Gov.": "Governor", "Gen.": "General", "Sen.": "Senator",
    "Rep.": "Representative", "Capt.": "Captain", "Lt.": "Lieutenant", "Sgt.": "Sergeant",
    "Jan.": "January", "Feb.": "February", "Mar.": "March", "Apr.": "April", "Jun.": "June",
    "Jul.": "July", "Aug.": "August", "Sep.": "September", "Sept.": "September", "Oct.": "October",
    "Nov.": "November", "Dec.": "December", "Fig.": "Figure",
}
# Matched on the ASCII-lowercased core.
ABBREVIATIONS_CI = {"etc.": "etc", "e.g.": "for example", "i.e.": "that is", "vs.": "versus", "vs": "versus",
                    "approx.": "approximately", "cf.": "compare"}
# Abbreviations after which a "." never ends a sentence (chunk.py), beside single-letter initials.
NO_BREAK = frozenset(["Dr.", "Mr.", "Mrs.", "Ms.", "Prof.", "Mt.", "St.", "No.", "Gen.", "Sen.", "Rep.", "Capt.",
                      "Lt.", "Sgt.", "Gov.", "Fig.", "e.g.", "i.e.", "vs.", "cf.", "approx.", "Jr.", "Sr.",
                      "Jan.", "Feb.", "Mar.", "Apr.", "Jun.", "Jul.", "Aug.", "Sep.", "Sept.", "Oct.", "Nov.",
                      "Dec."])
# Units after a number: abbreviation -> (singular words, plural words).
UNITS = {
    "km": ("kilometer", "kilometers"), "cm": ("centimeter", "centimeters"), "mm": ("millimeter", "millimeters"),
    "kg": ("kilogram", "kilograms"), "mg": ("milligram", "milligrams"), "lb": ("pound", "pounds"),
    "lbs": ("pound", "pounds"), "oz": ("ounce", "ounces"), "ft": ("foot", "feet"), "mi": ("mile", "miles"),
    "mph": ("mile per hour", "miles per hour"), "kph": ("kilometer per hour", "kilometers per hour"),
    "km/h": ("kilometer per hour", "kilometers per hour"), "GB": ("gigabyte", "gigabytes"),
    "MB": ("megabyte", "megabytes"), "KB": ("kilobyte", "kilobytes"), "TB": ("terabyte", "terabytes"),
    "Hz": ("hertz", "hertz"), "kHz": ("kilohertz", "kilohertz"), "MHz": ("megahertz", "megahertz"),
    "GHz": ("gigahertz", "gigahertz"), "ms": ("millisecond", "milliseconds"), "ml": ("milliliter", "milliliters"),
    "mL": ("milliliter", "milliliters"), "min": ("minute", "minutes"), "hrs": ("hour", "hours"),
    "sec": ("second", "seconds"), "hr": ("hour", "hours"), "°C": ("degree Celsius", "degrees Celsius"),
    "°F": ("degree Fahrenheit", "degrees Fahrenheit"), "°": ("degree", "degrees"),
}
# Spoken as letters: a dotted initialism is spelled by G2P ("a.m." -> ˌAˈɛm; "A" alone would be ɐ).
# Words after which a Roman numeral is a number ("World War II", "Chapter IV"); after other names it
# is an ordinal ("Henry VIII" the eighth).
ROMAN_COUNTED = frozenset(["War", "Chapter", "Part", "Volume", "Book", "Act", "Scene", "Episode", "Phase", "Level",
                           "Type", "Class", "Section", "Article", "Title", "Stage", "Round", "Season", "Grade", "Step",
                           "Apollo", "Gemini", "Vatican", "Mark", "Series", "Division", "Category", "Appendix",
                           "Figure", "Table", "Unit", "Lesson", "Psalm", "Rocky", "Fantasy", "Bowl", "Model"])
AMPM = {"am": "a.m.", "pm": "p.m.", "a.m.": "a.m.", "p.m.": "p.m."}


def is_ws(c: str) -> bool:
    return c in WHITESPACE


def is_digit(c: str) -> bool:
    return "0" <= c <= "9"


def is_upper(c: str) -> bool:
    return "A" <= c <= "Z"


def is_lower(c: str) -> bool:
    return "a" <= c <= "z"


def is_alpha(c: str) -> bool:
    """ASCII letters, and every non-ASCII character that is not a known mark (letters of other
    scripts stay in words; the G2P rules skip what they cannot read)."""
    return is_upper(c) or is_lower(c) or (ord(c) >= 0x80 and c not in NON_ASCII_MARKS and c not in WHITESPACE)


NON_ASCII_MARKS = frozenset("“”‘’–—−…¢£€°")


def ascii_lower(s: str) -> str:
    return "".join(chr(ord(c) + 32) if is_upper(c) else c for c in s)


def all_digits(s: str) -> bool:
    return len(s) > 0 and all(is_digit(c) for c in s)


def roman_value(s: str) -> int:
    """The value of a Roman numeral of 2+ letters from I V X written canonically, in 2..39; else 0."""
    if len(s) < 2 or any(c not in "IVX" for c in s):
        return 0
    vals = {"I": 1, "V": 5, "X": 10}
    v = 0
    for k, c in enumerate(s):
        if k + 1 < len(s) and vals[c] < vals[s[k + 1]]:
            v -= vals[c]
        else:
            v += vals[c]
    return v if 2 <= v <= 39 and to_roman(v) == s else 0


def to_roman(v: int) -> str:
    out = ""
    for val, sym in ((10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while v >= val:
            out += sym
            v -= val
    return out


def is_name(s: str) -> bool:
    """A capitalized ASCII word (what a Roman numeral after it counts or orders)."""
    return len(s) >= 2 and is_upper(s[0]) and all(is_lower(c) for c in s[1:])


def is_initialism(s: str) -> bool:
    """Letters joined by dots, ending in a dot or a letter: "U.S.", "e.g", "a.m."."""
    if len(s) < 3 or not is_alpha(s[0]):
        return False
    for i, c in enumerate(s):
        if (i % 2 == 0 and not is_alpha(c)) or (i % 2 == 1 and c != "."):
            return False
    return True


def words(text: str) -> list[Item]:
    return [("w", w) for w in text.split(" ")]


# ---- number patterns: each returns the index just past a match at s[i:], or -1 ----

def scan_int(s: str, i: int) -> int:
    """Digits, optionally grouped by commas in threes ("1,234,567"): the end, or -1."""
    j = i
    while j < len(s) and is_digit(s[j]):
        j += 1
    if j == i:
        return -1
    if j - i <= 3:
        while j + 3 < len(s) and s[j] == "," and all_digits(s[j + 1:j + 4]) and (j + 4 == len(s) or not is_digit(s[j + 4])):
            j += 4
    return j


def scan_num(s: str, i: int) -> int:
    """An integer (scan_int) with an optional fraction ".123", or a bare fraction ".5"."""
    j = scan_int(s, i)
    if j < 0:
        if i < len(s) and s[i] == "." and i + 1 < len(s) and is_digit(s[i + 1]):
            j = i + 1
            while j < len(s) and is_digit(s[j]):
                j += 1
            return j
        return -1
    if j + 1 < len(s) and s[j] == "." and is_digit(s[j + 1]):
        j += 1
        while j < len(s) and is_digit(s[j]):
            j += 1
    return j


def read_number(s: str) -> list[str]:
    """A scan_num match as words: commas grouping, decimals, 4-digit years, leading zeros and long
    digit strings digit by digit."""
    if "." in s:
        ip, fp = s.split(".", 1)
        return num.decimal(ip.replace(",", ""), fp)
    if "," in s:
        return num.cardinal(s.replace(",", ""))
    if len(s) > 1 and s[0] == "0":
        return num.digit_words(s)
    if len(s) == 4:
        return num.year(s)
    if len(s) > 6 and not s.endswith("000"):
        return num.digit_words(s)
    return num.cardinal(s)


def is_one(s: str) -> bool:
    return s == "1"


def phone_groups(s: str) -> list[str] | None:
    """Phone-like digit strings: "555-1234", "(555) 123-4567" (here one core "(555)123-4567" is not
    formed; each chunk is read alone), "555.123.4567", "+1-555-123-4567": groups of digits joined by
    "-" or ".", with 7+ digits in all and every group of 3+ digits except a leading country code."""
    i = 0
    groups = []
    if s.startswith("+"):
        i = 1
    cur = ""
    sep = None
    while i < len(s):
        c = s[i]
        if is_digit(c):
            cur += c
        elif c in "-." and cur and (sep is None or sep == c):
            sep = c
            groups.append(cur)
            cur = ""
        else:
            return None
        i += 1
    if not cur:
        return None
    groups.append(cur)
    if len(groups) < 2 or sum(len(g) for g in groups) < 7:
        return None
    first = 1 if s.startswith("+") else 0
    if any(len(g) < 3 for g in groups[first:]):
        return None
    if len(groups) == 2 and not (len(groups[0]) == 3 and len(groups[1]) == 4):
        return None
    return groups


@dataclass
class Chunk:
    lead: str
    core: str
    trail: str
    took_dot: bool = False  # the core took the first "." of the trail (an abbreviation)


def split_chunks(text: str) -> list[Chunk]:
    text = "".join(CHAR_MAP.get(c, c) for c in text)
    chunks = []
    i = 0
    n = len(text)
    while i < n:
        while i < n and is_ws(text[i]):
            i += 1
        if i >= n:
            break
        j = i
        while j < n and not is_ws(text[j]):
            j += 1
        tok = text[i:j]
        i = j
        a = 0
        while a < len(tok) and tok[a] in LEAD and not (tok[a] == "'" and a + 1 < len(tok) and is_digit(tok[a + 1])):
            a += 1
        b = len(tok)
        while b > a and tok[b - 1] in TRAIL:
            b -= 1
        core, trail = tok[a:b], tok[b:]
        if core and trail.startswith("."):
            cand = core + "."
            if cand in ABBREVIATIONS or cand == "St." or cand == "No." or ascii_lower(cand) in ABBREVIATIONS_CI \
                    or ascii_lower(cand) in AMPM or is_initialism(cand):
                core, trail = cand, trail[1:]
                chunks.append(Chunk(tok[:a], core, trail, True))
                continue
        chunks.append(Chunk(tok[:a], core, trail))
    return chunks


class Normalizer:
    def __init__(self, overrides: dict[str, str] | None = None):
        self.overrides = overrides or {}
        self.overrides_ci = {}
        for k, v in self.overrides.items():
            self.overrides_ci.setdefault(ascii_lower(k), v)

    def override(self, word: str) -> str | None:
        if word in self.overrides:
            return self.overrides[word]
        return self.overrides_ci.get(ascii_lower(word))

    def __call__(self, text: str) -> list[Item]:
        chunks = split_chunks(text)
        out: list[Item] = []
        i = 0
        prev_month = False
        while i < len(chunks):
            ch = chunks[i]
            for c in ch.lead:
                if c in "([{":
                    out.append(("p", "("))
                elif c in "\"“":
                    out.append(("p", "“"))
            nxt = chunks[i + 1] if i + 1 < len(chunks) and not ch.trail and not chunks[i + 1].lead else None
            prev = chunks[i - 1] if i > 0 and not chunks[i - 1].trail and not ch.lead else None
            roman = roman_value(ch.core) if prev is not None and is_name(prev.core) else 0
            if ch.lead == "(" and ch.trail == ")" and len(ch.core) == 3 and all_digits(ch.core) \
                    and i + 1 < len(chunks) and phone_groups(chunks[i + 1].core) is not None:
                # "(555) 123-4567": the area code of a phone number
                items, used_next, is_month = [("w", w) for w in num.digit_words(ch.core)], False, False
            elif roman and self.override(ch.core) is None:
                # "World War II" -> two, "Henry VIII" -> the eighth
                ws = num.cardinal(str(roman)) if prev.core in ROMAN_COUNTED else ["the"] + num.ordinal(str(roman))
                items, used_next, is_month = [("w", w) for w in ws], False, False
            else:
                items, used_next, is_month = self.core(ch.core, nxt.core if nxt else None, prev_month)
            prev_month = is_month and not ch.trail
            out += items
            if used_next:
                i += 1
                ch = chunks[i]
            if ch.took_dot and i == len(chunks) - 1 and out[-1:] != [("p", ".")]:
                out.append(("p", "."))  # an abbreviation ending the text also ends the sentence
            trail = ch.trail
            k = 0
            while k < len(trail):
                if trail.startswith("...", k):
                    out.append(("p", "..."))  # as misaki writes it (the vocab has both . and …)
                    k += 3
                    continue
                sym = TRAIL_SYMBOL.get(trail[k])
                if sym:
                    out.append(("p", sym))
                k += 1
            i += 1
        return out

    # ---- one core ----
    def core(self, c: str, nxt: str | None, prev_month: bool) -> tuple[list[Item], bool, bool]:
        """(items, whether the next chunk's core was consumed, whether c is a month name)."""
        if not c:
            return [], False, False
        o = self.override(c)
        if o is not None:
            return [("o", o)], False, False
        if c in ABBREVIATIONS:
            w = ABBREVIATIONS[c]
            return words(w), False, w in MONTHS
        if c == "St.":
            return words("Saint" if nxt and is_upper(nxt[0]) else "Street"), False, False
        if c == "No.":
            return (words("number") if nxt and is_digit(nxt[0]) else [("w", "No"), ("p", ".")]), False, False
        lc = ascii_lower(c)
        if lc in ABBREVIATIONS_CI:
            return words(ABBREVIATIONS_CI[lc]), False, False
        if c in MONTHS:
            return [("w", c)], False, True
        if any(is_digit(ch) for ch in c):
            items, used = self.number_core(c, nxt, prev_month)
            return items, used, False
        if c in ("-", "--", "—"):
            return [("p", "—")], False, False
        return self.word_core(c), False, False

    def unit_after(self, value: str, nxt: str | None) -> list[Item] | None:
        if nxt is not None and nxt in UNITS:
            sing, plur = UNITS[nxt]
            return words(sing if is_one(value) else plur)
        return None

    def number_core(self, c: str, nxt: str | None, prev_month: bool) -> tuple[list[Item], bool]:
        n = len(c)
        # currency: [-]$N [scale]
        neg = 1 if c[0] == "-" else 0
        if n > neg + 1 and c[neg] in CURRENCY and scan_num(c, neg + 1) == n and c[neg + 1] != ".":
            unit = CURRENCY[c[neg]]
            amount = c[neg + 1:]
            pre = [("w", "minus")] if neg else []
            if nxt is not None and nxt in SCALE_WORDS:
                return pre + [("w", w) for w in read_number(amount)] + [("w", nxt), ("w", unit[1])], True
            return pre + self.money(amount, unit), False
        # currency with a scale letter: $5M, £3bn, €20K
        if n > neg + 1 and c[neg] in CURRENCY and c[neg + 1] != ".":
            j = scan_num(c, neg + 1)
            if j > neg + 1 and c[j:] in SCALE_SUFFIXES:
                pre = [("w", "minus")] if neg else []
                return (pre + [("w", w) for w in read_number(c[neg + 1:j])]
                        + [("w", SCALE_SUFFIXES[c[j:]]), ("w", CURRENCY[c[neg]][1])]), False
        # cents: N¢
        if c.endswith("¢") and scan_int(c, 0) == n - 1:
            v = c[:-1]
            return [("w", w) for w in read_number(v)] + [("w", "cent" if is_one(v) else "cents")], False
        # percent: [-]N%
        if c.endswith("%") and n > neg + 1 and scan_num(c, neg) == n - 1:
            pre = [("w", "minus")] if neg else []
            return pre + [("w", w) for w in read_number(c[neg:-1])] + [("w", "percent")], False
        # time: H:MM[:SS] [am|pm]
        t = self.time(c, nxt)
        if t is not None:
            return t
        # dates: YYYY-MM-DD, M/D/YYYY
        r = self.ratio(c)
        if r is not None:
            return r, False
        d = self.date(c)
        if d is not None:
            return d, False
        # fraction: N/D (1 to 3 digits each, D from 2 to 100): "one half", "three quarters", "five eighths"
        fr = self.fraction(c)
        if fr is not None:
            return fr, False
        # ordinal: N(st|nd|rd|th)
        j = scan_int(c, 0)
        if j > 0 and j == n - 2 and ascii_lower(c[j:]) in ("st", "nd", "rd", "th"):
            return [("w", w) for w in num.ordinal(c[:j].replace(",", ""))], False
        # decades: 1990s, '80s, 80s
        dec = c[1:] if c.startswith("'") else c
        if len(dec) in (3, 5) and dec.endswith("s") and all_digits(dec[:-1]) and dec[-2] == "0":
            ws = num.year(dec[:-1]) if len(dec) == 5 else num.cardinal(dec[:-1])
            return [("w", w) for w in ws[:-1] + [num.plural_word(ws[-1])]], False
        # phone-like digit strings
        g = phone_groups(c)
        if g is not None:
            out: list[Item] = []
            if c.startswith("+"):
                out.append(("w", "plus"))
            for k, grp in enumerate(g):
                if k:
                    out.append(("p", ","))
                out += [("w", w) for w in num.digit_words(grp)]
            return out, False
        # '#' N
        if c[0] == "#" and scan_num(c, 1) == n:
            return [("w", "number")] + [("w", w) for w in read_number(c[1:])], False
        # range: N-N
        j = scan_num(c, 0)
        if 0 < j < n - 1 and c[j] == "-" and scan_num(c, j + 1) == n:
            return ([("w", w) for w in read_number(c[:j])] + [("w", "to")]
                    + [("w", w) for w in read_number(c[j + 1:])]), False
        # [-|+]N [unit]
        sign = 1 if c[0] in "-+" else 0
        j = scan_num(c, sign)
        if j > sign:
            pre = [("w", "minus" if c[0] == "-" else "plus")] if sign else []
            value = c[sign:j]
            if j == n:
                if prev_month and all_digits(value) and len(value) <= 2 and 1 <= int(value) <= 31:
                    return pre + [("w", w) for w in num.ordinal(value)], False
                body = pre + [("w", w) for w in read_number(value)]
                u = self.unit_after(value, nxt)
                if u is not None:
                    return body + u, True
                if nxt is not None and ascii_lower(nxt) in AMPM and all_digits(value) and int(value) <= 12:
                    return body + words(AMPM[ascii_lower(nxt)]), True
                return body, False
            rest = c[j:]
            if rest in UNITS:
                sing, plur = UNITS[rest]
                return pre + [("w", w) for w in read_number(value)] + words(sing if is_one(value) else plur), False
            if ascii_lower(rest) in AMPM and all_digits(value) and int(value) <= 12:
                return pre + [("w", w) for w in read_number(value)] + words(AMPM[ascii_lower(rest)]), False
        return self.mixed(c), False

    def money(self, amount: str, unit: tuple[str, str, str, str]) -> list[Item]:
        ip, _, fp = amount.partition(".")
        ip = ip.replace(",", "")
        if len(fp) > 2:  # $1.005: read as a decimal amount
            return [("w", w) for w in num.decimal(ip, fp)] + [("w", unit[1])]
        cents = fp + "0" if len(fp) == 1 else fp
        out: list[Item] = []
        has_main = ip.strip("0") != "" or not cents or cents == "00"
        if has_main:
            out += [("w", w) for w in num.cardinal(ip)] + [("w", unit[0] if ip.lstrip("0") == "1" else unit[1])]
        if cents and cents != "00":
            if has_main:
                out.append(("w", "and"))
            out += [("w", w) for w in num.cardinal(cents)] + [("w", unit[2] if cents == "01" else unit[3])]
        return out

    def time(self, c: str, nxt: str | None) -> tuple[list[Item], bool] | None:
        n = len(c)
        j = 0
        while j < n and j < 2 and is_digit(c[j]):
            j += 1
        if j == 0 or j + 3 > n or c[j] != ":" or not all_digits(c[j + 1:j + 3]):
            return None
        h, m = int(c[:j]), int(c[j + 1:j + 3])
        k, sec = j + 3, None
        if k + 3 <= n and c[k] == ":" and all_digits(c[k + 1:k + 3]):   # H:MM:SS
            k, sec = k + 3, int(c[k + 1:k + 3])
        rest = ascii_lower(c[k:])
        if h > 23 or m > 59 or (sec is not None and sec > 59) or (rest and rest not in AMPM):
            return None
        used = False
        if not rest and nxt is not None and ascii_lower(nxt) in AMPM:
            rest, used = ascii_lower(nxt), True
        out = [("w", w) for w in num.cardinal(str(h))]
        if m == 0:
            if not rest:
                out.append(("w", "o'clock"))
        elif m < 10:
            out += [("w", "oh"), ("w", num.ONES[m])]
        else:
            out += [("w", w) for w in num.cardinal(str(m))]
        if sec:   # "ten forty five and thirty seconds"; :00 seconds are not read
            out += [("w", "and")] + [("w", w) for w in num.cardinal(str(sec))] + [("w", "second" if sec == 1 else "seconds")]
        if rest:
            out += words(AMPM[rest])
        return out, used

    @staticmethod
    def ratio(c: str) -> list[Item] | None:
        """N:M that is not a time ("3:1", "16:9", "1:100"): "three to one"."""
        parts = c.split(":")
        if len(parts) != 2 or not all(all_digits(p) for p in parts):
            return None
        return [("w", w) for w in read_number(parts[0])] + [("w", "to")] + [("w", w) for w in read_number(parts[1])]

    def date(self, c: str) -> list[Item] | None:
        y = mo = d = None
        if len(c) == 10 and c[4] == "-" and c[7] == "-" and all_digits(c[:4]) and all_digits(c[5:7]) and all_digits(c[8:]):
            y, mo, d = c[:4], int(c[5:7]), int(c[8:])
        else:
            parts = c.split("/")
            if len(parts) == 3 and all(all_digits(p) for p in parts) and len(parts[0]) <= 2 and len(parts[1]) <= 2 \
                    and len(parts[2]) == 4:
                mo, d, y = int(parts[0]), int(parts[1]), parts[2]
        if y is None or not (1 <= mo <= 12 and 1 <= d <= 31) or y[0] == "0":
            return None
        return ([("w", MONTHS[mo - 1])] + [("w", w) for w in num.ordinal(str(d))] + [("p", ",")]
                + [("w", w) for w in num.year(y)])

    def fraction(self, c: str) -> list[Item] | None:
        parts = c.split("/")
        if len(parts) != 2 or not all(all_digits(p) and len(p) <= 3 for p in parts):
            return None
        n, d = int(parts[0]), int(parts[1])
        if not 2 <= d <= 100:
            return None
        out = [("w", w) for w in num.cardinal(parts[0])]
        if d == 2:
            den = "half" if n == 1 else "halves"
        elif d == 4:
            den = "quarter" if n == 1 else "quarters"
        else:
            den = num.ordinal(str(d))
            out += [("w", w) for w in den[:-1]]
            den = den[-1] if n == 1 else den[-1] + "s"
        return out + [("w", den)]

    def mixed(self, c: str) -> list[Item]:
        """Anything else holding digits: digit runs read as numbers, the rest as words ("MP3", "4x4")."""
        out: list[Item] = []
        i, n = 0, len(c)
        start = 0
        while i < n:
            if is_digit(c[i]) or (c[i] == "." and i + 1 < n and is_digit(c[i + 1]) and (i == 0 or not is_alpha(c[i - 1]))):
                if start < i:
                    out += self.word_core(c[start:i])
                j = scan_num(c, i)
                out += [("w", w) for w in read_number(c[i:j])]
                i = start = j
            else:
                i += 1
        if start < n:
            out += self.word_core(c[start:])
        return out

    def word_core(self, c: str) -> list[Item]:
        """Letters (with inner ' and -), split at symbols; dotted initialisms stay whole."""
        if is_initialism(c):
            return [("w", c)]
        o = self.override(c)
        if o is not None:
            return [("o", o)]
        out: list[Item] = []
        word = ""
        i = 0
        n = len(c)

        def flush():
            nonlocal word
            w = word.strip("-'")
            if w:
                ov = self.override(w)
                out.append(("o", ov) if ov is not None else ("w", w))
            word = ""

        while i < n:
            ch = c[i]
            if is_alpha(ch) or ch in "'-":
                word += ch
            elif ch == "." and word and i + 1 < n and is_alpha(c[i + 1]):
                flush()
                out.append(("w", "dot"))
            else:
                flush()
                if ch in SYMBOL_WORDS:
                    out.append(("w", SYMBOL_WORDS[ch]))
                elif ch in INNER_PUNCT:
                    out.append(("p", INNER_PUNCT[ch]))
            i += 1
        flush()
        return out
