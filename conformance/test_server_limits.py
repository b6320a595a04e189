"""`vox serve` under misuse and load, as a real process: the API key, malformed and out-of-range
requests (OpenAI-style 4xx, never a 500 or a traceback), body limits, 429 above --max-sessions,
streaming that starts before the text is done, a client that disconnects mid-stream cancelling its
session within a chunk, and voice uploads (limits, names that try to leave --voices, nothing
half-written after a failure)."""

from __future__ import annotations

import io
import json
import socket
import time
from pathlib import Path

import httpx
import numpy as np
import openai
import pytest
import soundfile as sf

import vox
from server_harness import ROOT, VoxServer, tracebacks

KEY = "test-key-123"
AUDIO = ROOT / "fixtures" / "audio"
REF_TEXT = "The quick brown fox jumps over the lazy dog, while seven kind rabbits watch quietly."
# eight sentences: Kokoro makes one chunk per sentence, so a stream of this has eight chunks
LONG = " ".join(f"This is sentence number {w} of a longer text." for w in
                ("one", "two", "three", "four", "five", "six", "seven", "eight"))
MAX_UPLOAD = 250_000
MAX_SECONDS = 6.0


@pytest.fixture(scope="module")
def models(kokoro_tmod, qwen3_tmod):
    return {"kokoro": kokoro_tmod("f32"), "base": qwen3_tmod("base06")}


@pytest.fixture(scope="module")
def voices_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("limits") / "voices"


@pytest.fixture(scope="module")
def server(models, voices_dir):
    args = [a for n, p in models.items() for a in ("--model", f"{n}={p}")]
    args += ["--voices", str(voices_dir), "--max-sessions", "1", "--max-input-chars", "600",
             "--max-body-bytes", "8192", "--max-upload-bytes", str(MAX_UPLOAD), "--max-upload-seconds", str(MAX_SECONDS)]
    with VoxServer(args, api_key=KEY) as srv:
        yield srv
        assert not tracebacks(srv.log()), srv.log()


@pytest.fixture(scope="module")
def http(server):
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {KEY}"}, timeout=120) as c:
        yield c


def _error(r: httpx.Response, status: int, param=None, code=None) -> dict:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}, body
    e = body["error"]
    assert e["message"] and "Traceback" not in e["message"], e
    assert e["type"] == ("invalid_request_error" if status < 500 and status != 429 else
                         "rate_limit_error" if status == 429 else "server_error"), e
    if param is not None:
        assert e["param"] == param, e
    if code is not None:
        assert e["code"] == code, e
    return e


# ------------------------------------------------------------------------------ the API key
def test_api_key(server, http):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": KEY}, {"Authorization": "Basic " + KEY}):
        r = httpx.post(server.url + "/v1/audio/speech", json={"input": "Hi."}, headers=headers)
        _error(r, 401, code="invalid_api_key")
        assert r.headers["www-authenticate"] == "Bearer"
    assert httpx.get(server.url + "/health").status_code == 200      # health and the page need no key
    assert httpx.get(server.url + "/").status_code == 200
    bad = openai.OpenAI(base_url=server.url + "/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()
    good = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)
    assert {m.id for m in good.models.list().data} == {"kokoro", "base"}


# ------------------------------------------------------------------------------ bad requests
BAD = [
    ('{"input": "x"', 400, None, "invalid_json"),
    ("[1, 2]", 400, None, "invalid_request"),
    ('"just a string"', 400, None, "invalid_request"),
    ({}, 400, "input", "missing_parameter"),
    ({"input": 5}, 400, "input", "invalid_type"),
    ({"input": None}, 400, "input", "invalid_type"),
    ({"input": ""}, 400, "input", "empty_input"),
    ({"input": " \n\t "}, 400, "input", "empty_input"),
    ({"input": "x" * 601}, 400, "input", "string_above_max_length"),
    ({"input": "a\u0007b"}, 400, "input", "invalid_value"),
    ({"input": "Hi.", "model": "gpt-9"}, 404, "model", "model_not_found"),
    ({"input": "Hi.", "model": 3}, 400, "model", "invalid_type"),
    ({"input": "Hi.", "voice": "nobody"}, 404, "voice", "voice_not_found"),
    ({"input": "Hi.", "voice": 7}, 400, "voice", "invalid_type"),
    ({"input": "Hi.", "voice": "jm_kumo(0)+jf_alpha"}, 400, "voice", "invalid_argument"),
    ({"input": "Hi.", "voice": "jm_kumo+nobody"}, 400, "voice", "invalid_argument"),
    ({"input": "Hi.", "response_format": "aac"}, 400, "response_format", "unsupported_format"),
    ({"input": "Hi.", "response_format": "ogg"}, 400, "response_format", "invalid_value"),
    ({"input": "Hi.", "response_format": 1}, 400, "response_format", "invalid_type"),
    ({"input": "Hi.", "speed": 0.1}, 400, "speed", "invalid_value"),
    ({"input": "Hi.", "speed": 4.5}, 400, "speed", "invalid_value"),
    ({"input": "Hi.", "speed": "fast"}, 400, "speed", "invalid_type"),
    ({"input": "Hi.", "speed": True}, 400, "speed", None),
    ({"input": "Hi.", "model": "base", "speed": 1.5}, 400, "speed", "unsupported"),
    ({"input": "Hi.", "stream_format": "chunks"}, 400, "stream_format", None),
    ({"input": "Hi.", "seed": -1}, 400, "seed", "invalid_value"),
    ({"input": "Hi.", "seed": 2**64}, 400, "seed", "invalid_value"),
    ({"input": "Hi.", "seed": "1"}, 400, "seed", "invalid_type"),
    ({"input": "Hi.", "options": {"pause_ms": -1}}, 400, "options", "invalid_value"),
    ({"input": "Hi.", "options": {"temperature": 0.5}}, 400, "options", "invalid_value"),
    ({"input": "Hi.", "options": []}, 400, "options", None),
    ({"input": "Hi.", "instructions": "slowly"}, 400, "instructions", "unsupported"),
    ({"input": "Hi.", "model": "base"}, 400, "voice", "invalid_argument"),       # a Base model needs a voice
    ({"input": "Hi.", "frobnicate": 1}, 400, "frobnicate", "unknown_parameter"),
]


@pytest.mark.parametrize("body,status,param,code", BAD, ids=[f"case{i}" for i in range(len(BAD))])
def test_bad_request(http, body, status, param, code):
    kw = {"content": body} if isinstance(body, str) else {"json": body}
    r = http.post("/v1/audio/speech", headers={"Content-Type": "application/json"}, **kw)
    _error(r, status, param, code)


def test_bodies_and_routes(http, server):
    _error(http.post("/v1/audio/speech", json={"input": "x" * 9000}), 413, code="request_too_large")

    def chunks():                     # no Content-Length: the limit is counted as the body arrives
        for _ in range(10):
            yield b'{"input": "' + b"y" * 1000
    _error(http.post("/v1/audio/speech", content=chunks(), headers={"Content-Type": "application/json"}), 413)
    _error(http.post("/v1/audio/speech", content=b"input=hi", headers={"Content-Type": "text/plain"}), 400)
    _error(http.get("/v1/nothing"), 404, code="not_found")
    _error(http.get("/v1/audio/speech"), 405)
    _error(http.get("/v1/models/nope"), 404, code="model_not_found")
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)
    with pytest.raises(openai.BadRequestError) as e:
        client.audio.speech.create(model="kokoro", voice="jm_kumo", input="", response_format="wav")
    assert e.value.body["code"] == "empty_input"
    with pytest.raises(openai.NotFoundError):
        client.audio.speech.create(model="kokoro", voice="nobody", input="Hi.")


# ------------------------------------------------------------------------------ streaming, 429, cancel
def _metric(server, name: str) -> float:
    return server.metrics().get(name, 0.0)


def test_streams_early_429_above_max_sessions_and_disconnect_cancels(server, http):
    """One long stream holds the only session: its first audio arrives while the rest of the text is
    still being made (the session is still running: a second request is refused with 429 and a
    Retry-After); when the client disconnects, its session is cancelled within a chunk (far fewer
    chunks are computed than the text has), the slot frees, and a new request is served."""
    chunks0 = _metric(server, "vox_server_chunks_total")
    after0 = _metric(server, "vox_server_chunks_after_cancel_total")
    cancelled0 = _metric(server, 'vox_server_cancelled_total{reason="disconnect"}')
    first_sentence = 0
    with http.stream("POST", "/v1/audio/speech", json={"input": LONG, "voice": "jm_kumo", "response_format": "pcm"}) as r:
        assert r.status_code == 200 and r.headers["transfer-encoding"] == "chunked"
        it = r.iter_raw()
        got = next(it)
        assert len(got) > 0
        # the stream has begun and the session still runs: the only slot is taken
        busy = httpx.post(server.url + "/v1/audio/speech", json={"input": "Hi."},
                          headers={"Authorization": f"Bearer {KEY}"})
        _error(busy, 429, code="session_limit")
        assert int(busy.headers["retry-after"]) >= 1
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)
        with pytest.raises(openai.RateLimitError):
            client.audio.speech.create(model="kokoro", voice="jm_kumo", input="Hi.")
        assert server.health()["active_sessions"] == 1
        first_sentence = len(got)
    # leaving the with-block closes the connection mid-stream
    assert server.wait_metric('vox_server_cancelled_total{reason="disconnect"}', cancelled0 + 1) == cancelled0 + 1
    made = _metric(server, "vox_server_chunks_total") - chunks0
    # the first chunk, at most one computed ahead of the client, at most the one under way when it left
    assert 1 <= made <= 3, made
    assert _metric(server, "vox_server_chunks_after_cancel_total") - after0 <= 1
    deadline = time.monotonic() + 30
    while server.health()["active_sessions"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.health()["active_sessions"] == 0
    r = http.post("/v1/audio/speech", json={"input": "Hi.", "response_format": "wav"})
    assert r.status_code == 200 and first_sentence > 0


def test_client_that_leaves_before_the_first_audio(server):
    """A client gone before its first chunk is ready: the session is cancelled, nothing is streamed."""
    cancelled0 = _metric(server, 'vox_server_cancelled_total{reason="disconnect"}')
    body = json.dumps({"input": LONG, "voice": "jm_kumo", "response_format": "pcm"}).encode()
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as s:
        s.sendall(b"POST /v1/audio/speech HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  + f"Authorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    assert server.wait_metric('vox_server_cancelled_total{reason="disconnect"}', cancelled0 + 1) == cancelled0 + 1
    deadline = time.monotonic() + 30
    while server.health()["active_sessions"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.health()["active_sessions"] == 0


# ------------------------------------------------------------------------------ voice uploads
def _wav(x: np.ndarray, sr: int, subtype: str = "PCM_16", fmt: str = "WAV") -> bytes:
    b = io.BytesIO()
    sf.write(b, x, sr, subtype=subtype, format=fmt)
    return b.getvalue()


def _upload(http, name, data: bytes | None, text: str | None = REF_TEXT, **fields):
    parts = {k: (None, v) for k, v in {"name": name, "text": text, **fields}.items() if v is not None}
    if data is not None:
        parts["file"] = ("rec.wav", data, "audio/wav")
    return http.post("/v1/voices", files=parts)          # always multipart/form-data


def _listing(voices_dir: Path) -> list[str]:
    return sorted(p.name for p in voices_dir.iterdir()) if voices_dir.exists() else []


def test_voice_uploads(http, server, voices_dir, models, tmp_path):
    ref, sr = sf.read(AUDIO / "ref_en_16k.wav", dtype="float32")            # 5.8 s: within the limit
    ok = (AUDIO / "ref_en_16k.wav").read_bytes()
    before = _listing(voices_dir)
    # names that are not plain file names inside --voices
    for name in ("../evil", "a/b", "..", ".hidden", "", "x" * 65, "default", "név", "a b", "evil.tvoice", "/abs"):
        _error(_upload(http, name, ok), 400, param="name", code="invalid_name")
    # the recording
    _error(_upload(http, "big", b"\0" * (MAX_UPLOAD + 1000)), 413, code="request_too_large")
    long = np.tile(ref, 2)[: int(7 * sr)]                                      # 7 s, FLAC: small but too long
    _error(_upload(http, "long", _wav(long, sr, fmt="FLAC")), 400, param="file", code="invalid_audio")
    _error(_upload(http, "short", _wav(ref[: sr // 5], sr)), 400, param="file", code="invalid_audio")
    _error(_upload(http, "noise", b"this is not audio" * 100), 400, param="file", code="invalid_audio")
    nan = ref[: 2 * sr].copy()
    nan[100] = np.nan
    _error(_upload(http, "nan", _wav(nan, sr, "FLOAT")), 400, param="file", code="invalid_audio")
    _error(_upload(http, "empty", b""), 400, param="file")
    _error(_upload(http, "notext", ok, text=None), 400, param="text", code="missing_parameter")
    _error(_upload(http, "nofile", None), 400, param="file", code="missing_parameter")
    _error(_upload(http, "kok", ok, model="kokoro"), 400, param="model", code="unsupported")
    _error(_upload(http, "seed", ok, seed="x"), 400, param="seed", code="invalid_type")
    _error(_upload(http, "extra", ok, colour="blue"), 400, code="unknown_parameter")
    _error(http.post("/v1/voices", json={"name": "x"}), 415)
    # a client that leaves in the middle of its upload
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as s:
        s.sendall(b"POST /v1/voices HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
                  + f"Authorization: Bearer {KEY}\r\nContent-Length: 200000\r\n\r\n".encode()
                  + b'--B\r\nContent-Disposition: form-data; name="name"\r\n\r\ncut\r\n--B\r\nContent-Disposition: '
                    b'form-data; name="file"; filename="a.wav"\r\n\r\n' + ok[:50000])
    time.sleep(0.5)
    assert _listing(voices_dir) == before                 # every failure left nothing in --voices
    # a good one: made natively by clone_voice, the same voice this process makes
    r = _upload(http, "mine", ok, seed="11")
    assert r.status_code == 201, r.text
    info = r.json()
    assert info["id"] == "mine" and info["model"] == "base" and info["family"] == "qwen3_tts"
    assert _listing(voices_dir) == sorted(before + ["mine.tvoice"])
    with vox.Engine(models["base"]) as eng:
        want = eng.clone_voice((ref, sr), REF_TEXT, name="mine", seed=11)
        got = eng.load_voice(voices_dir / "mine.tvoice")
        assert got.mode == want.mode == "icl" and got.info["defaults"] == want.info["defaults"]
        for k, a in want.arrays.items():
            assert np.array_equal(got.array(k), a), k
    _error(_upload(http, "mine", ok), 409, param="name", code="voice_exists")
    listed = {v["id"]: v for v in http.get("/v1/voices").json()["data"] if v["kind"] == "stored"}
    assert listed["mine"]["models"] == ["base"] and listed["mine"]["mode"] == "icl"
    r = http.post("/v1/audio/speech", json={"model": "base", "voice": "mine", "input": "Hi.", "response_format": "wav",
                                            "options": {"max_new_tokens": 6}})
    assert r.status_code == 200 and len(r.content) > 44
    _error(http.post("/v1/audio/speech", json={"model": "kokoro", "voice": "mine", "input": "Hi."}), 400)
    # deleting: only names, never paths
    outside = voices_dir.parent / "outside.tvoice"
    outside.write_bytes(b"keep me")
    for path in ("/v1/voices/..%2Foutside", "/v1/voices/%2E%2E%2Foutside", "/v1/voices/..", "/v1/voices/.mine"):
        r = http.delete(path)
        assert r.status_code in (400, 404), (path, r.status_code)
        assert r.json()["error"]["message"]
    assert outside.read_bytes() == b"keep me"
    _error(http.delete("/v1/voices/nobody"), 404, code="voice_not_found")
    assert http.delete("/v1/voices/mine").json() == {"id": "mine", "object": "voice", "deleted": True}
    assert _listing(voices_dir) == before


# ------------------------------------------------------------------------------ the key on the WebSocket
def test_websocket_needs_the_key(server):
    from websockets.sync.client import connect

    url = server.url.replace("http://", "ws://") + "/v1/duplex"

    def start(extra_headers=None, **kw):
        with connect(url, additional_headers=extra_headers, open_timeout=30) as ws:
            ws.send(json.dumps({"type": "start", "voice": "jm_kumo", **kw}))
            first = json.loads(ws.recv(timeout=60))
            if first["type"] == "started":
                ws.send(json.dumps({"type": "end"}))
            rest = []
            try:
                while True:
                    rest.append(ws.recv(timeout=60))
            except Exception:
                pass
            return first, rest, ws.protocol.close_rcvd.code if ws.protocol.close_rcvd else None

    first, _, code = start()
    assert first["type"] == "error" and first["status"] == 401 and first["code"] == "invalid_api_key" and code == 4401
    first, _, code = start(api_key="wrong")
    assert first["status"] == 401 and code == 4401
    for kw in ({"api_key": KEY}, {"extra_headers": {"Authorization": f"Bearer {KEY}"}}):
        first, rest, code = start(**kw)
        assert first["type"] == "started", first
        assert json.loads(rest[-1]) == {"type": "done", "samples": 0, "seconds": 0.0, "cancelled": False}
        assert code == 1000
