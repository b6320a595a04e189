"""vox.verify: compare a model (reference and, later, native) with the official implementation.

`vox verify --model m.tmod --official DIR` runs the same teacher-forced, stage-by-stage comparison
the conformance suite runs on the tiny fixtures, prints one row per check with its measured error
and its limit from the tolerance table (tolerances.toml), and exits non-zero when a row fails.
"""

from .tolerance import Row, TABLE, evaluate  # noqa: F401
