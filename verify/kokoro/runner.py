"""Kokoro comparisons: the official KModel and the numpy reference on the same weights, the same
tokens and the same style row, stage by stage, as tolerance-table Rows.

official_forward mirrors KModel.forward_with_tokens line by line, calling the official modules, and
keeps the intermediates (durations, F0, N, text-encoder output, the generator's pre-iSTFT magnitude
and phase). The source's randomness is zeroed on both sides (official.zero_source_randomness, the
reference's noise="zero").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..fpstate import keeps_fp_state
from ..tolerance import Row

# A few sentences in Kokoro's (misaki) phoneme set: the conformance corpus of the reference.
PHONEME_SENTENCES = (
    "ðə kwˈɪk bɹˈWn fˈɑks ʤˈʌmps ˌOvəɹ ðə lˈAzi dˈɔɡ.",
    "hˈaʊ mˈʌʧ wʊd ə wˈʊdʧʌk ʧˈʌk, ɪf ə wˈʊdʧʌk kʊd ʧˈʌk wˈʊd?",
    "ɪt wʌz ə bɹˈIt kˈOld dˈA ɪn ˈApɹəl, ænd ðə klˈɑks wɜɹ stɹˈIkɪŋ θˌɜɹtˈinz.",
)


@dataclass
class Stages:
    durations: np.ndarray
    dur_float: np.ndarray
    f0: np.ndarray
    n: np.ndarray
    t_en: np.ndarray
    d: np.ndarray
    mag: np.ndarray
    phase: np.ndarray
    har: np.ndarray
    audio: np.ndarray


def official_forward(km, ids, ref_s: np.ndarray, speed: float = 1.0) -> Stages:
    """KModel.forward_with_tokens (kokoro 0.9.4) step by step; `ids` without the 0 pads."""
    import torch

    from .official import zero_source_randomness

    input_ids = torch.LongTensor([[0, *[int(i) for i in ids], 0]])
    ref = torch.from_numpy(np.asarray(ref_s, np.float32).reshape(1, -1))
    captured: dict = {}
    gen = km.decoder.generator
    inverse, transform = gen.stft.inverse, gen.stft.transform

    def cap_inverse(mag, phase):
        captured["mag"], captured["phase"] = mag[0].numpy().copy(), phase[0].numpy().copy()
        return inverse(mag, phase)

    def cap_transform(x):
        m, p = transform(x)
        captured["har"] = torch.cat([m, p], dim=1)[0].numpy().copy()
        return m, p

    gen.stft.inverse, gen.stft.transform = cap_inverse, cap_transform
    try:
        with torch.no_grad(), zero_source_randomness():
            input_lengths = torch.full((1,), input_ids.shape[-1], dtype=torch.long)
            text_mask = torch.arange(input_lengths.max()).unsqueeze(0).expand(1, -1).type_as(input_lengths)
            text_mask = torch.gt(text_mask + 1, input_lengths.unsqueeze(1))
            bert_dur = km.bert(input_ids, attention_mask=(~text_mask).int())
            d_en = km.bert_encoder(bert_dur).transpose(-1, -2)
            s = ref[:, 128:]
            d = km.predictor.text_encoder(d_en, s, input_lengths, text_mask)
            x, _ = km.predictor.lstm(d)
            duration = km.predictor.duration_proj(x)
            duration = torch.sigmoid(duration).sum(axis=-1) / speed
            pred_dur = torch.round(duration).clamp(min=1).long().squeeze()
            indices = torch.repeat_interleave(torch.arange(input_ids.shape[1]), pred_dur)
            aln = torch.zeros((input_ids.shape[1], indices.shape[0]))
            aln[indices, torch.arange(indices.shape[0])] = 1
            aln = aln.unsqueeze(0)
            en = d.transpose(-1, -2) @ aln
            f0, n = km.predictor.F0Ntrain(en, s)
            t_en = km.text_encoder(input_ids, input_lengths, text_mask)
            asr = t_en @ aln
            audio = km.decoder(asr, f0, n, ref[:, :128]).squeeze()
    finally:
        gen.stft.inverse, gen.stft.transform = inverse, transform
    return Stages(pred_dur.numpy().copy(), duration[0].numpy().copy(), f0[0].numpy().copy(), n[0].numpy().copy(),
                  t_en[0].numpy().copy(), d[0].numpy().copy(), captured["mag"], captured["phase"], captured["har"],
                  audio.numpy().copy())


def official_fft_floor(km, ids, ref_s: np.ndarray, speed: float = 1.0) -> np.ndarray:
    """The official model's audio with only its source STFT computed differently (float64 numpy FFT of
    the same source signal, cast to float32): how much the official output itself moves when the FFT's
    rounding noise changes. The floor under any end-to-end audio comparison."""
    import torch

    from vox.reference.kokoro.stft import stft

    gen = km.decoder.generator
    transform = gen.stft.transform

    def numpy_transform(x):
        m, p = stft(x[0].numpy(), gen.stft.filter_length, gen.stft.hop_length)
        return torch.from_numpy(m)[None], torch.from_numpy(p)[None]

    gen.stft.transform = numpy_transform
    try:
        return official_forward(km, ids, ref_s, speed).audio
    finally:
        gen.stft.transform = transform


def reference_forward(weights, cfg: dict, ids, ref_s: np.ndarray, speed: float = 1.0) -> Stages:
    from vox.reference.kokoro.model import synthesize

    o = synthesize(weights, cfg, ids, ref_s, speed, noise="zero")
    return Stages(o.durations, o.dur_float, o.f0, o.n, o.t_en, o.d, o.mag, o.phase, o.taps["har"], o.audio)


def magnitude_floor_phase_error(ours_mag, ours_phase, ref_mag, ref_phase, floor_rel: float = 1e-2) -> float:
    """Largest wrapped phase difference over the bins whose official magnitude is above floor_rel of
    the largest (the phase of a near-silent bin is numerical noise)."""
    m = ref_mag > floor_rel * ref_mag.max()
    if not m.any():
        return 0.0
    d = np.angle(np.exp(1j * (ours_phase[m].astype(np.float64) - ref_phase[m])))
    return float(np.abs(d).max())


def log_spectral_distance(a: np.ndarray, b: np.ndarray, n_fft: int = 1024, hop: int = 256) -> float:
    """Mean over frames of the RMS (over bins) difference of the dB power spectra (Hann, 1024/256);
    a scale-aware audio comparison that ignores the phase."""
    def spec(x):
        x = np.asarray(x, np.float64)
        if len(x) < n_fft:
            x = np.pad(x, (0, n_fft - len(x)))
        frames = 1 + (len(x) - n_fft) // hop
        idx = np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :]
        p = np.abs(np.fft.rfft(x[idx] * np.hanning(n_fft), axis=1)) ** 2
        return 10 * np.log10(p + 1e-10)

    sa, sb = spec(a), spec(b)
    return float(np.mean(np.sqrt(np.mean((sa - sb) ** 2, axis=1))))


def reference_decoder(weights, cfg: dict, given: Stages, ref_s: np.ndarray, *, force_source: bool = True) -> Stages:
    """The reference decoder teacher-forced with the official durations, F0, N and text-encoder output
    (and, with force_source, the official STFT of the harmonic source), so its rows measure the
    decoder alone. Two amplifiers make free-running comparisons loose: the harmonic source turns an
    F0 difference of 1e-7 into a phase drift of ~0.1 rad over a sentence, and the phase of a
    near-silent source STFT bin is the rounding noise of the FFT that computed it."""
    from vox.reference.kokoro.decoder import decoder_features, generator

    s_dec = np.asarray(ref_s, np.float32).reshape(-1)[:128]
    asr = np.repeat(given.t_en, given.durations, axis=1)
    x = decoder_features(asr, given.f0, given.n, s_dec, weights)
    taps: dict = {}
    audio = generator(x, s_dec, given.f0, weights, cfg, noise="zero", taps=taps,
                      har=given.har if force_source else None)
    if force_source:  # what the reference computes for the source, for the source row
        from vox.reference.kokoro.stft import stft

        taps["har"] = np.concatenate(stft(taps["har_source"], cfg["istftnet"]["gen_istft_n_fft"],
                                          cfg["istftnet"]["gen_istft_hop_size"]))
    return Stages(given.durations, given.dur_float, given.f0, given.n, given.t_en, given.d, taps["mag"],
                  taps["phase"], taps["har"], audio)


def compare(ours: Stages, ref: Stages, subject: str, backend: str = "reference", prefix: str = "kokoro",
            decoder: Stages | None = None, random_weights: bool = False) -> list[Row]:
    """The rows of one sentence: durations exact, the predictor and encoders within tolerance, the
    decoder teacher-forced (`decoder`, from reference_decoder), the free-running audio by its spectrum."""
    from ..metrics import match_fraction, max_abs_rel, rel_l2

    rows = [Row(f"{prefix}.durations", subject, match_fraction(ours.durations, ref.durations), backend=backend)]
    if ours.durations.shape != ref.durations.shape or not np.array_equal(ours.durations, ref.durations):
        return rows  # later stages have different lengths: nothing more to compare
    rows += [
        Row(f"{prefix}.duration_logits", subject, max_abs_rel(ours.dur_float, ref.dur_float), backend=backend),
        Row(f"{prefix}.duration_encoder", subject, max_abs_rel(ours.d, ref.d), backend=backend),
        Row(f"{prefix}.f0", subject, max_abs_rel(ours.f0, ref.f0), backend=backend),
        Row(f"{prefix}.noise_curve", subject, max_abs_rel(ours.n, ref.n), backend=backend),
        Row(f"{prefix}.text_encoder", subject, max_abs_rel(ours.t_en, ref.t_en), backend=backend),
    ]
    if decoder is not None:
        rows += [
            Row(f"{prefix}.source_stft_magnitude", subject, max_abs_rel(decoder.har[:11], ref.har[:11]),
                backend=backend),
            Row(f"{prefix}.magnitude", subject, rel_l2(decoder.mag, ref.mag), backend=backend),
            Row(f"{prefix}.phase", subject,
                magnitude_floor_phase_error(decoder.mag, decoder.phase, ref.mag, ref.phase), backend=backend),
            Row(f"{prefix}.decoder_audio", subject, rel_l2(decoder.audio, ref.audio), backend=backend),
        ]
    if random_weights:  # random decoders are chaotic in F0: reported, judged by the teacher-forced rows
        rows.append(Row(f"{prefix}.audio_random", subject, rel_l2(ours.audio, ref.audio), backend=backend))
    else:
        rows += [
            Row(f"{prefix}.audio", subject, rel_l2(ours.audio, ref.audio), backend=backend),
            Row(f"{prefix}.audio_lsd", subject, log_spectral_distance(ours.audio, ref.audio), backend=backend),
        ]
    return rows


def f0_sensitivity(km, given: Stages, ours: Stages, ref_s: np.ndarray) -> float:
    """rel_l2 between the official decoder's audio on its own F0 / N and on `ours` (the reference's):
    how much of an end-to-end audio difference the F0 rounding alone explains."""
    import torch

    from .official import zero_source_randomness

    asr = torch.from_numpy(np.repeat(given.t_en, given.durations, axis=1))[None]
    s = torch.from_numpy(np.asarray(ref_s, np.float32).reshape(-1)[:128].copy())[None]
    with torch.no_grad(), zero_source_randomness():
        a = km.decoder(asr, torch.from_numpy(given.f0)[None], torch.from_numpy(given.n)[None], s).squeeze().numpy()
        b = km.decoder(asr, torch.from_numpy(ours.f0)[None], torch.from_numpy(ours.n)[None], s).squeeze().numpy()
    return float(np.linalg.norm(b - a) / max(np.linalg.norm(a), 1e-30))


def tmod_weights(path) -> tuple[dict, dict, dict]:
    """(weights as float32 arrays by .tmod name, config, {voice: pack}) of a Kokoro .tmod."""
    from vox.formats import tmod

    with tmod.TmodFile(path) as f:
        m = f.manifest
        if m.get("family") != "kokoro":
            raise ValueError(f"{path}: a {m.get('family')} model, not Kokoro")
        weights = {n: np.array(f.array(n)) for n in f.tensors if not n.startswith(("voices.", "frontend."))}
        voices = {s: np.array(f.array("voices." + s)) for s in m.get("speakers", [])}
        return weights, m["config"], voices


@keeps_fp_state
def verify(model_path, *, voice: str | None = None, sentences=PHONEME_SENTENCES, say=lambda s: None) -> list[Row]:
    """Rows of the reference against the official KModel holding the .tmod's own weights (weight norm
    unfolded; bf16 weights widened on both sides): the implementation is checked, at any precision."""
    from vox.reference.kokoro.model import style_row, tokenize

    from . import official
    from .checkpoints import unfold

    torch = official.import_official()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    weights, cfg, voices = tmod_weights(model_path)
    if not voices:
        raise ValueError(f"{model_path}: the model has no built-in voice to verify with")
    voice = voice or (sorted(voices)[0] if "jf_alpha" not in voices else "jf_alpha")
    if voice not in voices:
        raise ValueError(f"{model_path} has no voice {voice!r} (it has: {', '.join(sorted(voices))})")
    say(f"loading the official KModel with the weights of {model_path}")
    km = official.kmodel_from_state(unfold(weights))
    rows: list[Row] = []
    for i, ph in enumerate(sentences):
        ids = tokenize(ph, cfg["vocab"])
        ref_s = style_row(voices[voice], len(ids))
        say(f"sentence {i + 1}/{len(sentences)} ({len(ids)} phonemes, voice {voice})")
        off = official_forward(km, ids, ref_s)
        ours = reference_forward(weights, cfg, ids, ref_s)
        forced = reference_decoder(weights, cfg, off, ref_s)
        rows += compare(ours, off, f"{voice}, sentence {i} ({len(ids)} phonemes)", decoder=forced)
    return rows
