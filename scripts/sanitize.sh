#!/usr/bin/env bash
# Build the core with AddressSanitizer + UndefinedBehaviorSanitizer, run the C tests, then the Python
# smoke test (scripts/smoke.py) against that library. Any report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOX_SANITIZE=ON > /dev/null
cmake --build build/asan -j"$(nproc)" > /dev/null
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# the codec tests on fewer frames and shapes (the same code paths; the Release run checks them all)
export VOX_TEST_QUICK=1
(cd build/asan && ctest -j"$(nproc)" --output-on-failure | tee ctest.log)
./scripts/no_skips.sh build/asan/ctest.log
# Python itself is not instrumented: preload the ASan runtime, and leave leak checking to the C tests
# (the interpreter keeps objects alive at exit).
ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \
  VOX_LIBRARY_DIR="$PWD/build/asan" "$PY" scripts/smoke.py
