"""`vox serve` through clients nobody here wrote: OpenAI's Python package and curl (the examples of
docs/server.md, run as written) against a real server process on a loopback port.

What comes back is decoded (soundfile / libsndfile) and compared with the audio vox makes in this
process for the same text, voice and seed (vox.Engine.synthesize): the lossless formats (pcm, wav,
flac) must be those 16-bit samples exactly; the lossy ones (mp3, opus) must match their shape
(normalized correlation after the codec's delay) far better than another voice's audio does.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vox
from server_harness import ROOT, VoxServer, best_alignment, decode, s16, tracebacks

from openai import OpenAI

DOCS = ROOT / "docs" / "server.md"
TEXT = "Hello there. This is vox."
SEED = 5
REF = ROOT / "fixtures" / "audio" / "ref_en_24k.wav"


def _blocks(lang: str) -> list[str]:
    return re.findall(r"^```" + lang + r"\n(.*?)^```", DOCS.read_text(), flags=re.S | re.M)


@pytest.fixture(scope="module")
def models(kokoro_tmod, qwen3_tmod):
    return {"kokoro": kokoro_tmod("f32"), "base": qwen3_tmod("base06"), "custom": qwen3_tmod("custom17"),
            "design": qwen3_tmod("design17")}


@pytest.fixture(scope="module")
def server(models, tmp_path_factory):
    d = tmp_path_factory.mktemp("serve")
    vmap = d / "voices.json"
    vmap.write_text(_blocks("json")[0])          # the voice map of docs/server.md, as written
    args = [a for name, p in models.items() for a in ("--model", f"{name}={p}")]
    # one worker: a new request overtakes a long one only because sessions take turns chunk by chunk
    with VoxServer(args + ["--voices", str(d / "voices"), "--voice-map", str(vmap), "--workers", "1"]) as srv:
        yield srv
        assert not tracebacks(srv.log()), srv.log()


@pytest.fixture(scope="module")
def client(server):
    return OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0)


@pytest.fixture(scope="module")
def kokoro(models):
    with vox.Engine(models["kokoro"]) as e:
        yield e


@pytest.fixture(scope="module")
def expected(kokoro):
    """The 16-bit audio of TEXT by jm_kumo at SEED, made in this process."""
    return s16(kokoro.synthesize(TEXT, kokoro.speaker_voice("jm_kumo"), seed=SEED))


@pytest.fixture(scope="module")
def other(kokoro):
    """A negative control: the same text by another voice."""
    return s16(kokoro.synthesize(TEXT, kokoro.speaker_voice("jf_alpha"), seed=SEED))


def test_models(client, server):
    got = {m.id: m for m in client.models.list().data}
    assert set(got) == {"kokoro", "base", "custom", "design"}
    k = got["kokoro"].model_dump()
    assert k["family"] == "kokoro" and k["sample_rate"] == 24000 and "jm_kumo" in k["speakers"]
    assert "tts-1" in k["aliases"] and "gpt-4o-mini-tts" in k["aliases"]   # the first model is the default
    assert client.models.retrieve("tts-1").id == "kokoro"


@pytest.mark.parametrize("fmt", ["pcm", "wav", "flac", "mp3", "opus"])
def test_every_format_is_the_audio_vox_makes(client, fmt, expected, other):
    r = client.audio.speech.create(model="kokoro", voice="jm_kumo", input=TEXT, response_format=fmt,
                                   extra_body={"seed": SEED})
    got, sr = decode(r.content, fmt)
    assert sr == 24000
    if fmt in ("pcm", "wav", "flac"):
        assert got.shape == expected.shape and np.array_equal(got, expected), fmt
        return
    lag, corr = best_alignment(got, expected)
    _, corr_other = best_alignment(got, other)
    # measured here: mp3 0.9999 at lag 1105 (LAME's delay), opus 0.989 at lag 0; the other voice 0.07
    assert corr > 0.97 and corr_other < 0.5, (fmt, lag, corr, corr_other)
    assert abs(len(got) - lag - len(expected)) < 2400, (len(got), lag, len(expected))   # within a frame or so


def test_streaming_response_is_chunked_and_the_same_audio(client, expected):
    with client.audio.speech.with_streaming_response.create(model="tts-1", voice="jm_kumo", input=TEXT,
                                                            response_format="pcm", extra_body={"seed": SEED}) as r:
        assert r.headers.get("transfer-encoding") == "chunked" and "content-length" not in r.headers
        assert r.headers["content-type"] == "audio/pcm" and r.headers["x-sample-rate"] == "24000"
        assert r.headers["x-vox-seed"] == str(SEED)
        body = b"".join(r.iter_bytes(4096))
    assert np.array_equal(np.frombuffer(body, "<i2"), expected)


def test_sse_events(client, expected, kokoro):
    with client.audio.speech.with_streaming_response.create(model="kokoro", voice="jm_kumo", input=TEXT,
                                                            response_format="pcm", stream_format="sse",
                                                            extra_body={"seed": SEED}) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[len("data: "):]) for line in r.iter_lines() if line.startswith("data: ")]
    words = [w for e in events[:-1] for w in e.get("words", [])]
    _, want_words = kokoro.synthesize(TEXT, kokoro.speaker_voice("jm_kumo"), seed=SEED, timestamps=True)
    assert words == [{"word": w["word"], "start": round(w["start"], 4), "end": round(w["end"], 4)} for w in want_words]
    assert [w["word"] for w in words] == ["Hello", "there", "This", "is", "vox"]
    types = [e["type"] for e in events]
    assert types[-1] == "speech.audio.done" and set(types[:-1]) == {"speech.audio.delta"} and len(types) >= 3
    pcm = b"".join(base64.b64decode(e["audio"]) for e in events[:-1])
    assert np.array_equal(np.frombuffer(pcm, "<i2"), expected)
    usage = events[-1]["usage"]
    assert usage["input_tokens"] == len(TEXT) and usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def _pcm(client, **kw) -> np.ndarray:
    r = client.audio.speech.create(model=kw.pop("model", "kokoro"), input=kw.pop("input", TEXT),
                                   voice=kw.pop("voice"), response_format="pcm", **kw)
    return np.frombuffer(r.content, "<i2")


def test_default_alias_and_blend_voices(client, server, kokoro, expected, tmp_path):
    assert np.array_equal(_pcm(client, voice="default", extra_body={"seed": SEED}), expected)   # jm_kumo
    assert np.array_equal(_pcm(client, voice="JM_KUMO", extra_body={"seed": SEED}), expected)
    assert np.array_equal(_pcm(client, voice={"id": "jm_kumo"}, extra_body={"seed": SEED}), expected)  # OpenAI's form
    # the docs' voice map: alloy -> jf_alpha, narrator -> a blend
    want = s16(kokoro.synthesize(TEXT, kokoro.speaker_voice("jf_alpha"), seed=SEED))
    assert np.array_equal(_pcm(client, voice="alloy", extra_body={"seed": SEED}), want)
    listed = {(v["id"], v["kind"]): v for v in _get(server, "/v1/voices?model=kokoro")["data"]}
    assert listed[("narrator", "alias")]["target"] == "jm_kumo(2)+jf_alpha(1)"
    assert listed[("default", "default")]["target"] == "jm_kumo"
    # a blend is the weighted sum of the packs, weights normalized (Kokoro-FastAPI's notation)
    from vox.families.kokoro.convert import style_voice
    from vox.formats.tvoice import write_voice

    a = kokoro.speaker_voice("jm_kumo").array("style_pack").astype(np.float64)
    b = kokoro.speaker_voice("jf_alpha").array("style_pack").astype(np.float64)
    pack = (2 / 3 * a + 1 / 3 * b).astype(np.float32)
    path = tmp_path / "blend.tvoice"
    write_voice(path, style_voice(pack, "blend", model_id=kokoro.info["model_id"]))
    want = s16(kokoro.synthesize(TEXT, kokoro.load_voice(path), seed=SEED))
    assert np.array_equal(_pcm(client, voice="jm_kumo(2)+jf_alpha(1)", extra_body={"seed": SEED}), want)
    assert np.array_equal(_pcm(client, voice="narrator", extra_body={"seed": SEED}), want)
    assert not np.array_equal(want, expected)
    # the docs' map sends base's alloy to my_voice, which does not exist (yet): a 404 that says so
    import openai

    with pytest.raises(openai.NotFoundError) as e:
        client.audio.speech.create(model="base", voice="alloy", input=TEXT)
    assert "maps 'alloy' to 'my_voice'" in e.value.body["message"]


def test_speed_and_options(client, kokoro):
    v = kokoro.speaker_voice("jm_kumo")
    want = s16(kokoro.synthesize(TEXT, v, seed=SEED, speed=1.25, pause_ms=50))
    got = _pcm(client, voice="jm_kumo", speed=1.25, extra_body={"seed": SEED, "options": {"pause_ms": 50}})
    assert np.array_equal(got, want)


def test_instructions_on_customvoice_and_voicedesign(client, models):
    with vox.Engine(models["custom"]) as eng:
        spk = eng.speakers[0]
        want = s16(eng.synthesize(TEXT, eng.speaker_voice(spk, "Speak slowly."), seed=SEED, max_new_tokens=10))
    got = _pcm(client, model="custom", voice=spk, instructions="Speak slowly.",
               extra_body={"seed": SEED, "options": {"max_new_tokens": 10}})
    assert np.array_equal(got, want)
    with vox.Engine(models["design"]) as eng:
        want = s16(eng.synthesize(TEXT, eng.design_voice("A deep, calm voice."), seed=SEED, max_new_tokens=10))
    got = _pcm(client, model="design", voice="alloy", instructions="A deep, calm voice.",
               extra_body={"seed": SEED, "options": {"max_new_tokens": 10}})
    assert np.array_equal(got, want)


def _get(server, path):
    import urllib.request

    with urllib.request.urlopen(server.url + path, timeout=30) as r:
        return json.load(r)


def test_docs_examples_run(server, tmp_path):
    """Every sh block of docs/server.md, and its Python example, against this server: each exits 0;
    a block's `# => JSON` line is what it must print; the audio files they write decode."""
    shutil.copy(REF, tmp_path / "ref.wav")
    host = server.url.removeprefix("http://")
    blocks = _blocks("sh")
    assert len(blocks) >= 7
    for block in blocks:
        script = block.replace("localhost:8080", host)
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, (block, r.stdout[-2000:], r.stderr[-2000:])
        want = re.findall(r"^# => (.*)$", block, flags=re.M)
        if want:
            assert json.loads(r.stdout) == json.loads(want[0]), (block, r.stdout)
    python = _blocks("python")
    assert len(python) == 1
    code = python[0].replace("http://localhost:8080", server.url)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    wrote = {p.name for p in tmp_path.iterdir()}
    assert {"hello.wav", "stream.pcm", "events.txt", "my_voice.flac", "client.flac", "client.wav"} <= wrote, wrote
    for name in ("hello.wav", "my_voice.flac", "client.flac", "client.wav"):
        x, sr = decode((tmp_path / name).read_bytes(), name.rsplit(".", 1)[1])
        assert sr == 24000 and x.size > 0, name
    assert (tmp_path / "stream.pcm").stat().st_size > 24000
    assert "my_voice" not in {v["id"] for v in _get(server, "/v1/voices")["data"]}     # the example deleted it


def test_a_long_stream_does_not_hold_back_a_new_one(client, server):
    """With a single synthesis worker, a short request made while an eight-sentence stream is being
    made is answered, whole, before that stream ends (the worker pulls one chunk at a time, new
    sessions first): interleaving, not a queue of whole requests."""
    import threading

    import httpx

    long = " ".join(f"This is sentence number {i} of a long text." for i in range(1, 9))
    started, done, got = threading.Event(), threading.Event(), []

    def long_stream():
        with httpx.stream("POST", server.url + "/v1/audio/speech", timeout=300,
                          json={"input": long, "voice": "jm_kumo", "response_format": "pcm"}) as r:
            for b in r.iter_bytes():
                got.append(len(b))
                started.set()
        done.set()

    t = threading.Thread(target=long_stream)
    t.start()
    assert started.wait(120)
    short = client.audio.speech.create(model="kokoro", voice="jm_kumo", input="Hi there.", response_format="pcm")
    assert len(short.content) > 0
    overtaken = not done.is_set()
    t.join(300)
    assert overtaken, "the short request waited for the whole long stream"
    assert sum(got) > 8 * 2 * 24000    # and the long one was not cut: eight sentences, more than 8 s


def test_openapi_docs_and_metrics(server):
    import urllib.request

    paths = _get(server, "/openapi.json")["paths"]
    for p in ("/v1/audio/speech", "/v1/models", "/v1/voices", "/v1/voices/{name}", "/health", "/metrics"):
        assert p in paths, p
    with urllib.request.urlopen(server.url + "/docs", timeout=30) as r:
        assert r.status == 200 and b"swagger" in r.read().lower()
    with urllib.request.urlopen(server.url + "/metrics", timeout=30) as r:
        assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    for line in ("# TYPE vox_server_first_audio_seconds histogram", "# TYPE vox_server_requests_total counter",
                 "# TYPE vox_server_active_sessions gauge", "# TYPE vox_engine_samples_produced_total counter"):
        assert line in text, line
    m = server.metrics()
    assert m['vox_server_requests_total{endpoint="/v1/audio/speech",status="200"}'] >= 1
    assert m["vox_server_first_audio_seconds_count"] >= 1
    assert m['vox_server_first_audio_seconds_bucket{le="+Inf"}'] == m["vox_server_first_audio_seconds_count"]
    assert m['vox_engine_samples_produced_total{model="kokoro"}'] > 0
