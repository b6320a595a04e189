"""vox verify: compare a converted model with the official implementation, check by check."""

from __future__ import annotations

import argparse
import json
import math
import sys

HELP = """\
Runs the teacher-forced, stage-by-stage comparison of the conformance suite on any model: the
.tmod (as converted by `vox build`) against the official PyTorch code, the way its family compares:

Qwen3-TTS: against qwen-tts 0.1.1 on the checkpoint directory the model came from (--official).
Needs: pip install torch==2.13.0 && pip install qwen-tts==0.1.1

Kokoro: no --official: the official KModel (kokoro 0.9.4) is loaded with the .tmod's own weights
(weight norm unfolded), and the numpy reference is compared with it stage by stage on a few phoneme
sentences (durations, predictor, encoders, the decoder teacher-forced, the audio).
Needs: pip install torch==2.13.0 transformers==4.57.3 loguru && pip install --no-deps kokoro==0.9.4

F5-TTS: no --official: the official CFM and Vocos (f5-tts 1.1.22, vocos 0.1.0) are loaded with the
.tmod's own weights, and the core is compared with them: the tokenizer, the mel, the text encoder and
the DiT's two guidance branches, Vocos, and a clone of a recording end to end (the same Philox noise).
bf16 dot products and q8 weights are held end to end against the numpy reference on the same weights.
The official loaders read files: a float32 copy of the weights (1.3 GB for F5TTS_v1_Base) is written
to a temporary folder ($TMPDIR, else /tmp) and removed at the end.
Needs: pip install torch==2.13.0 && pip install f5-tts==1.1.22 vocos==0.1.0

Prints one row per check with its measured error and its limit from the tolerance table; exits
with status 1 if any row is out of tolerance.

examples:
  vox verify --model kokoro.tmod
  vox verify --model kokoro.tmod --voice jm_kumo --json > rows.json
  vox verify --model base17-q8.tmod --official ./Qwen3-TTS-12Hz-1.7B-Base
  vox verify --model base17.tmod --official ./ckpt --ref-audio me.wav --ref-text "What I said."
  vox verify --model f5-v1-q8.tmod --ref-audio me.wav --ref-text "What I said." --nfe-step 7
"""


def register(sub) -> None:
    from vox import families

    p = sub.add_parser("verify", help="compare a model with the official implementation",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="the .tmod to verify")
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    for fam in families.all():
        fam.add_verify_arguments(p.add_argument_group(fam.title))
    p.set_defaults(func=run)


def run(args) -> int:
    from vox import families
    from vox.formats import tmod

    with tmod.TmodFile(args.model) as f:
        fam = families.get(f.manifest["family"])
    say = (lambda s: print(f"vox verify: {s}", file=sys.stderr)) if not args.json else (lambda s: None)
    return report(fam.verify(args.model, args, say), args)


def report(rows, args) -> int:
    failed = [r for r in rows if not r.passed]
    if args.json:   # strict JSON: a value that is not finite (a length mismatch is inf) is null
        def num(v):
            return None if isinstance(v, float) and not math.isfinite(v) else v

        print(json.dumps([dict(check=r.check, subject=r.subject, backend=r.backend, value=num(r.value),
                               limit=num(r.limit), passed=r.passed, note=r.note) for r in rows], indent=1,
                         allow_nan=False))
    else:
        from vox.verify.report import print_rows

        print_rows(rows)
        print(f"{len(rows)} rows, {len(rows) - len(failed)} within tolerance"
              + (f", {len(failed)} OUT OF TOLERANCE" if failed else ""))
    return 1 if failed else 0
