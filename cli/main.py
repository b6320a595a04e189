"""The `vox` command."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    import vox

    print(f"vox {vox.__version__} (native {vox.native_version()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
