"""Reading PyTorch checkpoints (torch.save's ZIP format) without torch.

A torch.save file is a ZIP whose `<archive>/data.pkl` is a pickle of the saved object; each tensor
is a `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` call whose storage is a
persistent id naming the member `<archive>/data/<key>` that holds its raw little-endian bytes.
The unpickler here is restricted: it builds only dicts, OrderedDicts, lists/tuples, numbers and
strings, and tensors (as numpy arrays), and refuses every other global, so a checkpoint cannot run
code. Legacy (pre-1.6, non-ZIP) files are refused with a clear message.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np

from ..errors import FormatError

_STORAGES = {
    "FloatStorage": np.dtype("<f4"), "DoubleStorage": np.dtype("<f8"), "HalfStorage": np.dtype("<f2"),
    "BFloat16Storage": np.dtype("<u2"), "LongStorage": np.dtype("<i8"), "IntStorage": np.dtype("<i4"),
    "ShortStorage": np.dtype("<i2"), "CharStorage": np.dtype("i1"), "ByteStorage": np.dtype("u1"),
    "BoolStorage": np.dtype("?"),
}


class _StorageType:
    def __init__(self, name: str):
        self.name = name
        self.dtype = _STORAGES[name]


class _Storage:
    def __init__(self, data: np.ndarray, bf16: bool):
        self.data, self.bf16 = data, bf16


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
    if not isinstance(storage, _Storage):
        raise FormatError("tensor without a storage")
    data = storage.data
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    n = len(data)
    if size and any(s == 0 for s in size):
        arr = np.zeros(size, data.dtype)
    else:
        last = offset + sum((s - 1) * st for s, st in zip(size, stride))
        if offset < 0 or last >= n or any(st < 0 for st in stride):
            raise FormatError(f"tensor of size {list(size)} and stride {list(stride)} at offset {offset} lies "
                              f"outside its storage of {n} elements")
        it = data.itemsize
        arr = np.lib.stride_tricks.as_strided(data[offset:], shape=size, strides=[s * it for s in stride])
        arr = np.array(arr)  # own, contiguous memory
    if storage.bf16:
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    return arr


def _rebuild_parameter(data, requires_grad=False, hooks=None, *rest):
    return data


class _Unpickler(pickle.Unpickler):
    def __init__(self, f, load_storage):
        super().__init__(f)
        self._load = load_storage

    def find_class(self, module, name):
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return _rebuild_tensor_v2
        if module == "torch._utils" and name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
            return _rebuild_parameter
        if module == "torch" and name in _STORAGES:
            return _StorageType(name)
        raise FormatError(f"the checkpoint's pickle refers to {module}.{name}, which a weights file has no "
                          "reason to use; refusing it")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            raise FormatError(f"unknown persistent id {pid!r:.60}")
        stype, key, _location, numel = pid[1], str(pid[2]), pid[3], int(pid[4])
        if not isinstance(stype, _StorageType):
            raise FormatError(f"unknown storage type {stype!r:.60}")
        return self._load(key, stype, numel)


def read_torch_file(path: str | os.PathLike) -> object:
    """The object torch.save wrote to `path`, with tensors as numpy arrays (bf16 widened to f32)."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as e:
        raise FormatError(f"{path}: cannot read ({e.strerror})") from None
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as f:
            head = f.read(2)
        if head[:1] == b"\x80":
            raise FormatError(f"{path}: a legacy (pre-ZIP) torch.save file; re-save it with torch >= 1.6")
        raise FormatError(f"{path}: not a PyTorch checkpoint (not a ZIP archive; {size} bytes, truncated?)")
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            pkls = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
            if len(pkls) != 1:
                raise FormatError(f"{path}: not a torch.save archive (no single data.pkl)")
            prefix = pkls[0][: -len("data.pkl")]
            bo = prefix + "byteorder"
            if bo in names and z.read(bo).strip() not in (b"little", b""):
                raise FormatError(f"{path}: big-endian checkpoint; vox reads little-endian ones")
            cache: dict[str, _Storage] = {}
            member_set = set(names)

            def load(key: str, stype: _StorageType, numel: int) -> _Storage:
                if key not in cache:
                    member = f"{prefix}data/{key}"
                    if member not in member_set:
                        raise FormatError(f"{path}: storage {member} is missing")
                    raw = z.read(member)
                    need = numel * stype.dtype.itemsize
                    if len(raw) < need:
                        raise FormatError(f"{path}: storage {member} has {len(raw)} bytes, needs {need}")
                    cache[key] = _Storage(np.frombuffer(raw, stype.dtype, numel),
                                          stype.name == "BFloat16Storage")
                return cache[key]

            return _Unpickler(io.BytesIO(z.read(pkls[0])), load).load()
    except FormatError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise FormatError(f"{path}: damaged checkpoint archive ({e})") from None
    except (pickle.UnpicklingError, ValueError, TypeError, AttributeError, IndexError, KeyError) as e:
        raise FormatError(f"{path}: corrupt checkpoint pickle ({type(e).__name__}: {e})") from None
