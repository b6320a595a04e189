"""The tolerance table (tolerances.toml) and the rows a comparison produces.

Every check of the conformance suite and of `vox verify` names one entry of the table: what is
compared, the metric, and its limit (`max` for errors, `min` for agreement fractions). An entry with
`report_only = true` has no limit: it is measured and printed (e.g. q4 quality, which the format
does not promise). Limits are tightened when measurements allow, never loosened to get green.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .metrics import METRICS

TABLE_PATH = Path(__file__).with_name("tolerances.toml")


def _load() -> dict[str, dict]:
    with open(TABLE_PATH, "rb") as f:
        raw = tomllib.load(f)
    table = {}

    def walk(prefix, d):
        if "metric" in d:
            table[prefix] = d
            return
        for k, v in d.items():
            if isinstance(v, dict):
                walk(f"{prefix}.{k}" if prefix else k, v)

    walk("", raw)
    for key, e in table.items():
        if e["metric"] not in METRICS:
            raise ValueError(f"tolerances.toml [{key}]: unknown metric {e['metric']!r}")
        if not e.get("report_only") and ("max" in e) == ("min" in e):
            raise ValueError(f"tolerances.toml [{key}]: give exactly one of max / min (or report_only)")
    return table


TABLE: dict[str, dict] = _load()


@dataclass
class Row:
    """One measured comparison: `check` is a key of the tolerance table."""

    check: str
    subject: str                 # what exactly was compared, e.g. "base17 f32 icl, 38 steps"
    value: float
    note: str = ""
    backend: str = "reference"   # reference | cpu | vulkan ...
    unsupported: str = ""        # why this check cannot run here ("not supported on this CPU: ..."); value NaN
    passed: bool = field(init=False)
    limit: str = field(init=False)

    def __post_init__(self):
        if self.check not in TABLE:
            raise KeyError(f"check {self.check!r} is not in the tolerance table ({TABLE_PATH.name})")
        if self.unsupported:
            # not a pass and not a failure: listed in the report as a check this machine cannot run
            self.passed, self.limit = True, evaluate(self.check, 0.0)[1]
            return
        self.passed, self.limit = evaluate(self.check, self.value)

    @classmethod
    def not_supported(cls, check: str, subject: str, why: str, backend: str = "cpu") -> "Row":
        """A check that this machine cannot run (a CPU without the instructions of a path, ...): a
        visible state in the report (like ggml's test-backend-ops "not supported"), never a pass."""
        return cls(check, subject, float("nan"), backend=backend, unsupported=why)

    @property
    def entry(self) -> dict:
        return TABLE[self.check]

    def line(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        if self.entry.get("report_only"):
            status = "INFO"
        if self.unsupported:
            return f"N/A   {self.backend:<9} {self.check:<34} {self.subject:<44} not supported here: {self.unsupported}"
        return (f"{status}  {self.backend:<9} {self.check:<34} {self.subject:<44} {self.entry['metric']} "
                f"{self.value:.3g} ({self.limit})")


def evaluate(check: str, value: float) -> tuple[bool, str]:
    e = TABLE[check]
    if e.get("report_only"):
        return True, "reported"
    if "max" in e:
        return bool(value <= e["max"]), f"<= {e['max']:g}"
    return bool(value >= e["min"]), f">= {e['min']:g}"


def measure(check: str, ours, official, subject: str, note: str = "", backend: str = "reference", **kw) -> Row:
    """Compute the table's metric for `check` on (ours, official) and return the row."""
    metric = METRICS[TABLE[check]["metric"]]
    return Row(check, subject, metric(ours, official, **kw), note=note, backend=backend)
