"""Running one side of a benchmark in its own process (its peak RSS is its own) and printing tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def side(args: list[str], module: str, stdin: str | None = None) -> dict:
    """`python -m module args`; the JSON object its last stdout line prints."""
    r = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, input=stdin)
    if os.environ.get("VOX_PROFILE"):   # the sides' profiles (VOX_PROFILE=1 / gpu) go to our stderr
        sys.stderr.write(r.stderr)
    if r.returncode != 0:
        last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode
        raise RuntimeError(f"benchmark side failed: {last}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def table(results: list[dict], columns) -> None:
    print(" | ".join(c for c, _ in columns))
    for r in results:
        cells = []
        for c, fmt in columns:
            v = r.get(c)
            if isinstance(v, dict):
                v = "+".join(str(x) for x in v.values())
            cells.append("-" if v is None else fmt.format(v))
        print(" | ".join(cells))
