"""The `vox` command: build, inspect, verify, ... (`vox --help`, `vox COMMAND --help`).

User mistakes (a missing file, a corrupt model, a bad option) end as one line on stderr and a
non-zero exit status, never a traceback; set VOX_DEBUG=1 to see the traceback anyway.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Order here is the order in `vox --help`.
COMMANDS = ["say", "live", "voice", "build", "models", "inspect", "serve", "verify", "bench", "devices"]


class UsageError(Exception):
    """A mistake in how vox was called; printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    import vox

    p = argparse.ArgumentParser(
        prog="vox",
        description="vox: native text-to-speech, verified against the official models.",
        epilog="Run `vox COMMAND --help` for the options of a command. Docs: docs/formats.md, docs/conformance.md.",
    )
    p.add_argument("--version", action="version", version=f"vox {vox.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"vox.cli.cmd_{name}").register(sub)
    return p


def _guard_std_streams() -> None:
    """Standard streams the caller closed (`vox say ... >&-`): each closed descriptor is filled with
    /dev/null, so a file opened later can never land on 0, 1 or 2 and receive prints, and the Python
    stream is None for stdin/stdout (the commands then say "standard output is closed") or a sink for
    stderr (the work still runs; its messages have nowhere to go)."""
    import fcntl

    closed = []
    for fd in (0, 1, 2):
        try:
            mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
        except OSError:
            closed.append(fd)
            continue
        # closed before we started, and reused by a file the interpreter opened for reading
        if fd in (1, 2) and mode == os.O_RDONLY:
            if fd == 1:
                sys.stdout = None  # type: ignore[assignment]
            else:
                sys.stderr = open(os.devnull, "w")
    for fd in closed:
        got = os.open(os.devnull, os.O_RDWR)
        if got != fd:
            os.dup2(got, fd)
            os.close(got)
    if 0 in closed:
        sys.stdin = None  # type: ignore[assignment]
    if 1 in closed:
        sys.stdout = None  # type: ignore[assignment]
    if 2 in closed:
        sys.stderr = open(os.devnull, "w")


def main(argv: list[str] | None = None) -> int:
    from vox.errors import VoxError

    _guard_std_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("vox: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`vox inspect m.tmod | head`): not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except UsageError as e:
        print(f"vox {args.command}: error: {e}", file=sys.stderr)
        return 2
    except (VoxError, OSError, ValueError, KeyError) as e:
        if os.environ.get("VOX_DEBUG"):
            raise
        if isinstance(e, KeyError) and e.args:
            msg = str(e.args[0])
        elif isinstance(e, OSError) and e.strerror:  # "[Errno 28] ..." is not for users: the text and the file
            msg = f"{e.filename}: {e.strerror}" if e.filename else e.strerror
        else:
            msg = str(e)
        print(f"vox {args.command}: error: {msg}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
