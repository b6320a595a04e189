"""Run a Python fuzz target once on every input of the given files or directories, without atheris:

    python fuzz/py/replay.py TARGET PATH...

what scripts/fuzz.sh --coverage measures line coverage with (coverage.py), and a quick way to re-run
a corpus or one input after a fix. Exits non-zero on the first input the target fails on.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import targets  # noqa: E402


def main() -> int:
    if len(sys.argv) < 3 or sys.argv[1] not in targets.TARGETS:
        sys.exit(f"usage: replay.py TARGET PATH...; targets: {', '.join(targets.TARGETS)}")
    fn = targets.TARGETS[sys.argv[1]]
    n = 0
    for arg in sys.argv[2:]:
        p = Path(arg)
        for f in sorted(p.iterdir()) if p.is_dir() else [p]:
            if f.is_file():
                fn(f.read_bytes())
                n += 1
    print(f"{sys.argv[1]}: {n} inputs replayed")
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
