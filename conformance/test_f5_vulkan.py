"""F5-TTS on the Vulkan device (core/src/f5/gpu_*.c): the DiT evaluation of both guidance branches (time
embedding, input embedding, flows), the whole CFM loop (EPSS 7 steps, CFG 2, sway -1), Vocos and the
end-to-end audio of a cloned voice, each against the native CPU path on the same .tmod and against the
numpy reference (vox.reference.f5, itself proven against f5-tts 1.1.22 / vocos 0.1.0 in
test_f5_reference.py), on the tiny fixtures (fixtures/f5_tiny.py, v1 and v0 layouts, f32); the same seed
gives the same audio on a device however the text is fed; the start-up line says what runs where.
The bf16 model NVIDIA GPUs run fast (the v1 layout with 64-wide heads, fixture "v1h64") against the
reference on the same bf16 weights: where the device has cooperative matrices its attention runs in
float16 (the vulkan.f5_f16_* rows), elsewhere (lavapipe) in float32 (the float32 rows).

Skips only without any Vulkan device, and fails instead under VOX_REQUIRE_VULKAN=1 (CI: lavapipe).
On a machine without the official packages, VOX_F5_TMODS=DIR takes the .tmods from DIR ({v1,v0}.tmod,
v1h64-bf16.tmod, as this module converts them: `python conformance/test_f5_vulkan.py DIR` writes them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import vox
from test_vulkan import _gpu_index
from vox.reference.f5 import cfm as ref_cfm
from vox.reference.f5 import dit as ref_dit
from vox.reference.f5 import noise, pipeline, refaudio
from vox.reference.f5 import vocos as ref_vocos
from vox.verify.tolerance import measure

AUDIO = Path(__file__).resolve().parent.parent / "fixtures" / "audio"
REF_TEXT = "The quick brown fox jumps over the lazy dog."
GEN_TEXT = "Hello there, this runs on the device. A second sentence follows it!"


# name -> (fixture variant, dtype) of the .tmods this module runs
TMODS = {"v1": ("v1", "f32"), "v0": ("v0", "f32"), "v1h64-bf16": ("v1h64", "bf16")}


def tmod(name: str, d: Path) -> Path:
    """The .tmod `name` (TMODS), converted from the tiny official checkpoint into d, or VOX_F5_TMODS/name.tmod."""
    pre = os.environ.get("VOX_F5_TMODS")
    if pre:
        return Path(pre) / f"{name}.tmod"
    from fixtures import f5_tiny
    from vox.families.f5 import convert as f5
    from vox.families.f5 import sources as f5_sources

    variant, dtype = TMODS[name]
    fx = f5_tiny.fixture(variant)
    path = d / f"{name}.tmod"
    f5.convert(fx.safetensors, fx.vocab, fx.vocos, path, dtype=dtype, quant="none",
               text_data=f5_sources.cached_frontend(fx.vocab.read_bytes()))
    return path


@pytest.fixture(scope="module")
def f5vk(tmp_path_factory):
    """{variant: (CPU engine, GPU engine, reference model)} on the f32 .tmod of each tiny fixture."""
    from vox.families.f5 import convert as f5

    idx = _gpu_index()
    d = tmp_path_factory.mktemp("f5vk")
    out = {}
    for v in ("v1", "v0"):
        path = tmod(v, d)
        out[v] = (vox.Engine(path, threads=1), vox.Engine(path, device=f"vulkan:{idx}", threads=1), f5.read_tmod(path), path)
    yield out
    for cpu, gpu, _, _ in out.values():
        cpu.close(), gpu.close()


def dit_case(model, rng, n: int = 150):
    """A DiT evaluation's inputs (n frames of x, a condition silent from frame 90, 60 text ids) and
    ref(t): the reference's flows of both branches at time t."""
    w, c = model.weights, model.config.dit
    ids = rng.randint(0, c.text_num_embeds, 60).astype(np.int32)
    x = rng.randn(n, 100).astype(np.float32)
    cond = rng.randn(n, 100).astype(np.float32)
    cond[90:] = 0
    te = ref_dit.text_embedding(ids, n, w, c), ref_dit.text_embedding(ids, n, w, c, drop_text=True)

    def ref(t):
        return (ref_dit.dit(x, cond, te[0], np.float32(t), w, c),
                ref_dit.dit(x, cond, te[1], np.float32(t), w, c, drop_audio_cond=True))

    return dict(x=x, cond=cond, ids=ids), ref


def sample_case(model, rng):
    """The sampling loop's inputs (EPSS 7 steps, CFG 2, sway -1, seed 5; a 70-frame reference, 130 frames)
    and the reference's result for them."""
    nc, dur = 70, 130
    cond = rng.randn(nc, 100).astype(np.float32)
    ids = np.array(model.tokenizer.encode(REF_TEXT + " Hello there, tiny model."), dtype=np.int32)
    inp = dict(cond=cond, ids=ids, duration=np.int32(dur), nfe_step=np.int32(7), cfg_strength=np.float32(2.0),
               sway_sampling_coef=np.float32(-1.0), use_epss=np.int32(1), seed=np.int32(5))
    ref = ref_cfm.sample(cond, ids, dur, lambda d: noise.initial_noise(5, 0, d), model.weights, model.config.dit,
                         steps=7, cfg_strength=2.0, sway_sampling_coef=-1.0, use_epss=True)
    return inp, ref


@pytest.mark.parametrize("variant", ["v1", "v0"])
def test_f5_vulkan_dit(f5vk, variant, record):
    """One DiT evaluation, both branches (the unconditional one without audio and text), at three times."""
    cpu, gpu, model, _ = f5vk[variant]
    base, ref = dit_case(model, np.random.RandomState(7))
    rows = []
    for t in (0.0, 0.37214, 0.98):
        inp = dict(base, t=np.float32(t))
        g, k = gpu.run("dit", inputs=inp), cpu.run("dit", inputs=inp)
        ref_c, ref_u = ref(t)
        s = f"{variant}, {len(base['x'])} frames, t={t}"
        rows += [measure("vulkan.f5_dit", g[name], k[name], f"{s}: {name}", backend="vulkan")
                 for name in ("time_embedding", "input_embed", "flow_cond", "flow_uncond")]
        rows += [measure("vulkan.f5_dit_reference", g["flow_cond"], ref_c, f"{s}: flow_cond", backend="vulkan"),
                 measure("vulkan.f5_dit_reference", g["flow_uncond"], ref_u, f"{s}: flow_uncond", backend="vulkan"),
                 measure("vulkan.f5_dit_reference", g["time_embedding"][0], ref_dit.time_embedding(np.float32(t), model.weights),
                         f"{s}: time_embedding", backend="vulkan")]
    record(rows)


@pytest.mark.parametrize("variant", ["v1", "v0"])
def test_f5_vulkan_cfm_loop(f5vk, variant, record):
    """The whole sampling loop on the device: EPSS 7 steps with sway and CFG 2; first-step flows, every
    state of the trajectory and the final mel (reference frames restored)."""
    cpu, gpu, model, _ = f5vk[variant]
    inp, ref = sample_case(model, np.random.RandomState(11))
    g, k = gpu.run("sample", inputs=inp), cpu.run("sample", inputs=inp)
    s = f"{variant}, EPSS 7 steps, {g['mel'].shape[0]} frames"
    assert g["trajectory"].shape == k["trajectory"].shape
    rows = [measure("vulkan.f5_cfm", g[name], k[name], f"{s}: {name}", backend="vulkan")
            for name in ("flow_cond", "flow_uncond", "trajectory", "mel")]
    rows.append(measure("vulkan.f5_cfm_reference", g["mel"], ref.mel, f"{s}: mel", backend="vulkan"))
    record(rows)


def test_f5_vulkan_vocos(f5vk, record):
    rows = []
    rng = np.random.RandomState(13)
    for variant in ("v1", "v0"):
        cpu, gpu, model, _ = f5vk[variant]
        mel = (rng.randn(90, 100) * 2 - 4).astype(np.float32)
        g, k = gpu.run("vocos", inputs=dict(mel=mel)), cpu.run("vocos", inputs=dict(mel=mel))
        s = f"{variant}, center padding, 90 frames"
        rows += [measure("vulkan.f5_vocos", g[name], k[name], f"{s}: {name}", backend="vulkan")
                 for name in ("vocos_features", "vocos_head", "audio")]
        rows.append(measure("vulkan.f5_vocos_reference", g["audio"], ref_vocos.decode(mel.T, model.weights,
                                                                                       model.config.vocos),
                            f"{s}: audio", backend="vulkan"))
    record(rows)


@pytest.fixture(scope="module")
def clip():
    x, sr = sf.read(AUDIO / "ref_en_24k.wav", dtype="int16")
    return x[: int(2.5 * sr)], sr


@pytest.mark.parametrize("variant", ["v1"])
def test_f5_vulkan_audio(f5vk, clip, variant, record):
    """A cloned voice end to end (EPSS 7; v1: the layouts differ only inside the DiT, tested above for
    both): GPU vs CPU engine and vs the reference pipeline; then the same seed with the text fed in small
    pieces gives the same samples."""
    cpu, gpu, model, _ = f5vk[variant]
    x, sr = clip
    kw = dict(nfe_step=7, use_epss=True)
    audio_f = (x.astype(np.float32) / 32768.0, sr)
    out = {}
    for name, eng in (("gpu", gpu), ("cpu", cpu)):
        voice = eng.clone_voice(audio_f, REF_TEXT)
        out[name] = eng.synthesize(GEN_TEXT, voice, seed=3, **kw)
    seg = refaudio.preprocess(x, sr)
    ref = pipeline.synthesize(model, (seg.frames[:, 0] / 32768.0).astype(np.float32)[None], seg.rate,
                              refaudio.fix_ref_text(REF_TEXT), GEN_TEXT, seed=3, nfe_step=7, use_epss=True)
    s = f"{variant}, {len(out['gpu']) / 24000:.2f} s"
    rows = [measure("vulkan.f5_audio", out["gpu"], out["cpu"], s, backend="vulkan"),
            measure("vulkan.f5_audio_reference", out["gpu"], ref.audio, s, backend="vulkan")]
    voice = gpu.clone_voice(audio_f, REF_TEXT)
    with gpu.session(voice, seed=3, **kw) as sess:
        for i in range(0, len(GEN_TEXT), 9):
            sess.feed(GEN_TEXT[i:i + 9])
        sess.end()
        fed = np.concatenate([c.samples for c in sess])
    assert fed.shape == out["gpu"].shape
    rows.append(measure("vulkan.f5_same_seed_audio", fed, out["gpu"], f"{variant}: text fed 9 characters at a time",
                        backend="vulkan"))
    record(rows)


def test_f5_vulkan_startup_line(f5vk):
    path = f5vk["v1"][3]
    code = f"import vox\nvox.Engine({str(path)!r}, device='vulkan:{_gpu_index()}').close()\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stderr.splitlines() if x.startswith("vox: device vulkan:")]
    assert len(line) == 1, r.stderr
    assert "the DiT, its ODE loop and Vocos on the GPU" in line[0] and " on the CPU (" in line[0], line[0]
    # f32 weights: float32 arithmetic, and the line says why (f16 / bf16 ones take float16 on tensor cores)
    assert "(DiT arithmetic: float32 (" in line[0], line[0]


def test_f5_vulkan_memory_limit(f5vk):
    """Too little video memory (VOX_VRAM_LIMIT_MB simulates a small card) keeps the DiT and Vocos on the
    CPU and the start-up line says why; with strict it is an error."""
    path = f5vk["v1"][3]
    code = ("import sys, vox\ntry:\n    vox.Engine(sys.argv[1], device=sys.argv[2]).close()\n"
            "except vox.errors.VoxError as e:\n    print(type(e).__name__, e)\n")
    env = {**__import__("os").environ, "VOX_VRAM_LIMIT_MB": "40"}
    idx = _gpu_index()
    r = subprocess.run([sys.executable, "-c", code, str(path), f"vulkan:{idx}"], capture_output=True, text=True, env=env)
    line = [x for x in r.stderr.splitlines() if x.startswith("vox: device vulkan:")]
    assert r.returncode == 0 and len(line) == 1, r.stderr
    assert " 0 matrices in VRAM" in line[0] and "not enough video memory: the DiT needs" in line[0], line[0]
    r = subprocess.run([sys.executable, "-c", code, str(path), f"vulkan:{idx},strict"], capture_output=True, text=True,
                       env=env)
    assert r.stdout.startswith("OutOfMemory") and "strict" in r.stdout, (r.stdout, r.stderr)


@pytest.fixture(scope="module")
def f5vk_bf16(tmp_path_factory):
    """(GPU engine, reference model on the same bf16 weights, whether the attention runs in float16)."""
    from vox.families.f5 import convert as f5

    path = tmod("v1h64-bf16", tmp_path_factory.mktemp("f5vk_bf16"))
    gpu = vox.Engine(path, device=f"vulkan:{_gpu_index()}", threads=1)
    why = gpu.info["placement"]["cpu_reason"]
    assert "the DiT, its ODE loop and Vocos on the GPU" in why, why
    yield gpu, f5.read_tmod(path), "the attention in float16" in why
    gpu.close()


def test_f5_vulkan_bf16(f5vk_bf16, clip, record):
    """The bf16 model against the reference on its own weights: one DiT evaluation (both branches, three
    times), the EPSS 7 loop's final mel and a cloned voice's audio. On a device with cooperative matrices
    the products run on them (x as hi + lo: float32's precision) and the attention in float16, whose
    rounding of q, k, v and the softmax weights (2^-11 each) is what the f16 rows allow for."""
    gpu, model, f16 = f5vk_bf16
    c = model.config.dit
    assert c.dim_head == 64 and "bf16" in set(model.extra["dtypes"].values()), (c, model.extra["dtypes"])
    row = (lambda name: f"vulkan.f5_f16_{name}") if f16 else (lambda name: f"vulkan.f5_{name}")
    label = "bf16 weights, float16 attention" if f16 else "bf16 weights, float32 arithmetic"
    rng = np.random.RandomState(17)
    base, ref = dit_case(model, rng)
    rows = []
    for t in (0.0, 0.37214, 0.98):
        g = gpu.run("dit", inputs=dict(base, t=np.float32(t)))
        ref_c, ref_u = ref(t)
        s = f"v1h64, {label}, {len(base['x'])} frames, t={t}"
        rows += [measure(row("dit_reference"), g["flow_cond"], ref_c, f"{s}: flow_cond", backend="vulkan"),
                 measure(row("dit_reference"), g["flow_uncond"], ref_u, f"{s}: flow_uncond", backend="vulkan")]
    inp, ref = sample_case(model, rng)
    g = gpu.run("sample", inputs=inp)
    rows.append(measure(row("cfm_reference"), g["mel"], ref.mel, f"v1h64, {label}, EPSS 7 steps: mel", backend="vulkan"))
    xs, sr = clip
    voice = gpu.clone_voice((xs.astype(np.float32) / 32768.0, sr), REF_TEXT)
    ours = gpu.synthesize(GEN_TEXT, voice, seed=3, nfe_step=7, use_epss=True)
    seg = refaudio.preprocess(xs, sr)
    ref = pipeline.synthesize(model, (seg.frames[:, 0] / 32768.0).astype(np.float32)[None], seg.rate,
                              refaudio.fix_ref_text(REF_TEXT), GEN_TEXT, seed=3, nfe_step=7, use_epss=True)
    rows.append(measure(row("audio_reference"), ours, ref.audio, f"v1h64, {label}, {len(ours) / 24000:.2f} s",
                        backend="vulkan"))
    record(rows)


if __name__ == "__main__":   # the .tmods for VOX_F5_TMODS, for a machine without the official packages
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    for name in TMODS:
        print(tmod(name, out))
