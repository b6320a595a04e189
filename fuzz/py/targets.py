"""The Python fuzz targets of vox (fuzz/README.md): one function per reader of untrusted input, taking
the input's bytes. A target returns when the reader accepts the input or refuses it as documented
(vox.errors.FormatError naming the file); anything else it lets through is a finding: another
exception, an invariant of the accepted result that fails (AssertionError), a hang or a blow-up of
memory (libFuzzer's -timeout and -rss_limit_mb).

fuzz/py/run.py runs them under atheris (coverage-guided, libFuzzer's engine); the regression inputs of
fixtures/fuzz/<target>/ are replayed through these same functions by
conformance/test_reliability_inputs.py, which needs no atheris.

Where vox has a reader in C too (.tmod, .tvoice), the target also runs it on the same bytes and
asserts that both readers accept or both refuse (the C library found as `import vox` finds it; the
.tvoice comparison needs the Qwen3-TTS Base model VOX_FUZZ_QWEN3_MODEL names).
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import struct
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np

from vox.errors import FormatError, VoxError

_DIR = Path(tempfile.mkdtemp(prefix="vox-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
atexit.register(shutil.rmtree, _DIR, True)


def _file(data: bytes, name: str) -> Path:
    p = _DIR / name
    p.write_bytes(data)
    return p


def _refused(e: VoxError, path: Path) -> None:
    msg = str(e)
    assert msg.startswith(f"{path}: ") or str(path) in msg, f"the error does not name the file: {msg}"
    assert "\n" not in msg and msg.isprintable(), f"the error is not one printable line: {msg!r}"


# ------------------------------------------------------------------------------- torch checkpoints
# Inputs that do not start as a ZIP are a data.pkl, archived with fixed storages "0".."3" (fresh CRCs),
# so mutations of the pickle reach the unpickler instead of failing the archive's checksum.
_STORAGES = {"0": np.arange(16, dtype=np.float32).tobytes(), "1": bytes(range(256)) * 16,
             "2": np.array([1, -2], np.int64).tobytes(), "3": np.ones(2 * 3 * 8, np.float32).tobytes()}


def _torch_zip(pkl: bytes) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", b"little")
        for k, v in _STORAGES.items():
            z.writestr(f"archive/data/{k}", v)
    return b.getvalue()


def _arrays(obj, out: list, depth: int = 0) -> list:
    if isinstance(obj, np.ndarray):
        out.append(obj)
    elif isinstance(obj, dict) and depth < 50:
        for v in obj.values():
            _arrays(v, out, depth + 1)
    elif isinstance(obj, (list, tuple)) and depth < 50:
        for v in obj:
            _arrays(v, out, depth + 1)
    return out


def torch_pickle(data: bytes) -> None:
    """vox.formats.torch_pickle.read_torch_file (Kokoro .pth checkpoints and voice packs), then
    vox.families.kokoro.convert.read_voice_file (a voice .pt) on the same file."""
    from vox.families.kokoro.convert import read_voice_file
    from vox.formats.torch_pickle import read_torch_file

    raw = data if data[:2] == b"PK" else _torch_zip(data)
    p = _file(raw, "voice.pt")
    try:
        obj = read_torch_file(p)
    except FormatError as e:
        _refused(e, p)
    else:
        used = sum(a.nbytes for a in _arrays(obj, []))
        assert used <= 4 * len(raw) + (1 << 20), f"{used} bytes of tensors from a {len(raw)}-byte file"
    try:
        packs = read_voice_file(p)
    except FormatError as e:
        _refused(e, p)
    else:
        (pack,) = packs.values()
        assert pack.shape == (510, 256) and pack.dtype == np.float32 and np.isfinite(pack).all()


# ------------------------------------------------------------------------------------------- ONNX
def onnx(data: bytes) -> None:
    """vox.convert.onnx_proto.read_model (the Kokoro ONNX the converter reads)."""
    from vox.convert import onnx_proto

    try:
        g = onnx_proto.read_model(data, "m.onnx")
    except FormatError as e:
        assert str(e).startswith("m.onnx: ") and "\n" not in str(e), str(e)
        return

    def walk(g, depth=0):
        assert g.nodes or depth, "a graph without nodes accepted"
        for name, a in g.initializers.items():
            assert isinstance(a, np.ndarray) and isinstance(name, str)
        for n in g.nodes:
            assert isinstance(n.op_type, str) and all(isinstance(i, str) for i in n.inputs + n.outputs)
            for s in n.subgraphs:
                walk(s, depth + 1)

    walk(g)


# ----------------------------------------------------------------------------------- user files
def pronunciations(data: bytes) -> None:
    """`vox say --pronunciations FILE` (vox.families.kokoro.frontend_data.read_pronunciations), then the
    overrides' validation against the Kokoro vocabulary (pronunciations_json)."""
    from vox.families.kokoro.frontend_data import pronunciations_json, read_pronunciations

    p = _file(data, "pron.json")
    try:
        obj = read_pronunciations(p)
    except FormatError as e:
        _refused(e, p)
        return
    assert isinstance(obj, dict)
    try:
        text = pronunciations_json(obj)
    except FormatError as e:
        assert "\n" not in str(e), str(e)
        return
    assert isinstance(text, str)


def audio(data: bytes) -> None:
    """A reference recording for voice cloning (vox.formats.audio.read_audio_file: the container by
    magic, soundfile/libsndfile, then vox's checks of channels, rate and length)."""
    from vox.formats import audio as au

    p = _file(data, "ref.wav")
    try:
        x, sr = au.read_audio_file(p)
    except FormatError as e:
        _refused(e, p)
        return
    assert x.dtype == np.float32 and x.ndim in (1, 2) and x.shape[0] >= 1
    assert au.RATES[0] <= sr <= au.RATES[1] and x.shape[0] <= au.MAX_SECONDS * sr and x.size <= au.MAX_SAMPLES
    assert x.ndim == 1 or 1 <= x.shape[1] <= au.MAX_CHANNELS


# ------------------------------------------------------------------------------ .tmod and .tvoice
def _fit_header(b: bytes) -> bytes:
    """The bytes with the .tmod header's lengths and CRCs recomputed to fit them (as fuzz_tmod.c)."""
    from vox.formats import tmod

    if len(b) < tmod.HEADER_SIZE:
        return b
    f = bytearray(b)
    mlen = struct.unpack_from("<Q", f, 16)[0]
    if not 0 < mlen <= len(f) - tmod.HEADER_SIZE:
        mlen = len(f) - tmod.HEADER_SIZE
    mlen = min(mlen, tmod.MAX_MANIFEST)
    doff = tmod.align(tmod.HEADER_SIZE + mlen)
    dlen = max(0, len(f) - doff) // tmod.ALIGN * tmod.ALIGN
    struct.pack_into("<QQQQQ", f, 8, tmod.HEADER_SIZE, mlen, doff, dlen, doff + dlen)
    struct.pack_into("<I", f, 48, zlib.crc32(f[tmod.HEADER_SIZE:tmod.HEADER_SIZE + mlen]))
    struct.pack_into("<I", f, 52, zlib.crc32(f[:52]))
    return bytes(f[:doff + dlen]) if doff + dlen <= len(f) else bytes(f)


def _native_model(p: Path) -> bool:
    from vox.formats.native import NativeModel

    try:
        with NativeModel(p) as m:
            for t in m.tensors():
                assert m.read(t.name) is not None
        return True
    except FormatError as e:
        _refused(e, p)
        return False


def py_tmod(data: bytes) -> None:
    """vox.formats.tmod.TmodFile (every tensor read and dequantized, checksums verified), on the bytes
    and on the bytes with a header fitted to them; the C reader must agree on each."""
    from vox.formats import tmod

    for i, b in enumerate((data, _fit_header(data))):
        p = _file(b, f"m{i}.tmod")
        try:
            with tmod.TmodFile(p) as f:
                for e in f.tensors.values():
                    a = f.array(e.name)
                    assert a.shape == e.shape and f.data_offset + e.offset + e.nbytes <= len(b)
                try:
                    f.verify_checksums()
                except FormatError as e:
                    _refused(e, p)
            ok = True
        except FormatError as e:
            _refused(e, p)
            ok = False
        assert _native_model(p) == ok, f"the Python reader {'accepts' if ok else 'refuses'} {p.name}, the C one not"


_ENGINE = None


def _engine():
    """(vox.Engine, manifest) over VOX_FUZZ_QWEN3_MODEL, or None when it is not set."""
    global _ENGINE
    model = os.environ.get("VOX_FUZZ_QWEN3_MODEL")
    if _ENGINE is None and model:
        import vox
        from vox.formats import tmod

        with tmod.TmodFile(model) as f:
            _ENGINE = (vox.Engine(model, threads=1), f.manifest)
    return _ENGINE


def py_tvoice(data: bytes) -> None:
    """vox.formats.tvoice.read_voice (and check_model against the Qwen3 model), and the C reader
    (Engine.load_voice) on the same file: both accept or both refuse."""
    from vox.formats import tvoice

    p = _file(data, "v.tvoice")
    ok = True
    try:
        v = tvoice.read_voice(p)
        v.validate(str(p))
        eng = _engine()
        if eng is not None:
            tvoice.check_model(v, eng[1], str(p))
    except FormatError as e:
        _refused(e, p)
        ok = False
    eng = _engine()
    if eng is None:
        return
    try:
        eng[0].load_voice(p)
        c_ok = True
    except VoxError as e:  # FormatError, or UNSUPPORTED / NOT_FOUND for a voice of another variant or speaker
        _refused(e, p)
        c_ok = False
    assert c_ok == ok, f"the Python reader {'accepts' if ok else 'refuses'} the voice, the C one not"


TARGETS = {"torch_pickle": torch_pickle, "onnx": onnx, "pronunciations": pronunciations, "audio": audio,
           "py_tmod": py_tmod, "py_tvoice": py_tvoice}
# The seed corpus of each target (fixtures/fuzz/<dir>): the Python .tmod/.tvoice readers share the C ones'.
SEEDS = {"py_tmod": "tmod", "py_tvoice": "tvoice"}
