"""F5-TTS comparisons: the official CFM / DiT / Vocos (f5-tts 1.1.22, vocos 0.1.0) and the numpy reference
on the same weights, the same inputs and the same initial noise, stage by stage.

Every official call goes through the official modules (no reimplementation): DiT.text_embed,
DiT.forward(cfg_infer=True) for both guidance branches at once, DiT.time_embed, CFM.sample with
Philox noise injected (official.philox_noise), Vocos.decode, and infer_process end to end.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

import numpy as np

from ..fpstate import keeps_fp_state
from ..metrics import max_abs_rel
from ..tolerance import Row, measure

# Texts of the tokenizer rows: English, Chinese with tones and sandhi, mixed scripts and punctuation.
ENGLISH = ("Hello world, this is a tiny test.", "Mr. Smith's dog: \"ok\"; it's 3.5 km away!",
           "Some call me nature, others call me mother nature.")
CHINESE = ("你好，世界！", "我们不是一个人。一一得一，不对不要。", "老鼠保管好了吗？他是个好人。",
           "绿色的女儿嗯了一声，长大了就会明白。")
MIXED = ("F5-TTS 是一个很好的模型, it works well; “quoted” ‘x’.", "T恤3.5元，OK吗？我爱北京 and New York!",
         "𠮶字、〇、の、ＡＢＣ、ㄅㄆ", "重庆的重要性, 银行行长 said 'yes'.")


def random_texts(words: list[str], phrases: list[str], n: int, seed: int = 2) -> list[str]:
    """Random strings of dictionary words, pinyin phrases, single characters and ASCII/punctuation:
    they reach the segmenter's HMM, the phrase matcher, the sandhi rules and every branch of
    convert_char_to_pinyin."""
    rng = random.Random(seed)
    chars = [chr(c) for c in range(0x4E00, 0x9FA5)]
    extra = [" ", "abc", "Hello", "，", "。", "；", ";", "“", "’", "3.5", "x-y", "不", "一", "\u3100", "の", "é",
             "A1_x", "a..b", "12.5%", "\r\n"]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 10)):
            r = rng.random()
            parts.append(rng.choice(words) if r < .35 else rng.choice(phrases) if r < .6 else rng.choice(chars)
                         if r < .8 else rng.choice(extra))
        out.append("".join(parts))
    return out


def official_text_embedding(cfm, ids, seq_len: int, drop_text: bool) -> np.ndarray:
    import torch

    with torch.no_grad():
        return cfm.transformer.text_embed(torch.from_numpy(np.asarray(ids, np.int64))[None], seq_len,
                                          drop_text=drop_text)[0].numpy()


def official_dit(cfm, x, cond, ids, t: float) -> tuple[np.ndarray, np.ndarray]:
    """(conditional, unconditional) flow of DiT.forward(cfg_infer=True) at time t."""
    import torch

    tr = cfm.transformer
    tr.clear_cache()
    with torch.no_grad():
        o = tr(x=torch.from_numpy(x)[None], cond=torch.from_numpy(cond)[None],
               text=torch.from_numpy(np.asarray(ids, np.int64))[None], time=torch.tensor(t, dtype=torch.float32),
               cfg_infer=True, cache=False).numpy()
    return o[0], o[1]


def official_time_embedding(cfm, t: float) -> np.ndarray:
    import torch

    with torch.no_grad():
        return cfm.transformer.time_embed(torch.tensor([t], dtype=torch.float32))[0].numpy()


def official_sample(cfm, cond_mel: np.ndarray, ids, duration: int, *, seed: int, steps: int, cfg_strength: float,
                    sway: float | None, use_epss: bool = True) -> np.ndarray:
    """CFM.sample on a conditioning mel [Nc, 100] with piece 0's Philox noise: the final mel [D, 100]."""
    import torch

    from .official import philox_noise

    with philox_noise(seed), torch.inference_mode():
        out, _ = cfm.sample(cond=torch.from_numpy(cond_mel)[None], text=torch.from_numpy(np.asarray(ids, np.int64))[None],
                            duration=int(duration), steps=steps, cfg_strength=cfg_strength,
                            sway_sampling_coef=sway, use_epss=use_epss)
    return out[0].numpy()


def official_vocos(vocoder, mel: np.ndarray) -> np.ndarray:
    import torch

    with torch.inference_mode():
        return vocoder.decode(torch.from_numpy(mel)[None])[0].numpy()


def official_mel(cfm, audio: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        return cfm.mel_spec(torch.from_numpy(np.asarray(audio, np.float32))[None])[0].numpy()


def split_symbols(b: np.ndarray) -> list[str]:
    """The "tokenize" entry's symbols or segments output (UTF-8, each followed by 0x1F) as a list."""
    return bytes(b).decode("utf-8").split("\x1f")[:-1]


def token_matches(eng, cfm, texts) -> tuple[list[bool], list[bool]]:
    """Per text: whether the engine's symbols equal convert_char_to_pinyin's, and its ids the official
    CFM's vocab_char_map of them (unknown symbols 0, as list_str_to_idx)."""
    from f5_tts.model.utils import convert_char_to_pinyin

    got = [eng.run("tokenize", inputs={"text": t}) for t in texts]
    theirs = [convert_char_to_pinyin([t])[0] for t in texts]
    return ([split_symbols(g["symbols"]) == s for g, s in zip(got, theirs)],
            [g["ids"].tolist() == [cfm.vocab_char_map.get(c, 0) for c in s] for g, s in zip(got, theirs)])


def native_session(eng, voice, text: str, seed: int, **kw):
    """(audio, pieces [{text, duration, frames, tokens}], generated mel [frames][n_mels], chunks) of one
    engine session of the whole text."""
    import json

    with eng.session(voice, seed=seed, **kw) as s:
        s.feed(text)
        s.end()
        chunks = [c.samples for c in s]
        pieces = json.loads(s.output("pieces").tobytes().decode("utf-8"))
        mel = s.output("mel").copy()
    return np.concatenate(chunks), pieces, mel, chunks


# ------------------------------------------------------------------------------------- vox verify
GEN_TEXT = "Some call me nature, others call me mother nature."


def _exact(info: dict) -> bool:
    """Whether the engine computes with the stored weights in float32 (the stage rows of the official code
    apply); bf16 dot products and q8 products round the activations too, and have their own rows."""
    return info["dit_math"].startswith("f32 products") and info["conv_math"] == "the stored weights' products"


def _format_row(info: dict) -> str:
    """The tolerance row of an engine whose arithmetic rounds the activations (end to end vs the reference)."""
    if info["precision"]["quant"] == "q8":
        return "f5.native.q8_vs_reference"
    return "f5.native.bf16dot_vs_reference"


@keeps_fp_state
def verify(model_path, *, ref_audio: str | None = None, ref_text: str | None = None, nfe_step: int = 7,
           say: Callable[[str], None] = lambda s: None) -> list[Row]:
    """The C core (vox.Engine) on a .tmod against the official f5-tts / vocos code holding the .tmod's own
    weights (reduced-precision weights as stored, widened), so the implementation is checked at any
    precision: the tokenizer, the recording's mel, the text encoder and the DiT's two guidance branches
    at two times, Vocos, and a session end to end (a native clone of the recording vs the official
    preprocess_ref_audio_text + infer_process with the same Philox noise). Where the engine's arithmetic
    rounds the activations (bf16 dot products, q8 products) the DiT is held end to end against the numpy
    reference on the same weights instead, with its format row."""
    import tempfile

    import soundfile as sf

    import vox
    from vox.families.f5 import convert as f5
    from vox.reference.f5 import dit as ref_dit
    from vox.reference.f5 import pipeline

    from ..qwen3.signals import speech_like
    from . import official

    if ref_audio is not None:   # before minutes of loading, and clearer than the official reader's errors
        if not ref_text:
            raise ValueError("--ref-audio needs --ref-text (the transcript of the recording)")
        if not Path(ref_audio).is_file():
            raise ValueError(f"{ref_audio}: no such file")
        try:
            sf.info(ref_audio)
        except (RuntimeError, OSError) as e:
            raise ValueError(f"{ref_audio}: not an audio file soundfile can read ({e})") from None
    official.import_official()

    label = Path(model_path).name
    model = f5.read_tmod(model_path)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="vox-f5-verify-") as d:
        say(f"loading the official CFM and Vocos with the weights of {label}")
        try:
            cfm, voc = official.load_from_model(model, d)
        except OSError as e:   # the float32 copy the official loaders read (1.3 GB for F5TTS_v1_Base)
            need = sum(4 * int(np.prod(a.shape)) for a in model.weights.values())
            raise OSError(f"writing the float32 weights the official loaders read ({need / 2**30:.1f} GiB) "
                          f"into {d} failed ({e.strerror or e}); set TMPDIR to a folder with room") from None
        if ref_audio is None:
            ref_audio, ref_text = str(Path(d) / "reference.wav"), "This is a synthetic reference recording."
            x = np.round(np.clip(speech_like(24000, 4.0), -1, 1 - 2 ** -15) * 32768).astype(np.int16)
            sf.write(ref_audio, x, 24000, subtype="PCM_16")
        name = Path(ref_audio).name
        with vox.Engine(model_path) as eng:
            info = eng.info
            backend = "cpu"
            say("tokenizer: English, Chinese with tones, mixed scripts")
            for group, texts in (("English", ENGLISH), ("Chinese", CHINESE), ("mixed", MIXED)):
                sym, ids = token_matches(eng, cfm, texts)
                rows += [Row("f5.native.tokens", f"{label} {group}: symbols", float(np.mean(sym)), backend=backend),
                         Row("f5.native.tokens", f"{label} {group}: ids", float(np.mean(ids)), backend=backend)]

            say(f"the mel of {name} and Vocos on it")
            ref_wav, ref_text_official = official.preprocess_ref(ref_audio, ref_text)
            a, sr = sf.read(ref_wav, dtype="float32", always_2d=True)
            audio = a.T.copy()
            mel = official_mel(cfm, audio[0])
            ours_mel = eng.run("mel", inputs={"audio": audio[0]})["mel"]
            # linear energies: the log of the bands near the floor (a synthetic recording's pauses) magnifies
            # float32 rounding that both sides have
            rows.append(measure("f5.native.sample_mel", np.exp(ours_mel), np.exp(mel.T), f"{label} {name}, linear",
                                backend=backend))
            got = eng.run("vocos", inputs={"mel": mel.T.copy()})["audio"]
            rows.append(measure("f5.native.vocos", got, official_vocos(voc, mel), f"{label} {name}, {mel.shape[1]} frames",
                                backend=backend))

            exact = _exact(info)
            ids = np.asarray(model.tokenizer.encode(ref_text_official + " " + GEN_TEXT), np.int32)
            if exact:
                say("text encoder and the DiT's two guidance branches")
                rng = np.random.RandomState(3)
                n = max(len(ids) + 8, 200)
                te = eng.run("text_encoder", inputs={"ids": ids, "frames": n})
                for drop, key in ((False, "text_cond"), (True, "text_uncond")):
                    rows.append(measure("f5.native.text_encoder", te[key], official_text_embedding(cfm, ids, n, drop),
                                        f"{label} {key[5:]}", backend=backend))
                x = rng.randn(n, mel.shape[0]).astype(np.float32)
                cond = np.zeros_like(x)
                cond[: min(n // 2, mel.shape[1])] = mel.T[: min(n // 2, mel.shape[1])]
                w, c = model.weights, model.config.dit
                rte = ref_dit.text_embedding(ids, n, w, c), ref_dit.text_embedding(ids, n, w, c, drop_text=True)
                for t in (0.0, 0.6):
                    g = eng.run("dit", inputs={"x": x, "cond": cond, "ids": ids, "t": np.float32(t)})
                    oc, ou = official_dit(cfm, x, cond, ids, t)
                    # the rounding of float32 grows with the depth (the suite's limits are the 2-layer tiny
                    # model's): each branch against the official code over the reference's distance to it
                    rc = ref_dit.dit(x, cond, rte[0], np.float32(t), w, c)
                    ru = ref_dit.dit(x, cond, rte[1], np.float32(t), w, c, drop_audio_cond=True)
                    for branch, ours_b, off_b, ref_b in (("cond", g["flow_cond"], oc, rc), ("uncond", g["flow_uncond"], ou, ru)):
                        rows.append(measure("f5.native.dit_spread", ours_b, off_b, f"{label} {branch}, t={t}",
                                            backend=backend, peer=ref_b, floor=1e-6, cap=1e-5,
                                            note=f"vox {max_abs_rel(ours_b, off_b):.3g}, reference "
                                                 f"{max_abs_rel(ref_b, off_b):.3g} from the official flow"))
                    rows.append(measure("f5.native.time_embedding", g["time_embedding"][0],
                                        official_time_embedding(cfm, t), f"{label} t={t}", backend=backend))

            say(f"end to end: a clone of {name}, {nfe_step} steps (the official side takes a while on a full-size "
                "model)")
            kw = dict(nfe_step=nfe_step)
            ours, pieces, _, _ = native_session(eng, eng.clone_voice(ref_audio, ref_text), GEN_TEXT, 0, **kw)
            theirs, _, _, draws = official.infer(ref_wav, ref_text_official, GEN_TEXT, cfm, voc, seed=0, **kw)
            subject = f"{label} {name}, {nfe_step} steps ({len(theirs) / 24000:.1f} s)"
            rows.append(Row("f5.native.piece_frames", subject + ": frames of each piece",
                            float([(i, p["frames"]) for i, p in enumerate(pieces)] == draws), backend=backend))
            audio_row = "f5.native.audio_spread" if exact else _format_row(info)
            if ours.shape != theirs.shape:   # a failing row, not an exception: the other rows still say where
                rows.append(Row(audio_row, subject, float("inf"), backend=backend,
                                note=f"{ours.shape[0]} samples against the official {theirs.shape[0]}"))
                return rows
            say("end to end: the numpy reference on the same weights (float32; slow on a full-size model)")
            ref = pipeline.synthesize(model, audio, sr, ref_text_official, GEN_TEXT, seed=0, **kw).audio
            rows.append(measure("f5.native.reference_vs_official", ref, theirs, subject, backend="reference"))
            if exact:
                spread = max_abs_rel(ref, theirs)
                rows.append(measure(audio_row, ours, theirs, subject, backend=backend, peer=ref,
                                    note=f"vox {max_abs_rel(ours, theirs):.3g}, reference {spread:.3g} from the official "
                                         "audio"))
            else:
                rows.append(measure(audio_row, ours, ref, subject, backend=backend,
                                    note=info["dit_math"].split(" (")[0]))
    return rows
