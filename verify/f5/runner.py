"""F5-TTS comparisons: the official CFM / DiT / Vocos (f5-tts 1.1.22, vocos 0.1.0) and the numpy reference
on the same weights, the same inputs and the same initial noise, stage by stage.

Every official call goes through the official modules (no reimplementation): DiT.text_embed,
DiT.forward(cfg_infer=True) for both guidance branches at once, DiT.time_embed, CFM.sample with
Philox noise injected (official.philox_noise), Vocos.decode, and infer_process end to end.
"""

from __future__ import annotations

import random

import numpy as np

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
