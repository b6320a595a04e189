#!/usr/bin/env bash
# The CPU kernel paths on a machine whose CPU this one lacks (an AMX Xeon, say): build the core,
# run the C tests on every path the CPU has (test_kernels covers each path itself; CTest runs the
# per-path copies of the model tests), then time the convolution / DiT layer / attention kernels on
# the widest paths. Everything goes to OUT (default ./cpu-report) as logs and one tarball.
#   tools/device_cpu_report.sh [OUT]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-cpu-report}}
mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
{ lscpu; echo; grep -m1 flags /proc/cpuinfo; } > "$OUT/cpu.txt" 2>&1
log "build"
cmake -S . -B build/report -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build build/report -j"$(nproc)" >> "$OUT/build.log" 2>&1 || { log "build failed"; tail -30 "$OUT/build.log"; exit 1; }
log "test_kernels (every path this CPU has)"
VOX_TEST_VERBOSE=1 build/report/test_kernels > "$OUT/test_kernels.log" 2>&1; echo "rc $?" | tee -a "$OUT/summary.txt"
grep -E "^cpu:|checks passed|FAIL" "$OUT/test_kernels.log" | head -20 | tee -a "$OUT/summary.txt"
log "ctest (Vulkan programs excluded: no loader is assumed)"
(cd build/report && ctest -j"$(nproc)" --output-on-failure -LE rows -E vulkan) > "$OUT/ctest.log" 2>&1; echo "rc $?" | tee -a "$OUT/summary.txt"
tail -5 "$OUT/ctest.log" | tee -a "$OUT/summary.txt"
for path in ${VOX_REPORT_PATHS:-amx avx512-vnni-bf16}; do
  log "bench_kernels --path $path (conv, nn)"
  build/report/bench_kernels --path "$path" --threads 1,"$(nproc)" --only conv,nn,q8 > "$OUT/bench_$path.md" 2>&1
  echo "rc $?" | tee -a "$OUT/summary.txt"
done
tar czf "$OUT/cpu-report.tgz" -C "$OUT" --exclude cpu-report.tgz . 2>/dev/null
log "done"
