"""Intelligibility of each Kokoro voice pack in English: WER over the perceptual corpus.

    python tools/kokoro_voice_wer.py --side vox  --model kokoro.tmod      # vox (the product path)
    python tools/kokoro_voice_wer.py --side onnx --onnx int8              # onnxruntime, same phonemes

Every sentence of fixtures/kokoro/perceptual_en.txt is spoken with each voice, transcribed by
whisper-base and scored after normalization (vox.verify.perceptual). The default English voice
(vox.models.DEFAULT_VOICE) is the one with the lowest WER (a tie is broken by the other runtime's
measurement); docs/kokoro.md records both tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--side", choices=("vox", "onnx"), default="vox")
    ap.add_argument("--model", help="vox: the .tmod (default: the default model)")
    ap.add_argument("--onnx", default="int8", help="onnx: int8 | f32")
    ap.add_argument("--voices", default="jm_kumo,jf_alpha,jf_gongitsune,jf_nezumi,jf_tebukuro")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--errors", action="store_true", help="print each sentence with errors")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args(argv)

    from vox.verify.kokoro import perceptual as kg
    from vox.verify.perceptual.asr import Transcriber
    from vox.verify.perceptual.wer import corpus_wer

    texts = kg.load_corpus()
    asr = Transcriber(threads=a.threads)
    if a.side == "vox":
        import vox
        from vox.models import ensure_default_model

        eng = vox.Engine(a.model or ensure_default_model(), threads=a.threads)

        def speak(voice):
            return kg.native_text(eng, eng.speaker_voice(voice), texts)
    else:
        from vox.bench.kokoro.onnx_peer import OnnxKokoro

        k = OnnxKokoro(a.onnx, threads=a.threads)
        phonemes = kg.phonemize(texts)

        def speak(voice):
            return [k.synth(p, voice) for p in phonemes]

    results = {}
    for v in a.voices.split(","):
        t0 = time.perf_counter()
        audio = speak(v)
        hyps = kg.transcribe_all(asr, audio)
        w, scores = corpus_wer(texts, hyps)
        errs, words = sum(s.errors for s in scores), sum(s.words for s in scores)
        results[v] = {"wer": w, "errors": errs, "words": words, "seconds": time.perf_counter() - t0}
        print(f"{v:<14} WER {w:.3f} ({errs}/{words} words)", flush=True)
        if a.errors:
            for s in scores:
                if s.errors:
                    print(f"    {s.errors} | {s.ref} | {s.hyp}")
    low = min(r["errors"] for r in results.values())
    best = [v for v in results if results[v]["errors"] == low]
    print(f"lowest WER: {', '.join(best)}" + (" (a tie: measure with the other side too)" if len(best) > 1 else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"side": a.side, "results": results, "best": best}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
