"""The cffi (ABI mode) binding of libvox: the only place that touches the C library.

The cdef is derived from the installed vox.h at import time, so the binding cannot drift from the
header; a test also checks that every exported symbol is declared. cffi releases the GIL for the
duration of every C call, so native work runs in parallel with other Python threads.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import cffi

_LIBNAMES = {"linux": "libvox.so", "darwin": "libvox.dylib", "win32": "vox.dll"}


def _search_dirs() -> list[Path]:
    dirs = []
    env = os.environ.get("VOX_LIBRARY_DIR")
    if env:
        dirs.append(Path(env))
    here = Path(__file__).resolve().parent
    dirs.append(here)
    # An editable install keeps the Python sources in the checkout and the built library in
    # site-packages/vox; look on every entry of the package path.
    pkg = sys.modules.get(__package__ or "vox")
    for p in getattr(pkg, "__path__", []) or []:
        dirs.append(Path(p))
    import site

    for sp in site.getsitepackages() + [site.getusersitepackages()]:
        dirs.append(Path(sp) / "vox")
    return dirs


def _find(name: str) -> Path:
    for d in _search_dirs():
        p = d / name
        if p.is_file():
            return p
    raise ImportError(f"vox: cannot find {name}; looked in: " + ", ".join(str(d) for d in _search_dirs())
                      + " (reinstall with `pip install .`, or set VOX_LIBRARY_DIR)")


def header_path() -> Path:
    """The vox.h that matches the loaded library."""
    for d in _search_dirs():
        for cand in (d / "include" / "vox.h", d.parent.parent / "core" / "include" / "vox.h"):
            if cand.is_file():
                return cand
    raise ImportError("vox: cannot find vox.h next to the library")


def cdef_from_header(text: str) -> str:
    """Turn vox.h into a cffi cdef: keep declarations and integer #defines, drop the rest.

    Conditional blocks about the compiler or language (__cplusplus, _WIN32, __GNUC__) are dropped
    whole; the include guard is kept.
    """
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out: list[str] = []
    stack: list[bool] = []  # per open #if: is this chain dropped?
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            directive = s[1:].strip()
            if directive.startswith("if"):
                stack.append(any(w in directive for w in ("__cplusplus", "_WIN32", "__GNUC__")))
            elif directive.startswith("endif"):
                stack.pop()
            elif not any(stack):
                m = re.match(r"define\s+(VOX_[A-Z0-9_]+)\s+(\d+)\s*$", directive)
                if m:
                    out.append(f"#define {m.group(1)} {m.group(2)}")
            continue
        if not any(stack):
            out.append(line)
    return "\n".join(out).replace("VOX_API ", "")


ffi = cffi.FFI()
_header = header_path()
ffi.cdef(cdef_from_header(_header.read_text()))
lib = ffi.dlopen(str(_find(_LIBNAMES.get(sys.platform, "libvox.so"))))

if lib.vox_abi_version() != lib.VOX_ABI_VERSION:
    raise ImportError(f"vox: libvox ABI {lib.vox_abi_version()} does not match its header ({lib.VOX_ABI_VERSION}); "
                      "reinstall vox")


def string(p) -> str:
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else ""
