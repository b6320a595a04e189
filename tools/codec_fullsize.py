"""Full-size codec decoder benchmark: ms per frame of the native decoder on a random-weight speech
tokenizer of the REAL size (Qwen3-TTS-12Hz-0.6B-Base speech_tokenizer/config.json: codebook_dim 512,
hidden 512, latent 1024, 8 layers, 16 heads x 64, decoder_dim 1536, rates 8/5/4/3 x 2/2).

The checkpoint is built with the official classes the way fixtures/qwen3_tiny.py builds its speech
tokenizer (same _randomize: unit-gain decoder convolutions), next to the tiny base06 talker (the
decoder does not care), then converted with vox.convert.convert. Nothing here is committed: the
model (~0.5 GB in f32) goes to --work (default /tmp/vox-codec-full).

    python tools/codec_fullsize.py                     # build if needed, bench 1 and 2 threads
    python tools/codec_fullsize.py --codec-dtype bf16 --threads 2 --chunk 4 --frames 48
    python tools/codec_fullsize.py --check 12          # also: native vs the official forward (max abs)

Set VOX_LIBRARY_DIR to the build folder of the libvox to measure.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
REAL_CONFIG = Path("/work/shared/configs/Qwen3-TTS-12Hz-0.6B-Base/speech_tokenizer/config.json")


def build_checkpoint(work: Path, seed: int) -> Path:
    """base06 fixture directory with its speech tokenizer replaced by a full-size random one."""
    d = work / "model"
    if (d / "speech_tokenizer" / "model.safetensors").exists():
        return d
    sys.path.insert(0, str(ROOT))
    import torch
    from qwen_tts.core import Qwen3TTSTokenizerV2Config, Qwen3TTSTokenizerV2Model

    from fixtures import qwen3_tiny

    src = qwen3_tiny.fixture_dir("base06")
    if d.exists():
        shutil.rmtree(d)
    shutil.copytree(src, d)
    shutil.rmtree(d / "speech_tokenizer")
    (d / "speech_tokenizer").mkdir()
    cfg = json.loads(REAL_CONFIG.read_text())
    kw = {k: copy.deepcopy(v) for k, v in cfg.items() if k not in ("architectures", "model_type", "transformers_version")}
    torch.manual_seed(seed)
    st_cfg = Qwen3TTSTokenizerV2Config(**kw)
    st_cfg.architectures = ["Qwen3TTSTokenizerV2Model"]
    st = Qwen3TTSTokenizerV2Model(st_cfg).eval()
    qwen3_tiny._randomize(st, torch)
    st.save_pretrained(d / "speech_tokenizer", safe_serialization=True)
    (d / "speech_tokenizer" / "generation_config.json").unlink(missing_ok=True)
    for f in ("preprocessor_config.json",):
        p = src / "speech_tokenizer" / f
        if p.exists():
            shutil.copy(p, d / "speech_tokenizer" / f)
    return d


def tmod_for(work: Path, ckpt: Path, codec_dtype: str) -> Path:
    from vox.convert import convert

    out = work / f"full-{codec_dtype}.tmod"
    if not out.exists():
        convert(ckpt, out, dtype="f32", quant="none", codec_dtype=codec_dtype, overwrite=True)
    return out


def official_forward(ckpt: Path, codes: np.ndarray) -> np.ndarray:
    import torch
    from qwen_tts.core import Qwen3TTSTokenizerV2Model

    torch.set_num_threads(2)
    st = Qwen3TTSTokenizerV2Model.from_pretrained(ckpt / "speech_tokenizer").eval()
    with torch.inference_mode():
        return st.decoder(torch.from_numpy(codes).T[None])[0, 0].float().numpy()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default="/tmp/vox-codec-full")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--codec-dtype", default="f32", choices=("f32", "f16", "bf16"))
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--chunk", type=int, default=4)
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--check", type=int, default=0, help="also compare this many frames with the official forward")
    a = ap.parse_args(argv)

    import vox
    from vox.families.qwen3 import decode

    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    ckpt = build_checkpoint(work, a.seed)
    path = tmod_for(work, ckpt, a.codec_dtype)
    codes = np.random.default_rng(7).integers(0, 2048, size=(a.frames, 16)).astype(np.int32)
    results = {}
    for th in a.threads:
        with vox.Engine(str(path), threads=th) as eng:
            decode(eng, codes[:2], None, "stream", 0, a.chunk)  # page the weights in
            best = float("inf")
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                audio = decode(eng, codes, None, "stream", 0, a.chunk)
                best = min(best, time.perf_counter() - t0)
            results[th] = audio
            print(f"codec {a.codec_dtype} threads {th} chunk {a.chunk}: {best * 1000 / a.frames:.1f} ms/frame "
                  f"({a.frames} frames, cpu {eng.info.get('cpu')})", flush=True)
    if len(results) > 1:
        vals = list(results.values())
        print("bit-identical across thread counts:", all(np.array_equal(vals[0], v) for v in vals[1:]))
    if a.check:
        n = min(a.check, a.frames)
        off = official_forward(ckpt, codes[:n].astype(np.int64))
        ours = list(results.values())[0][: n * 1920]
        print(f"native vs official forward, {n} frames: max abs {np.max(np.abs(ours - off)):.3g}, "
              f"official peak {np.max(np.abs(off)):.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
