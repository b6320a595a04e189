"""vox inspect: show what a .tmod model or a .tvoice voice holds; --check verifies its checksums."""

from __future__ import annotations

import argparse
import json

EXAMPLES = """\
examples:
  vox inspect base17-q8.tmod            # family, variant, precision, tensors by dtype, speakers
  vox inspect base17-q8.tmod --check    # also recompute every tensor's CRC-32 (reads the whole file)
  vox inspect alice.tvoice --json
"""


def register(sub) -> None:
    p = sub.add_parser(
        "inspect", help="show what a .tmod or .tvoice file holds",
        description="Describe a .tmod model or .tvoice voice file. Models are opened by the native core, "
                    "which validates the header, the manifest and every tensor's bounds.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="a .tmod or .tvoice file")
    p.add_argument("--json", action="store_true", help="print the description as JSON")
    p.add_argument("--check", action="store_true", help="verify every tensor's CRC-32 (exit 1 if one differs)")
    p.set_defaults(func=run)


def _list(names: list[str], limit: int = 12) -> str:
    if not names:
        return "none"
    shown = ", ".join(names[:limit])
    return f"{len(names)}: {shown}" + (", ..." if len(names) > limit else "")


def describe(info: dict) -> str:
    """The human-readable text of `vox inspect` for a vox.inspect() dict."""
    from vox.inspection import format_bytes as fb

    lines = [f"{info['path']}: vox.{info['kind']} v{info['format_version']}, {fb(info['file_bytes'])}"]
    row = lambda k, v: lines.append(f"  {k:<10} {v}")  # noqa: E731
    if info["kind"] == "tmod":
        row("model", " ".join(x for x in (info["family"], info["variant"], info["size"]) if x))
        row("model_id", info["model_id"])
        p = info["precision"]
        row("precision", f"{p.get('dtype')}, quant {p.get('quant')}"
                         + (f", codec {p['codec_dtype']}" if "codec_dtype" in p else ""))
        by = ", ".join(f"{d} {v['tensors']} ({fb(v['bytes'])})" for d, v in info["dtypes"].items())
        row("tensors", f"{info['tensor_count']} ({fb(info['tensor_bytes'])}): {by}")
        for key, text in info.get("runtime_lines", {}).items():  # what an engine loaded here runs (family's)
            row(key, text)
        row("speakers", _list(info["speakers"]))
        row("languages", _list(info["languages"]))
    else:
        row("voice", f"{info['name']!r} ({info['mode']})" if info["name"] else info["mode"])
        row("model", f"{info['family']} {info['variant']}")
        row("model_id", info["model_id"])
        row("language", info["language"])
        for key, text in info.get("texts", {}).items():
            if text:
                row(key, repr(text))
        if info["lengths"]:
            row("lengths", ", ".join(f"{k} {v}" for k, v in info["lengths"].items()))
        if info["defaults"]:
            row("defaults", json.dumps(info["defaults"], sort_keys=True))
    row("checksums", info["checksums"])
    return "\n".join(lines)


def run(args) -> int:
    from vox.inspection import inspect

    info = inspect(args.file, check=args.check)
    print(json.dumps(info, indent=2) if args.json else describe(info))
    return 0
