"""vox bench: time synthesis (RTF, first chunk, peak memory, per-stage ms/frame), vox beside the official code."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

EXAMPLES = """\
examples:
  vox bench --model base06-q8.tmod --frames 60
  vox bench --model base06-q8.tmod --official ./q3-0b6 --frames 60 --threads 2
  python -m vox.bench.qwen3_models 0b6 --out ./q3-0b6      # a full-size random-weight 0.6B Base checkpoint
  vox build --model ./q3-0b6 --dtype bf16 --quant q8 -o base06-q8.tmod

Each side runs in its own process (peak RSS is its own). RTF = compute time / audio time: lower is
better, below 1 is faster than real time. VOX_PROFILE=1 also prints vox's per-stage profile.
"""

COLUMNS = [("side", "{}"), ("device", "{}"), ("precision", "{}"), ("threads", "{}"), ("frames", "{}"), ("rtf", "{:.3f}"),
           ("first_chunk_s", "{:.3f}"), ("first_chunk_after_prompt_s", "{:.3f}"), ("talker_ms_per_frame", "{:.1f}"),
           ("predictor_ms_per_frame", "{:.1f}"), ("decoder_ms_per_frame", "{:.1f}"), ("peak_rss_mb", "{:.0f}"),
           ("vram_mb", "{:.0f}")]


def register(sub) -> None:
    p = sub.add_parser("bench", help="measure speed: RTF, first chunk, memory, per stage; beside the official code",
                       description="Benchmark synthesis on this machine.", epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", "-m", required=True, help="the .tmod to time")
    p.add_argument("--official", metavar="DIR", help="also time the official code on this checkpoint directory")
    p.add_argument("--official-dtype", default="fp32", choices=("fp32", "bf16"))
    p.add_argument("--frames", type=int, default=60, help="frames to generate (80 ms each; default 60)")
    p.add_argument("--threads", type=int, default=0, help="threads for both sides (default: all CPUs)")
    p.add_argument("--runs", type=int, default=1, help="repeat each side and keep the fastest run")
    p.add_argument("--device", default="cpu", help="vox's device: cpu, auto, vulkan[:N] (VOX_PROFILE=gpu: the GPU "
                                                   "profile per shader on stderr)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=run)


def _side(args: list[str]) -> dict:
    r = subprocess.run([sys.executable, "-m", "vox.bench.qwen3_run", *args], capture_output=True, text=True)
    if os.environ.get("VOX_PROFILE"):   # the sides' profiles (VOX_PROFILE=1 / gpu) go to our stderr
        sys.stderr.write(r.stderr)
    if r.returncode != 0:
        raise RuntimeError(f"benchmark side failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def run(a) -> int:
    import os

    threads = a.threads or os.cpu_count() or 1
    common = ["--frames", str(a.frames), "--threads", str(threads)]
    sides = [("vox", a.model, ["--device", a.device])]
    if a.official:
        sides.append(("official", a.official, ["--dtype", a.official_dtype]))
    results = []
    for side, model, extra in sides:
        runs = [_side([side, "--model", model, *common, *extra]) for _ in range(max(a.runs, 1))]
        results.append(min(runs, key=lambda r: r["rtf"]))
    if a.json:
        print(json.dumps(results, indent=1))
        return 0
    print("RTF = compute time / audio time (lower is better; < 1 is faster than real time)")
    print(" | ".join(c for c, _ in COLUMNS))
    for r in results:
        cells = []
        for c, fmt in COLUMNS:
            v = r.get(c)
            if isinstance(v, dict):
                v = "+".join(str(x) for x in v.values())
            cells.append("-" if v is None else fmt.format(v))
        print(" | ".join(cells))
    if len(results) == 2:
        print(f"vox is {results[1]['rtf'] / results[0]['rtf']:.1f}x faster than the official code here (RTF ratio)")
    return 0
