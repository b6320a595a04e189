"""A quick end-to-end pass over the native library through Python, for the sanitizer build
(scripts/sanitize.sh runs it with AddressSanitizer + UndefinedBehaviorSanitizer preloaded).

Covers: engine creation and info, tokenization, voices (speaker, design, clone), .tvoice save/load,
synthesis through a session (chunks, cancellation), the codec decoder in both modes, corrupt model
and voice files rejected. Exits non-zero on any failure.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="vox-smoke-"))
    try:
        return run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(tmp: Path) -> int:
    import vox
    from fixtures.qwen3_tiny import fixture_dir
    from vox.convert import convert
    from vox.families.qwen3 import decode

    models = {}
    for variant, dtype, quant in (("custom06", "bf16", "q8"), ("base17", "f32", "none"), ("design17", "f16", "q4")):
        models[variant] = tmp / f"{variant}.tmod"
        convert(fixture_dir(variant), models[variant], dtype=dtype, quant=quant)

    with vox.Engine(models["custom06"], threads=2) as eng:
        assert eng.speakers and "english" in eng.languages
        assert eng.tokenize("Hello world.").size > 0
        v = eng.speaker_voice(eng.speakers[0])
        v.save(tmp / "spk.tvoice")
        v2 = eng.load_voice(tmp / "spk.tvoice")
        audio = eng.synthesize("Hello world, this is a smoke test.", v2, seed=1, max_new_tokens=12)
        assert audio.dtype == np.float32 and audio.size > 0 and np.isfinite(audio).all()
        with eng.session(v, seed=2, max_new_tokens=40) as s:
            s.feed("A sentence long enough to be cancelled half way through its frames.")
            s.end()
            next(iter(s))
            s.cancel()
            try:
                s.pull()
                raise AssertionError("pull after cancel should fail")
            except vox.VoxError:
                pass
        codes = np.random.default_rng(0).integers(0, 2048, size=(9, 16))
        for mode in ("stream", "reference"):
            pcm = decode(eng, codes, mode=mode, chunk_frames=4)
            assert pcm.size == 9 * 1920 and np.isfinite(pcm).all()
    with vox.Engine(models["base17"], threads=1) as eng:
        sr = 24000
        wav = (0.3 * np.sin(2 * np.pi * 180 * np.arange(3 * sr) / sr)).astype(np.float32)
        voice = eng.clone_voice((wav, sr), "A short reference sentence.")
        assert voice.array("ref_codes") is not None and voice.array("speaker_embedding") is not None
        assert eng.synthesize("Short.", voice, max_new_tokens=6).size > 0
    with vox.Engine(models["design17"]) as eng:
        assert eng.synthesize("Designed.", eng.design_voice("A calm voice."), max_new_tokens=6).size > 0

    # corrupt files are errors, never crashes
    data = bytearray(models["custom06"].read_bytes())
    for i, cut in enumerate((10, 100, 5000, len(data) - 1)):
        bad = tmp / f"cut{i}.tmod"
        bad.write_bytes(data[:cut])
        try:
            vox.Engine(bad)
            raise AssertionError("a truncated model must be refused")
        except vox.FormatError:
            pass
    vdata = bytearray((tmp / "spk.tvoice").read_bytes())
    vdata[len(vdata) // 2] ^= 0xFF
    (tmp / "bad.tvoice").write_bytes(vdata)
    with vox.Engine(models["custom06"]) as eng:
        try:
            eng.load_voice(tmp / "bad.tvoice")
            raise AssertionError("a corrupt voice must be refused")
        except vox.VoxError:
            pass
    print(f"smoke: ok ({os.environ.get('VOX_LIBRARY_DIR', 'installed libvox')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
