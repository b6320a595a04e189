"""Reading PyTorch checkpoints (torch.save's ZIP format) without torch.

A torch.save file is a ZIP whose `<archive>/data.pkl` is a pickle of the saved object; each tensor
is a `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` call whose storage is a
persistent id naming the member `<archive>/data/<key>` that holds its raw little-endian bytes.
The unpickler here is restricted: it builds only dicts, OrderedDicts, lists/tuples, numbers and
strings, and tensors (as numpy arrays), and refuses every other global, so a checkpoint cannot run
code. Legacy (pre-1.6, non-ZIP) files are refused with a clear message.

What a file may cost is bounded before anything is allocated (docs/reliability.md): every byte the
reader builds (storages inflated from the archive, tensors copied out of them) is counted against a
budget, by default 4 x the file's size + 1 MiB. torch.save stores its members uncompressed and each
tensor once, so a real checkpoint needs about 2 x its size; a small archive that inflates to gigabytes
(a deflate "zip bomb") or a tensor whose zero strides repeat one element a billion times is refused
with the size it would need. The pickle itself is limited to PICKLE_MAX_BYTES and PICKLE_MAX_OPS
opcodes (each opcode makes at most one object), so unpickling costs memory linear in a bounded input.
"""

from __future__ import annotations

import collections
import io
import math
import os
import pickle
import pickletools
import zipfile
from pathlib import Path

import numpy as np

from ..errors import FormatError
from .bounded import open_regular, read_zip_member, shown

_STORAGES: dict[str, np.dtype] = {
    "FloatStorage": np.dtype("<f4"), "DoubleStorage": np.dtype("<f8"), "HalfStorage": np.dtype("<f2"),
    "BFloat16Storage": np.dtype("<u2"), "LongStorage": np.dtype("<i8"), "IntStorage": np.dtype("<i4"),
    "ShortStorage": np.dtype("<i2"), "CharStorage": np.dtype("i1"), "ByteStorage": np.dtype("u1"),
    "BoolStorage": np.dtype("?"),
}


# kokoro-v1_0.pth's data.pkl is 103 KB of 25k opcodes; these limits leave a 100x and a 40x margin.
PICKLE_MAX_BYTES = 16 << 20
PICKLE_MAX_OPS = 1 << 20


def _r(obj, limit: int) -> str:
    """repr(obj) as one printable line of at most `limit` characters: the objects a hostile pickle
    builds are anything (an array's repr spans lines)."""
    return shown(repr(obj), limit)


class _Budget:
    """The bytes the reader may still allocate; take() refuses a request before it is allocated."""

    def __init__(self, limit: int, path):
        self.limit, self.left, self.path = limit, limit, path

    def take(self, n: int, what: str) -> None:
        if n > self.left:
            raise FormatError(f"{self.path}: {what} needs {n} bytes, more than this file may use "
                              f"({self.limit} bytes in all)")
        self.left -= n


class _StorageType:
    def __init__(self, name: str):
        self.name = name
        self.dtype = _STORAGES[name]


class _Storage:
    def __init__(self, data: np.ndarray, bf16: bool):
        self.data, self.bf16 = data, bf16


def _ints(v, what: str) -> tuple[int, ...]:
    if not isinstance(v, (tuple, list)) or len(v) > 64 or not all(type(x) is int for x in v):
        raise FormatError(f"tensor {what} must be a tuple of at most 64 integers")
    return tuple(v)


def _make_rebuild(budget: _Budget):
    """torch._utils._rebuild_tensor_v2 for one file: the tensor as an array, its bytes counted first."""

    def rebuild(storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
        if not isinstance(storage, _Storage):
            raise FormatError("tensor without a storage")
        size, stride = _ints(size, "size"), _ints(stride, "stride")
        if type(offset) is not int or len(size) != len(stride) or any(s < 0 for s in size) or any(
                st < 0 for st in stride):
            raise FormatError(f"tensor of size {list(size)} and stride {list(stride)} at offset {_r(offset, 40)}: "
                              "sizes, strides and the offset must be non-negative integers, one stride per axis")
        data = storage.data
        n, it = len(data), data.itemsize
        count = math.prod(size)
        # The copy below, and its float32 widening for bf16, are allocated: count them first.
        budget.take(count * (it + (8 if storage.bf16 else 0)), f"a tensor of size {list(size)}")
        if count == 0:
            arr = np.zeros(size, data.dtype)
        else:
            last = offset + sum((s - 1) * st for s, st in zip(size, stride))
            if offset < 0 or last >= n:
                raise FormatError(f"tensor of size {list(size)} and stride {list(stride)} at offset {offset} lies "
                                  f"outside its storage of {n} elements")
            arr = np.lib.stride_tricks.as_strided(data[offset:], shape=size, strides=[s * it for s in stride])
            arr = np.array(arr)  # own, contiguous memory
        if storage.bf16:
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        return arr

    return rebuild


def _rebuild_parameter(data, requires_grad=False, hooks=None, *rest):
    return data


class _Unpickler(pickle.Unpickler):
    def __init__(self, f, load_storage, budget: _Budget):
        super().__init__(f)
        self._load = load_storage
        self._rebuild = _make_rebuild(budget)

    def find_class(self, module, name):
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return self._rebuild
        if module == "torch._utils" and name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
            return _rebuild_parameter
        if module == "torch" and name in _STORAGES:
            return _StorageType(name)
        what = f"{module}.{name}"
        raise FormatError(f"the checkpoint's pickle refers to {_r(what, 80)}, which a weights file has no reason to "
                          "use; refusing it")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            raise FormatError(f"unknown persistent id {_r(pid, 60)}")
        stype, key, _location, numel = pid[1], pid[2], pid[3], pid[4]
        if not isinstance(stype, _StorageType):
            raise FormatError(f"unknown storage type {_r(stype, 60)}")
        if type(numel) is not int or numel < 0 or not isinstance(key, (str, int)):
            raise FormatError(f"invalid storage record {_r(pid, 80)}")
        key = str(key)
        return self._load(key, stype, numel)


_PUTS = ("PUT", "BINPUT", "LONG_BINPUT")


def _check_pickle(data: bytes, path) -> None:
    """Walk the opcodes (without running them): at most PICKLE_MAX_OPS, each one well formed, and memo
    indices that a pickler could have written. The unpickler's memo is an array indexed by them: one
    LONG_BINPUT of index 2^31 would allocate 32 GB. A pickler numbers its memo entries 0, 1, 2, ...,
    so an index is never larger than the count of opcodes before it."""
    try:
        for i, (op, arg, _pos) in enumerate(pickletools.genops(data)):
            if i >= PICKLE_MAX_OPS:
                raise FormatError(f"{path}: the checkpoint's pickle has more than {PICKLE_MAX_OPS} opcodes; "
                                  "a weights file needs far fewer")
            if op.name in _PUTS and not (type(arg) is int and 0 <= arg <= i):
                raise FormatError(f"{path}: corrupt checkpoint pickle (memo index {_r(arg, 20)} at opcode {i})")
    except FormatError:
        raise
    except Exception as e:  # pickletools reports a malformed stream with ValueError and friends
        raise FormatError(f"{path}: corrupt checkpoint pickle ({type(e).__name__}: {shown(str(e), 200)})") from None


def read_torch_file(path: str | os.PathLike, max_bytes: int | None = None) -> object:
    """The object torch.save wrote to `path`, with tensors as numpy arrays (bf16 widened to f32).

    max_bytes: the most bytes the reader may allocate for the pickle, the storages and the tensors
    together (FormatError before it would); by default 4 x the file's size + 1 MiB."""
    path = Path(path)
    try:
        with open_regular(str(path)) as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(4)
    except OSError as e:
        raise FormatError(f"{path}: cannot read ({e.strerror or str(e).removeprefix(f'{path}: ')})") from None
    if head[:1] == b"\x80":
        raise FormatError(f"{path}: a legacy (pre-ZIP) torch.save file; re-save it with torch >= 1.6")
    try:
        is_zip = zipfile.is_zipfile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as e:  # is_zipfile raises for some end records it parses
        raise FormatError(f"{path}: damaged checkpoint archive ({shown(str(e), 200)})") from None
    if not is_zip:
        raise FormatError(f"{path}: not a PyTorch checkpoint (not a ZIP archive; {size} bytes, truncated?)")
    budget = _Budget(4 * size + (1 << 20) if max_bytes is None else max_bytes, path)
    try:
        with zipfile.ZipFile(path) as z:
            infos = {i.filename: i for i in z.infolist()}
            names = list(infos)
            pkls = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
            if len(pkls) != 1:
                raise FormatError(f"{path}: not a torch.save archive (no single data.pkl)")
            prefix = pkls[0][: -len("data.pkl")]
            bo = prefix + "byteorder"
            if bo in infos and read_zip_member(z, infos[bo], 16).strip() not in (b"little", b""):
                raise FormatError(f"{path}: big-endian checkpoint; vox reads little-endian ones")
            cache: dict[str, _Storage] = {}

            def load(key: str, stype: _StorageType, numel: int) -> _Storage:
                if key not in cache:
                    member = f"{prefix}data/{key}"
                    name = shown(member)  # the prefix and the key come from the file
                    info = infos.get(member)
                    if info is None:
                        raise FormatError(f"{path}: storage {name} is missing")
                    need = numel * stype.dtype.itemsize
                    if info.file_size < need:
                        raise FormatError(f"{path}: storage {name} has {info.file_size} bytes, needs {need}")
                    budget.take(need, f"storage {name}")  # checked against the declared size, before inflating
                    raw = read_zip_member(z, info, need)
                    if len(raw) < need:
                        raise FormatError(f"{path}: storage {name} has {len(raw)} bytes, needs {need}")
                    cache[key] = _Storage(np.frombuffer(raw, stype.dtype, numel),
                                          stype.name == "BFloat16Storage")
                return cache[key]

            info = infos[pkls[0]]
            if info.file_size > PICKLE_MAX_BYTES:
                raise FormatError(f"{path}: the checkpoint's pickle is {info.file_size} bytes; a weights file's is "
                                  f"far smaller (at most {PICKLE_MAX_BYTES} bytes are read)")
            budget.take(info.file_size, "the pickle")
            data = read_zip_member(z, info, info.file_size)
            _check_pickle(data, path)
            return _Unpickler(io.BytesIO(data), load, budget).load()
    except FormatError as e:
        if str(e).startswith(f"{path}: "):
            raise
        raise FormatError(f"{path}: {e}") from None  # raised while unpickling: name the file
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, RuntimeError) as e:
        # NotImplementedError: a compression method zipfile lacks; RuntimeError: an encrypted member
        raise FormatError(f"{path}: damaged checkpoint archive ({shown(str(e), 200)})") from None
    except (pickle.UnpicklingError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            RecursionError, OverflowError) as e:
        raise FormatError(f"{path}: corrupt checkpoint pickle ({type(e).__name__}: {shown(str(e), 200)})") from None
