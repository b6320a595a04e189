"""A numpy reader (and writer) for the safetensors format.

safetensors: 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape,
data_offsets: [begin, end]}, "__metadata__": {str: str}}, then the raw little-endian tensor bytes
(offsets relative to the end of the header). bf16 has no numpy dtype: it is widened to float32 by
placing its 16 bits in the high half of a float32.
"""

from __future__ import annotations

import json
import mmap
import struct
from pathlib import Path
from typing import Iterator, Mapping

import numpy as np

_NP = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32,
       "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}
_ITEMSIZE = {"BF16": 2, **{k: np.dtype(v).itemsize for k, v in _NP.items()}}
MAX_HEADER = 100 * 1024 * 1024


class SafetensorsError(ValueError):
    pass


def bf16_to_f32(raw: np.ndarray) -> np.ndarray:
    """uint16 bit patterns of bfloat16 -> float32 (exact)."""
    return (raw.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> uint16 bfloat16 bit patterns, rounding to nearest even (NaN stays NaN)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(x)
    return np.where(nan, (u >> 16) | 0x40, rounded).astype(np.uint16)


def parse_header(buf, path: str = "<buffer>") -> tuple[dict, dict, int]:
    """Validate and return (tensor entries, metadata, data offset) of a safetensors buffer."""
    size = len(buf)
    if size < 8:
        raise SafetensorsError(f"{path}: truncated safetensors file ({size} bytes, no header)")
    (n,) = struct.unpack_from("<Q", buf, 0)
    if n > MAX_HEADER or 8 + n > size:
        raise SafetensorsError(f"{path}: safetensors header length {n} exceeds the file size {size}")
    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SafetensorsError(f"{path}: corrupt safetensors header ({e})") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path}: safetensors header is not a JSON object")
    meta = header.pop("__metadata__", {}) or {}
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise SafetensorsError(f"{path}: __metadata__ must map strings to strings")
    data_start = 8 + n
    for name, e in header.items():
        if not isinstance(e, dict) or not {"dtype", "shape", "data_offsets"} <= set(e):
            raise SafetensorsError(f"{path}: tensor {name!r} has a malformed entry")
        dt, shape, off = e["dtype"], e["shape"], e["data_offsets"]
        if dt not in _ITEMSIZE:
            raise SafetensorsError(f"{path}: tensor {name!r} has unsupported dtype {dt!r}")
        if (not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
            raise SafetensorsError(f"{path}: tensor {name!r} has an invalid shape {shape!r}")
        if (not isinstance(off, list) or len(off) != 2 or not all(isinstance(o, int) and not isinstance(o, bool) for o in off)
                or not 0 <= off[0] <= off[1] or data_start + off[1] > size):
            raise SafetensorsError(f"{path}: tensor {name!r} data {off!r} lies outside the file ({size} bytes)")
        want = int(np.prod(shape, dtype=np.int64)) * _ITEMSIZE[dt]
        if off[1] - off[0] != want:
            raise SafetensorsError(f"{path}: tensor {name!r} holds {off[1] - off[0]} bytes, its shape needs {want}")
    return header, meta, data_start


class SafetensorsFile(Mapping[str, np.ndarray]):
    """Read-only, memory-mapped safetensors file; tensors are decoded on access (bf16 -> float32)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        with open(self.path, "rb") as f:
            try:
                self._buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # empty file
                self._buf = b""
        self.entries, self.metadata, self._start = parse_header(self._buf, self.path)

    def __getitem__(self, name: str) -> np.ndarray:
        e = self.entries[name]
        a, b = e["data_offsets"]
        raw = np.frombuffer(self._buf, dtype=np.uint8, count=b - a, offset=self._start + a)
        if e["dtype"] == "BF16":
            return bf16_to_f32(raw.view("<u2")).reshape(e["shape"])
        return raw.view(np.dtype(_NP[e["dtype"]]).newbyteorder("<")).reshape(e["shape"])

    def dtype(self, name: str) -> str:
        return self.entries[name]["dtype"]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


def load(path: str | Path) -> SafetensorsFile:
    return SafetensorsFile(path)


def save(path: str | Path, tensors: Mapping[str, np.ndarray], metadata: Mapping[str, str] | None = None) -> None:
    """Write tensors (numpy arrays; float32/float16/int*/uint8/bool) in safetensors layout."""
    rev = {np.dtype(v): k for k, v in _NP.items()}
    header: dict = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    blobs, off = [], 0
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr)
        dt = rev.get(arr.dtype.newbyteorder("=")) if arr.dtype.byteorder in "=<|" else None
        if dt is None:
            raise SafetensorsError(f"cannot store {name!r} of dtype {arr.dtype}")
        data = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # keep the data 8-byte aligned, as the reference implementation does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
