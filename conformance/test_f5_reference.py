"""The numpy F5-TTS reference (reference/f5) against the official f5-tts 1.1.22 / vocos 0.1.0 code.

On tiny random-weight models built by the official classes (fixtures/f5_tiny.py, v1 and v0 layouts),
with the real vocabulary and mel layout: the text frontend (segmentation, pinyin, symbols and ids),
the sample mel, the text encoder, the DiT's two guidance branches, the time grid, Vocos, the whole
CFM loop and the audio end to end through infer_process, with the initial noise injected into the
official sampler (verify/f5/official.philox_noise) so both sides integrate the same x0. Then the
reference recording's preprocessing (pydub's silence clipping/trimming) and resampling, and the
converter: .tmod (f32) == checkpoint, f16 / bf16 / q8 against f32.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from vox.reference.f5 import cfm as ref_cfm
from vox.reference.f5 import dit as ref_dit
from vox.reference.f5 import mel as ref_mel
from vox.reference.f5 import noise, pipeline, refaudio, resample, vocos
from vox.verify.f5 import runner
from vox.verify.tolerance import Row, measure

from f5_fixtures import AUDIO, REF_TEXT, SCENARIOS, fx, models, off, ref_clip, text_data  # noqa: F401 (fixtures)


# ------------------------------------------------------------------------------------ text frontend
def test_tokenizer_matches_official(models, text_data, record):
    """Symbols and ids of convert_char_to_pinyin + list_str_to_idx: English, Chinese (words, tones,
    sandhi), mixed; and 300 random strings over the dictionaries (segmenter HMM, phrase matching)."""
    from f5_tts.model.utils import convert_char_to_pinyin

    cfm = models["v1"][0]
    tok = models["v1"][2].tokenizer
    for name, texts in (("English", runner.ENGLISH), ("Chinese", runner.CHINESE), ("mixed", runner.MIXED)):
        ours = [tok.symbols_of(t) for t in texts]
        theirs = [convert_char_to_pinyin([t])[0] for t in texts]
        ids_ours = [tok.encode(t) for t in texts]
        ids_theirs = [[cfm.vocab_char_map.get(c, 0) for c in s] for s in theirs]
        record([Row("f5.tokens", f"{name}: {len(texts)} texts, symbols", float(np.mean([a == b for a, b in zip(ours, theirs)]))),
                Row("f5.tokens", f"{name}: ids", float(np.mean([a == b for a, b in zip(ids_ours, ids_theirs)])))])
    assert tok.symbols_of("你好")[:4] == [" ", "ni2", " ", "hao3"]  # third-tone sandhi inside the word
    corpus = runner.random_texts(list(text_data.jieba_freqs), list(text_data.pinyin.phrases), 300)
    same = [tok.symbols_of(t) == convert_char_to_pinyin([t])[0] for t in corpus]
    record(Row("f5.tokens", "300 random dictionary strings, symbols", float(np.mean(same))))


def test_segmentation_matches_rjieba(models):
    import rjieba

    seg = models["v1"][2].tokenizer.seg
    texts = [*runner.CHINESE, *runner.MIXED, "小明硕士毕业于中国科学院计算所", "hello world-abc A1_x a..b 12.5% x+y\r\n"]
    assert [seg.cut(t) for t in texts] == [rjieba.cut(t) for t in texts]


def test_pinyin_tone3_and_sandhi_equal_pypinyin(text_data, record):
    """Every reading in the data, in TONE3 form, and each sandhi edit of its tone digit (3 -> 2, 4 -> 2,
    digit -> 4, digit -> 1) equal pypinyin's tone-mark round trip (tone_to_tone2, edit, tone2_to_tone,
    TONE3 style)."""
    import json
    import re
    from importlib.resources import files

    from pypinyin import Style
    from pypinyin.contrib.tone_convert import tone2_to_tone, tone_to_tone2
    from pypinyin.style import convert as convert_style

    from vox.reference.f5.pinyin import to_tone3

    base = files("pypinyin")
    readings = {v.split(",")[0] for v in json.loads(base.joinpath("pinyin_dict.json").read_text("utf-8")).values()}
    for v in json.loads(base.joinpath("phrases_dict.json").read_text("utf-8")).values():
        readings.update(r[0] for r in v)
    edits = [lambda s: s.replace("3", "2"), lambda s: s.replace("4", "2"), lambda s: re.sub(r"\d", "4", s),
             lambda s: re.sub(r"\d", "1", s)]
    ok = n = 0
    for r in sorted(readings):
        official = [convert_style(r, Style.TONE3, True, default=r)] + [
            convert_style(tone2_to_tone(e(tone_to_tone2(r))), Style.TONE3, True, default=r) for e in edits]
        ours = [to_tone3(r)] + [e(to_tone3(r)) for e in edits]
        ok += sum(a == b for a, b in zip(ours, official))
        n += len(ours)
    record(Row("f5.pinyin_tone3", f"{len(readings)} readings x (TONE3 + 4 sandhi edits)", ok / n))
    assert text_data.pinyin.chars["你"] == "ni3" and text_data.pinyin.chars["绿"] == "lv4"


def test_vocab_parsing_is_crlf_safe(fx, tmp_path):
    from f5_tts.model.utils import get_tokenizer

    from vox.reference.f5.tokenizer import parse_vocab

    raw = fx["v1"].vocab.read_bytes()
    crlf = tmp_path / "vocab_crlf.txt"
    crlf.write_bytes(raw.replace(b"\n", b"\r\n"))
    official, _ = get_tokenizer(str(crlf), "custom")
    assert parse_vocab(crlf.read_bytes()) == parse_vocab(raw) == list(official)
    (tmp_path / "noeol.txt").write_bytes(b" \na\nbc")  # the official reader drops the last line's last character
    assert parse_vocab((tmp_path / "noeol.txt").read_bytes()) == list(get_tokenizer(str(tmp_path / "noeol.txt"), "custom")[0])
    with pytest.raises(ValueError, match="twice"):
        parse_vocab(b" \na\na\n")


# ------------------------------------------------------------------------------------ model stages
def test_sample_mel(models, ref_clip, record):
    import torchaudio

    cfm = models["v1"][0]
    audio = ref_clip[2][0]
    official = runner.official_mel(cfm, audio)
    fb = torchaudio.functional.melscale_fbanks(513, 0.0, 12000.0, 100, 24000).numpy().T
    ours = ref_mel.log_mel(audio)
    subject = f"{audio.size / 24000:.2f} s speech"
    record([measure("f5.mel_filterbank", ref_mel.mel_filterbank(), fb, "HTK 100 x 513"),
            measure("f5.sample_mel", np.exp(ours), np.exp(official), subject + ", linear"),
            measure("f5.sample_log_mel", ours, official, subject)])


@pytest.mark.parametrize("variant", ["v1", "v0"])
def test_text_encoder_and_dit_branches(models, variant, record):
    cfm, _, model = models[variant]
    w, c = model.weights, model.config.dit
    rng = np.random.RandomState(3)
    n = 240
    ids = rng.randint(0, c.text_num_embeds, 90)
    rows = []
    for drop in (False, True):
        rows.append(measure("f5.text_encoder", ref_dit.text_embedding(ids, n, w, c, drop_text=drop),
                            runner.official_text_embedding(cfm, ids, n, drop), f"{variant}, {'uncond' if drop else 'cond'}"))
    x = rng.randn(n, 100).astype(np.float32)
    cond = rng.randn(n, 100).astype(np.float32)
    cond[120:] = 0
    te = ref_dit.text_embedding(ids, n, w, c), ref_dit.text_embedding(ids, n, w, c, drop_text=True)
    for t in (0.0, 0.37214, 0.98):
        oc, ou = runner.official_dit(cfm, x, cond, ids, t)
        rows += [measure("f5.dit_cond", ref_dit.dit(x, cond, te[0], np.float32(t), w, c), oc, f"{variant}, t={t}"),
                 measure("f5.dit_uncond", ref_dit.dit(x, cond, te[1], np.float32(t), w, c, drop_audio_cond=True), ou,
                         f"{variant}, t={t}"),
                 measure("f5.time_embedding", ref_dit.time_embedding(np.float32(t), w),
                         runner.official_time_embedding(cfm, t), f"t={t}")]
    record(rows)


def test_time_grid(record):
    import torch
    from f5_tts.model.utils import get_epss_timesteps

    worst = 0.0
    for n in (4, 7, 8, 9, 13, 16, 32, 50):
        for epss in (True, False):
            for sway in (-1.0, None, 0.5):
                t = get_epss_timesteps(n, "cpu", torch.float32) if epss else torch.linspace(0, 1, n + 1)
                if sway is not None:
                    t = t + sway * (torch.cos(torch.pi / 2 * t) - 1 + t)
                worst = max(worst, float(np.abs(ref_cfm.timesteps(n, sway, epss) - t.numpy()).max()))
    record(Row("f5.timesteps", "nfe 4..50, EPSS on/off, sway -1 / none / 0.5", worst))


def test_vocos(models, ref_clip, record):
    cfm, voc, model = models["v1"]
    mel = runner.official_mel(cfm, ref_clip[2][0])
    record(measure("f5.vocos", vocos.decode(mel, model.weights, model.config.vocos), runner.official_vocos(voc, mel),
                   f"center padding, {mel.shape[1]} frames"))


def test_istft_same_padding(off, record):
    import torch
    from vocos.spectral_ops import ISTFT

    rng = np.random.RandomState(5)
    mag = np.exp(rng.randn(513, 60).astype(np.float32) * 0.5).astype(np.float32)
    ph = rng.uniform(-3, 3, (513, 60)).astype(np.float32)
    s = torch.from_numpy(mag) * (torch.cos(torch.from_numpy(ph)) + 1j * torch.sin(torch.from_numpy(ph)))
    official = ISTFT(1024, 256, 1024, padding="same")(s[None])[0].numpy()
    ours = vocos.istft(mag, ph, 1024, 256, "same")
    assert ours.shape == official.shape == (256 * 60,)
    record(measure("f5.istft_same", ours, official, "60 frames"))


@pytest.mark.parametrize("variant", ["v1", "v0"])
def test_cfm_loop(models, ref_clip, variant, record):
    """The whole sampling loop (EPSS 7 steps with sway, and 8 linspace steps; CFG 2), same x0."""
    cfm, _, model = models[variant]
    cond = runner.official_mel(cfm, ref_clip[2][0]).T.copy()
    ids = model.tokenizer.encode(ref_clip[1] + " Hello there, tiny model.")
    rows = []
    for steps, epss in ((7, True), (8, False)):
        dur = cond.shape[0] + 60
        official = runner.official_sample(cfm, cond, ids, dur, seed=5, steps=steps, cfg_strength=2.0, sway=-1.0,
                                          use_epss=epss)
        ours = ref_cfm.sample(cond, np.array(ids), dur, lambda d: noise.initial_noise(5, 0, d), model.weights,
                              model.config.dit, steps=steps, cfg_strength=2.0, sway_sampling_coef=-1.0, use_epss=epss)
        rows.append(measure("f5.cfm_loop", ours.mel, official, f"{variant}, {steps} steps, EPSS {epss}, {dur} frames"))
    record(rows)


# ------------------------------------------------------------------------------------ end to end
@pytest.mark.parametrize("variant", ["v1", "v0"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_end_to_end(off, models, ref_clip, variant, scenario, record):
    cfm, voc, model = models[variant]
    wav, text, audio, sr, _ = ref_clip
    gen, kw = SCENARIOS[scenario]
    official, osr, spec, draws = off.infer(wav, text, gen, cfm, voc, seed=11, **kw)
    ours = pipeline.synthesize(model, audio, sr, text, gen, seed=11, **kw)
    assert osr == ours.sample_rate == 24000
    frames = [(i, p.total_frames) for i, p in enumerate(ours.pieces)]
    record([Row("f5.piece_frames", f"{variant} {scenario}: {len(frames)} pieces", float(frames == draws)),
            measure("f5.audio", ours.audio, official, f"{variant} {scenario} ({len(official) / 24000:.1f} s)"),
            measure("f5.generated_mel", ours.spectrogram, spec, f"{variant} {scenario}")])
    if scenario == "pieces + cross-fade":
        assert len(frames) > 1


def test_chunking(off, text_data, record):
    U = off.utils_infer()
    corpus = runner.random_texts(list(text_data.jieba_freqs), list(text_data.pinyin.phrases), 150, seed=7)
    corpus = [" ".join(corpus[i:i + 4]) + ". And then, one more; sentence! Ok? Done." for i in range(0, 150, 4)]
    same = [pipeline.chunk_text(t, m) == U.chunk_text(t, m) for t in corpus for m in (20, 60, 135, 300)]
    record(Row("f5.chunks", f"{len(same)} chunk_text calls", float(np.mean(same))))


def test_philox_noise_layout():
    """x0[n, c] of piece p is Box-Muller on Philox4x32-10 at counter (n, c, 4, p), key = the seed."""
    from vox.reference.common.philox import philox4x32_10, seed_key

    seed = 0x123456789
    x = noise.initial_noise(seed, 3, 50)
    r = philox4x32_10(np.array([17, 42, 4, 3], np.uint64), seed_key(seed))
    u1 = 1 - ((int(r[0]) >> 5) * 67108864 + (int(r[1]) >> 6)) / 2.0 ** 53
    u2 = ((int(r[2]) >> 5) * 67108864 + (int(r[3]) >> 6)) / 2.0 ** 53
    assert x[17, 42] == np.float32(np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2))
    assert np.array_equal(noise.initial_noise(seed, 3, 20), x[:20])  # position-keyed, not a stream
    big = noise.initial_noise(seed, 0, 800)
    assert abs(big.mean()) < 0.01 and abs(big.std() - 1) < 0.01
    assert not np.array_equal(noise.initial_noise(seed, 1, 20), x[:20]) and not np.array_equal(
        noise.initial_noise(seed + 1, 3, 20), x[:20])


# ------------------------------------------------------------------------------------ the reference audio
def _preprocess_cases(tmp_path):
    rng = np.random.RandomState(0)
    long, sr = sf.read(AUDIO / "ref_long_24k.wav", dtype="int16")
    x24, _ = sf.read(AUDIO / "ref_en_24k.wav", dtype="int16")
    cases = {"24 kHz": AUDIO / "ref_en_24k.wav", "44.1 kHz": AUDIO / "ref_en_44k.wav",
             "34 s, clipped at a 1 s silence": AUDIO / "ref_long_24k.wav"}
    made = {"34 s with a noise floor, clipped at a short pause": (long + rng.randint(-300, 300, long.size)).astype(np.int16),
            "34 s of loud noise, cut at 12 s": (long // 2 + rng.randint(-3000, 3000, long.size)).astype(np.int16),
            "silence": np.zeros(3 * 24000, np.int16), "stereo": np.stack([x24, x24[::-1] // 2], 1)}
    for name, a in made.items():
        p = tmp_path / f"{len(cases)}.wav"
        sf.write(p, a, 24000, subtype="PCM_16")
        cases[name] = p
    return cases


def test_reference_preprocessing_matches_pydub(off, tmp_path, record):
    rows = []
    for name, path in _preprocess_cases(tmp_path).items():
        wav, _ = off.preprocess_ref(path, REF_TEXT)
        official, osr = sf.read(wav, dtype="int16", always_2d=True)
        a, r = sf.read(path, dtype="int16")
        seg = refaudio.preprocess(a, r)
        same = seg.rate == osr and seg.frames.shape == official.shape and bool(np.array_equal(seg.frames, official))
        rows.append(Row("f5.ref_preprocess", f"{name} ({official.shape[0] / osr:.2f} s kept)", float(same)))
    record(rows)
    assert refaudio.fix_ref_text("Hello") == "Hello. " and refaudio.fix_ref_text("Hi.") == "Hi. "
    assert refaudio.fix_ref_text("你好。") == "你好。"
    with pytest.raises(ValueError, match="transcript"):
        refaudio.fix_ref_text("  ")
    with pytest.raises(ValueError, match="16-bit"):
        refaudio.preprocess(np.zeros(100, np.float32), 24000)


def test_resampling_matches_torchaudio(off, record):
    import torch
    import torchaudio

    rows = []
    for name in ("ref_en_16k.wav", "ref_en_44k.wav"):
        x, sr = sf.read(AUDIO / name, dtype="float32")
        x = x[: 2 * sr]
        official = torchaudio.transforms.Resample(sr, 24000)(torch.from_numpy(x)[None])[0].numpy()
        rows.append(measure("f5.resample", resample.resample(x, sr), official, f"{sr} Hz -> 24 kHz"))
    record(rows)


# ------------------------------------------------------------------------------------ the converter
@pytest.fixture(scope="module")
def converted(fx, text_data, tmp_path_factory):
    from vox.families.f5 import convert as f5

    d = tmp_path_factory.mktemp("f5tmod")
    out = {}
    for key in (("v1", "f32", "none"), ("v0", "f32", "none"), ("v1", "f16", "none"), ("v1", "bf16", "none"),
                ("v1", "f32", "q8")):
        v, dt, q = key
        out[key] = d / f"{v}-{dt}-{q}.tmod"
        f5.convert(fx[v].safetensors, fx[v].vocab, fx[v].vocos, out[key], dtype=dt, quant=q, text_data=text_data)
    return out


@pytest.fixture(scope="module")
def f32_audio(models, ref_clip):
    wav, text, audio, sr, _ = ref_clip
    gen, kw = SCENARIOS["one piece"]
    return pipeline.synthesize(models["v1"][2], audio, sr, text, gen, seed=3, **kw).audio


def test_converter_f32_is_the_checkpoint(fx, models, converted, ref_clip, f32_audio, record):
    """Reference from the .tmod == reference from the official checkpoint (weights, config, frontend data,
    audio), for both variants; the .pt checkpoint's EMA weights are the .safetensors ones."""
    from vox.families.f5 import convert as f5

    wav, text, audio, sr, _ = ref_clip
    gen, kw = SCENARIOS["one piece"]
    rows = []
    for v in ("v1", "v0"):
        m_ck = models[v][2]
        m_tm = f5.read_tmod(converted[(v, "f32", "none")])
        assert m_tm.config == m_ck.config and m_tm.config.variant == v
        assert set(m_tm.weights) == set(m_ck.weights)
        assert all(np.array_equal(m_tm.weights[k], m_ck.weights[k]) for k in m_ck.weights)
        t, u = m_tm.text, m_ck.text
        assert (t.vocab, t.jieba_freqs, t.hmm, t.pinyin.chars, t.pinyin.phrases) == (
            u.vocab, u.jieba_freqs, u.hmm, u.pinyin.chars, u.pinyin.phrases)
        if v == "v1":
            pt = f5.read_weights(fx[v].pt)
            assert all(np.array_equal(pt[k], m_ck.weights[k]) for k in pt) and len(pt) + len(
                [k for k in m_ck.weights if k.startswith("vocos.")]) == len(m_ck.weights)  # equal weights, config and data make the rest identical arithmetic; once end to end
            a = pipeline.synthesize(m_tm, audio, sr, text, gen, seed=3, **kw).audio
            rows.append(measure("f5.convert_f32", a, f32_audio, f"{v}: audio from the .tmod vs the checkpoint"))
    record(rows)


@pytest.mark.parametrize("dtype,quant", [("f16", "none"), ("bf16", "none"), ("f32", "q8")])
def test_converter_reduced_precision(converted, ref_clip, f32_audio, dtype, quant, record):
    from vox.families.f5 import convert as f5

    wav, text, audio, sr, _ = ref_clip
    gen, kw = SCENARIOS["one piece"]
    m = f5.read_tmod(converted[("v1", dtype, quant)])
    assert m.extra["precision"]["dtype"] == dtype and m.extra["precision"]["quant"] == quant
    kinds = set(m.extra["dtypes"].values())
    assert (quant == "q8") == ("q8" in kinds) and (dtype in kinds)
    ours = pipeline.synthesize(m, audio, sr, text, gen, seed=3, **kw).audio
    f32 = f32_audio
    key = "f5.convert_q8" if quant == "q8" else f"f5.convert_{dtype}"
    record(measure(key, ours, f32, f"v1 {dtype}{'+q8' if quant == 'q8' else ''} vs f32 weights, audio"))


def test_converter_variant_guess_and_errors(fx, text_data, tmp_path):
    from vox.families.f5 import convert as f5
    from vox.errors import FormatError

    assert f5.guess_variant(fx["v0"].safetensors) == "v0" and f5.guess_variant(fx["v1"].safetensors) == "v1"
    assert f5.guess_variant("ckpts/F5TTS_Small/model.pt") == "v0" and f5.guess_variant("x/F5TTS_v1_Small/m.pt") == "v1"
    m = f5.read_checkpoint(fx["v0"].safetensors, fx["v0"].vocab, fx["v0"].vocos, variant="v1", text_data=text_data)
    assert m.config.dit.text_mask_padding and m.config.dit.pe_attn_head is None
    m = f5.read_checkpoint(fx["v1"].safetensors, fx["v1"].vocab, fx["v1"].vocos, pe_attn_head=1, text_data=text_data)
    assert m.config.variant == "v1" and m.config.dit.pe_attn_head == 1
    with pytest.raises(ValueError, match="unknown F5-TTS variant"):
        f5.read_checkpoint(fx["v1"].safetensors, fx["v1"].vocab, fx["v1"].vocos, variant="v2", text_data=text_data)
    with pytest.raises(ValueError, match="unknown dtype"):
        f5.convert(fx["v1"].safetensors, fx["v1"].vocab, fx["v1"].vocos, tmp_path / "x.tmod", dtype="f8",
                   text_data=text_data)
    short = tmp_path / "vocab.txt"
    short.write_bytes(b"".join(s.encode() + b"\n" for s in text_data.vocab[:100]))
    with pytest.raises((FormatError, ValueError)):
        f5.convert(fx["v1"].safetensors, short, fx["v1"].vocos, tmp_path / "y.tmod", text_data=text_data)
    with pytest.raises(FormatError, match="a .safetensors or .pt file"):
        f5.read_weights(fx["v1"].vocos / "pytorch_model.bin")
    vocos_as_pt = tmp_path / "vocos.pt"
    vocos_as_pt.write_bytes((fx["v1"].vocos / "pytorch_model.bin").read_bytes())
    with pytest.raises(FormatError, match="ema_model_state_dict"):
        f5.read_weights(vocos_as_pt)
    trunc = tmp_path / "trunc.safetensors"
    trunc.write_bytes(fx["v1"].safetensors.read_bytes()[:1000])
    with pytest.raises(FormatError):
        f5.read_weights(trunc)
    assert not (tmp_path / "x.tmod").exists() and not (tmp_path / "y.tmod").exists()
