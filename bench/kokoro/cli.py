"""`vox bench` for a Kokoro model: vox beside onnxruntime on the published int8 ONNX and its f32
rewrite, same text, voice and threads, each side in its own process."""

from __future__ import annotations

import json
import os

from ..sides import side, table

COLUMNS = [("side", "{}"), ("generator", "{}"), ("threads", "{}"), ("audio_s", "{:.2f}"), ("rtf", "{:.3f}"),
           ("first_audio_short_s", "{:.3f}"), ("first_audio_paragraph_s", "{:.3f}"), ("load_s", "{:.2f}"),
           ("peak_rss_mb", "{:.0f}")]


def run(model: str, a) -> int:
    from vox.formats.tmod import open_tmod

    from .run import frontend_spans

    with open_tmod(model) as f:
        default = f.manifest.get("default_speaker")
    threads = a.threads or os.cpu_count() or 1
    voice = a.voice or default or "jm_kumo"
    common = ["--threads", str(threads), "--voice", voice, "--runs", str(max(a.runs, 1))]
    results = [side(["vox", "--model", model, *common], "vox.bench.kokoro.run")]
    peers = {"both": ["int8", "f32"], "none": []}.get(a.onnx, [a.onnx])
    if peers:
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            print("vox bench: onnxruntime is not installed, so the peer sides are skipped (pip install "
                  "'vox[bench]' installs it)")
            peers = []
    if peers:
        spans = json.dumps(frontend_spans())
        for m in peers:
            results.append(side(["onnx", "--model", m, *common], "vox.bench.kokoro.run", stdin=spans))
    if a.json:
        print(json.dumps(results, indent=1))
        return 0
    print(f"Kokoro, voice {voice}, {threads} threads. RTF = compute time / audio time over a 3-sentence paragraph "
          "(lower is better); first audio: short sentence / paragraph")
    table(results, COLUMNS)
    why = results[0].get("generator_why")
    if why:
        hint = "" if why.startswith("VOX_KOKORO_GEN") else "; VOX_KOKORO_GEN=int8|bf16|f32 asks for one"
        print(f"vox decoder/generator math: {results[0]['generator']} ({why}{hint})")
    for r in results[1:]:
        print(f"RTF {r['side']} / vox = {r['rtf'] / results[0]['rtf']:.2f} (above 1: vox is faster)")
    return 0
