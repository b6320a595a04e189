"""The native F5-TTS family (core/src/f5) against the official f5-tts 1.1.22 / vocos 0.1.0 code and the
numpy reference (reference/f5).

On the tiny random-weight models of fixtures/f5_tiny.py (v1 and v0 layouts), converted by `vox build`'s
converter: every stage through the family's verification entries (vox_engine_run: tokenize, mel,
reference, text_encoder, dit, vocos, sample) on the inputs the official modules get, the whole CFM loop
with the initial noise injected into the official sampler (verify/f5/official.philox_noise), and the
audio end to end: a native voice cloned from the recording as recorded and an engine session against
the official preprocess_ref_audio_text + infer_process on the same clip. Then the reduced-precision
.tmods against the numpy reference on the same rounded weights, determinism (threads, how the text is
fed), sessions and duplex streams, voices (.tvoice round trip, a voice made again from its recording),
the CLI, and inputs that must be refused with a clear error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import wave

import numpy as np
import pytest
import soundfile as sf

import vox
from vox.errors import InvalidArgument, VoxError
from vox.reference.f5 import cfm as ref_cfm
from vox.reference.f5 import dit as ref_dit
from vox.reference.f5 import mel as ref_mel
from vox.reference.f5 import noise, pipeline, vocos
from vox.verify.f5 import runner
from vox.verify.tolerance import Row, measure

from f5_fixtures import AUDIO, REF_TEXT, SCENARIOS, fx, models, off, ref_clip, text_data  # noqa: F401 (fixtures)

CPU = "cpu"
MULTI = "First sentence here, and more words. Second one is longer than that! Third question? Fourth, at last."


# ------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def tmods(fx, text_data, tmp_path_factory):
    """tmods(variant, dtype="f32", quant="none", padding="center") -> Path of the fixture converted (once);
    padding "same": the Vocos config.yaml with "same" ISTFT padding (the official Vocos reads it too)."""
    from vox.families.f5 import convert as f5

    d = tmp_path_factory.mktemp("f5native")
    cache: dict = {}

    def get(variant: str, dtype: str = "f32", quant: str = "none", padding: str = "center"):
        key = (variant, dtype, quant, padding)
        if key not in cache:
            f = fx[variant]
            voc = f.vocos
            if padding == "same":
                voc = d / f"vocos-same-{variant}"
                shutil.copytree(f.vocos, voc)
                cfg = (voc / "config.yaml").read_text()
                (voc / "config.yaml").write_text(cfg.replace("padding: center", "padding: same"))
            out = d / f"{variant}-{dtype}-{quant}-{padding}.tmod"
            f5.convert(f.safetensors, f.vocab, voc, out, dtype=dtype, quant=quant, text_data=text_data)
            cache[key] = out
        return cache[key]

    return get


@pytest.fixture(scope="module")
def engines(tmods):
    """engines(variant, dtype="f32", quant="none", padding="center", threads=2) -> a vox.Engine (cached)."""
    cache: dict = {}

    def get(variant: str, dtype: str = "f32", quant: str = "none", padding: str = "center", threads: int = 2):
        key = (variant, dtype, quant, padding, threads)
        if key not in cache:
            cache[key] = vox.Engine(tmods(variant, dtype, quant, padding), threads=threads)
        return cache[key]

    yield get
    for e in cache.values():
        e.close()


@pytest.fixture(scope="module")
def voices(engines, ref_clip):
    """voices(engine) -> the voice cloned natively from the clip as recorded (cached per engine)."""
    cache: dict = {}

    def get(eng):
        if id(eng) not in cache:
            cache[id(eng)] = eng.clone_voice(ref_clip[4], REF_TEXT)
        return cache[id(eng)]

    return get


def ids_of(model, text: str) -> np.ndarray:
    return np.asarray(model.tokenizer.encode(text), np.int32)


# ------------------------------------------------------------------------------------ text frontend
def test_tokenizer_matches_official(models, engines, text_data, record):
    """The native frontend's symbols and ids equal convert_char_to_pinyin + list_str_to_idx (English,
    Chinese with tones and sandhi, mixed scripts, 100 random dictionary strings); the segments equal rjieba's."""
    import rjieba

    cfm = models["v1"][0]
    eng = engines("v1")
    rows = []
    corpus = runner.random_texts(list(text_data.jieba_freqs), list(text_data.pinyin.phrases), 100, seed=9)
    for name, texts in (("English", runner.ENGLISH), ("Chinese", runner.CHINESE), ("mixed", runner.MIXED),
                        ("100 random dictionary strings", corpus)):
        sym, ids = runner.token_matches(eng, cfm, texts)
        seg = [runner.split_symbols(eng.run("tokenize", inputs={"text": t})["segments"]) == rjieba.cut(t)
               for t in texts]
        rows += [Row("f5.native.tokens", f"{name}: symbols", float(np.mean(sym)), backend=CPU),
                 Row("f5.native.tokens", f"{name}: ids", float(np.mean(ids)), backend=CPU),
                 Row("f5.native.tokens", f"{name}: jieba segments", float(np.mean(seg)), backend=CPU)]
    # the engine's tokenize (the ABI call) is the same frontend
    assert eng.tokenize("你好，世界！").tolist() == eng.run("tokenize", inputs={"text": "你好，世界！"})["ids"].tolist()
    record(rows)


# ------------------------------------------------------------------------------------ model stages
def test_sample_mel(models, engines, ref_clip, record):
    cfm, _, _ = models["v1"]
    audio = ref_clip[2][0]
    ours = engines("v1").run("mel", inputs={"audio": audio})["mel"]
    official = runner.official_mel(cfm, audio).T
    assert ours.shape == official.shape
    subject = f"{audio.size / 24000:.2f} s speech"
    record([measure("f5.native.sample_mel", np.exp(ours), np.exp(official), subject + ", linear", backend=CPU),
            measure("f5.native.sample_log_mel", ours, official, subject, backend=CPU),
            measure("f5.native.sample_log_mel_vs_reference", ours, ref_mel.log_mel(audio).T, subject, backend=CPU)])


def _official_reference(cfm, wav, target_rms: float):
    """infer_batch_process's conditioning on a preprocessed WAV: mono, loudness, resampling, mel [frames][100]."""
    import torch
    import torchaudio

    a, sr = sf.read(wav, dtype="float32", always_2d=True)
    audio = torch.from_numpy(a.T.copy())
    if audio.shape[0] > 1:
        audio = torch.mean(audio, dim=0, keepdim=True)
    rms = torch.sqrt(torch.mean(torch.square(audio)))
    if rms < target_rms:
        audio = audio * target_rms / rms
    if sr != 24000:
        audio = torchaudio.transforms.Resample(sr, 24000)(audio)
    return runner.official_mel(cfm, audio[0].numpy()).T, float(rms)


def test_reference_preprocessing(off, models, engines, tmp_path, record):
    """A recording as a native clone prepares it (the "reference" entry) vs the official
    preprocess_ref_audio_text (pydub silence clipping and trimming, int16 samples equal) and
    infer_batch_process's loudness (target_rms), resampling and mel."""
    cfm = models["v1"][0]
    eng = engines("v1")
    rng = np.random.RandomState(0)
    long, _ = sf.read(AUDIO / "ref_long_24k.wav", dtype="int16")
    quiet, _ = sf.read(AUDIO / "ref_en_24k.wav", dtype="int16")
    cases = {"24 kHz": (AUDIO / "ref_en_24k.wav", 0.1), "44.1 kHz": (AUDIO / "ref_en_44k.wav", 0.1),
             "16 kHz": (AUDIO / "ref_en_16k.wav", 0.1),
             "34 s, clipped at a 1 s silence": (AUDIO / "ref_long_24k.wav", 0.1)}
    made = {"34 s with a noise floor, clipped at a short pause": (long + rng.randint(-300, 300, long.size)).astype(np.int16),
            "quiet (rms < target_rms: scaled up)": (quiet // 8).astype(np.int16)}
    for name, a in made.items():
        p = tmp_path / f"{len(cases)}.wav"
        sf.write(p, a, 24000, subtype="PCM_16")
        cases[name] = (p, 0.1)
    cases["loud target_rms 0.3"] = (AUDIO / "ref_en_24k.wav", 0.3)
    rows = []
    for name, (path, target) in cases.items():
        wav, _ = off.preprocess_ref(path, REF_TEXT)
        official, osr = sf.read(wav, dtype="int16")
        x, sr = sf.read(path, dtype="float32")
        got = eng.run("reference", inputs={"audio": x, "sample_rate": sr, "target_rms": np.float32(target)})
        pre = np.round(got["preprocessed"] * 32768).astype(np.int16)
        same = int(got["preprocessed_rate"][0]) == osr and pre.shape == official.shape and np.array_equal(pre, official)
        rows.append(Row("f5.native.ref_preprocess", f"{name} ({official.size / osr:.2f} s kept)", float(same), backend=CPU))
        omel, orms = _official_reference(cfm, wav, target)
        assert got["ref_mel"].shape == omel.shape, name
        # linear: a 16 kHz recording leaves the bands above 8 kHz with rounding noise only, whose log is noise
        rows += [measure("f5.native.ref_mel", np.exp(got["ref_mel"]), np.exp(omel), f"{name}, {sr} Hz", backend=CPU),
                 measure("f5.native.ref_rms", got["ref_rms"], np.float32([orms]), name, backend=CPU)]
    record(rows)


@pytest.mark.parametrize("variant", ["v1", "v0"])
def test_text_encoder_and_dit_branches(models, engines, variant, record):
    """The text encoder (both branches) and one DiT evaluation of both guidance branches (the "dit"
    entry: x, cond, ids, t) vs DiT.forward(cfg_infer=True) and the reference."""
    cfm, _, model = models[variant]
    w, c = model.weights, model.config.dit
    eng = engines(variant)
    rng = np.random.RandomState(3)
    n = 240
    ids = rng.randint(0, c.text_num_embeds, 90).astype(np.int32)
    te = eng.run("text_encoder", inputs={"ids": ids, "frames": n})
    rows = []
    for drop, key in ((False, "text_cond"), (True, "text_uncond")):
        rows.append(measure("f5.native.text_encoder", te[key], runner.official_text_embedding(cfm, ids, n, drop),
                            f"{variant}, {key[5:]}", backend=CPU))
    x = rng.randn(n, 100).astype(np.float32)
    cond = rng.randn(n, 100).astype(np.float32)
    cond[120:] = 0
    rte = ref_dit.text_embedding(ids, n, w, c), ref_dit.text_embedding(ids, n, w, c, drop_text=True)
    for t in (0.0, 0.37214, 0.98):
        got = eng.run("dit", inputs={"x": x, "cond": cond, "ids": ids, "t": np.float32(t)})
        oc, ou = runner.official_dit(cfm, x, cond, ids, t)
        rc = ref_dit.dit(x, cond, rte[0], np.float32(t), w, c)
        ru = ref_dit.dit(x, cond, rte[1], np.float32(t), w, c, drop_audio_cond=True)
        rows += [measure("f5.native.dit_cond", got["flow_cond"], oc, f"{variant}, t={t}", backend=CPU),
                 measure("f5.native.dit_uncond", got["flow_uncond"], ou, f"{variant}, t={t}", backend=CPU),
                 measure("f5.native.dit_vs_reference", got["flow_cond"], rc, f"{variant} cond, t={t}", backend=CPU),
                 measure("f5.native.dit_vs_reference", got["flow_uncond"], ru, f"{variant} uncond, t={t}", backend=CPU),
                 measure("f5.native.time_embedding", got["time_embedding"][0], runner.official_time_embedding(cfm, t),
                         f"{variant}, t={t}", backend=CPU)]
    record(rows)


def test_time_grid(engines, record):
    """The sampler's time grid (the "sample" entry's t) vs get_epss_timesteps / torch.linspace + sway."""
    import torch
    from f5_tts.model.utils import get_epss_timesteps

    eng = engines("v1")
    cond = np.zeros((4, 100), np.float32)
    worst, cases = 0.0, 0
    for n in (4, 5, 6, 7, 10, 12, 16, 32, 50):
        for epss in (True, False):
            for sway in (-1.0, None, 0.5):
                got = eng.run("sample", inputs={"cond": cond, "ids": np.array([1, 2], np.int32), "duration": 6,
                                                "nfe_step": n, "use_epss": int(epss), "cfg_strength": np.float32(0),
                                                "sway_sampling_coef": np.float32(sway or 0.0)}, taps="t")["t"][:, 0]
                t = get_epss_timesteps(n, "cpu", torch.float32) if epss else torch.linspace(0, 1, n + 1)
                if sway is not None:
                    t = t + sway * (torch.cos(torch.pi / 2 * t) - 1 + t)
                assert got.shape == (n + 1,)
                worst = max(worst, float(np.abs(got - t.numpy()).max()))
                cases += 1
    record(Row("f5.native.timesteps", f"{cases} grids: nfe 4..50, EPSS on/off, sway -1 / none / 0.5", worst, backend=CPU))


@pytest.mark.parametrize("padding", ["center", "same"])
def test_vocos(off, models, engines, tmods, ref_clip, padding, record):
    """Vocos decode vs the official Vocos, with the head's "center" and "same" ISTFT padding."""
    cfm, voc, _ = models["v1"]
    if padding == "same":
        from vox.families.f5 import convert as f5

        voc = off.load_vocoder(tmods("v1", padding="same").parent / "vocos-same-v1")
        assert f5.read_tmod(tmods("v1", padding="same")).config.vocos.padding == "same"
    mel = runner.official_mel(cfm, ref_clip[2][0])
    got = engines("v1", padding=padding).run("vocos", inputs={"mel": mel.T.copy()})["audio"]
    official = runner.official_vocos(voc, mel)
    assert got.shape == official.shape
    record(measure("f5.native.vocos", got, official, f"{padding} padding, {mel.shape[1]} frames", backend=CPU))


@pytest.mark.parametrize("variant", ["v1", "v0"])
def test_cfm_loop(models, engines, ref_clip, variant, record):
    """The whole sampling loop of one piece (EPSS 7 steps with sway, 8 linspace steps; CFG 2) with its
    Philox x0: the "sample" entry vs the reference (same arithmetic) and vs the official CFM.sample."""
    cfm, _, model = models[variant]
    eng = engines(variant)
    cond = runner.official_mel(cfm, ref_clip[2][0]).T.copy()
    ids = ids_of(model, ref_clip[1] + " Hello there, tiny model.")
    rows = []
    for steps, epss in ((7, True), (8, False)):
        dur = cond.shape[0] + 60
        got = eng.run("sample", inputs={"cond": cond, "ids": ids, "duration": dur, "nfe_step": steps,
                                        "cfg_strength": np.float32(2.0), "sway_sampling_coef": np.float32(-1.0),
                                        "use_epss": int(epss), "seed": 5, "piece": 0}, taps=("x0", "mel"))
        assert np.array_equal(got["x0"], noise.initial_noise(5, 0, dur))
        ref = ref_cfm.sample(cond, ids, dur, lambda d: noise.initial_noise(5, 0, d), model.weights, model.config.dit,
                             steps=steps, cfg_strength=2.0, sway_sampling_coef=-1.0, use_epss=epss).mel
        official = runner.official_sample(cfm, cond, ids, dur, seed=5, steps=steps, cfg_strength=2.0, sway=-1.0,
                                          use_epss=epss)
        subject = f"{variant}, {steps} steps, EPSS {epss}, {dur} frames"
        rows += [measure("f5.native.cfm_loop_vs_reference", got["mel"], ref, subject, backend=CPU),
                 measure("f5.native.cfm_loop", got["mel"], official, subject, backend=CPU)]
    record(rows)


# ------------------------------------------------------------------------------------ end to end
@pytest.mark.parametrize("variant", ["v1", "v0"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_end_to_end(off, models, engines, voices, ref_clip, variant, scenario, record):
    """A native clone of the clip as recorded and a session vs preprocess_ref_audio_text + infer_process
    (the same Philox noise per piece): pieces and their total frames (the duration formula), the
    generated mel and the audio (cross-fades, fix_duration, speed, EPSS); and vs the reference pipeline."""
    cfm, voc, model = models[variant]
    wav, text, audio, sr, _ = ref_clip
    gen, kw = SCENARIOS[scenario]
    eng = engines(variant)
    official, osr, spec, draws = off.infer(wav, text, gen, cfm, voc, seed=11, **kw)
    ours, pieces, mel, chunks = runner.native_session(eng, voices(eng), gen, 11, **kw)
    ref = pipeline.synthesize(model, audio, sr, text, gen, seed=11, **kw)
    frames = [(i, p["frames"]) for i, p in enumerate(pieces)]
    assert ours.shape == official.shape, (ours.shape, official.shape)
    subject = f"{variant} {scenario} ({len(official) / 24000:.1f} s)"
    record([Row("f5.native.piece_frames", f"{variant} {scenario}: {len(frames)} pieces", float(frames == draws),
                backend=CPU),
            Row("f5.native.piece_frames", f"{variant} {scenario}: piece texts vs the reference",
                float([p["text"] for p in pieces] == [p.text for p in ref.pieces]), backend=CPU),
            measure("f5.native.audio", ours, official, subject, backend=CPU),
            measure("f5.native.audio_vs_reference", ours, ref.audio, subject, backend=CPU),
            measure("f5.native.generated_mel", mel.T, spec, f"{variant} {scenario}", backend=CPU)])
    assert len(chunks) == len(pieces)  # one chunk per piece (the last one with the held cross-fade tail)
    if scenario == "pieces + cross-fade":
        assert len(frames) > 1


def test_target_rms_end_to_end(off, models, engines, voices, ref_clip, record):
    """target_rms above the clip's loudness: the voice's mel is made again from its recording (scaled up),
    and the output scaled back, as infer_batch_process."""
    cfm, voc, _ = models["v1"]
    wav, text, *_ = ref_clip
    eng = engines("v1")
    gen = "Louder reference, quieter output."
    official, *_ = off.infer(wav, text, gen, cfm, voc, seed=4, nfe_step=4, target_rms=0.3)
    ours = eng.synthesize(gen, voices(eng), seed=4, nfe_step=4, target_rms=0.3)
    record(measure("f5.native.audio", ours, official, "v1 target_rms 0.3 (voice mel made again)", backend=CPU))


def test_short_recording_end_to_end(off, models, engines, tmp_path, record):
    """A 0.1 s recording is what the official code accepts too (nothing to refuse): the same audio."""
    cfm, voc, _ = models["v1"]
    x, sr = sf.read(AUDIO / "ref_en_24k.wav", dtype="int16")
    p = tmp_path / "short.wav"
    sf.write(p, x[int(0.5 * sr): int(0.6 * sr)], sr, subtype="PCM_16")
    wav, text = off.preprocess_ref(p, "Fox.")
    gen = "A short reference."
    official, *_ = off.infer(wav, text, gen, cfm, voc, seed=6, nfe_step=4)
    eng = engines("v1")
    ours = eng.synthesize(gen, eng.clone_voice(p, "Fox."), seed=6, nfe_step=4)
    assert ours.shape == official.shape
    record(measure("f5.native.audio", ours, official, "v1, a 0.1 s recording", backend=CPU))


# ------------------------------------------------------------------------------------ weight formats
@pytest.mark.parametrize("dtype,quant", [("f16", "none"), ("bf16", "none"), ("f32", "q8")])
def test_reduced_precision(engines, voices, tmods, ref_clip, dtype, quant, monkeypatch, record):
    """A reduced-precision .tmod end to end: vs the reference on the same rounded weights (what the
    native kernels add), and vs the native f32 audio (what the format costs). bf16 weights run the DiT
    as bf16 dot products where the path has them (AVX512-BF16, inputs rounded to bf16: its own row),
    and with VOX_F5_DIT=f32 as f32 products of the bf16 weights (the row of every other path). q8 weights
    run on the int8 GEMM tiles where the path has them (vx_linear_q8w: vx_linear's q8 arithmetic in one
    float order), checked against the reference and against vx_linear's q8 kernels (VOX_F5_DIT=f32); where
    the attention runs on bf16 dot products its scores are q8 products too, and VOX_F5_ATT=bf16 keeps them
    bf16 (both measured), and the input embedding's convolutions are bf16 dot products too."""
    from vox.families.f5 import convert as f5

    wav, text, audio, sr, _ = ref_clip
    gen, kw = SCENARIOS["one piece"]
    eng = engines("v1", dtype, quant)
    assert eng.info["precision"]["dtype"] == dtype and eng.info["precision"]["quant"] == quant
    f32 = engines("v1").synthesize(gen, voices(engines("v1")), seed=3, **kw)
    ref = pipeline.synthesize(f5.read_tmod(tmods("v1", dtype, quant)), audio, sr, text, gen, seed=3, **kw).audio
    tag = "q8" if quant == "q8" else dtype
    path = vox.devices()["cpu"]["kernels"]
    dots = vox.devices()["cpu"]["dots"]
    math = eng.info["dit_math"]
    ours = eng.synthesize(gen, voices(eng), seed=3, **kw)

    def with_env(name, value, math_prefix):
        """The same .tmod with an environment switch (VOX_F5_DIT=f32: vx_linear and the f32 attention;
        VOX_F5_ATT=bf16: bf16 scores): its audio."""
        with monkeypatch.context() as mp:
            mp.setenv(name, value)
            with vox.Engine(tmods("v1", dtype, quant), threads=2) as e2:
                assert e2.info["dit_math"].startswith(math_prefix), e2.info["dit_math"]
                return e2.synthesize(gen, e2.clone_voice(ref_clip[4], REF_TEXT), seed=3, **kw)

    def with_dit_f32(math_prefix):
        return with_env("VOX_F5_DIT", "f32", math_prefix)

    rows = [measure(f"f5.native.{tag}_vs_f32", ours, f32, f"v1 {tag} vs native f32, audio ({path})", backend=CPU)]
    if dtype == "bf16":
        dot = math.startswith("bf16 dot")
        assert dot == bool(dots.get("bf16_rounds_x")), (math, dots)
        rows.append(measure("f5.native.bf16dot_vs_reference" if dot else "f5.native.bf16_vs_reference", ours, ref,
                            f"v1 bf16, audio ({path}: {math.split(' (')[0]})", backend=CPU))
        if dot:   # the same weights as f32 products, as every other path computes them
            other = with_dit_f32("f32 products")
            rows.append(measure("f5.native.bf16_vs_reference", other, ref, f"v1 bf16, audio ({path}, VOX_F5_DIT=f32)",
                                backend=CPU))
    elif quant == "q8":
        tiles = math.startswith("q8 products on int8 GEMM tiles")
        assert tiles == bool(dots.get("q8")), (math, dots)
        att_bf16 = bool(tiles and dots.get("bf16_rounds_x"))   # the attention on bf16 dot products
        q8_scores = "the attention's scores as q8 products" in math
        assert q8_scores == (att_bf16 and not dots.get("bf16_tiles")), (math, dots)
        conv_bf16 = eng.info["conv_math"].startswith("bf16 dot products")
        assert conv_bf16 == att_bf16, eng.info["conv_math"]
        what = math.split(' (')[0] + (", q8 attention scores" if q8_scores else "") + (", bf16 input convolutions" if conv_bf16 else "")
        rows.append(measure("f5.native.q8_vs_reference", ours, ref, f"v1 q8, audio ({path}: {what})", backend=CPU))
        if q8_scores:   # the attention's scores as bf16 dot products (VOX_F5_ATT=bf16)
            other = with_env("VOX_F5_ATT", "bf16", "q8 products on int8 GEMM tiles")
            rows.append(measure("f5.native.q8_vs_reference", other, ref, f"v1 q8, audio ({path}, VOX_F5_ATT=bf16)",
                                backend=CPU))
        if tiles:   # vx_linear's q8 kernels, as every path without the tiles computes them
            other = with_dit_f32("q8 products of vx_linear")
            rows.append(measure("f5.native.q8_vs_reference", other, ref, f"v1 q8, audio ({path}, VOX_F5_DIT=f32)",
                                backend=CPU))
    else:
        assert math.startswith("f32 products")
        rows.append(measure(f"f5.native.{tag}_vs_reference", ours, ref, f"v1 {tag}, audio ({path})", backend=CPU))
    if quant != "q8":
        assert eng.info["conv_math"] == "the stored weights' products", eng.info["conv_math"]
    record(rows)


# ------------------------------------------------------------------------------------ determinism, streaming
def test_same_seed_same_audio_for_any_thread_count_and_feeding(engines, voices, record):
    """Same seed => the same bits for 1 and 2 threads, and for the text fed at once, word by word or
    in 5-byte pieces; another seed gives other audio."""
    one, two = engines("v1", threads=1), engines("v1")
    kw = dict(nfe_step=3, max_chars=40)
    a = runner.native_session(two, voices(two), MULTI, 7, **kw)[0]
    b = runner.native_session(one, voices(one), MULTI, 7, **kw)[0]
    record(Row("f5.native.threads_bitwise", "v1, 3 pieces, seed 7: 1 vs 2 threads", float(np.array_equal(a, b)),
               backend=CPU))
    raw = MULTI.encode()
    for feed in (MULTI.split(" "), [raw[i:i + 5] for i in range(0, len(raw), 5)]):
        with two.session(voices(two), seed=7, **kw) as s:
            for i, p in enumerate(feed):
                if isinstance(p, bytes):   # whole characters (this text is ASCII)
                    p = p.decode()
                elif i < len(feed) - 1:
                    p += " "
                s.feed(p)
                list(s.ready())  # pull what is ready between feeds
            s.end()
        # the audio pulled while feeding plus the rest
        with two.session(voices(two), seed=7, **kw) as s:
            got = []
            for i, p in enumerate(feed):
                p = p.decode() if isinstance(p, bytes) else p + (" " if i < len(feed) - 1 else "")
                s.feed(p)
                got += [c.samples for c in s.ready()]
            s.end()
            got += [c.samples for c in s]
        assert np.array_equal(np.concatenate(got), a)
    c = runner.native_session(two, voices(two), MULTI, 8, **kw)[0]
    assert not (c.shape == a.shape and np.array_equal(c, a))


def test_session_hands_out_audio_piece_by_piece(engines, voices):
    """Each piece's audio leaves as soon as the piece is decided (before the text ends), all but the
    cross-fade tail the next piece may still change; the chunks joined are the whole utterance."""
    eng = engines("v1")
    v = voices(eng)
    kw = dict(nfe_step=2, max_chars=40)
    whole, pieces, _, chunks = runner.native_session(eng, v, MULTI, 3, **kw)
    assert len(pieces) == 3 and len(chunks) == 3 and np.array_equal(np.concatenate(chunks), whole)
    with eng.session(v, seed=3, **kw) as s:
        s.feed("First sentence here, and more")
        assert list(s.ready()) == []  # piece 1 may still grow (29 of 40 bytes)
        s.feed(" words. Second one")   # 37 + 10 bytes: piece 1 is "First ... words." whatever follows
        early = list(s.ready())
        assert len(early) == 1 and not early[0].is_last and early[0].samples.size > 0
        s.feed(" is longer than that! Third question? Fourth, at last.")
        s.end()
        rest = list(s)
    assert rest[-1].is_last and np.array_equal(np.concatenate([early[0].samples] + [c.samples for c in rest]), whole)


def test_duplex_equals_synthesize(engines, voices):
    """engine.duplex with commit "auto" (the family's text_in is "chunk"): the same audio as synthesize."""
    eng = engines("v1")
    v = voices(eng)
    assert eng.capabilities["stream"]["text_in"] == "chunk" and eng.capabilities["stream"]["exact"]
    kw = dict(nfe_step=2, max_chars=40)
    whole = eng.synthesize(MULTI, v, seed=5, **kw)
    with eng.duplex(v, commit="auto", seed=5, **kw) as d:
        for w in MULTI.split(" "):
            d.write(w + " ")
        d.end()
        got = np.concatenate([c.samples for c in d.audio()])
    assert got.shape == whole.shape and np.array_equal(got, whole)


# ------------------------------------------------------------------------------------ voices, CLI
def test_voice_roundtrip_portable_and_rebuilt(engines, voices, tmp_path):
    """A .tvoice round trip gives the same audio; a voice made with another conversion (f16) of the
    weights is used as it is; a voice whose mel was made another way is made again from its recording."""
    from vox.formats import tvoice

    eng, e16 = engines("v1"), engines("v1", "f16")
    v = voices(eng)
    v.save(tmp_path / "a.tvoice")
    w = eng.load_voice(tmp_path / "a.tvoice")
    assert w.info["mode"] == "reference" and np.array_equal(w.array("ref_mel"), v.array("ref_mel"))
    a = eng.synthesize("Round trip.", v, seed=2, nfe_step=3)
    assert np.array_equal(a, eng.synthesize("Round trip.", w, seed=2, nfe_step=3))
    # the f32 engine's voice in the f16 engine: the same mel, the same audio as its own clone
    v16 = voices(e16)
    assert e16.info["precision"]["dtype"] == "f16" and v16.info["model_id"] == v.info["model_id"]  # the weights' id
    b = e16.synthesize("Round trip.", e16.load_voice(tmp_path / "a.tvoice"), seed=2, nfe_step=3)
    assert np.array_equal(b, e16.synthesize("Round trip.", v16, seed=2, nfe_step=3))
    # a voice whose mel was made for another model (80 bands, another mel_spec): made again from source_wav
    fv = tvoice.read_voice(tmp_path / "a.tvoice")
    fv.arrays["ref_mel"] = np.zeros((50, 80), np.float32)
    fv.texts["mel_spec"] = "bigvgan sr=24000 n_fft=1024 hop=256 win=1024 n_mels=80 target_rms=0.1"
    tvoice.write_voice(tmp_path / "other.tvoice", fv)
    c = eng.synthesize("Round trip.", eng.load_voice(tmp_path / "other.tvoice"), seed=2, nfe_step=3)
    assert np.array_equal(c, a)
    del fv.arrays["source_wav"]
    fv.source_sample_rate = None
    tvoice.write_voice(tmp_path / "norec.tvoice", fv)
    with pytest.raises(VoxError, match="no recording"):
        eng.synthesize("Round trip.", eng.load_voice(tmp_path / "norec.tvoice"), seed=2, nfe_step=3)


def test_cli_voice_create_and_say(tmods, engines, voices, ref_clip, tmp_path):
    model = str(tmods("v1"))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "vox.cli.main", *args], capture_output=True, text=True, timeout=300)

    tv = tmp_path / "me.tvoice"
    r = cli("voice", "create", str(ref_clip[4]), "--model", model, "--text", REF_TEXT, "-o", str(tv))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "a.wav"
    r = cli("say", "Hello from the command line.", "--model", model, "--voice", str(tv), "--nfe", "4", "--cfg", "1.5",
            "--seed", "9", "-o", str(out))
    assert r.returncode == 0, r.stderr
    with wave.open(str(out)) as f:
        assert f.getframerate() == 24000 and f.getnframes() > 2400
        pcm = np.frombuffer(f.readframes(f.getnframes()), np.int16)
    eng = engines("v1")
    want = eng.synthesize("Hello from the command line.", eng.load_voice(tv), seed=9, nfe_step=4, cfg_strength=1.5)
    assert pcm.size == want.size and np.abs(pcm / 32768.0 - want).max() < 2 / 32768
    for args, msg in ((("say", "Hi.", "--model", model, "-o", str(tmp_path / "b.wav")), "voice"),
                      (("say", "Hi.", "--model", model, "--voice", str(tv), "--nfe", "0", "-o", str(tmp_path / "b.wav")),
                       "nfe_step"),
                      (("voice", "create", str(ref_clip[4]), "--model", model, "-o", str(tmp_path / "x.tvoice")),
                       "transcript")):
        r = cli(*args)
        assert r.returncode != 0 and msg in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "b.wav").exists() and not (tmp_path / "x.tvoice").exists()


# ------------------------------------------------------------------------------------ vox verify
def test_vox_verify(tmods, ref_clip, tmp_path, record):
    """`vox verify` on F5 models through the CLI: the official code loaded with each .tmod's own weights,
    every row within tolerance (exit status 0) for f32 with a speech recording and for q8 with the
    default synthetic one; usage errors are clear."""
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "vox.cli.main", "verify", *args], capture_output=True,
                              text=True, timeout=600)

    rows = []
    for model, extra in ((tmods("v1"), ("--ref-audio", str(ref_clip[4]), "--ref-text", REF_TEXT)),
                         (tmods("v1", "f32", "q8"), ())):
        r = cli("--model", str(model), "--json", *extra)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        got = [Row(x["check"], x["subject"], x["value"], note=x["note"], backend=x["backend"]) for x in json.loads(r.stdout)]
        checks = {row.check for row in got}
        assert all(row.passed for row in got)
        assert {"f5.native.tokens", "f5.native.sample_mel", "f5.native.vocos", "f5.native.piece_frames"} <= checks
        if "q8" in model.name:
            assert "f5.native.q8_vs_reference" in checks and "f5.native.dit_spread" not in checks, checks
        else:
            assert {"f5.native.dit_spread", "f5.native.text_encoder", "f5.native.audio_spread"} <= checks, checks
        assert "f5.native.reference_vs_official" in checks
        rows += [row for row in got if row.check in ("f5.native.audio_spread", "f5.native.q8_vs_reference",
                                                     "f5.native.reference_vs_official", "f5.native.dit_spread")]
    record([Row(r.check, "vox verify " + r.subject, r.value, note=r.note, backend=r.backend) for r in rows])
    garbage = tmp_path / "garbage.wav"
    garbage.write_bytes(bytes(range(256)) * 8)
    for args, msg in ((("--model", str(tmods("v1")), "--official", str(tmp_path)), "--official is not used"),
                      (("--model", str(tmods("v1")), "--nfe-step", "0"), "--nfe-step"),
                      (("--model", str(tmods("v1")), "--ref-audio", str(ref_clip[4])), "--ref-text"),
                      (("--model", str(tmods("v1")), "--ref-audio", str(tmp_path / "none.wav"), "--ref-text", "Hi."),
                       "no such file"),
                      (("--model", str(tmods("v1")), "--ref-audio", str(garbage), "--ref-text", "Hi."),
                       "not an audio file")):
        r = cli(*args)
        assert r.returncode != 0 and msg in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]


def test_vox_verify_fails_on_a_wrong_model_and_restores_the_fp_state(tmods, monkeypatch):
    """The rows can fail: the official side given one weight scaled by 1.001 (what a wrong kernel or a
    misread tensor looks like) fails the DiT and audio rows. And verify called from a program leaves the
    thread's floating-point state as it found it (the official code flushes denormals while it runs)."""
    from vox.verify.f5 import official, runner
    from vox.verify.fpstate import flushes_denormals

    real = official.load_from_model

    def altered(model, directory):
        w = dict(model.weights)
        w["transformer.proj_out.weight"] = w["transformer.proj_out.weight"] * np.float32(1.001)
        return real(type(model)(model.config, w, model.text, source=model.source), directory)

    monkeypatch.setattr(official, "load_from_model", altered)
    assert flushes_denormals() is False
    rows = runner.verify(str(tmods("v1")), nfe_step=2)
    assert np.float32(1e-40) * np.float32(2) != 0 and flushes_denormals() is False
    failed = {r.check for r in rows if not r.passed}
    assert {"f5.native.dit_spread", "f5.native.audio_spread", "f5.native.reference_vs_official"} <= failed, failed
    assert all(r.passed for r in rows if r.check in ("f5.native.tokens", "f5.native.vocos", "f5.native.sample_mel"))


def test_vox_verify_says_where_the_weights_copy_did_not_fit(tmods, monkeypatch):
    """The official loaders read a float32 copy of the weights from a temporary folder: a full disk there is
    reported with the size needed and the way out (TMPDIR), not as a bare errno."""
    import errno

    from vox.verify.f5 import official, runner

    def full(model, directory):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory) + "/model.safetensors")

    monkeypatch.setattr(official, "load_from_model", full)
    with pytest.raises(OSError, match=r"float32 weights the official loaders read \(0\.\d GiB\) into .* "
                                      r"\(No space left on device\); set TMPDIR"):
        runner.verify(str(tmods("v1")), nfe_step=2)


# ------------------------------------------------------------------------------------ odd inputs
def test_odd_inputs_get_clear_errors(engines, voices):
    eng = engines("v1")
    v = voices(eng)
    x, sr = sf.read(AUDIO / "ref_en_24k.wav", dtype="float32")
    for audio, msg in (((np.zeros(3 * 24000, np.float32), 24000), "silent"),
                       ((np.full(10, 0.5, np.float32), 24000), "silent"),   # 10 samples: below pydub's 10 ms chunks
                       ((np.full(24000, np.nan, np.float32), 24000), "sample 0 is not finite"),
                       ((np.where(np.arange(x.size) == 500, np.nan, x).astype(np.float32), sr), "sample 500 is not finite"),
                       ((x[::3].copy(), 8000), "below 11025 Hz")):
        with pytest.raises(InvalidArgument, match=msg):
            eng.clone_voice(audio, REF_TEXT)
    for text in ("", "   "):
        with pytest.raises(InvalidArgument, match="transcript|blank|empty"):
            eng.clone_voice((x, sr), text)
    with pytest.raises(InvalidArgument, match="empty"):
        eng.synthesize("   ", v, seed=1, nfe_step=2)
    # text of punctuation only has nothing to speak: one error for every family (session.c), where the
    # official code would make a second of sound of it
    with pytest.raises(InvalidArgument, match="nothing to speak"):
        eng.synthesize("?!...", v, seed=1, nfe_step=2)
    for kw, msg in ((dict(nfe_step=257), "nfe_step"), (dict(nfe_step=10 ** 9), "nfe_step"), (dict(nfe_step=0), "nfe_step"),
                    (dict(speed=0.0), "speed"), (dict(speed=-1.0), "speed"), (dict(cfg_strength=float("nan")), "cfg"),
                    (dict(target_rms=0.0), "target_rms"), (dict(sway_sampling_coef=3.0), "sway"),
                    (dict(max_chars=-1), "max_chars"), (dict(fix_duration=-2.0), "fix_duration"),
                    (dict(bogus=1), "bogus")):
        with pytest.raises((InvalidArgument, TypeError, ValueError), match=msg):
            eng.synthesize("Hello.", v, seed=1, **kw)
    # the same options through the core's own parser (as a C or HTTP caller sends them)
    for js, msg in (('{"nfe_step": 300}', "nfe_step"), ('{"speed": "fast"}', "speed"), ('{"nope": 1}', "nope"),
                    ('{"use_epss": 3}', "use_epss"), ('{"nfe_step": 2.5}', "nfe_step"), ("{", "JSON|json")):
        with pytest.raises(VoxError, match=msg):
            raise_for_options(eng, v, js)
    # a huge fix_duration exceeds the text encoder's positions
    # a fix_duration shorter than the reference: CFM.sample's duration is at least the reference's + 1 frame
    assert eng.synthesize("Hello.", v, seed=1, nfe_step=2, fix_duration=0.5).size == 256
    with pytest.raises(VoxError, match="longer than"):
        eng.synthesize("Hello.", v, seed=1, nfe_step=1, fix_duration=600.0)
    # bad entry inputs
    with pytest.raises(InvalidArgument, match="nfe_step"):
        eng.run("sample", inputs={"cond": np.zeros((4, 100), np.float32), "ids": np.array([1], np.int32),
                                  "duration": 6, "nfe_step": 100000})
    with pytest.raises(InvalidArgument, match="mel"):
        eng.run("vocos", inputs={"mel": np.zeros((4, 80), np.float32)})
    with pytest.raises(InvalidArgument):
        eng.run("dit", inputs={"x": np.zeros((4, 100), np.float32), "cond": np.zeros((5, 100), np.float32),
                               "ids": np.array([1], np.int32), "t": np.float32(0)})
    # the engine still works
    assert eng.synthesize("Still fine.", v, seed=1, nfe_step=2).size > 0


def raise_for_options(eng, voice, js: str) -> None:
    """Open a session with raw options JSON through the C ABI (no Python-side checks)."""
    from vox._native import ffi, lib
    from vox.engine import _check as check

    p = ffi.new("vox_synth_params *", lib.vox_synth_default_params(eng._h, voice._h))
    keep = ffi.new("char[]", js.encode())
    p.options = keep
    out = ffi.new("vox_session **")
    check(lib.vox_session_create(eng._h, voice._h, p, out))
    lib.vox_session_free(out[0])


# ------------------------------------------------------------------------------------ the benchmark
def test_bench_sides(fx, tmods):
    """`vox bench` on an F5-TTS model runs vox and the official infer_process side by side (each in its
    own process) on the same recording, text and NFE: the same frames and audio length on both sides.
    Speed itself is not asserted (benchmarks, not timed tests)."""
    r = subprocess.run([sys.executable, "-m", "vox.cli.main", "bench", "--model", str(tmods("v1")), "--official",
                        str(fx["v1"].root), "--nfe", "1", "--threads", "2", "--json"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads(r.stdout)
    assert [x["side"] for x in rows] == ["vox", "official"]
    assert rows[0]["frames"] == rows[1]["frames"] > 0 and rows[0]["pieces"] == rows[1]["pieces"] == 1
    for x in rows:
        assert x["nfe"] == 1 and x["threads"] == 2 and abs(x["audio_s"] - rows[1]["audio_s"]) < 1e-9
        assert x["step_s"] > 0 and x["rtf"] > 0 and x["peak_rss_mb"] > 50
