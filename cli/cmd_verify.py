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

Kokoro models need no --official: the official KModel (kokoro 0.9.4) is loaded with the .tmod's own
weights (weight norm unfolded), and the numpy reference is compared with it stage by stage on a few
phoneme sentences (durations, predictor, encoders, the decoder teacher-forced, the audio).
Needs: pip install torch==2.13.0 transformers==4.57.3 loguru && pip install --no-deps kokoro==0.9.4

examples:
  vox verify --model kokoro.tmod
  vox verify --model kokoro.tmod --voice jm_kumo --json > rows.json
  vox verify --model base17-q8.tmod --official ./Qwen3-TTS-12Hz-1.7B-Base
  vox verify --model base17.tmod --official ./ckpt --ref-audio me.wav --ref-text "What I said."
  vox verify --model custom.tmod --official ./ckpt --json > rows.json
"""


def register(sub) -> None:
    p = sub.add_parser("verify", help="compare a model with the official implementation",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="the .tmod to verify")
    p.add_argument("--official", metavar="DIR",
                   help="the official checkpoint directory the model was converted from (Qwen3-TTS)")
    p.add_argument("--voice", help="Kokoro: the built-in voice to verify with (default jf_alpha)")
    p.add_argument("--ref-audio", metavar="WAV",
                   help="recording for the voice checks of a Base model (default: a synthetic speech-like signal)")
    p.add_argument("--ref-text", help="transcript of --ref-audio")
    p.add_argument("--max-new-tokens", type=int, default=24,
                   help="frames of the official generation the logits are compared on (default 24)")
    p.add_argument("--no-native", action="store_true", help="check only the reference, not the native core")
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    p.set_defaults(func=run)


def _family(path: str) -> str | None:
    from vox.formats import tmod

    try:
        with tmod.TmodFile(path) as f:
            return f.manifest.get("family")
    except Exception:  # the verifier below reports a broken model in its own words
        return None


def run(args) -> int:
    from vox.verify.qwen3.official import OfficialUnavailable
    from vox.verify.qwen3.runner import verify

    if _family(args.model) == "kokoro":
        return run_kokoro(args)
    if not args.official:
        raise ValueError("--official DIR (the checkpoint the model was converted from) is needed for this model")
    if args.max_new_tokens < 3:
        raise ValueError("--max-new-tokens must be at least 3 (one generated frame needs two tokens)")
    say = (lambda s: print(f"vox verify: {s}", file=sys.stderr)) if not args.json else (lambda s: None)
    try:
        rows = verify(args.model, args.official, ref_audio=args.ref_audio, ref_text=args.ref_text,
                      max_new_tokens=args.max_new_tokens, native=not args.no_native, say=say)
    except OfficialUnavailable as e:
        raise ValueError(str(e)) from None
    return report(rows, args)


def run_kokoro(args) -> int:
    from vox.verify.kokoro import official, runner

    if args.official:
        raise ValueError("--official is not used for Kokoro: the official model runs on the .tmod's own weights")
    say = (lambda s: print(f"vox verify: {s}", file=sys.stderr)) if not args.json else (lambda s: None)
    try:
        rows = runner.verify(args.model, voice=args.voice, say=say)
    except official.OfficialUnavailable as e:
        raise ValueError(str(e)) from None
    return report(rows, args)


def report(rows, args) -> int:
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
