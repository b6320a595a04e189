"""The codec decoder (speech tokenizer decoder) of the reference vs the official qwen-tts code.

Each function takes the official wrapper (vox.verify.qwen3.official.load(dir); check_full and
check_stream also take a bare official Qwen3TTSTokenizerV2Decoder), the reference weights
(a Checkpoint, or a CodecDecoder built from one) and codes [T, 16] (int), and returns rows of the tolerance
table. The conformance suite (conformance/test_qwen3_codec.py) and `vox verify` call the same
functions; `standard_rows` is the battery `vox verify` runs on a model directory.

    check_full       reference whole-sequence decode  vs  the official decoder forward (audio, and
                     the transformer's output frames, which show attention-window errors that are
                     too small in the audio of the tiny fixtures)
    check_stream     reference stream mode (chunks, warm-up on reference codes)  vs  the official
                     decoder forward on (last N ref frames + generated), first N frames' audio dropped;
                     and every chunking vs the reference's own whole-sequence forward (no seams)
    check_reference  reference mode  vs  Qwen3TTSTokenizerV2Model.decode (300-frame pieces, 25 frames
                     of context) and the official wrapper's output (generate_voice_clone's cut of the
                     reference part, or generate_custom_voice / generate_voice_design: no cut), run
                     with the talker's generate replaced by the given codes
                     (seams=True: also the audio change the pieces cause, ours vs official: a
                     tight check of the piece / context scheme on the tiny fixtures)
"""

from __future__ import annotations

import numpy as np

from ..tolerance import Row, measure


def _decoder(ref):
    """A reference CodecDecoder from a Checkpoint (or pass one through)."""
    from vox.reference.qwen3.codec_decoder import CodecDecoder

    return ref if isinstance(ref, CodecDecoder) else CodecDecoder(ref)


def _codes(codes) -> np.ndarray:
    c = np.asarray(codes.detach().cpu().numpy() if hasattr(codes, "detach") else codes, dtype=np.int64)
    if c.ndim != 2:
        raise ValueError(f"codes must be [T, num_quantizers], got {c.shape}")
    return c


def _official_decoder(tts):
    """The official Qwen3TTSTokenizerV2Decoder of a wrapper (Qwen3TTSModel), or `tts` itself when it
    already is one (tests build decoders of other shapes directly)."""
    return tts.model.speech_tokenizer.model.decoder if hasattr(tts, "model") else tts


def _row(check: str, ours: np.ndarray, off: np.ndarray, subject: str, note: str = "") -> Row:
    """measure(), but a length mismatch is a failing row (value inf) rather than an exception."""
    if ours.shape != off.shape:
        note = f"length {ours.shape[0]} vs official {off.shape[0]}. {note}".strip()
        return Row(check, subject, float("inf"), note=note)
    return measure(check, ours, off, subject, note=note)


# ----------------------------------------------------------------------------- official paths
def official_forward(tts, codes) -> tuple[np.ndarray, np.ndarray]:
    """Qwen3TTSTokenizerV2Decoder.forward on the whole sequence (no chunking): (audio float32
    [T * 1920], latent [T, latent_dim] = the pre_transformer's last_hidden_state, caught by a hook)."""
    import torch

    dec = _official_decoder(tts)
    c = torch.from_numpy(np.maximum(_codes(codes), 0)).T[None]  # [1, 16, T]
    got = []
    hook = dec.pre_transformer.register_forward_hook(
        lambda mod, args, out: got.append(out.last_hidden_state[0].float().numpy().copy()))
    try:
        with torch.inference_mode():
            wav = dec(c)[0, 0].float().numpy().copy()
    finally:
        hook.remove()
    return wav, got[0]


def official_decode(tts, codes) -> np.ndarray:
    """Qwen3TTSTokenizer.decode (-> Qwen3TTSTokenizerV2Model.decode: chunked_decode) of one sequence."""
    wavs, _ = tts.model.speech_tokenizer.decode([{"audio_codes": _codes(codes)}])
    return np.asarray(wavs[0], dtype=np.float32)


def official_generate_audio(tts, codes, ref_codes=None) -> tuple[np.ndarray, np.ndarray]:
    """The official wrapper's audio for given generated codes: the public generate_* method of the
    model's type runs with the talker's generate replaced by one returning `codes`, so the wrapper's
    own code concatenates the reference codes, decodes and cuts.

    Base: generate_voice_clone (ICL prompt with `ref_codes`, or x-vector only when None);
    CustomVoice: generate_custom_voice (first speaker); VoiceDesign: generate_voice_design.
    Returns (wrapper output, what speech_tokenizer.decode returned before the wrapper's cut)."""
    import torch
    from qwen_tts.inference.qwen3_tts_model import VoiceClonePromptItem

    gen = torch.from_numpy(_codes(codes))
    model, st = tts.model, tts.model.speech_tokenizer
    seen = []
    decode = st.decode

    def spy(encoded):
        wavs, sr = decode(encoded)
        seen.append(np.asarray(wavs[0], dtype=np.float32).copy())
        return wavs, sr

    kind = model.tts_model_type
    if ref_codes is not None and kind != "base":
        raise ValueError(f"reference codes need a Base model, this is {kind!r}")
    model.generate = lambda *a, **kw: ([gen], None)  # instance attribute shadows the method
    st.decode = spy
    try:
        if kind == "base":
            item = VoiceClonePromptItem(
                ref_code=None if ref_codes is None else torch.from_numpy(_codes(ref_codes)),
                ref_spk_embedding=torch.zeros(model.config.talker_config.hidden_size),
                x_vector_only_mode=ref_codes is None, icl_mode=ref_codes is not None,
                ref_text=None if ref_codes is None else "reference")
            wavs, _ = tts.generate_voice_clone(text="codec check", voice_clone_prompt=[item])
        elif kind == "custom_voice":
            wavs, _ = tts.generate_custom_voice(text="codec check", speaker=tts.get_supported_speakers()[0])
        elif kind == "voice_design":
            wavs, _ = tts.generate_voice_design(text="codec check", instruct="")
        else:
            raise ValueError(f"unknown tts_model_type {kind!r}")
    finally:
        del model.generate
        del st.decode
    return np.asarray(wavs[0], dtype=np.float32), seen[0]


# ----------------------------------------------------------------------------- checks
def check_full(tts, ref, codes, subject: str = "") -> list[Row]:
    """Reference decode (whole sequence at once) vs the official decoder forward: the audio
    (qwen3.decoder_audio_full) and the transformer's output frames (qwen3.decoder_latent)."""
    dec, codes = _decoder(ref), _codes(codes)
    subject = subject or f"{codes.shape[0]} frames"
    off_wav, off_lat = official_forward(tts, codes)
    lat = dec.latent(np.maximum(codes, 0))
    return [_row("qwen3.decoder_latent", lat, off_lat, subject),
            _row("qwen3.decoder_audio_full", dec.vocoder(lat), off_wav, subject)]


def check_stream(tts, ref, codes, ref_codes=None, warmup: int | str = 50, chunks=(1, 4, 7),
                 subject: str = "") -> list[Row]:
    """Stream mode: for each chunk size, the audio of the generated frames vs the official decoder
    forward on (last N reference frames + generated frames) with the first N frames' audio dropped
    (a row per chunk size, check qwen3.decoder_audio_stream), and vs the reference's own
    whole-sequence forward on the same frames (check qwen3.decoder_stream_chunking)."""
    from vox.reference.qwen3 import codec_decoder as cd

    dec, codes = _decoder(ref), _codes(codes)
    if ref_codes is None:
        prime = codes[:0]
    else:
        r = _codes(ref_codes)
        prime = r if warmup == "all" else r[r.shape[0] - min(int(warmup), r.shape[0]):]
    n, spf = prime.shape[0], dec.cfg.samples_per_frame
    frames = np.concatenate([prime, codes])
    off_wav, off_lat = official_forward(tts, frames)
    off_wav, off_lat = off_wav[n * spf:], off_lat[n:]
    whole = cd.decode(dec, frames)[n * spf:]
    subject = subject or f"{codes.shape[0]} frames"
    label = f"warm-up {warmup} ({n} frames)" if ref_codes is not None else "no warm-up"
    rows = []
    for c in chunks:
        ours, lat = cd.stream_decode(dec, codes, c, ref_codes, warmup, return_latent=True)
        what = f"{subject}, {label}, chunk {c}"
        rows += [_row("qwen3.decoder_latent", lat, off_lat, f"{what}, stream"),
                 _row("qwen3.decoder_audio_stream", ours, off_wav, what),
                 _row("qwen3.decoder_stream_chunking", ours, whole, what)]
    return rows


def check_reference(tts, ref, codes, ref_codes=None, subject: str = "", seams: bool = False) -> list[Row]:
    """Reference mode vs the official decode of (ref codes + codes) (Qwen3TTSTokenizerV2Model.decode:
    300-frame pieces with 25 frames of context) and vs the official wrapper's output after its cut
    of the reference part (or, without reference codes, its uncut output).

    seams=True adds qwen3.decoder_piece_seams: the audio change the pieces cause (chunked decode -
    whole-sequence forward), ours vs the official's. On the tiny fixtures that change is 6e-5 ..
    1.5e-4, under the audio checks' 3e-4, so they cannot tell a wrong context size from the right
    one (25 -> 24 frames moves the seams by 1.2e-5 .. 6e-5); the difference of differences can. A
    tiny-fixture check: on real models each side carries ~1e-4 of float32 rounding."""
    from vox.reference.qwen3 import codec_decoder as cd

    dec, codes = _decoder(ref), _codes(codes)
    r = None if ref_codes is None else _codes(ref_codes)
    total = codes if r is None else np.concatenate([r, codes])
    wrapper, decoded = official_generate_audio(tts, codes, r)
    subject = subject or (f"{codes.shape[0]} frames" if r is None else f"ref {r.shape[0]} + {codes.shape[0]} frames")
    bounds = ", ".join(str(s) for s in range(300, total.shape[0], 300)) or "none"
    note = f"piece boundaries at frame {bounds}"
    if r is not None:
        spf = dec.cfg.samples_per_frame
        cut = cd.reference_cut(r.shape[0], total.shape[0], total.shape[0] * spf)
        note += f"; cut {cut} samples (ref_len * {spf} = {r.shape[0] * spf})"
    # decode_reference == cut_reference(decode_codes(ref + codes)): its two steps, each compared
    ours = cd.decode_codes(dec, total)
    out = ours if r is None else cd.cut_reference(ours, r.shape[0], total.shape[0])
    rows = [
        _row("qwen3.decoder_audio_reference", ours, decoded, f"{subject}, decode", note),
        _row("qwen3.decoder_audio_reference", out, wrapper,
             f"{subject}, wrapper output" + (" (cut)" if r is not None else ""), note),
    ]
    if seams:
        seam_off = decoded - official_forward(tts, total)[0]
        seam_ours = ours - cd.decode(dec, total)
        rows.append(_row("qwen3.decoder_piece_seams", seam_ours, seam_off, f"{subject}, chunked - whole",
                         f"{note}; official seams up to {np.max(np.abs(seam_off)):.3g}"))
    return rows


def standard_rows(tts, ref, ref_codes=None, seed: int = 0, label: str = "") -> list[Row]:
    """The battery `vox verify` runs: whole-sequence lengths around the attention window, stream
    mode with chunk sizes 1, 4, 7 (and warm-up 50 / all when reference codes are given), reference
    mode across a 300-frame piece boundary."""
    dec = _decoder(ref)
    rng = np.random.default_rng(seed)
    gen = lambda t: rng.integers(0, 2048, size=(t, 16), dtype=np.int64)  # noqa: E731
    pre = f"{label} " if label else ""
    rows = []
    for t in (1, 5, 73, 150):
        rows += check_full(tts, dec, gen(t), f"{pre}random {t} frames")
    rows += check_stream(tts, dec, gen(100), subject=f"{pre}random 100 frames")
    if ref_codes is not None:
        for w in (50, "all"):
            rows += check_stream(tts, dec, gen(80), ref_codes, w, subject=f"{pre}ref {len(ref_codes)} + 80 frames")
        rows += check_reference(tts, dec, gen(max(1, 320 - len(ref_codes))), ref_codes,
                                subject=f"{pre}ref {len(ref_codes)}")
    else:
        rows += check_reference(tts, dec, gen(310), subject=f"{pre}no reference")
    return rows
