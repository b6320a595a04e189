#!/usr/bin/env bash
# F5-TTS end to end on a lent machine's CPU through the shipped wheel and its Python API, per kernel path:
# the C tests (tools/device_cpu_report.sh) are built by that machine's compiler, so they cannot catch what
# the compiler of the wheel got wrong (GCC 12 once compiled the AMX tile configuration away: SIGILL in
# every bf16 run on the amx path). Here one DiT evaluation per path and thread count (a preloaded SIGILL
# handler, when built, names the faulting address), then `vox bench` per path for bf16 and q8 weights.
# Prepare as tools/device_f5_gpu.sh says (.whl with the vox wheel, .device/f5-v1.json); optional:
#   gcc -O2 -shared -fPIC -o .device/sigill.so tools/sigill_report.c -ldl
#   tools/device_f5_cpu.sh        (OUT: where summary.txt goes; VOX_F5_PATHS="amx avx512-vnni-bf16")
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; S=$OUT/summary.txt
export VOX_WHEELS=$PWD/.whl
python3 -c "import vox" 2>/dev/null || bash tools/device_setup.sh > /tmp/setup.log 2>&1
lscpu | grep -E "Model name|^CPU\(s\)" >> $S
[ -f /tmp/f5/model.safetensors ] || python3 bench/f5/random_like.py make .device/f5-v1.json /tmp/f5 > /tmp/f5_make.log 2>&1
python3 -c "
from vox.families.f5.convert import convert
for name, dt, q in (('bf16', 'bf16', 'none'), ('q8', 'f32', 'q8')):
    convert('/tmp/f5/model.safetensors', '/tmp/f5/vocab.txt', '/tmp/f5/vocos', f'/tmp/f5-{name}.tmod', dtype=dt, quant=q, overwrite=True)
" > /tmp/f5_convert.log 2>&1
cat > /tmp/f5_dit_once.py <<'PY'
import sys, numpy as np, vox
tmod, thr, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
e = vox.Engine(tmod, threads=thr)
rng = np.random.RandomState(0)
inp = dict(x=rng.randn(n, 100).astype(np.float32), cond=rng.randn(n, 100).astype(np.float32),
           ids=rng.randint(0, 2000, 120).astype(np.int32), t=np.float32(0.4))
out = e.run('dit', inputs=inp)
print('ok', vox.devices()['cpu']['kernels'], tmod, n, thr, e.info['dit_math'][:48], flush=True)
PY
pre=""; [ -f .device/sigill.so ] && pre=$PWD/.device/sigill.so
for path in ${VOX_F5_PATHS:-amx avx512-vnni-bf16}; do
  for m in bf16 q8; do
    for c in "1 200" "$(nproc) 1335"; do
      LD_PRELOAD=$pre VOX_CPU=$path timeout 120 python3 /tmp/f5_dit_once.py /tmp/f5-$m.tmod $c >> $S 2>&1 || echo "FAILED: $path $m $c (rc $?)" >> $S
    done
    VOX_CPU=$path VOX_PROFILE=1 timeout 120 python3 -m vox.cli.main bench --model /tmp/f5-$m.tmod --nfe 7 --threads "$(nproc)" \
      > /tmp/f5_bench_${m}_$path.txt 2>&1
    echo "f5 $m $path: $(grep -E '^vox \|' /tmp/f5_bench_${m}_$path.txt | tail -1)" >> $S
    grep -E "DiT per step" /tmp/f5_bench_${m}_$path.txt | cut -c1-260 >> $S
  done
done
cat $S
