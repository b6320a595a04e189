"""`vox bench` on a Qwen3-TTS model runs vox and the official code side by side (each in its own process)
on the same text, voice-clone reference and frame count, and reports RTF, first chunk, per-stage times per
frame and peak RSS. Speed itself is not asserted (benchmarks, not timed tests): the rows must be complete
and consistent, and say how the codec's convolutions multiplied."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def test_bench_qwen3_sides(qwen3_fixture, qwen3_tmod):
    env = dict(os.environ, VOX_QWEN3_CODEC="int8")
    r = subprocess.run([sys.executable, "-m", "vox.cli.main", "bench", "--model", str(qwen3_tmod("base06")),
                        "--official", str(qwen3_fixture("base06")), "--frames", "8", "--threads", "2", "--runs", "1",
                        "--json"], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads(r.stdout)
    assert [x["side"] for x in rows] == ["vox", "official"]
    ours, theirs = rows
    import vox

    cpu = vox.devices()["cpu"]
    # the option reached the engine the bench ran, and the row says which math ran
    if cpu["dots"]["int8"]:
        assert ours["codec"] == "int8 dot" and ours["codec_math"].startswith("int8 dot products"), ours
    else:
        assert ours["codec"] == "f32", ours
    assert "codec" not in theirs
    for x in rows:
        assert x["frames"] == 8 and x["threads"] == 2, x
        assert abs(x["audio_s"] - 8 * 0.08) < 1e-6, x
        assert x["rtf"] > 0 and x["peak_rss_mb"] > 20, x
        assert x["talker_ms_per_frame"] > 0 and x["predictor_ms_per_frame"] > 0 and x["decoder_ms_per_frame"] > 0, x
        assert 0 < x["first_chunk_s"] <= x["compute_s"] + 1e-6, x
