"""The F5-TTS family object: typed options (mirroring core/src/f5/family.c's table, named as in the official
code), the CLI's short flags, the voice schema, manifest checks, conversion (`vox build --model
model_*.safetensors --f5-vocab vocab.txt --f5-vocos DIR`), inspection and the benchmark hook (`vox bench
--nfe N --f5-also TMOD --official DIR`). A voice made for another mel is made again from its recording
by the session itself (core/src/f5/family.c), so there is no separate rebuild command."""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import InvalidArgument
from ..base import Family, Flag, OptionsBase, opt

if TYPE_CHECKING:
    from ...engine import Engine, Voice


@dataclass
class Options(OptionsBase):
    """F5-TTS synthesis options, named as f5_tts.infer.utils_infer names them; None: the model's defaults
    (InferDefaults: 32 steps, CFG 2, sway -1, speed 1, 0.15 s cross-fade, target rms 0.1, EPSS on)."""

    nfe_step: int | None = opt("flow-matching (Euler) steps; with use_epss, 5/6/7/10/12/16 steps take the EPSS "
                               "time grid", 1, 256)
    cfg_strength: float | None = opt("classifier-free guidance: v_cond + (v_cond - v_uncond) * cfg_strength (0: the "
                                     "conditional branch alone)", 0, 20)
    sway_sampling_coef: float | None = opt("sway sampling of the time grid, t + s (cos(pi t / 2) - 1 + t); negative: "
                                           "denser near t = 0; 0: none", -1, 1)
    speed: float | None = opt("speaking rate: the piece durations are divided by it (pieces under 10 bytes use 0.3, "
                              "as the official code)", 0.1, 10)
    cross_fade_duration: float | None = opt("seconds of linear cross-fade between consecutive pieces (0: "
                                            "concatenated)", 0, 2)
    target_rms: float | None = opt("a quieter reference is scaled up to this rms, and the output scaled back by the "
                                   "same factor", 0, 1, lo_open=True)
    use_epss: bool | None = opt("empirically pruned step sampling: the EPSS time grid for 5, 6, 7, 10, 12 and 16 "
                                "steps")
    max_chars: int | None = opt("UTF-8 bytes per text piece; 0: from the reference, as infer_process (its bytes per "
                                "second times 22 s less its duration, times speed)", 0, 1000000)
    fix_duration: float | None = opt("total seconds (reference included) the utterance lasts, shared out over its "
                                     "pieces by their bytes; 0: from the text", 0, 600)

_KEY_MARKS = (b'"transformer.transformer_blocks.', b'"ema_model.transformer.transformer_blocks.')


def _looks_like_f5_safetensors(path: str) -> bool:
    """A .safetensors file whose header names the DiT's blocks (read without mapping the file)."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) != 8:
                return False
            (n,) = struct.unpack("<Q", head)
            if not 2 <= n <= 1 << 26:
                return False
            header = f.read(n)
    except OSError:
        return False
    return any(m in header for m in _KEY_MARKS)


class F5Family(Family):
    name = "f5_tts"
    title = "F5-TTS"
    Options = Options
    say_flags = (
        Flag("--nfe", "nfe_step", int, "flow-matching steps (nfe_step, default 32) (F5-TTS)"),
        Flag("--cfg", "cfg_strength", float, "classifier-free guidance strength (cfg_strength, default 2) (F5-TTS)"),
        Flag("--sway", "sway_sampling_coef", float, "sway sampling coefficient (sway_sampling_coef, default -1) "
                                                    "(F5-TTS)"),
        Flag("--speed", "speed", float, "speaking rate (1 = normal) (F5-TTS)"),
    )
    say_examples = """\
  vox voice create ref.wav --model f5.tmod --text "What the recording says." -o me.tvoice
  vox say "Text to speak." --model f5.tmod --voice me.tvoice --nfe 16 --cfg 2 --sway -1 --speed 1 -o out.wav"""

    @property
    def voice_schema(self):
        from ...formats.tvoice import VoiceSchema

        # the reference as F5-TTS conditions on it: the log-mel of the recording after the official clipping,
        # silence trimming, loudness and resampling ([frames, n_mels]), its rms before the loudness step, the
        # preprocessed length at its rate (what max_chars reads), its transcript, how the mel was made and
        # the recording itself (a voice made for another model is made again from it); any F5-TTS weights of
        # the variant take it (core/src/f5/family.c has the same schema)
        return VoiceSchema(arrays={"ref_mel": ("F32", 2, None), "ref_rms": ("F32", 1, (1,)),
                                   "ref_length": ("I64", 1, (2,)), "source_wav": ("F32", 1, None)},
                           modes={"reference": (None, ("ref_mel", "ref_rms", "ref_length"), ("source_wav",),
                                                "ref_text")},
                           texts=("ref_text", "mel_spec"), portable=True)

    def default_voice(self, engine: "Engine") -> "Voice":
        raise InvalidArgument("an F5-TTS model has no built-in voice: give a voice (.tvoice), made from a recording "
                              "and its transcript with `vox voice create REF.wav --text \"...\" --model MODEL -o "
                              "VOICE.tvoice` (Python: engine.clone_voice(path, ref_text))")

    def voice_lengths(self, voice) -> dict:
        mel = voice.arrays.get("ref_mel")
        return {"reference_frames": int(mel.shape[0])} if mel is not None else {}

    def check_manifest(self, path, manifest, tensors) -> None:
        from .checkpoint import check_manifest

        check_manifest(path, manifest, tensors)

    def inspect(self, manifest: dict) -> dict:
        dit = manifest.get("config", {}).get("dit", {})
        return {"architecture": {k: dit.get(k) for k in ("dim", "depth", "heads", "dim_head", "text_num_embeds")}}

    # ------------------------------------------------------------------ conversion
    def can_convert(self, source: str) -> bool:
        return source.endswith(".safetensors") and os.path.isfile(source) and _looks_like_f5_safetensors(source)

    def convert(self, source, out, **options):
        from .convert import convert

        try:
            vocab, vocos = options.pop("vocab"), options.pop("vocos_dir")
        except KeyError as e:
            raise TypeError(f"F5-TTS conversion needs {e.args[0]}= (the checkpoint's vocab.txt and the Vocos "
                            "directory)") from None
        return convert(source, vocab, vocos, out, **options)

    def work_bytes(self, source):
        return os.path.getsize(source)

    def add_build_arguments(self, g) -> None:
        g.add_argument("--f5-vocab", metavar="TXT", help="F5-TTS: the checkpoint's vocab.txt")
        g.add_argument("--f5-vocos", metavar="DIR", help="F5-TTS: the Vocos directory (config.yaml, pytorch_model.bin "
                                                        "of charactr/vocos-mel-24khz)")
        g.add_argument("--f5-variant", choices=("v0", "v1"), default=None,
                       help="F5-TTS: v0 (F5TTS_Base and its fine-tunes) or v1 (F5TTS_v1_Base); default: from the "
                            "path")
        g.add_argument("--f5-quant", choices=("none", "q8"), default=None,
                       help="F5-TTS: q8 for the DiT's linear layers (default: none)")

    def given_build_flags(self, args) -> list[str]:
        return [f for f, v in (("--f5-vocab", args.f5_vocab), ("--f5-vocos", args.f5_vocos),
                               ("--f5-variant", args.f5_variant), ("--f5-quant", args.f5_quant)) if v]

    def build(self, source, out, args) -> str:
        import sys

        from ...cli.progress import Progress
        from ...inspection import format_bytes
        from .convert import convert

        if not args.f5_vocab or not args.f5_vocos:
            raise InvalidArgument("an F5-TTS build needs --f5-vocab vocab.txt and --f5-vocos DIR beside the checkpoint")
        bar = Progress(2 * os.path.getsize(source), label="build")
        try:
            r = convert(source, args.f5_vocab, args.f5_vocos, out, dtype=args.dtype or "f32",
                        quant=args.f5_quant or "none", variant=args.f5_variant, overwrite=args.force,
                        progress=lambda n, note: bar.update(n, note))
        except BaseException:
            if bar.enabled:
                sys.stderr.write("\n")
            raise
        bar.close()
        return (f"wrote {out}: {r.tensors} tensors, {format_bytes(r.bytes)} (f5_tts, "
                f"{json.dumps(r.precision)}); model_id {r.model_id[:12]}")

    # ------------------------------------------------------------------ verification and benchmarks
    def add_verify_arguments(self, g) -> None:
        g.add_argument("--nfe-step", type=int, default=7, metavar="N",
                       help="F5-TTS: flow steps of the end-to-end check (default 7, the EPSS grid; --ref-audio and "
                            "--ref-text give the recording the voice is cloned from, default a synthetic one)")

    def verify(self, model, args, say) -> list:
        from vox.verify.f5 import official, runner

        if getattr(args, "official", None):
            raise InvalidArgument("--official is not used for F5-TTS: the official code runs on the .tmod's own "
                                  "weights")
        if not 1 <= args.nfe_step <= 64:
            raise InvalidArgument("--nfe-step must be 1 to 64")
        try:
            return runner.verify(model, ref_audio=args.ref_audio, ref_text=args.ref_text, nfe_step=args.nfe_step,
                                 say=say)
        except (official.OfficialUnavailable, ValueError) as e:
            raise InvalidArgument(str(e)) from None

    def add_bench_arguments(self, g) -> None:
        g.add_argument("--nfe", type=int, action="append", default=None, metavar="N",
                       help="F5-TTS: nfe_step to time (repeatable; default 32; 7 takes the EPSS grid)")
        g.add_argument("--f5-also", action="append", default=None, metavar="TMOD",
                       help="F5-TTS: more .tmods of the same weights to time beside --model (bf16, q8, ...)")

    def bench(self, model, args) -> int:
        """--official DIR: the official checkpoint folder to time beside vox (python -m vox.bench.f5.models
        --out DIR builds a full-size random-weight F5TTS_v1_Base and its .tmods)."""
        from vox.bench.f5.cli import run

        return run(model, args)


FAMILY = F5Family()
