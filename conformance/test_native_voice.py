"""Native voice creation (C core: core/src/qwen3/voice_encoder*.c, resample.c, mel.c, ecapa.c, mimi.c,
rvq.c) vs the official code and vs the numpy reference, backend "cpu".

The public path is vox.Engine(...).clone_voice (vox_voice_clone: downmix, resampling, embedding,
codes, transcript tokens). The parts the C ABI does not expose (the resampler's output, the mel
spectrogram, the Mimi latent, the codes of a recording too short for the speaker encoder, the
quantizer's best / second-best margin) are read through the C test program test_voice, built next to
libvox (core/tests/test_voice.c: `test_voice encode MODEL IN CODES LATENT THREADS`, ...).

Reference codes come out of clone_voice only for ICL voices, which need the native text tokenizer;
while a build has none (q3_tokenize: VOX_ERR_UNSUPPORTED) the codes are taken from the same C
functions through test_voice, and the rows say so ("codes via q3_encode_codes").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vox
from vox.reference.common.checkpoint import Checkpoint
from vox.reference.qwen3 import mel as ref_mel
from vox.reference.dsp import resample as ref_resample
from vox.reference.qwen3 import voice as ref_voice
from vox.reference.qwen3.mimi_encoder import MimiEncoder
from vox.verify import metrics
from vox.verify.qwen3 import voice as V
from vox.verify.tolerance import Row, measure

BASES = ["base06", "base17"]
CPU = "cpu"
ROOT = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------- the native side
def _tool_path() -> Path:
    lib = Path(vox._native._find(vox._native._LIBNAMES.get(sys.platform, "libvox.so")))
    p = lib.parent / "test_voice"
    if not p.is_file():
        pytest.fail(f"{p}: the C test program test_voice is not built next to {lib} (build with VOX_BUILD_TESTS=ON)")
    return p


def tool(*args, tmp: Path) -> str:
    r = subprocess.run([str(_tool_path()), *map(str, args)], capture_output=True, text=True, cwd=tmp)
    if r.returncode != 0:
        raise RuntimeError(f"test_voice {' '.join(map(str, args))}: {r.stderr.strip()}")
    return r.stdout


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("native_voice")


@pytest.fixture(scope="module")
def model(qwen3_fixture, official):
    """model(variant) -> (official Qwen3TTSModel, reference Checkpoint)."""
    cache = {}

    def get(variant):
        if variant not in cache:
            d = qwen3_fixture(variant)
            cache[variant] = (official(d), Checkpoint.from_hf_dir(d))
        return cache[variant]

    return get


@pytest.fixture(scope="module")
def engine(qwen3_tmod):
    """engine(variant, threads=2) -> vox.Engine on the f32 .tmod of the fixture (cached)."""
    cache = {}

    def get(variant, threads=2):
        key = (variant, threads)
        if key not in cache:
            cache[key] = vox.Engine(qwen3_tmod(variant), threads=threads)
        return cache[key]

    yield get
    for e in cache.values():
        e.close()


def native_encode(tmod, wav24k, work: Path, threads: int = 2):
    """Codes [frames, 16], latent [hidden, T] (the reference's layout) and the float32 margin, through
    test_voice (q3_mimi_latent + q3_mimi_quantize, checked there against q3_encode_codes)."""
    src, codes, lat = work / "in.f32", work / "codes.i32", work / "latent.f32"
    np.asarray(wav24k, dtype=np.float32).tofile(src)
    info = json.loads(tool("encode", tmod, src, codes, lat, threads, tmp=work))
    c = np.fromfile(codes, dtype=np.int32).reshape(info["frames"], info["groups"]).astype(np.int64)
    latent = np.fromfile(lat, dtype=np.float32).reshape(info["latent_frames"], -1).T
    return c, latent, info["margin"]


def native_resample(wav, sr, work: Path, threads: int = 2) -> np.ndarray:
    src, out = work / "rs_in.f32", work / "rs_out.f32"
    np.asarray(wav, dtype=np.float32).tofile(src)
    tool("resample", src, sr, 24000, out, threads, tmp=work)
    return np.fromfile(out, dtype=np.float32)


def native_mel(wav24k, work: Path) -> np.ndarray:
    src, out = work / "mel_in.f32", work / "mel.f32"
    np.asarray(wav24k, dtype=np.float32).tofile(src)
    tool("mel", src, out, tmp=work)
    return np.fromfile(out, dtype=np.float32).reshape(-1, 128).T


def native_voice(eng, tmod, wav, sr, text, work: Path):
    """clone_voice end to end (ICL): (embedding, codes, how)."""
    v = eng.clone_voice((wav, sr), text)
    return v.array("speaker_embedding"), v.array("ref_codes").astype(np.int64), "clone_voice (icl)"


def codes_row(check, ours, off, subject, note=""):
    if ours.shape != off.shape:
        return Row(check, subject, 0.0, note=f"shape {ours.shape} vs {off.shape}. {note}".strip(), backend=CPU)
    return measure(check, ours, off, subject, note=note, backend=CPU)


# ----------------------------------------------------------------------------- front end
def test_filterbank(record, work):
    import librosa

    tool("filterbank", work / "fb.f32", tmp=work)
    fb = np.fromfile(work / "fb.f32", dtype=np.float32).reshape(128, 513)
    lib = librosa.filters.mel(sr=24000, n_fft=1024, n_mels=128, fmin=0, fmax=12000)
    record([Row("qwen3.mel_filterbank", "native (core/src/dsp/melbank.c) vs librosa.filters.mel",
                metrics.match_fraction(fb, lib), backend=CPU),
            Row("qwen3.native_mel_filterbank_vs_reference", "native vs vox.reference mel_filterbank",
                metrics.match_fraction(fb, ref_mel.mel_filterbank()), backend=CPU)])


@pytest.mark.parametrize("name", ["ref_en_24k.wav", "ref_long_24k.wav"])
def test_mel(record, ref_audio, work, name):
    wav, sr, _ = ref_audio(name)
    ours = native_mel(wav, work)
    off, ref = V.official_mel(wav), ref_mel.mel_spectrogram(wav)
    e = lambda x: np.exp(x.astype(np.float64))  # noqa: E731
    record([
        measure("qwen3.mel", e(ours), e(off), name, note=f"{off.shape[1]} frames", backend=CPU),
        measure("qwen3.log_mel", ours, off, name, backend=CPU),
        measure("qwen3.native_mel_vs_reference", e(ours), e(ref), name, backend=CPU),
        measure("qwen3.native_log_mel_vs_reference", ours, ref, name, backend=CPU),
    ])


# ----------------------------------------------------------------------------- 24 kHz: exact
@pytest.mark.parametrize("variant", BASES)
@pytest.mark.parametrize("name", ["ref_en_24k.wav", "ref_long_24k.wav"])
def test_encoders_24k(record, model, engine, qwen3_tmod, ref_audio, work, variant, name):
    tts, ckpt = model(variant)
    eng, tmod = engine(variant), qwen3_tmod(variant)
    wav, sr, text = ref_audio(name)
    subj = f"{variant} {name}"
    emb = eng.clone_voice((wav, sr), x_vector_only=True).array("speaker_embedding")
    codes, latent, margin = native_encode(tmod, wav, work)
    enc = MimiEncoder(ckpt)
    ref_latent = enc.latent(wav)
    ref_codes = np.ascontiguousarray(enc.quantize(ref_latent)[:, :enc.n_frames(len(wav))].T)
    off_codes = V.official_codes(tts, wav)
    note = (f"{off_codes.shape[0]} frames; smallest best/second-best gap: native {margin:.1e} (float32, as computed), "
            f"reference {V.code_margin(enc, ref_latent):.1e} (float64)")
    rows = [
        measure("qwen3.speaker_embedding", emb, V.official_embedding(tts, wav), subj, backend=CPU),
        measure("qwen3.mimi_latent", latent, V.official_latent(tts, wav), subj, backend=CPU),
        codes_row("qwen3.ref_codes", codes, off_codes, subj, note=note),
        measure("qwen3.native_speaker_embedding_vs_reference", emb, ref_voice.speaker_embedding(ckpt, wav), subj,
                backend=CPU),
        measure("qwen3.native_mimi_latent_vs_reference", latent, ref_latent, subj, backend=CPU),
        codes_row("qwen3.native_ref_codes_vs_reference", codes, ref_codes, subj, note=note),
    ]
    if name == "ref_long_24k.wav":
        assert codes.shape[0] == 426 > 300
    else:  # the whole create_voice path once per model
        off_emb, off_c = V.official_prompt(tts, wav, sr, text)
        e2, c2, how = native_voice(eng, tmod, wav, sr, text, work)
        rows += [measure("qwen3.speaker_embedding", e2, off_emb, f"{subj}, create_voice", note=how, backend=CPU),
                 codes_row("qwen3.ref_codes", c2, off_c, f"{subj}, create_voice", note=how)]
    record(rows)


# ----------------------------------------------------------------------------- 16 / 44.1 kHz
@pytest.mark.parametrize("variant", BASES)
@pytest.mark.parametrize("name", ["ref_en_16k.wav", "ref_en_44k.wav"])
def test_voice_resampled(record, model, engine, qwen3_tmod, ref_audio, work, variant, name):
    """(a) native encoders on the official's own 24 kHz audio: exact; (b) end to end: reported, as the
    reference's rows; (c) end to end vs the reference (same resampler): exact."""
    tts, ckpt = model(variant)
    eng, tmod = engine(variant), qwen3_tmod(variant)
    wav, sr, text = ref_audio(name)
    subj = f"{variant} {name}"
    off_emb, off_codes = V.official_prompt(tts, wav, sr, text)
    w24 = V.official_resample(wav, sr)
    iso_emb = eng.clone_voice((w24, 24000), x_vector_only=True).array("speaker_embedding")
    iso_codes, _, _ = native_encode(tmod, w24, work)
    emb, codes, how = native_voice(eng, tmod, wav, sr, text, work)
    ref = ref_voice.create_voice(ckpt, wav, sr, ref_text=text)
    record([
        measure("qwen3.speaker_embedding_official_resampled", iso_emb, off_emb, subj, backend=CPU),
        codes_row("qwen3.ref_codes_official_resampled", iso_codes, off_codes, subj),
        measure("qwen3.speaker_embedding_resampled", emb, off_emb, subj, note=how, backend=CPU),
        measure("qwen3.speaker_embedding_resampled_cosine", emb, off_emb, subj,
                note=f"1 - cosine = {1 - metrics.cosine(emb, off_emb):.1e}", backend=CPU),
        codes_row("qwen3.ref_codes_resampled", codes, off_codes, subj, note=V._per_codebook(codes, off_codes)),
        measure("qwen3.native_speaker_embedding_vs_reference", emb, ref.speaker_embedding, f"{subj}, end to end",
                backend=CPU),
        codes_row("qwen3.native_ref_codes_vs_reference", codes, ref.ref_codes, f"{subj}, end to end", note=how),
    ])


@pytest.mark.parametrize("name", ["ref_en_16k.wav", "ref_en_44k.wav"])
def test_resampler_speech(record, ref_audio, work, name):
    wav, sr, _ = ref_audio(name)
    ours = native_resample(wav, sr, work)
    off = V.official_resample(wav, sr)
    d = ours.astype(np.float64) - off
    snr = 20 * np.log10(np.linalg.norm(off) / max(np.linalg.norm(d), 1e-30))
    record([measure("qwen3.resample_vs_soxr_speech", ours, off, name, backend=CPU,
                    note=f"{len(off)} samples; SNR {snr:.1f} dB; max |diff| {np.max(np.abs(d)):.1e}"),
            measure("qwen3.native_resample_vs_reference", ours, ref_resample.resample(wav, sr, 24000), name,
                    note=f"bit-identical: {np.mean(ours == ref_resample.resample(wav, sr, 24000)):.4f}", backend=CPU)])


@pytest.mark.parametrize("sr", [16000, 44100, 22050, 48000, 8000, 44099])
def test_resampler_noise(record, work, sr):
    """White noise and band-limited noise (the reference's inputs), native vs reference (tight) and vs
    soxr (the reference's limits); 44099 Hz: an L = 24000 rate pair, whose taps are computed per phase."""
    rng = np.random.default_rng(0)
    n = sr
    white = (0.1 * rng.standard_normal(n)).astype(np.float32)
    spec = np.fft.rfft(rng.standard_normal(n))
    spec[np.fft.rfftfreq(n, 1.0 / sr) > 0.8 * min(sr, 24000) / 2] = 0
    band = np.fft.irfft(spec, n)
    band = (0.3 * band / np.max(np.abs(band))).astype(np.float32)
    rows = []
    for kind, x in (("white", white), ("band-limited", band)):
        ours = native_resample(x, sr, work)
        ref = ref_resample.resample(x, sr, 24000)
        subj = f"{kind} noise {sr} Hz, 1 s"
        rows.append(measure("qwen3.native_resample_vs_reference", ours, ref, subj, backend=CPU,
                            note=f"bit-identical: {np.mean(ours == ref):.4f}"))
        if sr == 44099:
            continue
        off = V.official_resample(x, sr)
        if kind == "white":
            rows.append(measure("qwen3.resample_vs_soxr_noise", ours, off, subj, backend=CPU))
        else:
            rows.append(measure("qwen3.resample_vs_soxr_inband", ours[300:-300], off[300:-300], subj, backend=CPU))
    record(rows)


def test_resampler_lengths(work):
    """librosa's lengths (ceil(n * ratio) in double: 44100 samples at 44.1 kHz -> 24001), zeros past
    soxr's round(n * L / M), equal rates passed through; 1 and 2 threads give the same bits."""
    import librosa

    rng = np.random.default_rng(3)
    for sr in (16000, 44100, 22050):
        for n in (1, 2, 3, 146, 147, 148, 1000, sr):
            x = (0.1 * rng.standard_normal(n)).astype(np.float32)
            ours = native_resample(x, sr, work)
            assert ours.shape == librosa.resample(x, orig_sr=sr, target_sr=24000).shape, (sr, n)
            assert np.array_equal(ours, ref_resample.resample(x, sr, 24000)), (sr, n)
            assert np.all(ours[ref_resample.produced_length(n, sr, 24000):] == 0), (sr, n)
    x = (0.1 * rng.standard_normal(30000)).astype(np.float32)
    assert np.array_equal(native_resample(x, 24000, work), x)
    assert np.array_equal(native_resample(x, 44100, work, threads=1), native_resample(x, 44100, work, threads=2))


# ----------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("n", [1280, 1500, 1920, 1921])
def test_short_audio(record, model, engine, qwen3_tmod, work, n):
    """Shorter than a frame (1 frame), exactly one frame, one sample more (2 frames); 1280 samples is
    the shortest audio the speaker encoder accepts (5 mel frames)."""
    tts, ckpt = model("base06")
    eng, tmod = engine("base06"), qwen3_tmod("base06")
    x = (0.1 * np.random.default_rng(n).standard_normal(n)).astype(np.float32)
    off_emb, off_codes = V.official_prompt(tts, x, 24000, "hi")
    emb, codes, how = native_voice(eng, tmod, x, 24000, "hi", work)
    assert codes.shape == (-(-n // 1920), 16)
    subj = f"base06 noise, {n} samples"
    record([measure("qwen3.speaker_embedding", emb, off_emb, subj, backend=CPU),
            codes_row("qwen3.ref_codes", codes, off_codes, subj, note=how)])


def test_too_short(model, engine, qwen3_tmod, work):
    """Below 1280 samples (24 kHz) the official fails; clone_voice refuses with a clear error, before any
    encoder runs. The codes alone exist for any length, and match."""
    tts, _ = model("base06")
    eng, tmod = engine("base06"), qwen3_tmod("base06")
    x = (0.1 * np.random.default_rng(0).standard_normal(1279)).astype(np.float32)
    for kw in ({"x_vector_only": True}, {"ref_text": "hi"}):
        with pytest.raises(vox.errors.VoxError, match="too short|tokeniz"):
            eng.clone_voice((x, 24000), **kw)
    with pytest.raises(vox.errors.VoxError, match=r"too short: 1279 samples at 24 kHz .* at least 1280"):
        eng.clone_voice((x, 24000), x_vector_only=True)
    # 16 kHz: 853 samples resample to 1280 (accepted), 852 to 1278 (refused)
    eng.clone_voice((np.resize(x, 853), 16000), x_vector_only=True)
    with pytest.raises(vox.errors.VoxError, match="too short"):
        eng.clone_voice((np.resize(x, 852), 16000), x_vector_only=True)
    for n in (1, 100, 1279):
        y = (0.1 * np.random.default_rng(n).standard_normal(n)).astype(np.float32)
        codes, _, _ = native_encode(tmod, y, work)
        assert np.array_equal(codes, V.official_codes(tts, y)), n


def test_silence(record, model, engine, qwen3_tmod, work):
    tts, _ = model("base06")
    eng, tmod = engine("base06"), qwen3_tmod("base06")
    x = np.zeros(24000, dtype=np.float32)
    off_emb, off_codes = V.official_prompt(tts, x, 24000, "hi")
    emb, codes, how = native_voice(eng, tmod, x, 24000, "hi", work)
    ours_mel, off_mel = native_mel(x, work), V.official_mel(x)
    e = lambda v: np.exp(v.astype(np.float64))  # noqa: E731
    record([measure("qwen3.mel", e(ours_mel), e(off_mel), "silence, 1 s", backend=CPU),
            measure("qwen3.log_mel", ours_mel, off_mel, "silence, 1 s", backend=CPU),
            measure("qwen3.speaker_embedding", emb, off_emb, "base06 silence, 1 s", backend=CPU),
            codes_row("qwen3.ref_codes", codes, off_codes, "base06 silence, 1 s", note=how)])


@pytest.mark.parametrize("name", ["ref_en_24k.wav", "ref_en_16k.wav"])
def test_stereo(record, model, engine, qwen3_tmod, ref_audio, tmp_path, work, name):
    """A stereo recording through vox_voice_clone's downmix vs the official loading the stereo file
    (librosa.load(mono=True): the channel mean)."""
    import soundfile as sf

    tts, ckpt = model("base06")
    eng, tmod = engine("base06"), qwen3_tmod("base06")
    wav, sr, text = ref_audio(name)
    stereo = np.stack([wav, np.roll(wav, 2400) * np.float32(0.5)], axis=-1)
    path = tmp_path / "stereo.wav"
    sf.write(path, stereo, sr, subtype="FLOAT")
    off_emb, off_codes = V.official_prompt(tts, str(path), None, text)
    emb, codes, how = native_voice(eng, tmod, stereo, sr, text, work)
    v = eng.clone_voice(str(path), x_vector_only=True)  # the file path: soundfile, then the C downmix
    assert np.array_equal(v.array("speaker_embedding"), emb)
    subj = f"base06 stereo {name}"
    if sr == 24000:
        rows = [measure("qwen3.speaker_embedding", emb, off_emb, subj, backend=CPU),
                codes_row("qwen3.ref_codes", codes, off_codes, subj, note=how)]
    else:
        w24 = V.official_resample(stereo.mean(axis=-1).astype(np.float32), sr)
        iso_emb = eng.clone_voice((w24, 24000), x_vector_only=True).array("speaker_embedding")
        iso_codes, _, _ = native_encode(tmod, w24, work)
        rows = [measure("qwen3.speaker_embedding_official_resampled", iso_emb, off_emb, subj, backend=CPU),
                codes_row("qwen3.ref_codes_official_resampled", iso_codes, off_codes, subj),
                measure("qwen3.speaker_embedding_resampled", emb, off_emb, subj, backend=CPU),
                codes_row("qwen3.ref_codes_resampled", codes, off_codes, subj, note=how)]
    ref = ref_voice.create_voice(ckpt, stereo, sr, ref_text=text)
    rows += [measure("qwen3.native_speaker_embedding_vs_reference", emb, ref.speaker_embedding, subj, backend=CPU),
             codes_row("qwen3.native_ref_codes_vs_reference", codes, ref.ref_codes, subj, note=how)]
    record(rows)


# ----------------------------------------------------------------------------- voices
def test_modes_and_errors(engine, ref_audio, qwen3_tmod):
    """x-vector voices carry the embedding and no codes; ICL needs a transcript (and, in this build, the
    native tokenizer); the voice info says what the voice is; the engine reports the embedding size."""
    eng = engine("base06")
    wav, sr, text = ref_audio("ref_en_24k.wav")
    wav = wav[:48000]
    xv = eng.clone_voice((wav, sr), x_vector_only=True, name="x", language="english")
    assert xv.mode == "xvector" and xv.array("ref_codes") is None and xv.array("speaker_embedding").shape == (32,)
    info = xv.info
    assert info["name"] == "x" and info["language"] == "english" and info["source_rate"] == sr
    assert info["arrays"] == {"speaker_embedding": [32], "source_wav": [48000]} and info["texts"] == {}
    with pytest.raises(vox.errors.VoxError, match="ref_text"):
        eng.clone_voice((wav, sr))
    icl = eng.clone_voice((wav, sr), text)
    assert icl.mode == "icl" and icl.array("ref_codes").shape == (25, 16)
    assert np.array_equal(icl.array("speaker_embedding"), xv.array("speaker_embedding"))
    assert icl.texts == {"ref_text": text} and icl.info["arrays"]["ref_text_tokens"][0] > 0
    with pytest.raises(vox.errors.VoxError, match="not finite"):
        eng.clone_voice((np.full(4000, np.nan, np.float32), sr), x_vector_only=True)


def test_tvoice_roundtrip(engine, ref_audio, tmp_path):
    """A saved voice reads back identical through vox.formats.tvoice.read_voice and vox_voice_load."""
    from vox.formats.tvoice import read_voice

    eng = engine("base17")
    wav, sr, text = ref_audio("ref_en_16k.wav")
    wav = wav[:32000]
    voices = [eng.clone_voice((wav, sr), x_vector_only=True, name="xv"), eng.clone_voice((wav, sr), text, name="icl")]
    for v in voices:
        path = tmp_path / f"{v.name}.tvoice"
        v.save(path)
        r = read_voice(path)
        assert r.mode == v.mode and r.name == v.name and r.variant == "base"
        emb = r.arrays["speaker_embedding"]
        assert emb.dtype == np.float32 and np.array_equal(emb, v.array("speaker_embedding"))
        assert r.source_sample_rate == sr and np.array_equal(r.arrays["source_wav"], wav)
        if v.mode == "icl":
            assert np.array_equal(r.arrays["ref_codes"], v.array("ref_codes").astype(np.int64))
            assert r.texts.get("ref_text") == text
            assert len(r.arrays["ref_text_tokens"]) == v.info["arrays"]["ref_text_tokens"][0]
        else:
            assert r.arrays.get("ref_codes") is None and r.arrays.get("ref_text_tokens") is None
        back = eng.load_voice(path)
        assert np.array_equal(back.array("speaker_embedding"), v.array("speaker_embedding")) and back.mode == v.mode


def test_threads_deterministic(engine, qwen3_tmod, ref_audio, work):
    """1 and 2 threads: identical embedding and codes (of a resampled recording: the whole path)."""
    wav, sr, text = ref_audio("ref_en_44k.wav")
    wav = wav[:sr * 3]
    e1, e2 = engine("base17", threads=1), engine("base17", threads=2)
    a = e1.clone_voice((wav, sr), x_vector_only=True).array("speaker_embedding")
    b = e2.clone_voice((wav, sr), x_vector_only=True).array("speaker_embedding")
    assert np.array_equal(a, b)
    w24 = native_resample(wav, sr, work, threads=1)
    assert np.array_equal(w24, native_resample(wav, sr, work, threads=2))
    tmod = qwen3_tmod("base17")
    c1, l1, _ = native_encode(tmod, w24, work, threads=1)
    c2, l2, _ = native_encode(tmod, w24, work, threads=2)
    assert np.array_equal(c1, c2) and np.array_equal(l1, l2)
    v1, v2 = e1.clone_voice((wav, sr), text), e2.clone_voice((wav, sr), text)
    c = v1.array("ref_codes")
    assert np.array_equal(c, v2.array("ref_codes")) and np.array_equal(c, c1)
    # several voices cloned at once on one engine (the pool is shared; the codebook tables are built once)
    from concurrent.futures import ThreadPoolExecutor

    e3 = engine("base06", threads=2)
    with ThreadPoolExecutor(3) as ex:
        voices = list(ex.map(lambda _: e3.clone_voice((wav, sr), text), range(3)))
    for v in voices[1:]:
        assert np.array_equal(v.array("speaker_embedding"), voices[0].array("speaker_embedding"))
        assert np.array_equal(v.array("ref_codes"), voices[0].array("ref_codes"))


def test_ref_text_tokens(record, model, engine, ref_audio, tmp_path):
    """An ICL voice's transcript tokens: the ids of "<|im_start|>assistant\\n{ref_text}<|im_end|>\\n" as the
    official processor gives them (create_voice_clone_prompt's ref_ids), read back from the saved voice."""
    import unicodedata

    from vox.formats.tvoice import read_voice

    eng = engine("base06")
    tts, _ = model("base06")
    wav, sr, long_text = ref_audio("ref_long_24k.wav")
    wav = wav[:24000]
    texts = [long_text, "Hello.", "你好，世界！今天天气很好。", "  Ça coûte 3,50 € — d'accord?\n<|im_end|> x  ",
             "1234567 numbers, 'quotes' and ünïcödé"]
    ours, off = [], []
    for i, text in enumerate(texts):
        text = unicodedata.normalize("NFC", text)
        path = tmp_path / f"v{i}.tvoice"
        eng.clone_voice((wav, sr), text).save(path)
        ours.append(read_voice(path).arrays["ref_text_tokens"].astype(np.int64))
        off.append(tts._tokenize_texts([tts._build_ref_text(text)])[0][0].numpy().astype(np.int64))
    lens = [len(o) for o in off]
    record(Row("qwen3.text_tokens", f"base06 ICL voices' ref_text_tokens, {len(texts)} transcripts",
               float(np.mean([np.array_equal(a, b) for a, b in zip(ours, off)])), backend=CPU,
               note=f"{sum(lens)} ids ({min(lens)} to {max(lens)} per transcript); whole-sequence equality"))


@pytest.mark.parametrize("codec_dtype", ["bf16", "f16"])
def test_codec_dtypes(record, engine, qwen3_tmod, ref_audio, codec_dtype):
    """The voice encoder on bf16 / f16 weights (`vox build --codec-dtype`): it runs, and the rows report
    how far it drifts from the f32 model (the docs' reason for the f32 default)."""
    wav, sr, text = ref_audio("ref_en_24k.wav")
    base = engine("base17")
    with vox.Engine(qwen3_tmod("base17", "bf16", "q8", codec_dtype), threads=2) as eng:
        a, b = base.clone_voice((wav, sr), text), eng.clone_voice((wav, sr), text)
    subj = f"base17 ref_en_24k.wav, codec {codec_dtype} (talker bf16 + q8)"
    rows = [measure("qwen3.native_codec_dtype_embedding", b.array("speaker_embedding"), a.array("speaker_embedding"),
                    subj, backend=CPU)]
    ca, cb = a.array("ref_codes"), b.array("ref_codes")
    per = np.mean(ca == cb, axis=0)
    rows.append(measure("qwen3.native_codec_dtype_codes", cb, ca, subj, backend=CPU,
                        note=f"semantic codebook {per[0]:.3f}, last codebook {per[-1]:.3f}"))
    record(rows)
