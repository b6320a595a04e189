"""One side of a Qwen3-TTS benchmark, run in its own process (so peak RSS is its own): vox on a .tmod,
or the official PyTorch code on the checkpoint directory the .tmod came from. Prints one JSON object.

    python -m vox.bench.qwen3.run vox --model m.tmod --frames 50 --threads 2
    python -m vox.bench.qwen3.run official --model DIR --frames 50 --threads 2

Both sides synthesize the same text with a voice cloned from the same recording (ICL), the same
sampling parameters and the same number of frames (max_new_tokens = frames + 1; the benchmark models
never emit EOS, see qwen3_models). Times are wall-clock seconds of compute after loading:
    rtf          compute time / audio time (lower is better; < 1 is faster than real time)
    first_chunk  vox: from the start of the session to its first audio chunk, and the same minus the
                 prompt processing; official: it returns audio only at the end (its first audio is the
                 whole run; an estimate of prefill + 4 frames + decoding 4 frames is given beside it)
    per frame    talker, code predictor and decoder milliseconds per 80 ms frame
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from ..memory import peak_rss_mb

TEXT = ("The quick brown fox jumps over the lazy dog. This sentence is long enough to keep the talker busy "
        "for many frames, which is what a benchmark of speed needs.")
REF_TEXT = "This is a synthetic reference recording made by vox verify."


def run_vox(model: str, frames: int, threads: int, seed: int = 0, device: str = "cpu") -> dict:
    import vox
    from vox.verify.qwen3.signals import speech_like

    t0 = time.perf_counter()
    eng = vox.Engine(model, threads=threads, device=device)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    voice = eng.clone_voice((speech_like(24000, 4.0), 24000), REF_TEXT)
    voice_s = time.perf_counter() - t0
    if device != "cpu":   # a GPU builds its pipelines on first use: warm up once, as the official side does
        with eng.session(voice, seed=seed, max_new_tokens=4, language="english") as s:
            s.feed(TEXT)
            s.end()
            for _ in s:
                pass
    before = eng.stats()
    t0 = time.perf_counter()
    first, n = None, 0
    with eng.session(voice, seed=seed, max_new_tokens=frames + 1, language="english") as s:
        s.feed(TEXT)
        s.end()
        for c in s:
            if first is None:
                first = time.perf_counter() - t0
            n += c.samples.size
    total = time.perf_counter() - t0
    after = eng.stats()
    # per stage of the pipeline: milliseconds, and the frames the talker generated (its count)
    d = {f"{k}_ms": after["stages"][k]["ms"] - before["stages"][k]["ms"]
         for k in ("prefill", "talker", "predictor", "decoder")}
    d["frames_generated"] = after["stages"]["talker"]["count"] - before["stages"]["talker"]["count"]
    nf = max(d["frames_generated"], 1)
    audio = n / eng.sample_rate
    out = dict(side="vox", model=os.path.basename(model), precision=eng.info.get("precision"), threads=threads,
               cpu=eng.info.get("cpu"), frames=int(d["frames_generated"]), audio_s=audio, compute_s=total,
               rtf=total / max(audio, 1e-9), first_chunk_s=first, prefill_ms=d["prefill_ms"],
               first_chunk_after_prompt_s=(first - d["prefill_ms"] / 1e3) if first is not None else None,
               talker_ms_per_frame=d["talker_ms"] / nf, predictor_ms_per_frame=d["predictor_ms"] / nf,
               decoder_ms_per_frame=d["decoder_ms"] / nf, load_s=load_s, clone_voice_s=voice_s,
               peak_rss_mb=peak_rss_mb())
    math = eng.info.get("codec_math") or ""   # how the codec's convolutions multiply (VOX_QWEN3_CODEC)
    out["codec_math"] = math
    out["codec"] = (" ".join(math.split()[:2]) if math.startswith(("int8", "bf16"))
                    else "gpu" if math.startswith("on the GPU") else "f32")
    gpu = eng.info.get("gpu")
    out["device"] = gpu["name"] if gpu else "cpu"
    if gpu:   # video memory the engine held after loading (weights; sessions add caches)
        out["vram_mb"] = gpu.get("vram_allocated_at_load_bytes", 0) / 2**20
    eng.close()
    return out


def run_official(model_dir: str, frames: int, threads: int, seed: int = 0, dtype: str = "fp32",
                 device: str = "cpu") -> dict:
    from vox.verify.qwen3.official import import_official
    from vox.verify.qwen3.signals import speech_like

    torch = import_official()
    torch.set_num_threads(threads)
    from qwen_tts import Qwen3TTSModel

    tdt = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    t0 = time.perf_counter()
    on = {"device_map": device} if device != "cpu" else {}
    tts = Qwen3TTSModel.from_pretrained(model_dir, dtype=tdt, attn_implementation="sdpa", **on)
    cuda = device.startswith("cuda")

    def now() -> float:   # CUDA work is asynchronous: time only finished work
        if cuda:
            torch.cuda.synchronize()
        return time.perf_counter()

    load_s = now() - t0
    m = tts.model
    t0 = time.perf_counter()
    prompt = tts.create_voice_clone_prompt(ref_audio=(speech_like(24000, 4.0), 24000), ref_text=REF_TEXT)
    voice_s = time.perf_counter() - t0
    vcp = tts._prompt_items_to_voice_clone_prompt(prompt)
    input_ids = tts._tokenize_texts([tts._build_assistant_text(TEXT)])
    ref_ids = [tts._tokenize_texts([tts._build_ref_text(REF_TEXT)])[0]]
    gen = dict(do_sample=True, top_k=50, top_p=1.0, temperature=0.9, subtalker_dosample=True, subtalker_top_k=50,
               subtalker_top_p=1.0, subtalker_temperature=0.9, repetition_penalty=1.05)

    # the code predictor's share: time its sub-generate calls
    cp_time = [0.0]
    cp = m.talker.code_predictor
    orig = cp.generate

    def timed(*a, **kw):
        t = now()
        r = orig(*a, **kw)
        cp_time[0] += now() - t
        return r

    cp.generate = timed
    prefill = [None]
    h = m.talker.model.register_forward_hook(
        lambda mod, inp, out: prefill.__setitem__(0, now()) if prefill[0] is None else None)
    torch.manual_seed(seed)
    with torch.inference_mode():
        if cuda:   # the first CUDA generate pays for kernel loading and cuBLAS set-up: warm up once
            m.generate(input_ids=input_ids, ref_ids=ref_ids, voice_clone_prompt=vcp, languages=["english"],
                       non_streaming_mode=False, max_new_tokens=4, **gen)
            prefill[0], cp_time[0] = None, 0.0
            torch.manual_seed(seed)
        t0 = now()
        codes, _ = m.generate(input_ids=input_ids, ref_ids=ref_ids, voice_clone_prompt=vcp, languages=["english"],
                              non_streaming_mode=False, max_new_tokens=frames + 1, **gen)
        gen_s = now() - t0
        h.remove()
        cp.generate = orig
        ref_codes = prompt[0].ref_code
        c = torch.cat([ref_codes.to(codes[0].device), codes[0]], dim=0)
        t1 = now()
        wavs, sr = m.speech_tokenizer.decode([{"audio_codes": c}])
        dec_s = now() - t1
        # decoding 4 frames alone, for the first-audio estimate
        t1 = now()
        m.speech_tokenizer.decode([{"audio_codes": codes[0][:4]}])
        dec4_s = now() - t1
    nf = int(codes[0].shape[0])
    audio = nf * 1920 / 24000
    prefill_s = (prefill[0] - t0) if prefill[0] else 0.0
    talker_s = gen_s - prefill_s - cp_time[0]
    total = gen_s + dec_s
    gpu = torch.cuda.get_device_name(torch.device(device)) if cuda else None
    return dict(side="official", model=os.path.basename(os.path.normpath(model_dir)), precision={"dtype": dtype},
                device=gpu or "cpu", vram_mb=torch.cuda.max_memory_allocated(torch.device(device)) / 2**20 if cuda else None,
                threads=threads, frames=nf, audio_s=audio, compute_s=total, rtf=total / max(audio, 1e-9),
                first_chunk_s=total, first_chunk_estimate_s=prefill_s + 4 * (gen_s - prefill_s) / max(nf, 1) + dec4_s,
                prefill_ms=prefill_s * 1e3, talker_ms_per_frame=talker_s * 1e3 / max(nf, 1),
                predictor_ms_per_frame=cp_time[0] * 1e3 / max(nf, 1),
                decoder_ms_per_frame=dec_s * 1e3 / max(nf + int(ref_codes.shape[0]), 1),
                load_s=load_s, clone_voice_s=voice_s, peak_rss_mb=peak_rss_mb())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("side", choices=("vox", "official"))
    ap.add_argument("--model", required=True, help="vox: the .tmod; official: the checkpoint directory")
    ap.add_argument("--frames", type=int, default=50)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtype", default="fp32", help="official side: fp32 | bf16")
    ap.add_argument("--official-device", default="cpu", help="official side: cpu | cuda[:N] (PyTorch's device)")
    ap.add_argument("--device", default="cpu", help="vox side: cpu | auto | vulkan[:N] (VOX_PROFILE=gpu prints the "
                                                    "GPU profile on stderr)")
    a = ap.parse_args(argv)
    r = run_vox(a.model, a.frames, a.threads, a.seed, a.device) if a.side == "vox" else \
        run_official(a.model, a.frames, a.threads, a.seed, a.dtype, a.official_device)
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
