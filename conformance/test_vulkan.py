"""The Vulkan backend: stored SPIR-V, device listing and selection, and every GPU operation against the
CPU kernels on a Vulkan device (lavapipe in CI: mesa-vulkan-drivers).

The operation checks run the C test program test_vulkan_ops, built next to libvox
(core/tests/test_vulkan_ops.c; VOX_LIBRARY_DIR names the build), which compares each GPU op with the
CPU kernel of the same name on random inputs and prints one row per check of verify/tolerances.toml.
They skip only when the machine has no Vulkan device at all (the program exits 77 and says why).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verify.tolerance import Row

ROOT = Path(__file__).resolve().parent.parent
LIBDIR = Path(os.environ.get("VOX_LIBRARY_DIR", ROOT / "build" / "dev"))


def vk_devices() -> list[dict]:
    import vox

    return vox.devices().get("gpus", [])


def test_stored_spirv_is_current():
    """core/src/vulkan/shaders_spv.c holds the SPIR-V of exactly the current core/shaders sources."""
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "build_shaders.py"), "--check"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr + r.stdout


def test_vulkan_ops(record):
    exe = LIBDIR / "test_vulkan_ops"
    if not exe.is_file():
        pytest.fail(f"{exe}: the C test program is not built next to libvox (build with VOX_BUILD_TESTS=ON)")
    env = dict(os.environ, VOX_TEST_ROWS="1")
    r = subprocess.run([str(exe)], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    if r.returncode == 77:
        pytest.skip(r.stdout.strip())
    rows = []
    for line in r.stdout.splitlines():
        if line.startswith("row\t"):
            _, check, subject, value = line.split("\t")
            rows.append(Row(check, subject, float(value), backend="vulkan"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    checks = {row.check for row in rows}
    for op in ("linear_f32", "linear_f16", "linear_bf16", "linear_q8", "linear_q4", "rms_norm", "rope", "silu_mul",
               "attention"):
        assert f"vulkan.{op}" in checks, f"test_vulkan_ops printed no vulkan.{op} row"
    record(rows)


def test_devices_listing():
    import vox

    d = vox.devices()
    assert "vulkan" in d and isinstance(d["vulkan"]["available"], bool)
    gpus = d["gpus"]
    if not d["vulkan"]["available"]:
        assert gpus == [] and d["vulkan"]["reason"]
        pytest.skip(f"no Vulkan device: {d['vulkan']['reason']}")
    for g in gpus:
        for key in ("index", "name", "type", "software", "memory_total", "memory_free", "memory_free_estimated",
                    "subgroup_size", "max_storage_buffer_range"):
            assert key in g, f"vox devices: GPU entry without {key}: {g}"
        assert g["memory_free"] <= g["memory_total"] or not g["memory_free_estimated"]
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
    r = _engine(model, f"vulkan:{gpus[0]['index']}")
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stderr.splitlines() if x.startswith("vox: device vulkan:")]
    assert len(line) == 1 and "matrices in VRAM" in line[0] and gpus[0]["name"] in line[0], r.stderr
    # strict: a matrix left on the CPU is an error, not a silent fallback
    if " 0 on the CPU" not in line[0]:
        r = _engine(model, f"vulkan:{gpus[0]['index']},strict")
        assert r.returncode == 3 and "strict" in r.stderr, r.stderr
