"""WS /v1/duplex with the `websockets` client against a real server process (Engine.duplex behind
it): the protocol of docs/server.md (start, text / set_text / flush / end / cancel, binary PCM frames,
done and error events, close codes), the audio it carries (Kokoro's stream is exact: commit "auto"
without a flush or a pause, and "manual" ended once, speak the final text as synthesize() does),
cancelling, a client that leaves, the session limit. The API key on the socket is checked in
test_server_limits.py."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

import vox
from server_harness import VoxServer, s16, tracebacks

TEXT = "Hello there, typed live."
SEED = 9
LONG = " ".join(f"Sentence {w} of a text that is cancelled." for w in ("one", "two", "three", "four", "five", "six"))


@pytest.fixture(scope="module")
def kokoro(kokoro_tmod):
    return kokoro_tmod("f32")


@pytest.fixture(scope="module")
def server(kokoro, tmp_path_factory):
    args = ["--model", f"kokoro={kokoro}", "--voices", str(tmp_path_factory.mktemp("duplex")), "--max-sessions", "1"]
    with VoxServer(args) as srv:
        yield srv
        assert not tracebacks(srv.log()), srv.log()


@pytest.fixture(scope="module")
def expected(kokoro):
    with vox.Engine(kokoro) as eng:
        return s16(eng.synthesize(TEXT, eng.speaker_voice("jm_kumo"), seed=SEED))


@pytest.fixture(scope="module")
def expected_words(kokoro):
    """The words of TEXT and when they are spoken (the family's timestamps)."""
    with vox.Engine(kokoro) as eng:
        _, words = eng.synthesize(TEXT, eng.speaker_voice("jm_kumo"), seed=SEED, timestamps=True)
    return [{"word": w["word"], "start": round(w["start"], 4), "end": round(w["end"], 4)} for w in words]


def _ws(server):
    return connect(server.url.replace("http://", "ws://") + "/v1/duplex", open_timeout=30, max_size=None)


def _start(ws, **kw) -> dict:
    ws.send(json.dumps({"type": "start", "model": "kokoro", "voice": "jm_kumo", "commit": "manual", "seed": SEED, **kw}))
    return json.loads(ws.recv(timeout=60))


def _collect(ws, timeout: float = 120) -> tuple[np.ndarray, list[dict], int]:
    """(the PCM frames received, the JSON events, the close code) until the server closes."""
    pcm, events = [], []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            m = ws.recv(timeout=deadline - time.monotonic())
            if isinstance(m, bytes):
                pcm.append(np.frombuffer(m, "<i2"))
            else:
                events.append(json.loads(m))
    except ConnectionClosed:
        pass
    code = ws.protocol.close_rcvd.code if ws.protocol.close_rcvd else None
    return (np.concatenate(pcm) if pcm else np.zeros(0, np.int16)), events, code


def _first_audio(ws) -> bytes:
    """The first binary frame (JSON events before it, such as words, are passed over)."""
    while True:
        m = ws.recv(timeout=60)
        if isinstance(m, bytes):
            return m


def _idle(server, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while server.health()["active_sessions"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.health()["active_sessions"] == 0


def test_typing_then_end_speaks_the_final_text(server, expected, expected_words):
    with _ws(server) as ws:
        started = _start(ws)
        assert started == {"type": "started", "model": "kokoro", "voice": "jm_kumo", "sample_rate": 24000,
                           "format": "pcm_s16le", "channels": 1, "commit": "manual"}
        for typed in ("Hel", "Hello th", "Hello there, typd", "Hello there, typed live."):   # a typing box
            ws.send(json.dumps({"type": "set_text", "text": typed}))
        ws.send(json.dumps({"type": "end"}))
        pcm, events, code = _collect(ws)
    assert np.array_equal(pcm, expected)
    assert events[-1] == {"type": "done", "samples": expected.size, "seconds": round(expected.size / 24000, 4),
                          "cancelled": False}
    words = [w for e in events if e["type"] == "words" for w in e["words"]]
    assert words == expected_words
    assert code == 1000
    _idle(server)


@pytest.mark.parametrize("commit", ["auto", "manual"])
def test_text_pieces_and_a_bad_message_between_them(server, expected, commit):
    with _ws(server) as ws:
        assert _start(ws, commit=commit)["commit"] == commit
        ws.send(json.dumps({"type": "text", "text": "Hello there, "}))
        ws.send(json.dumps({"type": "shout"}))                      # an error event; the session goes on
        ws.send("not json")
        ws.send(json.dumps({"type": "text", "text": 5}))
        ws.send(json.dumps({"type": "text", "text": "typed live."}))
        ws.send(json.dumps({"type": "end"}))
        pcm, events, code = _collect(ws)
    errors = [e for e in events if e["type"] == "error"]
    assert [e["code"] for e in errors] == ["invalid_message", "invalid_json", "invalid_type"], errors
    assert all(e["status"] == 400 and e["message"] for e in errors)
    assert np.array_equal(pcm, expected) and events[-1]["type"] == "done" and code == 1000


def test_cancel_stops_the_audio(server):
    with _ws(server) as ws:
        _start(ws)
        ws.send(json.dumps({"type": "text", "text": LONG}))
        ws.send(json.dumps({"type": "flush"}))
        first = _first_audio(ws)
        assert len(first) > 0
        ws.send(json.dumps({"type": "cancel"}))
        pcm, events, code = _collect(ws)
    done = events[-1]
    assert done["type"] == "done" and done["cancelled"] is True and code == 1000
    assert done["samples"] == (len(first) // 2) + pcm.size
    assert done["samples"] < 6 * 24000          # six sentences would be far longer than this
    _idle(server)


def test_a_client_that_leaves_frees_its_session(server):
    ws = _ws(server)
    _start(ws)
    ws.send(json.dumps({"type": "text", "text": LONG}))
    ws.send(json.dumps({"type": "flush"}))
    assert len(_first_audio(ws)) > 0
    ws.socket.close()                            # gone, without a close handshake
    _idle(server)


def test_start_errors_and_the_session_limit(server):
    cases = [({"type": "text", "text": "hi"}, 4400, "invalid_message"),
             ({"type": "start", "commit": "whenever"}, 4400, "invalid_value"),
             ({"type": "start", "voice": "nobody"}, 4404, "voice_not_found"),
             ({"type": "start", "model": "nope"}, 4404, "model_not_found"),
             ({"type": "start", "idle_ms": -1}, 4400, "invalid_value"),
             ({"type": "start", "speed": 9}, 4400, "invalid_value"),
             ({"type": "start", "colour": 1}, 4400, "unknown_parameter")]
    for msg, close, code in cases:
        with _ws(server) as ws:
            ws.send(json.dumps(msg))
            pcm, events, got = _collect(ws, 30)
        assert got == close and events and events[0]["type"] == "error" and events[0]["code"] == code, (msg, events)
    with _ws(server) as a:
        assert _start(a)["type"] == "started"              # holds the only session
        with _ws(server) as b:
            ev = _start(b)
            assert ev["type"] == "error" and ev["status"] == 429 and ev["code"] == "session_limit"
            _, _, code = _collect(b, 30)
            assert code == 4429
        a.send(json.dumps({"type": "cancel"}))
        _collect(a)
    _idle(server)
