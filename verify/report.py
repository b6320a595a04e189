"""Render rows as a terminal table or as the markdown conformance report."""

from __future__ import annotations

import datetime
import platform
from collections import defaultdict

from .tolerance import TABLE, Row


def print_rows(rows: list[Row]) -> None:
    for r in rows:
        print(r.line())


def markdown(rows: list[Row], title: str = "Conformance report", preamble: str = "") -> str:
    """One section per table entry, one line per measurement; failures first in the summary."""
    unsupported = [r for r in rows if r.unsupported]
    rows = [r for r in rows if not r.unsupported]
    by_check: dict[str, list[Row]] = defaultdict(list)   # measured rows only: a check that ran nowhere here
    for r in rows:                                       # is listed as not supported, never as a pass
        by_check[r.check].append(r)
    failed = [r for r in rows if not r.passed]
    out = [f"# {title}", ""]
    if preamble:
        out += [preamble, ""]
    out += [f"Generated {datetime.date.today().isoformat()} on {platform.machine()} "
            f"({platform.system()}, Python {platform.python_version()}). "
            f"{len(rows)} measurements over {len(by_check)} checks; "
            f"{'all within tolerance' if not failed else f'{len(failed)} OUT OF TOLERANCE'}.", ""]
    out += ["| check | what | metric | limit | measurements | worst | status |",
            "|---|---|---|---|---|---|---|"]
    for check in sorted(by_check, key=lambda c: list(TABLE).index(c)):
        rs = by_check[check]
        e = TABLE[check]
        worst = _worst(e, rs)
        status = ("measured (no limit)" if e.get("report_only")
                  else "pass" if all(r.passed for r in rs) else "**FAIL**")
        out.append(f"| `{check}` | {e['what']} | {e['metric']} | {rs[0].limit} | {len(rs)} | {worst:.3g} | {status} |")
    if unsupported:
        out += ["", "## Not supported on this machine", "",
                "These measurements need what their backend lacks here (a CPU path's instructions, a device); "
                "they did not run and are neither passes nor failures (a check listed here may have been "
                "measured on another backend above; they run where the hardware has it: docs/conformance-*.md).", "", "| check | subject | backend | why |", "|---|---|---|---|"]
        out += [f"| `{r.check}` | {r.subject} | {r.backend} | {r.unsupported} |" for r in unsupported]
    missing = [c for c in TABLE if c not in by_check and c not in {r.check for r in unsupported}]
    if missing:
        out += ["", "Checks in the table not measured in this run: " + ", ".join(f"`{c}`" for c in missing) + "."]
    out += ["", "## Every measurement", ""]
    for check in sorted(by_check, key=lambda c: list(TABLE).index(c)):
        e = TABLE[check]
        out += [f"### `{check}`", "", e["what"] + f" — {e['metric']}, {by_check[check][0].limit}.", "",
                "| subject | backend | value | status | note |", "|---|---|---|---|---|"]
        for r in by_check[check]:
            st = "measured" if e.get("report_only") else ("pass" if r.passed else "**FAIL**")
            out.append(f"| {r.subject} | {r.backend} | {r.value:.4g} | {st} | {r.note} |")
        out.append("")
    return "\n".join(out) + "\n"


def _worst(entry: dict, rows: list[Row]) -> float:
    vals = [r.value for r in rows]
    if "min" in entry:
        return min(vals)
    return max(vals)
