"""vox bench: time synthesis (RTF, first chunk, peak memory, per-stage ms/frame), vox beside its peers:
the official code (Qwen3-TTS) or onnxruntime on the published ONNX (Kokoro)."""

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

Kokoro (the default model when --model is not given): vox beside onnxruntime on the published int8
ONNX and on its dequantized f32 rewrite (the `onnx` package builds it once), same text, voice and threads:
  vox bench --threads 2                    # default model, jm_kumo, int8 + f32 ONNX
  vox bench --model kokoro.tmod --onnx none --voice jf_alpha

The generator column says which math vox's decoder and generator ran: by default the generator's
resblocks as int8 dot products and the other convolutions as bf16 products on every SIMD kernel path
(int8+bf16), f32 on the scalar one; VOX_KOKORO_GEN=bf16 (or f32) vox bench ... times the other maths,
VOX_CPU=avx2 (or another path of `vox devices`) vox bench ... another kernel path.

Each side runs in its own process (peak RSS is its own). RTF = compute time / audio time: lower is
better, below 1 is faster than real time. VOX_PROFILE=1 also prints vox's per-stage profile.
"""

KOKORO_COLUMNS = [("side", "{}"), ("generator", "{}"), ("threads", "{}"), ("audio_s", "{:.2f}"), ("rtf", "{:.3f}"),
                  ("first_audio_short_s", "{:.3f}"), ("first_audio_paragraph_s", "{:.3f}"), ("load_s", "{:.2f}"),
                  ("peak_rss_mb", "{:.0f}")]

COLUMNS = [("side", "{}"), ("device", "{}"), ("precision", "{}"), ("threads", "{}"), ("frames", "{}"), ("rtf", "{:.3f}"),
           ("first_chunk_s", "{:.3f}"), ("first_chunk_after_prompt_s", "{:.3f}"), ("talker_ms_per_frame", "{:.1f}"),
           ("predictor_ms_per_frame", "{:.1f}"), ("decoder_ms_per_frame", "{:.1f}"), ("peak_rss_mb", "{:.0f}"),
           ("vram_mb", "{:.0f}")]


def register(sub) -> None:
    p = sub.add_parser("bench", help="measure speed: RTF, first chunk, memory, per stage; beside the official code",
                       description="Benchmark synthesis on this machine.", epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", "-m", help="the .tmod to time (default: the built-in Kokoro model, `vox models`)")
    p.add_argument("--official", metavar="DIR", help="also time the official code on this checkpoint directory")
    p.add_argument("--official-dtype", default="fp32", choices=("fp32", "bf16"))
    p.add_argument("--official-device", default="cpu", help="PyTorch device of the official side: cpu | cuda[:N]")
    p.add_argument("--frames", type=int, default=60, help="frames to generate (80 ms each; default 60)")
    p.add_argument("--threads", type=int, default=0, help="threads for both sides (default: all CPUs)")
    p.add_argument("--runs", type=int, default=1, help="repeat each side and keep the fastest run")
    p.add_argument("--device", default="cpu", help="vox's device: cpu, auto, vulkan[:N] (VOX_PROFILE=gpu: the GPU "
                                                   "profile per shader on stderr)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    k = p.add_argument_group("Kokoro")
    k.add_argument("--onnx", choices=("both", "int8", "f32", "none"), default="both",
                   help="onnxruntime peers to run beside vox (default: both)")
    k.add_argument("--voice", default=None, help="voice pack (default: the model's default speaker)")
    p.set_defaults(func=run)


def _side(args: list[str], module: str = "vox.bench.qwen3_run", stdin: str | None = None) -> dict:
    r = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, input=stdin)
    if os.environ.get("VOX_PROFILE"):   # the sides' profiles (VOX_PROFILE=1 / gpu) go to our stderr
        sys.stderr.write(r.stderr)
    if r.returncode != 0:
        raise RuntimeError(f"benchmark side failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _table(results: list[dict], columns) -> None:
    print(" | ".join(c for c, _ in columns))
    for r in results:
        cells = []
        for c, fmt in columns:
            v = r.get(c)
            if isinstance(v, dict):
                v = "+".join(str(x) for x in v.values())
            cells.append("-" if v is None else fmt.format(v))
        print(" | ".join(cells))


def run_kokoro(a, model: str, info: dict) -> int:
    import os

    from vox.bench.kokoro_run import frontend_spans

    threads = a.threads or os.cpu_count() or 1
    voice = a.voice or info.get("default_speaker") or "jm_kumo"
    common = ["--threads", str(threads), "--voice", voice, "--runs", str(max(a.runs, 1))]
    results = [_side(["vox", "--model", model, *common], "vox.bench.kokoro_run")]
    peers = {"both": ["int8", "f32"], "none": []}.get(a.onnx, [a.onnx])
    if peers:
        spans = json.dumps(frontend_spans())
        for m in peers:
            results.append(_side(["onnx", "--model", m, *common], "vox.bench.kokoro_run", stdin=spans))
    if a.json:
        print(json.dumps(results, indent=1))
        return 0
    print(f"Kokoro, voice {voice}, {threads} threads. RTF = compute time / audio time over a 3-sentence paragraph "
          "(lower is better); first audio: short sentence / paragraph")
    _table(results, KOKORO_COLUMNS)
    why = results[0].get("generator_why")
    if why:
        hint = "" if why.startswith("VOX_KOKORO_GEN") else "; VOX_KOKORO_GEN=int8|bf16|f32 asks for one"
        print(f"vox decoder/generator math: {results[0]['generator']} ({why}{hint})")
    for r in results[1:]:
        print(f"RTF {r['side']} / vox = {r['rtf'] / results[0]['rtf']:.2f} (above 1: vox is faster)")
    return 0


def run(a) -> int:
    import os

    import vox

    if a.model is None:
        from vox.models import ensure_default_model

        a.model = str(ensure_default_model())
    if not os.path.exists(a.model):
        raise FileNotFoundError(f"{a.model}: no such file")
    info = vox.inspect(a.model)
    if info.get("family") == "kokoro":
        from vox.formats.tmod import open_tmod

        with open_tmod(a.model) as f:
            info["default_speaker"] = f.manifest.get("default_speaker")
        return run_kokoro(a, a.model, info)
    threads = a.threads or os.cpu_count() or 1
    common = ["--frames", str(a.frames), "--threads", str(threads)]
    sides = [("vox", a.model, ["--device", a.device])]
    if a.official:
        sides.append(("official", a.official, ["--dtype", a.official_dtype, "--official-device", a.official_device]))
    results = []
    for side, model, extra in sides:
        runs = [_side([side, "--model", model, *common, *extra]) for _ in range(max(a.runs, 1))]
        results.append(min(runs, key=lambda r: r["rtf"]))
    if a.json:
        print(json.dumps(results, indent=1))
        return 0
    print("RTF = compute time / audio time (lower is better; < 1 is faster than real time)")
    _table(results, COLUMNS)
    if len(results) == 2:
        print(f"vox is {results[1]['rtf'] / results[0]['rtf']:.1f}x faster than the official code here (RTF ratio)")
    return 0
