"""What a hostile or broken input may cost (docs/reliability.md, "File formats" and "User files"):
every reader refuses it with one clear error naming the file, after allocating memory bounded by a
limit and linear in the input, never by what the input claims. Each case was a real problem found by
probing the readers; the cases around them are the same problem reached another way.

Memory is asserted with tracemalloc (Python and numpy allocations) for the Python readers and with
the peak RSS of a child process for the C readers, against the cost the fix promises, which is far
below what the unbounded readers took (a 2 MB archive inflated to 4.2 GB, a 477-byte file to 1 GB,
a 64 MiB manifest to 3.4 GB).
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import tracemalloc
import types
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vox.convert import onnx_proto
from vox.errors import FormatError
from vox.formats import audio, bounded, tmod, tvoice
from vox.formats.torch_pickle import PICKLE_MAX_OPS, read_torch_file

ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20


def peak_python_bytes(fn) -> tuple[object, int]:
    """(fn()'s result or the exception it raised, the peak bytes Python and numpy allocated meanwhile)."""
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 - returned for the caller to check
            out = e
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def child_peak_rss(code: str) -> tuple[str, int]:
    """Run `code` in a fresh interpreter; (its stdout, its peak RSS in bytes above the interpreter's
    own after importing vox and numpy). The peak is VmHWM, the child's own high-water mark:
    getrusage's ru_maxrss starts a spawned child at its parent's peak."""
    prog = ("import numpy, vox, vox.formats.native\n"
            "def hwm():\n"
            "    return int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) * 1024\n"
            "base = hwm()\n"
            f"{code}\n"
            "print('PEAK', hwm() - base)\n")
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out, peak = r.stdout.rsplit("PEAK ", 1)
    return out, int(peak)


# ------------------------------------------------------------------------ torch.save checkpoints
# A torch.save archive built by hand: data.pkl assembled from pickle opcodes (what torch writes, see
# vox/formats/torch_pickle.py), so any size, stride and storage record can be stated.
def _str(s: str) -> bytes:
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def _int(n: int) -> bytes:
    b = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(b)]) + b  # LONG1


def _tuple(xs) -> bytes:
    return b"(" + b"".join(_int(x) for x in xs) + b"t"


def tensor_pickle(numel: int, offset: int, size, stride, storage: str = "FloatStorage") -> bytes:
    """pickle of {"t": _rebuild_tensor_v2(<storage '0' of numel elements>, offset, size, stride, False,
    OrderedDict())}, protocol 2."""
    pid = b"(" + _str("storage") + b"ctorch\n" + storage.encode() + b"\n" + _str("0") + _str("cpu") + _int(numel) + b"t"
    call = (b"ctorch._utils\n_rebuild_tensor_v2\n(" + pid + b"Q" + _int(offset) + _tuple(size) + _tuple(stride)
            + b"\x89ccollections\nOrderedDict\n)R" + b"tR")
    return b"\x80\x02}" + _str("t") + call + b"s."


def torch_zip(path: Path, pkl: bytes, storage: bytes | None, method=zipfile.ZIP_STORED, declared: int | None = None):
    """archive/data.pkl + archive/data/0 (storage bytes, compressed with `method`); declared: the
    uncompressed size written into the member's headers instead of the true one."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        if storage is not None:
            z.writestr(zipfile.ZipInfo("archive/data/0"), storage, compress_type=method)
    raw = bytearray(buf.getvalue())
    if declared is not None:
        name = b"archive/data/0"
        local = raw.find(b"PK\x03\x04")
        while raw[local + 30:local + 30 + len(name)] != name:
            local = raw.find(b"PK\x03\x04", local + 4)
        struct.pack_into("<I", raw, local + 22, declared)  # local header: uncompressed size
        central = raw.find(b"PK\x01\x02")
        while raw[central + 46:central + 46 + len(name)] != name:
            central = raw.find(b"PK\x01\x02", central + 4)
        struct.pack_into("<I", raw, central + 24, declared)  # central directory: uncompressed size
    path.write_bytes(bytes(raw))
    return path


PACK = (510, 1, 256)  # a Kokoro voice pack, as the official voices/*.pt hold it
PACK_STRIDE = (256, 256, 1)


def test_torch_reader_reads_what_torch_writes(tmp_path):
    """The control for the cases below: the hand-made archives are checkpoints the reader accepts."""
    rng = np.random.default_rng(0)
    pack = rng.normal(size=PACK).astype(np.float32)
    p = torch_zip(tmp_path / "v.pt", tensor_pickle(pack.size, 0, PACK, PACK_STRIDE), pack.tobytes())
    assert np.array_equal(read_torch_file(p)["t"], pack)
    # a view (transpose of a 4 x 6 storage at offset 2), and a legitimately expanded tensor (stride 0)
    base = np.arange(26, dtype=np.float32)
    p = torch_zip(tmp_path / "view.pt", tensor_pickle(26, 2, (6, 4), (1, 6)), base.tobytes())
    assert np.array_equal(read_torch_file(p)["t"], base[2:].reshape(4, 6).T)
    p = torch_zip(tmp_path / "expand.pt", tensor_pickle(1, 0, (3, 5), (0, 0)), base[:1].tobytes())
    assert np.array_equal(read_torch_file(p)["t"], np.zeros((3, 5), np.float32))
    # a deflated storage (not what torch writes, but a re-zipped archive is still a checkpoint)
    p = torch_zip(tmp_path / "deflated.pt", tensor_pickle(pack.size, 0, PACK, PACK_STRIDE), pack.tobytes(),
                  zipfile.ZIP_DEFLATED)
    assert np.array_equal(read_torch_file(p)["t"], pack)


# (name, pickle, storage bytes, zip method, declared size, what the error says, peak bytes allowed)
_BOMB = bytes(64 * MiB)  # deflates to ~64 KB
TORCH_CASES = [
    # the probe's case: a voice-pack tensor over a storage that inflates 1000:1 (64 MiB from 64 KB here,
    # 4.2 GB from 2 MB there); refused from the member's declared size, before inflating
    ("zip bomb under a voice pack", tensor_pickle(len(_BOMB) // 4, 0, PACK, PACK_STRIDE), _BOMB,
     zipfile.ZIP_DEFLATED, None, "more than this file may use", 4 * MiB),
    # the same stream with a small declared size: inflated a chunk at a time, cut at the declared size
    ("zip bomb with a lying size", tensor_pickle(PACK[0] * PACK[2], 0, PACK, PACK_STRIDE), _BOMB,
     zipfile.ZIP_DEFLATED, 4 * PACK[0] * PACK[2], "damaged checkpoint archive", 6 * MiB),
    # bzip2 inflates in unbounded steps (and torch never writes it)
    ("bzip2 member", tensor_pickle(PACK[0] * PACK[2], 0, PACK, PACK_STRIDE), bytes(4 * PACK[0] * PACK[2]),
     zipfile.ZIP_BZIP2, None, "compression method 12", 4 * MiB),
    # the probe's 477-byte file: one float repeated 2^28 times by a zero stride (1 GB, or a MemoryError)
    ("stride 0, 2^28 elements", tensor_pickle(1, 0, (1 << 28,), (0,)), bytes(4), zipfile.ZIP_STORED, None,
     "needs 1073741824 bytes", 1 * MiB),
    ("stride 0 over six axes", tensor_pickle(1, 0, (1024,) * 6, (0,) * 6), bytes(4), zipfile.ZIP_STORED, None,
     "more than this file may use", 1 * MiB),
    ("storage record of 2^50 elements", tensor_pickle(1 << 50, 0, (4,), (1,)), bytes(16), zipfile.ZIP_STORED, None,
     "needs 4503599627370496", 1 * MiB),
    ("storage shorter than its record", tensor_pickle(1000, 0, (4,), (1,)), bytes(16), zipfile.ZIP_STORED, None,
     "has 16 bytes, needs 4000", 1 * MiB),
    ("negative stride", tensor_pickle(4, 3, (4,), (-1,)), bytes(16), zipfile.ZIP_STORED, None, "non-negative", 1 * MiB),
    ("negative size", tensor_pickle(4, 0, (-4,), (1,)), bytes(16), zipfile.ZIP_STORED, None, "non-negative", 1 * MiB),
    ("one stride for two axes", tensor_pickle(4, 0, (2, 2), (1,)), bytes(16), zipfile.ZIP_STORED, None,
     "one stride per axis", 1 * MiB),
    ("view past the storage", tensor_pickle(4, 1, (2, 2), (2, 1)), bytes(16), zipfile.ZIP_STORED, None,
     "outside its storage", 1 * MiB),
    ("negative storage record", tensor_pickle(-4, 0, (4,), (1,)), bytes(16), zipfile.ZIP_STORED, None,
     "invalid storage record", 1 * MiB),
    ("missing storage", tensor_pickle(4, 0, (4,), (1,)), None, zipfile.ZIP_STORED, None, "is missing", 1 * MiB),
    (f"{PICKLE_MAX_OPS + 2} opcodes", b"\x80\x02]" + b"N" * (PICKLE_MAX_OPS + 1) + b".", None, zipfile.ZIP_STORED,
     None, "opcodes", 4 * MiB),
    ("truncated pickle", tensor_pickle(4, 0, (4,), (1,))[:-9], bytes(16), zipfile.ZIP_STORED, None,
     "corrupt checkpoint pickle", 1 * MiB),
]


@pytest.mark.parametrize("name,pkl,storage,method,declared,why,peak", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_torch_reader_bounds(tmp_path, name, pkl, storage, method, declared, why, peak):
    p = torch_zip(tmp_path / "x.pt", pkl, storage, method, declared)
    err, used = peak_python_bytes(lambda: read_torch_file(p))
    assert isinstance(err, FormatError), f"{name}: {err!r}"
    assert str(err).startswith(f"{p}: ") and why in str(err), str(err)
    assert used <= peak, f"{name}: {used} bytes allocated, at most {peak} expected"


def test_torch_reader_budget_argument(tmp_path):
    """max_bytes (what reading an official voices/*.pt may allocate: 16 MiB) bounds a stored archive too."""
    from vox.families.kokoro.convert import read_voice_file

    p = torch_zip(tmp_path / "big.pt", tensor_pickle(1 << 20, 0, (4,), (1,)), bytes(4 * MiB))
    assert read_torch_file(p)["t"].shape == (4,)  # 4 MiB of storage: within 4 x the file's size
    with pytest.raises(FormatError, match="storage archive/data/0 needs 4194304 bytes, more than this file may use"):
        read_torch_file(p, max_bytes=MiB)
    p = torch_zip(tmp_path / "af_big.pt", tensor_pickle(5 << 20, 0, PACK, PACK_STRIDE), bytes(20 * MiB))
    with pytest.raises(FormatError, match="more than this file may use"):
        read_voice_file(p)


def test_torch_reader_refuses_non_regular_files(tmp_path):
    fifo = tmp_path / "fifo.pt"
    os.mkfifo(fifo)
    for p in (Path("/dev/zero"), fifo, tmp_path):
        with pytest.raises(FormatError, match="not a regular file"):
            read_torch_file(p)  # a FIFO would block an ordinary open() until a writer comes


def test_voice_npz_bounds(tmp_path):
    """An .npz of voice packs is a ZIP too: members are size-checked before numpy inflates them."""
    from vox.families.kokoro.convert import read_voice_file

    good = tmp_path / "good.npz"
    pack = np.random.default_rng(1).normal(size=(510, 1, 256)).astype(np.float32)
    np.savez(good, af_x=pack)
    assert np.array_equal(read_voice_file(good)["af_x"], pack[:, 0, :])
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("af_x.npy", _npy_bytes(np.zeros(16 * MiB, np.float32)))  # 64 MiB from 64 KB
    err, used = peak_python_bytes(lambda: read_voice_file(bomb))
    assert isinstance(err, FormatError) and "bomb.npz" in str(err) and "bytes" in str(err), repr(err)
    assert used < 4 * MiB, used


def _npy_bytes(a: np.ndarray) -> bytes:
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


# -------------------------------------------------------------------------- .tmod manifests (C, Python)
def _manifest_file(path: Path, text: bytes) -> Path:
    path.write_bytes(tmod.pack(text, b""))
    return path


def _values_doc(n: int) -> bytes:
    """A manifest-like object of exactly n JSON values (root, "format", "x" and n - 3 zeros)."""
    return b'{"format":"vox.tmod","x":[' + b",".join([b"0"] * (n - 3)) + b"]}"


def _both_readers(path: Path) -> tuple[str, str]:
    from vox.formats.native import NativeModel

    msgs = []
    for reader in (tmod.TmodFile, NativeModel):
        with pytest.raises(FormatError) as e:
            reader(path)
        msgs.append(str(e.value))
    return msgs[0], msgs[1]


@pytest.mark.parametrize("n,over", [(tmod.MAX_MANIFEST_VALUES, False), (tmod.MAX_MANIFEST_VALUES + 1, True)])
def test_manifest_value_limit_is_the_same_in_both_readers(tmp_path, n, over):
    py, c = _both_readers(_manifest_file(tmp_path / "m.tmod", _values_doc(n)))
    for msg in (py, c):
        assert ("more than 262144 values" in msg) == over, msg  # at the limit: the next check speaks


MANIFEST_CASES = [
    ("64 MiB of [0,0,...]", lambda: b"[" + b"0," * (32 * MiB - 2) + b"0]", "more than 262144 values"),
    ("64 MiB of [[],[],...]", lambda: b"[" + b"[]," * ((64 * MiB - 3) // 3) + b"[]]", "more than 262144 values"),
    ("64 MiB of {} members", lambda: b"{" + b",".join(b'"%d":{}' % i for i in range(7_000_000))[:64 * MiB - 2]
     + b"}", "more than 262144 values"),
    ("one string of 64 MiB", lambda: b'"' + b"a" * (64 * MiB - 2) + b'"', "not an object"),
    ("nesting 100k deep", lambda: b"[" * 100_000 + b"]" * 100_000, "nesting deeper than 64 levels"),
]


@pytest.mark.parametrize("name,make,why", MANIFEST_CASES, ids=[c[0] for c in MANIFEST_CASES])
def test_manifest_parse_memory_is_bounded(tmp_path, name, make, why):
    """The probe's 64 MiB manifest cost 3.4 GB (52 bytes per byte) in the C parser; now the value limit
    bounds the nodes (~23 MiB) and the rest is a few copies of the text. Both readers are run in a
    child process, whose peak RSS is the measure."""
    text = make()
    assert len(text) <= tmod.MAX_MANIFEST
    p = _manifest_file(tmp_path / "big.tmod", text)
    for reader in ("vox.formats.native.NativeModel", "vox.formats.tmod.TmodFile"):
        out, peak = child_peak_rss(f"""
import importlib
mod, cls = "{reader}".rsplit(".", 1)
try:
    getattr(importlib.import_module(mod), cls)({str(p)!r})
except vox.errors.FormatError as e:
    print("ERR", e)""")
        assert out.startswith(f"ERR {p}: ") and why in out, out
        # the mapping, copies of the text, and the bounded nodes (measured: C 2.3 x the text, Python 3 x, 5 x
        # for one long string, which json.loads decodes once more); unbounded, the C parser took 52 x
        assert peak <= 5 * len(text) + 32 * MiB, f"{reader}: peak {peak >> 20} MiB for {len(text) >> 20} MiB"


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                     lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4), c, max_size=4),
                     max_leaves=20)


def _count(v) -> int:
    if isinstance(v, dict):
        return 1 + sum(_count(x) for x in v.values())
    if isinstance(v, list):
        return 1 + sum(_count(x) for x in v)
    return 1


def _depth(v) -> int:
    if isinstance(v, dict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((_depth(x) for x in v), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(v=_json, indent=st.sampled_from([None, 0, 2]), ascii_=st.booleans())
def test_json_prescan_counts_what_the_parser_builds(v, indent, ascii_):
    """bounded.json_values / json_depth, the Python readers' check before json.loads, count exactly the
    values and the nesting of the document (what core/src/json.c counts as it parses)."""
    text = json.dumps(v, indent=indent, ensure_ascii=ascii_).encode("utf-8", "surrogatepass")
    assert bounded.json_values(text) == _count(v)
    assert bounded.json_depth(text) == _depth(v)


# ------------------------------------------------------------------------------- .tvoice headers
@pytest.fixture(scope="module")
def engine(qwen3_tmod):
    import vox

    with vox.Engine(qwen3_tmod("base06")) as e:
        yield e


def _tvoice(path: Path, header: bytes) -> Path:
    header += b" " * (-len(header) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    return path


TVOICE_CASES = [
    ("2^20 + 1 values", lambda: b'{"__metadata__":{},"x":[' + b"0," * (1 << 20) + b"0]}", "more than 1048576 values"),
    ("nesting 100k deep", lambda: b'{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nesting deeper than 64"),
    ("metadata JSON nested 100k deep",
     lambda: json.dumps({"__metadata__": {"format": "vox.tvoice", "format_version": "1", "family": "qwen3_tts",
                                          "mode": "xvector", "model_id": "0" * 64, "variant": "base",
                                          "crc32": "[" * 100_000}}).encode(), "crc32"),
]


@pytest.mark.parametrize("name,make,why", TVOICE_CASES, ids=[c[0] for c in TVOICE_CASES])
def test_tvoice_header_limits_in_both_readers(tmp_path, engine, name, make, why):
    p = _tvoice(tmp_path / "v.tvoice", make())
    err, used = peak_python_bytes(lambda: tvoice.read_voice(p))
    assert isinstance(err, FormatError) and str(err).startswith(f"{p}: ") and why in str(err), repr(err)
    assert used <= 4 * p.stat().st_size + 4 * MiB, used
    with pytest.raises(FormatError) as e:
        engine.load_voice(p)
    assert str(p) in str(e.value)
    if "metadata" not in name:
        assert why in str(e.value), str(e.value)


# ------------------------------------------------------------------------------ pronunciation files
def _kokoro_kwargs(path: str) -> dict:
    """`vox say --pronunciations PATH`'s loading step (the Kokoro family's finish_options, which the CLI
    calls with its parsed arguments)."""
    from vox.families.kokoro.family import FAMILY

    a = types.SimpleNamespace(pronunciations=path, pronounce=[])
    return FAMILY.finish_options(a, {})


def _fifo(d: Path) -> str:
    os.mkfifo(d / "fifo.json")
    return str(d / "fifo.json")


def _sparse(d: Path) -> str:
    p = d / "huge.json"
    with open(p, "wb") as f:
        f.truncate(64 * MiB)  # a hole: no disk, but 64 MiB to read
    return str(p)


def _write(name: str, data: bytes):
    def make(d: Path) -> str:
        (d / name).write_bytes(data)
        return str(d / name)

    return make


PRON_CASES = [
    ("/dev/zero", lambda d: "/dev/zero", "not a regular file"),
    ("a FIFO", _fifo, "not a regular file"),
    ("a directory", lambda d: str(d), "not a regular file"),
    ("missing", lambda d: str(d / "missing.json"), "no such file"),
    ("64 MiB", _sparse, "more than the 16777216 a pronunciation file may have"),
    ("nesting 100k deep", _write("deep.json", b"[" * 100_000 + b"]" * 100_000), "nesting deeper than 64 levels"),
    ("object nesting 100k deep", _write("deepo.json", b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
     "nesting deeper than 64 levels"),
    ("2^20 + 1 values", _write("many.json", b'{"a":[' + b"0," * (1 << 20) + b"0]}"), "more than 1048576 values"),
    ("invalid UTF-8", _write("latin1.json", b'{"caf\xe9": "kafA"}'), "not UTF-8"),
    ("not JSON", _write("bad.json", b'{"a": "b",}'), "not valid JSON"),
    ("not an object", _write("list.json", b'["a", "b"]'), "JSON object of word -> phonemes"),
    ("a number for phonemes", _write("num.json", b'{"a": 1}'), "JSON object of word -> phonemes"),
]


@pytest.mark.parametrize("name,make,why", PRON_CASES, ids=[c[0] for c in PRON_CASES])
def test_pronunciation_file_bounds(tmp_path, name, make, why):
    path = make(tmp_path)
    err, used = peak_python_bytes(lambda: _kokoro_kwargs(path))
    assert isinstance(err, FormatError), f"{name}: {err!r}"  # the CLI prints a FormatError as one line
    assert str(err).startswith(f"{path}: ") and why in str(err) and "\n" not in str(err), str(err)
    assert used < 48 * MiB, used
    # the library's loader (a path given to Engine.synthesize(pronunciations=...)) says the same
    from vox.families.kokoro.frontend_data import pronunciations_json

    if name not in ("not an object", "a number for phonemes"):  # those two its own validation words
        with pytest.raises(FormatError, match="nesting|values|regular|no such|UTF-8|JSON|may have"):
            pronunciations_json(Path(path))


def test_pronunciation_file_is_read(tmp_path):
    p = tmp_path / "ok.json"
    p.write_text('{"Kokoro": "kˈOkəɹO", "vox": "vˈɑks"}', encoding="utf-8")
    assert _kokoro_kwargs(str(p))["pronunciations"] == {"Kokoro": "kˈOkəɹO", "vox": "vˈɑks"}


# --------------------------------------------------------------------- reference recordings (cloning)
def _wav(channels: int = 1, rate: int = 16000, frames: int = 160, bits: int = 16, data_len: int | None = None,
         fmt: int = 1) -> bytes:
    block = channels * bits // 8
    data = bytes(frames * block)
    n = len(data) if data_len is None else data_len
    return (b"RIFF" + struct.pack("<I", min(36 + n, 0xFFFFFFFF)) + b"WAVE" + b"fmt " + struct.pack("<IHHIIHH", 16, fmt, channels, rate,
                                                                                rate * block, block, bits)
            + b"data" + struct.pack("<I", n) + data)


def _rf64_claiming(frames: int) -> bytes:
    """An RF64 whose ds64 chunk claims `frames` 16-bit mono frames; 160 are there."""
    data = bytes(320)
    ds64 = b"ds64" + struct.pack("<IQQQI", 28, 36 + 2 * frames, 2 * frames, frames, 0)
    return (b"RF64" + struct.pack("<I", 0xFFFFFFFF) + b"WAVE" + ds64 + b"fmt "
            + struct.pack("<IHHIIHH", 16, 1, 1, 16000, 32000, 2, 16) + b"data" + struct.pack("<I", 0xFFFFFFFF) + data)


AUDIO_CASES = [
    ("/dev/zero", lambda d: "/dev/zero", "not a regular file"),
    ("a FIFO", lambda d: _fifo(d), "not a regular file"),
    ("a directory", lambda d: str(d), "not a regular file"),
    ("not audio", _write("x.wav", b"hello, this is not a recording at all"), "not a recording vox reads"),
    ("header only", _write("h.wav", _wav()[:44]), "empty"),
    ("no frames", _write("z.wav", _wav(frames=0)), "empty"),
    ("65 channels", _write("c.wav", _wav(channels=65, frames=2)), "65 audio channels"),
    ("500 Hz", _write("r.wav", _wav(rate=500)), "sample rate 500 Hz"),
    ("header claims 4 GB", _write("big.wav", _wav(data_len=0xFFFFFFF0)), None),
    ("RF64 claims 2^40 frames", _write("big.rf64", _rf64_claiming(1 << 40)), None),
    ("unknown fmt code", _write("f.wav", _wav(fmt=0x55AA)), "cannot read audio as WAV"),
    ("truncated fmt chunk", _write("t.wav", _wav()[:30]), "cannot read audio as WAV"),
]


@pytest.mark.parametrize("name,make,why", AUDIO_CASES, ids=[c[0] for c in AUDIO_CASES])
def test_reference_recording_bounds(tmp_path, name, make, why):
    """Engine.clone_voice(path) / `vox say --ref-audio`: the recording's header is checked before the
    samples are decoded (why None: the reader may take what the file really holds, never what the
    header claims)."""
    path = make(tmp_path)
    out, used = peak_python_bytes(lambda: audio.read_audio_file(path))
    assert used < 16 * MiB, f"{name}: {used} bytes"
    if why is None:
        if isinstance(out, FormatError):
            assert str(out).startswith(f"{path}: "), str(out)
        else:
            x, sr = out
            assert sr == 16000 and 0 < x.shape[0] <= 160, x.shape
        return
    assert isinstance(out, FormatError), f"{name}: {out!r}"
    assert str(out).startswith(f"{path}: ") and why in str(out), str(out)


def test_reference_recording_reads_like_soundfile():
    import soundfile as sf

    for name in ("ref_en_16k.wav", "ref_en_44k.wav"):
        x, sr = audio.read_audio_file(ROOT / "fixtures" / "audio" / name)
        y, sr2 = sf.read(ROOT / "fixtures" / "audio" / name, dtype="float32", always_2d=False)
        assert sr == sr2 and x.dtype == np.float32 and np.array_equal(x, y)


# ------------------------------------------------------------------------------------- ONNX models
def _pb_len(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _onnx(graph: bytes) -> bytes:
    return _varint(1 << 3) + _varint(8) + _pb_len(7, graph)  # ir_version 8, graph


def _node(op: str, inputs=(), outputs=("y",)) -> bytes:
    return b"".join(_pb_len(1, i.encode()) for i in inputs) + b"".join(_pb_len(2, o.encode()) for o in outputs) + \
        _pb_len(4, op.encode())


def _initializer(name: str, dims, raw: bytes, dtype: int = 1) -> bytes:
    return (_pb_len(1, b"".join(_varint(d) for d in dims)) + _varint(2 << 3) + _varint(dtype)
            + _pb_len(8, name.encode()) + _pb_len(9, raw))


def test_onnx_reader_reads_a_small_model():
    w = np.arange(6, dtype=np.float32)
    g = onnx_proto.read_model(_onnx(_pb_len(1, _node("Relu", ["x"])) + _pb_len(5, _initializer("w", (2, 3), w.tobytes()))))
    assert [n.op_type for n in g.nodes] == ["Relu"] and np.array_equal(g.initializers["w"], w.reshape(2, 3))


ONNX_CASES = [
    ("2^19 empty nodes", lambda: _onnx(b"\x0a\x00" * (1 << 19)), "more than 524288"),
    ("2^19 empty names", lambda: _onnx(_pb_len(1, b"\x0a\x00" * (1 << 19))), "more than 524288"),
    ("2^20 packed int64 values", lambda: _onnx(_pb_len(5, _pb_len(1, b"\x01") + _varint(2 << 3) + _varint(7)
                                                       + _pb_len(7, b"\x01" * (1 << 20)))), "more than 524288"),
    ("2^20 attribute floats", lambda: _onnx(_pb_len(1, _node("Relu") + _pb_len(5, _pb_len(7, bytes(4 << 20))))),
     "more than 524288"),
    ("a 2^62-element shape", lambda: _onnx(_pb_len(5, _initializer("w", (1 << 31, 1 << 31), b"")) + _pb_len(1, _node("Relu"))),
     "invalid shape"),
    ("subgraphs nested 3000 deep", lambda: _onnx(_nested(3000)), "nested too deeply"),
    ("a field past the end", lambda: _onnx(_pb_len(1, _node("Relu")))[:-3], "truncated"),
]


def _nested(depth: int) -> bytes:
    g = _pb_len(1, _node("Relu"))
    for _ in range(depth):  # graph { node { attribute { g: graph } } }
        g = _pb_len(1, _node("If") + _pb_len(5, _pb_len(6, g)))
    return g


@pytest.mark.parametrize("name,make,why", ONNX_CASES, ids=[c[0] for c in ONNX_CASES])
def test_onnx_reader_bounds(name, make, why):
    data = make()
    err, used = peak_python_bytes(lambda: onnx_proto.read_model(data, "m.onnx"))
    assert isinstance(err, FormatError) and str(err).startswith("m.onnx: ") and why in str(err), repr(err)
    assert used < 48 * MiB, f"{name}: {used} bytes"  # ~32 MiB of items at most, the input is a view


# ----------------------------------------------------------------------- fuzz inputs, replayed
def _fuzz_targets():
    sys.path.insert(0, str(ROOT / "fuzz" / "py"))
    import targets

    return targets


@pytest.mark.parametrize("target", ["torch_pickle", "onnx", "pronunciations", "audio", "py_tmod", "py_tvoice"])
def test_fuzz_inputs_replay(target, qwen3_tmod, monkeypatch):
    """Every seed and regression input of a Python fuzz target (fixtures/fuzz/; fuzz/README.md) through
    the target's own checks: the reader accepts it or refuses it with its documented error, and where
    vox has a C reader too (.tmod, .tvoice, on the tiny Qwen3 Base model) both readers agree. The C
    targets' inputs are replayed by CTest (fuzz_replay_*)."""
    t = _fuzz_targets()
    if target == "py_tvoice":
        monkeypatch.setenv("VOX_FUZZ_QWEN3_MODEL", str(qwen3_tmod("base06")))
        monkeypatch.setattr(t, "_ENGINE", None)
    files = sorted(p for p in (ROOT / "fixtures" / "fuzz" / t.SEEDS.get(target, target)).iterdir() if p.is_file())
    assert files
    for p in files:
        t.TARGETS[target](p.read_bytes())
