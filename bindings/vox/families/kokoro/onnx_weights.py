"""The int8 Kokoro ONNX (kokoro-v1.0.int8.onnx) -> float weights in the official KModel layout.

Dequantization (the patterns onnxruntime's quantize_dynamic produced):
  DynamicQuantizeLinear(x) -> MatMulInteger(xq, Wq, xzp, wzp) -> Cast -> Mul      W = (Wq - wzp) * ws, per column
  DynamicQuantizeLinear(x) -> ConvInteger(xq, Wq, ..) -> [Add(int32 bias)] -> Cast -> Mul   W = (Wq - wzp) * ws
  com.microsoft DynamicQuantizeLSTM(X, Wq, Rq, B, .., ws, wzp, rs, rzp)           W, R per direction
  Gather(Wq, idx) -> DequantizeLinear(., s, zp)                                  embeddings
Each becomes a "float node" (MatMul, Conv, LSTM, Gather) named like the quantized node, so the
mapping below sees the graph as if it had been exported in float.

Mapping onto the KModel state dict (every tensor of data/v1_0_layout.json but bert.pooler.*,
which the inference graph does not contain):
  1. by name: initializers that kept their PyTorch names ("encoder.predictor.F0.0.norm1.fc.bias",
     "decoder.decoder.generator.resblocks.4.alpha1.0", "..._quantized");
  2. by the consuming node: nameless tensors ("onnx::MatMul_6548", "/decoder/decoder/encode/Mul_output_0"
     = a weight-norm conv folded g*v/|v|) get the module from the node's scope
     ("/decoder/decoder/encode/conv1/Conv" -> decoder.encode.conv1) and the role from the op and input
     slot (Conv input 1 weight, 2 bias; MatMul input 1 transposed weight; LSTM 1 W, 2 R, 3 B; ...).
Conversions: MatMul weights [in, out] -> Linear [out, in]; weight-norm convs get weight_v = W and
weight_g = |W| per output channel (a channel that int8 rounding left all zero gets g = 0, v = 1, so
g*v/|v| = 0 instead of 0/0); LSTM gate blocks ONNX (i, o, f, c) -> PyTorch (i, f, g, o), direction
0/1 -> _l0/_l0_reverse, B = [Wb | Rb]; AdaIN's InstanceNorm affine weight/bias have no ONNX op (the
graph normalizes without them) and are set to 1/0.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import FormatError
from ...convert.onnx_proto import Graph, Node

LAYOUT_FILE = Path(__file__).resolve().parent / "data" / "v1_0_layout.json"
COMPONENTS = ("bert", "bert_encoder", "predictor", "text_encoder", "decoder")
# Tensors of KModel that inference never reads and the ONNX graph therefore lacks.
UNUSED = ("bert.pooler.weight", "bert.pooler.bias")
_INSTANCE_NORM_AFFINE = re.compile(r".*\.(norm[12]|adain[12]\.\d+)\.norm\.(weight|bias)")


def kmodel_layout() -> dict[str, tuple[int, ...]]:
    """Every KModel state-dict tensor ("component.key") and its shape, in KModel's order."""
    return {k: tuple(v) for k, v in json.loads(LAYOUT_FILE.read_text(encoding="utf-8")).items()}


# --------------------------------------------------------------------------------- dequantization
@dataclass
class FloatGraph:
    weights: dict[str, np.ndarray]                 # float initializers, dequantized ones included
    nodes: list[Node]                              # the graph with quantized patterns as float ops
    counts: dict[str, int] = field(default_factory=dict)


def _f32(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32)


def dequantize(g: Graph) -> FloatGraph:
    inits = g.initializers
    prod = {o: n for n in g.nodes for o in n.outputs}
    cons: dict[str, list[Node]] = defaultdict(list)
    for n in g.nodes:
        for x in n.inputs:
            cons[x].append(n)

    def only(name: str, what: str) -> Node:
        c = cons.get(name, [])
        if len(c) != 1:
            raise FormatError(f"ONNX graph: {what} {name!r} has {len(c)} consumers, expected 1")
        return c[0]

    def init(name: str) -> np.ndarray:
        if name not in inits:
            raise FormatError(f"ONNX graph: expected initializer {name!r}")
        return inits[name]

    weights = {k: _f32(v) for k, v in inits.items() if v.dtype.kind == "f"}
    replaced: dict[int, Node] = {}
    counts = {"MatMulInteger": 0, "ConvInteger": 0, "DynamicQuantizeLSTM": 0, "Gather+DequantizeLinear": 0}
    for n in g.nodes:
        if n.op_type in ("MatMulInteger", "ConvInteger"):
            dql = prod.get(n.inputs[0])
            if dql is None or dql.op_type != "DynamicQuantizeLinear":
                raise FormatError(f"ONNX graph: {n.name}: input is not a DynamicQuantizeLinear")
            wq, wzp = n.inputs[1], n.inputs[3]
            if not wq.endswith("_quantized"):
                raise FormatError(f"ONNX graph: {n.name}: unexpected weight name {wq!r}")
            ws = wq[: -len("_quantized")] + "_scale"
            q, z, s = _f32(init(wq)), _f32(init(wzp)), _f32(init(ws))
            nxt = only(n.outputs[0], "output")
            bias = None
            if nxt.op_type == "Add":  # int32 bias = round(b / (xs*ws)): trace back to the float bias
                b = prod[nxt.inputs[1]]
                while b.op_type != "Div":
                    b = prod[b.inputs[0]]
                bias = b.inputs[0]
                if bias not in inits:
                    raise FormatError(f"ONNX graph: {n.name}: bias {bias!r} is not an initializer")
                nxt = only(nxt.outputs[0], "output")
            if nxt.op_type != "Cast":
                raise FormatError(f"ONNX graph: {n.name}: expected Cast, found {nxt.op_type}")
            mul = only(nxt.outputs[0], "output")
            if mul.op_type != "Mul":
                raise FormatError(f"ONNX graph: {n.name}: expected Mul, found {mul.op_type}")
            fname = wq[: -len("_quantized")] + "_dequant"
            if n.op_type == "MatMulInteger":  # per output column (last axis), zero point 0
                shape = [1] * (q.ndim - 1) + [-1]
                weights[fname] = (q - z.reshape(shape)) * s.reshape(shape) if z.size > 1 else (q - z) * s
                fn = Node(n.name, "MatMul", "", [dql.inputs[0], fname], list(mul.outputs))
            else:
                weights[fname] = (q - z) * s
                fn = Node(n.name, "Conv", "", [dql.inputs[0], fname] + ([bias] if bias else []), list(mul.outputs),
                          dict(n.attributes))
            replaced[id(n)] = fn
            counts[n.op_type] += 1
        elif n.op_type == "DynamicQuantizeLSTM":
            ins = (list(n.inputs) + [""] * 12)[:12]
            X, Wq, Rq, B, _, _, _, _, ws, wzp, rs, rzp = ins

            def deq(q, zp, sc):  # q [dirs, in, 4h]; scale / zero point per direction or per channel
                zz, ss = _f32(init(zp)), _f32(init(sc))
                zz = zz[:, None, None] if zz.ndim == 1 else zz[:, None, :]
                ss = ss[:, None, None] if ss.ndim == 1 else ss[:, None, :]
                return np.ascontiguousarray(((_f32(init(q)) - zz) * ss).transpose(0, 2, 1))  # [dirs, 4h, in]

            wn, rn = Wq.replace("_quantized", "_W_dequant"), Rq.replace("_quantized", "_R_dequant")
            weights[wn], weights[rn] = deq(Wq, wzp, ws), deq(Rq, rzp, rs)
            replaced[id(n)] = Node(n.name, "LSTM", "", [X, wn, rn, B], list(n.outputs), dict(n.attributes))
            counts["DynamicQuantizeLSTM"] += 1
        elif n.op_type == "DequantizeLinear":
            gth = prod.get(n.inputs[0])
            if gth is None or gth.op_type != "Gather" or gth.inputs[0] not in inits:
                raise FormatError(f"ONNX graph: {n.name}: DequantizeLinear not fed by a Gather of an initializer")
            fname = gth.inputs[0].replace("_quantized", "_dequant")
            weights[fname] = (_f32(inits[gth.inputs[0]]) - _f32(init(n.inputs[2]))) * _f32(init(n.inputs[1]))
            replaced[id(gth)] = Node(gth.name, "Gather", "", [fname, gth.inputs[1]], list(n.outputs))
            counts["Gather+DequantizeLinear"] += 1
    nodes = [replaced.get(id(n), n) for n in g.nodes]
    return FloatGraph(weights, nodes, counts)


# ------------------------------------------------------------------------------------- mapping
def scope_to_module(node_name: str) -> str | None:
    """'/decoder/decoder/generator/resblocks.4/convs1.0/Conv' -> 'decoder.generator.resblocks.4.convs1.0'"""
    parts = [p for p in node_name.split("/") if p][:-1]  # drop the op's own name
    if not parts:
        return None
    out: list[str] = []
    for p in parts:
        p = re.sub(r"_\d+$", "", p)  # a module called twice: query_1, LayerNorm_3
        if out and p.startswith(out[-1] + "."):  # 'cnn.0' then 'cnn.0.0'
            out[-1] = p
        else:
            out.append(p)
    if out[0] == "decoder":
        return ".".join(out[1:])  # the export wrapper's 'decoder' holds KModel.decoder as 'decoder'
    if out[0] == "encoder" and len(out) > 1:
        head = out[1]
        if head in ("bert", "bert_encoder", "predictor", "text_encoder"):
            return ".".join(out[1:])
        # ProsodyPredictor.F0Ntrain was traced directly under /encoder
        if head in ("shared", "F0_proj", "N_proj") or re.fullmatch(r"(F0|N)\.\d+", head):
            return "predictor." + ".".join(out[1:])
    return None


def name_to_key(init_name: str) -> str | None:
    n = re.sub(r"_(dequant|quantized)$", "", init_name)
    if n.startswith("encoder.") and n[len("encoder."):].split(".")[0] in ("bert", "bert_encoder", "predictor",
                                                                          "text_encoder"):
        return n[len("encoder."):]
    if n.startswith("decoder.decoder."):
        return "decoder." + n[len("decoder.decoder."):]
    return None


def lstm_reorder(x: np.ndarray, h: int) -> np.ndarray:
    """Gate blocks along axis 0 from ONNX order (i, o, f, c) to PyTorch order (i, f, g, o)."""
    i, o, f, c = (x[k * h:(k + 1) * h] for k in range(4))
    return np.concatenate([i, f, c, o], 0)


@dataclass
class Mapped:
    state: dict[str, np.ndarray]          # KModel key -> float32 array (KModel's shapes; pooler absent)
    method: dict[str, str]                # KModel key -> "name" | "scope" | "default"
    zero_channels: dict[str, int]         # weight-norm module -> all-zero output channels
    unused: list[str]                     # float initializers that map to nothing (graph constants)


def map_to_kmodel(fg: FloatGraph, layout: dict[str, tuple[int, ...]] | None = None) -> Mapped:
    """The KModel state dict from a dequantized graph; fg.weights is emptied as it is consumed."""
    layout = layout or kmodel_layout()
    wn_modules = {k[: -len(".weight_v")] for k in layout if k.endswith(".weight_v")}
    inits = fg.weights
    consumers: dict[str, list[tuple[Node, int]]] = defaultdict(list)
    for n in fg.nodes:
        for idx, x in enumerate(n.inputs):
            if x in inits:
                consumers[x].append((n, idx))

    def has(key: str) -> bool:
        return key in layout or (key.endswith(".weight") and key[: -len(".weight")] in wn_modules)

    def proposals(iname: str, arr: np.ndarray) -> set[tuple[str, bool]]:
        props = set()
        for n, idx in consumers[iname]:
            mod = scope_to_module(n.name)
            if mod is None:
                continue
            op = n.op_type
            if op in ("Conv", "ConvTranspose") and idx in (1, 2):
                props.add((f"{mod}.{'weight' if idx == 1 else 'bias'}", False))
            elif op == "MatMul" and idx == 1:
                props.add((f"{mod}.weight", True))
            elif op == "Add" and arr.ndim == 1 and has(f"{mod}.bias"):
                props.add((f"{mod}.bias", False))
            elif op == "Gather" and idx == 0:
                props.add((f"{mod}.weight", False))
            elif op == "LSTM" and idx in (1, 2, 3):
                props.add((f"{mod}.#LSTM{idx}", False))
            elif op == "LayerNormalization" and idx in (1, 2):
                a, b = ("weight", "gamma") if idx == 1 else ("bias", "beta")
                props.add((f"{mod}.{a if f'{mod}.{a}' in layout else b}", False))
        return {p for p in props if "#LSTM" in p[0] or has(p[0])}

    state: dict[str, np.ndarray] = {}
    method: dict[str, str] = {}
    source: dict[str, str] = {}
    zero_channels: dict[str, int] = {}

    def put(key: str, arr: np.ndarray, how: str, src: str) -> None:
        if key not in layout:
            raise FormatError(f"ONNX tensor {src!r} maps to {key!r}, which KModel does not have")
        if tuple(arr.shape) != layout[key]:
            raise FormatError(f"ONNX tensor {src!r} -> {key}: shape {tuple(arr.shape)}, KModel has {layout[key]}")
        if key in state:
            if not np.array_equal(state[key], arr):
                raise FormatError(f"{key}: two different ONNX tensors map to it ({source[key]!r}, {src!r})")
            return
        state[key] = np.ascontiguousarray(arr, dtype=np.float32)
        method[key] = how
        source[key] = src

    def place_weight(key: str, arr: np.ndarray, how: str, src: str, transpose: bool) -> None:
        if transpose:
            arr = arr.T
        mod = key[: -len(".weight")]
        if mod not in wn_modules:
            put(key, arr, how, src)
            return
        v = np.array(arr, dtype=np.float32)
        norm = np.sqrt((v.astype(np.float64) ** 2).reshape(v.shape[0], -1).sum(1)).astype(np.float32)
        zero = norm == 0
        if zero.any():
            v[zero] = 1.0
            zero_channels[mod] = int(zero.sum())
        put(mod + ".weight_v", v, how, src)
        put(mod + ".weight_g", norm.reshape(layout[mod + ".weight_g"]), how, src)

    lstm_parts: dict[str, dict[int, tuple[str, np.ndarray]]] = defaultdict(dict)
    names = list(inits)
    for iname in names:
        arr = inits.pop(iname)  # consumed: the float graph's copy is not kept beside the state dict
        key = name_to_key(iname)
        props = proposals(iname, arr)
        transpose = any(t for _, t in props)
        if key is not None and has(key):
            if key.endswith(".weight"):
                place_weight(key, arr, "name", iname, transpose)
            else:
                put(key, arr, "name", iname)
            continue
        if not props:
            continue
        if len(props) > 1:
            raise FormatError(f"ONNX tensor {iname!r}: consumed by several modules {sorted(props)}")
        (pk, t), = props
        if "#LSTM" in pk:
            mod, slot = pk.split(".#LSTM")
            lstm_parts[mod][int(slot)] = (iname, arr)
        elif pk.endswith(".weight"):
            place_weight(pk, arr, "scope", iname, t)
        else:
            put(pk, arr, "scope", iname)

    for mod, parts in lstm_parts.items():
        if set(parts) != {1, 2, 3}:
            raise FormatError(f"ONNX LSTM {mod}: missing W, R or B")
        (wn, W), (rn, R), (bn, B) = parts[1], parts[2], parts[3]
        h = R.shape[2]
        for d, suf in enumerate(("", "_reverse")):
            put(f"{mod}.weight_ih_l0{suf}", lstm_reorder(W[d], h), "scope", wn)
            put(f"{mod}.weight_hh_l0{suf}", lstm_reorder(R[d], h), "scope", rn)
            put(f"{mod}.bias_ih_l0{suf}", lstm_reorder(B[d, : 4 * h], h), "scope", bn)
            put(f"{mod}.bias_hh_l0{suf}", lstm_reorder(B[d, 4 * h:], h), "scope", bn)

    for k, shape in layout.items():
        if k not in state and _INSTANCE_NORM_AFFINE.fullmatch(k):
            state[k] = (np.ones if k.endswith("weight") else np.zeros)(shape, np.float32)
            method[k] = "default"
    missing = [k for k in layout if k not in state and k not in UNUSED]
    if missing:
        raise FormatError(f"the ONNX graph lacks {len(missing)} KModel tensors: {', '.join(missing[:6])}")
    used = set(source.values())
    unused = sorted(n for n in names if n not in used)
    return Mapped(state, method, zero_channels, unused)
