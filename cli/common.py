"""Options and helpers shared by the synthesis commands (say, voice, bench)."""

from __future__ import annotations

import argparse
import os
import sys

from .outputs import check_output  # noqa: F401  (the commands import it from here)

# Bounds of the engine flags (vox.h vox_engine_params): checked here so a mistake is one line.
THREADS = (0, 1024)
NICE = (-20, 19)
SEED = (0, 2**64 - 1)
# The text read by --stdin (or given) is bounded: a book is ~1 MB; 64 MB is not text to speak at once.
MAX_TEXT_BYTES = 64 << 20


def int_in(lo: int, hi: int, what: str):
    """An argparse type: an integer in [lo, hi] (a clear message instead of an OverflowError later)."""
    def parse(s: str) -> int:
        try:
            v = int(s, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, not {s!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{what} must be in [{lo}, {hi}], not {v}")
        return v
    return parse


def add_engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine")
    g.add_argument("--model", "-m", metavar="FILE",
                   help="the .tmod model (see `vox build`; default: the built-in Kokoro-82M, `vox models`)")
    g.add_argument("--device", default="cpu",
                   help="compute device: cpu (default), auto, gpu[:N] or vulkan[:N] (vox devices lists them), then "
                        ",strict (too little video memory is an error, not a fallback) and the model's options, "
                        "e.g. ,codec=cpu")
    g.add_argument("--threads", type=int_in(*THREADS, "--threads"), default=0,
                   help="compute threads (default: every CPU this process may use)")
    g.add_argument("--affinity", metavar="CPUS", help='pin the compute threads to these CPUs, e.g. "0-3,6"')
    g.add_argument("--nice", type=int_in(*NICE, "--nice"), default=0,
                   help="run the compute threads at this added nice value (-20 to 19)")


def add_voice_choice(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("voice (one of; none: the model's default voice)")
    g.add_argument("--voice", "-v", metavar="TVOICE", help="a saved voice (vox voice create / speaker / design)")
    g.add_argument("--speaker", help="a built-in speaker (vox inspect MODEL lists them)")
    g.add_argument("--instruct", help="a style instruction with --speaker, or a voice description (VoiceDesign)")
    g.add_argument("--ref-audio", metavar="WAV", help="clone a voice on the fly from a recording")
    g.add_argument("--ref-text", help="the transcript of --ref-audio (without it: the speaker embedding alone)")


def add_synthesis_options(p: argparse.ArgumentParser) -> None:
    """--seed, --language, and every family's flags (each says which family it is for)."""
    from vox import families

    g = p.add_argument_group("synthesis (defaults: the model's, then the voice's)")
    g.add_argument("--seed", type=int_in(*SEED, "--seed"), default=None,
                   help="the same seed gives the same audio (default: the voice's stored seed, else 0)")
    g.add_argument("--language", help='language of the text: "auto" or one of the model\'s (vox inspect)')
    seen: set[str] = set()
    for fam in families.all():
        fg = p.add_argument_group(f"{fam.title} options")
        for f in fam.say_flags:
            if f.flag in seen:
                continue
            seen.add(f.flag)
            kw: dict = {"help": f.help, "dest": f.dest}
            if f.action:
                kw["action"] = f.action
            else:
                kw["type"] = f.type or str
            if f.choices:
                kw["choices"] = f.choices
            if f.metavar:
                kw["metavar"] = f.metavar
            fg.add_argument(f.flag, **kw)


def synthesis_options(eng, a) -> dict:
    """The engine's family's options from the flags; a flag of another family is an error."""
    from vox import families
    from vox.errors import InvalidArgument

    own = {f.dest for f in eng.family.say_flags}
    foreign = []
    for fam in families.all():
        for f in fam.say_flags:
            v = getattr(a, f.dest, None)
            if f.dest not in own and v is not None and v is not False and v != [] and f.flag not in foreign:
                foreign.append(f.flag)
    if foreign:
        raise InvalidArgument(f"{', '.join(foreign)}: not for {eng.family.title} models (this model is "
                              f"{eng.family.title})")
    return eng.family.options_from_args(a)


def pick_voice(eng, a):
    given = [x for x in ("voice", "speaker", "ref_audio") if getattr(a, x, None)]
    if len(given) > 1:
        raise ValueError("give one voice: --voice, --speaker or --ref-audio")
    if a.voice:
        if not os.path.exists(a.voice):
            raise FileNotFoundError(f"{a.voice}: no such file")
        return eng.load_voice(a.voice)
    if a.speaker:
        return eng.speaker_voice(a.speaker, a.instruct)
    if a.ref_audio:
        clone = {} if a.ref_text else {"x_vector_only": True}
        return eng.clone_voice(a.ref_audio, a.ref_text, **clone)
    if a.instruct and eng.capabilities.get("design"):
        return eng.design_voice(a.instruct)
    from vox.errors import InvalidArgument

    try:
        return eng.default_voice()
    except InvalidArgument:
        # the library's message names no flags: say which of `vox say`'s voice flags the model needs
        if eng.capabilities.get("speakers") and eng.speakers:
            raise InvalidArgument(f"this model needs --speaker (one of: {', '.join(eng.speakers)})") from None
        ways = ["--voice v.tvoice"] + (["--ref-audio WAV --ref-text TEXT"] if eng.capabilities.get("clone") else [])
        raise InvalidArgument(f"this model needs a voice: {', or '.join(ways)}") from None


def open_engine(a):
    import vox

    if a.model is None:  # the default model, built into the cache on first use (vox.models)
        from vox.models import ensure_default_model

        a.model = str(ensure_default_model(quiet=getattr(a, "quiet", False)))
    if not os.path.exists(a.model):
        raise FileNotFoundError(f"{a.model}: no such file")
    res = vox.Resources(device=a.device, threads=a.threads, cpu_affinity=a.affinity, nice=a.nice)
    return vox.Engine(a.model, resources=res)


def read_text(a) -> str:
    if a.stdin:
        if sys.stdin is None:
            raise OSError("standard input is closed: give the text as an argument")
        raw = sys.stdin.buffer.read(MAX_TEXT_BYTES + 1)
        if len(raw) > MAX_TEXT_BYTES:
            raise ValueError(f"the text on standard input is over {MAX_TEXT_BYTES >> 20} MB")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"standard input is not UTF-8 text (at byte {e.start})") from None
    elif a.text is not None:
        text = a.text
    else:
        raise ValueError("give the text to speak, or --stdin")
    if not text.strip():
        raise ValueError("the text is empty: nothing to speak")
    return text
