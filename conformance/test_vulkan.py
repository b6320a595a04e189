"""The Vulkan backend: stored SPIR-V, device listing and selection, and every GPU operation against the
CPU kernels on a Vulkan device (lavapipe in CI: mesa-vulkan-drivers).

The operation checks run the C test program test_vulkan_ops, built next to libvox
(core/tests/test_vulkan_ops.c; VOX_LIBRARY_DIR names the build), which compares each GPU op with the
CPU kernel of the same name on random inputs and prints one row per check of verify/tolerances.toml.
They skip only when the machine has no Vulkan device at all (the program exits 77 and says why), and
fail instead when VOX_REQUIRE_VULKAN=1 (CI, which installs lavapipe).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vox.verify.tolerance import Row

ROOT = Path(__file__).resolve().parent.parent
LIBDIR = Path(os.environ.get("VOX_LIBRARY_DIR", ROOT / "build" / "dev"))


def vk_devices() -> list[dict]:
    import vox

    return vox.devices().get("gpus", [])


def skip_without_vulkan(why: str):
    if os.environ.get("VOX_REQUIRE_VULKAN") == "1":
        pytest.fail(f"VOX_REQUIRE_VULKAN=1 but {why}")
    pytest.skip(why)


def test_stored_spirv_is_current():
    """core/src/vulkan/shaders_spv.c holds the SPIR-V of exactly the current core/shaders sources."""
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "build_shaders.py"), "--check"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr + r.stdout


def c_test_rows(exe_name: str, checks: tuple[str, ...]) -> list[Row]:
    """Runs a C test program built next to libvox (VOX_TEST_ROWS=1) and returns the measured rows it
    printed; it must exit 0 and print a row of every check in `checks`."""
    exe = LIBDIR / exe_name
    if not exe.is_file():
        pytest.fail(f"{exe}: the C test program is not built next to libvox (build with VOX_BUILD_TESTS=ON)")
    env = dict(os.environ, VOX_TEST_ROWS="1")
    r = subprocess.run([str(exe)], capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)
    if r.returncode == 77:
        skip_without_vulkan(r.stdout.strip())
    rows = []
    for line in r.stdout.splitlines():
        if line.startswith("row\t"):
            _, check, subject, value = line.split("\t")
            rows.append(Row(check, subject, float(value), backend="vulkan"))
        elif line.startswith("unsupported\t"):   # a check this device cannot run (no cooperative matrices)
            _, check, subject, why = line.split("\t")
            rows.append(Row.not_supported(check, subject, why, backend="vulkan"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    got = {row.check for row in rows}
    for c in checks:
        assert c in got, f"{exe_name} printed no {c} row"
    return rows


def test_vulkan_ops(record):
    record(c_test_rows("test_vulkan_ops", tuple(f"vulkan.{op}" for op in (
        "linear_f32", "linear_f16", "linear_bf16", "linear_q8", "linear_q4", "rms_norm", "rope", "silu_mul",
        "attention", "linear_cmh", "linear_cm2", "attention_f16"))))


def test_devices_listing():
    import vox

    d = vox.devices()
    assert "vulkan" in d and isinstance(d["vulkan"]["available"], bool)
    gpus = d["gpus"]
    if not d["vulkan"]["available"]:
        assert gpus == [] and d["vulkan"]["reason"]
        skip_without_vulkan(f"no Vulkan device: {d['vulkan']['reason']}")
    for g in gpus:
        for key in ("index", "name", "type", "software", "memory_total", "memory_free", "memory_free_estimated",
                    "subgroup_size", "max_storage_buffer_range"):
            assert key in g, f"vox devices: GPU entry without {key}: {g}"
        assert g["memory_free"] <= g["memory_total"] or not g["memory_free_estimated"]
        # tensor cores: used only with the 16x16x16 float16 shape the GEMM is written for
        assert isinstance(g["cooperative_matrix"], bool) and isinstance(g["cooperative_matrix_shapes"], str)
        assert not g["cooperative_matrix"] or "16x16x16" in g["cooperative_matrix_shapes"].split(), g
        if "llvmpipe" in g["name"] or "SwiftShader" in g["name"]:
            assert g["software"], f"{g['name']} is a software renderer"
    assert [g["index"] for g in gpus] == sorted({g["index"] for g in gpus})


def _engine(model, device: str, verbose: bool = False) -> subprocess.CompletedProcess:
    """Create an engine in a fresh process (the core writes its placement line to stderr)."""
    code = ("import sys, vox\n"
            "try:\n"
            f"    vox.Engine({str(model)!r}, device={device!r}).close()\n"
            "except vox.VoxError as e:\n"
            "    print(type(e).__name__, e, file=sys.stderr); sys.exit(3)\n")
    env = dict(os.environ, VOX_VERBOSE="1" if verbose else "0")
    env.pop("VOX_GPU_STRICT", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_device_selection(qwen3_tmod):
    import vox

    assert hasattr(vox, "VoxError")
    model = qwen3_tmod("custom06")
    gpus = vk_devices()
    hardware = [g for g in gpus if not g["software"]]
    # user mistakes are one clear error
    for bad, words in (("tpu", "unknown device"), ("vulkan:x", "number"), ("cpu,fast", "unknown option"),
                       ("vulkan:99", "no Vulkan device")):
        r = _engine(model, bad)
        assert r.returncode == 3 and words in r.stderr, (bad, r.stderr)
    # auto never picks a software renderer: on a machine with only lavapipe it stays on the CPU
    r = _engine(model, "auto", verbose=True)
    assert r.returncode == 0, r.stderr
    if not hardware:
        assert "vox: device cpu (auto" in r.stderr, r.stderr
    else:
        assert "vox: device vulkan:" in r.stderr, r.stderr
    if not gpus:
        return
    # an explicit GPU: the placement line is always printed, even without VOX_VERBOSE
    idx = _gpu_index()
    name = next(g["name"] for g in gpus if g["index"] == idx)
    r = _engine(model, f"vulkan:{idx}")
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stderr.splitlines() if x.startswith("vox: device vulkan:")]
    assert len(line) == 1 and "matrices in VRAM" in line[0] and name in line[0], r.stderr
    # the talker and predictor are on the GPU; strict accepts that (a shortfall of video memory is an
    # error under strict: test_vulkan_memory_limit)
    assert " 0 matrices in VRAM" not in line[0], line[0]
    r = _engine(model, f"vulkan:{idx},strict")
    assert r.returncode == 0 and "matrices in VRAM" in r.stderr, r.stderr


# ----------------------------------------------------------------------------- the Qwen3 LM on the GPU
from test_native_lm import (DTYPES, LOGIT_CHECKS, MAX_NEW_TOKENS, VARIANTS, lm_env, native,  # noqa: E402,F401
                            open_session, run_session, sampled_runs)
from vox.reference.qwen3.generate import teacher_force as ref_teacher_force  # noqa: E402
from vox.verify.qwen3 import talker as vt  # noqa: E402
from vox.verify.tolerance import measure  # noqa: E402

VK = "vulkan"
import vox  # noqa: E402


def _gpu_index() -> int:
    """The device under test: VOX_TEST_VULKAN=N, else the first hardware device, else the first (lavapipe)."""
    gpus = vk_devices()
    if not gpus:
        skip_without_vulkan("no Vulkan device")
    if os.environ.get("VOX_TEST_VULKAN"):
        return int(os.environ["VOX_TEST_VULKAN"])
    hardware = [g for g in gpus if not g["software"]]
    return (hardware or gpus)[0]["index"]


@pytest.fixture(scope="module")
def vk_native(native):
    """vk_native(variant, dtype) -> native(...) dict whose engine runs on the Vulkan device."""
    cache = {}

    def get(variant, dtype="f32", codec_cpu=False):
        if (variant, dtype, codec_cpu) not in cache:
            nat = dict(native(variant, dtype))
            eng = vox.Engine(nat["tmod"], device=f"vulkan:{_gpu_index()}" + (",codec=cpu" if codec_cpu else ""),
                             threads=1)
            voices = {}
            for k, v in nat["voices"].items():   # the same voice files, loaded into the GPU engine
                voices[k] = eng.load_voice(v.path) if hasattr(v, "path") else v
            nat.update(eng=eng, voices=voices)
            cache[(variant, dtype, codec_cpu)] = nat
        return cache[(variant, dtype, codec_cpu)]

    return get


from subsets import FULL, diagonal, subset  # noqa: E402

# every variant and every dtype at least once (conformance/subsets.py); VOX_CONFORMANCE_FULL=1: all 25
TF_CASES = subset([(v, d) for v in VARIANTS for d in DTYPES], diagonal(VARIANTS, list(DTYPES)))


@pytest.mark.parametrize("variant,dtype", TF_CASES)
def test_vulkan_teacher_forced_logits(variant, dtype, lm_env, native, vk_native, sampled_runs, record):
    """Talker and predictor logits on the GPU vs the CPU on the same .tmod, vs the reference, and (f32)
    vs the official code, teacher-forced on the codes of an official sampled run."""
    env = lm_env(variant)
    cpu, gpu = native(variant, dtype), vk_native(variant, dtype)
    case, run = sampled_runs(variant)
    codes = run.codes
    V, PV = run.talker_logits.shape[1], run.predictor_logits.shape[2]
    out = {}
    for name, nat in (("cpu", cpu), ("gpu", gpu)):
        s = open_session(nat, case)
        tf = s.run("teacher_force", codes=codes)
        s.close()
        out[name] = tf["talker_logits"], tf["predictor_logits"]
    (ctl, cpl), (gtl, gpl) = out["cpu"], out["gpu"]
    gpr = gpl.reshape(-1, PV)
    sub_t = f"{variant} {dtype} {case.name}, {gtl.shape[0]} steps talker"
    sub_p = f"{variant} {dtype} {case.name}, {codes.shape[0]} frames x 15 predictor"
    vs_cpu = "vulkan.quant_logits_vs_cpu" if dtype in ("q8", "q4") else "vulkan.logits_vs_cpu"
    rows = [measure(vs_cpu, gtl, ctl, sub_t, backend=VK),
            measure(vs_cpu, gpr, cpl.reshape(-1, PV), sub_p, backend=VK)]
    rtl, rpl = ref_teacher_force(cpu["ref"], vt.reference_prompt(cpu["ref"], case, env["voice"]), codes)
    rows += [measure(LOGIT_CHECKS[dtype], gtl, rtl, sub_t, backend=VK),
             measure(LOGIT_CHECKS[dtype], gpr, rpl.reshape(-1, PV), sub_p, backend=VK)]
    if dtype == "f32":
        po = run.predictor_logits.reshape(-1, PV)
        rows += [measure("qwen3.talker_logits", gtl, run.talker_logits, sub_t, backend=VK),
                 measure("qwen3.talker_argmax", gtl, run.talker_logits, sub_t, backend=VK),
                 measure("qwen3.predictor_logits", gpr, po, sub_p, backend=VK),
                 measure("qwen3.predictor_argmax", gpr, po, sub_p, backend=VK)]
    record(rows)


# The session checks below (repeatability, overlap, threads) hold at any length: on lavapipe (CI) they run
# 12 frames, with VOX_CONFORMANCE_FULL=1 (the hardware-GPU runs) the 24 of the teacher-forced checks.
SESSION_TOKENS = MAX_NEW_TOKENS if FULL else 13


@pytest.mark.parametrize("variant", subset(["custom06", "base17"], ["base17"]))
def test_vulkan_sampled_runs_repeat(variant, lm_env, vk_native, record):
    """The same seed on the same device gives the same codes and audio, for any chunk size."""
    case = lm_env(variant)["cases"][0]
    gpu = vk_native(variant, "bf16")
    a_codes, a_chunks = run_session(gpu, case, seed=11, max_new_tokens=SESSION_TOKENS)
    b_codes, b_chunks = run_session(gpu, case, seed=11, max_new_tokens=SESSION_TOKENS, chunk_frames=3)
    a = np.concatenate([c.samples for c in a_chunks])
    b = np.concatenate([c.samples for c in b_chunks])
    record([Row("vulkan.same_seed_codes", f"{variant} bf16 {case.name}, {a_codes.shape[0]} frames, chunk sizes "
                "default and 3", float(np.array_equal(a_codes, b_codes)), backend=VK),
            Row("vulkan.same_seed_audio", f"{variant} bf16 {case.name}, {a.size} samples",
                float(a.shape == b.shape and np.array_equal(a, b)), backend=VK)])


@pytest.mark.parametrize("variant", subset(["custom06", "base17"], ["custom06"]))
def test_vulkan_codec_overlap(variant, lm_env, vk_native, record, monkeypatch, capfd):
    """codec=cpu: chunk k decoded on the CPU while a worker generates chunk k+1 on the GPU gives the
    codes and audio of the same seed in sequence (VOX_CODEC_OVERLAP=0), for several chunk sizes; the
    session's profile line says the overlap happened."""
    case = lm_env(variant)["cases"][0]
    gpu = vk_native(variant, "bf16", codec_cpu=True)
    monkeypatch.setenv("VOX_PROFILE", "1")
    same_codes = same_audio = 1.0
    frames = samples = 0
    for cf in CODEC_OVERLAP_CHUNKS:
        out = {}
        for ov in ("0", "1"):
            monkeypatch.setenv("VOX_CODEC_OVERLAP", ov)
            capfd.readouterr()
            codes, chunks = run_session(gpu, case, seed=11, max_new_tokens=SESSION_TOKENS, chunk_frames=cf)
            err = capfd.readouterr().err
            audio = np.concatenate([c.samples for c in chunks])
            out[ov] = codes, audio, "decoded on the CPU while the GPU generated the next" in err
        assert not out["0"][2], "VOX_CODEC_OVERLAP=0 still overlapped"
        assert out["1"][2] or len(out["1"][0]) <= cf, f"chunk size {cf}: no chunk was decoded beside generation"
        same_codes = min(same_codes, float(np.array_equal(out["0"][0], out["1"][0])))
        same_audio = min(same_audio, float(out["0"][1].shape == out["1"][1].shape and
                                           np.array_equal(out["0"][1], out["1"][1])))
        frames, samples = len(out["1"][0]), out["1"][1].size
    record([Row("vulkan.same_seed_codes", f"{variant} bf16 {case.name}, {frames} frames, codec=cpu decoding beside "
                "generation vs in sequence, chunk sizes " + ", ".join(map(str, CODEC_OVERLAP_CHUNKS)), same_codes, backend=VK),
            Row("vulkan.same_seed_audio", f"{variant} bf16 {case.name}, {samples} samples, codec=cpu overlap vs "
                "sequence, chunk sizes " + ", ".join(map(str, CODEC_OVERLAP_CHUNKS)), same_audio, backend=VK)])


CODEC_OVERLAP_CHUNKS = subset([1, 3, 8], [1, 3])


def test_vulkan_memory_limit(qwen3_tmod):
    """Too little video memory: without strict the model runs on the CPU and says why; with strict
    the engine is refused with OutOfMemory (a small card simulated with VOX_VRAM_LIMIT_MB)."""
    idx = _gpu_index()
    model = qwen3_tmod("custom06")
    env = dict(os.environ, VOX_VRAM_LIMIT_MB="1")
    code = ("import sys, vox\n"
            "try:\n"
            f"    vox.Engine({str(model)!r}, device=sys.argv[1]).close()\n"
            "except vox.VoxError as e:\n"
            "    print(type(e).__name__, e, file=sys.stderr); sys.exit(3)\n")
    r = subprocess.run([sys.executable, "-c", code, f"vulkan:{idx}"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "0 matrices in VRAM" in r.stderr and "not enough video memory" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-c", code, f"vulkan:{idx},strict"], capture_output=True, text=True, env=env)
    assert r.returncode == 3 and "OutOfMemory" in r.stderr and "not enough video memory" in r.stderr, r.stderr


@pytest.mark.parametrize("variant", subset(VARIANTS, ["custom06", "base17"]))
def test_vulkan_generation_vs_cpu(variant, lm_env, native, vk_native, record):
    """Free generation with the predictor's frame on the GPU (its choices made in the shader) vs the CPU
    on the same weights and seed: greedy and sampled codes."""
    case = lm_env(variant)["cases"][0]
    rows = []
    for mode, kw in (("greedy", dict(do_sample=False, subtalker_do_sample=False)), ("sampled", dict(seed=SEED_VK))):
        c_codes, _ = run_session(native(variant), case, max_new_tokens=MAX_NEW_TOKENS, **kw)
        g_codes, _ = run_session(vk_native(variant), case, max_new_tokens=MAX_NEW_TOKENS, **kw)
        n = min(len(c_codes), len(g_codes))
        frac = float((c_codes[:n] == g_codes[:n]).mean()) if len(c_codes) == len(g_codes) else 0.0
        rows.append(Row("vulkan.greedy_codes_vs_cpu" if mode == "greedy" else "vulkan.sampled_codes_vs_cpu_generation", f"{variant} f32 {case.name}, {len(c_codes)} frames "
                        f"(GPU {len(g_codes)})", frac, backend=VK))
    record(rows)


SEED_VK = 4321
SESSION_THREADS = subset([1, 2, 3], [1, 2])   # the seeds, one session per thread


def test_vulkan_sessions_on_threads(lm_env, vk_native, record):
    """Sessions of one GPU engine on several threads take turns on the device: each gives the codes it
    gives alone."""
    import threading

    case = lm_env("custom06")["cases"][0]
    gpu = vk_native("custom06", "q8")
    n = len(SESSION_THREADS)
    alone = [run_session(gpu, case, seed=s, max_new_tokens=SESSION_TOKENS)[0] for s in SESSION_THREADS]
    got = [None] * n

    def work(i):
        got[i] = run_session(gpu, case, seed=i + 1, max_new_tokens=SESSION_TOKENS)[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    same = float(all(g is not None and np.array_equal(g, a) for g, a in zip(got, alone)))
    record(Row("vulkan.same_seed_codes", f"custom06 q8, {n} sessions on {n} threads vs each alone", same, backend=VK))


def test_without_a_vulkan_driver(qwen3_tmod):
    """A machine whose Vulkan loader finds no driver: vox lists no GPU and says why, auto runs on the CPU,
    and asking for a GPU is one clear error (the same path as a machine without the loader)."""
    env = dict(os.environ, VK_ICD_FILENAMES="/nonexistent.json", VK_DRIVER_FILES="/nonexistent.json",
               VOX_VERBOSE="1")
    code = ("import json, sys, vox\n"
            "d = vox.devices(); print(json.dumps(d))\n"
            f"vox.Engine({str(qwen3_tmod('custom06'))!r}, device='auto').close()\n"
            "try:\n"
            f"    vox.Engine({str(qwen3_tmod('custom06'))!r}, device='vulkan')\n"
            "except vox.VoxError as e:\n"
            "    print('ERR', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout.splitlines()[0])
    assert d["gpus"] == [] and d["vulkan"]["available"] is False and "driver" in d["vulkan"]["reason"], d["vulkan"]
    assert "vox: device cpu (auto" in r.stderr, r.stderr
    assert "ERR" in r.stdout and "no Vulkan device" in r.stdout and "--device cpu" in r.stdout, r.stdout
