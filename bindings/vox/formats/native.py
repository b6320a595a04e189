"""A .tmod opened by the C core (vox_model_open): the same validation the engine relies on.

`vox inspect` and the conformance fuzz tests go through here so that they exercise the native reader;
the Python reader (tmod.py) stays the writer's and the verifier's tool.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError, raise_for_status

DTYPE_NAMES = ("f32", "f16", "bf16", "q8", "q4", "i32", "i64", "u8")  # index = vox_dtype


@dataclass(frozen=True)
class NativeTensor:
    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    crc32: int
    address: int  # of the data inside the mapping (4096-aligned)


def _lib():
    from .._native import ffi, lib, string

    return ffi, lib, string


class NativeModel:
    """An open vox_model. Closed by close(), by the context manager, or when garbage-collected."""

    def __init__(self, path: str | os.PathLike):
        ffi, lib, string = _lib()
        self.path = os.fspath(path)
        out = ffi.new("vox_model **")
        status = lib.vox_model_open(os.fsencode(self.path), out)
        if status != lib.VOX_OK:
            raise_for_status(status, string(lib.vox_last_error()))
        self._ptr = ffi.gc(out[0], lib.vox_model_close)
        self._manifest: dict | None = None

    def _handle(self):
        if self._ptr is None:
            raise ValueError(f"{self.path}: model is closed")
        return self._ptr

    @property
    def manifest_text(self) -> str:
        ffi, lib, _ = _lib()
        return ffi.string(lib.vox_model_manifest(self._handle())).decode("utf-8")

    @property
    def manifest(self) -> dict:
        """The manifest, parsed (the C reader has already validated it)."""
        if self._manifest is None:
            self._manifest = json.loads(self.manifest_text)
        return self._manifest

    def __len__(self) -> int:
        _, lib, _ = _lib()
        return int(lib.vox_model_tensor_count(self._handle()))

    def _info(self, info) -> NativeTensor:
        ffi, _, _ = _lib()
        return NativeTensor(
            name=ffi.string(info.name).decode("utf-8"),
            dtype=DTYPE_NAMES[info.dtype],
            shape=tuple(int(info.shape[i]) for i in range(info.ndim)),
            nbytes=int(info.nbytes),
            crc32=int(info.crc32),
            address=int(ffi.cast("uintptr_t", info.data)),
        )

    def tensors(self) -> list[NativeTensor]:
        """Every tensor, in manifest order."""
        ffi, lib, string = _lib()
        info = ffi.new("vox_tensor_info *")
        out = []
        h = self._handle()
        for i in range(len(self)):
            status = lib.vox_model_tensor(h, i, info)
            if status != lib.VOX_OK:
                raise_for_status(status, string(lib.vox_last_error()))
            out.append(self._info(info))
        return out

    def find(self, name: str) -> NativeTensor:
        ffi, lib, string = _lib()
        info = ffi.new("vox_tensor_info *")
        status = lib.vox_model_find_tensor(self._handle(), name.encode("utf-8"), info)
        if status != lib.VOX_OK:
            raise_for_status(status, string(lib.vox_last_error()))
        return self._info(info)

    def read(self, name: str) -> bytes:
        """A copy of the stored bytes of `name` (a copy, so it stays valid after close)."""
        ffi, _, _ = _lib()
        t = self.find(name)
        return bytes(ffi.buffer(ffi.cast("const char *", t.address), t.nbytes)) if t.nbytes else b""

    def array(self, name: str) -> np.ndarray:
        """A copy of `name` in its stored element type (bf16 as uint16 bits; q8/q4 as raw uint8)."""
        t = self.find(name)
        store = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "i32": "<i4", "i64": "<i8", "u8": "u1"}
        raw = np.frombuffer(self.read(name), dtype=np.uint8)
        if t.dtype in store:
            return raw.view(store[t.dtype]).reshape(t.shape)
        return raw

    def verify(self) -> None:
        """vox_model_verify: recompute every CRC; FormatError names the first corrupt tensor."""
        _, lib, string = _lib()
        status = lib.vox_model_verify(self._handle())
        if status != lib.VOX_OK:
            raise_for_status(status, string(lib.vox_last_error()))

    def close(self) -> None:
        if self._ptr is not None:
            ffi, _, _ = _lib()
            ffi.release(self._ptr)  # runs vox_model_close now instead of at garbage collection
            self._ptr = None

    def __enter__(self) -> "NativeModel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_native(path: str | os.PathLike) -> NativeModel:
    """Open a .tmod with the C reader; FormatError (etc.) carries vox_last_error()."""
    return NativeModel(path)


__all__ = ["NativeModel", "NativeTensor", "open_native", "FormatError"]
