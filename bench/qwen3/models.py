"""Full-size random-weight Qwen3-TTS-12Hz Base checkpoints in the real shapes, for speed measurements.

No trained Qwen3-TTS weights are reachable here, so speed is measured on random weights of the real
shapes (speed does not depend on the values; nothing here is meant to speak). The checkpoint is built
with the official qwen-tts classes and saved in the official layout (bf16, as released), so vox and
the official code run on exactly the same weights:

    talker          28 layers, 16 heads / 8 KV heads, head_dim 128, mrope [24, 20, 20]
                    0.6B: hidden 1024, FFN 3072;  1.7B: hidden 2048, FFN 6144; text_hidden 2048
    code predictor  5 layers, hidden 1024, FFN 3072 (1.7B: small_to_mtp_projection 2048 -> 1024)
    speaker encoder ECAPA-TDNN [512, 512, 512, 512, 1536], enc_dim = talker hidden
    speech tokenizer the released config (speech_tokenizer/config.json)

Two changes to the official random init keep the benchmark meaningful: codebooks get random entries
(they start at zero), and the talker's EOS row of codec_head is zeroed, so that EOS is never among the
top-k candidates and every run produces exactly max_new_tokens - 1 frames (the same number of frames
for vox and the official code).

    python -m vox.bench.qwen3.models 0b6 --out DIR    (about 2 GB for 0.6B, 4.5 GB for 1.7B)
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

SEED = 1234


def talker_config(size: str) -> dict:
    hidden = {"0b6": 1024, "1b7": 2048}[size]
    return dict(
        model_type="qwen3_tts_talker", vocab_size=3072, text_vocab_size=151936, text_hidden_size=2048,
        hidden_size=hidden, intermediate_size=3072 if size == "0b6" else 6144, num_hidden_layers=28,
        num_attention_heads=16, num_key_value_heads=8, head_dim=128, hidden_act="silu",
        max_position_embeddings=32768, rms_norm_eps=1e-6, rope_theta=1000000,
        rope_scaling={"rope_type": "default", "mrope_section": [24, 20, 20], "interleaved": True},
        num_code_groups=16, position_id_per_seconds=13,
        codec_pad_id=2148, codec_bos_id=2149, codec_eos_token_id=2150, codec_think_id=2154,
        codec_nothink_id=2155, codec_think_bos_id=2156, codec_think_eos_id=2157,
        codec_language_id={"chinese": 2055, "english": 2050, "german": 2053, "italian": 2070, "portuguese": 2071,
                           "spanish": 2054, "japanese": 2058, "korean": 2064, "french": 2061, "russian": 2069,
                           "beijing_dialect": 2074, "sichuan_dialect": 2062},
        spk_id={}, spk_is_dialect={},
        code_predictor_config=dict(
            model_type="qwen3_tts_talker_code_predictor", vocab_size=2048, hidden_size=1024,
            intermediate_size=3072, num_hidden_layers=5, num_attention_heads=16, num_key_value_heads=8,
            head_dim=128, max_position_embeddings=65536, rope_theta=1000000, rms_norm_eps=1e-6,
            num_code_groups=16, layer_types=["full_attention"] * 5),
    )


SPEECH_TOKENIZER = dict(  # the released speech_tokenizer/config.json values
    encoder_config=dict(
        sampling_rate=24000, frame_rate=12.5, audio_channels=1, hidden_size=512, num_filters=64,
        num_residual_layers=1, upsampling_ratios=[8, 6, 5, 4], kernel_size=7, last_kernel_size=3,
        residual_kernel_size=3, dilation_growth_rate=2, use_causal_conv=True, pad_mode="constant", compress=2,
        trim_right_ratio=1.0, codebook_size=2048, codebook_dim=256, vector_quantization_hidden_dimension=256,
        num_quantizers=32, num_semantic_quantizers=1, upsample_groups=512, num_hidden_layers=8,
        intermediate_size=2048, num_attention_heads=8, num_key_value_heads=8, head_dim=64, hidden_act="gelu",
        max_position_embeddings=8000, sliding_window=250, use_cache=False, norm_eps=1e-5, rope_theta=10000.0,
        layer_scale_initial_scale=0.01),
    decoder_config=dict(
        codebook_size=2048, codebook_dim=512, hidden_size=512, latent_dim=1024, head_dim=64,
        num_attention_heads=16, num_key_value_heads=16, intermediate_size=1024, num_hidden_layers=8,
        num_quantizers=16, num_semantic_quantizers=1, sliding_window=72, upsample_rates=[8, 5, 4, 3],
        upsampling_ratios=[2, 2], decoder_dim=1536, max_position_embeddings=8000, rope_theta=10000,
        rms_norm_eps=1e-5, layer_scale_initial_scale=0.01),
    encoder_valid_num_quantizers=16, input_sample_rate=24000, output_sample_rate=24000,
    decode_upsample_rate=1920, encode_downsample_rate=1920,
)


def build(size: str, out: Path) -> Path:
    """Build the full-size random-weight Base checkpoint of `size` (0b6 | 1b7) into `out`."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import EncodecFeatureExtractor

    from vox.verify.qwen3.checkpoints import randomize, write_tokenizer_files
    from vox.verify.qwen3.official import import_official

    import_official()
    from qwen_tts.core import Qwen3TTSTokenizerV2Config, Qwen3TTSTokenizerV2Model
    from qwen_tts.core.models import Qwen3TTSConfig, Qwen3TTSForConditionalGeneration

    torch.manual_seed(SEED)
    out = Path(out)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "speech_tokenizer").mkdir()
        t = talker_config(size)
        cfg = Qwen3TTSConfig(
            talker_config=t,
            speaker_encoder_config=dict(mel_dim=128, enc_dim=t["hidden_size"], enc_channels=[512, 512, 512, 512, 1536],
                                        enc_kernel_sizes=[5, 3, 3, 3, 1], enc_dilations=[1, 2, 3, 4, 1],
                                        enc_attention_channels=128, enc_res2net_scale=8, enc_se_channels=128,
                                        sample_rate=24000),
            tokenizer_type="qwen3_tts_tokenizer_12hz", tts_model_size=size, tts_model_type="base",
            im_start_token_id=151644, im_end_token_id=151645, tts_pad_token_id=151671, tts_bos_token_id=151672,
            tts_eos_token_id=151673)
        cfg.assistant_token_id = 77091
        cfg.architectures = ["Qwen3TTSForConditionalGeneration"]
        model = Qwen3TTSForConditionalGeneration(cfg).eval()
        with torch.no_grad():
            randomize(model.speaker_encoder, torch)
            model.talker.codec_head.weight[t["codec_eos_token_id"]].zero_()  # EOS never in the top-k: fixed length
        model.to(torch.bfloat16).save_pretrained(tmp, safe_serialization=True)
        del model
        c = json.loads((tmp / "config.json").read_text())
        c["speaker_encoder_config"].pop("model_type", None)  # the official save/reload quirk
        (tmp / "config.json").write_text(json.dumps(c, indent=2, sort_keys=True) + "\n")
        (tmp / "generation_config.json").write_text(json.dumps(dict(
            do_sample=True, repetition_penalty=1.05, temperature=0.9, top_p=1.0, top_k=50, subtalker_dosample=True,
            subtalker_temperature=0.9, subtalker_top_p=1.0, subtalker_top_k=50, max_new_tokens=8192), indent=2) + "\n")
        st_cfg = Qwen3TTSTokenizerV2Config(**copy.deepcopy(SPEECH_TOKENIZER))
        st_cfg.architectures = ["Qwen3TTSTokenizerV2Model"]
        st = Qwen3TTSTokenizerV2Model(st_cfg).eval()
        randomize(st, torch)
        st.save_pretrained(tmp / "speech_tokenizer", safe_serialization=True)
        (tmp / "speech_tokenizer" / "generation_config.json").unlink(missing_ok=True)
        EncodecFeatureExtractor(feature_size=1, sampling_rate=24000, padding_value=0.0,
                                return_attention_mask=True).save_pretrained(tmp / "speech_tokenizer")
        write_tokenizer_files(tmp)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("size", choices=("0b6", "1b7"))
    ap.add_argument("--out", required=True, help="the checkpoint directory to create")
    a = ap.parse_args(argv)
    print(build(a.size, Path(a.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
