"""vox bench: time synthesis (RTF, first chunk, peak memory, per-stage times), vox beside its peers
(the official code for Qwen3-TTS, onnxruntime on the published ONNX for Kokoro)."""

from __future__ import annotations

import argparse

EXAMPLES = """\
examples:
  vox bench --threads 2                    # the default model (Kokoro), beside onnxruntime int8 + f32
  vox bench --model kokoro.tmod --onnx none --voice jf_alpha
  vox bench --model base06-q8.tmod --official ./q3-0b6 --frames 60 --threads 2
  python -m vox.bench.qwen3.models 0b6 --out ./q3-0b6      # a full-size random-weight 0.6B Base checkpoint
  python -m vox.bench.f5.models --out ./f5 --tmod f32 --tmod bf16 --tmod f32+q8   # full-size random F5TTS_v1_Base
  vox bench --model f5/f5-v1-f32.tmod --f5-also f5/f5-v1-bf16.tmod --official f5/F5TTS_v1_Base --nfe 7 --nfe 32 --threads 2

Kokoro: the generator column says which math vox's decoder and generator ran: by default the
generator's resblocks as int8 dot products and the other convolutions as bf16 products on every SIMD
kernel path (int8+bf16), f32 on the scalar one; VOX_KOKORO_GEN=bf16 (or f32) vox bench ... times the
other maths, VOX_CPU=avx2 (or another path of `vox devices`) vox bench ... another kernel path.
Each side runs in its own process (peak RSS is its own). RTF = compute time / audio time: lower is
better, below 1 is faster than real time. VOX_PROFILE=1 also prints vox's per-stage profile.
The peers are optional: `pip install 'vox[bench]'` installs onnxruntime and onnx; the official Qwen3-TTS
code is `pip install torch==2.13.0 && pip install qwen-tts==0.1.1`.
"""


def register(sub) -> None:
    from vox import families

    p = sub.add_parser("bench", help="measure speed: RTF, first chunk, memory, per stage; beside the official code",
                       description="Benchmark synthesis on this machine.", epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", "-m", help="the .tmod to time (default: the built-in Kokoro model, `vox models`)")
    p.add_argument("--threads", type=int, default=0, help="threads for every side (default: all CPUs)")
    p.add_argument("--runs", type=int, default=1, help="repeat each side and keep the fastest run")
    p.add_argument("--device", default="cpu", help="vox's device: cpu, auto, vulkan[:N] (VOX_PROFILE=gpu: the GPU "
                                                   "profile per shader on stderr)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    for fam in families.all():
        fam.add_bench_arguments(p.add_argument_group(fam.title))
    p.set_defaults(func=run)


def run(a) -> int:
    import os

    from vox import families
    from vox.formats.tmod import open_tmod

    if a.model is None:
        from vox.models import ensure_default_model

        a.model = str(ensure_default_model())
    if not os.path.exists(a.model):
        raise FileNotFoundError(f"{a.model}: no such file")
    with open_tmod(a.model) as f:
        fam = families.get(f.manifest["family"])
    return fam.bench(a.model, a)
