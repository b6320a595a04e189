"""Check that the engine's cache of primed stream-decoder states (core/src/qwen3/prime_cache.c) gives
the audio of priming afresh, bit for bit: a voice cloned on an engine (primed at cloning), the same
voice saved and loaded on a fresh engine (its first session primes and caches, its second restores),
and a session with another decoder_context (a different entry) against one on a third engine.

    VOX_LIBRARY_DIR=build/dev python tools/check_prime_cache.py MODEL.tmod [--frames 8] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args(argv)
    import vox
    from vox.verify.qwen3.signals import speech_like

    text = "A short sentence to check the decoder."

    def say(eng, voice, **kw):
        with eng.session(voice, seed=7, max_new_tokens=a.frames + 1, language="english", **kw) as s:
            s.feed(text)
            s.end()
            return np.concatenate([c.samples for c in s])

    ok = True
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "v.tvoice")
        e1 = vox.Engine(a.model, threads=a.threads)
        v1 = e1.clone_voice((speech_like(24000, 4.0), 24000), "This is a synthetic reference recording.")
        v1.save(path)
        cloned = say(e1, v1)                       # primed when cloned
        e2 = vox.Engine(a.model, threads=a.threads)
        v2 = e2.load_voice(path)
        first = say(e2, v2)                        # primes afresh, caches
        second = say(e2, v2)                       # restores
        ctx_a = say(e2, v2, decoder_context=20)    # another entry
        e3 = vox.Engine(a.model, threads=1)
        ctx_b = say(e3, e3.load_voice(path), decoder_context=20)
        for name, x, y in [("cloned vs loaded", cloned, first), ("restored vs primed", second, first),
                           ("context 20, cached engine vs fresh", ctx_a, ctx_b)]:
            same = x.shape == y.shape and x.tobytes() == y.tobytes()
            ok &= same
            print(f"{name}: {'bit-identical' if same else 'DIFFERENT'} ({x.size} samples)")
        for e in (e1, e2, e3):
            e.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
