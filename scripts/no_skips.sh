#!/usr/bin/env bash
# With VOX_NO_SKIPS=1 (CI), a C test that skipped (exit 77: something it needs is missing) fails the
# run, as a skipped conformance check does: CI installs everything every test needs.
#   ./scripts/no_skips.sh CTEST_LOG
set -euo pipefail
[ "${VOX_NO_SKIPS:-0}" = "1" ] || exit 0
if grep -E '\*\*\*Skipped|Not Run' "$1"; then
  echo "VOX_NO_SKIPS=1: a C test was skipped (above); install what it needs" >&2
  exit 1
fi
