"""One side of a Kokoro benchmark, run in its own process (so peak RSS is its own). Prints one JSON object.

    python -m vox.bench.kokoro.run vox  --model kokoro.tmod --threads 2 --voice jm_kumo
    python -m vox.bench.kokoro.run onnx --model int8 --threads 2 --voice jm_kumo < phonemes.json

Both sides speak the same texts with the same voice and thread count:
  short      one sentence (SHORT): time to its first audio
  paragraph  three sentences (PARAGRAPH): time to first audio, and RTF over the whole paragraph
vox takes the text (its C frontend, sentence spans, model, trimmed audio, pauses); onnxruntime takes
the phonemes vox's frontend gives for each span (computed by the caller, outside this process and
outside the timing; on stdin as JSON {"short": [spans], "paragraph": [spans]}) and runs span by span,
the best case for a first-audio time. Times are wall-clock seconds after loading and one warm-up:
    rtf             compute time / audio time over the paragraph (lower is better; < 1 real time)
    first_audio_s   from the request to the first audio samples (vox: first chunk; onnx: first span)
    peak_rss_mb     the process's peak resident set (VmHWM), weights included (mmap'd pages count)
    generator       vox: the generator math that ran (int8+bf16 on the SIMD kernel paths, f32 on the
                    scalar one; generator_why says why); onnxruntime: the graph's precision
    cpu_path        vox: the kernel path (VOX_CPU, or the best the CPU has)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from ..memory import peak_rss_mb

SHORT = "The quick brown fox jumps over the lazy dog."
PARAGRAPH = ("Please call Stella and ask her to bring these things with her from the store. "
             "It was a bright cold day in April, and the clocks were striking thirteen. "
             "We will meet at the station at half past nine, if the train is on time.")
SR = 24000


def _best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["compute_s"])


def run_vox(model: str, threads: int, voice: str, runs: int) -> dict:
    import vox

    t0 = time.perf_counter()
    eng = vox.Engine(model, threads=threads)
    load_s = time.perf_counter() - t0
    v = eng.speaker_voice(voice)
    sr = eng.sample_rate

    def once(text: str) -> dict:
        t0 = time.perf_counter()
        first, n = None, 0
        with eng.session(v) as s:
            s.feed(text)
            s.end()
            for c in s:
                if first is None and c.samples.size:
                    first = time.perf_counter() - t0
                n += c.samples.size
        dt = time.perf_counter() - t0
        return {"compute_s": dt, "audio_s": n / sr, "first_audio_s": first if first is not None else dt}

    once(SHORT)  # warm-up: page in the weights, size the work buffers
    short = _best([once(SHORT) for _ in range(runs)])
    para = _best([once(PARAGRAPH) for _ in range(runs)])
    prec = eng.info.get("precision") or {}
    out = dict(side="vox", model=os.path.basename(model), precision=prec, threads=threads,
               cpu_path=vox.devices()["cpu"]["kernels"],
               generator=prec.get("generator_math"), generator_why=prec.get("generator_math_why"),
               voice=voice, load_s=load_s, first_audio_short_s=short["first_audio_s"],
               first_audio_paragraph_s=para["first_audio_s"], audio_s=para["audio_s"], compute_s=para["compute_s"],
               rtf=para["compute_s"] / max(para["audio_s"], 1e-9), peak_rss_mb=peak_rss_mb())
    eng.close()
    return out


def run_onnx(model: str, threads: int, voice: str, runs: int, spans: dict) -> dict:
    from .onnx_peer import OnnxKokoro

    t0 = time.perf_counter()
    k = OnnxKokoro(model, threads=threads)
    load_s = time.perf_counter() - t0

    def once(phonemes: list[str]) -> dict:
        t0 = time.perf_counter()
        first, n = None, 0
        for p in phonemes:
            a = k.synth(p, voice)
            if first is None and a.size:
                first = time.perf_counter() - t0
            n += a.size
        dt = time.perf_counter() - t0
        return {"compute_s": dt, "audio_s": n / SR, "first_audio_s": first if first is not None else dt}

    once(spans["short"])
    short = _best([once(spans["short"]) for _ in range(runs)])
    para = _best([once(spans["paragraph"]) for _ in range(runs)])
    return dict(side=f"onnxruntime {model}", model=os.path.basename(str(k.path)), precision={"dtype": model},
                generator=model, threads=threads, voice=voice, load_s=load_s, first_audio_short_s=short["first_audio_s"],
                first_audio_paragraph_s=para["first_audio_s"], audio_s=para["audio_s"], compute_s=para["compute_s"],
                rtf=para["compute_s"] / max(para["audio_s"], 1e-9), peak_rss_mb=peak_rss_mb())


def frontend_spans(wheels_dir=None) -> dict:
    """{"short": [phonemes per span], "paragraph": [...]}: what vox's frontend makes of the two texts
    (the Python twin of the C frontend), for the onnxruntime side."""
    from vox.verify.kokoro.perceptual import frontend

    fe = frontend(wheels_dir)

    def spans(text: str) -> list[str]:
        out = []
        while text.strip():
            n, used = fe.next_span(text, True)
            if n:
                out.append(fe.phonemize(text[:n].strip()))
            text = text[max(used, 1):]
        return out

    return {"short": spans(SHORT), "paragraph": spans(PARAGRAPH)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("side", choices=("vox", "onnx"))
    ap.add_argument("--model", required=True, help="vox: the .tmod; onnx: int8 | f32 | a path")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--voice", default="jm_kumo")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per text; the fastest is kept")
    a = ap.parse_args(argv)
    if a.side == "vox":
        r = run_vox(a.model, a.threads, a.voice, a.runs)
    else:
        r = run_onnx(a.model, a.threads, a.voice, a.runs, json.loads(sys.stdin.read()))
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
