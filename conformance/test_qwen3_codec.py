"""Codec decoder (Qwen3-TTS-12Hz speech tokenizer decoder): the numpy reference vs the official code.

Three ways to turn codes into audio, each against its official counterpart (vox.verify.qwen3.codec):
  whole sequence   reference decode == the official decoder forward (audio and transformer output)
  stream mode      chunks of 1 / 4 / 7 frames with carried state, warm-up on 0 / 50 / all reference
                   frames == the official forward on (warm-up + generated) frames, warm-up audio dropped
  reference mode   300-frame pieces with 25 frames of context and the voice-clone wrapper's cut ==
                   the official wrapper's output (generate_* with the talker's codes given)

Decoders: every fixture is built from the same seed, but the random stream reaches the speech
tokenizer after the talker, whose size differs, so base06 and base17 (and custom06) have different
decoder weights (checked below); both Base decoders are tested, custom06 for the no-reference path.
Reference codes are real: the official Mimi encoder of each fixture on the committed recordings
(ref_en_24k.wav: 81 frames; ref_long_24k.wav: 426 frames, > 300).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from vox.reference.common.checkpoint import Checkpoint
from vox.reference.qwen3 import codec_decoder as cd
from vox.verify.qwen3 import codec
from vox.verify.tolerance import TABLE, Row, measure

BASE = ["base06", "base17"]


class Codec:
    def __init__(self, tts, dec, refs):
        self.tts, self.dec, self.refs = tts, dec, refs


@pytest.fixture(scope="module")
def codec_of(qwen3_fixture, official, ref_audio):
    """codec_of(variant) -> Codec(official wrapper, reference CodecDecoder, {wav name: ref codes})."""
    cache: dict[str, Codec] = {}

    def get(variant: str) -> Codec:
        if variant not in cache:
            d = qwen3_fixture(variant)
            tts = official(d)
            refs = {}
            if tts.model.tts_model_type == "base":
                for name in ("ref_en_24k.wav", "ref_long_24k.wav"):
                    wav, sr, text = ref_audio(name)
                    item = tts.create_voice_clone_prompt(ref_audio=(wav, sr), ref_text=text)[0]
                    refs[name] = item.ref_code.cpu().numpy().astype(np.int64)
            cache[variant] = Codec(tts, cd.CodecDecoder(Checkpoint.from_hf_dir(d)), refs)
        return cache[variant]

    return get


def random_codes(seed: int, frames: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2048, size=(frames, 16), dtype=np.int64)


def test_decoders_differ_between_fixtures(codec_of):
    """Why two variants: their decoder weights are not the same (one seed, different RNG paths)."""
    a, b = codec_of("base06").dec, codec_of("base17").dec
    assert a.w.keys() == b.w.keys()
    assert not np.array_equal(a.w["pre_conv.conv.weight"], b.w["pre_conv.conv.weight"])
    assert not np.array_equal(a.codebooks[0], b.codebooks[0])


# base06 runs every case; base17 (a second set of decoder weights) a subset, to keep the file fast.
WHOLE = {"base06": (1, 3, 4, 5, 73, 150), "base17": (1, 5, 73, 150)}
WARMUPS = {"base06": (None, 50, "all"), "base17": ("all",)}
REFERENCE = {"base06": (("ref_long_24k.wav", 40), ("ref_en_24k.wav", 241)), "base17": (("ref_en_24k.wav", 241),)}


@pytest.mark.parametrize("variant", BASE)
def test_whole_sequence(codec_of, record, variant):
    """Lengths 1, 3, 4, 5 (shorter than the pre_conv / ConvNeXt / decoder conv contexts), 73 (the
    attention window of 72, + 1) and 150 (two windows)."""
    c = codec_of(variant)
    rows = []
    for t in WHOLE[variant]:
        rows += codec.check_full(c.tts, c.dec, random_codes(t, t), f"{variant} random {t} frames")
    record(rows)


@pytest.mark.parametrize("variant", BASE)
def test_stream(codec_of, record, variant):
    """Chunks of 1, 4, 7 frames; no warm-up (80 frames), warm-up 50 and all on the real 81-frame
    reference (+ 60 generated frames): the ring wraps, positions run past the window of 72."""
    c = codec_of(variant)
    ref = c.refs["ref_en_24k.wav"]
    rows = []
    for warmup in WARMUPS[variant]:
        if warmup is None:
            rows += codec.check_stream(c.tts, c.dec, random_codes(11, 80), subject=f"{variant} random 80")
        else:
            rows += codec.check_stream(c.tts, c.dec, random_codes(12, 60), ref, warmup,
                                       subject=f"{variant} ref_en {len(ref)} + 60")
    record(rows)


def test_stream_state_layout(codec_of):
    """The documented state buffers are exactly those the stream decoder carries, with their sizes."""
    c = codec_of("base06")
    sd = cd.StreamDecoder(c.dec, c.refs["ref_en_24k.wav"], warmup=50)
    assert sd.state.pos == 50
    sizes = cd.StreamDecoder.sizes(c.dec.cfg)
    assert {k: v.shape for k, v in sd.state.bufs.items()} == sizes
    assert sizes["pre_transformer.layers.0.k"] == (2, 72, 16)
    assert sizes["decoder.1.block.1"] == (32, 8) and sizes["decoder.4.block.4.conv1"] == (4, 54)
    assert sd.push(np.zeros((0, 16), np.int64)).shape == (0,) and sd.state.pos == 50
    assert sd.push(random_codes(3, 3)).shape == (3 * 1920,) and sd.state.pos == 53


def test_stream_any_chunking(codec_of, record):
    """Property: any chunking (and any warm-up) gives the audio of the whole-sequence forward.

    Not bit-exact: numpy hands each matrix product to OpenBLAS, whose summation order depends on the
    matrix shape (gemv for one row, gemm tiles otherwise), so the last bits of intermediate values
    depend on how many frames a chunk holds; the random-weight decoder amplifies those to a few
    1e-7 in the audio. The bound (qwen3.decoder_stream_chunking, 1e-6) is far below any state error:
    dropping one transposed conv tail gives 5e-2, an attention window off by one 2e-5."""
    c = codec_of("base06")
    ref = c.refs["ref_en_24k.wav"]
    gen = random_codes(21, 24)
    limit = TABLE["qwen3.decoder_stream_chunking"]["max"]
    whole: dict = {}
    worst: list[float] = []

    @settings(max_examples=12, deadline=None)
    @given(st.sampled_from([0, 1, 50, 72, 73, "all"]), st.lists(st.integers(1, 12), min_size=1, max_size=8))
    def prop(warmup, sizes):
        if warmup not in whole:
            n = len(ref) if warmup == "all" else warmup
            whole[warmup] = cd.decode(c.dec, np.concatenate([ref[len(ref) - n:], gen]))[n * 1920:]
        got = cd.stream_decode(c.dec, gen, sizes, ref if warmup else None, warmup)
        err = float(np.max(np.abs(got - whole[warmup])))
        worst.append(err)
        assert err <= limit, (warmup, sizes, err)

    prop()
    record(Row("qwen3.decoder_stream_chunking", f"base06 ref_en + 24, {len(worst)} random chunkings/warm-ups",
               max(worst)))


@pytest.mark.parametrize("variant", BASE)
def test_reference_mode(codec_of, record, variant):
    """The official scheme: ref_long (426 frames) + 40 puts the 300-frame piece boundary inside the
    reference; ref_en (81) + 241 puts it inside the speech, and there the wrapper's cut
    int(81 / 322 * 618240) = 155519 is one sample short of 81 * 1920. For the latter also the
    seams themselves (they are smaller than the audio checks' limit on these fixtures)."""
    c = codec_of(variant)
    rows = []
    for i, (name, n) in enumerate(REFERENCE[variant]):
        rows += codec.check_reference(c.tts, c.dec, random_codes(31 + i, n), c.refs[name],
                                      subject=f"{variant} {name.split('_24k')[0]}", seams=name == "ref_en_24k.wav")
    assert cd.reference_cut(81, 322, 322 * 1920) == 81 * 1920 - 1
    record(rows)


def test_reference_mode_without_reference(codec_of, record):
    """CustomVoice (generate_custom_voice) and a Base x-vector-only clone: no cut."""
    c = codec_of("custom06")
    rows = codec.check_reference(c.tts, c.dec, random_codes(41, 310), subject="custom06 no reference")
    b = codec_of("base17")
    rows += codec.check_reference(b.tts, b.dec, random_codes(42, 37), subject="base17 x-vector only")
    record(rows)


def test_padded_codes(codec_of, record):
    """Qwen3TTSTokenizerV2Model.decode: -1 (the batch padding value) rows are decoded as code 0 and
    the audio is cut to (frames with a first code > -1) * 1920."""
    import torch

    c = codec_of("base06")
    codes = np.concatenate([random_codes(51, 20), np.full((6, 16), -1, np.int64)])
    with torch.inference_mode():
        off = c.tts.model.speech_tokenizer.model.decode(torch.from_numpy(codes)[None], return_dict=True)
    off = off.audio_values[0].float().numpy()
    ours = cd.decode_codes(c.dec, codes)
    assert ours.shape == off.shape == (20 * 1920,)
    record(measure("qwen3.decoder_audio_reference", ours, off, "base06 20 frames + 6 padding rows"))


def build_odd_decoder():
    """An official decoder of unusual shapes, built here: latent (40) != hidden (24) != heads x
    head_dim (4 x 8), grouped KV heads (2), codebook_dim 12, 4 codebooks of 64, window 5 (the ring
    wraps every 5 frames), rates (3, 2) x (2): 12 samples per frame. The fixtures have latent ==
    hidden == heads x head_dim, so they would not notice those mixed up; the real codec has
    latent 1024, hidden 512, 16 x 64."""
    import torch
    from vox.verify.qwen3.checkpoints import randomize
    from qwen_tts.core.tokenizer_12hz.configuration_qwen3_tts_tokenizer_v2 import Qwen3TTSTokenizerV2DecoderConfig
    from qwen_tts.core.tokenizer_12hz.modeling_qwen3_tts_tokenizer_v2 import Qwen3TTSTokenizerV2Decoder

    cfg = Qwen3TTSTokenizerV2DecoderConfig(
        codebook_size=64, codebook_dim=12, hidden_size=24, latent_dim=40, head_dim=8, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=36, num_hidden_layers=2, num_quantizers=4, sliding_window=5,
        rope_theta=500.0, upsample_rates=[3, 2], upsampling_ratios=[2], decoder_dim=16)
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(3)
    off = Qwen3TTSTokenizerV2Decoder(cfg).eval()
    randomize(off, torch)
    tensors = {"speech_tokenizer.decoder." + k: v.detach().numpy().copy() for k, v in off.state_dict().items()}
    ck = Checkpoint(config={}, speech_tokenizer_config={"decoder_config": cfg.to_dict()}, generation_config={},
                    tokenizer_files={}, tensors=tensors, source="odd decoder")
    return off, cd.CodecDecoder(ck)


@pytest.fixture(scope="module")
def odd_decoder(official):  # `official` imports torch / qwen_tts with the suite's settings
    return build_odd_decoder()


def test_unusual_shapes(odd_decoder, record):
    import torch

    off, dec = odd_decoder
    assert dec.cfg.samples_per_frame == 12 and dec.cfg.latent_dim == 40 and dec.cfg.hidden_size == 24
    codes = np.random.default_rng(61).integers(0, 64, size=(23, 4), dtype=np.int64)
    rows = []
    for t in (1, 4, 6, 23):
        rows += codec.check_full(off, dec, codes[:t], f"odd decoder {t} frames")
    rows += codec.check_stream(off, dec, codes[8:], codes[:8], 4, chunks=(1, 2, 7), subject="odd decoder 8 ref + 15")
    # the piece scheme with small pieces: 5 frames, 3 of context (official chunked_decode)
    with torch.inference_mode():
        want = off.chunked_decode(torch.from_numpy(codes).T[None], chunk_size=5, left_context_size=3)[0, 0].numpy()
    rows.append(measure("qwen3.decoder_audio_reference", dec.chunked_decode(codes, 5, 3), want,
                        "odd decoder 23 frames, chunked_decode(5, 3)"))
    record(rows)
