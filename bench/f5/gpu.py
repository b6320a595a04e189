#!/usr/bin/env python3
"""F5-TTS speed on a GPU: vox on Vulkan beside the official f5-tts 1.1.22 on CUDA (torch), on a FULL-SIZE
random-weight F5TTS_v1_Base DiT and Vocos (charactr/vocos-mel-24khz layout), one utterance of --seconds of
generated audio after a --ref-seconds reference, every frame count the same on both sides:

  - RTF (compute / audio) of the whole utterance at NFE 32 (linspace) and with EPSS 7 NFE, CFG 2, sway -1:
    vox end to end (Engine.synthesize: text, DiT + ODE loop + Vocos on the GPU); the official CFM.sample +
    Vocos.decode (fp16 DiT as its load_checkpoint puts it on CUDA, and fp32), median of --runs after a
    warm-up;
  - the per-op GPU profile of one vox utterance (VOX_PROFILE=gpu) and from it the achieved TFLOP/s of the
    DiT's products (2 M N K per call, M = both branches' rows) and of the attention (4 n^2 d heads a branch);
  - the same with the cooperative-matrix GEMM in its 64 x 32 tiles (VOX_VK_F5_NARROW=1) and turned off
    (VOX_VK_COOPMAT=0: the float32-arithmetic tiled GEMM over the same bf16 weights), to show what the
    tensor cores give;
  - one DiT evaluation of the full-size model on the GPU (each GEMM variant) against the CPU engine.

    python bench/f5/gpu.py --out DIR [--device vulkan:0] [--dtype bf16] [--no-official]

Random weights: the official classes' initialization, with the matrices it leaves constant (adaLN,
proj_out) drawn at a similar scale (fixtures/f5_tiny.py's rule). Needs torch, f5-tts and vocos (the
official side and the checkpoint), the vox package and its core built with Vulkan."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REF_TEXT = "Some call me nature, others call me mother nature."
GEN_TEXT = ("The quick brown fox jumps over the lazy dog, and then it runs across the field to the river, "
            "where it rests in the shade of an old tree until the evening comes.")
SR, HOP = 24000, 256
VOCOS_CONFIG = {
    "feature_extractor": {"class_path": "vocos.feature_extractors.MelSpectrogramFeatures",
                          "init_args": {"sample_rate": 24000, "n_fft": 1024, "hop_length": 256, "n_mels": 100,
                                        "padding": "center"}},
    "backbone": {"class_path": "vocos.models.VocosBackbone",
                 "init_args": {"input_channels": 100, "dim": 512, "intermediate_dim": 1536, "num_layers": 8}},
    "head": {"class_path": "vocos.heads.ISTFTHead",
             "init_args": {"dim": 512, "n_fft": 1024, "hop_length": 256, "padding": "center"}},
}


def ref_audio(seconds: float):
    """A voiced-like reference without silences (harmonics of 140 Hz, slow amplitude modulation), 0.1 rms-ish."""
    import numpy as np

    t = np.arange(int(seconds * SR)) / SR
    x = sum(np.sin(2 * np.pi * 140 * k * t + k) / k for k in range(1, 12))
    x *= 0.6 + 0.4 * np.sin(2 * np.pi * 3.0 * t)
    return (0.1 * x / np.sqrt(np.mean(x * x))).astype(np.float32)


def arch():
    import yaml
    from importlib.resources import files

    if os.environ.get("VOX_BENCH_F5_ARCH"):   # a smaller DiT, to try the script on a slow device
        return json.loads(os.environ["VOX_BENCH_F5_ARCH"])
    return yaml.safe_load(open(files("f5_tts").joinpath("configs/F5TTS_v1_Base.yaml")))["model"]["arch"]


def build_checkpoint(d: Path, seed: int = 0) -> tuple[Path, Path, Path]:
    """model.safetensors (EMA layout), vocab.txt, vocos/{config.yaml, pytorch_model.bin}."""
    import shutil

    import torch
    import yaml
    from importlib.resources import files
    from safetensors.torch import save_file

    from f5_tts.model import CFM, DiT
    from f5_tts.model.utils import get_tokenizer
    from vocos import Vocos

    d.mkdir(parents=True, exist_ok=True)
    vocab = Path(str(files("f5_tts").joinpath("infer/examples/vocab.txt")))
    shutil.copyfile(vocab, d / "vocab.txt")
    vmap, vsize = get_tokenizer(str(vocab), "custom")
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    cfm = CFM(transformer=DiT(**arch(), text_num_embeds=vsize, mel_dim=100),
              mel_spec_kwargs=dict(n_fft=1024, hop_length=256, win_length=1024, n_mel_channels=100,
                                   target_sample_rate=24000, mel_spec_type="vocos"),
              odeint_kwargs=dict(method="euler"), vocab_char_map=vmap)

    def randomize(m):
        with torch.no_grad():
            for _, p in m.named_parameters():
                f = p.detach().reshape(-1)
                if f.numel() > 1 and bool((f == f[0]).all()):
                    if p.dim() >= 2:
                        p.copy_(torch.randn(p.shape, generator=g) * 0.02)
                    elif float(f[0]) == 0.0:
                        p.copy_(torch.randn(p.shape, generator=g) * 0.02)
                    else:
                        p.mul_(1 + torch.randn(p.shape, generator=g) * 0.1)

    randomize(cfm)
    save_file({"ema_model." + k: v.contiguous() for k, v in cfm.state_dict().items()}, str(d / "model.safetensors"))
    (d / "vocos").mkdir(exist_ok=True)
    with open(d / "vocos" / "config.yaml", "w") as f:
        yaml.safe_dump(VOCOS_CONFIG, f, sort_keys=False)
    voc = Vocos.from_hparams(str(d / "vocos" / "config.yaml"))
    randomize(voc)
    torch.save(voc.state_dict(), d / "vocos" / "pytorch_model.bin")
    return d / "model.safetensors", d / "vocab.txt", d / "vocos"


# ------------------------------------------------------------------------------------ vox (one process a run)
def child(a) -> None:
    import numpy as np

    import vox

    t0 = time.perf_counter()
    eng = vox.Engine(a.tmod, device=a.device)
    load_s = time.perf_counter() - t0
    voice = eng.clone_voice((ref_audio(a.ref_seconds), SR), REF_TEXT)
    fix = a.ref_seconds + 0.05 + a.seconds
    kw = dict(nfe_step=a.nfe, use_epss=bool(a.epss), cfg_strength=2.0, sway_sampling_coef=-1.0, fix_duration=fix)
    eng.synthesize(GEN_TEXT, voice, seed=1, **{**kw, "nfe_step": 2})   # warm-up: pipelines, workspace
    times, n = [], 0
    for r in range(a.runs):
        t0 = time.perf_counter()
        audio = eng.synthesize(GEN_TEXT, voice, seed=1 + r, **kw)
        times.append(time.perf_counter() - t0)
        n = len(audio)
        assert np.isfinite(audio).all()
    st = eng.stats()
    print(json.dumps({"load_s": load_s, "times_s": times, "audio_s": n / SR, "rtf": statistics.median(times) / (n / SR),
                      "stages": st.get("stages"), "frames_total": int(fix * SR / HOP)}), flush=True)
    eng.close()


def check(a) -> None:
    """One DiT evaluation (both branches) of the full-size model on the GPU vs the CPU engine with float32
    products (VOX_F5_DIT=f32): float16 arithmetic on tensor cores (the default), float32 activations on
    tensor cores (VOX_VK_F5_MATH=f32) and without cooperative matrices."""
    import numpy as np

    import vox

    rng = np.random.RandomState(0)
    n = a.check_frames
    inp = dict(x=rng.randn(n, 100).astype(np.float32), cond=rng.randn(n, 100).astype(np.float32),
               ids=rng.randint(0, 2000, 120).astype(np.int32), t=np.float32(0.4))
    inp["cond"][n // 3:] = 0
    t0 = time.perf_counter()
    os.environ["VOX_F5_DIT"] = "f32"
    with vox.Engine(a.tmod, device="cpu") as cpu:
        ref = cpu.run("dit", inputs=inp)
    os.environ.pop("VOX_F5_DIT")
    res = {"frames": n, "cpu_s": round(time.perf_counter() - t0, 2)}
    for name, env in (("f16", {}), ("f32", {"VOX_VK_F5_MATH": "f32"}), ("no_coopmat", {"VOX_VK_COOPMAT": "0"})):
        for k in ("VOX_VK_F5_MATH", "VOX_VK_COOPMAT"):
            os.environ.pop(k, None)
        os.environ.update(env)
        with vox.Engine(a.tmod, device=a.device) as gpu:
            out = gpu.run("dit", inputs=inp)
        res[name] = {k: float(np.abs(out[k] - ref[k]).max() / np.abs(ref[k]).max())
                     for k in ("time_embedding", "input_embed", "flow_cond", "flow_uncond")}
    print(json.dumps(res), flush=True)


def run_vox(tmod: Path, device: str, nfe: int, epss: bool, runs: int, ref_s: float, gen_s: float, env: dict | None = None):
    cmd = [sys.executable, __file__, "--child", "--tmod", str(tmod), "--device", device, "--nfe", str(nfe),
           "--epss", str(int(epss)), "--runs", str(runs), "--ref-seconds", str(ref_s), "--seconds", str(gen_s)]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if r.returncode != 0:
        return {"error": r.stderr[-3000:]}
    res = json.loads([x for x in r.stdout.splitlines() if x.startswith("{")][-1])
    res["stderr"] = r.stderr
    return res


def parse_profile(stderr: str) -> dict[str, tuple[float, int]]:
    """'label/shader  ms  pct  N calls ...' lines of VOX_PROFILE=gpu -> {label/shader: (ms, calls)}."""
    out = {}
    for line in stderr.splitlines():
        p = line.split()
        if len(p) >= 5 and "/" in p[0] and p[2] == "ms" and p[5] == "calls":
            out[p[0]] = (float(p[1]), int(p[4]))
    return out


def dit_flops(frames: int, a: dict) -> dict[str, float]:
    """FLOPs a call of each profiled DiT product (both guidance branches: 2 x frames rows)."""
    d, h, dh, ff = a["dim"], a["heads"], a.get("dim_head", 64), a["dim"] * a["ff_mult"]
    rows, inner, in_w = 2 * frames, h * dh, 2 * 100 + a["text_dim"]
    return {"f5/qkv": 2 * rows * 3 * inner * d, "f5/attn_out": 2 * rows * d * inner, "f5/ff1": 2 * rows * ff * d,
            "f5/ff2": 2 * rows * d * ff, "f5/embed/gemm": 2 * rows * d * in_w,
            "f5/attention": 4 * frames * frames * dh * h * 2, "f5/embed/gconv": 2 * rows * d * (d // 16) * 31}


def gemm_table(prof: dict, flops: dict) -> list[dict]:
    """Achieved rate of each profiled DiT product: its label picks the FLOPs (f5/embed: the projection's
    GEMM or the grouped convolutions, by shader)."""
    rows = []
    for key, (ms, calls) in sorted(prof.items()):
        label, shader = key.rsplit("/", 1)
        name = f"{label}/{'gconv' if shader == 'gconv' else 'gemm'}" if label == "f5/embed" else label
        if name in flops and calls:
            us = 1000.0 * ms / calls
            rows.append({"op": key, "calls": calls, "us_per_call": round(us, 1),
                         "gflop_per_call": round(flops[name] / 1e9, 3), "tflops": round(flops[name] / (us * 1e-6) / 1e12, 1)})
    return rows


# ------------------------------------------------------------------------------------ the official code on CUDA
def official(ckpt: Path, vocos_dir: Path, ref_s: float, gen_s: float, runs: int, dtype: str) -> dict:
    import numpy as np
    import torch
    from safetensors.torch import load_file

    from f5_tts.model import CFM, DiT
    from f5_tts.model.utils import get_tokenizer
    from vocos import Vocos

    dev = "cuda"
    vmap, vsize = get_tokenizer(str(ckpt.parent / "vocab.txt"), "custom")
    cfm = CFM(transformer=DiT(**arch(), text_num_embeds=vsize, mel_dim=100),
              mel_spec_kwargs=dict(n_fft=1024, hop_length=256, win_length=1024, n_mel_channels=100,
                                   target_sample_rate=24000, mel_spec_type="vocos"),
              odeint_kwargs=dict(method="euler"), vocab_char_map=vmap)
    sd = {k[len("ema_model."):]: v for k, v in load_file(str(ckpt)).items()}
    cfm.load_state_dict(sd, strict=False)
    cfm = cfm.to(dev).to(torch.float16 if dtype == "fp16" else torch.float32).eval()
    voc = Vocos.from_hparams(str(vocos_dir / "config.yaml"))
    voc.load_state_dict(torch.load(vocos_dir / "pytorch_model.bin", map_location="cpu"))
    voc = voc.to(dev).eval()
    audio = torch.from_numpy(np.concatenate([ref_audio(ref_s), np.zeros(int(0.05 * SR), np.float32)]))[None].to(dev)
    ref_len = audio.shape[-1] // HOP
    total = int((ref_s + 0.05 + gen_s) * SR / HOP)
    ids = torch.randint(0, vsize, (1, len(REF_TEXT) + len(GEN_TEXT)), generator=torch.Generator().manual_seed(0)).to(dev)
    res = {"dtype": dtype, "frames_total": total, "frames_ref": ref_len}
    for name, steps, epss in (("nfe32", 32, False), ("epss7", 7, True)):
        def once():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with torch.inference_mode():
                out, _ = cfm.sample(cond=audio, text=ids, duration=total, steps=steps, cfg_strength=2.0,
                                    sway_sampling_coef=-1.0, use_epss=epss)
                mel = out[:, ref_len:, :].permute(0, 2, 1).float()
                wav = voc.decode(mel)
            torch.cuda.synchronize()
            return time.perf_counter() - t0, wav.shape[-1]
        once()
        times = []
        for _ in range(runs):
            t, n = once()
            times.append(t)
        res[name] = {"times_s": times, "audio_s": n / SR, "rtf": statistics.median(times) / (n / SR)}
    del cfm, voc
    torch.cuda.empty_cache()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--device", default="vulkan:0")
    ap.add_argument("--dtype", default="bf16", help="DiT weights of the .tmod (bf16 / f16: tensor-core GEMM; f32)")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--ref-seconds", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-official", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--check", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--check-frames", type=int, default=400)
    ap.add_argument("--tmod")
    ap.add_argument("--nfe", type=int, default=32)
    ap.add_argument("--epss", type=int, default=0)
    a = ap.parse_args()
    if a.child:
        return child(a)
    if a.check:
        return check(a)
    out = a.out
    out.mkdir(parents=True, exist_ok=True)
    R: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "seconds": a.seconds,
               "ref_seconds": a.ref_seconds, "dtype": a.dtype}
    t0 = time.perf_counter()
    ckpt, vocab, vocos_dir = build_checkpoint(out / "ckpt")
    R["checkpoint_s"] = round(time.perf_counter() - t0, 1)
    from vox.families.f5 import convert as f5

    tmod = out / f"f5_v1_base_{a.dtype}.tmod"
    t0 = time.perf_counter()
    f5.convert(ckpt, vocab, vocos_dir, tmod, dtype=a.dtype)
    R["convert_s"] = round(time.perf_counter() - t0, 1)
    print("checkpoint and .tmod ready", R, flush=True)
    a_cfg = arch()
    r = subprocess.run([sys.executable, __file__, "--check", "--tmod", str(tmod), "--device", a.device], capture_output=True,
                       text=True)
    R["check_vs_cpu"] = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else {"error": r.stderr[-3000:]}
    print("check", json.dumps(R["check_vs_cpu"]), flush=True)
    runs = {}
    for name, nfe, epss, env in (("nfe32", 32, False, {}), ("epss7", 7, True, {}),
                                 ("nfe32_profile", 32, False, {"VOX_PROFILE": "gpu"}),
                                 ("epss7_narrow", 7, True, {"VOX_VK_F5_NARROW": "1"}),
                                 ("epss7_narrow_profile", 7, True, {"VOX_VK_F5_NARROW": "1", "VOX_PROFILE": "gpu"}),
                                 ("epss7_nocoopmat", 7, True, {"VOX_VK_COOPMAT": "0"}),
                                 ("epss7_nocoopmat_profile", 7, True, {"VOX_VK_COOPMAT": "0", "VOX_PROFILE": "gpu"})):
        r = run_vox(tmod, a.device, nfe, epss, 1 if "profile" in name else a.runs, a.ref_seconds, a.seconds, env)
        if "stderr" in r and "profile" in name:
            prof = parse_profile(r["stderr"])
            r["gemms"] = gemm_table(prof, dit_flops(r["frames_total"], a_cfg))
            (out / f"profile_{name}.txt").write_text(r["stderr"])
        r.pop("stderr", None)
        runs[name] = r
        print(name, json.dumps({k: v for k, v in r.items() if k not in ("stages",)}), flush=True)
    R["vox"] = runs
    if not a.no_official:
        R["official"] = {}
        for dt in ("fp16", "fp32"):
            try:
                R["official"][dt] = official(ckpt, vocos_dir, a.ref_seconds, a.seconds, a.runs, dt)
            except Exception as e:   # report, keep the vox numbers
                R["official"][dt] = {"error": repr(e)[-2000:]}
            print("official", dt, json.dumps(R["official"][dt]), flush=True)
    (out / "bench_f5_gpu.json").write_text(json.dumps(R, indent=1))
    print("== summary")
    for k, v in R["vox"].items():
        if "rtf" in v:
            print(f"vox {k}: RTF {v['rtf']:.4f} (median of {len(v['times_s'])}: {[round(t, 3) for t in v['times_s']]} s for "
                  f"{v['audio_s']:.2f} s)")
        for g in v.get("gemms", []):
            print(f"    {g['op']:<40} {g['calls']:>6} calls {g['us_per_call']:>9.1f} us {g['tflops']:>7.1f} TFLOP/s")
    for dt, v in R.get("official", {}).items():
        for k in ("nfe32", "epss7"):
            if k in v:
                print(f"official {dt} {k}: RTF {v[k]['rtf']:.4f} ({[round(t, 3) for t in v[k]['times_s']]} s)")


if __name__ == "__main__":
    main()
