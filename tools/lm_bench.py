"""Time the native language model and decoder of a Qwen3-TTS .tmod (e.g. a full-size random-weight model
from `python -m vox.bench.qwen3.models`, converted with `vox build --quant q8`): ms per frame for the
talker, the code predictor and the decoder, and the real-time factor (VOX_PROFILE=1 prints the same
per session). Base models speak with a random x-vector voice, CustomVoice models with their first
speaker, VoiceDesign models with a short description.

    python tools/lm_bench.py MODEL.tmod [--threads 2] [--frames 40] [--runs 2]
"""

from __future__ import annotations

import argparse
import time


def bench_voice(eng):
    import os
    import tempfile

    import numpy as np

    from vox.formats.tvoice import Voice, write_voice

    caps = eng.capabilities
    if caps.get("speakers"):
        return eng.speaker_voice(eng.speakers[0])
    if caps.get("design"):
        return eng.design_voice("A calm voice.")
    from vox.formats.tmod import TmodFile

    dim = int(TmodFile(eng.model_path).manifest["config"]["talker_config"]["hidden_size"])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.tvoice")
        emb = np.random.default_rng(0).standard_normal(dim).astype(np.float32) * 0.05
        v = Voice("qwen3_tts", "xvector", eng.info["model_id"], "base", name="bench",
                  arrays={"speaker_embedding": emb})
        write_voice(path, v)
        return eng.load_voice(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=4)
    ap.add_argument("--text", default="The quick brown fox jumps over the lazy dog, and then it runs far away "
                                      "into the quiet green forest behind the old stone house.")
    a = ap.parse_args(argv)
    import vox

    with vox.Engine(a.model, threads=a.threads) as eng:
        voice = bench_voice(eng)
        print(f"{eng!r}, {eng.info['threads']} threads, cpu {eng.info['cpu']}")
        for r in range(a.runs):
            s0 = eng.stats()
            t0 = time.perf_counter()
            first = None
            n = 0
            with eng.session(voice, seed=r, max_new_tokens=a.frames + 1, chunk_frames=a.chunk,
                             non_streaming_text=True) as s:
                s.feed(a.text)
                s.end()
                for c in s:
                    first = first or time.perf_counter() - t0
                    n += c.samples.size
                frames = s.output("codes").shape[0]
            dt = time.perf_counter() - t0
            s1 = eng.stats()
            d = {f"{k}_ms": s1["stages"][k]["ms"] - s0["stages"][k]["ms"]
                 for k in ("prefill", "talker", "predictor", "decoder")}
            f = max(frames, 1)
            audio = n / eng.sample_rate
            print(f"run {r}: {frames} frames, {audio:.2f} s audio in {dt:.2f} s: RTF {dt / max(audio, 1e-9):.3f}, "
                  f"first chunk {first or 0:.3f} s; prefill {d['prefill_ms']:.0f} ms; per frame: talker "
                  f"{d['talker_ms'] / f:.1f} ms, predictor {d['predictor_ms'] / f:.1f} ms, decoder "
                  f"{d['decoder_ms'] / f:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
