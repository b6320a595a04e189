#!/usr/bin/env bash
# The main job on a fresh machine: set up, build a tiny official Qwen3-TTS checkpoint, convert it to
# a bf16 + q8 .tmod, and verify it against the official code (exit status != 0 if a check fails).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

./scripts/setup.sh
mkdir -p build
rm -rf build/tiny-base17
"$PY" -m fixtures.qwen3_tiny base17 --out build/tiny-base17
vox build --model build/tiny-base17 --dtype bf16 --quant q8 -o build/tiny-base17.tmod --force
vox verify --model build/tiny-base17.tmod --official build/tiny-base17
