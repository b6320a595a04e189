"""What an F5-TTS model is, as numbers: the DiT architecture, the mel features, the vocoder, and the
inference defaults of f5_tts.infer.utils_infer.

The released configs differ between F5TTS_v1_Base ("v1") and F5TTS_Base ("v0", also its fine-tunes)
in two values only, not in the weights' shapes: v0 has text_mask_padding=False (the text encoder's
ConvNeXt blocks also see the filler positions) and pe_attn_head=1 (rotary embedding on the first
attention head only). Reading a v0 checkpoint as v1 gives noise instead of speech.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

VARIANTS = ("v0", "v1")


@dataclass(frozen=True)
class DiTConfig:
    dim: int = 1024
    depth: int = 22
    heads: int = 16
    dim_head: int = 64
    ff_mult: int = 2
    text_dim: int = 512
    text_num_embeds: int = 2545       # vocabulary size; the embedding table has one more row (filler 0)
    mel_dim: int = 100
    conv_layers: int = 4              # ConvNeXt-V2 blocks of the text encoder
    text_mask_padding: bool = True    # v1 True, v0 False
    pe_attn_head: int | None = None   # v1 None (RoPE on every head), v0 1

    def __post_init__(self):
        if self.pe_attn_head is not None and not 0 < self.pe_attn_head <= self.heads:
            raise ValueError(f"pe_attn_head {self.pe_attn_head} must be in 1..{self.heads} (or None: all heads)")


@dataclass(frozen=True)
class MelConfig:
    sample_rate: int = 24000
    n_fft: int = 1024
    hop_length: int = 256
    win_length: int = 1024
    n_mels: int = 100
    mel_spec_type: str = "vocos"


@dataclass(frozen=True)
class VocosConfig:
    input_channels: int = 100
    dim: int = 512
    intermediate_dim: int = 1536
    num_layers: int = 8
    n_fft: int = 1024
    hop_length: int = 256
    padding: str = "center"           # head.init_args.padding of config.yaml


@dataclass(frozen=True)
class InferDefaults:
    """The defaults of infer_process / infer_batch_process / CFM.sample."""
    target_rms: float = 0.1
    cross_fade_duration: float = 0.15
    nfe_step: int = 32
    cfg_strength: float = 2.0
    sway_sampling_coef: float | None = -1.0
    speed: float = 1.0
    use_epss: bool = True             # CFM.sample's default; infer_batch_process does not change it
    fix_duration: float | None = None
    max_duration: int = 65536
    ode_method: str = "euler"


@dataclass(frozen=True)
class F5Config:
    variant: str = "v1"
    dit: DiTConfig = field(default_factory=DiTConfig)
    mel: MelConfig = field(default_factory=MelConfig)
    vocos: VocosConfig = field(default_factory=VocosConfig)
    infer: InferDefaults = field(default_factory=InferDefaults)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "F5Config":
        return cls(variant=d["variant"], dit=DiTConfig(**d["dit"]), mel=MelConfig(**d["mel"]),
                   vocos=VocosConfig(**d["vocos"]), infer=InferDefaults(**d["infer"]))


def variant_flags(variant: str) -> dict:
    """The two config values that tell v0 from v1."""
    if variant == "v1":
        return dict(text_mask_padding=True, pe_attn_head=None)
    if variant == "v0":
        return dict(text_mask_padding=False, pe_attn_head=1)
    raise ValueError(f"unknown F5-TTS variant {variant!r}; choose v0 (F5TTS_Base and fine-tunes) or v1 (F5TTS_v1_Base)")


def with_variant(cfg: DiTConfig, variant: str) -> DiTConfig:
    return replace(cfg, **variant_flags(variant))
