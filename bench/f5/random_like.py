#!/usr/bin/env python3
"""A random F5-TTS checkpoint of given shapes, made where the official package is not installed.

bench/f5/models.py builds a full-size random-weight checkpoint with the official classes; that needs
f5-tts and its dependencies, and the checkpoint (1.3 GB) is too large to copy to a machine that cannot
install them (a lent GPU box). This tool describes such a checkpoint in a small JSON file (every
tensor's name, shape, mean and standard deviation; the small text files as they are) and makes, from
that description, a checkpoint of the same layout with normal random values of the same statistics,
which `vox build` converts like the original. Speed does not depend on the values, only on the shapes.

    python -m vox.bench.f5.random_like describe f5/F5TTS_v1_Base f5-v1.json      # needs torch
    python -m vox.bench.f5.random_like make f5-v1.json /tmp/F5TTS_v1_Base [--seed 0]   # needs torch
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

TEXT_FILES = ("vocab.txt", "model_cfg.json", "vocos/config.yaml")


def describe(src: Path, out: Path) -> None:
    import torch
    from safetensors.torch import load_file

    def stats(tensors: dict) -> list[dict]:
        res = []
        for name, t in tensors.items():
            f = t.detach().float()
            res.append({"name": name, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
                        "mean": float(f.mean()) if f.numel() else 0.0,
                        "std": float(f.std()) if f.numel() > 1 else 0.0})
        return res

    desc = {"model": stats(load_file(str(src / "model.safetensors"))),
            "vocos": stats(torch.load(src / "vocos" / "pytorch_model.bin", map_location="cpu", weights_only=True)),
            "text": {f: (src / f).read_text(encoding="utf-8") for f in TEXT_FILES if (src / f).exists()}}
    out.write_text(json.dumps(desc))


def make(desc_path: Path, dst: Path, seed: int) -> None:
    import torch
    from safetensors.torch import save_file

    desc = json.loads(desc_path.read_text())
    g = torch.Generator().manual_seed(seed)

    def tensors(items: list[dict]) -> dict:
        out = {}
        for t in items:
            v = torch.randn(t["shape"], generator=g) * t["std"] + t["mean"]
            out[t["name"]] = v.to(getattr(torch, t["dtype"])).contiguous()
        return out

    (dst / "vocos").mkdir(parents=True, exist_ok=True)
    for f, text in desc["text"].items():
        (dst / f).write_text(text, encoding="utf-8")
    save_file(tensors(desc["model"]), str(dst / "model.safetensors"))
    torch.save(tensors(desc["vocos"]), dst / "vocos" / "pytorch_model.bin")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("describe", help="a checkpoint directory -> its JSON description")
    d.add_argument("src", type=Path)
    d.add_argument("out", type=Path)
    m = sub.add_parser("make", help="a JSON description -> a random checkpoint directory")
    m.add_argument("desc", type=Path)
    m.add_argument("dst", type=Path)
    m.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.cmd == "describe":
        describe(a.src, a.out)
    else:
        make(a.desc, a.dst, a.seed)


if __name__ == "__main__":
    main()
