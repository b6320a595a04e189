"""One side of an F5-TTS benchmark, run in its own process (so peak RSS is its own): vox on a .tmod, or
the official f5-tts code on the checkpoint the .tmod came from. Prints one JSON object.

    python -m vox.bench.f5.run vox --model f5.tmod --nfe 32 --threads 2
    python -m vox.bench.f5.run official --model DIR/F5TTS_v1_Base --nfe 32 --threads 2

Both sides speak the same text with a voice made from the same recording (a deterministic speech-like
signal written as 16-bit PCM; both preprocess it the official way) and the same options (nfe_step,
cfg_strength 2, sway -1, EPSS for the step counts that have a grid, as infer_process), so they integrate
the same number of frames (the official duration formula: about 10 s of generated audio for the default
text). Times are wall-clock seconds after loading:
    step_s       DiT seconds per NFE step (both guidance branches: one batch of 2 per step on both sides),
                 the text encoder included
    vocos_s      the vocoder
    rtf          compute time / generated audio time (lower is better)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from ..memory import peak_rss_mb

REF_TEXT = "This is a synthetic reference recording made for a benchmark."
TEXT = ("The quick brown fox jumps over the lazy dog, and then it runs far away into the quiet green forest "
        "behind the old stone house where nobody has lived for years.")


def reference_wav(seconds: float = 4.0) -> str:
    """The reference recording as a 16-bit WAV (a temporary file; both sides read the same samples)."""
    import numpy as np
    import soundfile as sf

    from vox.verify.qwen3.signals import speech_like

    x = np.round(np.clip(speech_like(24000, seconds), -1, 1 - 2 ** -15) * 32768).astype(np.int16)
    f = tempfile.NamedTemporaryFile(prefix="vox-f5-bench-", suffix=".wav", delete=False)
    f.close()
    sf.write(f.name, x, 24000, subtype="PCM_16")
    return f.name


def run_vox(model: str, nfe: int, threads: int, seed: int = 0, device: str = "cpu") -> dict:
    import vox

    t0 = time.perf_counter()
    eng = vox.Engine(model, threads=threads, device=device)
    load_s = time.perf_counter() - t0
    wav = reference_wav()
    try:
        t0 = time.perf_counter()
        voice = eng.clone_voice(wav, REF_TEXT)
        voice_s = time.perf_counter() - t0
    finally:
        os.unlink(wav)
    before = eng.stats()
    t0 = time.perf_counter()
    n = 0
    with eng.session(voice, seed=seed, nfe_step=nfe) as s:
        s.feed(TEXT)
        s.end()
        for c in s:
            n += c.samples.size
        pieces = json.loads(s.output("pieces").tobytes().decode("utf-8"))
    total = time.perf_counter() - t0
    after = eng.stats()
    d = {k: after["stages"][k]["ms"] - before["stages"][k]["ms"] for k in ("text", "dit", "vocos")}
    steps = after["stages"]["dit"]["count"] - before["stages"]["dit"]["count"]
    audio = n / eng.sample_rate
    out = dict(side="vox", model=os.path.basename(model), precision=eng.info.get("precision", {}).get("dtype"),
               quant=eng.info.get("precision", {}).get("quant"), threads=threads, cpu=eng.info.get("cpu"), nfe=nfe,
               frames=sum(p["frames"] for p in pieces), pieces=len(pieces), audio_s=audio, compute_s=total,
               rtf=total / max(audio, 1e-9), step_s=d["dit"] / 1e3 / max(steps, 1), vocos_s=d["vocos"] / 1e3,
               load_s=load_s, clone_voice_s=voice_s, peak_rss_mb=peak_rss_mb())
    eng.close()
    return out


def run_official(model_dir: str, nfe: int, threads: int, seed: int = 0) -> dict:
    from vox.verify.f5 import official

    torch = official.import_official()
    torch.set_num_threads(threads)
    import glob

    arch = json.loads(open(os.path.join(model_dir, "model_cfg.json")).read())
    ckpt = sorted(glob.glob(os.path.join(model_dir, "*.safetensors")))
    if len(ckpt) != 1:
        raise SystemExit(f"{model_dir}: expected one .safetensors checkpoint, found {len(ckpt)}")
    t0 = time.perf_counter()
    cfm = official.load_cfm(arch, ckpt[0], os.path.join(model_dir, "vocab.txt"))
    voc = official.load_vocoder(os.path.join(model_dir, "vocos"))
    load_s = time.perf_counter() - t0
    wav = reference_wav()
    try:
        t0 = time.perf_counter()
        ref, ref_text = official.preprocess_ref(wav, REF_TEXT)
        voice_s = time.perf_counter() - t0
    finally:
        os.unlink(wav)
    timers = {"dit": 0.0, "vocos": 0.0, "steps": 0, "frames": 0}
    start = {}

    def pre(name):
        def f(mod, args, kwargs=None):
            start[name] = time.perf_counter()
        return f

    def post(name):
        def f(mod, args, *rest):
            timers[name] += time.perf_counter() - start[name]
            if name == "dit":
                timers["steps"] += 1
        return f

    hooks = [cfm.transformer.register_forward_pre_hook(pre("dit")), cfm.transformer.register_forward_hook(post("dit"))]
    decode = voc.decode

    def timed_decode(*a, **k):
        t = time.perf_counter()
        r = decode(*a, **k)
        timers["vocos"] += time.perf_counter() - t
        return r

    voc.decode = timed_decode
    draws: list = []
    t0 = time.perf_counter()
    with official.philox_noise(seed, draws), official.quiet():
        wave, sr, _ = official.utils_infer().infer_process(str(ref), ref_text, TEXT, cfm, voc, mel_spec_type="vocos",
                                                          show_info=lambda *a, **k: None, progress=None, device="cpu",
                                                          nfe_step=nfe)
    total = time.perf_counter() - t0
    for h in hooks:
        h.remove()
    os.unlink(ref)
    audio = len(wave) / sr
    return dict(side="official", model=os.path.basename(os.path.normpath(model_dir)), precision="f32", quant="none",
                threads=threads, cpu="torch " + torch.__version__, nfe=nfe, frames=sum(d for _, d in draws),
                pieces=len(draws), audio_s=audio, compute_s=total, rtf=total / max(audio, 1e-9),
                step_s=timers["dit"] / max(timers["steps"], 1), vocos_s=timers["vocos"], load_s=load_s,
                clone_voice_s=voice_s, peak_rss_mb=peak_rss_mb())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("side", choices=("vox", "official"))
    ap.add_argument("--model", required=True, help="vox: the .tmod; official: the checkpoint folder (one *.safetensors, "
                                                   "vocab.txt, model_cfg.json, vocos/)")
    ap.add_argument("--nfe", type=int, default=32, help="nfe_step (7: the EPSS grid, as infer_process uses it)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", help="vox side: cpu | auto | vulkan[:N]")
    a = ap.parse_args(argv)
    r = run_vox(a.model, a.nfe, a.threads, a.seed, a.device) if a.side == "vox" else \
        run_official(a.model, a.nfe, a.threads, a.seed)
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
