"""The fixture generator (deterministic, cached) and `vox verify` end to end through the CLI."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from fixtures import qwen3_tiny
from reference_helpers import run_cli
from vox.verify.tolerance import Row


def _digest(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*")) if p.is_file() and p.name != "MANIFEST.json"}


def test_fixture_build_is_deterministic(tmp_path, qwen3_fixture):
    """Same variant and seed => byte-identical files, and the same bytes as the cached copy."""
    a, b = tmp_path / "a", tmp_path / "b"
    qwen3_tiny.build("base06", a)
    qwen3_tiny.build("base06", b)
    da, db = _digest(a), _digest(b)
    assert da == db
    assert da == _digest(qwen3_fixture("base06"))
    qwen3_tiny.build("base06", tmp_path / "c", seed=qwen3_tiny.DEFAULT_SEED + 1)
    assert _digest(tmp_path / "c")["model.safetensors"] != da["model.safetensors"]


def test_fixture_cache_rebuilds_a_damaged_copy(tmp_path, monkeypatch):
    monkeypatch.setenv("VOX_FIXTURE_CACHE", str(tmp_path))
    d = qwen3_tiny.fixture_dir("design17")
    before = _digest(d)
    assert qwen3_tiny.fixture_dir("design17") == d  # valid cache: reused
    (d / "config.json").write_text("{}")            # damaged: the manifest no longer matches
    d2 = qwen3_tiny.fixture_dir("design17")
    assert d2 == d and _digest(d2) == before


def test_fixture_tokenizer_files_are_the_real_ones(qwen3_fixture):
    d = qwen3_fixture("base17")
    pins = {"vocab.json": "ca10d7e9fb3ed18575dd1e277a2579c16d108e32f27439684afa0e10b1440910",
            "merges.txt": "599bab54075088774b1733fde865d5bd747cbcc7a547c5bc12610e874e26f5e3",
            "tokenizer_config.json": "dc3c31c3bdaedd5016382bb3cbe07323026775ad51f5a4fb564505992ae4a670"}
    for name, sha in pins.items():
        assert hashlib.sha256((d / name).read_bytes()).hexdigest() == sha, name


@pytest.mark.parametrize("variant,args", [("base17", ["--dtype", "bf16", "--quant", "q8"]),
                                          ("custom17", ["--dtype", "f16"]),
                                          ("base06", ["--dtype", "bf16", "--quant", "q4"]),
                                          ("design17", ["--dtype", "f32"]),
                                          ("custom06", ["--dtype", "bf16"])])
def test_vox_verify_passes_on_a_faithful_conversion(tmp_path, qwen3_fixture, record, variant, args):
    """`vox build` then `vox verify` through the CLI: exit status 0 and every row within tolerance.
    The rows only this path measures (the conversion itself, and the format tolerance of the
    model's own bf16/f16/q8/q4 weights) go into the report."""
    d = qwen3_fixture(variant)
    m = tmp_path / f"{variant}-{'-'.join(a.lstrip('-') for a in args)}.tmod"
    assert run_cli(["build", "--model", str(d), "-o", str(m), *args]).returncode == 0
    r = run_cli(["verify", "--model", str(m), "--official", str(d), "--max-new-tokens", "8", "--json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [Row(x["check"], x["subject"], x["value"], note=x["note"], backend=x["backend"]) for x in json.loads(r.stdout)]
    assert rows and all(row.passed for row in rows)
    record([row for row in rows if row.check == "qwen3.conversion" or row.check.endswith(("_kl", "_top5"))])


def test_vox_verify_fails_on_altered_weights(tmp_path, qwen3_fixture):
    """A model converted from slightly different weights must fail verification (exit status 1)."""
    from vox.reference.common import safetensors

    src = qwen3_fixture("custom06")
    alt = tmp_path / "alt"
    shutil.copytree(src, alt)
    st = safetensors.load(alt / "model.safetensors")
    tensors = {k: np.array(st[k]) for k in st}
    name = "talker.model.layers.1.mlp.down_proj.weight"
    tensors[name] = tensors[name] * np.float32(1.01)
    safetensors.save(alt / "model.safetensors", tensors, st.metadata)
    m = tmp_path / "alt.tmod"
    assert run_cli(["build", "--model", str(alt), "--dtype", "f32", "-o", str(m)]).returncode == 0
    r = run_cli(["verify", "--model", str(m), "--official", str(src), "--max-new-tokens", "8"])
    assert r.returncode == 1, r.stdout + r.stderr
    failed = set(re.findall(r"^FAIL\s+(\w+)\s+(qwen3\.\w+)", r.stdout, re.M))
    assert ("reference", "qwen3.conversion") in failed, r.stdout
    assert ("reference", "qwen3.talker_logits") in failed and ("cpu", "qwen3.talker_logits") in failed, r.stdout


def test_vox_verify_usage_errors(tmp_path, qwen3_fixture):
    r = run_cli(["verify", "--model", str(tmp_path / "missing.tmod"), "--official", str(qwen3_fixture("base06"))])
    assert r.returncode == 1 and "Traceback" not in r.stderr and "missing.tmod" in r.stderr


def test_vox_verify_checks_the_recording_first(tmp_path, qwen3_fixture):
    """A bad --ref-audio is a one-line error before the official model loads (no traceback)."""
    d = qwen3_fixture("base06")
    m = tmp_path / "base06.tmod"
    assert run_cli(["build", "--model", str(d), "-o", str(m), "--dtype", "f32"]).returncode == 0
    garbage = tmp_path / "garbage.wav"
    garbage.write_bytes(bytes(range(256)) * 8)
    for audio, text, msg in ((tmp_path / "none.wav", "Hi.", "no such file"), (garbage, "Hi.", "not an audio file"),
                             (garbage, None, "--ref-text")):
        args = ["verify", "--model", str(m), "--official", str(d), "--ref-audio", str(audio)]
        r = run_cli(args + (["--ref-text", text] if text else []))
        assert r.returncode != 0 and msg in r.stderr, r.stdout + r.stderr
        assert "Traceback" not in r.stderr and "loading the official model" not in r.stderr, r.stderr
