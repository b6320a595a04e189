"""vox verify: compare a converted model with the official implementation, check by check."""

from __future__ import annotations

import argparse
import json
import sys

HELP = """\
Runs the teacher-forced, stage-by-stage comparison of the conformance suite on any model: the
.tmod (as converted by `vox build`) against the official PyTorch code (qwen-tts 0.1.1) on the
checkpoint directory it came from. Prints one row per check with its measured error and its limit
from the tolerance table; exits with status 1 if any row is out of tolerance.

Needs the official code: pip install torch==2.13.0 && pip install qwen-tts==0.1.1

examples:
  vox verify --model base17-q8.tmod --official ./Qwen3-TTS-12Hz-1.7B-Base
  vox verify --model base17.tmod --official ./ckpt --ref-audio me.wav --ref-text "What I said."
  vox verify --model custom.tmod --official ./ckpt --json > rows.json
"""


def register(sub) -> None:
    p = sub.add_parser("verify", help="compare a model with the official implementation",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="the .tmod to verify")
    p.add_argument("--official", required=True, metavar="DIR",
                   help="the official checkpoint directory the model was converted from")
    p.add_argument("--ref-audio", metavar="WAV",
                   help="recording for the voice checks of a Base model (default: a synthetic speech-like signal)")
    p.add_argument("--ref-text", help="transcript of --ref-audio")
    p.add_argument("--max-new-tokens", type=int, default=24,
                   help="frames of the official generation the logits are compared on (default 24)")
    p.add_argument("--no-native", action="store_true", help="check only the reference, not the native core")
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    p.set_defaults(func=run)


def run(args) -> int:
    from vox.verify.qwen3.official import OfficialUnavailable
    from vox.verify.qwen3.runner import verify

    if args.max_new_tokens < 3:
        raise ValueError("--max-new-tokens must be at least 3 (one generated frame needs two tokens)")
    say = (lambda s: print(f"vox verify: {s}", file=sys.stderr)) if not args.json else (lambda s: None)
    try:
        rows = verify(args.model, args.official, ref_audio=args.ref_audio, ref_text=args.ref_text,
                      max_new_tokens=args.max_new_tokens, native=not args.no_native, say=say)
    except OfficialUnavailable as e:
        raise ValueError(str(e)) from None
    failed = [r for r in rows if not r.passed]
    if args.json:
        print(json.dumps([dict(check=r.check, subject=r.subject, backend=r.backend, value=r.value, limit=r.limit,
                               passed=r.passed, note=r.note) for r in rows], indent=1))
    else:
        from vox.verify.report import print_rows

        print_rows(rows)
        print(f"{len(rows)} rows, {len(rows) - len(failed)} within tolerance"
              + (f", {len(failed)} OUT OF TOLERANCE" if failed else ""))
    return 1 if failed else 0
