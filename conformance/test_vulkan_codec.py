"""The codec decoder on the Vulkan device (core/src/vulkan/codec_gpu.c): its ops against the CPU
kernels and the whole decoder against the CPU decoder (the C programs test_vulkan_codec_ops and
test_vulkan_codec, built next to libvox), then through vox.Engine on every fixture variant: decoder
audio on the GPU vs the CPU decoder and vs the numpy reference decoder, stream mode (warm-up longer
than the vocoder's receptive field) across chunk sizes and reference mode; `,codec=cpu` keeps the
CPU decoder (bit for bit the CPU engine's audio); the start-up line says where the decoder runs; a
session's audio with the codec on the GPU vs codec=cpu on the same GPU engine.

Skips only without any Vulkan device, and fails instead under VOX_REQUIRE_VULKAN=1 (CI: lavapipe).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import vox
from vox.families.qwen3 import decode
from test_vulkan import LIBDIR, ROOT, _gpu_index, c_test_rows, skip_without_vulkan  # noqa: F401
from subsets import subset  # noqa: E402
from test_native_lm import MAX_NEW_TOKENS, VARIANTS, lm_env, native, open_session, run_session  # noqa: F401
from vox.reference.common.checkpoint import Checkpoint
from vox.reference.qwen3 import codec_decoder as cd
from vox.verify.tolerance import Row, measure

VK = "vulkan"
VS_CPU = "vulkan.codec_vs_cpu"
IDENT = "vulkan.codec_chunk_identity"


def test_vulkan_codec_ops(record):
    record(c_test_rows("test_vulkan_codec_ops", ("vulkan.codec_conv", "vulkan.codec_snake", "vulkan.codec_norm_act")))


def test_vulkan_codec_decoder_c(record):
    record(c_test_rows("test_vulkan_codec", (VS_CPU, IDENT)))


@pytest.fixture(scope="module")
def engines(qwen3_fixture, qwen3_tmod):
    """engines(variant) -> (cpu, gpu, gpu with codec=cpu, reference CodecDecoder) on the f32 .tmod."""
    cache = {}

    def get(variant):
        if variant not in cache:
            idx = _gpu_index()
            path = str(qwen3_tmod(variant))
            cache[variant] = (vox.Engine(path, threads=1), vox.Engine(path, device=f"vulkan:{idx}", threads=1),
                              vox.Engine(path, device=f"vulkan:{idx},codec=cpu", threads=1),
                              cd.CodecDecoder(Checkpoint.from_hf_dir(qwen3_fixture(variant))))
        return cache[variant]

    yield get
    for e in cache.values():
        for eng in e[:3]:
            eng.close()


def _codes(seed: int, frames: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2048, size=(frames, 16), dtype=np.int32)


@pytest.mark.parametrize("variant", subset(VARIANTS, ["base06", "custom17"]))
def test_vulkan_decoder_audio(variant, engines, record):
    """Stream mode after a 12-frame warm-up (the vocoder's receptive field is 10 frames: the warm-up
    skips its first frames), chunks of 1, 3 and all 10 frames, and reference mode: GPU vs CPU decoder
    (asserted), GPU vs the reference decoder (reported), chunk sizes bit-identical on the GPU, and
    codec=cpu bit-identical to the CPU engine."""
    cpu, gpu, gcpu, dec = engines(variant)
    # the info says where the codec's products run: the Vulkan decoder, or the CPU's math with codec=cpu
    assert gpu.info["codec_math"].startswith("on the GPU"), gpu.info["codec_math"]
    assert gcpu.info["codec_math"] == cpu.info["codec_math"] and cpu.info["codec_math"].startswith("f32 products")
    gen, ref = _codes(5, 10), _codes(6, 14)
    rows = []
    want = decode(cpu, gen, ref, "stream", 12, 10)
    outs = {k: decode(gpu, gen, ref, "stream", 12, k) for k in (1, 3, 10)}
    label = f"{variant} f32 decoder, 14 reference frames (warm-up 12) + 10"
    rows.append(measure(VS_CPU, outs[10], want, f"{label}, stream", backend=VK))
    rows.append(measure("qwen3.native_decoder_vs_reference", outs[3], cd.stream_decode(dec, gen, 3, ref, 12),
                        f"{label}, stream, chunk 3", backend=VK))
    same = all(np.array_equal(outs[k].view(np.uint32), outs[10].view(np.uint32)) for k in (1, 3))
    rows.append(Row(IDENT, f"{label}: chunks of 1, 3, 10", float(same), backend=VK))
    assert same, "GPU decoder audio differs between chunk sizes"
    got = decode(gcpu, gen, ref, "stream", 12, 3)
    ident = np.array_equal(got.view(np.uint32), want.view(np.uint32))
    rows.append(Row("vulkan.codec_cpu_identity", f"{label}: engine on the GPU with codec=cpu vs the CPU engine",
                    float(ident), backend=VK))
    assert ident, "codec=cpu did not keep the CPU decoder"
    r_gpu, r_cpu = decode(gpu, gen, ref, "reference"), decode(cpu, gen, ref, "reference")
    rows.append(measure(VS_CPU, r_gpu, r_cpu, f"{label}, reference mode", backend=VK))
    rows.append(measure("qwen3.native_decoder_vs_reference", r_gpu, cd.decode_reference(dec, gen, ref),
                        f"{label}, reference mode", backend=VK))
    record(rows)


def test_vulkan_codec_int8_request(engines, qwen3_tmod, monkeypatch):
    """VOX_QWEN3_CODEC=int8 is the CPU decoder's math: an engine whose codec decodes on the GPU drops the
    int8 codes it packed at load and decodes the same bits as without it; with codec=cpu the int8 math runs."""
    cpu, gpu, _, _ = engines("base06")
    idx = _gpu_index()
    monkeypatch.setenv("VOX_QWEN3_CODEC", "int8")
    path = str(qwen3_tmod("base06"))
    gen, ref = _codes(5, 10), _codes(6, 14)
    with vox.Engine(path, device=f"vulkan:{idx}", threads=1) as g8, \
            vox.Engine(path, device=f"vulkan:{idx},codec=cpu", threads=1) as c8:
        assert g8.info["codec_math"].startswith("on the GPU"), g8.info["codec_math"]
        got = decode(g8, gen, ref, "stream", 12, 3)
        assert np.array_equal(got.view(np.uint32), decode(gpu, gen, ref, "stream", 12, 3).view(np.uint32))
        on_cpu = np.abs(decode(c8, gen, ref, "stream", 12, 3) - decode(cpu, gen, ref, "stream", 12, 3)).max()
        if vox.devices()["cpu"]["dots"]["int8"]:
            assert c8.info["codec_math"].startswith("int8 dot products") and on_cpu > 0, c8.info["codec_math"]
        else:   # a path without the int8 convolution (scalar) keeps the default math
            assert c8.info["codec_math"] == cpu.info["codec_math"] and on_cpu == 0


def _startup(model, device: str) -> str:
    code = f"import vox\nvox.Engine({str(model)!r}, device={device!r}).close()\n"
    env = dict(os.environ, VOX_VERBOSE="0")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stderr.splitlines() if x.startswith("vox: device vulkan:")]
    assert len(line) == 1, r.stderr
    return line[0]


def test_vulkan_codec_placement_line(qwen3_tmod):
    """The start-up line says where the codec decoder runs, and codec=cpu moves it (and its matrices)."""
    idx = _gpu_index()
    model = qwen3_tmod("base06")
    on = _startup(model, f"vulkan:{idx}")
    off = _startup(model, f"vulkan:{idx},codec=cpu")
    assert "the codec decoder on the GPU" in on, on
    assert "codec decoder (codec=cpu)" in off, off
    n_on, n_off = (int(x.split(" matrices in VRAM")[0].rsplit(" ", 1)[1]) for x in (on, off))
    assert n_on > n_off > 0, (on, off)


@pytest.mark.parametrize("variant", subset(["custom06", "base17"], ["base17"]))
def test_vulkan_session_codec_gpu_vs_cpu(variant, lm_env, native, record):
    """A whole session on the GPU engine, codec on the GPU vs codec=cpu: the same codes (the same GPU
    talker and seed) and audio within vulkan.codec_vs_cpu."""
    case = lm_env(variant)["cases"][0]
    idx = _gpu_index()
    base = native(variant, "f32")
    out = {}
    for name, dev in (("gpu", f"vulkan:{idx}"), ("cpu", f"vulkan:{idx},codec=cpu")):
        eng = vox.Engine(base["tmod"], device=dev, threads=1)
        voices = {k: eng.load_voice(v.path) if hasattr(v, "path") else v for k, v in base["voices"].items()}
        nat = dict(base, eng=eng, voices=voices)
        codes, chunks = run_session(nat, case, seed=7, max_new_tokens=MAX_NEW_TOKENS, chunk_frames=3)
        out[name] = (codes, np.concatenate([c.samples for c in chunks]))
        eng.close()
    (gc, ga), (cc, ca) = out["gpu"], out["cpu"]
    assert np.array_equal(gc, cc), "the codec's device changed the codes"
    record(measure(VS_CPU, ga, ca, f"{variant} f32 {case.name}: session audio, {len(gc)} frames in chunks of 3, "
                   "codec on the GPU vs codec=cpu", backend=VK))


def test_vulkan_codec_profile(qwen3_tmod):
    """VOX_PROFILE=gpu: the decoder's dispatches appear under their own stages (codec/conv1d, ...)."""
    idx = _gpu_index()
    code = ("import numpy as np, vox\n"
            "from vox.families.qwen3 import decode\n"
            f"e = vox.Engine({str(qwen3_tmod('base06'))!r}, device='vulkan:{idx}')\n"
            "decode(e, np.random.default_rng(1).integers(0, 2048, size=(3, 16)), None, 'stream', 0, 3)\n"
            "e.close()\n")
    env = dict(os.environ, VOX_PROFILE="gpu")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    for stage in ("codec/rvq/codec_rvq", "codec/transformer/codec_gemv", "codec/attention/attention",
                  "codec/conv1d/codec_gemm", "codec/tconv/codec_ola", "codec/snake/codec_snake",
                  "codec/convnext/codec_layernorm", "codec/clamp/codec_act"):
        assert stage in r.stderr, f"no {stage} line in the GPU profile:\n{r.stderr[-3000:]}"


def test_vulkan_codec_memory_limit(qwen3_tmod):
    """Room for the talker but not for the decoder (VOX_VRAM_LIMIT_MB): the decoder stays on the CPU and
    the start-up line says why; under strict that is an error that names codec=cpu."""
    idx = _gpu_index()
    model = qwen3_tmod("base06")
    talker_mib = float(_startup(model, f"vulkan:{idx},codec=cpu").split(" matrices in VRAM (")[1].split(" MiB")[0])
    both_mib = float(_startup(model, f"vulkan:{idx}").split(" matrices in VRAM (")[1].split(" MiB")[0])
    limit = int(talker_mib) + 1
    assert limit < both_mib, (talker_mib, both_mib)
    code = ("import sys, vox\n"
            "try:\n"
            f"    vox.Engine({str(model)!r}, device=sys.argv[1]).close()\n"
            "except vox.VoxError as e:\n"
            "    print(type(e).__name__, e, file=sys.stderr); sys.exit(3)\n")
    env = dict(os.environ, VOX_VRAM_LIMIT_MB=str(limit), VOX_VERBOSE="0")
    env.pop("VOX_GPU_STRICT", None)
    r = subprocess.run([sys.executable, "-c", code, f"vulkan:{idx}"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "the codec decoder for lack of video memory" in r.stderr, r.stderr
    assert " 0 matrices in VRAM" not in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-c", code, f"vulkan:{idx},strict"], capture_output=True, text=True, env=env)
    assert r.returncode == 3 and "OutOfMemory" in r.stderr and "codec=cpu" in r.stderr, r.stderr
