#!/usr/bin/env bash
# The aarch64 build and its C tests, on an x86-64 machine: cross-compile the core and the C tests with
# Debian's cross toolchain (cmake/aarch64-linux-gnu.cmake) and run them under user-mode emulation
# (qemu-aarch64). Two emulated CPUs: qemu's "max" (DotProd, I8MM, BF16: every aarch64 kernel path,
# VOX_CPU choosing each) and a Cortex-A53 (none of them: the neon baseline, and the refusal of the
# wider paths). Correctness only: emulated time says nothing about speed.
#   ./scripts/test-aarch64.sh
# Needs: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user (docs/arm.md).
# The conformance rows of the aarch64 paths are conformance/test_cpu_aarch64.py (it reuses this build).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${VOX_AARCH64_BUILD:-build/aarch64}
SYSROOT=${VOX_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v "$tool" > /dev/null || { echo "test-aarch64: $tool missing (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)" >&2; exit 1; }
done
[ -f "$SYSROOT/include/stdio.h" ] || { echo "test-aarch64: $SYSROOT/include missing (apt-get install libc6-dev-arm64-cross)" >&2; exit 1; }

echo "== aarch64 cross build ($B)"
mkdir -p "$B"
cmake -S . -B "$B" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
  -DVOX_BUILD_EXAMPLES=OFF > "$B/configure.log" 2>&1 || { cat "$B/configure.log"; exit 1; }
cmake --build "$B" -j"$(nproc)" > "$B/build.log" 2>&1 || { tail -60 "$B/build.log"; exit 1; }
# the library is aarch64 code with no x86 instruction in it
aarch64-linux-gnu-readelf -h "$B/libvox.so" | grep -q "AArch64" || { echo "test-aarch64: $B/libvox.so is not an aarch64 library" >&2; exit 1; }

export QEMU_LD_PREFIX="$SYSROOT"
# test_kernels starts itself again with each VOX_CPU value: through the emulator
export VOX_TEST_EMULATOR=qemu-aarch64
export VOX_TEST_QUICK=1  # test_codec: the same checks on fewer frames (the full set takes ~10 min emulated)
LOG="$B/test-aarch64.log"
: > "$LOG"
n=0
run() { # run CPU [VAR=VALUE ...] PROGRAM: one test program under the emulated CPU (its own log, kept in $LOG)
  local cpu=$1; shift
  local prog=${*: -1} t0=$SECONDS log="$B/run.$((n += 1)).log"
  echo "-- QEMU_CPU=$cpu $*" > "$log"
  if ! env QEMU_CPU="$cpu" "${@:1:$#-1}" qemu-aarch64 "$prog" >> "$log" 2>&1; then
    tail -40 "$log"; echo "test-aarch64: FAILED: QEMU_CPU=$cpu $*" >&2; return 1
  fi
  echo "-- QEMU_CPU=$cpu $*: passed ($((SECONDS - t0)) s)" | tee -a "$log"
}

echo "== C tests under qemu-aarch64 (log: $LOG)"
# Two lanes (the emulator runs a program mostly on one core): the kernel tests on the widest path in
# one, everything else in the other.
# every kernel on every aarch64 path against the scalar definitions, the same-bits promises between
# paths, 1/2/3 threads and a row alone vs in a batch, VOX_CPU choice and refusal, VOX_CPU_MASK
run max "$B/test_kernels" &
lane=$!
ok=0
{
  # a CPU without DotProd/I8MM/BF16: the neon kernels run there (no instruction of an extension leaked
  # into the baseline), and every wider path is refused
  run cortex-a53 VOX_TEST_KERNEL_PATHS=neon "$B/test_kernels" &&
  # the codec decoder (any chunking and thread count gives the same bits, the official 300+25 pieces)
  # and the voice encoders' DSP (thread determinism), on the baseline and on the widest path
  run cortex-a53 "$B/test_codec" && run cortex-a53 "$B/test_voice" &&
  run max "$B/test_codec" && run max "$B/test_voice" &&
  # the rest (parsers, tokenizers, sessions, the fuzz corpora) on the widest path, through CTest (its
  # emulator prefix is the toolchain file's); the kernel-path programs ran above, the Vulkan rows need a GPU
  { echo "-- QEMU_CPU=max ctest (the other tests)"
    (cd "$B" && QEMU_CPU=max ctest --output-on-failure -E '^test_(kernels|codec|voice)(@|$)' -LE rows > ctest.log 2>&1) \
      || { tail -60 "$B/ctest.log"; echo "test-aarch64: FAILED: ctest" >&2; false; }; }
} || ok=1
wait "$lane" || ok=1
cat "$B"/run.*.log "$B/ctest.log" > "$LOG" 2>/dev/null || true
rm -f "$B"/run.*.log
[ "$ok" = 0 ] || exit 1
grep -E "tests passed|tests failed" "$LOG" | tail -1
# a test that skipped (77) would pass CTest silently: none may here
if grep -qE "\*\*\*Skipped|Not Run" "$LOG"; then grep -E "\*\*\*Skipped|Not Run" "$LOG"; echo "test-aarch64: a test skipped" >&2; exit 1; fi
echo "== aarch64: all C tests passed"
