"""Make the seed corpora of the fuzz targets (fixtures/fuzz/<target>/seed-*) and the data the C
targets build on (fuzz/data/). The outputs are committed; run this again only to change them:

    python fuzz/make_seeds.py [--kokoro-model PATH]

Seeds are small, real-looking inputs: tiny valid .tmod files of both families and broken ones, voices
of every mode for the tiny Qwen3-TTS Base fixture, manifests and other JSON, texts with numbers,
currency, dates and abbreviations, tokenizer texts with special tokens, torch.save archives, ONNX
models with every attribute kind, pronunciation files, and recordings in every container and
sample format vox reads. Needs torch, onnx, soundfile and the Qwen3 tiny fixture (fixtures/qwen3_tiny);
the Kokoro lexicon subset comes from a converted Kokoro model (--kokoro-model, by default the one
`vox` downloads and converts, ~/.cache/vox/models/kokoro-v1.0-f32.tmod).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "fixtures" / "fuzz"
DATA = ROOT / "fuzz" / "data"
sys.path.insert(0, str(ROOT))


def put(target: str, name: str, data: bytes) -> None:
    d = SEEDS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data)


def reset(target: str) -> None:
    d = SEEDS / target
    for p in d.glob("seed-*") if d.exists() else []:
        p.unlink()


# ------------------------------------------------------------------------------------------- .tmod
def tmod_seeds() -> None:
    from vox.formats import tmod

    reset("tmod")
    rng = np.random.default_rng(0)
    tok = {"tokenizer.vocab.json": b'{"a": 0, "b": 1, "ab": 2}', "tokenizer.merges.txt": b"#version: 0.2\na b\n",
           "tokenizer.tokenizer_config.json": b'{"added_tokens_decoder": {}}'}
    qwen = {
        "format": "vox.tmod", "format_version": 1, "family": "qwen3_tts", "variant": "base", "size": "0b6",
        "model_id": hashlib.sha256(b"seed").hexdigest(), "source": {"files": {}, "converter": "seed"},
        "precision": {"dtype": "bf16", "quant": "q8", "codec_dtype": "f32"},
        "config": {"talker_config": {"hidden_size": 32, "rms_norm_eps": 1e-6, "name": "t\u00e9st \U0001F600"}},
        "speech_tokenizer_config": {}, "generation": {"temperature": 0.9, "top_k": 50},
        "tokenizer": {"type": "qwen2_bpe", "pre_tokenizer": "qwen2",
                      **{role: t for role, (_, t) in tmod.QWEN3_TOKENIZER_FILES.items()}},
        "speakers": {"aiden": 2861, "serena": 3066}, "languages": {"english": 2050, "chinese": 2055},
    }
    tensors = {
        "w.f32": ("f32", rng.normal(size=(3, 5)).astype(np.float32)),
        "w.f16": ("f16", rng.normal(size=(2, 7)).astype(np.float32)),
        "w.bf16": ("bf16", rng.normal(size=(4, 3, 2)).astype(np.float32)),
        "w.q8": ("q8", rng.normal(size=(3, 64)).astype(np.float32)),
        "w.q4": ("q4", rng.normal(size=(2, 2, 32)).astype(np.float32)),
        "ids.i32": ("i32", rng.integers(-2**31, 2**31, size=(5,), dtype=np.int64)),
        "ids.i64": ("i64", rng.integers(-2**62, 2**62, size=(2, 2), dtype=np.int64)),
        "empty": ("f32", np.zeros((0, 4), np.float32)),
        **{n: ("u8", np.frombuffer(b, np.uint8)) for n, b in tok.items()},
    }
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "q.tmod"
        tmod.write_tmod(p, qwen, tensors)
        q = p.read_bytes()
        put("tmod", "qwen3-every-dtype.tmod", q)
        tmod.write_tmod(p, qwen, {k: v for k, v in tensors.items() if k.startswith("tokenizer.")})
        put("tmod", "qwen3-tokenizer-only.tmod", p.read_bytes())
        kok = {k: v for k, v in qwen.items() if k not in ("speech_tokenizer_config", "generation", "tokenizer",
                                                          "speakers", "languages", "size")}
        kok.update(family="kokoro", variant="v1.0", speakers=[], config={"vocab": {"a": 43, "ˈ": 156}},
                   frontend={"format": "vox.kokoro.frontend", "format_version": 1, "lexicon": "frontend.lexicon"})
        lex = b"VXL1" + struct.pack("<II", 1, 12) + b"cat\0k\xcb\x88\xc3\xa6t\0"
        tmod.write_tmod(p, kok, {"frontend.lexicon": ("u8", np.frombuffer(lex, np.uint8)),
                                 "w": ("f32", rng.normal(size=(8, 4)).astype(np.float32))})
        put("tmod", "kokoro-no-voices.tmod", p.read_bytes())
    put("tmod", "truncated-header", q[:40])
    put("tmod", "header-only", q[:64])
    put("tmod", "manifest-cut", q[:64 + 300])
    bad = bytearray((SEEDS / "tmod" / "seed-kokoro-no-voices.tmod").read_bytes())
    bad[0:4] = b"VOXN"
    put("tmod", "wrong-magic", bytes(bad))
    man = json.loads(q[64:64 + struct.unpack_from("<Q", q, 16)[0]])
    man["tensors"][0]["shape"] = [2**53, 2**53]
    put("tmod", "huge-shape", tmod.pack(json.dumps(man).encode(), b""))
    put("tmod", "deep-manifest", tmod.pack(b"[" * 70 + b"]" * 70, b""))


# ----------------------------------------------------------------------------------------- .tvoice
def qwen3_model(tmp: Path) -> Path:
    from fixtures.qwen3_tiny import fixture_dir
    from vox.convert import convert

    out = tmp / "base06.tmod"
    convert(fixture_dir("base06"), out, dtype="f32", quant="none", overwrite=True)
    return out


def tvoice_seeds(model: Path) -> None:
    from vox.formats import tmod, tvoice

    reset("tvoice")
    with tmod.TmodFile(model) as f:
        m = f.manifest
    cfg = m["config"]
    dim = cfg["speaker_encoder_config"]["enc_dim"]
    groups = cfg["talker_config"]["num_code_groups"]
    rng = np.random.default_rng(1)
    emb = rng.normal(size=dim).astype(np.float32)
    codes = rng.integers(0, 100, size=(4, groups), dtype=np.int64)
    text = np.array([9707, 11, 1879, 13], np.int64)
    wav = (0.1 * np.sin(np.arange(240) / 5)).astype(np.float32)
    mid = m["model_id"]
    voices = {
        "xvector": tvoice.Voice(mode="xvector", model_id=mid, variant="base", name="x", speaker_embedding=emb),
        "xvector-wav": tvoice.Voice(mode="xvector", model_id=mid, variant="base", name="x", speaker_embedding=emb,
                                    source_wav=wav, source_sample_rate=24000, defaults={"seed": 7}),
        "icl": tvoice.Voice(mode="icl", model_id=mid, variant="base", name="me", ref_text="Hi, it's me.",
                            language="english", speaker_embedding=emb, ref_codes=codes, ref_text_tokens=text,
                            source_wav=wav, source_sample_rate=24000),
        "speaker": tvoice.Voice(mode="speaker", model_id=mid, variant="custom_voice", speaker="aiden",
                                instruct="calm"),
        "design": tvoice.Voice(mode="design", model_id=mid, variant="voice_design", instruct="a deep voice"),
        "other-model": tvoice.Voice(mode="xvector", model_id="ab" * 32, variant="base", speaker_embedding=emb),
    }
    with tempfile.TemporaryDirectory() as d:
        for name, v in voices.items():
            p = Path(d) / f"{name}.tvoice"
            tvoice.write_voice(p, v)
            put("tvoice", f"{name}.tvoice", p.read_bytes())
        raw = (Path(d) / "icl.tvoice").read_bytes()
    # a Kokoro style voice with a style pack of 2 rows instead of 510 (a real one is 522 KB, too big a seed)
    from vox.reference.common import safetensors

    pack = rng.normal(size=(2, 256)).astype(np.float32)
    meta = {"format": "vox.tvoice", "format_version": "1", "family": "kokoro", "model_id": "0" * 64, "variant": "v1.0",
            "mode": "style", "name": "af_x", "language": "en-us", "defaults": "{}",
            "crc32": json.dumps({"style_pack": tvoice._crc(pack)})}
    with tempfile.TemporaryDirectory() as d:
        safetensors.save(Path(d) / "s.tvoice", {"style_pack": pack}, meta)
        put("tvoice", "style-2-rows.tvoice", (Path(d) / "s.tvoice").read_bytes())
    put("tvoice", "truncated", raw[:100])
    put("tvoice", "header-length-only", raw[:8])


# -------------------------------------------------------------------------------------------- JSON
def json_seeds() -> None:
    reset("json")
    docs = {
        "scalars": b'[null, true, false, 0, -0, 1.5e-3, -7, 9007199254740992, 9007199254740993, 1E+2, 0.1]',
        "strings": '["", "a\\"b\\\\c\\/", "\\u00e9\\ud83d\\ude00", "\\b\\f\\n\\r\\t", "é😀", "\\u0000"]'.encode(),
        "nested": b'{"a": {"b": [[[{"c": []}]]], "d": {}}, "e": [1, [2, [3, [4]]]]}',
        "pronunciations": '{"Kokoro": "kˈOkəɹO", "vox": "vˈɑks", "tomato": "təmˈAtO"}'.encode(),
        "manifest-tensors": json.dumps({"tensors": [{"name": "w", "dtype": "q8", "shape": [3, 64], "offset": 4096,
                                                     "nbytes": 216, "crc32": 4294967295}]}).encode(),
        "whitespace": b' \t\r\n{ "a" :\n[ 1 , 2 ] } \n',
        "big-exponents": b'[1e308, -1e-308, 5e-324, 123456789012345678901234567890]',
    }
    for name, d in docs.items():
        put("json", name, d)
    put("json", "kokoro-config", (ROOT / "bindings/vox/families/kokoro/data/v1_0_config.json").read_bytes())
    from fixtures.qwen3_tiny import fixture_dir

    put("json", "tokenizer-config", (fixture_dir("base06") / "tokenizer_config.json").read_bytes())
    put("json", "qwen3-config", (fixture_dir("base06") / "config.json").read_bytes())


# -------------------------------------------------------------------------------------------- UTF-8
def utf8_seeds() -> None:
    reset("utf8")
    cases = {
        "ascii": b"Hello, world.", "two-three-four": "é€😀ÿ中文".encode(), "overlong": b"\xc0\xaf\xe0\x80\xaf",
        "surrogate": b"\xed\xa0\x80\xed\xbf\xbf", "above-max": b"\xf4\x90\x80\x80", "cut": "a€".encode()[:-1],
        "lone-continuation": b"\x80\xbf", "f5": b"\xf5\x80\x80\x80", "nul": b"a\x00b", "max": b"\xf4\x8f\xbf\xbf",
    }
    for name, d in cases.items():
        put("utf8", name, d)


# ------------------------------------------------------------------------------------ Kokoro text
NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred "
                "thousand million billion trillion first second third fourth fifth sixth seventh eighth ninth "
                "tenth twelfth twentieth hundredth point and dollar dollars cent cents pound pounds euro euros "
                "percent degrees celsius fahrenheit oh o'clock am pm minus plus kilometers kilograms meters "
                "minutes hours seconds gigahertz megabytes gigabytes miles per hour number").split()


def kokoro_seeds(kokoro_model: Path | None) -> None:
    from vox.formats import tmod

    reset("kokoro_text")
    corpus = (ROOT / "fixtures/kokoro/frontend_corpus.txt").read_text(encoding="utf-8").splitlines()
    lines = [ln for ln in corpus if ln.strip()]
    for i, ln in enumerate(lines[:80]):
        put("kokoro_text", f"corpus-{i:03d}", bytes([i % 16]) + ln.encode())
    put("kokoro_text", "overrides", b"\x00Kokoro says tomato.\x00" + '{"Kokoro": "kˈOkəɹO", "tomato": "təmˈAtO"}'.encode())
    put("kokoro_text", "paragraph", b"\x05" + " ".join(lines[80:95]).encode())
    put("kokoro_text", "long-sentence", b"\x00" + (" and then".join(["we walked"] * 60) + ".").encode())
    recs = ["a\0ˈA\0".encode(), "cat\0kˈæt\0".encode()]  # a two-entry VXL1 lexicon (flag bit 7)
    put("kokoro_text", "lexicon-blob", b"\x80VXL1" + struct.pack("<III", 2, 16, 16 + len(recs[0])) + b"".join(recs))
    if kokoro_model is None:
        return
    with tmod.TmodFile(kokoro_model) as f:
        blob = f.blob("frontend.lexicon").tobytes()
    n = struct.unpack_from("<I", blob, 4)[0]
    entries = {}
    for i in range(n):
        o = struct.unpack_from("<I", blob, 8 + 4 * i)[0]
        k_end = blob.index(b"\0", o)
        v_end = blob.index(b"\0", k_end + 1)
        entries[blob[o:k_end].decode()] = blob[k_end + 1:v_end].decode()
    words = set(NUMBER_WORDS)
    for ln in corpus:
        words.update(re.findall(r"[A-Za-z][A-Za-z'.]*", ln))
    keep = {}
    for w in words:
        for form in {w, w.lower(), w.capitalize(), w.upper(), w.rstrip("."), w.lower().rstrip(".")}:
            if form in entries:
                keep[form] = entries[form]
    DATA.mkdir(parents=True, exist_ok=True)
    with open(DATA / "kokoro_lexicon.tsv", "w", encoding="utf-8") as out:
        out.write("# The entries of the Kokoro v1.0 frontend lexicon (misaki 0.9.4 us_gold.json + us_silver.json, "
                  "Apache-2.0)\n# for the words of fixtures/kokoro/frontend_corpus.txt and of numbers; made by "
                  "fuzz/make_seeds.py. word<TAB>phonemes\n")
        for k in sorted(keep, key=lambda s: s.encode()):
            out.write(f"{k}\t{keep[k]}\n")


# ------------------------------------------------------------------------------- Qwen3 tokenizer
def tokenizer_seeds() -> None:
    from fixtures.qwen3_tiny import fixture_dir

    reset("qwen3_tokenizer")
    src = fixture_dir("base06")
    vocab = json.loads((src / "vocab.json").read_text(encoding="utf-8"))
    merges = (src / "merges.txt").read_text(encoding="utf-8").splitlines()
    config = (src / "tokenizer_config.json").read_bytes()
    # the byte alphabet (256 one-character tokens) and the first 3000 merges with what they make
    # GPT-2's byte-to-unicode alphabet (the printable bytes stand for themselves, the rest from U+0100)
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    extra = iter(range(0x100, 0x200))
    alphabet = {chr(b) if b in keep else chr(next(extra)) for b in range(256)}
    keep_merges = [m for m in merges[1:3001] if m and not m.startswith("#")]
    need = set(alphabet)
    for m in keep_merges:
        a, b = m.split(" ")
        need.update((a, b, a + b))
    small = {k: v for k, v in vocab.items() if k in need}
    d = DATA / "qwen3_tokenizer"
    d.mkdir(parents=True, exist_ok=True)
    (d / "vocab.json").write_text(json.dumps(small, ensure_ascii=False), encoding="utf-8")
    (d / "merges.txt").write_text("#version: 0.2\n" + "\n".join(keep_merges) + "\n", encoding="utf-8")
    (d / "tokenizer_config.json").write_bytes(config)
    texts = {
        "prompt": "<|im_start|>assistant\nHello there, how are you?<|im_end|>\n<|im_start|>assistant\n",
        "numbers": "It costs $3.50 (about 12,345.67 yen) on 2024-03-03 at 10:30pm.",
        "contractions": "I'll say it's what we'VE done; you'd've known. 'S 'T 'RE",
        "chinese": "你好，世界！今天天气很好。",
        "mixed-scripts": "Ünïcödé naïve café — Ελληνικά русский 日本語 한국어 😀👍🏽",
        "whitespace": "a  b\t\tc\n\n\r\n  d   \n",
        "punctuation": "!!!???...,,,;;;:::---///\\\\",
        "special-inside": "x<|endoftext|>y<|im_start|><|im_end|>z",
    }
    for name, t in texts.items():
        put("qwen3_tokenizer", name, b"\x00" + t.encode())
        put("qwen3_tokenizer", f"{name}-mistral", b"\x01" + t.encode())
    files = (json.dumps({k: small[k] for k in list(small)[:300]}, ensure_ascii=False).encode() + b"\0"
             + "\n".join(["#version: 0.2"] + keep_merges[:20]).encode() + b"\0" + config + b"\0" + b"Hello world")
    put("qwen3_tokenizer", "files", b"\x80" + files)


# ---------------------------------------------------------------------------------------- torch
def torch_seeds() -> None:
    import torch

    reset("torch_pickle")

    def save(name, obj):
        b = io.BytesIO()
        torch.save(obj, b)
        put("torch_pickle", name, b.getvalue())

    g = torch.Generator().manual_seed(0)
    save("voice-pack-small.pt", torch.randn(5, 1, 8, generator=g))
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    save("state-dict.pt", {"bert": {"w": torch.randn(3, 4, generator=g), "b": torch.zeros(4)},
                           "decoder": {"module.x": torch.ones(2, dtype=torch.float16)}})
    save("views.pt", {"t": base.t(), "s": base[1:3, ::2], "e": torch.zeros(1).expand(3, 2)})
    save("dtypes.pt", {"i": torch.tensor([1, -2], dtype=torch.int64), "b": torch.tensor([1.5], dtype=torch.bfloat16),
                       "u": torch.tensor([7], dtype=torch.uint8), "p": torch.nn.Parameter(torch.ones(3))})
    # a bare data.pkl (protocol-2 opcodes; the target archives it with fixed storages): {"t": a [4, 4]
    # tensor over storage "0" of 16 floats}
    pkl = (b"\x80\x02}X\x01\x00\x00\x00tctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\n"
           b"FloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x10tQK\x00K\x04K\x04\x86K\x04K\x01\x86"
           b"\x89ccollections\nOrderedDict\n)RtRs.")
    put("torch_pickle", "bare-pickle", pkl)


# ------------------------------------------------------------------------------------------- ONNX
def onnx_seeds() -> None:
    from onnx import TensorProto, helper, numpy_helper

    reset("onnx")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.arange(18, dtype=np.float32).reshape(3, 3, 2) / 10, "w")
    q = helper.make_tensor("q", TensorProto.INT8, [4], [1, -2, 3, -4])
    s = helper.make_tensor("s", TensorProto.FLOAT, [], [0.5])
    i64 = helper.make_tensor("shape", TensorProto.INT64, [2], [1, -1])
    h = helper.make_tensor("h", TensorProto.FLOAT16, [2], np.array([1.5, -2], np.float16).view(np.uint16).tolist())
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[2], pads=[0, 1], strides=[1],
                         dilations=[1], group=1),
        helper.make_node("LeakyRelu", ["c"], ["r"], alpha=0.2),
        helper.make_node("DequantizeLinear", ["q", "s"], ["dq"]),
        helper.make_node("Reshape", ["r", "shape"], ["flat"]),
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.ones(2, np.float32))),
        helper.make_node("Custom", ["flat"], ["y"], domain="com.example", mode="x", values=[1.0, 2.0], names=["a", "b"]),
    ]
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [y])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [y])
    nodes.append(helper.make_node("If", ["cond"], ["z"], then_branch=then, else_branch=other))
    g = helper.make_graph(nodes, "g", [x], [y], initializer=[w, q, s, i64, h])
    put("onnx", "every-kind.onnx", helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    g2 = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
    put("onnx", "relu.onnx", helper.make_model(g2).SerializeToString())


# -------------------------------------------------------------------------------- pronunciations
def pronunciation_seeds() -> None:
    reset("pronunciations")
    put("pronunciations", "ok.json", '{"Kokoro": "kˈOkəɹO", "vox": "vˈɑks"}'.encode())
    put("pronunciations", "bad-symbol.json", '{"Kokoro": "kokoro9"}'.encode())
    put("pronunciations", "bad-word.json", '{"two words": "tˈu"}'.encode())
    put("pronunciations", "not-object.json", b'["a"]')
    put("pronunciations", "nested.json", b'{"a": {"b": [1, 2, {"c": null}]}}')
    put("pronunciations", "escapes.json", '{"caf\\u00e9": "kæfˈA", "\\ud83d\\ude00": "smIl"}'.encode())


# ------------------------------------------------------------------------------------------ audio
def audio_seeds() -> None:
    import soundfile as sf

    reset("audio")
    t = np.arange(200) / 16000
    mono = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    stereo = np.stack([mono, -mono], 1)
    kinds = [("pcm16.wav", "WAV", "PCM_16", mono), ("pcm24.wav", "WAV", "PCM_24", mono),
             ("pcm32.wav", "WAV", "PCM_32", mono), ("float.wav", "WAV", "FLOAT", mono),
             ("double.wav", "WAV", "DOUBLE", mono), ("u8.wav", "WAV", "PCM_U8", mono),
             ("ulaw.wav", "WAV", "ULAW", mono), ("alaw.wav", "WAV", "ALAW", mono),
             ("adpcm.wav", "WAV", "IMA_ADPCM", mono), ("stereo.wav", "WAV", "PCM_16", stereo),
             ("wavex.wav", "WAVEX", "PCM_16", stereo), ("rf64.wav", "RF64", "PCM_16", mono),
             ("w64.wav", "W64", "PCM_16", mono), ("aiff.aiff", "AIFF", "PCM_16", mono),
             ("flac.flac", "FLAC", "PCM_16", mono), ("ogg.ogg", "OGG", "VORBIS", mono),
             ("mp3.mp3", "MP3", "MPEG_LAYER_III", np.tile(mono, 8))]
    for name, fmt, sub, x in kinds:
        b = io.BytesIO()
        try:
            sf.write(b, x, 16000, format=fmt, subtype=sub)
        except (RuntimeError, ValueError, TypeError) as e:
            print(f"audio seed {name}: {e}", file=sys.stderr)
            continue
        put("audio", name, b.getvalue())
    wav = (SEEDS / "audio" / "seed-pcm16.wav").read_bytes()
    put("audio", "header-only.wav", wav[:44])
    put("audio", "odd-chunks.wav", wav[:12] + b"LIST\x05\x00\x00\x00abcde\x00" + wav[12:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kokoro-model", type=Path, default=Path.home() / ".cache/vox/models/kokoro-v1.0-f32.tmod")
    a = ap.parse_args()
    tmod_seeds()
    json_seeds()
    utf8_seeds()
    kokoro_seeds(a.kokoro_model if a.kokoro_model.is_file() else None)
    tokenizer_seeds()
    torch_seeds()
    onnx_seeds()
    pronunciation_seeds()
    audio_seeds()
    with tempfile.TemporaryDirectory() as d:
        tvoice_seeds(qwen3_model(Path(d)))
    for t in sorted(p.name for p in SEEDS.iterdir()):
        files = list((SEEDS / t).iterdir())
        print(f"{t}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
