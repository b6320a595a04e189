"""Representative subsets of the slow matrices (CI time), and the switch that runs them whole.

lavapipe (the software Vulkan driver CI tests on) and the forced CPU paths are for correctness, not
speed: a teacher-forced run there costs ~10 s, and the full variant x dtype matrix ~5 minutes. The
default run takes a subset chosen so that every variant and every dtype still appears at least once
(each row's limit is unchanged); `VOX_CONFORMANCE_FULL=1` runs every combination (the hardware-GPU
runs do: docs/conformance-vulkan-h200.md). docs/conformance.md says which subset ran.
"""

from __future__ import annotations

import os

FULL = os.environ.get("VOX_CONFORMANCE_FULL") == "1"


def subset(full: list, representative: list) -> list:
    """`full` under VOX_CONFORMANCE_FULL=1, else `representative` (which must be part of `full`)."""
    missing = [x for x in representative if x not in full]
    if missing:
        raise ValueError(f"representative cases {missing} are not in the full matrix")
    return list(full) if FULL else list(representative)


def diagonal(rows: list, cols: list) -> list[tuple]:
    """Pairs (rows[i], cols[i mod len(cols)]) for every row and then every remaining column: each value
    of both axes appears at least once in max(len(rows), len(cols)) cases."""
    n = max(len(rows), len(cols))
    return [(rows[i % len(rows)], cols[i % len(cols)]) for i in range(n)]
