"""The Qwen3-TTS family object: typed options (mirroring core/src/qwen3/lm.c's table), voices, and the
verification entries' helpers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...errors import InvalidArgument
from ..base import Family, Flag, OptionsBase, opt

if TYPE_CHECKING:
    from ...engine import Engine, Voice

_BIG = 1 << 20


@dataclass
class Options(OptionsBase):
    """Qwen3-TTS synthesis options; None: the model's generation config, then the official defaults."""

    do_sample: bool | None = opt("sample the talker's codes (False: greedy)")
    temperature: float | None = opt("the talker's sampling temperature (> 0 when sampling)", 0, 100)
    top_k: int | None = opt("keep the k most likely talker codes (0: off)", 0, _BIG)
    top_p: float | None = opt("nucleus sampling of the talker (1: off)", 0, 1, lo_open=True)
    repetition_penalty: float | None = opt("penalty on talker codes already generated (1: off)", 0, 100,
                                           lo_open=True)
    subtalker_do_sample: bool | None = opt("sample the code predictor's codes (False: greedy)")
    subtalker_temperature: float | None = opt("the code predictor's temperature", 0, 100)
    subtalker_top_k: int | None = opt("top-k of the code predictor (0: off)", 0, _BIG)
    subtalker_top_p: float | None = opt("top-p of the code predictor (1: off)", 0, 1, lo_open=True)
    max_new_tokens: int | None = opt("talker steps at most (0: a guard that grows with the text)", 0, _BIG)
    decoder: str | None = opt("stream (seamless, carried state) or reference (the official chunked decode, one "
                              "chunk at the end)", choices=("stream", "reference"))
    decoder_context: int | None = opt("stream decoder warm-up: reference frames (-1: all)", -1, _BIG)
    chunk_frames: int | None = opt("codec frames per audio chunk (4 = 320 ms)", 1, _BIG)
    non_streaming_text: bool | None = opt("the whole text in the prompt (the official non_streaming_mode)")


@dataclass
class CloneOptions(OptionsBase):
    """Qwen3-TTS (Base) cloning options."""

    x_vector_only: bool | None = opt("the speaker embedding alone: no transcript, no reference codes")


class Qwen3Family(Family):
    name = "qwen3_tts"
    title = "Qwen3-TTS"
    Options = Options
    CloneOptions = CloneOptions
    model_types = ("qwen3_tts",)
    say_flags = (
        Flag("--temperature", "temperature", float, "the talker's sampling temperature (Qwen3-TTS)"),
        Flag("--top-k", "top_k", int, "keep the k most likely talker codes (Qwen3-TTS)"),
        Flag("--top-p", "top_p", float, "nucleus sampling of the talker (Qwen3-TTS)"),
        Flag("--repetition-penalty", "repetition_penalty", float, "penalty on repeated talker codes (Qwen3-TTS)"),
        Flag("--greedy", None, action="store_true", help="no sampling: always the most likely code (Qwen3-TTS)"),
        Flag("--max-new-tokens", "max_new_tokens", int,
             "stop after this many talker steps (default: a guard that grows with the text) (Qwen3-TTS)"),
        Flag("--decoder", "decoder", choices=("stream", "reference"),
             help="stream: seamless streaming decoder (default); reference: the official chunked decode, for A/B "
                  "comparisons (audio arrives at the end) (Qwen3-TTS)"),
        Flag("--context", "decoder_context", int, "stream decoder warm-up: last N reference frames (-1: all; "
                                                  "default 50) (Qwen3-TTS)", metavar="N"),
        Flag("--chunk-frames", "chunk_frames", int, "codec frames per audio chunk (default 4 = 320 ms) (Qwen3-TTS)",
             metavar="N"),
    )
    say_examples = """\
  vox say "Hello there." --model base-q8.tmod --voice me.tvoice -o hello.wav
  vox say "Hello." --model custom.tmod --speaker aiden --instruct "Speak slowly" -o out.wav
  vox say "Hello." --model design.tmod --instruct "A deep, calm male voice" -o out.wav"""

    def finish_options(self, args, options):
        if getattr(args, "greedy", False):
            options.update(do_sample=False, subtalker_do_sample=False)
        return options

    # ---------------------------------------------------------------- conversion
    def convert(self, source, out, **options):
        from .convert import convert

        return convert(source, out, **options)

    def work_bytes(self, source):
        from .convert import work_bytes

        return work_bytes(source)

    def add_build_arguments(self, g) -> None:
        g.add_argument("--quant", choices=("none", "q8", "q4"), default=None,
                       help="Qwen3-TTS: block quantization of the talker and code-predictor linear layers "
                            "(default: none)")
        g.add_argument("--codec-dtype", choices=("f32", "f16", "bf16"), default=None,
                       help="Qwen3-TTS: dtype of the codec and speaker-encoder weights (default: f32)")

    def given_build_flags(self, args) -> list[str]:
        return [f for f, v in (("--quant", args.quant), ("--codec-dtype", args.codec_dtype)) if v is not None]

    def build(self, source, out, args) -> str:
        import sys

        from ...cli.progress import Progress
        from ...inspection import format_bytes
        from .convert import convert, work_bytes

        bar = Progress(work_bytes(source), label="build")
        try:
            result = convert(source, out, dtype=args.dtype or "bf16", quant=args.quant or "none",
                             codec_dtype=args.codec_dtype or "f32", overwrite=args.force,
                             progress=lambda n, note: bar.update(n, note))
        except BaseException:
            if bar.enabled:
                sys.stderr.write("\n")  # end the bar's line: the error gets a line of its own
            raise
        bar.close()
        prec = result.precision
        return (f"wrote {result.path}: {result.tensors} tensors, {format_bytes(result.bytes)} "
                f"({prec['dtype']}, quant {prec['quant']}, codec {prec['codec_dtype']}) in {result.seconds:.1f} s; "
                f"model_id {result.model_id[:12]}")

    @property
    def voice_schema(self):
        from ...formats.tvoice import VoiceSchema

        # a cloned voice keeps its source recording, so it can be re-made for other weights; speaker and
        # design voices have no audio of their own
        return VoiceSchema(
            arrays={"speaker_embedding": ("F32", 1, None), "ref_codes": ("I64", 2, None),
                    "ref_text_tokens": ("I64", 1, None), "source_wav": ("F32", 1, None)},
            modes={"icl": ("base", ("speaker_embedding", "ref_codes", "ref_text_tokens"), ("source_wav",), "ref_text"),
                   "xvector": ("base", ("speaker_embedding",), ("source_wav",), None),
                   "speaker": ("custom_voice", (), (), "speaker"),
                   "design": ("voice_design", (), (), "instruct")},
            texts=("ref_text", "speaker", "instruct"))

    def check_manifest(self, path, manifest, tensors) -> None:
        from .checkpoint import check_manifest

        check_manifest(path, manifest, tensors)

    def check_voice(self, voice, manifest, path) -> None:
        from ...errors import FormatError

        p = path
        cfg = manifest.get("config", {})
        talker = cfg.get("talker_config", {})
        emb, codes, toks = (voice.arrays.get(n) for n in ("speaker_embedding", "ref_codes", "ref_text_tokens"))
        if emb is not None:
            dim = cfg.get("speaker_encoder_config", {}).get("enc_dim")
            if emb.shape[0] != dim:
                raise FormatError(f"{p}: speaker_embedding has {emb.shape[0]} values, the model's speaker encoder "
                                  f"makes {dim}")
        if codes is not None:
            groups = talker.get("num_code_groups")
            book = talker.get("code_predictor_config", {}).get("vocab_size")
            if codes.shape[1] != groups:
                raise FormatError(f"{p}: ref_codes has {codes.shape[1]} code groups, the model {groups}")
            if isinstance(book, int) and codes.size and int(codes.max()) >= book:
                raise FormatError(f"{p}: ref_codes holds code {int(codes.max())}, the codebook has {book}")
        if toks is not None:
            vocab = talker.get("text_vocab_size")
            if isinstance(vocab, int) and int(toks.max()) >= vocab:
                raise FormatError(f"{p}: ref_text_tokens holds token {int(toks.max())}, the text vocabulary has "
                                  f"{vocab}")
        speaker = voice.texts.get("speaker", "")
        if voice.mode == "speaker" and speaker.lower() not in manifest.get("speakers", {}):
            raise FormatError(f"{p}: the model has no speaker {speaker!r} (it has: "
                              f"{', '.join(sorted(manifest.get('speakers', {})))})")
        if voice.language.lower() != "auto" and voice.language.lower() not in manifest.get("languages", {}):
            raise FormatError(f"{p}: the model has no language {voice.language!r}")

    def voice_lengths(self, voice) -> dict:
        out = {}
        if voice.arrays.get("ref_codes") is not None:
            out["ref_frames"] = int(voice.arrays["ref_codes"].shape[0])
        if voice.arrays.get("ref_text_tokens") is not None:
            out["ref_text_tokens"] = int(voice.arrays["ref_text_tokens"].shape[0])
        if voice.arrays.get("speaker_embedding") is not None:
            out["speaker_embedding_dim"] = int(voice.arrays["speaker_embedding"].shape[0])
        return out

    def default_voice(self, engine: "Engine") -> "Voice":
        caps = engine.capabilities
        if caps.get("design"):
            return engine.design_voice("")
        if caps.get("speakers"):
            raise InvalidArgument(f"this model needs a speaker (one of: {', '.join(engine.speakers)})")
        raise InvalidArgument("this model needs a voice: clone one from a recording (vox voice create)")


    # ---------------------------------------------------------------- verification and benchmarks
    def add_verify_arguments(self, g) -> None:
        g.add_argument("--official", metavar="DIR",
                       help="Qwen3-TTS: the official checkpoint directory the model was converted from")
        g.add_argument("--ref-audio", metavar="WAV",
                       help="Qwen3-TTS Base and F5-TTS: recording for the voice checks (default: a synthetic "
                            "speech-like signal)")
        g.add_argument("--ref-text", help="Qwen3-TTS and F5-TTS: transcript of --ref-audio")
        g.add_argument("--max-new-tokens", type=int, default=24,
                       help="Qwen3-TTS: frames of the official generation the logits are compared on (default 24)")
        g.add_argument("--no-native", action="store_true", help="Qwen3-TTS: check only the reference, not the core")

    def verify(self, model, args, say) -> list:
        from vox.verify.qwen3.official import OfficialUnavailable
        from vox.verify.qwen3.runner import verify

        if not args.official:
            raise InvalidArgument("--official DIR (the checkpoint the model was converted from) is needed for this "
                                  "model")
        if args.max_new_tokens < 3:
            raise InvalidArgument("--max-new-tokens must be at least 3 (one generated frame needs two tokens)")
        try:
            return verify(model, args.official, ref_audio=args.ref_audio, ref_text=args.ref_text,
                          max_new_tokens=args.max_new_tokens, native=not args.no_native, say=say)
        except OfficialUnavailable as e:
            raise InvalidArgument(str(e)) from None

    def add_bench_arguments(self, g) -> None:
        g.add_argument("--official", metavar="DIR", help="Qwen3-TTS: also time the official code on this checkpoint")
        g.add_argument("--official-dtype", default="fp32", choices=("fp32", "bf16"))
        g.add_argument("--official-device", default="cpu", help="PyTorch device of the official side: cpu | cuda[:N]")
        g.add_argument("--frames", type=int, default=60, help="Qwen3-TTS: frames to generate (80 ms each; default 60)")

    def bench(self, model, args) -> int:
        from vox.bench.qwen3.cli import run

        return run(model, args)


FAMILY = Qwen3Family()


# ---------------------------------------------------------------------------- verification entries
def teacher_force(engine: "Engine", voice: "Voice", text: str, codes: np.ndarray, **kw) -> tuple[np.ndarray, np.ndarray]:
    """Raw talker logits [frames + 1, vocab] and predictor logits [frames, groups - 1, codebook] with the
    given codes [frames, groups] instead of sampling (keyword arguments: seed, language, options)."""
    out = engine.run("teacher_force", voice, inputs={"text": text, "codes": np.asarray(codes, np.int32)}, **kw)
    return out["talker_logits"], out["predictor_logits"]


def prompt(engine: "Engine", voice: "Voice", text: str, **kw) -> np.ndarray:
    """The talker's prefill input embeddings [rows, hidden] for the voice, text and options."""
    return engine.run("prompt", voice, inputs={"text": text}, **kw)["prompt"]


def decode(engine: "Engine", codes: np.ndarray, ref_codes: np.ndarray | None = None, mode: str = "stream",
           context: int = 50, chunk_frames: int = 4) -> np.ndarray:
    """Codes [frames, groups] after optional reference codes through the codec decoder: stream mode
    (warmed up with `context` reference frames, `chunk_frames` at a time) or reference mode (the
    official scheme, the reference part cut)."""
    if mode not in ("stream", "reference"):
        raise InvalidArgument(f"mode must be 'stream' or 'reference', not {mode!r}")
    inputs = {"codes": np.asarray(codes, np.int32), "reference": int(mode == "reference"), "context": context,
              "chunk_frames": chunk_frames}
    if ref_codes is not None:
        inputs["ref_codes"] = np.asarray(ref_codes, np.int32)
    return engine.run("decode", inputs=inputs)["audio"]
