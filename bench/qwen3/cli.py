"""`vox bench` for a Qwen3-TTS model: vox and (optionally) the official code, each in its own process."""

from __future__ import annotations

import json
import os

from ..sides import side, table

COLUMNS = [("side", "{}"), ("device", "{}"), ("precision", "{}"), ("codec", "{}"), ("threads", "{}"), ("frames", "{}"), ("rtf", "{:.3f}"),
           ("first_chunk_s", "{:.3f}"), ("first_chunk_after_prompt_s", "{:.3f}"), ("talker_ms_per_frame", "{:.1f}"),
           ("predictor_ms_per_frame", "{:.1f}"), ("decoder_ms_per_frame", "{:.1f}"), ("peak_rss_mb", "{:.0f}"),
           ("vram_mb", "{:.0f}")]


def run(model: str, a) -> int:
    threads = a.threads or os.cpu_count() or 1
    common = ["--frames", str(a.frames), "--threads", str(threads)]
    sides = [("vox", model, ["--device", a.device])]
    if a.official:
        sides.append(("official", a.official, ["--dtype", a.official_dtype, "--official-device", a.official_device]))
    results = []
    for name, m, extra in sides:
        runs = [side([name, "--model", m, *common, *extra], "vox.bench.qwen3.run") for _ in range(max(a.runs, 1))]
        results.append(min(runs, key=lambda r: r["rtf"]))
    if a.json:
        print(json.dumps(results, indent=1))
        return 0
    print("RTF = compute time / audio time (lower is better; < 1 is faster than real time)")
    table(results, COLUMNS)
    if len(results) == 2:
        print(f"vox is {results[1]['rtf'] / results[0]['rtf']:.1f}x faster than the official code here (RTF ratio)")
    return 0
