#!/usr/bin/env bash
# Install the official reference code that `vox verify` and the conformance suite compare against:
# torch 2.13.0 (CPU) FIRST and pinned — any other spec makes pip pull a multi-GB CUDA build — then
# qwen-tts 0.1.1 (which pins transformers 4.57.3 and accelerate 1.12.0). Idempotent.
set -euo pipefail
PY=${PYTHON:-python3}

"$PY" -m pip install -q "torch==2.13.0"
"$PY" -m pip install -q "qwen-tts==0.1.1" "transformers==4.57.3" "accelerate==1.12.0"
# The official F5-TTS code (f5-tts 1.1.22 + vocos 0.1.0; with it rjieba, pypinyin, pydub and PyYAML, which
# the reference's frontend checks compare with). torch and the transformers pins repeated, or pip moves them.
"$PY" -m pip install -q "torch==2.13.0" "f5-tts==1.1.22" "vocos==0.1.0" "transformers==4.57.3" \
  "accelerate==1.12.0" "rjieba==0.2.2" "pypinyin==0.55.0" pydub pyyaml
# The official Kokoro code (kokoro 0.9.4) without its text pipeline's dependencies (misaki -> spaCy):
# vox.verify.kokoro.official imports only its model modules, which need torch, transformers, loguru.
"$PY" -m pip install -q loguru huggingface_hub
"$PY" -m pip install -q --no-deps "kokoro==0.9.4"
# misaki 0.9.4, the official English G2P (Apache-2.0): the frontend's word readings are compared with
# its lexicon code. Without its [en] extra (spaCy's model is not on PyPI); the test stubs spaCy.
"$PY" -m pip install -q --no-deps "misaki==0.9.4"
"$PY" -m pip install -q addict regex num2words

# qwen-tts pulls torchaudio 2.11.1 from PyPI, a CUDA build whose native libraries cannot load next
# to a CPU torch (libc10_cuda.so missing), and `import qwen_tts` imports torchaudio. qwen-tts only
# uses torchaudio's pure-Python parts, so move the native libraries aside (ENVIRONMENT workaround).
ta_lib=$("$PY" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("torchaudio")
print(pathlib.Path(spec.origin).parent / "lib" if spec and spec.origin else "")
PY
)
if [ -n "$ta_lib" ] && [ -d "$ta_lib" ]; then
  for so in "$ta_lib"/*.so; do
    [ -e "$so" ] && mv "$so" "$so.disabled-by-vox"
  done
fi
"$PY" -c "import torch, qwen_tts, f5_tts, vocos; print('official reference: torch', torch.__version__, '+ qwen-tts 0.1.1 + f5-tts 1.1.22')" 2>&1 \
  | grep -v -e '^\*\+$' -e 'flash-attn' -e '^ *$'
