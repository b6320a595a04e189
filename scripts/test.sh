#!/usr/bin/env bash
# Run every test of vox: set up (idempotent), the C tests (CTest), the C example, a smoke test of the
# installed package, the type check, a short fuzz run, the sanitizer build, and the conformance suite,
# which compares vox with the official code on tiny official checkpoints and writes docs/conformance.md.
#   ./scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
# each phase says how long the run has taken so far (the CI time budget is watched per phase)
phase() { echo "== $* (at $SECONDS s)"; }

./scripts/setup.sh

phase "C tests"
cmake -S . -B build/ctest -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/ctest -j"$(nproc)" > /dev/null
# -LE rows: the Vulkan programs that the conformance suite runs itself (CMakeLists.txt)
(cd build/ctest && ctest -j"$(nproc)" --output-on-failure -LE rows | tee ctest.log)
./scripts/no_skips.sh build/ctest/ctest.log

phase "aarch64: the cross build and its C tests under qemu-aarch64 (every neon path)"
./scripts/test-aarch64.sh

phase "C example (examples/minimal.c) on a tiny CustomVoice model"
"$PY" - <<'PY'
from fixtures.qwen3_tiny import fixture_dir
from vox.convert import convert
convert(fixture_dir("custom06"), "build/ctest/tiny-custom06.tmod", dtype="bf16", quant="q8", overwrite=True)
PY
build/ctest/minimal build/ctest/tiny-custom06.tmod "Hello from C." build/ctest/minimal.wav

phase "installed package"
"$PY" scripts/smoke.py

phase "type check (mypy over the installed package)"
./scripts/typecheck.sh

phase "fuzz: every reader of untrusted input briefly (libFuzzer + ASan/UBSan, atheris)"
./scripts/fuzz.sh --ci

phase "AddressSanitizer + UndefinedBehaviorSanitizer"
./scripts/sanitize.sh

phase "conformance"
# The suite runs on this CMake build of the core (the same sources and flags as the installed wheel):
# some native checks call its internal test programs (build/ctest/test_voice, libvox_static.a).
# --durations: the slowest checks are listed, so the suite's time is seen where it goes.
# pytest-xdist runs the test files on one worker per core (at most 4: each holds the official models):
# most checks are single-threaded (one torch thread, tiny models), so one process left a core idle.
# --dist loadfile keeps a file's checks on one worker, so its module fixtures are built once; the files
# go out in collection order, the slowest first (conformance/conftest.py SLOW_FILES).
workers=${VOX_TEST_WORKERS:-$(( $(nproc) < 4 ? $(nproc) : 4 ))}
rc=0
VOX_LIBRARY_DIR="$PWD/build/ctest" "$PY" -m pytest conformance -q -p no:cacheprovider --durations=25 \
  -n "$workers" --dist loadfile --no-loadscope-reorder --report docs/conformance.md "$@" || rc=$?
phase "done, pytest exit status $rc"
exit $rc
