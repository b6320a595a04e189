""".tmod model files (docs/formats.md): a streaming writer and a validating, memory-mapping reader.

Writing: `TmodWriter` is given the manifest and the list of tensors (name, dtype, shape) up front, so
every offset is known before the first byte of data; tensors are then written one at a time, in any
order, each as a stream of chunks (`encode_chunks` turns a float array into its stored form chunk by
chunk), so converting a 4 GB checkpoint never holds more than one chunk of it in memory. The file is
written under a temporary name in the target directory and renamed into place only when complete.

Reading: `TmodFile` maps the file read-only and checks, in the order of docs/formats.md and of the C
reader (core/src/tmod.c), everything short of the per-tensor checksums (`verify_checksums`, which
reads the whole file). Tensors come out as numpy views of the mapping. `read_checkpoint` wraps a file
as a `vox.reference.common.checkpoint.Checkpoint` whose tensors are dequantized to float32 on access,
so the reference runs on converted weights.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, cast

import numpy as np

from ..errors import FormatError, NotFound
from . import bounded, quant
from .bounded import open_regular  # noqa: F401  (re-exported: other readers import it from here)

MAGIC = b"VOXM"
VERSION = 1
HEADER = struct.Struct("<4sIQQQQQII8s")  # magic, version, manifest off/len, data off/len, file len, crcs, reserved
HEADER_SIZE = 64
ALIGN = 4096
MAX_MANIFEST = 64 << 20  # same limit as the C reader (VOX_TMOD_MAX_MANIFEST)
MAX_DEPTH = bounded.MAX_DEPTH  # JSON nesting limit, as in core/src/json.h
# Values (JSON nodes) a manifest may hold, as VOX_TMOD_MAX_MANIFEST_VALUES: a real one has ~5000 (one
# per key and element; ~10 per tensor), the limit keeps a hostile 64 MiB manifest from costing gigabytes.
MAX_MANIFEST_VALUES = 1 << 18
MAX_INT53 = 2**53        # manifest integers must be exact in a double
MAX_ELEMENTS = 2**60

DTYPES = ("f32", "f16", "bf16", "q8", "q4", "i32", "i64", "u8")
FLOAT_DTYPES = ("f32", "f16", "bf16", "q8", "q4")
INT_DTYPES: dict[str, np.dtype] = {"i32": np.dtype("<i4"), "i64": np.dtype("<i8"), "u8": np.dtype("u1")}
_STORAGE: dict[str, np.dtype] = {"f32": np.dtype("<f4"), "f16": np.dtype("<f2"), "bf16": np.dtype("<u2"), **INT_DTYPES}

_HEX64 = re.compile(r"[0-9a-f]{64}")


def align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def nbytes_for(dtype: str, shape: Iterable[int]) -> int:
    """Bytes a tensor of `dtype` and `shape` occupies (docs/formats.md, dtype table)."""
    shape = tuple(shape)
    n = math.prod(shape)
    k = shape[-1] if shape else 1
    if dtype in ("q8", "q4") and k % quant.BLOCK:
        raise ValueError(f"{dtype} needs the last axis to be a multiple of {quant.BLOCK}, it is {k}")
    return {"f32": 4 * n, "f16": 2 * n, "bf16": 2 * n, "q8": n + n // 8, "q4": n // 2 + n // 8,
            "i32": 4 * n, "i64": 8 * n, "u8": n}[dtype]


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of a .tmod: where its bytes are (offset from the data section) and what they hold."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    offset: int
    nbytes: int
    crc32: int

    def to_json(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape), "offset": self.offset,
                "nbytes": self.nbytes, "crc32": self.crc32}


# ------------------------------------------------------------------------------------ strict JSON
class _Reject(ValueError):
    pass


def _pairs(items: list) -> dict:
    out: dict = {}
    for k, v in items:
        if k in out:
            raise _Reject(f"duplicate key {k!r} in object")
        out[k] = v
    return out


def _constant(name: str):
    raise _Reject(f"invalid literal {name}")


def _float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise _Reject("number out of range")
    return v


def _int(text: str) -> int:
    v = int(text)
    try:
        float(v)  # the C reader holds non-exact integers as doubles: beyond the double range is an error
    except OverflowError:
        raise _Reject("number out of range") from None
    return v


def loads_strict(data: bytes, max_values: int = MAX_MANIFEST_VALUES, what: str = "the manifest") -> object:
    """Parse JSON exactly as strictly as core/src/json.c: UTF-8, no duplicate keys, no NaN/Infinity,
    no lone surrogates, numbers within the double range, nesting at most MAX_DEPTH, at most
    max_values values (the manifest's limit, or another reader's: a .tvoice header has the parser's
    default). Every JSON text that a C reader parses goes through this in the Python readers, so both
    accept and refuse the same documents (a plain json.loads keeps the last of duplicate keys).

    Raises ValueError describing the problem (with its byte offset in `what` where json reports one).
    """
    # Before json.loads builds it: at most max_values values, as the C reader (which fails at the value
    # past the limit, so a document that is also malformed earlier gets that message there instead);
    # the depth is checked below, after the parse.
    bounded.check_json(data, max_values, None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"invalid UTF-8 at byte {e.start} of {what}") from None
    try:
        obj = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float,
                         parse_int=_int)
    except json.JSONDecodeError as e:
        at = len(text[:e.pos].encode("utf-8", "surrogatepass"))
        raise ValueError(f"{e.msg} at byte {at} of {what}") from None
    except _Reject as e:
        raise ValueError(str(e)) from None
    except ValueError as e:  # e.g. int() beyond sys.get_int_max_str_digits()
        raise ValueError(f"invalid number ({e})") from None
    except RecursionError:
        raise ValueError(f"nesting deeper than {MAX_DEPTH} levels") from None
    # Python's json keeps lone surrogate escapes (\ud800) and has no depth limit of its own.
    stack: list[tuple[object, int]] = [(obj, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth + 1 > MAX_DEPTH:
                raise ValueError(f"nesting deeper than {MAX_DEPTH} levels")
            items = v.items() if isinstance(v, dict) else ((None, x) for x in v)
            for k, x in items:
                if k is not None:
                    _check_str(k)
                stack.append((x, depth + 1))
        elif isinstance(v, str):
            _check_str(v)
    return obj


def _check_str(s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("lone surrogate in \\u escape") from None


# ------------------------------------------------------------------------------------ validation
def _type_word(v: object) -> str:
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return "a number"
    return "a literal"


def uint(v: object, limit: int = MAX_INT53) -> bool:
    return type(v) is int and 0 <= v <= limit


_KIND_WORD = {dict: "an object", list: "an array", str: "a string", int: "a number"}


def member(path: str, obj: dict, key: str, kind: type, where: str = ""):
    """obj[key], which must exist and be of JSON type `kind` (int: any number)."""
    if key not in obj:
        raise FormatError(f'{path}: manifest: {where}missing key "{key}"')
    v = obj[key]
    if kind is int:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    else:
        ok = isinstance(v, kind)
    if not ok:
        raise FormatError(f'{path}: manifest: {where}"{key}" must be {_KIND_WORD[kind]}, not {_type_word(v)}')
    return v


def _check_entry(path: str, i: int, e: object, data_len: int) -> TensorEntry:
    if not isinstance(e, dict):
        raise FormatError(f"{path}: manifest: tensor #{i} is {_type_word(e)}, not an object")
    name = e.get("name")
    if not isinstance(name, str) or not name or "\0" in name:
        raise FormatError(f'{path}: manifest: tensor #{i}: "name" must be a non-empty string without NUL')
    dtype = e.get("dtype")
    if dtype not in DTYPES or not isinstance(dtype, str):
        shown = repr(dtype) if isinstance(dtype, str) else "(missing)"
        raise FormatError(f"{path}: manifest: tensor {name!r}: unknown dtype {shown} ({' '.join(DTYPES)})")
    shape = e.get("shape")
    if not (isinstance(shape, list) and 1 <= len(shape) <= 4 and all(uint(d) for d in shape)):
        raise FormatError(f'{path}: manifest: tensor {name!r}: "shape" must be 1 to 4 integers in [0, 2^53]')
    n = math.prod(shape)
    if n > MAX_ELEMENTS:
        raise FormatError(f"{path}: manifest: tensor {name!r}: shape too large")
    for key, limit, what in (("offset", MAX_INT53, "[0, 2^53]"), ("nbytes", MAX_INT53, "[0, 2^53]"),
                             ("crc32", 0xFFFFFFFF, "[0, 2^32)")):
        if not uint(e.get(key), limit):
            raise FormatError(f'{path}: manifest: tensor {name!r}: "{key}" must be an integer in {what}')
    offset, nbytes = e["offset"], e["nbytes"]
    if offset % ALIGN:
        raise FormatError(f"{path}: manifest: tensor {name!r}: offset {offset} is not a multiple of 4096")
    try:
        need = nbytes_for(dtype, shape)
    except ValueError as err:
        raise FormatError(f"{path}: manifest: tensor {name!r}: {err}") from None
    if nbytes != need:
        raise FormatError(f"{path}: manifest: tensor {name!r}: nbytes {nbytes}, but its dtype and shape need {need}")
    if offset > data_len or nbytes > data_len - offset:
        raise FormatError(f"{path}: manifest: tensor {name!r}: bytes [{offset}, {offset + nbytes}) lie outside "
                          f"the data section ({data_len} bytes)")
    return TensorEntry(name, dtype, tuple(shape), offset, nbytes, e["crc32"])


def check_manifest(manifest: object, path: str, version: int = VERSION, data_len: int = 2**64) -> list[TensorEntry]:
    """Validate a parsed manifest (keys, types, every tensor entry, the family's keys); return the entries.

    The checks and their order are those of the C reader, so both name the same first problem.
    """
    if not isinstance(manifest, dict):
        raise FormatError(f"{path}: manifest: {_type_word(manifest)}, not an object")
    m = manifest
    if member(path, m, "format", str) != "vox.tmod":
        raise FormatError(f'{path}: manifest: "format" is {m["format"]!r}, expected "vox.tmod"')
    fv = member(path, m, "format_version", int)
    if type(fv) is not int or fv != version:
        raise FormatError(f"{path}: manifest: format_version {fv} does not match the header's version {version}")
    from .. import families

    family = member(path, m, "family", str)
    if family not in families.names():
        raise FormatError(f"{path}: manifest: unknown model family {family!r} (this vox knows: "
                          f"{', '.join(families.names())})")
    member(path, m, "variant", str)
    if not _HEX64.fullmatch(member(path, m, "model_id", str)):
        raise FormatError(f'{path}: manifest: "model_id" must be 64 lowercase hex digits')
    prec = member(path, m, "precision", dict)
    member(path, prec, "dtype", str, "precision: ")
    member(path, prec, "quant", str, "precision: ")
    member(path, m, "config", dict)
    tensors = member(path, m, "tensors", list)
    entries = [_check_entry(path, i, e, data_len) for i, e in enumerate(tensors)]
    by_name: dict[str, TensorEntry] = {}
    for e in sorted(entries, key=lambda e: e.name.encode("utf-8")):
        if e.name in by_name:
            raise FormatError(f"{path}: manifest: duplicate tensor name {e.name!r}")
        by_name[e.name] = e
    reach = None  # the tensor that ends furthest so far; empty tensors occupy nothing
    for e in sorted((e for e in entries if e.nbytes), key=lambda e: e.offset):
        if reach is not None and reach.offset + reach.nbytes > e.offset:
            raise FormatError(f"{path}: manifest: tensors {reach.name!r} and {e.name!r} overlap")
        if reach is None or e.offset + e.nbytes > reach.offset + reach.nbytes:
            reach = e
    # the family's own keys
    families.get(family).check_manifest(path, m, by_name)
    return entries


@dataclass(frozen=True)
class Header:
    version: int
    manifest_len: int
    data_off: int
    data_len: int
    file_len: int
    manifest_crc: int


def check_header(buf, size: int, path: str) -> Header:
    """Validate the 64-byte header of a file of `size` bytes whose first bytes are `buf` (docs/formats.md)."""
    if size < HEADER_SIZE:
        raise FormatError(f"{path}: truncated: {size} bytes, shorter than the 64-byte .tmod header")
    magic, version, moff, mlen, doff, dlen, flen, mcrc, hcrc, reserved = HEADER.unpack_from(buf, 0)
    if magic != MAGIC:
        raise FormatError(f"{path}: not a .tmod file (magic {magic!r}, expected b'VOXM')")
    # The version comes before the header CRC: a future version may lay the header out differently.
    if version > VERSION:
        raise FormatError(f"{path}: format version {version} was written by a newer vox; this one reads version {VERSION}")
    if version < VERSION:
        raise FormatError(f"{path}: format version {version} is no longer supported; this vox reads version {VERSION}")
    got = zlib.crc32(bytes(buf[:52]))
    if got != hcrc:
        raise FormatError(f"{path}: corrupt header: CRC-32 {got:08x}, the header says {hcrc:08x}")
    if any(reserved):
        raise FormatError(f"{path}: corrupt header: reserved bytes 56..63 are not zero")
    if moff != HEADER_SIZE:
        raise FormatError(f"{path}: corrupt header: manifest offset {moff}, expected 64")
    if not 0 < mlen <= MAX_MANIFEST:
        raise FormatError(f"{path}: corrupt header: manifest length {mlen} (must be 1 to {MAX_MANIFEST} bytes)")
    want = align(HEADER_SIZE + mlen)
    if doff != want:
        raise FormatError(f"{path}: corrupt header: data offset {doff}, expected {want} (the first multiple of 4096 "
                          "after the manifest)")
    if dlen % ALIGN:
        raise FormatError(f"{path}: corrupt header: data length {dlen} is not a multiple of 4096")
    if flen != doff + dlen:
        raise FormatError(f"{path}: corrupt header: file length {flen} is not data offset {doff} + data length {dlen}")
    if flen > size:
        raise FormatError(f"{path}: truncated: the header says {flen} bytes, the file has {size}")
    if flen < size:
        raise FormatError(f"{path}: {size - flen} trailing bytes: the header says {flen} bytes, the file has {size}")
    return Header(version, mlen, doff, dlen, flen, mcrc)


# ---------------------------------------------------------------------------------------- reader
class TmodFile:
    """A validated, memory-mapped .tmod. Use as a context manager, or call close().

    Arrays returned by raw/planes/array are views of the mapping (read-only); the mapping stays
    alive while any of them does, even after close().
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        with open_regular(self.path) as f:
            size = os.fstat(f.fileno()).st_size
            if size < HEADER_SIZE:
                check_header(f.read(HEADER_SIZE), size, self.path)  # raises "truncated"
            self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self._open()
        except BaseException:
            self._mm.close()
            raise

    def _open(self) -> None:
        mm, path = self._mm, self.path
        h = check_header(mm, len(mm), path)
        raw = mm[HEADER_SIZE:HEADER_SIZE + h.manifest_len]
        got = zlib.crc32(raw)
        if got != h.manifest_crc:
            raise FormatError(f"{path}: corrupt manifest: CRC-32 {got:08x}, the header says {h.manifest_crc:08x}")
        if any(mm[HEADER_SIZE + h.manifest_len:h.data_off]):
            raise FormatError(f"{path}: corrupt file: nonzero bytes between the manifest and the data")
        try:
            manifest = loads_strict(raw)
        except ValueError as e:
            raise FormatError(f"{path}: corrupt manifest: {e}") from None
        entries = check_manifest(manifest, path, h.version, h.data_len)
        self.header = h
        self.version = h.version
        self.data_offset = h.data_off
        self.size = h.file_len
        self.manifest: dict = cast(dict, manifest)  # check_manifest refused anything but an object
        self.tensors: dict[str, TensorEntry] = {e.name: e for e in entries}

    # -- access
    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def __len__(self) -> int:
        return len(self.tensors)

    def entry(self, name: str) -> TensorEntry:
        try:
            return self.tensors[name]
        except KeyError:
            raise NotFound(f"{self.path}: no tensor named {name!r}") from None

    def blob(self, name: str) -> np.ndarray:
        """The stored bytes of tensor `name` (uint8 view)."""
        e = self.entry(name)
        return np.frombuffer(self._mm, dtype=np.uint8, count=e.nbytes, offset=self.data_offset + e.offset)

    def raw(self, name: str) -> np.ndarray:
        """The stored elements: f32/f16 as floats, bf16 as uint16 bit patterns, ints as ints (not q8/q4)."""
        e = self.entry(name)
        if e.dtype in ("q8", "q4"):
            raise ValueError(f"{self.path}: tensor {name!r} is {e.dtype}; use planes()")
        return self.blob(name).view(_STORAGE[e.dtype]).reshape(e.shape)

    def planes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """q8: (int8 values [..., K], f32 scales [..., K/32]); q4: (uint8 packed [..., K/2], scales)."""
        e = self.entry(name)
        if e.dtype not in ("q8", "q4"):
            raise ValueError(f"{self.path}: tensor {name!r} is {e.dtype}, not block-quantized")
        n, b = math.prod(e.shape), self.blob(name)
        k = e.shape[-1]
        nv = n if e.dtype == "q8" else n // 2
        vals = b[:nv].view(np.int8 if e.dtype == "q8" else np.uint8)
        vals = vals.reshape(e.shape if e.dtype == "q8" else e.shape[:-1] + (k // 2,))
        scales = b[nv:].view("<f4").reshape(e.shape[:-1] + (k // quant.BLOCK,))
        return vals, scales

    def array(self, name: str) -> np.ndarray:
        """The tensor as the engine sees it: float dtypes as float32 (dequantized), ints as stored."""
        e = self.entry(name)
        if e.dtype == "f32":
            return self.raw(name)
        if e.dtype == "f16":
            return self.raw(name).astype(np.float32)
        if e.dtype == "bf16":
            from vox.reference.common.safetensors import bf16_to_f32

            return bf16_to_f32(self.raw(name))
        if e.dtype == "q8":
            return quant.dequantize_q8(*self.planes(name))
        if e.dtype == "q4":
            return quant.dequantize_q4(*self.planes(name))
        return self.raw(name)

    def verify_checksums(self, progress: Callable[[int], None] | None = None) -> None:
        """Recompute every tensor's CRC-32; FormatError naming the corrupt tensors if any differs."""
        bad = []
        for e in self.tensors.values():
            crc = 0
            b = self.blob(e.name)
            for i in range(0, e.nbytes, 1 << 24):  # chunks keep the progress callback lively
                crc = zlib.crc32(b[i:i + (1 << 24)].data, crc)
                if progress:
                    progress(min(1 << 24, e.nbytes - i))
            if crc != e.crc32:
                bad.append((e.name, crc, e.crc32))
        if bad:
            name, got, want = bad[0]
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            raise FormatError(f"{self.path}: tensor {name!r} is corrupt: CRC-32 {got:08x}, the manifest says "
                              f"{want:08x}{more}")

    def close(self) -> None:
        try:
            self._mm.close()
        except BufferError:
            pass  # numpy views still use the mapping; it is released when the last one goes

    def __enter__(self) -> "TmodFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_tmod(path: str | os.PathLike) -> TmodFile:
    return TmodFile(path)


# ---------------------------------------------------------------------------------------- writer
def encode_chunks(x: np.ndarray, dtype: str, *, bf16_bits: bool = False,
                  chunk_elements: int = 1 << 22) -> Iterator[memoryview]:
    """Yield the stored bytes of `x` as `dtype`, in file order, a chunk at a time.

    x: float array for float dtypes (or, with bf16_bits, uint16 bfloat16 bit patterns, widened a chunk
    at a time); integer array for integer dtypes. q8/q4 blocks run along the last axis, whose length
    is a multiple of 32, so flat chunks of a multiple of 32 elements are whole blocks: the values plane
    streams out chunk by chunk and the scales (1/8 of the values' size for q8) follow at the end.
    """
    from vox.reference.common.safetensors import bf16_to_f32, f32_to_bf16

    x = np.asarray(x)
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r} ({', '.join(DTYPES)})")
    flat = x.reshape(-1)
    if dtype in INT_DTYPES:
        if x.dtype.kind not in "iub":
            raise ValueError(f"{dtype} needs integer data, got {x.dtype}")
        info = np.iinfo(INT_DTYPES[dtype])
        if flat.size and (flat.min() < info.min or flat.max() > info.max):
            raise ValueError(f"values outside the {dtype} range")
        for i in range(0, flat.size, chunk_elements):
            yield np.ascontiguousarray(flat[i:i + chunk_elements], dtype=INT_DTYPES[dtype]).data.cast("B")
        return
    if x.dtype.kind != "f" and not (bf16_bits and x.dtype == np.uint16):
        raise ValueError(f"{dtype} needs float data, got {x.dtype}")
    if dtype in ("q8", "q4"):
        nbytes_for(dtype, x.shape)  # raises for a last axis that is not a multiple of 32
        chunk_elements = max(quant.BLOCK, chunk_elements // 4 // quant.BLOCK * quant.BLOCK)
    scales = []
    for i in range(0, flat.size, chunk_elements):
        c = flat[i:i + chunk_elements]
        c = bf16_to_f32(c) if bf16_bits else c.astype(np.float32, copy=False)
        if dtype == "f32":
            out = np.ascontiguousarray(c, dtype="<f4")
        elif dtype in ("f16", "bf16"):
            with np.errstate(over="ignore"):  # overflow is detected (and reported) just below
                out = c.astype("<f2") if dtype == "f16" else f32_to_bf16(c).astype("<u2")
            wide = out.astype(np.float32) if dtype == "f16" else bf16_to_f32(out)
            over = np.isinf(wide) & np.isfinite(c)
            if over.any():
                raise ValueError(f"value {c[over][0]:g} is outside the {dtype} range")
        else:
            if not np.isfinite(c).all():
                raise ValueError(f"cannot quantize non-finite values to {dtype}")
            q, s = quant.quantize_q8(c) if dtype == "q8" else quant.quantize_q4(c)
            out = np.ascontiguousarray(q)
            scales.append(np.ascontiguousarray(s, dtype="<f4"))
        yield out.data.cast("B")
    for s in scales:
        yield s.data.cast("B")


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str
    shape: tuple[int, ...]


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


class TmodWriter:
    """Writes a .tmod whose tensors are declared up front; then write() each tensor, then commit().

        with TmodWriter("m.tmod", manifest, [TensorSpec("w", "q8", (64, 32)), ...]) as w:
            w.write("w", weights)          # float array -> stored as q8
        # committed on a clean exit; on an exception the temporary file is removed

    `manifest` is every manifest key but "tensors" (which the writer fills in). It is validated
    before anything is written, the finished manifest again before the rename, so the writer never
    produces a file the readers reject.
    """

    def __init__(self, path: str | os.PathLike, manifest: Mapping, tensors: Iterable[TensorSpec | tuple], *,
                 overwrite: bool = True):
        self.path = os.fspath(path)
        self.overwrite = overwrite
        if "tensors" in manifest:
            raise ValueError("the manifest's tensor list is written by TmodWriter; leave out 'tensors'")
        self._manifest = dict(manifest)
        self._entries: dict[str, TensorEntry] = {}
        offset = 0
        for spec in tensors:
            spec = TensorSpec(*spec) if not isinstance(spec, TensorSpec) else spec
            shape = tuple(int(d) for d in spec.shape)
            if spec.name in self._entries:
                raise ValueError(f"tensor {spec.name!r} declared twice")
            if spec.dtype not in DTYPES:
                raise ValueError(f"tensor {spec.name!r}: unknown dtype {spec.dtype!r}")
            nb = nbytes_for(spec.dtype, shape)
            self._entries[spec.name] = TensorEntry(spec.name, spec.dtype, shape, offset, nb, 0)
            offset = align(offset + nb)
        self.data_len = offset
        # Every offset is known; only the CRCs are not. With each CRC at its widest (10 digits) the
        # manifest is as long as it can get: reserve that, and pad the final one with spaces to it.
        widest = _dumps({**self._manifest, "tensors": [dict(e.to_json(), crc32=0xFFFFFFFF)
                                                       for e in self._entries.values()]})
        self.manifest_len = len(widest)
        self.data_off = align(HEADER_SIZE + self.manifest_len)
        check_manifest(loads_strict(widest), self.path, VERSION, self.data_len)
        self._crc: dict[str, int] = {}
        self._open_sink: _BlobSink | None = None
        self._done = False
        target = Path(self.path)
        if not target.parent.is_dir():
            raise FileNotFoundError(f"{self.path}: directory {target.parent} does not exist")
        if target.is_dir():
            raise IsADirectoryError(f"{self.path} is a directory")
        if not overwrite and target.exists():
            raise FileExistsError(f"{self.path} exists (pass overwrite=True / --force to replace it)")
        # A unique temporary name in the target directory: the rename is then atomic (same filesystem),
        # and the 0o666 mode lets the umask give the final file the user's usual permissions.
        for attempt in range(100):
            tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"cannot create a temporary file next to {self.path}")
        self.tmp_path = str(tmp)
        self._f = os.fdopen(fd, "wb")

    @property
    def entries(self) -> list[TensorEntry]:
        return list(self._entries.values())

    def write(self, name: str, data, *, bf16_bits: bool = False) -> None:
        """Write tensor `name`: a float array (encoded to the declared dtype), an integer array for
        integer dtypes, or bytes already in the stored layout."""
        e = self._entry(name)
        if isinstance(data, (bytes, bytearray, memoryview)):
            chunks: Iterable = [memoryview(data).cast("B")]
        else:
            a = np.asarray(data)
            if a.shape != e.shape:
                raise ValueError(f"tensor {name!r}: shape {a.shape}, declared {e.shape}")
            chunks = encode_chunks(a, e.dtype, bf16_bits=bf16_bits)
        with self.open_tensor(name) as sink:
            for c in chunks:
                sink.write(c)

    def open_tensor(self, name: str) -> "_BlobSink":
        """A sink for the stored bytes of `name`, written sequentially in chunks."""
        e = self._entry(name)
        if name in self._crc:
            raise ValueError(f"tensor {name!r} written twice")
        if self._open_sink is not None:
            raise ValueError(f"tensor {self._open_sink.entry.name!r} is still being written")
        self._f.seek(self.data_off + e.offset)
        sink = self._open_sink = _BlobSink(self, e)
        return sink

    def _entry(self, name: str) -> TensorEntry:
        if self._done:
            raise ValueError(f"{self.path}: writer already closed")
        try:
            return self._entries[name]
        except KeyError:
            raise ValueError(f"tensor {name!r} was not declared") from None

    def _sink_closed(self, sink: "_BlobSink") -> None:
        self._open_sink = None
        if sink.written != sink.entry.nbytes:
            raise ValueError(f"tensor {sink.entry.name!r}: {sink.written} bytes written, it has {sink.entry.nbytes}")
        self._crc[sink.entry.name] = sink.crc

    def commit(self) -> None:
        """Write the manifest and header, flush to disk, rename into place."""
        if self._done:
            return
        try:
            missing = [n for n in self._entries if n not in self._crc]
            if missing:
                raise ValueError(f"{len(missing)} declared tensors were not written: {', '.join(missing[:5])}")
            entries = [dict(e.to_json(), crc32=self._crc[e.name]) for e in self._entries.values()]
            man = _dumps({**self._manifest, "tensors": entries})
            if len(man) > self.manifest_len:  # cannot happen: CRCs have at most 10 digits
                raise RuntimeError(f"{self.path}: manifest grew past its reserved {self.manifest_len} bytes")
            man += b" " * (self.manifest_len - len(man))
            check_manifest(loads_strict(man), self.path, VERSION, self.data_len)
            file_len = self.data_off + self.data_len
            f = self._f
            f.truncate(file_len)  # the last blob's padding (and holes) read as zeros
            f.seek(0)
            f.write(pack_header(len(man), self.data_off, self.data_len, zlib.crc32(man)))
            f.write(man)
            f.write(b"\0" * (self.data_off - HEADER_SIZE - len(man)))
            f.flush()
            os.fsync(f.fileno())
            f.close()
            if not self.overwrite and os.path.exists(self.path):
                raise FileExistsError(f"{self.path} appeared while it was being written; not replaced")
            os.replace(self.tmp_path, self.path)
            _fsync_dir(os.path.dirname(os.path.abspath(self.path)))
            self._done = True
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        """Discard the temporary file; the target path is left as it was."""
        self._done = True
        try:
            self._f.close()
        finally:
            try:
                os.unlink(self.tmp_path)
            except FileNotFoundError:
                pass

    def __enter__(self) -> "TmodWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class _BlobSink:
    def __init__(self, writer: TmodWriter, entry: TensorEntry):
        self.writer, self.entry = writer, entry
        self.written = 0
        self.crc = 0

    def write(self, chunk) -> None:
        mv = memoryview(chunk).cast("B")
        if self.written + len(mv) > self.entry.nbytes:
            raise ValueError(f"tensor {self.entry.name!r}: more than its {self.entry.nbytes} bytes written")
        self.writer._f.write(mv)
        self.crc = zlib.crc32(mv, self.crc)
        self.written += len(mv)

    def __enter__(self) -> "_BlobSink":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.writer._sink_closed(self)
        else:
            self.writer._open_sink = None


def _fsync_dir(d: str) -> None:
    # Makes the rename itself durable; not every platform or filesystem allows opening a directory.
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def pack_header(manifest_len: int, data_off: int, data_len: int, manifest_crc: int, *,
                version: int = VERSION, magic: bytes = MAGIC) -> bytes:
    """The 64-byte header for the given layout, with its CRC."""
    head = struct.pack("<4sIQQQQQI", magic, version, HEADER_SIZE, manifest_len, data_off, data_len,
                       data_off + data_len, manifest_crc)
    return head + struct.pack("<I", zlib.crc32(head)) + bytes(8)


def pack(manifest: bytes, data: bytes) -> bytes:
    """A whole .tmod image from manifest bytes and the data section (whose length must be a multiple
    of 4096): the layout and checksums are made consistent, the contents are not validated. For tests
    and tools that build files (also deliberately broken ones) by hand."""
    data_off = align(HEADER_SIZE + len(manifest))
    return (pack_header(len(manifest), data_off, len(data), zlib.crc32(manifest)) + manifest
            + bytes(data_off - HEADER_SIZE - len(manifest)) + data)


def write_tmod(path: str | os.PathLike, manifest: Mapping, tensors: Mapping[str, tuple[str, np.ndarray]], *,
               overwrite: bool = True) -> None:
    """Write a .tmod from in-memory arrays: tensors = {name: (dtype, array)} (float arrays are encoded
    to their dtype; u8/i32/i64 take integer arrays)."""
    specs = [TensorSpec(n, dt, tuple(np.shape(a))) for n, (dt, a) in tensors.items()]
    with TmodWriter(path, manifest, specs, overwrite=overwrite) as w:
        for n, (_, a) in tensors.items():
            w.write(n, a)
