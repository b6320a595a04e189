"""Every kernel path (core/src/kernels.h: scalar, avx2, avx2-vnni, avx512, avx512-vnni, avx512-vnni-bf16, amx).

The path is chosen once per process (VOX_CPU=name, or the best this CPU has), so the rest of the suite
runs one path: the one this process got. Here each OTHER path this CPU has runs, in a child pytest with
VOX_CPU set, the conformance checks whose kernels differ between paths (f32, bf16, q8 and q4 linear
layers, attention and the elementwise math; the codec's convolutions and 16-bit transposed
convolutions; the voice encoders; Kokoro's f32 path against the numpy reference with the harmonic
source's Philox noise, its default int8+bf16 decoder and generator against the official model, and its
thread determinism; F5-TTS's text encoder, DiT branches, CFM loop, Vocos, bf16 and q8 weights against
the official code and the reference, and its thread determinism), held to the same limits; their rows are reported per path (backend
"cpu <path>"). Each path this CPU lacks is listed as "not supported on this CPU" and checked to be
refused at engine creation, never silently replaced by another path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vox
from vox.verify.tolerance import Row

ROOT = Path(__file__).resolve().parent.parent

# the checks whose kernels differ between paths (a representative subset: one model size per family)
SUBSET = [
    "conformance/test_native_lm.py::test_teacher_forced_logits[base06-f32]",
    "conformance/test_native_lm.py::test_teacher_forced_logits[base06-bf16]",
    "conformance/test_native_lm.py::test_teacher_forced_logits[base06-q8]",
    "conformance/test_native_lm.py::test_teacher_forced_logits[base06-q4]",
    "conformance/test_native_lm.py::test_greedy_codes[base06]",
    "conformance/test_native_codec.py::test_whole_sequence[base06]",
    "conformance/test_native_codec.py::test_codec_dtypes[bf16]",
    "conformance/test_native_codec.py::test_stream_any_chunking",
    "conformance/test_native_voice.py::test_encoders_24k[ref_en_24k.wav-base06]",
    "conformance/test_native_voice.py::test_threads_deterministic",
    "conformance/test_kokoro_native.py::test_native_vs_reference",
    "conformance/test_kokoro_native.py::test_generator_math_default",
    "conformance/test_kokoro_native.py::test_same_seed_same_audio_for_any_thread_count[two_spans]",
    "conformance/test_f5_native.py::test_text_encoder_and_dit_branches[v1]",
    "conformance/test_f5_native.py::test_cfm_loop[v1]",
    "conformance/test_f5_native.py::test_vocos[center]",
    "conformance/test_f5_native.py::test_reduced_precision[bf16-none]",
    "conformance/test_f5_native.py::test_reduced_precision[f32-q8]",
    "conformance/test_f5_native.py::test_same_seed_same_audio_for_any_thread_count_and_feeding",
]

# The scalar path (plain C, by far the slowest: the whole SUBSET took 19 minutes on a 2-core machine, 95%
# of it in three Kokoro checks on the real weights) runs the Kokoro checks on less: the thread check on
# one span, and not test_generator_math_default, whose int8/bf16 generator the scalar path has not (its
# f32 fallback is checked by test_generator_math_switch, in a VOX_CPU=scalar child of the main run).
SCALAR = [t.replace("[two_spans]", "[one_span]") for t in SUBSET
          if not t.endswith("::test_generator_math_default")]

CPU = vox.devices()["cpu"]


def _params():
    out = []
    for p in CPU["paths"]:
        if not p["supported"]:
            out.append(pytest.param(p["name"], False, id=f"{p['name']}: not supported on this CPU"))
        elif p["name"] != CPU["kernels"]:  # this process's own path: the rest of the suite
            out.append(pytest.param(p["name"], True, id=p["name"]))
    return out


def check_refused(path: str, env: dict) -> None:
    """VOX_CPU=path is refused at engine creation, before the model is opened (so any file does), with
    a message naming the path; `vox devices` lists it as not supported and shows the refusal."""
    env = dict(env, VOX_CPU=path)
    code = "import vox, sys\ntry:\n    vox.Engine(sys.argv[1])\nexcept vox.VoxError as e:\n    print(e)\n"
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / "pyproject.toml")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and f"VOX_CPU={path}: not supported on this CPU" in r.stdout, (r.stdout, r.stderr)
    d = subprocess.run([sys.executable, "-m", "vox.cli.main", "devices"], env=env, capture_output=True, text=True, timeout=120)
    lacking = d.stdout.split("not supported on this CPU:")[-1]
    assert f"refused: VOX_CPU={path}" in d.stdout and f"{path} (needs" in lacking, d.stdout


@pytest.mark.parametrize("path, supported", _params())
def test_cpu_path(path, supported, record, tmp_path):
    """A path this CPU has: the SUBSET (SCALAR for the scalar path) passes under VOX_CPU=path with the same limits (its rows recorded
    as backend "cpu <path>"). A path it lacks: refused (check_refused)."""
    env = dict(os.environ)
    env.pop("VOX_CPU_PATH", None)
    if not supported:
        check_refused(path, env)
        return
    env["VOX_CPU"] = path
    rows_json = tmp_path / "rows.json"
    env["VOX_ROWS_JSON"] = str(rows_json)
    tests = SCALAR if path == "scalar" else SUBSET
    r = subprocess.run([sys.executable, "-m", "pytest", *tests, "-q", "-p", "no:cacheprovider"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=3600)
    tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-30:])
    assert r.returncode == 0, f"VOX_CPU={path}:\n{tail}"
    got = json.loads(rows_json.read_text())
    assert got["path"] == path, got["path"]  # the child really ran that path
    rows = [Row(d["check"], d["subject"], d["value"], d["note"], backend=f"cpu {path}", unsupported=d["unsupported"])
            for d in got["rows"]]
    assert rows, "the child recorded no rows"
    print("\n" + "\n".join(r.line() for r in rows))
    record(rows)


def test_smaller_cpu_refuses_wider_paths():
    """As on a CPU without AVX-512 and AVX-VNNI (a Zen 3; VOX_CPU_MASK hides those features from
    detection): the best path is avx2, and every wider path is listed as not supported and refused."""
    env = dict(os.environ, VOX_CPU_MASK="avx512f,avxvnni")
    env.pop("VOX_CPU_PATH", None)
    env.pop("VOX_CPU", None)
    d = subprocess.run([sys.executable, "-c", "import json, vox; print(json.dumps(vox.devices()['cpu']))"], env=env,
                       capture_output=True, text=True, timeout=120)
    cpu = json.loads(d.stdout.strip().splitlines()[-1])
    assert cpu["kernels"] == "avx2" and cpu["dots"]["int8"] == "AVX2 vpmaddwd", cpu
    assert [p["name"] for p in cpu["paths"] if p["supported"]] == ["scalar", "avx2"], cpu["paths"]
    for path in ("avx2-vnni", "avx512", "avx512-vnni", "avx512-vnni-bf16", "amx"):
        check_refused(path, env)
