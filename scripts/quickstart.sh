#!/usr/bin/env bash
# The main job on a fresh machine: set up, build a tiny official Qwen3-TTS Base checkpoint, convert it
# to a bf16 + q8 .tmod, clone a voice from a recording natively, synthesize through the C core, and
# verify the model (reference and native core) against the official code (exit status != 0 if a
# check fails). The tiny checkpoint has random weights: its "speech" is noise-like; the point is the
# whole pipeline, checked against the official code.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

./scripts/setup.sh
mkdir -p build
rm -rf build/tiny-base17
"$PY" -m fixtures.qwen3_tiny base17 --out build/tiny-base17
vox build --model build/tiny-base17 --dtype bf16 --quant q8 -o build/tiny-base17.tmod --force
vox voice create fixtures/audio/ref_en_24k.wav --model build/tiny-base17.tmod -o build/me.tvoice --force \
  --text "The quick brown fox jumps over the lazy dog, while seven kind rabbits watch quietly."
vox say "Hello from vox, synthesized by the native core." --model build/tiny-base17.tmod --voice build/me.tvoice \
  -o build/hello.wav --force
vox verify --model build/tiny-base17.tmod --official build/tiny-base17
