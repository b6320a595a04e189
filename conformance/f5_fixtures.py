"""Module-scoped fixtures of the F5-TTS conformance files (test_f5_reference.py, test_f5_native.py): the
official code, the tiny official models (v1 and v0), the frontend data and a reference clip. Each test
module imports the ones it uses, so each builds them once."""

from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf

REF_TEXT = "The quick brown fox jumps over the lazy dog."
AUDIO = Path(__file__).resolve().parent.parent / "fixtures" / "audio"

# End-to-end scenarios: (text to speak, infer_process options)
SCENARIOS = {
    "one piece": ("Hello world, this is a tiny test.", dict(nfe_step=8)),
    "pieces + cross-fade": ("First sentence here, and more words to say. Second one is a little longer than that! "
                            "Third question? " * 5, dict(nfe_step=2)),
    "fix_duration": ("A fixed duration test. And a second sentence, please. " * 5, dict(nfe_step=6, fix_duration=8.0)),
    "speed": ("Speed changes the duration.", dict(nfe_step=8, speed=1.7)),
    "EPSS + Chinese": ("EPSS with seven steps. 你好，世界！", dict(nfe_step=7, cfg_strength=1.5)),
}


@pytest.fixture(scope="module")
def off():
    from vox.verify.f5 import official

    torch = official.import_official()
    torch.set_num_threads(1)
    return official


@pytest.fixture(scope="module")
def fx():
    from fixtures import f5_tiny

    return {v: f5_tiny.fixture(v) for v in ("v1", "v0")}


@pytest.fixture(scope="module")
def text_data(fx):
    from vox.families.f5 import sources as f5_sources

    return f5_sources.cached_frontend(fx["v1"].vocab.read_bytes())


@pytest.fixture(scope="module")
def models(off, fx, text_data):
    """{variant: (official CFM, official Vocos, reference F5Model read from the checkpoint)}."""
    from vox.families.f5 import convert as f5

    out = {}
    for v, f in fx.items():
        cfm, voc = off.load_fixture(f)
        out[v] = (cfm, voc, f5.read_checkpoint(f.safetensors, f.vocab, f.vocos, text_data=text_data))
    return out


@pytest.fixture(scope="module")
def ref_clip(off, tmp_path_factory):
    """A 2.5 s speech clip through the official preprocess_ref_audio_text: (processed WAV, text, float32
    [channels, samples] as torchaudio.load reads it, rate, the clip as recorded (a WAV path))."""
    x, sr = sf.read(AUDIO / "ref_en_24k.wav", dtype="int16")
    p = tmp_path_factory.mktemp("f5ref") / "clip.wav"
    sf.write(p, x[: int(2.5 * sr)], sr, subtype="PCM_16")
    wav, text = off.preprocess_ref(p, REF_TEXT)
    a, r = sf.read(wav, dtype="float32", always_2d=True)
    return wav, text, a.T.copy(), r, p
