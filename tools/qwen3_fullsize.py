"""Full-size random-weight Qwen3-TTS-12Hz CustomVoice checkpoints for speed measurements.

Built with the OFFICIAL classes (qwen-tts) from the real configs under shared/configs: the 1.7B
CustomVoice config (values as published) and a 0.6B layout derived from it (talker hidden 1024,
intermediate 3072; everything else as the 1.7B), the real speech tokenizer config. Weights are the
official random init, stored in bf16, so a model is ~1.8 GB (0.6B) / ~3.9 GB (1.7B) on disk; convert
with `vox build DIR OUT.tmod --quant q8`. The speech is noise, the speed is real.

    python tools/qwen3_fullsize.py 0b6 /tmp/q3-0b6 [--configs /work/shared/configs]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("size", choices=["0b6", "1b7"])
    ap.add_argument("out")
    ap.add_argument("--configs", default=str(HERE.parent.parent / "shared" / "configs"))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)

    import torch
    from qwen_tts.core import Qwen3TTSTokenizerV2Config, Qwen3TTSTokenizerV2Model
    from qwen_tts.core.models import Qwen3TTSConfig, Qwen3TTSForConditionalGeneration
    from transformers import EncodecFeatureExtractor

    from fixtures import qwen3_tiny

    root = Path(a.configs) / "Qwen3-TTS-12Hz-1.7B-CustomVoice"
    c = json.loads((root / "config.NOT_VERBATIM.modelscope-copy.json").read_text())
    c.pop("auto_map", None)
    tc = c["talker_config"]
    if a.size == "0b6":
        tc["hidden_size"], tc["intermediate_size"] = 1024, 3072
    out = Path(a.out)
    (out / "speech_tokenizer").mkdir(parents=True, exist_ok=True)
    torch.manual_seed(a.seed)
    cfg = Qwen3TTSConfig(talker_config=tc, speaker_encoder_config=qwen3_tiny._speaker_encoder(tc["hidden_size"]),
                         tokenizer_type=c["tokenizer_type"], tts_model_size=a.size, tts_model_type="custom_voice",
                         im_start_token_id=c["im_start_token_id"], im_end_token_id=c["im_end_token_id"],
                         tts_pad_token_id=c["tts_pad_token_id"], tts_bos_token_id=c["tts_bos_token_id"],
                         tts_eos_token_id=c["tts_eos_token_id"])
    cfg.assistant_token_id = c["assistant_token_id"]
    cfg.architectures = ["Qwen3TTSForConditionalGeneration"]
    with torch.no_grad():
        model = Qwen3TTSForConditionalGeneration(cfg).eval().to(torch.bfloat16)
        for name, t in model.named_parameters():  # unit-ish norms instead of exact ones
            if name.endswith("norm.weight"):
                t.copy_(1.0 + 0.1 * torch.randn_like(t))
    model.save_pretrained(out, safe_serialization=True)
    del model
    cj = json.loads((out / "config.json").read_text())
    cj["speaker_encoder_config"].pop("model_type", None)
    (out / "config.json").write_text(json.dumps(cj, indent=2, sort_keys=True) + "\n")
    (out / "generation_config.json").write_text(
        (Path(a.configs) / "Qwen3-TTS-12Hz-1.7B-CustomVoice" / "generation_config.json").read_text())

    st_json = json.loads((root / "speech_tokenizer" / "config.json").read_text())
    st_cfg = Qwen3TTSTokenizerV2Config(**copy.deepcopy({k: v for k, v in st_json.items()
                                                        if k not in ("architectures", "model_type",
                                                                     "transformers_version")}))
    st_cfg.architectures = ["Qwen3TTSTokenizerV2Model"]
    st = Qwen3TTSTokenizerV2Model(st_cfg).eval()
    qwen3_tiny._randomize(st, torch)
    st.save_pretrained(out / "speech_tokenizer", safe_serialization=True)
    EncodecFeatureExtractor(feature_size=1, sampling_rate=24000, padding_value=0.0,
                            return_attention_mask=True).save_pretrained(out / "speech_tokenizer")
    for name, data in qwen3_tiny.tokenizer_sources().items():
        (out / name).write_bytes(data)
    (out / "preprocessor_config.json").write_bytes((qwen3_tiny.DATA / "preprocessor_config.json").read_bytes())
    (out / "speech_tokenizer" / "generation_config.json").unlink(missing_ok=True)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
