"""Bounded reads of untrusted input (docs/reliability.md): what a file may cost is checked before it
is allocated, and a bad file gets one clear error.

- open_regular / read_regular: regular files only (a FIFO, a device such as /dev/zero or a directory
  is refused), the size checked against a limit before the first byte is read, and never more than
  the limit read, even from a file that grows meanwhile.
- check_json / loads: the number of values of a JSON text (and its nesting depth) checked before
  json.loads builds it (up to ~70 bytes of Python objects per byte of text) or recurses into it: an
  upper bound counted at C speed, and only when that bound passes the limit the exact count, by a
  walk that is linear in the text, allocates nothing per value and stops at the limit (json_values /
  json_depth). The limits are the C parser's (core/src/json.h): MAX_DEPTH nested containers and
  MAX_VALUES values in a document.
- read_zip_member: a ZIP member whose declared size is checked first, inflated a chunk at a time.
- shown: a name taken from the input (a ZIP member, a pickle's storage key) fit for a one-line message.
"""

from __future__ import annotations

import json
import os
import re
import stat
import zipfile
import zlib

from ..errors import FormatError

MAX_DEPTH = 64           # VOX_JSON_MAX_DEPTH
MAX_VALUES = 1 << 20     # VOX_JSON_MAX_VALUES: a 151k-token vocab.json has 7x fewer
_CHUNK = 1 << 20         # inflate at most this much at a time


def open_regular(path: str):
    """open(path, "rb") for a regular file only. O_NONBLOCK keeps a FIFO from blocking the open until
    a writer appears (it is then refused, like a directory or a device)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _read_at_most(f, size: int, max_bytes: int) -> bytes:
    """The file's bytes, or max_bytes + 1 of them when it has more (it grew after fstat, or it is one of
    the files whose size reads 0). read(n) allocates n bytes up front: ask for what is there."""
    out = bytearray(f.read(size))
    while len(out) <= max_bytes:
        b = f.read(min(1 << 16, max_bytes + 1 - len(out)))
        if not b:
            break
        out += b
    return bytes(out)


def read_regular(path: str | os.PathLike, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file `path`, at most max_bytes of them; otherwise one FormatError,
    "<path>: cannot read the <what> (<why>)": no such file, not a regular file, too large, ..."""
    p = os.fspath(path)

    def fail(why: str):
        return FormatError(f"{p}: cannot read the {what} ({why})")

    try:
        with open_regular(p) as f:
            size = os.fstat(f.fileno()).st_size
            if size > max_bytes:
                raise fail(f"{size} bytes, more than the {max_bytes} a {what} may have")
            data = _read_at_most(f, size, max_bytes)
    except FileNotFoundError:
        raise fail("no such file") from None
    except FormatError:
        raise
    except OSError as e:
        raise fail(e.strerror or str(e).removeprefix(p + ": ")) from None
    if len(data) > max_bytes:  # it grew after the size check
        raise fail(f"more than the {max_bytes} bytes a {what} may have")
    return data


def read_text(path: str | os.PathLike, max_bytes: int, what: str = "file") -> str:
    """read_regular, decoded as UTF-8 (FormatError with the offset of the first invalid byte)."""
    data = read_regular(path, max_bytes, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"{os.fspath(path)}: cannot read the {what} (not UTF-8 text: invalid byte at offset "
                          f"{e.start})") from None


# ----------------------------------------------------------------------------------------- JSON
# The walk runs over the text with whitespace deleted and each empty container replaced by \x01 (a
# byte JSON has nowhere outside a string, where the walk does not look): both at C speed, neither
# changes the values or the nesting of a valid document. Its tokens: a string literal (unrolled, so
# matching never backtracks; skipped, so that the brackets and commas inside do not count); a run of
# scalars, commas, colons and empty containers, whose commas are counted at C speed; a '[' or '{' (now
# always opening a non-empty container); a ']' or '}'.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[^"\[\]{}]+|[\[{]|[\]}]', re.S)


def _scan(data: bytes, max_values: int | None, max_depth: int | None) -> tuple[int, int]:
    """(values, depth) of the JSON text; ValueError as soon as either passes its limit (None: none).

    Every value but the root follows a '[', a ',' or a ':' (a member's colon goes with its comma), so
    values = 1 + commas + non-empty arrays + non-empty objects, counted outside strings: exact for valid
    JSON (for invalid text, a number that the parser's own error makes moot). Linear in time, a few
    copies of the text in memory, at most a few tokens per value, and it stops at the limit."""
    s = data.translate(None, b" \t\r\n").replace(b"[]", b"\x01").replace(b"{}", b"\x01")
    values, depth, deepest, tokens = 1, 0, 0, 0
    stop = 0 if max_values is None else 4 * max_values + 64  # read only when max_values is given
    for m in _TOKEN.finditer(s):
        a, b = m.span()
        t = s[a]
        if t == 34:  # '"'
            pass
        elif t in (91, 123):  # '[' '{'
            values += 1
            depth += 1
            deepest = max(deepest, depth)
        elif t in (93, 125):  # ']' '}'
            depth -= 1
        else:  # a run
            values += s.count(b",", a, b)
            if s.find(b"\x01", a, b) >= 0:
                deepest = max(deepest, depth + 1)  # an empty container in it
        if max_depth is not None and deepest > max_depth:
            raise ValueError(f"nesting deeper than {max_depth} levels")
        if max_values is not None:
            tokens += 1
            if values > max_values or tokens > stop:
                raise ValueError(f"more than {max_values} values in one document")
    return values, deepest


def json_values(data: bytes) -> int:
    """The number of values of the JSON text `data`: scalars, arrays and objects, the root included,
    what the C parser makes nodes of (see _scan)."""
    return _scan(bytes(data), None, None)[0]


def json_depth(data: bytes) -> int:
    """The deepest nesting of containers in the JSON text `data` (0 for a scalar)."""
    return _scan(bytes(data), None, None)[1]


def check_json(data: bytes, max_values: int = MAX_VALUES, max_depth: int | None = MAX_DEPTH) -> None:
    """ValueError unless the JSON text has at most max_values values and (max_depth None: unchecked)
    max_depth nested containers, the C parser's limits; run it before json.loads, which would
    otherwise build the whole thing. Commas and brackets counted at C speed bound both counts from
    above, so a document within the limits by those bounds (every real one) needs no walk."""
    if not isinstance(data, bytes):
        data = bytes(data)
    opens = data.count(b"[") + data.count(b"{")
    if 1 + data.count(b",") + opens > max_values:
        _scan(data, max_values, max_depth)
    elif max_depth is not None and opens > max_depth:
        _scan(data, None, max_depth)


def check_depth(obj: object, max_depth: int = MAX_DEPTH) -> None:
    """ValueError if the parsed JSON value nests containers deeper than max_depth (an iterative walk)."""
    stack = [(obj, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth + 1 > max_depth:
                raise ValueError(f"nesting deeper than {max_depth} levels")
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))


def loads(text: str | bytes, what: str, *, max_values: int = MAX_VALUES, max_depth: int = MAX_DEPTH,
          **kw) -> object:
    """json.loads within the C parser's limits; FormatError "<what>: not valid JSON (...)" otherwise."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    try:
        check_json(data, max_values, None)
        obj = json.loads(data.decode("utf-8"), **kw)
        check_depth(obj, max_depth)
        return obj
    except json.JSONDecodeError as e:
        raise FormatError(f"{what}: not valid JSON ({e.msg}, line {e.lineno} column {e.colno})") from None
    except UnicodeDecodeError as e:
        raise FormatError(f"{what}: not valid JSON (invalid UTF-8 at byte {e.start})") from None
    except RecursionError:
        raise FormatError(f"{what}: not valid JSON (nesting deeper than {max_depth} levels)") from None
    except ValueError as e:
        raise FormatError(f"{what}: not valid JSON ({e})") from None


# ------------------------------------------------------------------------------------------ ZIP
def shown(name: str, limit: int = 80) -> str:
    """`name` as an error message may show it: as it is when printable and at most `limit` characters,
    else escaped like a Python literal (control characters, line breaks) and cut to `limit`. Names in a
    hostile file are anything; a message stays one printable line."""
    if name.isprintable() and len(name) <= limit:
        return name
    r = repr(name)[1:-1]
    return r if len(r) <= limit else r[:limit - 3] + "..."


def read_zip_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, n: int) -> bytes:
    """The first n bytes of a member (stored or deflated), inflated a chunk at a time, so no more than
    n + one chunk is ever allocated whatever the member claims or holds. zipfile inflates a member's
    whole compressed stream in one call when read() is given no size, and bzip2 / lzma members in
    unbounded steps: those are refused (torch.save and numpy write stored or deflated members)."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise FormatError(f"member {shown(info.filename)} uses ZIP compression method {info.compress_type}; "
                          "vox reads stored and deflated members only")
    out = bytearray()
    try:
        with z.open(info) as f:
            while len(out) < n:
                b = f.read(min(_CHUNK, n - len(out)))
                if not b:
                    break
                out += b
    except zlib.error as e:  # a damaged deflate stream: zipfile lets zlib's own error through
        raise FormatError(f"member {shown(info.filename)}: damaged compressed data ({e})") from None
    except EOFError:
        raise FormatError(f"member {shown(info.filename)}: the compressed data ends early") from None
    return bytes(out)
