"""A small reader for ONNX model files (protobuf wire format), so converting needs no `onnx` package.

Only what a weight converter needs is decoded: the graph's nodes (name, op type, domain, inputs,
outputs, attributes, subgraphs) and its initializers as numpy arrays (views of the file's bytes where
the data is stored raw). Field numbers are those of onnx/onnx.proto (IR version 3 and later).

What a file may cost is bounded (docs/reliability.md): a protobuf message can be two bytes long and
decode into a few hundred bytes of Python objects, so every item the reader builds counts against
MAX_ITEMS, checked before the item is made: a field (a string, a number, an attribute, an initializer)
one item, a value of a packed list one, a node or a graph NODE_ITEMS (its lists and dict), so that
decoding costs at most ~64 bytes per item, ~32 MiB in all. Kokoro-82M's ONNX takes ~75,000 items.
Raw tensor data stays a view of the file's bytes.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError

# TensorProto.DataType -> numpy dtype
_DTYPES: dict[int, np.dtype] = {1: np.dtype("<f4"), 2: np.dtype("u1"), 3: np.dtype("i1"), 4: np.dtype("<u2"), 5: np.dtype("<i2"),
           6: np.dtype("<i4"), 7: np.dtype("<i8"), 9: np.dtype("?"), 10: np.dtype("<f2"), 11: np.dtype("<f8"),
           12: np.dtype("<u4"), 13: np.dtype("<u8")}


MAX_ITEMS = 1 << 19
NODE_ITEMS = 8
MAX_ELEMENTS = 1 << 40  # elements of one initializer (its bytes must be in the file anyway)


class _Truncated(Exception):
    pass


class _Items:
    """The items the reader may still build (MAX_ITEMS in all)."""

    def __init__(self) -> None:
        self.left = MAX_ITEMS

    def take(self, n: int = 1) -> None:
        if n > self.left:
            raise FormatError(f"more than {MAX_ITEMS} nodes, names, attributes and values; "
                              "a model vox converts has far fewer")
        self.left -= n


def _varint(buf, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end:
            raise _Truncated
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise FormatError("invalid varint")


def _fields(buf, pos: int, end: int):
    """Yield (field number, wire type, value, start, stop): value is an int for varint/fixed types;
    for length-delimited fields start/stop delimit the bytes."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = _varint(buf, pos, end)
            yield num, wt, v, 0, 0
        elif wt == 2:
            n, pos = _varint(buf, pos, end)
            if pos + n > end:
                raise _Truncated
            yield num, wt, None, pos, pos + n
            pos += n
        elif wt == 5:
            if pos + 4 > end:
                raise _Truncated
            yield num, wt, struct.unpack_from("<I", buf, pos)[0], pos, pos + 4
            pos += 4
        elif wt == 1:
            if pos + 8 > end:
                raise _Truncated
            yield num, wt, struct.unpack_from("<Q", buf, pos)[0], pos, pos + 8
            pos += 8
        else:
            raise FormatError(f"unsupported protobuf wire type {wt}")


# The wire types each decoded field may have (onnx.proto: 0 varint, 1 fixed64, 2 length-delimited, 5
# fixed32; repeated numbers packed (2) or not); a field of another type is refused, not misread.
_WIRE_TENSOR = {1: (0, 2), 2: (0,), 4: (2, 5), 5: (0, 2), 7: (0, 2), 8: (2,), 9: (2,), 10: (1, 2), 11: (0, 2), 14: (0,)}
_WIRE_ATTRIBUTE = {1: (2,), 2: (5,), 3: (0,), 4: (2,), 5: (2,), 6: (2,), 7: (2, 5), 8: (0, 2), 11: (2,), 20: (0,)}
_WIRE_NODE = {1: (2,), 2: (2,), 3: (2,), 4: (2,), 5: (2,), 7: (2,)}
_WIRE_GRAPH = {1: (2,), 2: (2,), 5: (2,), 11: (2,), 12: (2,)}


def _wire(table: dict, num: int, wt: int, what: str) -> None:
    if num in table and wt not in table[num]:
        raise FormatError(f"{what} field {num} has protobuf wire type {wt}, expected {' or '.join(map(str, table[num]))}")


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _packed_varints(buf, wt, v, a, b, lim: _Items) -> list[int]:
    if wt == 0:
        lim.take()
        return [_signed(v)]
    # one value per byte without the continuation bit: counted before the list is built
    lim.take(int(np.count_nonzero(np.frombuffer(buf, np.uint8, b - a, a) < 0x80)))
    out, pos = [], a
    while pos < b:
        x, pos = _varint(buf, pos, b)
        out.append(_signed(x))
    return out


@dataclass
class Node:
    name: str
    op_type: str
    domain: str
    inputs: list[str]
    outputs: list[str]
    attributes: dict = field(default_factory=dict)
    subgraphs: list["Graph"] = field(default_factory=list)


@dataclass
class Graph:
    name: str
    nodes: list[Node]
    initializers: dict[str, np.ndarray]
    inputs: list[str]
    outputs: list[str]


def _str(buf, a, b) -> str:
    return bytes(buf[a:b]).decode("utf-8")


def _tensor(buf, a: int, b: int, lim: _Items) -> tuple[str, np.ndarray]:
    dims: list[int] = []
    dtype = 0
    name = ""
    raw = None
    typed: dict[int, list] = {}
    external = False
    for num, wt, v, s, e in _fields(buf, a, b):
        lim.take()
        _wire(_WIRE_TENSOR, num, wt, "tensor")
        if num == 1:
            dims += _packed_varints(buf, wt, v, s, e, lim)
        elif num == 2:
            dtype = v
        elif num == 8:
            name = _str(buf, s, e)
        elif num == 9:
            raw = (s, e)
        elif num == 4:  # float_data: packed fixed32 or single values
            typed.setdefault(4, []).append(np.frombuffer(buf, "<f4", (e - s) // 4, s) if wt == 2
                                           else np.array([v], np.uint32).view("<f4"))
        elif num == 10:
            typed.setdefault(10, []).append(np.frombuffer(buf, "<f8", (e - s) // 8, s) if wt == 2
                                            else np.array([v], np.uint64).view("<f8"))
        elif num in (5, 7, 11):  # int32_data (also int8/uint8/int16/bool/f16 bits), int64_data, uint64_data
            typed.setdefault(num, []).append(np.array(_packed_varints(buf, wt, v, s, e, lim), np.int64))
        elif num == 14 and v == 1:
            external = True
    if external:
        raise FormatError(f"initializer {name!r} keeps its data in an external file, which vox does not read")
    if dtype not in _DTYPES:
        raise FormatError(f"initializer {name!r} has ONNX data type {dtype}, which vox does not read")
    dt = _DTYPES[dtype]
    if any(d < 0 for d in dims) or math.prod(dims) > MAX_ELEMENTS:
        raise FormatError(f"initializer {name!r} has an invalid shape {dims[:8]}")
    n = math.prod(dims)
    if raw is not None:
        s, e = raw
        if e - s != n * dt.itemsize:
            raise FormatError(f"initializer {name!r}: {e - s} bytes of data for shape {dims} {dt}")
        arr = np.frombuffer(buf, dt, n, s)
    else:
        vals = [x for k in (4, 10, 5, 7, 11) for x in typed.get(k, [])]
        flat = np.concatenate(vals) if vals else np.zeros(0, dt)
        if dtype == 10:  # float16 stored as int32 bit patterns
            flat = flat.astype(np.uint16).view("<f2")
        flat = flat.astype(dt)
        if flat.size != n:
            raise FormatError(f"initializer {name!r}: {flat.size} values for shape {dims}")
        arr = flat
    return name, arr.reshape(dims)


def _attribute(buf, a: int, b: int, lim: _Items):
    name, kind = "", 0
    f = i = s = t = g = None
    floats: list = []
    ints: list = []
    graphs: list = []
    for num, wt, v, st, e in _fields(buf, a, b):
        lim.take()
        _wire(_WIRE_ATTRIBUTE, num, wt, "attribute")
        if num == 1:
            name = _str(buf, st, e)
        elif num == 20:
            kind = v
        elif num == 2:
            f = struct.unpack("<f", struct.pack("<I", v))[0]
        elif num == 3:
            i = _signed(v)
        elif num == 4:
            s = bytes(buf[st:e])
        elif num == 5:
            t = _tensor(buf, st, e, lim)[1]
        elif num == 6:
            g = _graph(buf, st, e, lim)
        elif num == 7:
            lim.take((e - st) // 4 if wt == 2 else 1)
            floats += list(np.frombuffer(buf, "<f4", (e - st) // 4, st)) if wt == 2 else \
                [struct.unpack("<f", struct.pack("<I", v))[0]]
        elif num == 8:
            ints += _packed_varints(buf, wt, v, st, e, lim)
        elif num == 11:
            graphs.append(_graph(buf, st, e, lim))
    value = {1: f, 2: i, 3: s, 4: t, 5: g, 6: floats, 7: ints}.get(kind)
    if kind == 10:
        value = graphs
    return name, value, ([g] if g is not None else []) + graphs


def _node(buf, a: int, b: int, lim: _Items) -> Node:
    lim.take(NODE_ITEMS)
    n = Node("", "", "", [], [])
    for num, wt, v, s, e in _fields(buf, a, b):
        lim.take()
        _wire(_WIRE_NODE, num, wt, "node")
        if num == 1:
            n.inputs.append(_str(buf, s, e))
        elif num == 2:
            n.outputs.append(_str(buf, s, e))
        elif num == 3:
            n.name = _str(buf, s, e)
        elif num == 4:
            n.op_type = _str(buf, s, e)
        elif num == 7:
            n.domain = _str(buf, s, e)
        elif num == 5:
            an, av, subs = _attribute(buf, s, e, lim)
            n.attributes[an] = av
            n.subgraphs += subs
    return n


def _value_info_name(buf, a: int, b: int) -> str:
    for num, wt, v, s, e in _fields(buf, a, b):
        if num == 1:
            _wire({1: (2,)}, num, wt, "value info")
            return _str(buf, s, e)
    return ""


def _graph(buf, a: int, b: int, lim: _Items) -> Graph:
    lim.take(NODE_ITEMS)
    g = Graph("", [], {}, [], [])
    for num, wt, v, s, e in _fields(buf, a, b):
        lim.take()
        _wire(_WIRE_GRAPH, num, wt, "graph")
        if num == 1:
            g.nodes.append(_node(buf, s, e, lim))
        elif num == 2:
            g.name = _str(buf, s, e)
        elif num == 5:
            name, arr = _tensor(buf, s, e, lim)
            g.initializers[name] = arr
        elif num == 11:
            g.inputs.append(_value_info_name(buf, s, e))
        elif num == 12:
            g.outputs.append(_value_info_name(buf, s, e))
    return g


def read_model(data: bytes | memoryview, what: str = "ONNX model") -> Graph:
    """The main graph of an ONNX ModelProto held in `data` (initializers are views of `data`)."""
    buf = memoryview(data).cast("B")
    lim = _Items()
    try:
        graph = None
        for num, wt, v, s, e in _fields(buf, 0, len(buf)):
            if num == 7 and wt == 2:
                graph = _graph(buf, s, e, lim)
    except FormatError as e:
        raise FormatError(f"{what}: {e}") from None
    except _Truncated:
        raise FormatError(f"{what}: truncated (a protobuf field runs past the end)") from None
    except (UnicodeDecodeError, ValueError, struct.error, OverflowError, IndexError) as e:
        raise FormatError(f"{what}: not a valid ONNX model ({type(e).__name__}: {e})") from None
    except RecursionError:
        raise FormatError(f"{what}: not a valid ONNX model (subgraphs nested too deeply)") from None
    if graph is None or not graph.nodes:
        raise FormatError(f"{what}: not an ONNX model (no graph)")
    return graph
