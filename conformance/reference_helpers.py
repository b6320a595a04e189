"""Small helpers shared by conformance tests."""

from __future__ import annotations

import subprocess
import sys


def run_cli(args: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
    """Run `vox ARGS` in a fresh interpreter (as a user would), capturing its output."""
    return subprocess.run([sys.executable, "-m", "vox.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout)
