"""Native codec decoder (core/src/qwen3/codec*.c, through vox.families.qwen3.decode = the "decode" entry of
vox_engine_run) vs the
official code and the numpy reference, backend "cpu".

  whole sequence   one push of every frame == the official decoder forward
  stream mode      chunks of 1 / 4 / 7 frames, warm-up on none / 50 / all real reference frames (the
                   official Mimi encoder on ref_en_24k.wav, 81 frames, and ref_long_24k.wav, 426
                   frames) == the official forward on (warm-up + generated), warm-up audio dropped
  reference mode   300-frame pieces, 25 frames of context, the voice-clone wrapper's cut == the
                   official wrapper's output (boundary inside the reference, inside the speech; no
                   reference at all)

on base06 and base17 (their decoders differ), with f32 codec weights against the 3e-4 rows of the
tolerance table; bf16 / f16 codec weights are reported. Bit-identity (exact array equality) across
chunk sizes and thread counts, including a hypothesis search over chunk sizes, warm-ups and thread
counts (arbitrary chunk *sequences* are covered by core/tests/test_codec.c); invalid input gives
clear errors.
"""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import vox
from vox._native import ffi, lib, string
from vox.families.qwen3 import decode
from vox.reference.common.checkpoint import Checkpoint
from vox.reference.qwen3 import codec_decoder as cd
from vox.verify.qwen3 import codec
from vox.verify.tolerance import Row, measure


SPF = 1920
VS_REF = "qwen3.native_decoder_vs_reference"
BITS = "qwen3.native_decoder_bit_identity"


class Env:
    def __init__(self, tts, dec, refs, engines):
        self.tts, self.dec, self.refs, self.engines = tts, dec, refs, engines


@pytest.fixture(scope="module")
def env(qwen3_fixture, qwen3_tmod, official, ref_audio):
    """env(variant) -> Env(official wrapper, reference CodecDecoder, {wav name: official ref codes},
    {threads: vox.Engine on the f32 .tmod})."""
    cache: dict[str, Env] = {}

    def get(variant: str) -> Env:
        if variant not in cache:
            d = qwen3_fixture(variant)
            tts = official(d)
            refs = {}
            if tts.model.tts_model_type == "base":
                for name in ("ref_en_24k.wav", "ref_long_24k.wav"):
                    wav, sr, text = ref_audio(name)
                    item = tts.create_voice_clone_prompt(ref_audio=(wav, sr), ref_text=text)[0]
                    refs[name] = item.ref_code.cpu().numpy().astype(np.int64)
            path = qwen3_tmod(variant)
            engines = {t: vox.Engine(str(path), threads=t) for t in (1, 2)}
            cache[variant] = Env(tts, cd.CodecDecoder(Checkpoint.from_hf_dir(d)), refs, engines)
        return cache[variant]

    yield get
    for e in cache.values():
        for eng in e.engines.values():
            eng.close()


def random_codes(seed: int, frames: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2048, size=(frames, 16), dtype=np.int64)


def cpu(check: str, ours, want, subject: str, note: str = "") -> Row:
    assert ours.shape == want.shape, (check, subject, ours.shape, want.shape)
    return measure(check, ours, want, subject, note=note, backend="cpu")


def bits(a: np.ndarray, b: np.ndarray, subject: str) -> Row:
    assert a.shape == b.shape and a.dtype == b.dtype == np.float32
    return measure(BITS, a.view(np.uint32), b.view(np.uint32), subject, backend="cpu")


def prime_of(ref, warmup):
    """The reference frames a warm-up feeds, and the `context` argument of decode."""
    if ref is None:
        return ref, 0, np.zeros((0, 16), np.int64)
    n = len(ref) if warmup == "all" else min(int(warmup), len(ref))
    return ref, (-1 if warmup == "all" else int(warmup)), ref[len(ref) - n:]


# ----------------------------------------------------------------------------- whole sequence
WHOLE = {"base06": (1, 3, 4, 5, 73, 150), "base17": (1, 5, 73, 150)}


@pytest.mark.parametrize("variant", ["base06", "base17"])
def test_whole_sequence(env, record, variant):
    """One push of every frame (no warm-up) == the official forward; lengths shorter than every conv
    context, around the attention window (72) and two windows."""
    e = env(variant)
    rows = []
    for t in WHOLE[variant]:
        codes = random_codes(t, t)
        ours = decode(e.engines[1], codes, None, "stream", 0, t)
        off, _ = codec.official_forward(e.tts, codes)
        subject = f"{variant} random {t} frames, one push"
        rows += [cpu("qwen3.decoder_audio_full", ours, off, subject),
                 cpu(VS_REF, ours, cd.decode(e.dec, codes), subject)]
    record(rows)


# ----------------------------------------------------------------------------- stream mode
STREAM = {
    "base06": ((None, None), ("ref_en_24k.wav", 50), ("ref_en_24k.wav", "all"), ("ref_long_24k.wav", "all")),
    "base17": (("ref_en_24k.wav", "all"), ("ref_long_24k.wav", 50)),
}


@pytest.mark.parametrize("variant", ["base06", "base17"])
def test_stream(env, record, variant):
    """Chunks 1, 4, 7 vs the official forward on (warm-up frames + generated), warm-up audio dropped;
    chunk 4 vs the reference stream decoder; all chunk sizes and 1 vs 2 threads bit-identical."""
    e = env(variant)
    rows = []
    for i, (name, warmup) in enumerate(STREAM[variant]):
        ref = e.refs[name] if name else None
        gen = random_codes(11, 80) if ref is None else random_codes(12 + i, 60)
        ref, context, prime = prime_of(ref, warmup)
        off, _ = codec.official_forward(e.tts, np.concatenate([prime, gen]))
        off = off[len(prime) * SPF:]
        label = (f"{variant} random {len(gen)}, no warm-up" if ref is None else
                 f"{variant} {name.split('_24k')[0]} {len(ref)} + {len(gen)}, warm-up {warmup} ({len(prime)} frames)")
        outs = {}
        for chunk in (1, 4, 7):
            outs[chunk] = decode(e.engines[1], gen, ref, "stream", context, chunk)
            rows.append(cpu("qwen3.decoder_audio_stream", outs[chunk], off, f"{label}, chunk {chunk}"))
        rows.append(cpu(VS_REF, outs[4], cd.stream_decode(e.dec, gen, 4, ref, warmup if ref is not None else 0),
                        f"{label}, chunk 4"))
        two = decode(e.engines[2], gen, ref, "stream", context, 4)
        whole = decode(e.engines[2], gen, ref, "stream", context, len(gen))
        for what, a in (("chunk 1", outs[1]), ("chunk 7", outs[7]), ("chunk 4, 2 threads", two),
                        (f"chunk {len(gen)} (all), 2 threads", whole)):
            assert np.array_equal(a.view(np.uint32), outs[4].view(np.uint32)), (label, what)
            rows.append(bits(a, outs[4], f"{label}: {what} vs chunk 4, 1 thread"))
    record(rows)


@pytest.fixture(scope="module")
def chunking_case(env):
    e = env("base06")
    return e, e.refs["ref_en_24k.wav"], random_codes(21, 24), {}


def test_stream_any_chunking(chunking_case, record):
    """Property: any chunk size, warm-up and thread count gives exactly (bit for bit) the audio of
    one push of every frame on one thread after the same warm-up."""
    e, ref, gen, whole = chunking_case
    seen = []

    @settings(max_examples=25, deadline=None)
    @given(st.sampled_from([0, 1, 5, 11, 12, 13, 50, 72, 73, -1]), st.integers(1, 30), st.sampled_from([1, 2]))
    def prop(context, chunk, threads):
        if context not in whole:
            whole[context] = decode(e.engines[1], gen, ref, "stream", context, len(gen))
        got = decode(e.engines[threads], gen, ref, "stream", context, chunk)
        same = np.array_equal(got.view(np.uint32), whole[context].view(np.uint32))
        seen.append(float(np.mean(got.view(np.uint32) == whole[context].view(np.uint32))))
        assert same, (context, chunk, threads)

    prop()
    record(Row(BITS, f"base06 ref_en + 24: {len(seen)} random (warm-up, chunk size, threads) vs one push",
               min(seen), backend="cpu"))


# ----------------------------------------------------------------------------- reference mode
REFERENCE = {"base06": (("ref_long_24k.wav", 40), ("ref_en_24k.wav", 241)), "base17": (("ref_en_24k.wav", 241),)}


@pytest.mark.parametrize("variant", ["base06", "base17"])
def test_reference_mode(env, record, variant):
    """ref_long (426) + 40: the 300-frame piece boundary inside the reference; ref_en (81) + 241:
    inside the speech, where the wrapper's cut is one sample short of 81 * 1920."""
    e = env(variant)
    rows = []
    for i, (name, n) in enumerate(REFERENCE[variant]):
        ref, gen = e.refs[name], random_codes(31 + i, n)
        wrapper, _ = codec.official_generate_audio(e.tts, gen, ref)
        ours = decode(e.engines[1], gen, ref, "reference")
        total = len(ref) + n
        cut = cd.reference_cut(len(ref), total, total * SPF)
        subject = f"{variant} {name.split('_24k')[0]} {len(ref)} + {n}, wrapper output (cut)"
        note = f"piece boundaries at frame {', '.join(str(s) for s in range(300, total, 300))}; cut {cut} samples"
        rows += [cpu("qwen3.decoder_audio_reference", ours, wrapper, subject, note),
                 cpu(VS_REF, ours, cd.decode_reference(e.dec, gen, ref), f"{subject}, reference mode")]
        two = decode(e.engines[2], gen, ref, "reference")
        assert np.array_equal(two.view(np.uint32), ours.view(np.uint32))
        rows.append(bits(two, ours, f"{subject}: 2 threads vs 1"))
    assert cd.reference_cut(81, 322, 322 * 1920) == 81 * 1920 - 1
    record(rows)


def test_reference_mode_without_reference(env, record):
    """CustomVoice (generate_custom_voice; 310 frames: one piece boundary) and a Base x-vector-only
    clone: no cut."""
    rows = []
    for variant, seed, n in (("custom06", 41, 310), ("base17", 42, 37)):
        e = env(variant)
        gen = random_codes(seed, n)
        wrapper, _ = codec.official_generate_audio(e.tts, gen)
        ours = decode(e.engines[1], gen, None, "reference")
        subject = f"{variant} {n} frames, no reference"
        rows += [cpu("qwen3.decoder_audio_reference", ours, wrapper, subject),
                 cpu(VS_REF, ours, cd.decode_reference(e.dec, gen), subject)]
    record(rows)


# ----------------------------------------------------------------------------- codec dtypes
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_codec_dtypes(env, qwen3_tmod, record, dtype):
    """bf16 / f16 codec weights (reported, no limit): stream and reference mode vs the official f32
    decoder; still bit-identical across chunk sizes and threads."""
    e = env("base06")
    ref = e.refs["ref_en_24k.wav"]
    gen = random_codes(12, 60)
    off, _ = codec.official_forward(e.tts, np.concatenate([ref[len(ref) - 50:], gen]))
    rows = []
    with vox.Engine(str(qwen3_tmod("base06", codec_dtype=dtype)), threads=1) as e1, \
            vox.Engine(str(qwen3_tmod("base06", codec_dtype=dtype)), threads=2) as e2:
        assert e1.info["precision"]["codec_dtype"] == dtype
        a4 = decode(e1, gen, ref, "stream", 50, 4)
        rows.append(cpu(f"qwen3.decoder_audio_{dtype}_codec", a4, off[50 * SPF:],
                        f"base06 ref_en 81 + 60, warm-up 50, chunk 4, {dtype} codec"))
        for what, a in (("chunk 1", decode(e1, gen, ref, "stream", 50, 1)),
                        ("chunk 7, 2 threads", decode(e2, gen, ref, "stream", 50, 7))):
            assert np.array_equal(a.view(np.uint32), a4.view(np.uint32)), (dtype, what)
            rows.append(bits(a, a4, f"base06 {dtype} codec: {what} vs chunk 4"))
        gen2 = random_codes(31, 241)
        wrapper, _ = codec.official_generate_audio(e.tts, gen2, ref)
        rows.append(cpu(f"qwen3.decoder_audio_{dtype}_codec", decode(e2, gen2, ref, "reference"), wrapper,
                        f"base06 ref_en 81 + 241, reference mode, {dtype} codec"))
        if dtype == "bf16":   # bf16 dot products (where the path has them) vs f32 products of the same weights
            rows.append(bf16dot_row(e1.info["codec_math"], qwen3_tmod("base06", codec_dtype=dtype), gen, ref, a4))
    record(rows)


def bf16dot_row(math: str, tmod, gen, ref, ours) -> Row:
    """qwen3.decoder_audio_bf16dot: the bf16 codec's convolutions as bf16 dot products (inputs rounded to
    bf16) against the same weights as f32 products (VOX_QWEN3_CODEC=f32): what the rounding of the inputs
    adds; not supported on a path without bf16 dot products (there the codec is the f32-product one)."""
    subject = "base06 ref_en 81 + 60, warm-up 50, chunk 4, bf16 codec"
    if not math.startswith("bf16 dot"):
        return Row.not_supported("qwen3.decoder_audio_bf16dot", subject, math)
    mp = pytest.MonkeyPatch()
    mp.setenv("VOX_QWEN3_CODEC", "f32")
    try:
        with vox.Engine(str(tmod), threads=1) as ef:
            assert ef.info["codec_math"].startswith("f32 products"), ef.info["codec_math"]
            f32 = decode(ef, gen, ref, "stream", 50, 4)
    finally:
        mp.undo()
    return cpu("qwen3.decoder_audio_bf16dot", ours, f32, subject + ": bf16 dot products vs f32 products")


def test_codec_int8(env, qwen3_tmod, record):
    """VOX_QWEN3_CODEC=int8 (an option, not the default): the convolutions and transposed convolutions as
    int8 dot products, against f32 products of the same weights (qwen3.decoder_audio_int8dot) and the
    official f32 decoder (reported); the same bits for any chunk size and thread count, and on a path
    without an int8 kernel the default math with a line that says so."""
    e = env("base06")
    ref = e.refs["ref_en_24k.wav"]
    gen = random_codes(12, 60)
    subject = "base06 ref_en 81 + 60, warm-up 50, chunk 4"
    off, _ = codec.official_forward(e.tts, np.concatenate([ref[len(ref) - 50:], gen]))
    f32 = decode(e.engines[1], gen, ref, "stream", 50, 4)
    mp = pytest.MonkeyPatch()
    mp.setenv("VOX_QWEN3_CODEC", "int8")
    try:
        e1 = vox.Engine(str(qwen3_tmod("base06")), threads=1)
        e2 = vox.Engine(str(qwen3_tmod("base06")), threads=2)
    finally:
        mp.undo()
    with e1, e2:
        math = e1.info["codec_math"]
        if not vox.devices()["cpu"]["dots"]["int8"]:
            assert math.startswith("f32 products"), math
            record([Row.not_supported("qwen3.decoder_audio_int8dot", subject, math)])
            return
        assert math.startswith("int8 dot products"), math
        a4 = decode(e1, gen, ref, "stream", 50, 4)
        rows = [cpu("qwen3.decoder_audio_int8dot", a4, f32, subject + ": int8 dot products vs f32 products"),
                cpu("qwen3.decoder_audio_int8_vs_official", a4, off[50 * SPF:], subject)]
        for what, a in (("chunk 1", decode(e1, gen, ref, "stream", 50, 1)),
                        ("chunk 7, 2 threads", decode(e2, gen, ref, "stream", 50, 7))):
            assert np.array_equal(a.view(np.uint32), a4.view(np.uint32)), what
            rows.append(bits(a, a4, f"base06 int8 codec: {what} vs chunk 4"))
    record(rows)


def test_codec_math_rejects_unknown_values(qwen3_tmod, monkeypatch):
    monkeypatch.setenv("VOX_QWEN3_CODEC", "int4")
    with pytest.raises(vox.VoxError, match="VOX_QWEN3_CODEC=int4: use auto"):
        vox.Engine(str(qwen3_tmod("base06")), threads=1)


# ----------------------------------------------------------------------------- invalid input
def _raw_array(name: str, a: np.ndarray | None, keep: list, dtype=lib.VOX_DTYPE_I32, data=True):
    """A vox_array input of the raw ABI (numpy `a` as I32 by default; data=False: no data pointer)."""
    x = ffi.new("vox_array *")
    nm = ffi.new("char[]", name.encode())
    x.name, x.dtype = nm, dtype
    if a is not None:
        a = np.ascontiguousarray(a, dtype=np.int32)
        x.ndim = a.ndim
        for d, n in enumerate(a.shape):
            x.shape[d] = n
        x.data = ffi.from_buffer(a) if data and a.size else ffi.NULL
    keep += [nm, a, x]
    return x[0]


def _raw_decode(eng, entry, inputs, n_inputs=None, taps=None, out=True):
    """vox_engine_run(entry, no voice, no params, inputs, taps): (status, the trace or None, the message)."""
    arr = ffi.new("vox_array[]", max(len(inputs), 1))
    for i, x in enumerate(inputs):
        arr[i] = x
    t = ffi.new("vox_trace **")
    st = lib.vox_engine_run(eng._h, entry, ffi.NULL, ffi.NULL, arr if inputs or n_inputs else ffi.NULL,
                            len(inputs) if n_inputs is None else n_inputs, taps or ffi.NULL, t if out else ffi.NULL)
    msg = string(lib.vox_last_error())
    return st, (ffi.gc(t[0], lib.vox_trace_free) if st == lib.VOX_OK else None), msg


def test_invalid_input(env):
    e = env("base06")
    eng = e.engines[2]
    codes = random_codes(5, 6)
    for bad, where in ((2048, "codes"), (-1, "codes"), (1 << 30, "codes")):
        c = codes.copy()
        c[3, 7] = bad
        with pytest.raises(vox.VoxError, match=r"codes\[3\]\[7\] = .* out of range"):
            decode(eng, c, None, "stream", 0, 4)
        with pytest.raises(vox.VoxError, match="out of range"):
            decode(eng, codes, c, "reference")
        with pytest.raises(vox.VoxError, match=r"ref_codes\[3\]\[7\]"):
            decode(eng, codes, c, "stream", -1, 4)
    with pytest.raises(vox.VoxError, match="no frames"):
        decode(eng, np.zeros((0, 16), np.int64), None, "stream", 0, 4)
    with pytest.raises(vox.VoxError, match="no frames"):
        decode(eng, np.zeros((0, 16), np.int64), codes, "reference")
    with pytest.raises(vox.VoxError, match="context"):
        decode(eng, codes, codes, "stream", -2, 4)
    with pytest.raises(vox.VoxError, match="chunk_frames"):
        decode(eng, codes, None, "stream", 0, 0)

    # the raw ABI (vox_engine_run "decode"): NULL pointers and malformed inputs are errors naming the
    # problem; the trace holds the whole audio, the same as the Python helper's
    keep: list = []
    inv = lib.VOX_ERR_INVALID_ARGUMENT
    c = _raw_array("codes", codes, keep)
    assert _raw_decode(eng, b"decode", [c], out=False)[0] == inv
    assert _raw_decode(eng, ffi.NULL, [c])[0] == inv
    assert _raw_decode(eng, b"decode", [], n_inputs=2)[0] == inv
    st, _, msg = _raw_decode(eng, b"nothing", [c])
    assert st == lib.VOX_ERR_NOT_FOUND and "decode" in msg
    assert _raw_decode(eng, b"decode", [])[0] == inv                                   # no codes
    st, _, msg = _raw_decode(eng, b"decode", [_raw_array("codes", codes, keep, data=False)])
    assert st == inv and "no data" in msg
    st, _, msg = _raw_decode(eng, b"decode", [_raw_array("codes", codes[:, :8], keep)])
    assert st == inv and "[frames][16]" in msg
    assert _raw_decode(eng, b"decode", [_raw_array("codes", codes, keep, dtype=lib.VOX_DTYPE_F32)])[0] == inv
    assert _raw_decode(eng, b"decode", [c, _raw_array("codes", codes, keep)])[0] == inv  # given twice
    st, _, msg = _raw_decode(eng, b"decode", [c, _raw_array("reference", np.array(7), keep)])
    assert st == inv and "mode 7" in msg
    st, _, msg = _raw_decode(eng, b"decode", [c, _raw_array("context", np.array([1, 2]), keep)])
    assert st == inv and "context" in msg
    ref = np.ascontiguousarray(e.refs["ref_en_24k.wav"], dtype=np.int32)
    r = _raw_array("ref_codes", ref, keep)
    for mode, context, chunk, full in ((0, 50, 4, decode(eng, codes, ref, "stream", 50, 4)),
                                       (0, 50, 1 << 30, decode(eng, codes, ref, "stream", 50, 4)),
                                       (1, 0, 4, decode(eng, codes, ref, "reference"))):
        scalars = [_raw_array(n, np.array(v), keep) for n, v in (("reference", mode), ("context", context),
                                                                  ("chunk_frames", chunk))]
        for taps in (None, b"*", b"audio"):
            st, t, msg = _raw_decode(eng, b"decode", [c, r, *scalars], taps=taps)
            assert st == lib.VOX_OK, msg
            a = ffi.new("vox_array *")
            assert lib.vox_trace_count(t) == 1 and lib.vox_trace_get(t, 0, a) == lib.VOX_OK
            assert (string(a.name), a.dtype, a.ndim, a.shape[0]) == ("audio", lib.VOX_DTYPE_F32, 1, len(full))
            got = np.frombuffer(ffi.buffer(a.data, 4 * len(full)), np.float32)
            assert np.array_equal(got, full), (mode, chunk, taps)
            assert lib.vox_trace_get(t, 1, a) == inv
            assert lib.vox_trace_find(t, b"audio", a) == lib.VOX_OK and a.shape[0] == len(full)
            assert lib.vox_trace_find(t, b"latent", a) == lib.VOX_ERR_NOT_FOUND
    assert len(decode(eng, codes, ref, "reference")) == 6 * SPF + (81 * SPF - cd.reference_cut(81, 87, 87 * SPF))
