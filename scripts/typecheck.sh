#!/usr/bin/env bash
# Type-check the vox package as users install it (mypy -p vox, the settings of pyproject.toml's
# [tool.mypy]): a non-editable install into a scratch folder, so mypy sees the package layout that
# scikit-build-core's mapping makes (vox.reference, vox.cli, ...), not the source tree's folders.
#   scripts/typecheck.sh            # the install goes to $VOX_TYPECHECK_DIR (default /tmp/voxpkg-typecheck)
# Needs mypy and the build requirements (pip install --no-build-isolation builds the C core too).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
DIR=${VOX_TYPECHECK_DIR:-/tmp/voxpkg-typecheck}
rm -rf "$DIR"
"$PY" -m pip install -q --no-deps --no-build-isolation --target "$DIR" .
cd "$DIR"
"$PY" -m mypy -p vox --config-file "$ROOT/pyproject.toml"
