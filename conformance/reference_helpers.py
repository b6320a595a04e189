"""Small helpers shared by conformance tests."""

from __future__ import annotations

import subprocess
import sys


def run_cli(args: list[str], timeout: float = 600, input_text: str | None = None) -> subprocess.CompletedProcess:
    """Run `vox ARGS` in a fresh interpreter (as a user would), capturing its output. stdout is text
    (r.stdout) and bytes (r.stdout_bytes, for raw PCM)."""
    r = subprocess.run([sys.executable, "-m", "vox.cli.main", *args], capture_output=True, timeout=timeout,
                       input=input_text.encode() if input_text is not None else None)
    out = subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode("utf-8", "replace"),
                                      r.stderr.decode("utf-8", "replace"))
    out.stdout_bytes = r.stdout
    return out
