"""The C ABI and the Python library around it: engines, voices, .tvoice interop, limits, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import vox
from vox._native import ffi, lib, string
from vox.formats import tvoice


def test_abi_version_and_devices():
    assert lib.vox_abi_version() == lib.VOX_ABI_VERSION
    d = vox.devices()
    assert d["cpu"]["threads"] >= 1 and d["memory_bytes"] > 0 and isinstance(d["gpus"], list)
    assert d["cpu"]["kernels"]


def test_engine_info(qwen3_tmod):
    with vox.Engine(qwen3_tmod("custom17", "bf16", "q8"), threads=1) as eng:
        i = eng.info
        assert (i["family"], i["variant"], i["size"]) == ("qwen3_tts", "custom_voice", "1b7")
        assert eng.sample_rate == 24000 and i["threads"] == 1
        assert i["precision"] == {"dtype": "bf16", "quant": "q8", "codec_dtype": "f32"}
        assert "eric" in eng.speakers and "auto" in eng.languages and "sichuan_dialect" not in eng.languages
        assert eng.capabilities["speakers"] and eng.capabilities["instruct"] and not eng.capabilities["clone"]
        assert eng.stats()["weights_bytes"] > 0
    with vox.Engine(qwen3_tmod("custom06")) as eng:
        assert not eng.capabilities["instruct"]  # the official 0b6 CustomVoice ignores instructions


def test_voices_follow_the_variant(qwen3_tmod, tmp_path):
    with vox.Engine(qwen3_tmod("custom06")) as eng:
        v = eng.speaker_voice("ERIC", instruct="calmly")  # speaker names are case-insensitive, as the official
        assert v.texts["speaker"] == "eric" and v.mode == "speaker"
        with pytest.raises(vox.NotFound, match="unknown speaker"):
            eng.speaker_voice("nobody")
        with pytest.raises(vox.VoxError, match="VoiceDesign"):
            eng.design_voice("deep")
        with pytest.raises(vox.VoxError, match="Base model"):
            eng.clone_voice((np.zeros(24000, np.float32), 24000), "text")
        v.save(tmp_path / "eric.tvoice")
    with vox.Engine(qwen3_tmod("design17")) as eng:
        d = eng.design_voice("A bright, fast voice.")
        assert d.mode == "design" and d.texts["instruct"] == "A bright, fast voice."
        with pytest.raises(vox.VoxError, match="CustomVoice"):
            eng.speaker_voice("eric")
        with pytest.raises(vox.VoxError):  # a speaker voice for a VoiceDesign model
            eng.load_voice(tmp_path / "eric.tvoice")


def test_tvoice_c_and_python_agree(qwen3_tmod, tmp_path):
    """A voice written by the C core reads back through the Python reader and the other way round."""
    path = qwen3_tmod("custom17", "bf16")
    with vox.Engine(path) as eng:
        eng.speaker_voice("dylan", "Speak slowly.").save(tmp_path / "c.tvoice")
        py = tvoice.read_voice(tmp_path / "c.tvoice")
        assert (py.mode, py.texts["speaker"], py.texts["instruct"], py.variant) == ("speaker", "dylan", "Speak slowly.",
                                                                                   "custom_voice")
        tvoice.write_voice(tmp_path / "py.tvoice", py)
        back = eng.load_voice(tmp_path / "py.tvoice")
        assert back.texts == {"speaker": "dylan", "instruct": "Speak slowly."}


def test_tvoice_with_tensors_round_trips_through_c(qwen3_tmod, tmp_path):
    """An ICL voice written by Python (embedding, codes, tokens, source) loads in C and saves identically."""
    path = qwen3_tmod("base06")
    with vox.Engine(path) as eng:
        mid, dim = eng.info["model_id"], 32
        rng = np.random.default_rng(1)
        v = tvoice.Voice("qwen3_tts", "icl", mid, "base", name="x", texts={"ref_text": "hello there"},
                         arrays={"speaker_embedding": rng.standard_normal(dim).astype(np.float32),
                                 "ref_codes": rng.integers(0, 2048, (7, 16)).astype(np.int64),
                                 "ref_text_tokens": np.array([151644, 77091, 198, 9707, 151645, 198], np.int64),
                                 "source_wav": rng.standard_normal(500).astype(np.float32)},
                         source_sample_rate=16000, defaults={"seed": 3})
        tvoice.write_voice(tmp_path / "a.tvoice", v)
        cv = eng.load_voice(tmp_path / "a.tvoice")
        assert cv.texts == {"ref_text": "hello there"}
        assert cv.info["arrays"] == {n: list(a.shape) for n, a in v.arrays.items()}
        assert np.array_equal(cv.array("speaker_embedding"), v.arrays["speaker_embedding"])
        assert cv.array("ref_codes").dtype == np.int32 and np.array_equal(cv.array("ref_codes"), v.arrays["ref_codes"])
        assert np.array_equal(cv.array("source_wav"), v.arrays["source_wav"])
        assert cv.info["defaults"] == {"seed": 3} and cv.info["source_rate"] == 16000
        cv.save(tmp_path / "b.tvoice")
        assert tvoice.read_voice(tmp_path / "b.tvoice") == v


def test_voice_of_other_weights_is_refused(qwen3_tmod, tmp_path):
    with vox.Engine(qwen3_tmod("custom17")) as eng:
        eng.speaker_voice("aiden").save(tmp_path / "a.tvoice")
    with vox.Engine(qwen3_tmod("custom06")) as eng:  # other weights, same variant
        with pytest.raises(vox.FormatError, match="other weights"):
            eng.load_voice(tmp_path / "a.tvoice")


def test_session_limit_is_its_own_error(qwen3_tmod):
    path = str(qwen3_tmod("custom06")).encode()
    p = ffi.new("vox_engine_params *", lib.vox_engine_default_params())
    p.max_sessions = 1
    e = ffi.new("vox_engine **")
    assert lib.vox_engine_create(path, p, e) == lib.VOX_OK
    v = ffi.new("vox_voice **")
    assert lib.vox_voice_speaker(e[0], b"aiden", ffi.NULL, v) == lib.VOX_OK
    s1, s2 = ffi.new("vox_session **"), ffi.new("vox_session **")
    st1 = lib.vox_session_create(e[0], v[0], ffi.NULL, s1)
    if st1 == lib.VOX_OK:
        assert lib.vox_session_create(e[0], v[0], ffi.NULL, s2) == lib.VOX_ERR_SESSION_LIMIT
        assert "max_sessions" in string(lib.vox_last_error())
        lib.vox_session_free(s1[0])
    lib.vox_voice_free(v[0])
    lib.vox_engine_free(e[0])
    with vox.Engine(path.decode(), resources=vox.Resources(max_sessions=1)) as eng:
        voice = eng.speaker_voice("aiden")
        try:
            s = eng.session(voice)
        except vox.VoxError as exc:  # the family may not synthesize in this build
            assert "not in this build" in str(exc)
            return
        with pytest.raises(vox.SessionLimit, match="max_sessions"):
            eng.session(voice)
        s.close()


def test_bad_arguments_are_errors_not_crashes(qwen3_tmod, tmp_path):
    out = ffi.new("vox_engine **")
    assert lib.vox_engine_create(ffi.NULL, ffi.NULL, out) == lib.VOX_ERR_INVALID_ARGUMENT
    assert lib.vox_engine_create(str(tmp_path / "none.tmod").encode(), ffi.NULL, out) == lib.VOX_ERR_IO
    p = ffi.new("vox_engine_params *", lib.vox_engine_default_params())
    p.struct_size = 3
    assert lib.vox_engine_create(str(qwen3_tmod("custom06")).encode(), p, out) == lib.VOX_ERR_INVALID_ARGUMENT
    assert "struct_size" in string(lib.vox_last_error())
    p = ffi.new("vox_engine_params *", lib.vox_engine_default_params())
    p.device = ffi.new("char[]", b"vulkan:77")   # no such device (or no Vulkan at all)
    assert lib.vox_engine_create(str(qwen3_tmod("custom06")).encode(), p, out) == lib.VOX_ERR_DEVICE
    assert "Vulkan device" in string(lib.vox_last_error())
    p.device = ffi.new("char[]", b"vulkan:0,turbo")
    assert lib.vox_engine_create(str(qwen3_tmod("custom06")).encode(), p, out) == lib.VOX_ERR_INVALID_ARGUMENT
    with pytest.raises(FileNotFoundError):
        vox.Engine(tmp_path / "missing.tmod")
    bad = tmp_path / "bad.tmod"
    bad.write_bytes(b"VOXM" + b"\0" * 100)
    with pytest.raises(vox.FormatError, match="bad.tmod"):
        vox.Engine(bad)
    lib.vox_engine_free(ffi.NULL)
    lib.vox_voice_free(ffi.NULL)
    lib.vox_session_free(ffi.NULL)
    lib.vox_session_cancel(ffi.NULL)
    assert json.loads(string(lib.vox_engine_info(ffi.NULL))) == {}


def test_default_params_come_from_the_model(qwen3_tmod):
    with vox.Engine(qwen3_tmod("custom06")) as eng:
        p = lib.vox_synth_default_params(eng._h, ffi.NULL)
        assert p.struct_size == ffi.sizeof("vox_synth_params") and p.seed == 0 and p.options == ffi.NULL
        d = {o["name"]: o["default"] for o in eng.options()["options"]}
        assert (d["top_k"], d["chunk_frames"], d["decoder"], d["decoder_context"]) == (50, 4, "stream", 50)
        assert abs(d["temperature"] - 0.9) < 1e-6 and abs(d["repetition_penalty"] - 1.05) < 1e-6


# ----------------------------------------------------------------------------- .tvoice fuzzing
@pytest.fixture(scope="module")
def icl_voice_bytes(qwen3_tmod, tmp_path_factory):
    """A valid ICL .tvoice for base06 (written by Python) and an engine to load mutated copies with."""
    path = qwen3_tmod("base06")
    eng = vox.Engine(path, threads=1)
    rng = np.random.default_rng(5)
    v = tvoice.Voice("qwen3_tts", "icl", eng.info["model_id"], "base", name="f", texts={"ref_text": "hello"},
                     arrays={"speaker_embedding": rng.standard_normal(32).astype(np.float32),
                             "ref_codes": rng.integers(0, 2048, (5, 16)).astype(np.int64),
                             "ref_text_tokens": np.array([151644, 77091, 198, 9707, 151645, 198], np.int64),
                             "source_wav": rng.standard_normal(64).astype(np.float32)},
                     source_sample_rate=24000)
    p = tmp_path_factory.mktemp("tv") / "v.tvoice"
    tvoice.write_voice(p, v)
    yield eng, p.read_bytes(), p.parent
    eng.close()


def _both_readers(eng, data: bytes, path):
    """(Python accepts, C accepts): the C load is read + check against the engine's model, so the Python
    side is read_voice + check_model against the same manifest."""
    from vox.formats.tmod import TmodFile

    path.write_bytes(data)
    try:
        tvoice.check_model(tvoice.read_voice(path), TmodFile(eng.model_path).manifest, str(path))
        py_ok = True
    except vox.FormatError as e:
        assert path.name in str(e)
        py_ok = False
    try:
        eng.load_voice(path)
        c_ok = True
    except vox.VoxError as e:
        assert path.name in str(e), str(e)
        c_ok = False
    return py_ok, c_ok


from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_tvoice_mutations_c_and_python_agree(icl_voice_bytes, data):
    """Truncations, flipped bytes and appended bytes: the C reader (vox_voice_load) and the Python reader
    accept or reject the same files, with the file named; nothing crashes."""
    eng, good, d = icl_voice_bytes
    kind = data.draw(st.sampled_from(["truncate", "flip", "append", "header"]))
    b = bytearray(good)
    if kind == "truncate":
        b = b[:data.draw(st.integers(0, len(b) - 1))]
    elif kind == "flip":
        for _ in range(data.draw(st.integers(1, 4))):
            b[data.draw(st.integers(0, len(b) - 1))] ^= data.draw(st.integers(1, 255))
    elif kind == "append":
        b += bytes(data.draw(st.integers(1, 64)))
    else:  # inside the JSON header, where structure lives
        hlen = int.from_bytes(b[:8], "little")
        b[8 + data.draw(st.integers(0, hlen - 1))] = data.draw(st.sampled_from(list(b'{}[]",:0123456789 ax')))
    py_ok, c_ok = _both_readers(eng, bytes(b), d / "m.tvoice")
    assert py_ok == c_ok, (kind, py_ok, c_ok)


@pytest.mark.parametrize("language, ok", [("auto", True), ("AUTO", True), ("zulu", False)])
def test_tvoice_language_both_readers(icl_voice_bytes, language, ok):
    """A voice's language must be one the model has (or auto), for the C loader as for Python."""
    eng, good, d = icl_voice_bytes
    b = good.replace(b'"language":"auto"', b'"language":"%s"' % language.encode(), 1)
    assert b != good or language == "auto"
    assert _both_readers(eng, b, d / "lang.tvoice") == (ok, ok)


def test_tvoice_valid_file_both_accept(icl_voice_bytes):
    eng, good, d = icl_voice_bytes
    assert _both_readers(eng, good, d / "ok.tvoice") == (True, True)


def test_clone_seed_is_the_voices_default(qwen3_tmod):
    with vox.Engine(qwen3_tmod("base06")) as eng:
        v = eng.clone_voice("fixtures/audio/ref_en_24k.wav", "The quick brown fox.", seed=77)
        assert v.info["defaults"] == {"seed": 77}
        a = eng.synthesize("Hi there.", v, max_new_tokens=6)
        assert np.array_equal(a, eng.synthesize("Hi there.", v, seed=77, max_new_tokens=6))
        assert not np.array_equal(a, eng.synthesize("Hi there.", v, seed=0, max_new_tokens=6))


def test_synthesize_many_equals_one_by_one(qwen3_tmod):
    """Parallel sessions (threads, the GIL released in the core) give what sequential synthesis gives."""
    with vox.Engine(qwen3_tmod("custom06", "bf16", "q8"), threads=2) as eng:
        v = eng.speaker_voice("aiden")
        texts = ["One.", "Two, a little longer.", "Three is the longest of these three texts."]
        many = eng.synthesize_many(texts, v, seed=10, max_new_tokens=10)
        for i, t in enumerate(texts):
            assert np.array_equal(many[i], eng.synthesize(t, v, seed=10 + i, max_new_tokens=10))
        assert eng.stats()["sessions_created"] == 6


# ------------------------------------------------------------------ options: Python twin = core table
def _options_agree(eng) -> None:
    """The family's Options dataclass (vox.families.<f>) describes exactly the options the core's table
    has (vox_engine_options): the same names, kinds, ranges, open ends and choices."""
    import dataclasses

    from vox import families

    fam = families.get(eng.info["family"])
    core = {o["name"]: o for o in eng.options()["options"]}
    py = {f.name: f for f in dataclasses.fields(fam.Options)}
    assert set(py) == set(core), f"{fam.name}: Python {sorted(py)} vs core {sorted(core)}"
    kinds = {"float": "float", "int": "int", "bool": "bool", "json": "dict", "enum": "str", "string": "str"}
    for name, o in core.items():
        f = py[name]
        m = f.metadata
        assert kinds[o["type"]] in str(f.type), (name, o["type"], f.type)
        if o["type"] in ("float", "int"):
            assert (m["lo"], m["hi"]) == (o.get("min"), o.get("max")), (name, m, o)
        if o["type"] == "float":
            assert (m["lo_open"], m["hi_open"]) == (o["min_open"], o["max_open"]), (name, m, o)
        if o["type"] == "enum":
            assert tuple(m["choices"]) == tuple(o["choices"]), (name, m, o)


def test_python_options_match_the_core_table(qwen3_tmod, kokoro_tmod):
    for path in (qwen3_tmod("custom06"), kokoro_tmod()):
        with vox.Engine(path, threads=1) as eng:
            _options_agree(eng)
