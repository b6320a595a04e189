"""vox live: speak text as it arrives on standard input (duplex streaming), to a WAV or a PCM stream."""

from __future__ import annotations

import argparse
import codecs
import os
import sys
import threading

from .common import (add_engine_options, add_synthesis_options, add_voice_choice, check_output, int_in, open_engine,
                     pick_voice, synthesis_options)
from .outputs import write_stdout

EXAMPLES = """\
The text is read from standard input as it arrives (a pipe from an LLM, a terminal) and spoken while it
is still being written; the model decides the pieces (words for Qwen3-TTS, sentences for Kokoro).

examples:
  printf 'Hello. How are you?' | vox live -o out.wav
  some-llm --stream | vox live --model base-q8.tmod --voice me.tvoice --stream | ffplay -f f32le -ar 24000 -i -
  vox live --commit manual -o out.wav            # type, Ctrl-D: one recording of everything
  vox live --idle-ms 700 --stream ...            # a typing pause of 0.7 s speaks what waits
"""


def register(sub) -> None:
    p = sub.add_parser("live", help="speak text as it arrives on stdin (duplex streaming)",
                       description="Duplex streaming from standard input: audio starts before the text ends.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("-o", "--output", metavar="WAV", help="write a WAV file (- for standard output) at the end")
    out.add_argument("--stream", action="store_true", help="write raw f32le PCM to stdout as it is produced")
    p.add_argument("--float", action="store_true", help="write 32-bit float WAV instead of 16-bit PCM")
    p.add_argument("--force", action="store_true", help="overwrite the output file (a regular file only)")
    p.add_argument("--commit", choices=("auto", "sentence", "manual"), default="auto",
                   help="when text goes to the model: auto (as soon as it can take it), sentence, manual (at the end)")
    p.add_argument("--idle-ms", type=int_in(0, 3_600_000, "--idle-ms"), default=None,
                   help="a pause in the input this long (ms) speaks what waits")
    p.add_argument("--utterance-gap-ms", type=int_in(0, 3_600_000, "--utterance-gap-ms"), default=None,
                   help="a pause this long closes the utterance; the next text starts a new one")
    add_voice_choice(p)
    add_engine_options(p)
    add_synthesis_options(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")
    p.set_defaults(func=run)


def _feed(d, errors: list) -> None:
    """Stdin -> the duplex stream, as the bytes arrive (a UTF-8 sequence cut by a read waits for its end)."""
    dec = codecs.getincrementaldecoder("utf-8")()
    try:
        fd = sys.stdin.fileno()
        while True:
            b = os.read(fd, 4096)
            text = dec.decode(b, final=not b)
            if text:
                d.write(text)
            if not b:
                break
        d.end()
    except BaseException as e:  # the main thread reports it
        errors.append(e)
        d.cancel()


def run(a) -> int:
    import numpy as np

    if sys.stdin is None:
        raise OSError("standard input is closed: vox live reads the text from it")
    if a.output:
        check_output(a.output, a.force)
    elif sys.stdout is None:
        raise OSError("standard output is closed: give -o FILE")
    with open_engine(a) as eng:
        opts = synthesis_options(eng, a)
        voice = pick_voice(eng, a)
        sr = eng.sample_rate
        errors: list = []
        parts, n = [], 0
        with eng.duplex(voice, commit=a.commit, idle_ms=a.idle_ms, utterance_gap_ms=a.utterance_gap_ms, seed=a.seed,
                        language=a.language, **opts) as d:
            t = threading.Thread(target=_feed, args=(d, errors), daemon=True)
            t.start()
            for c in d.audio():
                n += c.samples.size
                if a.stream:
                    write_stdout(c.samples.astype("<f4").tobytes())
                else:
                    parts.append(c.samples)
            t.join()
        if errors:
            raise errors[0]
    if a.output:
        from .outputs import write_wav

        write_wav(a.output, np.concatenate(parts) if parts else np.zeros(0, np.float32), sr, float32=a.float)
    if not a.quiet:
        print(f"vox live: {n / sr:.2f} s of audio" + (f" -> {a.output}" if a.output not in (None, "-") else ""),
              file=sys.stderr)
    return 0
