"""The F5-TTS family object: manifest checks, conversion (`vox build --model model_*.safetensors
--f5-vocab vocab.txt --f5-vocos DIR`) and inspection. The native runtime's options are added with it."""

from __future__ import annotations

import json
import os
import struct

from ...errors import InvalidArgument
from ..base import Family

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

    @property
    def voice_schema(self):
        from ...formats.tvoice import VoiceSchema

        # a voice is the reference recording as F5-TTS conditions on it (mono, 24 kHz, after the official
        # clipping and silence trimming) and its transcript; it works with any conversion of the variant
        return VoiceSchema(arrays={"ref_audio": ("F32", 1, None)},
                           modes={"reference": (None, ("ref_audio",), (), "ref_text")}, texts=("ref_text",),
                           portable=True)

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


FAMILY = F5Family()
