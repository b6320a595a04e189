"""F5-TTS on the aarch64 kernel paths against the official f5-tts / vocos code and the numpy reference,
with the x86 checks' tolerance rows (the rows of test_f5_native, backend "cpu aarch64 <path>").

The library is cross-built for aarch64 and runs under qemu-aarch64 through core/tests/tool_run.c
(conformance/qemu_aarch64.py); the official code, the reference and the comparison run here. Emulated
code is slow, so this is a representative subset on the tiny v1 and v0 models of fixtures/f5_tiny.py:

- f32 weights on the neon baseline (a Cortex-A53; the float kernels are the same code on every aarch64
  path): the DiT's two guidance branches (v1 and v0), Vocos, the whole CFM loop (EPSS 7) and a session
  end to end (v1 one piece; v0 EPSS with Chinese text, the tokenizer's pinyin on an unsigned-char ABI).
- Each reduced-precision product the aarch64 paths choose for F5, end to end against the reference on
  the same rounded weights: bf16 weights as f32 products (neon) and as bfdot with x rounded to bf16
  (neon-i8mm-bf16); q8 weights through vx_linear (neon), on the sdot GEMM tiles with the f32 attention
  (neon-dotprod), and on the usdot tiles with q8 attention scores, bf16 values and bf16 input
  convolutions (neon-i8mm-bf16).
- 1 vs 2 threads give the same bits on the widest path (q8, three pieces).

The kernel-level checks of every aarch64 path are the C tests of scripts/test-aarch64.sh."""

from __future__ import annotations

import json

import numpy as np
import pytest

import vox
from vox.reference.f5 import cfm as ref_cfm
from vox.reference.f5 import dit as ref_dit
from vox.reference.f5 import noise, pipeline
from vox.verify.f5 import runner
from vox.verify.tolerance import Row, measure

import qemu_aarch64 as qa
from f5_fixtures import SCENARIOS, fx, models, off, ref_clip, text_data  # noqa: F401 (fixtures)
from test_f5_native import MULTI, engines, ids_of, tmods, voices  # noqa: F401 (fixtures; voices: the clip as
# recorded, cloned by the x86 engine: the emulated program loads the saved .tvoice)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")


@pytest.fixture(scope="session")
def tool():
    return qa.build()


def backend(path: str) -> str:
    return f"cpu aarch64 {path}"


def emulated(tool, host, path: str, threads: int = 1) -> qa.Aarch64Engine:
    """The host engine's model on the emulated CPU of `path` (VOX_CPU forces the narrower max paths)."""
    cpu = qa.CPUS.get(path, "max")
    return qa.Aarch64Engine(tool, host, cpu, vox_cpu=None if path in qa.CPUS else path, threads=threads)


def session_audio(q: qa.Aarch64Engine, host, voice, text: str, seed: int, **kw) -> tuple[np.ndarray, dict]:
    """(audio, the emulated engine's info) of one whole session on the emulated library."""
    s = host.session(voice, seed=seed, **kw)
    try:
        s.feed(text)
        s.end()
        out = q.session_run(s, "@session", taps="pieces")
    finally:
        s.close()
    return out["audio"].reshape(-1), out


# ----------------------------------------------------------------------------- f32 weights, stage by stage
@pytest.mark.parametrize("variant", ["v1", "v0"])
def test_dit_branches(variant, tool, models, engines, record):
    """One DiT evaluation of both guidance branches (the "dit" entry) vs DiT.forward(cfg_infer=True) and
    the reference (test_f5_native's inputs, one t)."""
    path = "neon"
    cfm, _, model = models[variant]
    w, c = model.weights, model.config.dit
    q = emulated(tool, engines(variant), path)
    rng = np.random.RandomState(3)
    n, t = 240, 0.37214
    ids = rng.randint(0, c.text_num_embeds, 90).astype(np.int32)
    x = rng.randn(n, 100).astype(np.float32)
    cond = rng.randn(n, 100).astype(np.float32)
    cond[120:] = 0
    got = q.run("dit", inputs={"x": x, "cond": cond, "ids": ids, "t": np.float32(t)})
    assert q.info["cpu"] == path, q.info["cpu"]
    oc, ou = runner.official_dit(cfm, x, cond, ids, t)
    rc = ref_dit.dit(x, cond, ref_dit.text_embedding(ids, n, w, c), np.float32(t), w, c)
    ru = ref_dit.dit(x, cond, ref_dit.text_embedding(ids, n, w, c, drop_text=True), np.float32(t), w, c,
                     drop_audio_cond=True)
    b = backend(path)
    record([measure("f5.native.dit_cond", got["flow_cond"], oc, f"{variant}, t={t}", backend=b),
            measure("f5.native.dit_uncond", got["flow_uncond"], ou, f"{variant}, t={t}", backend=b),
            measure("f5.native.dit_vs_reference", got["flow_cond"], rc, f"{variant} cond, t={t}", backend=b),
            measure("f5.native.dit_vs_reference", got["flow_uncond"], ru, f"{variant} uncond, t={t}", backend=b)])


def test_vocos_and_cfm_loop(tool, models, engines, ref_clip, record):
    """Vocos on the clip's official mel, and the whole sampling loop of one piece (EPSS 7 steps with
    sway, CFG 2, the Philox x0) vs the reference and the official CFM.sample."""
    path = "neon"
    cfm, voc, model = models["v1"]
    q = emulated(tool, engines("v1"), path)
    mel = runner.official_mel(cfm, ref_clip[2][0])
    audio = q.run("vocos", inputs={"mel": mel.T.copy()})["audio"]
    assert q.info["cpu"] == path, q.info["cpu"]
    official = runner.official_vocos(voc, mel)
    assert audio.shape == official.shape
    b = backend(path)
    rows = [measure("f5.native.vocos", audio, official, f"center padding, {mel.shape[1]} frames", backend=b)]
    cond = mel.T.copy()
    ids = ids_of(model, ref_clip[1] + " Hello there, tiny model.")
    dur = cond.shape[0] + 60
    got = q.run("sample", inputs={"cond": cond, "ids": ids, "duration": dur, "nfe_step": 7,
                                  "cfg_strength": np.float32(2.0), "sway_sampling_coef": np.float32(-1.0),
                                  "use_epss": 1, "seed": 5, "piece": 0}, taps="x0,mel")
    assert np.array_equal(got["x0"], noise.initial_noise(5, 0, dur))
    ref = ref_cfm.sample(cond, ids, dur, lambda d: noise.initial_noise(5, 0, d), model.weights, model.config.dit,
                         steps=7, cfg_strength=2.0, sway_sampling_coef=-1.0, use_epss=True).mel
    official = runner.official_sample(cfm, cond, ids, dur, seed=5, steps=7, cfg_strength=2.0, sway=-1.0, use_epss=True)
    subject = f"v1, 7 steps, EPSS True, {dur} frames"
    rows += [measure("f5.native.cfm_loop_vs_reference", got["mel"], ref, subject, backend=b),
             measure("f5.native.cfm_loop", got["mel"], official, subject, backend=b)]
    record(rows)


@pytest.mark.parametrize("variant,scenario", [("v1", "one piece"), ("v0", "EPSS + Chinese")])
def test_end_to_end(variant, scenario, tool, off, models, engines, voices, ref_clip, record):
    """A session of a native clone of the clip vs the official preprocess_ref_audio_text +
    infer_process (the same Philox noise) and the reference pipeline: the pieces' frames and the audio."""
    path = "neon"
    cfm, voc, model = models[variant]
    wav, text, audio, sr, _ = ref_clip
    gen, kw = SCENARIOS[scenario]
    host = engines(variant)
    q = emulated(tool, host, path)
    ours, out = session_audio(q, host, voices(host), gen, 11, **kw)
    assert q.info["cpu"] == path, q.info["cpu"]
    official, _, _, draws = off.infer(wav, text, gen, cfm, voc, seed=11, **kw)
    ref = pipeline.synthesize(model, audio, sr, text, gen, seed=11, **kw)
    pieces = json.loads(out["pieces"].tobytes().decode("utf-8"))
    frames = [(i, p["frames"]) for i, p in enumerate(pieces)]
    assert ours.shape == official.shape, (ours.shape, official.shape)
    subject = f"{variant} {scenario} ({len(official) / 24000:.1f} s)"
    b = backend(path)
    record([Row("f5.native.piece_frames", f"{variant} {scenario}: {len(frames)} pieces", float(frames == draws),
                backend=b),
            Row("f5.native.piece_frames", f"{variant} {scenario}: piece texts vs the reference",
                float([p["text"] for p in pieces] == [p.text for p in ref.pieces]), backend=b),
            measure("f5.native.audio", ours, official, subject, backend=b),
            measure("f5.native.audio_vs_reference", ours, ref.audio, subject, backend=b)])


# ----------------------------------------------------------------------------- reduced precision
# (path, dtype, quant, what the engine must have chosen: the start of its dit_math and of its conv_math,
# the row's label)
REDUCED = [
    ("neon", "bf16", "none", "f32 products of the bf16 weights", "the stored weights' products", "f32 products"),
    ("neon-i8mm-bf16", "bf16", "none", "bf16 dot products", "the stored weights' products", "bfdot"),
    ("neon", "f32", "q8", "q8 products of vx_linear", "the stored weights' products", "vx_linear"),
    ("neon-dotprod", "f32", "q8", "q8 products on int8 GEMM tiles (NEON sdot", "the stored weights' products",
     "sdot tiles, f32 attention"),
    ("neon-i8mm-bf16", "f32", "q8", "q8 products on int8 GEMM tiles (NEON I8MM usdot", "bf16 dot products",
     "usdot tiles, q8 scores, bf16 values and input convolutions"),
]


@pytest.mark.parametrize("path,dtype,quant,math,conv,label", REDUCED, ids=[f"{r[0]}-{r[2] if r[2] != 'none' else r[1]}"
                                                                     for r in REDUCED])
def test_reduced_precision(path, dtype, quant, math, conv, label, tool, engines, voices, tmods, ref_clip, record):
    """A reduced-precision .tmod end to end vs the reference on the same rounded weights, each product
    the aarch64 paths choose (the rows of test_f5_native.test_reduced_precision)."""
    from vox.families.f5 import convert as f5

    wav, text, audio, sr, _ = ref_clip
    gen, kw = SCENARIOS["one piece"]
    host = engines("v1", dtype, quant)
    q = emulated(tool, host, path)
    ours, _ = session_audio(q, host, voices(host), gen, 3, **kw)
    info = q.info
    assert info["cpu"] == path, info["cpu"]
    assert info["dit_math"].startswith(math), info["dit_math"]
    assert info["conv_math"].startswith(conv), info["conv_math"]
    q8_scores = "the attention's scores as q8 products" in info["dit_math"]
    assert q8_scores == (path == "neon-i8mm-bf16" and quant == "q8"), info["dit_math"]
    ref = pipeline.synthesize(f5.read_tmod(tmods("v1", dtype, quant)), audio, sr, text, gen, seed=3, **kw).audio
    if quant == "q8":
        row = "f5.native.q8_vs_reference"
    else:
        row = "f5.native.bf16dot_vs_reference" if math.startswith("bf16 dot") else "f5.native.bf16_vs_reference"
    record(measure(row, ours, ref, f"v1 {'q8' if quant == 'q8' else dtype}, audio ({path}: {label})",
                   backend=backend(path)))


def test_same_bits_for_one_and_two_threads(tool, engines, voices, record):
    """Same seed => the same bits on 1 and 2 threads, on the widest path with q8 weights (the usdot
    tiles, the q8 scores and bf16 attention, bf16 convolutions), three pieces, 2 steps each."""
    path = "neon-i8mm-bf16"
    host = engines("v1", "f32", "q8")
    runs = [session_audio(emulated(tool, host, path, threads=n), host, voices(host), MULTI, 7, nfe_step=2,
                          max_chars=40)[0] for n in (2, 1)]
    record(Row("f5.native.threads_bitwise", "v1 q8, 3 pieces, seed 7: 1 vs 2 threads",
               float(runs[0].shape == runs[1].shape and np.array_equal(runs[0], runs[1])), backend=backend(path)))
