"""What a model family provides to the family-neutral layers of vox (vox.families registers them).

A family is a package vox/families/<name>/ whose FAMILY is an instance of a Family subclass. The
generic code (Engine, the .tmod/.tvoice checks, vox build / say / voice / verify / bench / inspect)
calls only the members below; a family overrides what it has and leaves the rest, which then says
plainly that the family cannot do it.

Typed options: a family's synthesis options are a dataclass deriving from OptionsBase, every field
defaulting to None ("the model's or the voice's default"), with its range and help in the field's
metadata. It mirrors the core's option table (the core validates again; a test checks that both
describe the same options).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping

from ..errors import InvalidArgument, Unsupported

if TYPE_CHECKING:
    from ..engine import Engine, Voice
    from ..formats.tvoice import Voice as FileVoice
    from ..formats.tvoice import VoiceSchema


def opt(doc: str, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False, hi_open: bool = False,
        choices: tuple[str, ...] | None = None, flag: str | None = None) -> Any:
    """A field of an options dataclass: None by default (the model's / voice's value), with its range,
    choices, help text and (optionally) the CLI flag name it has in `vox say`."""
    return field(default=None, metadata={"doc": doc, "lo": lo, "hi": hi, "lo_open": lo_open, "hi_open": hi_open,
                                         "choices": choices, "flag": flag})


@dataclass
class OptionsBase:
    """Base of the families' typed options: checks every given field's type and range on creation."""

    def __post_init__(self) -> None:
        hints = {f.name: f for f in dataclasses.fields(self)}
        for name, f in hints.items():
            v = getattr(self, name)
            if v is None:
                continue
            setattr(self, name, _check_value(type(self).__name__, name, str(f.type), f.metadata, v))

    def to_json(self) -> str | None:
        """The given (non-None) options as the JSON object of vox_synth_params.options."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}
        return json.dumps(d, ensure_ascii=False, allow_nan=False) if d else None

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]


def _check_value(cls: str, name: str, type_text: str, meta: Mapping[str, Any], v: Any) -> Any:
    where = f"{name}"
    lo, hi, choices = meta.get("lo"), meta.get("hi"), meta.get("choices")
    if "bool" in type_text:
        if not isinstance(v, bool):
            if isinstance(v, int) and v in (0, 1):
                return bool(v)
            raise InvalidArgument(f"{where} must be true or false, not {v!r}")
        return v
    if choices:
        if v not in choices:
            raise InvalidArgument(f"{where} must be one of {', '.join(choices)}, not {v!r}")
        return v
    if "int" in type_text and "float" not in type_text:
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                raise InvalidArgument(f"{where} must be an integer, not {v!r}")
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            a, b = ("-inf" if lo is None else int(lo)), ("inf" if hi is None else int(hi))  # whole, not 1.04858e+06
            raise InvalidArgument(f"{where} must be an integer in [{a}, {b}], not {v}")
        return int(v)
    if "float" in type_text:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InvalidArgument(f"{where} must be a number, not {v!r}")
        x = float(v)
        ok = x == x and abs(x) != float("inf")
        if lo is not None:
            ok = ok and (x > lo if meta.get("lo_open") else x >= lo)
        if hi is not None:
            ok = ok and (x < hi if meta.get("hi_open") else x <= hi)
        if not ok:
            a, b = "(" if meta.get("lo_open") else "[", ")" if meta.get("hi_open") else "]"
            raise InvalidArgument(f"{where} must be a number in {a}{lo:g}, {hi:g}{b}, not {v!r}")
        return x
    if "dict" in type_text:
        if not isinstance(v, Mapping):
            raise InvalidArgument(f"{where} must be a mapping, not {type(v).__name__}")
        return dict(v)
    if "str" in type_text:
        if not isinstance(v, str):
            raise InvalidArgument(f"{where} must be a string, not {type(v).__name__}")
        return v
    return v


@dataclass(frozen=True)
class Flag:
    """A `vox say` flag of a family: it sets the synthesis option `option` (None: the family's
    finish_options reads it), with argparse's type/action/choices/metavar/help. Families that share a
    flag (the same name) share its argument; its dest is the flag's name with dashes as underscores."""

    flag: str
    option: str | None
    type: Any = None
    help: str = ""
    action: str | None = None
    choices: tuple | None = None
    metavar: str | None = None
    const: Any = None            # store_const: the value the option gets (e.g. --greedy: do_sample False)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


class Family:
    """A model family, as the generic layers see it. Subclasses set the class attributes and override
    the hooks their family has."""

    name: ClassVar[str] = ""            # the manifest's "family"
    title: ClassVar[str] = ""           # for people: "Qwen3-TTS-12Hz"
    Options: ClassVar[type[OptionsBase]] = OptionsBase
    CloneOptions: ClassVar[type[OptionsBase] | None] = None
    model_types: ClassVar[tuple[str, ...]] = ()   # config.json "model_type" values of its checkpoints
    build_names: ClassVar[tuple[str, ...]] = ()   # `vox build NAME`: models built from pinned sources

    # ------------------------------------------------------------------ options
    def options_json(self, options: Any, kw: Mapping[str, Any]) -> str | None:
        """vox_synth_params.options from an Options instance, a mapping, or keyword arguments."""
        return self._options(self.Options, options, kw, "synthesis option")

    def clone_options_json(self, kw: Mapping[str, Any]) -> str | None:
        if not kw:
            return None
        if self.CloneOptions is None:
            raise TypeError(f"{self.title} voices take no cloning options (got {', '.join(kw)})")
        return self._options(self.CloneOptions, None, kw, "cloning option")

    def _options(self, cls: type[OptionsBase], options: Any, kw: Mapping[str, Any], what: str) -> str | None:
        if options is not None and not isinstance(options, (cls, Mapping)):
            raise TypeError(f"options must be {cls.__name__} or a mapping, not {type(options).__name__}")
        merged: dict[str, Any] = {}
        if isinstance(options, cls):
            merged.update({k: v for k, v in dataclasses.asdict(options).items() if v is not None})
        elif isinstance(options, Mapping):
            merged.update(options)
        merged.update({k: v for k, v in kw.items() if v is not None})
        known = cls.field_names()
        unknown = [k for k in merged if k not in known]
        if unknown:
            raise TypeError(f"unknown {what} {unknown[0]!r} for a {self.title} model; known: {', '.join(known)}")
        return cls(**merged).to_json()

    # ------------------------------------------------------------------ voices
    @property
    def voice_schema(self) -> "VoiceSchema":
        """What the family's .tvoice files hold (vox.formats.tvoice.VoiceSchema)."""
        raise NotImplementedError

    def default_voice(self, engine: "Engine") -> "Voice":
        """The voice used when none is named."""
        raise InvalidArgument(f"this {self.title} model needs a voice")

    def check_voice(self, voice: "FileVoice", manifest: Mapping, path: str) -> None:
        """FormatError unless a (non-portable) voice's data fit the model's configuration."""

    def voice_lengths(self, voice: "FileVoice") -> dict:
        """Sizes worth showing of a voice file (vox inspect)."""
        return {}

    def voice_from_spec(self, engine: "Engine", spec: str, voice: "Callable[[str], Voice]") -> "Voice | None":
        """A voice written in the family's own notation (the server's `voice` field), or None when
        `spec` is not in it. `voice(name)` gives the Voice another name stands for (a speaker, a stored
        voice), for notations that combine voices."""
        return None

    def voice_aliases(self, engine: "Engine", names: Mapping[str, str]) -> dict[str, str]:
        """Default meanings, among this model's voices, of other APIs' voice names: `names` maps each
        name to how it is heard ("female", "male", "neutral"); the result maps names to voices of the
        model. Names left out mean the model's default voice."""
        return {}

    # ------------------------------------------------------------------ conversion (vox build)
    def can_convert(self, source: str) -> bool:
        """Whether the file `source` is a checkpoint this family converts (directories go by their
        config.json model_type, model_types)."""
        return False

    def convert(self, source: str, out, **options):
        """Convert the checkpoint `source` to the .tmod `out` (vox.convert.convert); a ConvertResult."""
        raise Unsupported(f"{self.title} checkpoints cannot be converted here")

    def work_bytes(self, source: str) -> int:
        """The total that convert() reports progress against."""
        return 0

    def add_build_arguments(self, g: argparse._ArgumentGroup) -> None:
        """The family's own `vox build` flags (dests prefixed with the family's name)."""

    def given_build_flags(self, args: argparse.Namespace) -> list[str]:
        """The family's own `vox build` flags set on the command line."""
        return []

    def build(self, source: str | None, out: str, args: argparse.Namespace) -> str:
        """`vox build`: make the .tmod `out` from `source` (a checkpoint path, or one of build_names);
        returns the line that reports what was written."""
        raise Unsupported(f"{self.title} models cannot be built here")

    def add_voice_commands(self, sub) -> None:
        """Extra `vox voice` actions the family has (argparse subparsers; set func on them)."""

    # ------------------------------------------------------------------ the CLI's synthesis flags
    say_flags: ClassVar[tuple[Flag, ...]] = ()
    say_examples: ClassVar[str] = ""     # lines for `vox say --help`

    def options_from_args(self, args: argparse.Namespace) -> dict[str, Any]:
        """The synthesis options the family's `vox say` flags gave (only those set)."""
        out: dict[str, Any] = {}
        for f in self.say_flags:
            v = getattr(args, f.dest, None)
            if f.option is not None and v is not None and v is not False and v != []:   # 0 and 0.0 are values
                out[f.option] = f.const if f.action in ("store_true", "store_const") and f.const is not None else v
        return self.finish_options(args, out)

    def finish_options(self, args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
        """Options that flags give indirectly (a file to read, several flags to merge)."""
        return options

    # ------------------------------------------------------------------ files and inspection
    def check_manifest(self, path: str, manifest: dict, tensors: Mapping[str, Any]) -> None:
        """The family's own manifest keys (vox.formats.tmod calls this after the container checks)."""

    def inspect(self, manifest: dict) -> dict:
        """Family facts for `vox inspect` (speakers, languages, runtime choices)."""
        return {}

    # ------------------------------------------------------------------ verification and benchmarks
    def add_verify_arguments(self, g: argparse._ArgumentGroup) -> None:
        pass

    def verify(self, model: str, args: argparse.Namespace, say) -> list:
        raise Unsupported(f"vox verify has no {self.title} comparison")

    def add_bench_arguments(self, g: argparse._ArgumentGroup) -> None:
        pass

    def bench(self, model: str, args: argparse.Namespace) -> int:
        raise Unsupported(f"vox bench has no {self.title} runner")
