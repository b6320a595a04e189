"""`vox serve` with the duplex stand-in (conformance/duplex_double.py) as the WebSocket's duplex
object: the same flags as `vox serve`; for the tests of the WebSocket protocol while the engine has
no Engine.duplex."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from duplex_double import factory  # noqa: E402
from vox.cli import cmd_serve  # noqa: E402


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="serve_double")
    sub = p.add_subparsers(dest="command")
    cmd_serve.register(sub)
    a = p.parse_args(argv)
    return cmd_serve.serve(a, duplex_factory=factory)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
