"""The Kokoro English text frontend: C == Python byte for byte, the reference's word readings == misaki's
(the official G2P's lexicon code), normalization against hand-written expectations, the OOV chain,
chunking invariants, and pronunciation overrides.

The native side runs through build/*/tool_kfront (core/tests/tool_kfront.c), a filter over the
internal frontend; VOX_LIBRARY_DIR (or build/dev) says where the build is.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vox.verify.tolerance import Row

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "kokoro" / "frontend_corpus.txt"
MISAKI_WHEEL = "misaki-0.9.4-py3-none-any.whl"


def _misaki_wheel() -> Path:
    try:
        from vox.families.kokoro.sources import fetch_wheel
    except ImportError:
        fetch_wheel = None
    if fetch_wheel is not None:
        return Path(fetch_wheel("misaki"))
    dirs = [os.environ.get("VOX_WHEELS"), os.path.join(os.path.expanduser("~"), ".cache", "vox", "wheels")]
    for d in dirs:
        if d and (Path(d) / MISAKI_WHEEL).is_file():
            return Path(d) / MISAKI_WHEEL
    pytest.skip(f"{MISAKI_WHEEL} not found (set VOX_WHEELS to a directory holding it)")


@pytest.fixture(scope="module")
def blobs() -> tuple[bytes, bytes]:
    from vox.families.kokoro.frontend_data import frontend_tensors

    tensors, manifest = frontend_tensors(_misaki_wheel())
    assert manifest["lexicon_entries"] > 300_000 and manifest["lexicon_final_entries"] > 30
    return tensors["frontend.lexicon"].tobytes(), tensors["frontend.lexicon_final"].tobytes()


@pytest.fixture(scope="module")
def lexicon_blob(blobs) -> bytes:
    return blobs[0]


@pytest.fixture(scope="module")
def fe(blobs):
    from vox.reference.kokoro.frontend.frontend import Frontend

    return Frontend(*blobs)


def _tool_path() -> Path:
    cands = [os.environ.get("VOX_LIBRARY_DIR"), ROOT / "build" / "dev", ROOT / "build"]
    for d in cands:
        if d and (Path(d) / "tool_kfront").is_file():
            return Path(d) / "tool_kfront"
    pytest.skip("tool_kfront not built (cmake --build build/dev; or set VOX_LIBRARY_DIR to the build folder)")


@pytest.fixture(scope="module")
def native(blobs, tmp_path_factory):
    """native(requests) -> responses: runs the C frontend over a batch of JSON requests."""
    from vox.reference.kokoro.frontend.vocab import KOKORO_VOCAB

    tool = _tool_path()
    d = tmp_path_factory.mktemp("kfront")
    (d / "lexicon.bin").write_bytes(blobs[0])
    (d / "final.bin").write_bytes(blobs[1])
    (d / "config.json").write_text(json.dumps({"vocab": KOKORO_VOCAB}, ensure_ascii=False), encoding="utf-8")

    def run(reqs: list[dict]) -> list[dict]:
        inp = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in reqs)
        p = subprocess.run([str(tool), str(d / "lexicon.bin"), str(d / "final.bin"), str(d / "config.json")],
                           input=inp.encode("utf-8"),
                           capture_output=True, timeout=600)
        assert p.returncode == 0, p.stderr.decode("utf-8", "replace")
        out = [json.loads(x) for x in p.stdout.decode("utf-8").splitlines()]
        assert len(out) == len(reqs)
        return out

    return run


def corpus() -> list[str]:
    return [ln.rstrip("\n") for ln in CORPUS.read_text(encoding="utf-8").splitlines() if ln.strip()]


# ------------------------------------------------------------------------------------------ C vs Python
def test_corpus_native_equals_reference(fe, native, record):
    lines = corpus()
    assert len(lines) >= 200
    got = native([{"op": "phonemize", "text": t} for t in lines])
    same = 0
    bad = []
    for t, g in zip(lines, got):
        want = fe.phonemize(t)
        if g.get("ok") and g["phonemes"] == want:
            same += 1
        else:
            bad.append(f"{t!r}\n  C:  {g}\n  Py: {want!r}")
    record(Row("kokoro.frontend.c_vs_python", f"{len(lines)} corpus sentences", same / len(lines),
               backend="cpu"))
    assert not bad, "\n".join(bad[:10])


def test_random_text_native_equals_reference(fe, native, record):
    """Random strings over the corpus's characters plus odd ones (curly quotes, dashes, currency,
    no-break and em spaces, accents, emoji): C and Python agree byte for byte, and neither fails."""
    rng = random.Random(3)
    pool = sorted(set("".join(corpus())) | set("’‘–−…“”€£¢°\u00a0\u2003çñéÆ😀#@&+=%$-,.:;!?()[]{}'\"0123456789"))
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 80))) for _ in range(1000)]
    got = native([{"op": "phonemize", "text": t} for t in texts])
    same = sum(1 for t, g in zip(texts, got) if g == {"ok": True, "phonemes": fe.phonemize(t)})
    record(Row("kokoro.frontend.c_vs_python", f"{len(texts)} random strings", same / len(texts), backend="cpu"))


EDGE = ["1" * 80 + "th place", "$" + "9" * 90 + ".99", "€" + "1,000" * 30, "A" * 300, "QWERTY" * 50 + "S", "x" * 400,
        "1" * 20, "12345678901234567890.5", "-" * 10, "....", "…", "—", "''", '""', "((()))", "$", "£.5", "$.50", "5.",
        ".5", "1.2.3.4", "1,23,456", "1,234,5678", "a-b-c-d", "---word---", "U.S.A.", "A.B.C.D.E.F.", "12:60",
        "24:00", "3:4", "3:45:10", "2024-13-01", "0/0/2020", "1/2/3", "2/100", "10%%", "%5", "50¢¢", "#", "#a", "No.",
        "No. No.", "St.", "mr.", "MR.", "'s", "s'", "'", "a'b'c", "😀😀 😀", "\u00a0\u00a0x", "café-au-lait", "naïve's",
        "1st-2nd", "3rd.", "Henry IIII", "John XL", "the IV", "Pope John Paul II.", "King (II)", "$5Mx", "$5M.", "-$1.5B", "5 km.", "5 km/h", "5km/h", "10 am.", "10am", "13pm", "0am", "",
        # long inputs: bounded work and no deep recursion in either twin
        "a" + "'s" * 5000, "x" * 20000, "-".join(["ab"] * 2000), "1" * 10000, "$" + "1" * 5000, "Q" * 10000 + "s",
        "." * 10000, "'" * 10000]


def test_edge_inputs_native_equals_reference(fe, native):
    got = native([{"op": "phonemize", "text": t} for t in EDGE])
    for t, g in zip(EDGE, got):
        assert g == {"ok": True, "phonemes": fe.phonemize(t)}, t


def test_corpus_output_is_speakable(fe):
    """Every output symbol is in the vocab (or a space), and no digit survives normalization."""
    from vox.reference.kokoro.frontend.vocab import KOKORO_VOCAB

    for t in corpus():
        ps = fe.phonemize(t)
        assert ps, t
        bad = sorted({c for c in ps if c != " " and c not in KOKORO_VOCAB})
        assert not bad, (t, ps, bad)
        assert not re.search(r"[0-9]", ps), (t, ps)


# ------------------------------------------------------------------------------------------ vs misaki
@pytest.fixture(scope="module")
def misaki_lexicon():
    """misaki 0.9.4's own Lexicon (the official English G2P's dictionary logic). Its module imports
    spaCy at the top but uses it only in G2P (the tagger), so a stub module is enough."""
    pytest.importorskip("num2words")
    pytest.importorskip("regex")
    stub = None
    if "misaki.en" not in sys.modules:
        try:
            import spacy  # noqa: F401
        except ImportError:
            stub = sys.modules["spacy"] = types.ModuleType("spacy")
    try:
        en = pytest.importorskip("misaki.en")
    finally:
        # misaki.en keeps its reference; the process must not: a later `import transformers` (in the
        # same pytest-xdist worker) asks importlib.util.find_spec("spacy"), which fails on a stub
        if stub is not None and sys.modules.get("spacy") is stub:
            del sys.modules["spacy"]
    return en, en.Lexicon(british=False)


SPECIAL = {"a", "A", "an", "An", "AN", "I", "am", "Am", "AM", "to", "To", "TO", "in", "In", "IN", "the", "The", "THE"}


def test_word_readings_equal_misaki(fe, misaki_lexicon, lexicon_blob, record):
    """For every word misaki's lexicon code can read (no tagger: tag None, a consonant follows), the
    reference reads it the same: corpus words, a sample of the lexicon, and derived -s/-ed/-ing forms
    that are not in the lexicon (misaki's stem rules)."""
    from vox.reference.kokoro.frontend.g2p import G2P

    en, lex = misaki_lexicon
    g = G2P(fe.lexicon)
    ctx = en.TokenContext(future_vowel=False)
    rng = random.Random(1)
    words = set()
    for t in corpus():
        words |= set(re.findall(r"[A-Za-z][A-Za-z']*[A-Za-z]|[A-Za-z]", t))
    gold = json.loads(_read_member(_misaki_wheel(), "misaki/data/us_gold.json"))
    keys = sorted(k for k in gold if k.isalpha())
    words |= set(rng.sample(keys, 2000))
    lower = [k for k in keys if k.islower() and len(k) >= 3]
    for w in rng.sample(lower, 1500):
        for d in (w + "s", w + "es", w + "ed", w + "d", w + "ing", w[:-1] + "ing", w + w[-1] + "ing",
                  w + w[-1] + "ed", w[:-1] + "ies", w.capitalize() + "s", w.upper() + "S"):
            if fe.lexicon.get(d) is None:
                words.add(d)
    total = same = 0
    bad = []
    for w in sorted(words - SPECIAL):
        stress = None if w == w.lower() else lex.cap_stresses[int(w == w.upper())]
        want, _ = lex.get_word(w, None, stress, ctx)
        if want is None:
            continue  # misaki falls back to espeak here; vox has its own chain (tested below)
        total += 1
        got = g.word(w)
        if got == want:
            same += 1
        else:
            bad.append((w, got, want))
    assert total > 5000
    record(Row("kokoro.frontend.words_vs_misaki", f"{total} words misaki reads", same / total))
    assert not bad, bad[:20]


def _read_member(wheel: Path, member: str) -> bytes:
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        return z.read(member)


# ------------------------------------------------------------------------------------------ OOV chain
def test_mixed_case_names(fe):
    """Words with a capital inside that the lexicon lacks (misaki hands them to espeak): name prefixes,
    mixed-case initialisms, CamelCase; hand-written expected readings."""
    expect = {
        "PhD": "pˌiˌAʧdˈi",          # spelled, not "f" + "-ed"
        "PhDs": "pˌiˌAʧdˈiz",
        "iPhone": "ˈIfˌOn",           # i + Phone
        "iPhones": "ˈIfˌOnz",
        "MySQL": "mˌIsˈikwəl",        # My + SQL ("sequel", the lexicon's reading)
        "McGregor": "məɡɹˈɛɡəɹ",      # Mc + Gregor without a second k
        "McDonald": "məkdˈɑnəld",     # in the lexicon: unchanged
        "McKenzie": "məkˈɛnzi",       # Mc + Kenzie (final -ie /i/ by the letter-to-sound rules)
        "Connor": "kˈɑnˌɔɹ",          # con|nor: the doubled n at the joint is one sound
    }
    for word, ps in expect.items():
        assert fe.phonemize(word) == ps, (word, fe.phonemize(word), ps)
    assert fe.phonemize("O'Neill").startswith("ˌOn")       # O + Neill (the apostrophe no longer drops the O)
    assert fe.phonemize("O'Brien").startswith("ˌObɹ")


def test_oov_chain(fe, lexicon_blob):
    from vox.reference.kokoro.frontend.g2p import G2P, apply_stress

    g = G2P(fe.lexicon)
    lx = fe.lexicon
    # compound split: neither word is in the lexicon; both halves are
    for word, left, right in [("masterclass", "master", "class"), ("snowbridge", "snow", "bridge"),
                              ("doorlamp", "door", "lamp")]:
        assert lx.get(word) is None and lx.get(left) and lx.get(right)
        assert g.word(word) == lx.get(left) + apply_stress(lx.get(right), -1)
    # suffix on a compound: masterclass + es -> /ᵻz/
    assert g.word("masterclasses") == g.word("masterclass") + "ᵻz"
    # -er -est -ly -ness (vox's suffixes beyond misaki's -s -ed -ing): with the derived word hidden from
    # the lexicon, the chain rebuilds misaki's own reading of it from the stem
    derived = ["glummer", "bluntly", "greyness", "curtly", "dampness", "stiffly", "lumpiness", "sleekness",
               "crankier", "glumly", "sparseness", "crispness"]

    class Hidden:
        def get(self, w):
            return None if w in derived else lx.get(w)

    h = G2P(Hidden())
    for word in derived:
        assert lx.get(word), word
        assert h.word(word) == lx.get(word), (word, h.word(word), lx.get(word))
    # misaki's -s -ed -ing rules, the same way
    derived = ["walking", "studies", "stopped", "baked", "begged", "boxes", "running", "jumped", "planned",
               "carried", "tried", "wishes", "hitting"]
    for word in derived:
        assert lx.get(word), word
        assert h.word(word) == lx.get(word), (word, h.word(word), lx.get(word))
    # unknown ordinary words are read by rules, never spelled letter by letter
    for word in ["blorfing", "zibbleton", "snorkwaddle", "quirkles", "frobnitz", "flimbertous"]:
        assert lx.get(word) is None
        ps = g.word(word)
        spelled = g.spell(word.upper())
        assert ps and ps != spelled, (word, ps)
        assert ps.count("ˈ") == 1, (word, ps)  # one primary stress: a word, not a row of letters
    # all-caps unknown words are spelled, as misaki does ("FBI"); known ones read ("NASA")
    assert g.word("FBI") == "ˌɛfbˌiˈI"
    assert g.word("NASA") == lx.get("NASA")


# ------------------------------------------------------------------------------------------ normalization
# Expected words written from English (how the text is read aloud), not from the code's output.
NORMALIZE = [
    ("$3.50", "three dollars and fifty cents"),
    ("$1", "one dollar"),
    ("$0.99", "ninety nine cents"),
    ("$1.01", "one dollar and one cent"),
    ("£1", "one pound"),
    ("£2.50", "two pounds and fifty pence"),
    ("€20", "twenty euros"),
    ("50¢", "fifty cents"),
    ("$2.5 million", "two point five million dollars"),
    ("$5M", "five million dollars"),
    ("£3bn", "three billion pounds"),
    ("-5", "minus five"),
    ("3.14", "three point one four"),
    ("0.5", "zero point five"),
    ("1,000,000", "one million"),
    ("1,234", "one thousand two hundred thirty four"),
    ("15%", "fifteen percent"),
    ("3.5%", "three point five percent"),
    ("1st", "first"),
    ("2nd", "second"),
    ("3rd", "third"),
    ("22nd", "twenty second"),
    ("103rd", "one hundred third"),
    ("11th", "eleventh"),
    ("40th", "fortieth"),
    ("March 3, 2024", "March third , twenty twenty four"),
    ("2024-03-03", "March third , twenty twenty four"),
    ("12/25/2023", "December twenty fifth , twenty twenty three"),
    ("3:45 pm", "three forty five p.m."),
    ("7:05", "seven oh five"),
    ("10:00", "ten o'clock"),
    ("17:45", "seventeen forty five"),
    ("10:45:30", "ten forty five and thirty seconds"),
    ("7:05:01 pm", "seven oh five and one second p.m."),
    ("10:45:00", "ten forty five"),
    ("mix 3:1", "mix three to one"),
    ("16:9", "sixteen to nine"),
    ("1:100", "one to one hundred"),
    ("1999", "nineteen ninety nine"),
    ("2005", "two thousand five"),
    ("1900", "nineteen hundred"),
    ("2010", "twenty ten"),
    ("1905", "nineteen oh five"),
    ("the 1990s", "the nineteen nineties"),
    ("the '80s", "the eighties"),
    ("Dr. Smith", "Doctor Smith"),
    ("Mr. Jones", "Mister Jones"),
    ("Mrs. Jones", "Missus Jones"),
    ("St. Louis", "Saint Louis"),
    ("Main St.", "Main Street ."),
    ("apples, etc.", "apples , etc ."),
    ("e.g. this", "for example this"),
    ("cats vs. dogs", "cats versus dogs"),
    ("No. 7", "number seven"),
    ("10 km", "ten kilometers"),
    ("1 km", "one kilometer"),
    ("5kg", "five kilograms"),
    ("65 mph", "sixty five miles per hour"),
    ("20°C", "twenty degrees Celsius"),
    ("555-1234", "five five five , one two three four"),
    ("(555) 123-4567", "( five five five ) one two three , four five six seven"),
    ("10-20", "ten to twenty"),
    ("#5", "number five"),
    ("007", "zero zero seven"),
    ("1/2", "one half"),
    ("3/4", "three quarters"),
    ("5/8", "five eighths"),
    ("rock & roll", "rock and roll"),
    ("World War II", "World War two"),
    ("Henry VIII", "Henry the eighth"),
    ("Louis XIV", "Louis the fourteenth"),
    ("Chapter IV", "Chapter four"),
]


@pytest.mark.parametrize("text,words", NORMALIZE)
def test_normalization_spec(fe, text, words):
    items = fe.normalize(text)
    got = " ".join(t if k != "o" else f"/{t}/" for k, t in items)
    assert got == words


def test_normalization_native(fe, native):
    """The same cases through the native frontend give the reference's phonemes."""
    got = native([{"op": "phonemize", "text": t} for t, _ in NORMALIZE])
    for (t, _), g in zip(NORMALIZE, got):
        assert g == {"ok": True, "phonemes": fe.phonemize(t)}, t


# ------------------------------------------------------------------------------------------ chunking
def _feed(text: str, sizes: list[int]) -> list[str]:
    from vox.reference.kokoro.frontend.chunk import next_span

    spans, buf, k = [], "", 0
    pieces = []
    i = 0
    for s in sizes:
        if i >= len(text):
            break
        pieces.append(text[i:i + s])
        i += s
    if i < len(text):
        pieces.append(text[i:])
    for idx in range(len(pieces) + 1):
        final = idx == len(pieces)
        if not final:
            buf += pieces[idx]
        while True:
            n, consumed = next_span(buf, final)
            if n:
                spans.append(buf[:n])
            buf = buf[consumed:]
            if (not n and not consumed) or not buf:
                break
    return spans


WORDS = st.sampled_from(["the", "cat", "Dr.", "U.S.", "3.14", "e.g.", "sat", "on", "a", "mat", "J.", "No.",
                         "supercalifragilisticexpialidocious", "word", "x" * 300, "…", "—", "(yes)", "“hi”"])
SEPS = st.sampled_from([" ", " ", " ", ". ", "! ", "? ", ", ", "; ", ": ", " — ", "\n", "... ", ".\" "])


@st.composite
def texts(draw):
    parts = []
    for _ in range(draw(st.integers(1, 120))):
        parts.append(draw(WORDS))
        parts.append(draw(SEPS))
    return "".join(parts).strip() if draw(st.booleans()) else "".join(parts)


@settings(max_examples=150, deadline=None)
@given(texts(), st.lists(st.integers(1, 50), min_size=1, max_size=40))
def test_chunking_invariants(text, sizes):
    from vox.reference.kokoro.frontend.chunk import LIMIT

    whole = _feed(text, [])
    # the spans, concatenated, are the text (modulo whitespace)
    assert "".join("".join(whole).split()) == "".join(text.split())
    pos = 0
    compact = "".join(text.split())
    for s in whole:
        assert s == s.rstrip() and s.strip()  # may begin with whitespace, never ends with it, never empty
        body = "".join(s.split())
        assert compact.startswith(body, pos)
        pos += len(body)
        # a span over the limit is a single word
        if len(s.strip()) > LIMIT:
            assert not any(c.isspace() for c in s.strip()), s
    # never inside a word: every cut falls at whitespace in the text
    at = 0
    for s in whole[:-1]:
        at = text.index(s.strip(), at) + len(s.strip())
        assert at == len(text) or text[at].isspace() or text[at - 1] in ",;:—.!?…)]}\"”'", (text[at - 5:at + 5])
    assert _feed(text, sizes) == whole


def test_chunking_native_equals_reference(native, record):
    rng = random.Random(7)
    vocab = ["the", "cat", "Dr.", "U.S.", "3.14", "e.g.", "sat", "on", "a", "mat", "J.", "No.", "café",
             "naïve", "x" * 260, "…", "—", "(yes)", "“hi”", "Mrs.", "1,000"]
    seps = [" ", " ", " ", ". ", "! ", "? ", ", ", "; ", ": ", " — ", "\n", "... ", ".\" ", "\u00a0"]
    cases, reqs = [], []
    for _ in range(200):
        t = "".join(rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randint(1, 150)))
        sizes = [rng.randint(1, 40) for _ in range(60)]
        ref = _feed(t, sizes)
        pieces, i = [], 0
        for s in sizes:
            if i >= len(t):
                break
            pieces.append(t[i:i + s])
            i += s
        if i < len(t):
            pieces.append(t[i:])
        cases.append(ref)
        reqs.append({"op": "spans", "pieces": pieces})
    got = native(reqs)
    same = sum(1 for want, g in zip(cases, got) if g["spans"] == want)
    record(Row("kokoro.frontend.spans_c_vs_python", f"{len(cases)} random texts, random pieces", same / len(cases),
               backend="cpu"))
    assert same == len(cases)


def test_chunking_examples():
    from vox.reference.kokoro.frontend.chunk import next_span

    text = "Dr. Smith paid $3.50. He left at 3 p.m. on Jan. 5! Did J. K. Rowling write it? Yes… she did."
    assert _feed(text, []) == ["Dr. Smith paid $3.50.", " He left at 3 p.m. on Jan. 5!",
                               " Did J. K. Rowling write it?", " Yes…", " she did."]
    assert next_span("Hello there", False) == (0, 0)       # not complete yet
    assert next_span("Hello there.", False) == (0, 0)      # a space must follow first
    assert next_span("Hello there. Bye", False) == (12, 12)
    assert next_span("Heading\n\nBody", False) == (7, 7)  # a blank line ends a span
    assert next_span("Heading\n", False) == (0, 0)        # ... a second newline may still come
    assert next_span("   ", False) == (0, 0)             # whitespace waits for what follows
    assert next_span("   ", True) == (0, 3)
    long = ("word " * 30 + "clause, " + "more " * 40).strip()
    n, c = next_span(long, True)
    assert long[:n].endswith("clause,") and len(long[:n]) <= 240


# ------------------------------------------------------------------------------------------ overrides
def test_overrides(fe, native):
    from vox.reference.kokoro.frontend.frontend import OverrideError, parse_overrides

    ov = json.dumps({"Kokoro": "kˈOkəɹO", "vox": "vˈɑks"}, ensure_ascii=False)
    text = "Kokoro and VOX speak."
    want = fe.phonemize(text, ov)
    assert want == "kˈOkəɹO ænd vˈɑks spˈik."
    got = native([{"op": "phonemize", "text": text, "overrides": ov}])[0]
    assert got == {"ok": True, "phonemes": want}
    # numbers and abbreviations can be overridden as tokens too
    assert fe.phonemize("Call 911.", json.dumps({"911": "nˈIn wˈʌn wˈʌn"})) == "kˈɔl nˈIn wˈʌn wˈʌn."
    bad = [
        ('{"vox": "v3"}', 'override "vox": symbol "3"'),
        ('{"vox": ""}', "non-empty"),
        ('["vox"]', "JSON object"),
        ('{"two words": "tˈu"}', "bad word"),
        ('{"vox": 1}', "non-empty string"),
        ('{"vox": "vˈɑks", "vox": "vˈɑks"}', 'duplicate key "vox"'),
        ("{not json", "not valid JSON"),
    ]
    for ov, msg in bad:
        with pytest.raises(OverrideError, match=re.escape(msg)):
            parse_overrides(ov)
    got = native([{"op": "phonemize", "text": "vox", "overrides": ov} for ov, _ in bad])
    for (ov, msg), g in zip(bad, got):
        assert g["ok"] is False and msg in g["error"], (ov, g)




def test_pronunciation_file(tmp_path):
    from vox.families.kokoro.frontend_data import pronunciations_json
    from vox.errors import FormatError

    good = tmp_path / "good.json"
    good.write_text('{"Kokoro": "kˈOkəɹO"}', encoding="utf-8")
    assert json.loads(pronunciations_json(good)) == {"Kokoro": "kˈOkəɹO"}
    assert json.loads(pronunciations_json({"vox": "vˈɑks"})) == {"vox": "vˈɑks"}
    bad = tmp_path / "bad.json"
    bad.write_text('{"Kokoro": "kokoro9"}', encoding="utf-8")
    with pytest.raises(FormatError, match=r'bad.json: override "Kokoro": symbol "9" \(U\+0039\)'):
        pronunciations_json(bad)
    with pytest.raises(FormatError, match="cannot read"):
        pronunciations_json(tmp_path / "missing.json")


def test_frontend_tensors_manifest_and_vocab_check():
    import hashlib

    from vox.families.kokoro.frontend_data import frontend_tensors
    from vox.errors import FormatError
    from vox.reference.kokoro.frontend.lexicon import Lexicon
    from vox.reference.kokoro.frontend.vocab import KOKORO_VOCAB

    wheel = _misaki_wheel()
    tensors, m = frontend_tensors(wheel)
    assert set(tensors) == {"frontend.lexicon", "frontend.lexicon_final"}
    assert all(t.dtype.name == "uint8" and t.ndim == 1 for t in tensors.values())
    assert m["format"] == "vox.kokoro.frontend" and m["format_version"] == 1
    assert m["source"]["license"] == "Apache-2.0"
    for member, sha in m["source"]["files"].items():
        assert hashlib.sha256(_read_member(wheel, member)).hexdigest() == sha
    # the packed table reads back what misaki's files say (gold wins; POS dicts keep DEFAULT)
    gold = json.loads(_read_member(wheel, "misaki/data/us_gold.json"))
    lx = Lexicon(tensors["frontend.lexicon"].tobytes())
    assert lx.count == m["lexicon_entries"]
    for k in ["hello", "NASA", "read", "live", "there", "masterclass"]:
        v = gold.get(k)
        assert lx.get(k) == (v["DEFAULT"] if isinstance(v, dict) else v)
    fin = Lexicon(tensors["frontend.lexicon_final"].tobytes())
    assert fin.get("there") == gold["there"]["None"] and fin.get("There") == gold["there"]["None"]
    # a model vocab without the primary stress mark cannot take this lexicon
    vocab = {k: v for k, v in KOKORO_VOCAB.items() if k != "ˈ"}
    with pytest.raises(FormatError, match=r"symbol 'ˈ' \(U\+02C8\) is not in the model vocab"):
        frontend_tensors(wheel, vocab)
