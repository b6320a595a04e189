"""vox say: speak text with a model and a voice, to a WAV file or as a raw PCM stream."""

from __future__ import annotations

import argparse
import os
import sys
import time

from .common import add_engine_options, add_sampling_options, check_output, open_engine, read_text, sampling_kwargs

EXAMPLES = """\
voices (one of):
  --voice v.tvoice                      a saved voice (vox voice create / speaker / design)
  --speaker NAME [--instruct TEXT]      a built-in speaker of a CustomVoice model
  --instruct TEXT                       a voice description, for a VoiceDesign model
  --ref-audio WAV --ref-text TEXT       clone on the fly (Base models)

examples:
  vox say "Hello there." -o hello.wav                    # the default model (Kokoro-82M; `vox models`)
  vox say "Hello there." --model base-q8.tmod --voice me.tvoice -o hello.wav
  vox say --stdin --stream --model base-q8.tmod --voice me.tvoice | ffplay -f f32le -ar 24000 -ch_layout mono -i -
  vox say "Hello." --model custom.tmod --speaker aiden --instruct "Speak slowly" -o out.wav
  vox say "Hello." --model design.tmod --instruct "A deep, calm male voice" -o out.wav
  vox say "Read the README." --model kokoro.tmod --speaker jm_kumo --speed 1.1 --pronounce README="ɹˈidmˌi" -o out.wav
  vox say "həlˈO." --model kokoro.tmod --phonemes -o out.wav
"""


def register(sub) -> None:
    p = sub.add_parser("say", help="speak text (to a WAV file or a raw PCM stream)",
                       description="Synthesize speech. Audio is produced in chunks as it is ready; with --stream "
                                   "each chunk goes to stdout as raw float32 little-endian mono PCM.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("text", nargs="?", help="the text to speak (or --stdin)")
    p.add_argument("--stdin", action="store_true", help="read the text from standard input")
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("-o", "--output", metavar="WAV", help="write a WAV file (16-bit PCM; --float for 32-bit float)")
    out.add_argument("--stream", action="store_true", help="write raw f32le PCM to stdout as it is produced")
    p.add_argument("--float", action="store_true", help="write 32-bit float WAV instead of 16-bit PCM")
    p.add_argument("--force", action="store_true", help="overwrite the output file")
    g = p.add_argument_group("voice")
    g.add_argument("--voice", "-v", metavar="TVOICE")
    g.add_argument("--speaker")
    g.add_argument("--instruct")
    g.add_argument("--ref-audio", metavar="WAV")
    g.add_argument("--ref-text")
    k = p.add_argument_group("kokoro")
    k.add_argument("--speed", type=float, help="speaking rate (1 = normal, 0.25 to 4)")
    k.add_argument("--pronunciations", metavar="FILE.json", help="a JSON object word -> phonemes, applied before G2P")
    k.add_argument("--pronounce", metavar="WORD=PHONEMES", action="append", default=[],
                   help="one pronunciation override (repeatable; wins over --pronunciations)")
    k.add_argument("--phonemes", action="store_true", help="the text is already phonemes (Kokoro's symbol set)")
    k.add_argument("--pause-ms", type=int, help="pause between sentences after trimming their silence (default 200)")
    add_engine_options(p)
    add_sampling_options(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress or summary on stderr")
    p.set_defaults(func=run)


def pick_voice(eng, a):
    given = [x for x in ("voice", "speaker", "ref_audio") if getattr(a, x)]
    if len(given) > 1:
        raise ValueError("give one voice: --voice, --speaker or --ref-audio")
    if a.voice:
        if not os.path.exists(a.voice):
            raise FileNotFoundError(f"{a.voice}: no such file")
        return eng.load_voice(a.voice)
    if a.speaker:
        return eng.speaker_voice(a.speaker, a.instruct)
    if a.ref_audio:
        return eng.clone_voice(a.ref_audio, a.ref_text, x_vector_only=not a.ref_text)
    if eng.info.get("family") == "kokoro":
        default = eng.info.get("default_speaker") or (eng.speakers[0] if eng.speakers else None)
        if not default:
            raise ValueError("this Kokoro model has no built-in voices: give --voice v.tvoice")
        return eng.speaker_voice(default)
    if eng.capabilities.get("design"):
        return eng.design_voice(a.instruct or "")
    if eng.capabilities.get("speakers"):
        raise ValueError(f"this model needs --speaker (one of: {', '.join(eng.speakers)})")
    raise ValueError("this model needs a voice: --voice v.tvoice, or --ref-audio WAV --ref-text TEXT")


def kokoro_kwargs(eng, a) -> dict:
    """--speed, --pronunciations, --pronounce, --phonemes, --pause-ms for a Kokoro model; an error for
    another family, which has no such parameters."""
    given = [f"--{n}" for n, v in (("speed", a.speed), ("pronunciations", a.pronunciations),
                                   ("pronounce", a.pronounce), ("phonemes", a.phonemes), ("pause-ms", a.pause_ms)) if v]
    if eng.info.get("family") != "kokoro":
        if given:
            raise ValueError(f"{', '.join(given)}: only for Kokoro models ({eng.info.get('family')} model given)")
        return {}
    pron: dict = {}
    if a.pronunciations:
        from vox.convert.kokoro_frontend import read_pronunciations

        pron = read_pronunciations(a.pronunciations)  # bounded, regular files only; FormatError names the file
    for item in a.pronounce:
        word, sep, ph = item.partition("=")
        if not sep or not word.strip() or not ph.strip():
            raise ValueError(f"--pronounce {item!r}: write WORD=PHONEMES")
        pron[word.strip()] = ph.strip()
    if pron and a.phonemes:
        raise ValueError("--pronounce/--pronunciations apply to text, not to --phonemes input")
    return {"speed": a.speed, "pronunciations": pron or None, "phonemes": a.phonemes or None, "pause_ms": a.pause_ms}


def run(a) -> int:
    text = read_text(a)
    if not text.strip():
        raise ValueError("the text is empty: nothing to speak")
    if a.output:
        check_output(a.output, a.force)
    t0 = time.perf_counter()
    with open_engine(a) as eng:
        kw = kokoro_kwargs(eng, a)
        voice = pick_voice(eng, a)
        if eng.info.get("family") == "kokoro":
            sampling = {}
        else:
            sampling = sampling_kwargs(a)
        sr = eng.sample_rate
        parts, n, first = [], 0, None
        show = not a.quiet and sys.stderr.isatty()
        with eng.session(voice, seed=a.seed, language=a.language, decoder=a.decoder, **sampling, **kw) as s:
            s.feed(text)
            s.end()
            t_start = time.perf_counter()
            for c in s:
                if first is None:
                    first = time.perf_counter() - t_start
                n += c.samples.size
                if a.stream:
                    sys.stdout.buffer.write(c.samples.astype("<f4").tobytes())
                    sys.stdout.buffer.flush()
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

        from .wavio import write_wav

        write_wav(a.output, np.concatenate(parts) if parts else np.zeros(0, np.float32), sr, float32=a.float)
    if not a.quiet:
        audio = n / sr
        print(f"vox say: {audio:.2f} s of audio in {compute:.2f} s (RTF {compute / max(audio, 1e-9):.2f}, lower is "
              f"faster; first chunk {0 if first is None else first * 1000:.0f} ms; total {time.perf_counter() - t0:.2f} s)"
              + (f" -> {a.output}" if a.output else ""), file=sys.stderr)
    return 0
