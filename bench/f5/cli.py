"""`vox bench` for an F5-TTS model: vox on one or more .tmods and (optionally) the official f5-tts code on
the checkpoint they came from, same text, reference, NFE and threads, each side in its own process."""

from __future__ import annotations

import json
import os

from ..sides import side, table

COLUMNS = [("side", "{}"), ("model", "{}"), ("precision", "{}"), ("quant", "{}"), ("threads", "{}"), ("nfe", "{}"),
           ("frames", "{}"), ("audio_s", "{:.2f}"), ("step_s", "{:.3f}"), ("vocos_s", "{:.3f}"), ("rtf", "{:.3f}"),
           ("peak_rss_mb", "{:.0f}")]


def run(model: str, a) -> int:
    threads = a.threads or os.cpu_count() or 1
    models = [model, *(a.f5_also or [])]
    results = []
    for nfe in a.nfe or [32]:
        common = ["--nfe", str(nfe), "--threads", str(threads)]
        sides = [("vox", m, ["--device", a.device]) for m in models]
        if a.official:
            sides.append(("official", a.official, []))
        for name, m, extra in sides:
            runs = [side([name, "--model", m, *common, *extra], "vox.bench.f5.run") for _ in range(max(a.runs, 1))]
            results.append(min(runs, key=lambda r: r["step_s"]))
    if a.json:
        print(json.dumps(results, indent=1))
        return 0
    print("F5-TTS: step_s = DiT seconds per NFE step (both guidance branches); RTF = compute time / generated audio "
          "time (lower is better)")
    table(results, COLUMNS)
    for nfe in a.nfe or [32]:
        off = [r for r in results if r["side"] == "official" and r["nfe"] == nfe]
        for r in (r for r in results if r["side"] == "vox" and r["nfe"] == nfe and off):
            print(f"nfe {nfe}, {r['model']}: {off[0]['step_s'] / r['step_s']:.2f}x faster per step, "
                  f"RTF {off[0]['rtf'] / r['rtf']:.2f}x lower than the official code")
    return 0
