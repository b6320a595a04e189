"""A full-size random-weight F5TTS_v1_Base checkpoint in the real shapes, for speed measurements.

No trained F5-TTS weights are reachable here, so speed is measured on random weights of the real shapes
(speed does not depend on the values; nothing here is meant to speak). The checkpoint is built with the
official f5-tts / vocos classes from the released configs and saved in the official layout, so vox and
the official code run on exactly the same weights:

    DiT    dim 1024, depth 22, 16 heads of 64, ff_mult 2, text_dim 512, 4 ConvNeXt-V2 text blocks,
           text_mask_padding, RoPE on every head (F5TTS_v1_Base.yaml); the 2545-symbol vocabulary
    Vocos  charactr/vocos-mel-24khz: dim 512, intermediate 1536, 8 layers, ISTFT head (center padding)

What DiT.initialize_weights zeroes (the adaLN linears, the output projection) and the other constant
parameters (GRN gamma/beta, LayerNorm affines, biases) get random values of the official init's scale,
so no product is skipped and no value is degenerate (fixtures.f5_tiny._randomize with a smaller scale).

    python -m vox.bench.f5.models --out DIR      (about 1.4 GB: model.safetensors, vocab.txt, vocos/)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

SEED = 4321
ARCH = dict(dim=1024, depth=22, heads=16, ff_mult=2, text_dim=512, text_mask_padding=True, qk_norm=None,
            conv_layers=4, pe_attn_head=None, attn_backend="torch", attn_mask_enabled=False)
VOCOS = {
    "feature_extractor": {"class_path": "vocos.feature_extractors.MelSpectrogramFeatures",
                          "init_args": {"sample_rate": 24000, "n_fft": 1024, "hop_length": 256, "n_mels": 100,
                                        "padding": "center"}},
    "backbone": {"class_path": "vocos.models.VocosBackbone",
                 "init_args": {"input_channels": 100, "dim": 512, "intermediate_dim": 1536, "num_layers": 8}},
    "head": {"class_path": "vocos.heads.ISTFTHead",
             "init_args": {"dim": 512, "n_fft": 1024, "hop_length": 256, "padding": "center"}},
}


MEL_SPEC = dict(n_fft=1024, hop_length=256, win_length=1024, n_mel_channels=100, target_sample_rate=24000,
                mel_spec_type="vocos")


def wheel_vocab() -> Path:
    from importlib.resources import files

    return Path(str(files("f5_tts").joinpath("infer/examples/vocab.txt")))


def _randomize(module, g, torch) -> None:
    """Every parameter the official init left constant gets a random value of the init's scale."""
    with torch.no_grad():
        for _, p in module.named_parameters():
            flat = p.detach().reshape(-1)
            if flat.numel() > 1 and bool((flat == flat[0]).all()):
                if p.dim() >= 2:          # zeroed matrices (adaLN, proj_out), GRN gamma / beta [1, 1, d]
                    p.copy_(torch.randn(p.shape, generator=g) * 0.02)
                elif float(flat[0]) == 0.0:
                    p.copy_(torch.randn(p.shape, generator=g) * 0.02)
                else:                     # LayerNorm weight (1), Vocos layer scale
                    p.mul_(1 + torch.randn(p.shape, generator=g) * 0.1)


def build(out: str | os.PathLike, seed: int = SEED) -> Path:
    """Write DIR/F5TTS_v1_Base/{model.safetensors, vocab.txt, model_cfg.json, vocos/}; returns that folder."""
    from vox.verify.f5 import official

    torch = official.import_official()
    import yaml
    from f5_tts.model import CFM, DiT
    from f5_tts.model.utils import get_tokenizer
    from safetensors.torch import save_file
    from vocos import Vocos

    d = Path(out) / "F5TTS_v1_Base"
    (d / "vocos").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(wheel_vocab(), d / "vocab.txt")
    vocab_map, vocab_size = get_tokenizer(str(d / "vocab.txt"), "custom")
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    cfm = CFM(transformer=DiT(**ARCH, text_num_embeds=vocab_size, mel_dim=100), mel_spec_kwargs=dict(MEL_SPEC),
              odeint_kwargs=dict(method="euler"), vocab_char_map=vocab_map)
    _randomize(cfm, g, torch)
    save_file({"ema_model." + k: v.contiguous() for k, v in cfm.state_dict().items()}, str(d / "model.safetensors"))
    with open(d / "vocos" / "config.yaml", "w") as f:
        yaml.safe_dump(VOCOS, f, sort_keys=False)
    voc = Vocos.from_hparams(str(d / "vocos" / "config.yaml"))
    _randomize(voc, torch.Generator().manual_seed(seed + 2), torch)
    torch.save(voc.state_dict(), d / "vocos" / "pytorch_model.bin")
    (d / "model_cfg.json").write_text(json.dumps(ARCH, indent=1, sort_keys=True) + "\n")
    return d


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--tmod", action="append", default=[], metavar="DTYPE[+q8]",
                    help="also convert to DIR/f5-v1-DTYPE.tmod (f32, bf16, f32+q8, ...); repeatable")
    a = ap.parse_args(argv)
    d = build(a.out, a.seed)
    print(d)
    for spec in a.tmod:
        from vox.families.f5.convert import convert

        dtype, _, quant = spec.partition("+")
        out = Path(a.out) / f"f5-v1-{dtype}{'-' + quant if quant else ''}.tmod"
        convert(d / "model.safetensors", d / "vocab.txt", d / "vocos", out, dtype=dtype, quant=quant or "none",
                overwrite=True)
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
