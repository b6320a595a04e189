"""`vox bench` on a Kokoro model runs vox and onnxruntime side by side (each in its own process) and
reports RTF, first audio (short sentence, paragraph) and peak RSS for the same texts and voice.
Speed itself is not asserted (benchmarks, not timed tests): the rows must be complete and consistent."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def test_bench_kokoro_sides(tmp_path):
    pytest.importorskip("onnxruntime")
    from vox.families.kokoro.convert import build_from_wheels

    tmod = build_from_wheels(tmp_path / "kokoro.tmod", dtype="f32")
    r = subprocess.run([sys.executable, "-m", "vox.cli.main", "bench", "--model", str(tmod), "--onnx", "f32",
                        "--threads", "2", "--runs", "1", "--json"], capture_output=True, text=True, timeout=1200,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads(r.stdout)
    assert [x["side"] for x in rows] == ["vox", "onnxruntime f32"]
    # which generator math ran is reported: the engine's own choice for this CPU
    import vox

    with vox.Engine(tmod) as eng:
        assert rows[0]["generator"] == eng.info["precision"]["generator_math"] in ("int8+bf16", "int8+f32", "bf16", "f32")
    assert rows[1]["generator"] == "f32"
    for x in rows:
        assert x["voice"] == "jm_kumo" and x["threads"] == 2
        assert 0 < x["first_audio_short_s"] <= x["compute_s"] + 60
        assert x["rtf"] > 0 and x["peak_rss_mb"] > 50
    # the same three sentences in both runtimes: vox trims each span's trailing silence and inserts
    # its pause, onnxruntime's spans are concatenated as they come, so lengths agree only roughly
    a, b = rows[0]["audio_s"], rows[1]["audio_s"]
    assert 0.7 < a / b < 1.3, (a, b)
