""".tmod and .tvoice: round trips, conversion of every official fixture, validation, and fuzzing of
both readers (the Python one and the C one through cffi), plus the C ABI's exported symbols and header.

The fuzz tests mutate valid files (truncation, byte flips, header fields, manifest edits with the
checksums fixed up so the deeper checks run, trailing bytes) and require that each reader either
accepts the file, and then every tensor lies inside it, or raises FormatError naming the file. The
C reader runs in this process: a crash there kills pytest, which is a failure too. The two readers
implement the same checks and must also agree on which files are valid.
"""

from __future__ import annotations

import contextlib
import copy
import faulthandler
import hashlib
import itertools
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
import vox.errors
import vox.families
from hypothesis import HealthCheck, event, given, settings, strategies as st

from vox.errors import FormatError
from vox.families.qwen3 import checkpoint as q3ck
from vox.formats import quant, tmod, tvoice
from vox.formats.native import NativeModel
from vox.inspection import inspect as inspect_file
from vox.reference.common import safetensors
from vox.reference.common.checkpoint import Checkpoint

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ["base06", "base17", "custom17", "custom06", "design17"]
FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------------------------- helpers
def qwen3_manifest(**over) -> dict:
    """A valid manifest (all but "tensors") of the qwen3_tts family, for synthetic files."""
    m = {
        "format": "vox.tmod", "format_version": 1, "family": "qwen3_tts", "variant": "base", "size": "0b6",
        "model_id": hashlib.sha256(b"synthetic").hexdigest(),
        "source": {"files": {}, "converter": "test"},
        "precision": {"dtype": "bf16", "quant": "q8", "codec_dtype": "f32"},
        "config": {"talker_config": {"hidden_size": 32, "rms_norm_eps": 1e-6, "name": "t\u00e9st \U0001F600"}},
        "speech_tokenizer_config": {}, "generation": {"temperature": 0.9},
        "tokenizer": {"type": "qwen2_bpe", **{role: t for role, (_, t) in q3ck.TOKENIZER_FILES.items()}},
        "speakers": {"aiden": 2861}, "languages": {"english": 2050},
    }
    m.update(over)
    return m


TOKENIZER = {"tokenizer.vocab.json": b'{"a": 0}', "tokenizer.merges.txt": b"a b\n",
             "tokenizer.tokenizer_config.json": b"{}"}


def small_tensors(rng: np.random.Generator) -> dict:
    """One tensor of every dtype (and an empty one), small enough for fast fuzzing."""
    t = {
        "w.f32": ("f32", rng.normal(size=(3, 5)).astype(np.float32)),
        "w.f16": ("f16", rng.normal(size=(2, 7)).astype(np.float32)),
        "w.bf16": ("bf16", rng.normal(size=(4, 3, 2)).astype(np.float32)),
        "w.q8": ("q8", rng.normal(size=(3, 64)).astype(np.float32)),
        "w.q4": ("q4", rng.normal(size=(2, 2, 32)).astype(np.float32)),
        "ids.i32": ("i32", rng.integers(-2**31, 2**31, size=(5,), dtype=np.int64)),
        "ids.i64": ("i64", rng.integers(-2**62, 2**62, size=(2, 2), dtype=np.int64)),
        "empty": ("f32", np.zeros((0, 4), np.float32)),
    }
    t.update({n: ("u8", np.frombuffer(b, np.uint8)) for n, b in TOKENIZER.items()})
    return t


def expected(dtype: str, a: np.ndarray) -> np.ndarray:
    return quant.roundtrip(a, dtype) if dtype in tmod.FLOAT_DTYPES else a


@contextlib.contextmanager
def watchdog(seconds: float = 30):
    """Kill the process with a traceback if the body hangs (also inside C, where signals can't reach)."""
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def python_read(path: Path) -> tuple[bool, object]:
    """(accepted, detail): run the Python reader over everything it offers."""
    try:
        f = tmod.TmodFile(path)
    except FormatError as e:
        assert path.name in str(e), f"message does not name the file: {e}"
        return False, str(e)
    with f:
        for e in f.tensors.values():
            assert e.offset % tmod.ALIGN == 0
            assert f.data_offset + e.offset + e.nbytes <= f.size == path.stat().st_size
            a = f.array(e.name)
            assert a.shape == e.shape
        blobs = {n: f.blob(n).tobytes() for n in f.tensors}
        try:
            f.verify_checksums()
        except FormatError as e:
            assert path.name in str(e) and "corrupt" in str(e)
        return True, (f.data_offset, {n: (e.offset, e.nbytes) for n, e in f.tensors.items()}, blobs)


def native_read(path: Path) -> tuple[bool, object]:
    try:
        m = NativeModel(path)
    except FormatError as e:
        assert path.name in str(e), f"message does not name the file: {e}"
        return False, str(e)
    with m:
        infos = m.tensors()
        size = path.stat().st_size
        blobs = {}
        for t in infos:
            assert t.nbytes <= size and t.address % tmod.ALIGN == 0
            blobs[t.name] = m.read(t.name)
            assert m.find(t.name) == t
        try:
            m.verify()
        except FormatError as e:
            assert path.name in str(e) and "corrupt" in str(e)
        return True, ({t.name: t.address for t in infos}, blobs)


def check_both(path: Path) -> bool:
    """Both readers: accept (tensors inside the file) or FormatError naming it; and they agree."""
    with watchdog():
        py_ok, py = python_read(path)
        c_ok, c = native_read(path)
    assert py_ok == c_ok, f"readers disagree on {path.name}: python {py_ok} ({py if not py_ok else ''}), " \
                          f"C {c_ok} ({c if not c_ok else ''})"
    if py_ok:
        data_off, where, py_blobs = py
        addresses, c_blobs = c
        assert py_blobs == c_blobs
        # Every tensor sits at the same place relative to the mapping in both readers.
        bases = {addresses[n] - data_off - off for n, (off, nb) in where.items()}
        assert len(bases) <= 1
    return py_ok


class FileNamer:
    """Fresh file names: rewriting one file in place makes ext4 flush it on close (slow)."""

    def __init__(self, d: Path, suffix: str):
        self.d, self.suffix, self.n = d, suffix, itertools.count()

    def write(self, data: bytes) -> Path:
        p = self.d / f"fuzz-{next(self.n)}{self.suffix}"
        p.write_bytes(data)
        return p


# --------------------------------------------------------------------------------- round trip
def test_roundtrip_every_dtype(tmp_path):
    rng = np.random.default_rng(1)
    tensors = small_tensors(rng)
    path = tmp_path / "m.tmod"
    tmod.write_tmod(path, qwen3_manifest(), tensors)
    assert sorted(os.listdir(tmp_path)) == ["m.tmod"]
    raw = path.read_bytes()
    magic, version, moff, mlen, doff, dlen, flen, mcrc, hcrc, _ = tmod.HEADER.unpack_from(raw)
    assert (magic, version, moff, flen) == (b"VOXM", 1, 64, len(raw))
    assert doff % 4096 == 0 and doff == tmod.align(64 + mlen) and dlen % 4096 == 0
    with tmod.TmodFile(path) as f:
        assert {k: v for k, v in f.manifest.items() if k != "tensors"} == qwen3_manifest()
        assert list(f.tensors) == list(tensors)
        for name, (dtype, a) in tensors.items():
            e = f.tensors[name]
            assert (e.dtype, e.shape, e.offset % 4096) == (dtype, a.shape, 0)
            got = f.array(name)
            want = expected(dtype, a)
            assert got.dtype == (np.float32 if dtype in tmod.FLOAT_DTYPES else tmod.INT_DTYPES[dtype])
            assert np.array_equal(got, want), name
            assert e.crc32 == zlib.crc32(f.blob(name).tobytes())
        q, s = f.planes("w.q8")
        q_ref, s_ref = quant.quantize_q8(tensors["w.q8"][1])
        assert np.array_equal(q, q_ref) and np.array_equal(s, s_ref)
        p, s = f.planes("w.q4")
        p_ref, s_ref = quant.quantize_q4(tensors["w.q4"][1])
        assert np.array_equal(p, p_ref) and np.array_equal(s, s_ref)
        assert f.raw("w.bf16").dtype == np.uint16 and f.raw("w.f16").dtype == np.float16
        f.verify_checksums()
        assert q3ck.tokenizer_files(f) == {"vocab.json": b'{"a": 0}', "merges.txt": b"a b\n", "tokenizer_config.json": b"{}"}
    with NativeModel(path) as m:
        assert json.loads(m.manifest_text) == tmod.TmodFile(path).manifest
        infos = m.tensors()
        assert [(t.name, t.dtype, t.shape) for t in infos] == [(n, d, a.shape) for n, (d, a) in tensors.items()]
        for t in infos:
            assert m.read(t.name) == tmod.TmodFile(path).blob(t.name).tobytes()
        m.verify()
        with pytest.raises(KeyError, match="no tensor named"):
            m.find("missing")
    assert check_both(path)


def test_read_checkpoint_dequantizes(tmp_path):
    rng = np.random.default_rng(2)
    tensors = small_tensors(rng)
    tmod.write_tmod(tmp_path / "m.tmod", qwen3_manifest(), tensors)
    ck = q3ck.read_checkpoint(tmp_path / "m.tmod")
    assert isinstance(ck, Checkpoint)
    assert set(ck.names()) == set(tensors) - set(TOKENIZER)
    assert ck.tokenizer_files["merges.txt"] == b"a b\n"
    assert ck.config == qwen3_manifest()["config"] and ck.generation_config == {"temperature": 0.9}
    for name in ck.names():
        dtype, a = tensors[name]
        if dtype in tmod.FLOAT_DTYPES:
            assert np.array_equal(ck.get(name), quant.roundtrip(a, dtype)), name
    assert ck.extra["dtypes"]["w.q4"] == "q4" and ck.extra["precision"]["quant"] == "q8"


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "q8", "q4"])
def test_chunked_encoding_equals_whole(dtype):
    """The converter streams big tensors in chunks; the bytes must not depend on the chunk size."""
    x = np.random.default_rng(3).normal(size=(7, 96)).astype(np.float32)
    whole = b"".join(bytes(c) for c in tmod.encode_chunks(x, dtype))
    for chunk in (32, 96, 160, 4096):
        assert b"".join(bytes(c) for c in tmod.encode_chunks(x, dtype, chunk_elements=chunk * 4)) == whole
    bits = safetensors.f32_to_bf16(x)
    from_bits = b"".join(bytes(c) for c in tmod.encode_chunks(bits, dtype, bf16_bits=True, chunk_elements=256))
    assert from_bits == b"".join(bytes(c) for c in tmod.encode_chunks(safetensors.bf16_to_f32(bits), dtype))


def test_quant_rounding_is_c_roundf():
    """q8/q4 round half away from zero exactly as C's roundf, including just below the .5 ties
    (floor(x + 0.5) gets 0.49999997 wrong in float32)."""
    import cffi

    libm_ffi = cffi.FFI()
    libm_ffi.cdef("float roundf(float);")
    roundf = libm_ffi.dlopen("libm.so.6").roundf
    ties = np.arange(-128, 128, dtype=np.float32) + np.float32(0.5)
    v = np.concatenate([ties, np.nextafter(ties, np.float32(0)), np.nextafter(ties, np.float32(np.inf)),
                        np.random.default_rng(8).uniform(-128, 128, 5000).astype(np.float32)])
    want = np.array([roundf(float(x)) for x in v], np.float32)
    assert np.array_equal(quant._round_away(v).astype(np.float32), want)


def test_writer_is_atomic(tmp_path):
    path = tmp_path / "m.tmod"
    path.write_bytes(b"old contents")
    rng = np.random.default_rng(4)
    tensors = small_tensors(rng)
    specs = [tmod.TensorSpec(n, d, a.shape) for n, (d, a) in tensors.items()]

    class Boom(Exception):
        pass

    # An exception while writing: the temporary file goes, the old file stays.
    with pytest.raises(Boom):
        with tmod.TmodWriter(path, qwen3_manifest(), specs) as w:
            w.write("w.f32", tensors["w.f32"][1])
            assert len(os.listdir(tmp_path)) == 2  # the target and the temporary file
            raise Boom
    assert sorted(os.listdir(tmp_path)) == ["m.tmod"] and path.read_bytes() == b"old contents"
    # A tensor never written: commit refuses.
    with pytest.raises(ValueError, match="were not written"):
        with tmod.TmodWriter(path, qwen3_manifest(), specs) as w:
            w.write("w.f32", tensors["w.f32"][1])
    # Wrong sizes and shapes, values a dtype cannot hold.
    with pytest.raises(ValueError, match="bytes written"):
        with tmod.TmodWriter(path, qwen3_manifest(), specs) as w:
            w.write("w.f32", b"\0" * 8)
    with pytest.raises(ValueError, match="shape"):
        with tmod.TmodWriter(path, qwen3_manifest(), specs) as w:
            w.write("w.f32", np.zeros((5, 3), np.float32))
    with pytest.raises(ValueError, match="outside the f16 range"):
        with tmod.TmodWriter(path, qwen3_manifest(), specs) as w:
            w.write("w.f16", np.full((2, 7), 1e6, np.float32))
    with pytest.raises(ValueError, match="non-finite"):
        with tmod.TmodWriter(path, qwen3_manifest(), specs) as w:
            w.write("w.q8", np.full((3, 64), np.inf, np.float32))
    # An invalid manifest is refused before anything is written.
    with pytest.raises(FormatError, match="missing key \"family\""):
        bad = qwen3_manifest()
        del bad["family"]
        tmod.TmodWriter(path, bad, specs)
    with pytest.raises(ValueError, match="last axis to be a multiple of 32"):
        tmod.TmodWriter(path, qwen3_manifest(), [tmod.TensorSpec("x", "q8", (4, 16))])
    with pytest.raises(FileExistsError):
        tmod.TmodWriter(path, qwen3_manifest(), specs, overwrite=False)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tmod.TmodWriter(tmp_path / "no" / "m.tmod", qwen3_manifest(), specs)
    (tmp_path / "d.tmod").mkdir()
    with pytest.raises(IsADirectoryError):
        tmod.TmodWriter(tmp_path / "d.tmod", qwen3_manifest(), specs)
    (tmp_path / "d.tmod").rmdir()
    assert sorted(os.listdir(tmp_path)) == ["m.tmod"] and path.read_bytes() == b"old contents"
    tmod.write_tmod(path, qwen3_manifest(), tensors)
    assert sorted(os.listdir(tmp_path)) == ["m.tmod"] and tmod.TmodFile(path).manifest["family"] == "qwen3_tts"


# A valid image, then one named rule broken at a time: both readers must reject it with that reason.
def _mutations(raw: bytes, man: dict) -> list[tuple[str, bytes, str]]:
    h = tmod.HEADER.unpack_from(raw)
    mlen, doff = h[3], h[4]
    data = raw[doff:]

    def header(**kw) -> bytes:
        b = bytearray(raw)
        for off, fmt, v in kw.values():
            struct.pack_into(fmt, b, off, v)
        struct.pack_into("<I", b, 52, zlib.crc32(bytes(b[:52])))
        return bytes(b)

    def edit(fn) -> bytes:
        m = copy.deepcopy(man)
        fn(m)
        return tmod.pack(json.dumps(m).encode(), data)

    def flip(pos: int) -> bytes:
        b = bytearray(raw)
        b[pos] ^= 0x10
        return bytes(b)

    t = lambda i: (lambda f: (lambda m: f(m["tensors"][i])))  # noqa: E731
    return [
        ("short", raw[:40], "truncated: 40 bytes, shorter than the 64-byte"),
        ("magic", b"GGUF" + raw[4:], "not a .tmod file"),
        ("newer", header(v=(4, "<I", 2)), "format version 2 was written by a newer vox"),
        ("older", header(v=(4, "<I", 0)), "format version 0 is no longer supported"),
        ("header-crc", flip(17), "corrupt header: CRC-32"),
        ("manifest-off", header(v=(8, "<Q", 128)), "manifest offset 128, expected 64"),
        ("data-off", header(v=(24, "<Q", doff + 4096)), f"data offset {doff + 4096}, expected {doff}"),
        ("data-len", header(v=(32, "<Q", 100)), "data length 100 is not a multiple of 4096"),
        ("truncated", raw[:-1], f"truncated: the header says {len(raw)} bytes, the file has {len(raw) - 1}"),
        ("trailing", raw + b"\0" * 3, "3 trailing bytes"),
        ("manifest-crc", flip(70), "corrupt manifest: CRC-32"),
        ("padding", raw[:64 + mlen] + b"\1" + raw[65 + mlen:], "nonzero bytes between the manifest and the data"),
        ("json", tmod.pack(b'{"a":', data), "corrupt manifest"),
        ("dup-key", tmod.pack(b'{"a":1,"a":2}', data), "duplicate key"),
        ("surrogate", tmod.pack(b'{"a":"\\ud800"}', data), "lone"),
        ("nan", tmod.pack(b'{"a":NaN}', data), "corrupt manifest"),
        ("deep", tmod.pack(b"[" * 65 + b"]" * 65, data), "nesting deeper than 64"),
        ("very-deep", tmod.pack(b"[" * 5000 + b"]" * 5000, data), "nesting deeper than 64"),
        ("not-object", tmod.pack(b"[]", data), "manifest: an array, not an object"),
        ("format", edit(lambda m: m.update(format="vox.tvoice")), "expected \"vox.tmod\""),
        ("version-key", edit(lambda m: m.update(format_version=2)), "format_version 2 does not match"),
        ("family", edit(lambda m: m.update(family="piper")), "unknown model family 'piper'"),
        ("variant", edit(lambda m: m.update(variant="large")), "unknown qwen3_tts variant"),
        ("model-id", edit(lambda m: m.update(model_id="xyz")), "\"model_id\" must be 64 lowercase hex"),
        ("no-config", edit(lambda m: m.pop("config")), "missing key \"config\""),
        ("tensors-type", edit(lambda m: m.update(tensors={})), "\"tensors\" must be an array, not an object"),
        ("dtype", edit(t(0)(lambda e: e.update(dtype="f64"))), "unknown dtype"),
        ("shape-empty", edit(t(0)(lambda e: e.update(shape=[]))), "\"shape\" must be 1 to 4 integers"),
        ("shape-5d", edit(t(0)(lambda e: e.update(shape=[1, 1, 1, 3, 5]))), "\"shape\" must be 1 to 4 integers"),
        ("shape-float", edit(t(0)(lambda e: e.update(shape=[3.0, 5]))), "\"shape\" must be 1 to 4 integers"),
        ("shape-big", edit(t(0)(lambda e: e.update(shape=[2**53, 2**53]))), "shape too large"),
        ("nbytes", edit(t(0)(lambda e: e.update(nbytes=61))), "nbytes 61, but its dtype and shape need 60"),
        ("offset-align", edit(t(0)(lambda e: e.update(offset=100))), "offset 100 is not a multiple of 4096"),
        ("bounds", edit(t(0)(lambda e: e.update(offset=len(data)))), "lie outside the data section"),
        ("overlap", edit(t(1)(lambda e: e.update(offset=0))), "overlap"),
        ("crc-range", edit(t(0)(lambda e: e.update(crc32=2**32))), "\"crc32\" must be an integer in [0, 2^32)"),
        ("q-axis", edit(t(3)(lambda e: e.update(shape=[4, 48]))), "q8 needs the last axis to be a multiple of 32, it is 48"),
        ("duplicate", edit(t(1)(lambda e: e.update(name="w.f32"))), "duplicate tensor name"),
        ("nul-name", edit(t(0)(lambda e: e.update(name="a\0b"))), "without NUL"),
        ("tokenizer", edit(lambda m: m["tokenizer"].update(vocab="w.f32")), "not a 1-D u8 tensor"),
        ("speakers", edit(lambda m: m["speakers"].update(x="1")), "\"speakers\" entry 'x'"),
    ]


def test_readers_refuse_what_is_not_a_regular_file(tmp_path):
    """A directory or a FIFO is refused at once; a FIFO must not block the open waiting for a writer."""
    fifo = tmp_path / "pipe.tmod"
    os.mkfifo(fifo)
    for p in (tmp_path, fifo):
        with watchdog(20):
            with pytest.raises(OSError, match="not a regular file"):
                tmod.TmodFile(p)
            with pytest.raises(Exception, match="not a regular file") as err:
                NativeModel(p)
            assert isinstance(err.value, (OSError, vox.errors.VoxError))
            with pytest.raises(OSError, match="not a regular file"):
                tvoice.read_voice(p)


def test_both_readers_reject_each_broken_rule(tmp_path):
    rng = np.random.default_rng(5)
    path = tmp_path / "good.tmod"
    tmod.write_tmod(path, qwen3_manifest(), small_tensors(rng))
    raw = path.read_bytes()
    man = tmod.TmodFile(path).manifest
    for i, (what, data, why) in enumerate(_mutations(raw, man)):
        p = tmp_path / f"{what}.tmod"
        p.write_bytes(data)
        for reader in (tmod.TmodFile, NativeModel):
            with pytest.raises(FormatError) as err, watchdog():
                reader(p)
            msg = str(err.value)
            assert str(p) in msg and "\n" not in msg, msg
            # The C reader quotes names with "..." where Python uses repr's '...'
            assert why.replace("'", '"') in msg.replace("'", '"'), f"{what} ({reader.__name__}): {msg}"


# ---------------------------------------------------------------------------------- conversion
@pytest.fixture(scope="module")
def converted(qwen3_fixture, tmp_path_factory):
    """converted(variant, dtype=, quant=, codec_dtype=) -> path of the .tmod (cached per module)."""
    from vox.convert import convert

    out = tmp_path_factory.mktemp("converted")
    cache: dict = {}

    def get(variant: str, dtype: str = "bf16", quant: str = "none", codec_dtype: str = "f32") -> Path:
        key = (variant, dtype, quant, codec_dtype)
        if key not in cache:
            p = out / f"{variant}-{dtype}-{quant}-{codec_dtype}.tmod"
            convert(qwen3_fixture(variant), p, dtype=dtype, quant=quant, codec_dtype=codec_dtype)
            cache[key] = p
        return cache[key]

    return get


def _source_id(d: Path) -> tuple[dict, str]:
    names = ["config.json", "generation_config.json", "model.safetensors", "speech_tokenizer/config.json",
             "speech_tokenizer/model.safetensors", "vocab.json", "merges.txt", "tokenizer_config.json"]
    files = {n: hashlib.sha256((d / n).read_bytes()).hexdigest() for n in names}
    lines = "".join(f"{n}:{files[n]}\n" for n in sorted(files))
    return files, hashlib.sha256(lines.encode()).hexdigest()


def _assert_converted(path: Path, src_dir: Path, dtype: str, quant_: str, codec: str) -> dict:
    """Every source tensor is in the file, in the dtype of the table, and equal to the source rounded
    to that dtype (exactly); the manifest carries the configs, tables and ids of the source."""
    from vox.families.qwen3.convert import tensor_dtype

    src = Checkpoint.from_hf_dir(src_dir)
    config = json.loads((src_dir / "config.json").read_text())
    with tmod.TmodFile(path) as f:
        m = f.manifest
        files, mid = _source_id(src_dir)
        assert m["source"]["files"] == files and m["model_id"] == mid
        assert m["family"] == "qwen3_tts" and m["variant"] == config["tts_model_type"]
        assert m["size"] == config["tts_model_size"]
        assert m["precision"] == {"dtype": dtype, "quant": quant_, "codec_dtype": codec}
        assert m["config"] == config
        assert m["speech_tokenizer_config"] == json.loads((src_dir / "speech_tokenizer/config.json").read_text())
        assert m["generation"] == json.loads((src_dir / "generation_config.json").read_text())
        assert m["speakers"] == config["talker_config"]["spk_id"]
        assert m["languages"] == config["talker_config"]["codec_language_id"]
        assert q3ck.tokenizer_files(f) == src.tokenizer_files
        names = set(f.tensors) - {t for _, t in q3ck.TOKENIZER_FILES.values()}
        assert names == set(src.tensors)
        dtypes = {}
        for name in src.tensors:
            e = f.tensors[name]
            a = src.get(name)
            assert e.shape == a.shape, name
            want = tensor_dtype(name, a.shape, dtype, quant_, codec)
            assert e.dtype == want, name
            assert np.array_equal(f.array(name), quant.roundtrip(a, want)), name
            dtypes[name] = e.dtype
        f.verify_checksums()
    with NativeModel(path) as nm:
        nm.verify()
        assert [t.name for t in nm.tensors()] == list(tmod.TmodFile(path).tensors)
    return dtypes


@pytest.mark.parametrize("variant", VARIANTS)
def test_convert_every_variant(variant, qwen3_fixture, converted):
    d = qwen3_fixture(variant)
    dtypes = _assert_converted(converted(variant), d, "bf16", "none", "f32")
    # The defaults (bf16, no quant, f32 codec): 1-D and codec/speaker-encoder tensors f32, the rest bf16.
    entries = tmod.TmodFile(converted(variant)).tensors
    for name, dt in dtypes.items():
        keep_f32 = len(entries[name].shape) == 1 or name.startswith(("speech_tokenizer.", "speaker_encoder."))
        assert dt == ("f32" if keep_f32 else "bf16"), name
    assert any(dt == "bf16" for dt in dtypes.values()) and any(n.startswith("speech_tokenizer.") for n in dtypes)
    ck = q3ck.read_checkpoint(converted(variant))
    ref = Checkpoint.from_hf_dir(d)
    assert ck.config == ref.config and ck.tokenizer_files == ref.tokenizer_files
    assert sorted(ck.names()) == sorted(ref.names())


@pytest.mark.parametrize("dtype,quant_,codec", [("f32", "none", "f32"), ("f16", "q8", "bf16"),
                                                 ("bf16", "q4", "f16"), ("bf16", "q8", "f32")])
def test_convert_precisions(dtype, quant_, codec, qwen3_fixture, converted):
    d = qwen3_fixture("base17")
    path = converted("base17", dtype, quant_, codec)
    dtypes = _assert_converted(path, d, dtype, quant_, codec)
    # The dtype table on names whose role is known (base17: talker hidden 48, MLP 96, code predictor 32).
    q_or = lambda q: q if quant_ != "none" else dtype  # noqa: E731
    assert dtypes["talker.model.layers.0.mlp.down_proj.weight"] == ("q4" if quant_ == "q4" else q_or("q8"))  # K=96
    assert dtypes["talker.model.layers.0.self_attn.q_proj.weight"] == dtype  # K=48: no blocks of 32
    assert dtypes["talker.code_predictor.model.layers.0.self_attn.q_proj.weight"] == (
        "q4" if quant_ == "q4" else q_or("q8"))  # the predictor's layers: q4 too
    assert dtypes["talker.code_predictor.lm_head.3.weight"] == q_or("q8")  # heads: q8 even for q4
    assert dtypes["talker.model.text_embedding.weight"] == dtype
    assert dtypes["talker.code_predictor.model.codec_embedding.0.weight"] == dtype
    assert dtypes["speech_tokenizer.decoder.pre_conv.conv.weight"] == codec
    assert dtypes["speaker_encoder.fc.weight"] == codec
    entries = tmod.TmodFile(path).tensors
    assert all(dt == "f32" for n, dt in dtypes.items() if len(entries[n].shape) == 1)
    # Same source weights, same model_id, whatever the precision.
    assert tmod.TmodFile(path).manifest["model_id"] == tmod.TmodFile(converted("base17")).manifest["model_id"]
    if dtype == "f32" and codec == "f32":
        ref, ck = Checkpoint.from_hf_dir(d), q3ck.read_checkpoint(path)
        for name in ref.names():
            assert np.array_equal(ck.get(name), ref.get(name)), name


def _save_raw_safetensors(path: Path, tensors: dict[str, tuple[str, tuple, bytes]], meta: dict | None = None):
    """safetensors with explicit dtypes (numpy has no bfloat16, so safetensors.save cannot write BF16)."""
    header, blobs, off = {}, [], 0
    if meta:
        header["__metadata__"] = meta
    for name, (dt, shape, data) in tensors.items():
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def _copy_fixture(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("MANIFEST.json"))
    return dst


def test_convert_bf16_f16_and_sharded_sources(qwen3_fixture, tmp_path):
    """Official checkpoints ship bf16; some are f16 or sharded. Widening is exact, so converting a bf16
    source to bf16 is lossless and to f32 gives the widened values; shards convert like one file."""
    from vox.convert import convert

    base = qwen3_fixture("base06")
    st = safetensors.load(base / "model.safetensors")
    names = list(st)

    bf = _copy_fixture(base, tmp_path / "bf16")
    _save_raw_safetensors(bf / "model.safetensors",
                          {n: ("BF16", st[n].shape, safetensors.f32_to_bf16(st[n]).tobytes()) for n in names})
    convert(bf, tmp_path / "bf16-f32.tmod", dtype="f32")
    convert(bf, tmp_path / "bf16-bf16.tmod", dtype="bf16")
    bits = safetensors.load(bf / "model.safetensors")
    with tmod.TmodFile(tmp_path / "bf16-f32.tmod") as f32, tmod.TmodFile(tmp_path / "bf16-bf16.tmod") as b16:
        for n in names:
            assert np.array_equal(f32.array(n), bits[n]), n
            if b16.tensors[n].dtype == "bf16":
                assert np.array_equal(b16.raw(n), safetensors.f32_to_bf16(bits[n])), n

    f16 = _copy_fixture(base, tmp_path / "f16")
    safetensors.save(f16 / "model.safetensors", {n: st[n].astype(np.float16) for n in names})
    convert(f16, tmp_path / "f16.tmod", dtype="f32", quant="q8")
    with tmod.TmodFile(tmp_path / "f16.tmod") as f:
        for n in names:
            want = quant.roundtrip(st[n].astype(np.float16).astype(np.float32), f.tensors[n].dtype)
            assert np.array_equal(f.array(n), want), n

    sh = _copy_fixture(base, tmp_path / "sharded")
    (sh / "model.safetensors").unlink()
    half = len(names) // 2
    parts = {"model-00001-of-00002.safetensors": names[:half], "model-00002-of-00002.safetensors": names[half:]}
    for fname, part in parts.items():
        safetensors.save(sh / fname, {n: np.asarray(st[n]) for n in part})
    (sh / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {n: f for f, part in parts.items() for n in part}}))
    convert(sh, tmp_path / "sharded.tmod", dtype="f32")
    convert(base, tmp_path / "single.tmod", dtype="f32")
    with tmod.TmodFile(tmp_path / "sharded.tmod") as a, tmod.TmodFile(tmp_path / "single.tmod") as b:
        assert set(a.tensors) == set(b.tensors)
        for n in b.tensors:
            assert np.array_equal(a.array(n), b.array(n)), n
        assert set(a.manifest["source"]["files"]) >= set(parts) | {"model.safetensors.index.json"}
        assert a.manifest["model_id"] != b.manifest["model_id"]  # other source files


def test_convert_errors(qwen3_fixture, tmp_path):
    from vox.convert import convert

    base = qwen3_fixture("base06")
    with pytest.raises(FileNotFoundError, match="no such directory"):
        convert(tmp_path / "nowhere", tmp_path / "o.tmod")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no config.json"):
        convert(tmp_path / "empty", tmp_path / "o.tmod")
    part = _copy_fixture(base, tmp_path / "part")
    (part / "vocab.json").unlink()
    (part / "speech_tokenizer" / "model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="missing speech_tokenizer/model.safetensors, vocab.json"):
        convert(part, tmp_path / "o.tmod")
    other = _copy_fixture(base, tmp_path / "other")
    cfg = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps(dict(cfg, model_type="llama")))
    with pytest.raises(FormatError, match="unknown model_type 'llama'"):
        convert(other, tmp_path / "o.tmod")
    (other / "config.json").write_text(json.dumps(dict(cfg, tts_model_type="huge")))
    with pytest.raises(FormatError, match="unknown tts_model_type 'huge'"):
        convert(other, tmp_path / "o.tmod")
    (other / "config.json").write_text(json.dumps(cfg))
    (other / "model.safetensors").write_bytes(b"\x10\0\0\0\0\0\0\0{not json}     ")
    with pytest.raises(FormatError, match="model.safetensors"):
        convert(other, tmp_path / "o.tmod")
    with pytest.raises(ValueError, match="unknown dtype 'f8'"):
        convert(base, tmp_path / "o.tmod", dtype="f8")
    with pytest.raises(ValueError, match="unknown quant 'q2'"):
        convert(base, tmp_path / "o.tmod", quant="q2")
    (tmp_path / "exists.tmod").write_bytes(b"x")
    with pytest.raises(FileExistsError, match="--force"):
        convert(base, tmp_path / "exists.tmod")
    # f16 cannot hold 1e6: a clear error naming the tensor, and no output left behind.
    big = _copy_fixture(base, tmp_path / "big")
    st = safetensors.load(base / "model.safetensors")
    arrays = {n: np.asarray(st[n]) for n in st}
    arrays["talker.model.text_embedding.weight"] = arrays["talker.model.text_embedding.weight"] * 0 + 1e6
    safetensors.save(big / "model.safetensors", arrays)
    with pytest.raises(ValueError, match="text_embedding.weight.*outside the f16 range"):
        convert(big, tmp_path / "big.tmod", dtype="f16")
    assert not (tmp_path / "big.tmod").exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


# ------------------------------------------------------------------------------------------ CLI
def test_cli_build_and_inspect(qwen3_fixture, tmp_path, capsys):
    from vox.cli.main import main

    d = qwen3_fixture("custom06")
    out = tmp_path / "m.tmod"
    assert main(["build", "--model", str(d), "--dtype", "bf16", "--quant", "q8", "-o", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"wrote {out}: ") and "tensors" in line and "q8" in line and "\n" not in line
    assert main(["build", "--model", str(d), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exists" in err and "--force" in err
    assert main(["build", "--model", str(d), "--dtype", "f32", "-o", str(out), "--force"]) == 0
    capsys.readouterr()
    assert main(["build", "--model", str(tmp_path / "nope"), "-o", str(tmp_path / "x.tmod")]) == 1
    assert "no such directory" in capsys.readouterr().err

    assert main(["inspect", str(out)]) == 0
    text = capsys.readouterr().out
    assert "qwen3_tts custom_voice 0b6" in text and "aiden" in text and "f32" in text and "not checked" in text
    assert main(["inspect", str(out), "--json", "--check"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info == inspect_file(out, check=True)
    assert info["kind"] == "tmod" and info["checksums"] == "ok" and info["variant"] == "custom_voice"
    assert info["speakers"] == sorted(json.loads((d / "config.json").read_text())["talker_config"]["spk_id"])
    assert info["tensor_count"] == sum(v["tensors"] for v in info["dtypes"].values())

    raw = bytearray(out.read_bytes())
    raw[-4096 * 3 + 1] ^= 0xFF  # inside the data of one of the last tensors
    bad = tmp_path / "bad.tmod"
    bad.write_bytes(bytes(raw))
    assert main(["inspect", str(bad)]) == 0  # open does not read the data
    capsys.readouterr()
    assert main(["inspect", str(bad), "--check"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and "corrupt" in err
    bad.write_bytes(bytes(raw[:5000]))
    assert main(["inspect", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "truncated" in err
    (tmp_path / "x.bin").write_bytes(b"hello world, not a model")
    assert main(["inspect", str(tmp_path / "x.bin")]) == 1
    assert "neither a .tmod nor a .tvoice" in capsys.readouterr().err


# --------------------------------------------------------------------------------------- voices
QWEN3_MODES = vox.families.get("qwen3_tts").voice_schema.modes  # mode -> (variant, required, allowed, text)


def make_voice(mode: str, model_id: str, *, dim: int = 32, groups: int = 16, seed: int = 0) -> tvoice.Voice:
    rng = np.random.default_rng(seed)
    v = tvoice.Voice("qwen3_tts", mode, model_id, QWEN3_MODES[mode][0], name=f"test {mode}",
                     defaults={"seed": 7, "temperature": 0.8})
    if mode in ("icl", "xvector"):
        v.arrays["speaker_embedding"] = rng.normal(size=dim).astype(np.float32)
        v.arrays["source_wav"] = (0.1 * rng.normal(size=2400)).astype(np.float32)
        v.source_sample_rate = 24000
    if mode == "icl":
        v.arrays["ref_codes"] = rng.integers(0, 2048, size=(20, groups)).astype(np.int64)
        v.arrays["ref_text_tokens"] = rng.integers(0, 151936, size=9).astype(np.int64)
        v.texts["ref_text"] = "Hello there, \u00e9t\u00e9."
    if mode == "speaker":
        v.texts.update(speaker="aiden", instruct="calm")
        v.language = "english"
    if mode == "design":
        v.texts["instruct"] = "A warm, low voice."
    return v


_MODEL_FOR_MODE = {"icl": "base06", "xvector": "base06", "speaker": "custom06", "design": "design17"}


@pytest.mark.parametrize("mode", list(QWEN3_MODES))
def test_voice_roundtrip_and_binding(mode, converted, tmp_path, capsys):
    man = tmod.TmodFile(converted(_MODEL_FOR_MODE[mode])).manifest
    v = make_voice(mode, man["model_id"])
    path = tmp_path / "v.tvoice"
    tvoice.write_voice(path, v)
    assert os.listdir(tmp_path) == ["v.tvoice"]
    back = tvoice.read_voice(path)
    assert back == v
    tvoice.check_model(back, man, str(path))
    # any safetensors reader opens it
    st = safetensors.load(path)
    assert st.metadata["format"] == "vox.tvoice" and set(st) == set(v.tensors())
    info = inspect_file(path)
    assert info["kind"] == "tvoice" and info["mode"] == mode and info["model_id"] == man["model_id"]
    if mode == "icl":
        assert info["lengths"] == {"ref_frames": 20, "ref_text_tokens": 9, "source_seconds": 0.1,
                                   "speaker_embedding_dim": 32}
    from vox.cli.main import main

    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"({mode})" in out and man["model_id"] in out and "checksums  ok" in out


def test_voice_binding_errors(converted):
    man = tmod.TmodFile(converted("base06")).manifest
    mid = man["model_id"]
    cases = [
        (make_voice("icl", "0" * 64), "made with model 000000000000, this model is"),
        (make_voice("icl", mid, dim=48), "speaker_embedding has 48 values, the model's speaker encoder makes 32"),
        (make_voice("icl", mid, groups=8), "ref_codes has 8 code groups, the model 16"),
    ]
    v = make_voice("icl", mid)
    v.arrays["ref_codes"][3, 2] = 5000
    cases.append((v, "ref_codes holds code 5000, the codebook has 2048"))
    v = make_voice("icl", mid)
    v.language = "klingon"
    cases.append((v, "no language 'klingon'"))
    for voice, why in cases:
        with pytest.raises(FormatError, match=re.escape(why)):
            tvoice.check_model(voice, man, "v.tvoice")
    with pytest.raises(FormatError, match="needs the base variant, the model is custom_voice"):
        tvoice.check_model(make_voice("icl", mid), dict(man, variant="custom_voice"), "v.tvoice")
    cman = tmod.TmodFile(converted("custom06")).manifest
    v = make_voice("speaker", cman["model_id"])
    v.texts["speaker"] = "nobody"
    with pytest.raises(FormatError, match="no speaker 'nobody'"):
        tvoice.check_model(v, cman, "v.tvoice")


def test_voice_validation(tmp_path):
    mid = "ab" * 32
    path = tmp_path / "v.tvoice"
    # Invalid voices are refused by the writer, before anything is written.
    bad = []
    v = make_voice("icl", mid)
    del v.arrays["ref_codes"]
    bad.append((v, "a icl voice needs the tensor ref_codes"))
    v = make_voice("icl", mid)
    v.texts["ref_text"] = ""
    bad.append((v, "a icl voice needs ref_text"))
    v = make_voice("xvector", mid)
    v.arrays["ref_codes"] = np.zeros((3, 16), np.int64)
    bad.append((v, "a xvector voice has no ref_codes"))
    v = make_voice("design", mid)
    v.variant = "base"
    bad.append((v, "belongs to the voice_design variant"))
    v = make_voice("speaker", mid)
    v.texts["speaker"] = ""
    bad.append((v, "needs speaker"))
    v = make_voice("xvector", mid)
    v.arrays["speaker_embedding"] = v.arrays["speaker_embedding"].astype(np.float64)
    bad.append((v, "speaker_embedding must be F32"))
    v = make_voice("xvector", mid)
    v.arrays["speaker_embedding"][0] = np.nan
    bad.append((v, "non-finite"))
    v = make_voice("icl", mid)
    v.arrays["ref_codes"] = v.arrays["ref_codes"][0]
    bad.append((v, "ref_codes has shape [16]; it must have 2 non-empty axes"))
    v = make_voice("xvector", mid)
    v.source_sample_rate = None
    bad.append((v, "needs a positive integer source_sample_rate"))
    bad.append((make_voice("xvector", "XYZ"), "model_id must be 64 lowercase hex"))
    v = make_voice("design", mid)
    v.mode = "clone"
    bad.append((v, "unknown voice mode 'clone'"))
    for voice, why in bad:
        with pytest.raises(FormatError, match=re.escape(why)):
            tvoice.write_voice(path, voice)
        assert not os.listdir(tmp_path)

    # Files that are broken on disk.
    good = make_voice("icl", mid)
    tvoice.write_voice(path, good)
    st = safetensors.load(path)
    meta = dict(st.metadata)
    arrays = {n: np.asarray(st[n]) for n in st}

    def resave(name: str, tensors=None, **meta_over) -> Path:
        p = tmp_path / name
        m = {k: v for k, v in {**meta, **meta_over}.items() if v is not None}
        safetensors.save(p, arrays if tensors is None else tensors, m)
        return p

    files = [
        (resave("a.tvoice", format="vox.tmod"), "not a .tvoice file (metadata format is 'vox.tmod'"),
        (resave("b.tvoice", format_version="2"), "voice format version 2 was written by a newer vox"),
        (resave("c.tvoice", format_version="0"), "voice format version 0 is no longer supported"),
        (resave("d.tvoice", family="piper"), "unknown model family 'piper'"),
        (resave("e.tvoice", mode="clone"), "unknown voice mode 'clone'"),
        (resave("f.tvoice", variant="custom_voice"), "a icl voice belongs to the base variant"),
        (resave("g.tvoice", crc32=None), "metadata crc32 must give a CRC-32 for every tensor"),
        (resave("h.tvoice", {**arrays, "extra": np.zeros(3, np.float32)}), "unknown tensor 'extra'"),
        (resave("i.tvoice", {**arrays, "ref_codes": arrays["ref_codes"].astype(np.int32)}), "ref_codes is I32"),
        (resave("j.tvoice", defaults="[1,"), "metadata defaults is not valid JSON"),
        (resave("k.tvoice", source_sample_rate="fast"), "invalid source_sample_rate"),
        (resave("l.tvoice", model_id=None), "metadata has no model_id"),
    ]
    raw = bytearray(path.read_bytes())
    raw[-5] ^= 0xFF  # in the last tensor's data
    (tmp_path / "m.tvoice").write_bytes(bytes(raw))
    files.append((tmp_path / "m.tvoice", "is corrupt: CRC-32"))
    (tmp_path / "t.tvoice").write_bytes(path.read_bytes() + b"\0")
    files.append((tmp_path / "t.tvoice", "1 trailing bytes after the last tensor"))
    (tmp_path / "n.tvoice").write_bytes(bytes(raw[:100]))
    files.append((tmp_path / "n.tvoice", "not a valid .tvoice (safetensors) file"))
    for p, why in files:
        with pytest.raises(FormatError) as err:
            tvoice.read_voice(p)
        assert str(p) in str(err.value) and why in str(err.value), str(err.value)
    with pytest.raises(FileExistsError):
        tvoice.write_voice(path, good, overwrite=False)


# ------------------------------------------------------------------------------------------ fuzz
@pytest.fixture(scope="module")
def fuzz_seed(tmp_path_factory):
    """(directory, valid .tmod bytes, its manifest) for the fuzz tests."""
    d = tmp_path_factory.mktemp("fuzz")
    p = d / "seed.tmod"
    tmod.write_tmod(p, qwen3_manifest(), small_tensors(np.random.default_rng(6)))
    return d, p.read_bytes(), tmod.TmodFile(p).manifest


@FUZZ
@given(data=st.data())
def test_fuzz_truncate_flip_append(fuzz_seed, data):
    d, raw, _ = fuzz_seed
    names = FileNamer(d, ".tmod")
    op = data.draw(st.sampled_from(["truncate", "flip", "append", "header"]))
    b = bytearray(raw)
    if op == "truncate":
        b = b[:data.draw(st.integers(0, len(raw) - 1))]
    elif op == "flip":
        region = data.draw(st.sampled_from([(0, 64), (64, 4096), (0, len(raw))]))
        for _ in range(data.draw(st.integers(1, 8))):
            b[data.draw(st.integers(*region).filter(lambda i: i < len(raw)))] ^= data.draw(st.integers(1, 255))
    elif op == "append":
        b += data.draw(st.binary(min_size=1, max_size=5000))
    else:  # one header field set to an arbitrary value, with the header CRC fixed (or not)
        off, fmt = data.draw(st.sampled_from([(4, "<I"), (8, "<Q"), (16, "<Q"), (24, "<Q"), (32, "<Q"), (40, "<Q"),
                                              (48, "<I"), (56, "<Q")]))
        bits = 32 if fmt == "<I" else 64
        v = data.draw(st.one_of(st.integers(0, 2**bits - 1), st.sampled_from([0, 1, 2, 64, 4096, 8192, 2**31])))
        struct.pack_into(fmt, b, off, v)
        if data.draw(st.booleans()):
            struct.pack_into("<I", b, 52, zlib.crc32(bytes(b[:52])))
    ok = check_both(names.write(bytes(b)))
    event(f"{op}: {'accepted' if ok else 'rejected'}")
    if op in ("truncate", "append"):
        assert not ok


_json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-2**64, 2**64), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, 1, 4, 31, 32, 64, 4095, 4096, 8192, 2**32 - 1, 2**32, 2**53, 2**53 + 1, -1, 1.5]),
    st.text(max_size=6), st.sampled_from(list(tmod.DTYPES) + ["w.f32", "w.q8", "empty", "tokenizer.merges.txt"]))
_json_value = st.recursive(_json_scalar, lambda c: st.lists(c, max_size=5) | st.dictionaries(st.text(max_size=4), c,
                                                                                              max_size=4), max_leaves=8)
_shape = st.lists(st.integers(-1, 300) | st.sampled_from([2**53, 2**62, 2**64]), max_size=5)


@FUZZ
@given(data=st.data())
def test_fuzz_manifest_with_fixed_checksums(fuzz_seed, data):
    """Edit the manifest (as JSON or as text), then re-pack with consistent lengths and CRCs, so every
    edit reaches the JSON parser and the manifest and tensor checks."""
    d, raw, man = fuzz_seed
    names = FileNamer(d, ".tmod")
    data_section = raw[tmod.HEADER.unpack_from(raw)[4]:]
    m = copy.deepcopy(man)
    tensors = m["tensors"]
    for _ in range(data.draw(st.integers(1, 3))):
        op = data.draw(st.sampled_from(["field", "shape", "offset", "del", "top", "topdel", "dup", "drop", "nested"]))
        i = data.draw(st.integers(0, len(tensors) - 1)) if tensors else 0
        if not tensors and op in ("field", "shape", "offset", "del", "dup", "drop"):
            continue
        if op == "field":
            key = data.draw(st.sampled_from(["name", "dtype", "shape", "offset", "nbytes", "crc32", "extra"]))
            tensors[i][key] = data.draw(_json_value)
        elif op == "shape":
            tensors[i]["shape"] = data.draw(_shape)
        elif op == "offset":
            tensors[i]["offset"] = 4096 * data.draw(st.integers(-1, len(data_section) // 4096 + 1))
        elif op == "del":
            tensors[i].pop(data.draw(st.sampled_from(sorted(tensors[i]))), None)
        elif op == "top":
            m[data.draw(st.sampled_from(sorted(m)))] = data.draw(_json_value)
        elif op == "topdel":
            m.pop(data.draw(st.sampled_from(sorted(m))))
        elif op == "dup":
            tensors.append(copy.deepcopy(tensors[i]))
        elif op == "drop":
            tensors.pop(i)
        else:
            sub = data.draw(st.sampled_from(["tokenizer", "precision", "speakers", "languages"]))
            if isinstance(m.get(sub), dict):
                m[sub][data.draw(st.sampled_from(sorted(m[sub]) + ["x"]))] = data.draw(_json_value)
        tensors = m["tensors"] if isinstance(m.get("tensors"), list) and all(
            isinstance(t, dict) for t in m["tensors"]) else []
    text = json.dumps(m, ensure_ascii=data.draw(st.booleans())).encode()
    if data.draw(st.booleans()):  # text-level edits too: the parser's own error paths
        b = bytearray(text)
        for _ in range(data.draw(st.integers(1, 4))):
            at = data.draw(st.integers(0, len(b) - 1))
            kind = data.draw(st.sampled_from(["set", "del", "ins"]))
            ch = data.draw(st.sampled_from(list(b'{}[]",:\\0123456789-.eEu ') + [0x80, 0xC3, 0xED, 0xFF, 0]))
            if kind == "set":
                b[at] = ch
            elif kind == "del" and len(b) > 1:
                del b[at]
            else:
                b.insert(at, ch)
        text = bytes(b)
    ok = check_both(names.write(tmod.pack(text, data_section)))
    event("accepted" if ok else "rejected")


@FUZZ
@given(data=st.data())
def test_fuzz_voice_files(tmp_path_factory, data):
    d = tmp_path_factory.getbasetemp() / "fuzz-voice"
    d.mkdir(exist_ok=True)
    names = FileNamer(d, ".tvoice")
    mode = data.draw(st.sampled_from(list(QWEN3_MODES)))
    seed = d / f"seed-{mode}.tvoice"
    if not seed.exists():
        tvoice.write_voice(seed, make_voice(mode, "cd" * 32))
    raw = bytearray(seed.read_bytes())
    (n,) = struct.unpack_from("<Q", raw)
    op = data.draw(st.sampled_from(["truncate", "flip", "append", "header"]))
    if op == "truncate":
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    elif op == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            raw[data.draw(st.integers(0, len(raw) - 1))] ^= data.draw(st.integers(1, 255))
    elif op == "append":
        raw += data.draw(st.binary(min_size=1, max_size=300))
    else:  # rewrite the safetensors header: metadata values, tensor dtypes/shapes/offsets
        header = json.loads(raw[8:8 + n])
        body = bytes(raw[8 + n:])
        for _ in range(data.draw(st.integers(1, 3))):
            key = data.draw(st.sampled_from(sorted(header)))
            if key == "__metadata__":
                meta = header[key]
                mk = data.draw(st.sampled_from(sorted(meta) + ["new"]))
                if data.draw(st.booleans()):
                    meta.pop(mk, None)
                else:
                    meta[mk] = data.draw(st.text(max_size=8) | st.sampled_from(
                        ["1", "2", "0", "icl", "speaker", "base", "{}", "[", '{"speaker_embedding": 1}']))
            else:
                field = data.draw(st.sampled_from(["dtype", "shape", "data_offsets"]))
                header[key][field] = data.draw(st.one_of(
                    st.sampled_from(["F32", "I64", "I32", "BF16", "U8"]), _shape,
                    st.lists(st.integers(-1, len(body) + 10) | st.just(2**64), min_size=2, max_size=2)))
        h = json.dumps(header).encode()
        raw = bytearray(struct.pack("<Q", len(h)) + h + body)
    p = names.write(bytes(raw))
    with watchdog():
        try:
            v = tvoice.read_voice(p)
        except FormatError as e:
            assert p.name in str(e)
            event(f"{op}: rejected")
            return
    event(f"{op}: accepted")
    v.validate(str(p))
    assert op not in ("truncate", "append")


# ------------------------------------------------------------------------------------ C ABI
def _map_symbols() -> set[str]:
    text = re.sub(r"/\*.*?\*/", "", (ROOT / "core" / "vox.map").read_text(), flags=re.S)
    glob = text.split("global:")[1].split("local:")[0]
    return {s.strip() for s in glob.split(";") if s.strip()}


def test_exported_symbols_equal_version_script():
    from vox._native import _LIBNAMES, _find, lib

    nm = shutil.which("nm")
    assert nm is not None, "nm (binutils) is needed to list libvox's exported symbols"
    import sys

    so = _find(_LIBNAMES.get(sys.platform, "libvox.so"))
    out = subprocess.run([nm, "-D", "--defined-only", str(so)], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1].split("@")[0] for line in out.splitlines()
                if len(line.split()) == 3 and line.split()[1] in "TDBRVW" and line.split()[1] != "A"}
    assert exported == _map_symbols()
    for name in _map_symbols():  # and the binding (cdef from vox.h) declares every one of them
        assert hasattr(lib, name), name


@pytest.mark.parametrize("compiler,std", [("gcc", "c99"), ("gcc", "c11"), ("g++", "c++11")])
def test_header_compiles_strictly(compiler, std, tmp_path):
    cc = shutil.which(compiler)
    assert cc is not None, f"{compiler} is needed to check that vox.h compiles as {std}"
    src = tmp_path / ("t.cpp" if compiler == "g++" else "t.c")
    src.write_text('#include "vox.h"\nint main(void) { vox_tensor_info t; (void)t; return VOX_OK; }\n'
                   .replace("(void)", "()" if compiler == "g++" else "(void)", 1))
    r = subprocess.run([cc, f"-std={std}", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
                        "-I", str(ROOT / "core" / "include"), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
