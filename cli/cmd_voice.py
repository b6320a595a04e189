"""vox voice: make a voice file (.tvoice): clone a recording, pick a built-in speaker, or design one."""

from __future__ import annotations

import argparse
import os
import sys

from .common import add_engine_options, check_output, open_engine

EXAMPLES = """\
examples:
  vox voice create ref.wav --text "What the recording says." --model base-q8.tmod -o me.tvoice
  vox voice create ref.wav --x-vector-only --model base-q8.tmod -o me-xvec.tvoice
  vox voice speaker --speaker aiden --instruct "Speak slowly" --model custom.tmod -o aiden.tvoice
  vox voice design "A deep, calm male voice" --model design.tmod -o deep.tvoice
  vox voice pack voices_ja.npz --entry jm_kumo -o kumo.tvoice        (Kokoro)
  vox voice pack af_heart.pt -o heart.tvoice                         (Kokoro, an official voice)
  vox voice pack kokoro.tmod --entry jf_alpha -o alpha.tvoice        (a built-in voice, exported)
A Qwen3 voice works with models converted from the same checkpoint (any precision); a Kokoro style
pack with any Kokoro v1.0 model.
"""


def register(sub) -> None:
    p = sub.add_parser("voice", help="make a voice (.tvoice): clone, speaker, design",
                       description="Make a voice file.", epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    vs = p.add_subparsers(dest="voice_command", metavar="ACTION")

    c = vs.add_parser("create", help="clone a voice from a recording (Base models)",
                      description="Clone a voice from a recording, natively: resampled to 24 kHz, speaker "
                                  "embedding (ECAPA-TDNN), reference codes (Mimi encoder).")
    c.add_argument("audio", metavar="WAV", help="the recording (5-15 s of clean speech works best)")
    c.add_argument("--text", help="the transcript of the recording (needed unless --x-vector-only)")
    c.add_argument("--x-vector-only", action="store_true", help="use the speaker embedding alone (no transcript)")
    c.add_argument("--name", help="a display name")
    c.add_argument("--language", help="the voice's default language (default auto)")
    _common(c)

    s = vs.add_parser("speaker", help="a built-in speaker of a CustomVoice model")
    s.add_argument("--speaker", required=True, help="speaker name (vox inspect MODEL lists them)")
    s.add_argument("--instruct", help="a style instruction, e.g. \"Speak slowly\" (1.7B models)")
    _common(s)

    d = vs.add_parser("design", help="a voice from a description (VoiceDesign models)")
    d.add_argument("description", help="what the voice sounds like")
    _common(d)

    from vox import families

    for fam in families.all():   # the families' own actions (e.g. Kokoro's `pack`)
        fam.add_voice_commands(vs)
    p.set_defaults(func=run)


def _common(p) -> None:
    p.add_argument("-o", "--output", required=True, metavar="TVOICE", help="the .tvoice to write")
    p.add_argument("--force", action="store_true", help="overwrite the output file")
    add_engine_options(p)


def run(a) -> int:
    if not a.voice_command:
        raise ValueError("say what to do: vox voice create | speaker | design | ... (vox voice --help)")
    if getattr(a, "voice_func", None):
        return a.voice_func(a)
    check_output(a.output, a.force)
    with open_engine(a) as eng:
        if a.voice_command == "create":
            if not a.x_vector_only and not a.text:
                raise ValueError("--text (the transcript of the recording) is needed, or --x-vector-only")
            clone = {"x_vector_only": True} if a.x_vector_only else {}
            voice = eng.clone_voice(a.audio, a.text, name=a.name or os.path.splitext(os.path.basename(a.audio))[0],
                                    language=a.language, **clone)
        elif a.voice_command == "speaker":
            voice = eng.speaker_voice(a.speaker, a.instruct)
        else:
            voice = eng.design_voice(a.description)
        voice.save(a.output)
    i = voice.info
    frames = i["arrays"].get("ref_codes", [0])[0]
    print(f"vox voice: wrote {a.output} ({i['mode']} voice {i['name']!r}"
          + (f", {frames} reference frames" if frames else "") + ")", file=sys.stderr)
    return 0
