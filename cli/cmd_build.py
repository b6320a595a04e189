"""vox build: convert an official checkpoint directory to a .tmod model file."""

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

examples:
  vox build --model Qwen3-TTS-12Hz-1.7B-Base --dtype bf16 --quant q8 -o base17-q8.tmod
  vox build --model Qwen3-TTS-12Hz-0.6B-CustomVoice --dtype f32 -o custom06-f32.tmod
"""


def register(sub) -> None:
    p = sub.add_parser(
        "build", help="convert an official checkpoint to a .tmod model file",
        description="Convert an official checkpoint directory (Hugging Face layout) to one .tmod file: "
                    "weights in the chosen precision, configs, tokenizer, speakers and languages.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, metavar="DIR", help="the official checkpoint directory")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the .tmod to write")
    p.add_argument("--dtype", choices=("f32", "f16", "bf16"), default="bf16",
                   help="dtype of embeddings and unquantized weights (default: bf16, the official checkpoints' own)")
    p.add_argument("--quant", choices=("none", "q8", "q4"), default="none",
                   help="block quantization of the talker and code-predictor linear layers (default: none)")
    p.add_argument("--codec-dtype", choices=("f32", "f16", "bf16"), default="f32",
                   help="dtype of the codec and speaker-encoder weights (default: f32)")
    p.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    p.set_defaults(func=run)


def run(args) -> int:
    from vox.cli.progress import Progress
    from vox.convert import convert, work_bytes
    from vox.inspection import format_bytes

    if os.path.exists(args.output) and not args.force:
        raise FileExistsError(f"{args.output} exists (use --force to overwrite)")
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
