"""What every converter shares: source hashing, the model_id, reading safetensors without copies."""

from __future__ import annotations

import hashlib
import math
import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import FormatError

Progress = Callable[[int, str], None]  # (bytes just processed, what is being done)

# safetensors dtype -> (numpy dtype of the stored bytes, kind): "float" data follows the dtype table,
# integer data is stored as the .tmod integer type that holds it exactly.
SAFETENSORS_DTYPES: dict[str, tuple[np.dtype, str]] = {
    "F64": (np.dtype("<f8"), "float"), "F32": (np.dtype("<f4"), "float"), "F16": (np.dtype("<f2"), "float"),
    "BF16": (np.dtype("<u2"), "bf16"), "I64": (np.dtype("<i8"), "i64"), "I32": (np.dtype("<i4"), "i32"),
    "I16": (np.dtype("<i2"), "i32"), "I8": (np.dtype("i1"), "i32"), "U8": (np.dtype("u1"), "u8"),
    "BOOL": (np.dtype("u1"), "u8"),
}


@dataclass
class ConvertResult:
    path: str
    tensors: int
    bytes: int
    seconds: float
    model_id: str
    precision: dict = field(default_factory=dict)


def sha256_file(path: Path, progress: Progress | None = None) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            h.update(chunk)
            if progress:
                progress(len(chunk), f"hashing {path.name}")
    return h.hexdigest()


def model_id(files: dict[str, str]) -> str:
    """sha256 over the sorted "name:sha256\\n" lines of the source files (docs/formats.md)."""
    return hashlib.sha256("".join(f"{n}:{h}\n" for n, h in sorted(files.items())).encode()).hexdigest()


class SafetensorsSource:
    """A mapped safetensors file whose tensors come out as views of their stored bytes (no widening),
    so a converter can stream a tensor in chunks instead of materializing it as float32."""

    def __init__(self, path: Path):
        from vox.reference.common.safetensors import SafetensorsError, parse_header

        self.path = path
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise FormatError(f"{path}: empty file, not a safetensors file")
            self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self.entries, self.metadata, self._start = parse_header(self._mm, str(path))
        except SafetensorsError as err:
            self._mm.close()
            raise FormatError(str(err)) from None
        except (RecursionError, OverflowError, TypeError, ValueError) as err:
            self._mm.close()
            raise FormatError(f"{path}: corrupt safetensors header ({type(err).__name__})") from None
        for name, e in self.entries.items():
            if e["dtype"] not in SAFETENSORS_DTYPES:
                raise FormatError(f"{path}: tensor {name!r} has dtype {e['dtype']}, which vox cannot convert")
            a, b = e["data_offsets"]
            if math.prod(e["shape"]) * SAFETENSORS_DTYPES[e["dtype"]][0].itemsize != b - a:
                raise FormatError(f"{path}: tensor {name!r}: shape {e['shape']} does not match its {b - a} bytes")

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.entries[name]["shape"])

    def kind(self, name: str) -> str:
        return SAFETENSORS_DTYPES[self.entries[name]["dtype"]][1]

    def nbytes(self, name: str) -> int:
        a, b = self.entries[name]["data_offsets"]
        return b - a

    def view(self, name: str) -> np.ndarray:
        e = self.entries[name]
        a, b = e["data_offsets"]
        dt = SAFETENSORS_DTYPES[e["dtype"]][0]
        raw = np.frombuffer(self._mm, dtype=np.uint8, count=b - a, offset=self._start + a)
        return raw.view(dt).reshape(e["shape"])

    def close(self) -> None:
        try:
            self._mm.close()
        except BufferError:
            pass
