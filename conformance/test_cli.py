"""The vox command end to end: say, voice, devices, inspect, bench; user mistakes end as one line."""

from __future__ import annotations

import json

import numpy as np
import soundfile as sf

from reference_helpers import run_cli


def _one_line_error(r, *words):
    assert r.returncode != 0
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("vox "), r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_say_to_wav_and_stream(qwen3_tmod, tmp_path):
    m = str(qwen3_tmod("custom06", "bf16", "q8"))
    out = tmp_path / "a.wav"
    r = run_cli(["say", "Hello there.", "--model", m, "--speaker", "aiden", "-o", str(out), "--seed", "3",
                 "--max-new-tokens", "12", "--threads", "1"])
    assert r.returncode == 0, r.stderr
    wav, sr = sf.read(out, dtype="float32")
    assert sr == 24000 and wav.size == 11 * 1920  # max_new_tokens 12 -> 11 frames
    r2 = run_cli(["say", "--stdin", "--stream", "--model", m, "--speaker", "aiden", "--seed", "3",
                  "--max-new-tokens", "12", "--threads", "2", "--chunk-frames", "3"], input_text="Hello there.")
    assert r2.returncode == 0, r2.stderr
    pcm = np.frombuffer(r2.stdout_bytes, dtype="<f4")
    # same seed => same audio, for another thread count and chunk size (the WAV is 16-bit)
    assert pcm.size == wav.size and np.max(np.abs(pcm - wav)) <= 1 / 32767 + 1e-7
    r3 = run_cli(["say", "Hello.", "--model", m, "--speaker", "aiden", "-o", str(out)])
    _one_line_error(r3, "exists")


def test_voice_create_then_say(qwen3_tmod, tmp_path, ref_audio):
    m = str(qwen3_tmod("base17", "bf16", "q8"))
    v = tmp_path / "me.tvoice"
    r = run_cli(["voice", "create", "fixtures/audio/ref_en_16k.wav", "--text", ref_audio("ref_en_16k.wav")[2],
                 "--model", m, "-o", str(v)])
    assert r.returncode == 0, r.stderr
    info = json.loads(run_cli(["inspect", str(v), "--json"]).stdout)
    assert info["mode"] == "icl" and info["lengths"]["ref_frames"] > 0 and info["lengths"]["source_seconds"] > 5
    r = run_cli(["say", "Cloned.", "--model", m, "--voice", str(v), "-o", str(tmp_path / "c.wav"),
                 "--max-new-tokens", "6", "--decoder", "reference"])
    assert r.returncode == 0, r.stderr
    assert sf.info(str(tmp_path / "c.wav")).frames == 5 * 1920


def test_speaker_and_design_voices(qwen3_tmod, tmp_path):
    r = run_cli(["voice", "speaker", "--speaker", "eric", "--instruct", "Calmly.", "--model",
                 str(qwen3_tmod("custom17")), "-o", str(tmp_path / "e.tvoice")])
    assert r.returncode == 0, r.stderr
    r = run_cli(["voice", "design", "A warm voice.", "--model", str(qwen3_tmod("design17")), "-o",
                 str(tmp_path / "d.tvoice")])
    assert r.returncode == 0, r.stderr
    r = run_cli(["say", "Designed.", "--model", str(qwen3_tmod("design17")), "--voice", str(tmp_path / "d.tvoice"),
                 "-o", str(tmp_path / "d.wav"), "--max-new-tokens", "4", "--quiet"])
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_user_mistakes_are_one_line(qwen3_tmod, tmp_path):
    base, custom = str(qwen3_tmod("base06")), str(qwen3_tmod("custom06"))
    out = str(tmp_path / "x.wav")
    _one_line_error(run_cli(["say", "Hi.", "--model", str(tmp_path / "none.tmod"), "-o", out]), "no such file")
    _one_line_error(run_cli(["say", "   ", "--model", custom, "--speaker", "aiden", "-o", out]), "empty")
    _one_line_error(run_cli(["say", "Hi.", "--model", custom, "--speaker", "nobody", "-o", out]), "unknown speaker")
    _one_line_error(run_cli(["say", "Hi.", "--model", custom, "-o", out]), "--speaker")
    _one_line_error(run_cli(["say", "Hi.", "--model", base, "-o", out]), "voice")
    _one_line_error(run_cli(["say", "Hi.", "--model", custom, "--speaker", "aiden", "--language", "klingon",
                             "-o", out]), "klingon")
    (tmp_path / "e.tvoice").write_bytes(b"not a voice")
    _one_line_error(run_cli(["say", "Hi.", "--model", custom, "--voice", str(tmp_path / "e.tvoice"), "-o", out]),
                    "e.tvoice")
    run_cli(["voice", "speaker", "--speaker", "aiden", "--model", custom, "-o", str(tmp_path / "a.tvoice")])
    _one_line_error(run_cli(["say", "Hi.", "--model", base, "--voice", str(tmp_path / "a.tvoice"), "-o", out]),
                    "a.tvoice")
    _one_line_error(run_cli(["voice", "create", str(tmp_path / "none.wav"), "--text", "x", "--model", base,
                             "-o", str(tmp_path / "v.tvoice")]), "no such file")
    _one_line_error(run_cli(["voice", "create", "fixtures/audio/ref_en_24k.wav", "--model", base,
                             "-o", str(tmp_path / "v.tvoice")]), "--text")


def test_devices():
    r = run_cli(["devices", "--json"])
    assert r.returncode == 0 and json.loads(r.stdout)["cpu"]["threads"] >= 1
    r = run_cli(["devices"])
    assert r.returncode == 0 and r.stdout.startswith("cpu ")


def test_verify_json_is_strict(capsys):
    """`vox verify --json` prints strict JSON: a row whose value is not finite (a length mismatch end to
    end is inf) has value null, and still fails."""
    import argparse

    from vox.cli.cmd_verify import report
    from vox.verify.tolerance import Row

    rows = [Row("f5.native.vocos", "one", 1e-7), Row("f5.native.vocos", "mismatch", float("inf"))]
    assert report(rows, argparse.Namespace(json=True)) == 1

    def no_constants(name):
        raise AssertionError(f"not strict JSON: {name}")

    got = json.loads(capsys.readouterr().out, parse_constant=no_constants)
    assert [r["value"] for r in got] == [1e-7, None] and [r["passed"] for r in got] == [True, False]
