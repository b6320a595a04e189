#!/usr/bin/env bash
# F5 on a lent GPU machine (Vulkan): test_vulkan_ops (the cooperative-matrix GEMMs and the float16 flash
# attention against the CPU), then on a full-size random F5TTS_v1_Base made there from a shape description:
# one DiT evaluation against the CPU's float32 products (bench/f5/gpu.py --check), and the speed at NFE 32
# and EPSS 7 on the VK_NV_cooperative_matrix2 kernels (VOX_VK_COOPMAT2=1: cm2), with the DiT in float16
# arithmetic on tensor cores (the default) and with float32 activations (VOX_VK_F5_MATH=f32), with the
# GPU profile. $OUT gets summary.txt (as it goes) and gpu.tgz (the raw logs).
# Prepare here, then run it there with carry [".whl", ".gl", ".device", "build/dev/test_vulkan_ops"]:
#   pip wheel . --no-deps -w .whl   (+ cffi, pycparser, soundfile, pyyaml for its Python: pip download
#     --python-version 3.12 --only-binary=:all: ...; pypinyin==0.55.0 and ~/.cache/vox/wheels/jieba-0.42.1.tar.gz
#     for the F5 converter)
#   (cd .gl && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
#   python -m vox.bench.f5.models --out f5 && python -m vox.bench.f5.random_like describe f5/F5TTS_v1_Base .device/f5-v1.json
#   cmake --build build/dev --target test_vulkan_ops
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=/tmp/raw; mkdir -p $R
S="$OUT/summary.txt"
f=$(find /usr/local/nvidia /usr/share/vulkan /etc/vulkan /usr/lib -name "nvidia_icd*.json" 2>/dev/null | head -1); echo "icd: $f" >> $S; [ -n "$f" ] && export VK_DRIVER_FILES=$f VK_ICD_FILENAMES=$f; export VOX_WHEELS=$PWD/.whl
bash tools/device_setup.sh > $R/setup.log 2>&1; tail -2 $R/setup.log >> $S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $S
echo "== test_vulkan_ops" >> $S
VOX_VK_COOPMAT2=1 VOX_TEST_VERBOSE=1 timeout 150 build/dev/test_vulkan_ops > $R/test_vulkan_ops.log 2>&1; echo "rc $?" >> $S
grep -E "coopmat|float16|attention_f16|linear_cmh|linear_cm2|^ok|fail|FAIL|Device|device 0" $R/test_vulkan_ops.log | head -40 >> $S
python3 bench/f5/random_like.py make .device/f5-v1.json /tmp/f5 && python3 -c "
from vox.families.f5.convert import convert
convert('/tmp/f5/model.safetensors','/tmp/f5/vocab.txt','/tmp/f5/vocos','/tmp/f5-bf16.tmod',dtype='bf16',quant='none',overwrite=True)" >> $R/convert.log 2>&1
ls -la /tmp/f5-bf16.tmod >> $S 2>&1
echo "== one DiT evaluation, 400 frames: max |GPU - CPU f32| / max |CPU|" >> $S
VOX_VK_COOPMAT2=1 timeout 240 python3 bench/f5/gpu.py --check --tmod /tmp/f5-bf16.tmod --device vulkan:0 --check-frames 400 > $R/check.json 2> $R/check.err
tail -c 900 $R/check.json >> $S; tail -3 $R/check.err >> $S
for nfe in "32 0" "7 1"; do set -- $nfe
  for M in cm2 f16 f32; do
    mv=""; [ $M = f32 ] && mv=f32
    c2=0; [ $M = cm2 ] && c2=1
    VOX_VK_COOPMAT2=$c2 VOX_VK_F5_MATH=$mv VOX_PROFILE=gpu timeout 120 python3 bench/f5/gpu.py --child --tmod /tmp/f5-bf16.tmod --device vulkan:0 \
      --nfe $1 --epss $2 --runs 3 --ref-seconds 3 --seconds 10 > $R/f5_${M}_nfe$1.json 2> $R/f5_${M}_nfe$1.err
    echo "nfe $1 math $M: $(python3 -c "import json;d=json.loads([l for l in open('$R/f5_${M}_nfe$1.json') if l.startswith('{')][-1]);print('times',[round(t,3) for t in d['times_s']],'rtf',round(d['rtf'],4))" 2>&1 | tail -1)" >> $S
    grep -h -E "f5/(qkv|ff1|ff2|attn_out|attention|embed)|DiT arithmetic" $R/f5_${M}_nfe$1.err | cut -c1-200 | head -9 >> $S
  done
done
cd $R && tar czf "$OUT/gpu.tgz" . ; cat $S
