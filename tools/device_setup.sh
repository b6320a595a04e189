#!/usr/bin/env bash
# One-step setup of a bare lent machine (an image with Python, torch and CMake, no network) for vox's
# measurements there: the Vulkan loader from .gl/*.deb (apt-get download libvulkan1 into .gl) and the
# wheels in .whl/ (`pip wheel . --no-deps -w .whl` for vox, plus what the machine's Python lacks:
# cffi, pycparser, soundfile, pyyaml for its Python version), both carried beside the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
if ls .gl/*.deb > /dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
python3 -m pip install -q --no-deps --no-index --force-reinstall .whl/*.whl 2>&1 | grep -v -i "warning" || true
python3 -c "import vox, json; d = vox.devices(); print('vox', vox.__version__, '| cpu', d['cpu']['kernels'], '|', \
[g['name'] for g in d['gpus']])"
