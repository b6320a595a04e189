"""vox say: speak text with a model and a voice, to a WAV file or as a raw PCM stream."""

from __future__ import annotations

import argparse
import sys
import time

from .common import (add_engine_options, add_synthesis_options, add_voice_choice, check_output, open_engine, pick_voice,
                     read_text, synthesis_options)
from .outputs import write_stdout

EXAMPLES = """\
voices (one of; none: the model's default voice, e.g. Kokoro's jm_kumo):
  --voice v.tvoice                      a saved voice (vox voice create / speaker / design / pack)
  --speaker NAME [--instruct TEXT]      a built-in speaker (a CustomVoice model's, a Kokoro voice pack)
  --instruct TEXT                       a voice description, for a VoiceDesign model
  --ref-audio WAV --ref-text TEXT       clone on the fly (Base models)

examples:
  vox say "Hello there." -o hello.wav                    # the default model (Kokoro-82M; `vox models`)
  vox say --stdin --stream --model base-q8.tmod --voice me.tvoice | ffplay -f f32le -ar 24000 -ch_layout mono -i -
  vox say "Hello there." -o - > hello.wav               # the WAV on standard output
"""


def register(sub) -> None:
    from vox import families

    epilog = EXAMPLES + "\n".join(f.say_examples for f in families.all() if f.say_examples) + "\n"
    p = sub.add_parser("say", help="speak text (to a WAV file or a raw PCM stream)",
                       description="Synthesize speech. Audio is produced in chunks as it is ready; with --stream "
                                   "each chunk goes to stdout as raw float32 little-endian mono PCM. The family "
                                   "options below apply to models of that family only.",
                       epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("text", nargs="?", help="the text to speak (or --stdin)")
    p.add_argument("--stdin", action="store_true", help="read the text from standard input")
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("-o", "--output", metavar="WAV", help="write a WAV file (16-bit PCM; --float for 32-bit float); "
                                                          "- for standard output")
    out.add_argument("--stream", action="store_true", help="write raw f32le PCM to stdout as it is produced")
    p.add_argument("--float", action="store_true", help="write 32-bit float WAV instead of 16-bit PCM")
    p.add_argument("--force", action="store_true", help="overwrite the output file (a regular file only)")
    add_voice_choice(p)
    add_engine_options(p)
    add_synthesis_options(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress or summary on stderr")
    p.set_defaults(func=run)


def run(a) -> int:
    text = read_text(a)
    if a.output:
        check_output(a.output, a.force)
    elif sys.stdout is None:
        raise OSError("standard output is closed: give -o FILE")
    t0 = time.perf_counter()
    with open_engine(a) as eng:
        opts = synthesis_options(eng, a)
        voice = pick_voice(eng, a)
        sr = eng.sample_rate
        parts, n, first = [], 0, None
        show = not a.quiet and sys.stderr.isatty()
        with eng.session(voice, seed=a.seed, language=a.language, **opts) as s:
            s.feed(text)
            s.end()
            t_start = time.perf_counter()
            for c in s:
                if first is None:
                    first = time.perf_counter() - t_start
                n += c.samples.size
                if a.stream:
                    write_stdout(c.samples.astype("<f4").tobytes())
                else:
                    parts.append(c.samples)
                if show:
                    el = time.perf_counter() - t_start
                    sys.stderr.write(f"\r{n / sr:6.2f} s of audio in {el:5.1f} s (RTF {el / max(n / sr, 1e-9):.2f})")
                    sys.stderr.flush()
        compute = time.perf_counter() - t_start
    if show:
        sys.stderr.write("\n")
    if a.output:
        import numpy as np

        from .outputs import write_wav

        write_wav(a.output, np.concatenate(parts) if parts else np.zeros(0, np.float32), sr, float32=a.float)
    if not a.quiet:
        audio = n / sr
        print(f"vox say: {audio:.2f} s of audio in {compute:.2f} s (RTF {compute / max(audio, 1e-9):.2f}, lower is "
              f"faster; first chunk {0 if first is None else first * 1000:.0f} ms; total {time.perf_counter() - t0:.2f} s)"
              + (f" -> {a.output}" if a.output not in (None, "-") else ""), file=sys.stderr)
    return 0
