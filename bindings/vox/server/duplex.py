"""WS /v1/duplex: type text in, hear audio out, at the same time (Engine.duplex over a WebSocket).

Client -> server, JSON text messages:
    {"type": "start", "model", "voice", "commit": "auto"|"sentence"|"manual", "idle_ms", "utterance_gap_ms",
     "on_conflict": "keep"|"raise"|"respeak", "seed", "language", "speed", "instructions", "options",
     "api_key"}                                   first, once (api_key: when the server has one and the
                                                  client cannot send an Authorization header)
    {"type": "text", "text": "..."}               append text                 (duplex.write)
    {"type": "set_text", "text": "..."}           the whole text as typed now (duplex.set_text)
    {"type": "flush"}                             speak what is pending now   (duplex.flush)
    {"type": "end"}                               no more text                (duplex.end)
    {"type": "cancel"}                            stop now                    (duplex.cancel)
Server -> client:
    {"type": "started", "model", "voice", "sample_rate": 24000, "format": "pcm_s16le", "channels": 1, "commit"}
    binary messages: the audio, signed 16-bit little-endian mono PCM at 24 kHz, one per chunk
    {"type": "words", "words": [{"word", "start", "end"}]}  before a chunk's audio, where the family
                                                  gives word timestamps (seconds from the start)
    {"type": "done", "samples": N, "seconds": S, "cancelled": bool}  after the last audio; then the
                                                  server closes the socket (1000)
    {"type": "error", "message", "code", "param", "status"}  a message it could not act on; a fatal one
                                                  (bad start, busy, unauthorized) is followed by a
                                                  close with code 4000 + the HTTP status it stands for
                                                  (4400, 4401, 4404, 4429)

The duplex object comes from Engine.duplex(voice, commit=..., idle_ms=..., utterance_gap_ms=...,
on_conflict=..., seed=..., language=..., **options): write / set_text / flush / end / cancel from any
thread, audio() yielding vox.Chunk (read on a thread of the socket's own), close().
A duplex session holds one of --max-sessions while its socket is open.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any, Callable

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect, WebSocketState

from ..engine import Engine, check_text
from ..errors import InvalidArgument
from .app import bearer_ok, state
from .audio import OPENAI_RATE, to_s16
from .errors import ApiError, from_exception
from .speech import check_seed, synthesis_options
from .timestamps import chunk_words, wants_timestamps

log = logging.getLogger("vox.server")
router = APIRouter()

COMMITS = ("auto", "sentence", "manual")
CONFLICTS = ("keep", "raise", "respeak")
_START_KEYS = {"type", "model", "voice", "commit", "idle_ms", "utterance_gap_ms", "on_conflict", "seed", "language",
               "speed", "instructions", "options", "api_key"}


def default_factory() -> Callable | None:
    """Engine.duplex when this build has it."""
    if not callable(getattr(Engine, "duplex", None)):
        return None
    return lambda engine, voice, **kw: engine.duplex(voice, **kw)


class _Fatal(Exception):
    def __init__(self, err: ApiError):
        self.err = err


async def _send_error(ws: WebSocket, err: ApiError, *, close: bool) -> None:
    if ws.client_state != WebSocketState.CONNECTED:
        return
    try:
        await ws.send_text(json.dumps({"type": "error", "message": err.message, "code": err.code, "param": err.param,
                                       "status": err.status}))
        if close:
            await ws.close(code=4000 + err.status if 400 <= err.status < 600 else 1011, reason=err.code or "")
    except (WebSocketDisconnect, RuntimeError):
        pass


async def _receive_json(ws: WebSocket, timeout: float) -> dict | None:
    """The next message as a JSON object; None when the client left; _Fatal/ApiError for junk."""
    try:
        msg = await asyncio.wait_for(ws.receive(), timeout)
    except asyncio.TimeoutError:
        raise _Fatal(ApiError(408, f"no message for {timeout:g} s", code="idle_timeout")) from None
    if msg["type"] == "websocket.disconnect":
        return None
    raw = msg.get("text")
    if raw is None:
        raise ApiError(400, "send JSON text messages (binary messages go from the server to the client)",
                       code="invalid_message")
    if len(raw) > (1 << 20):
        raise ApiError(413, "message larger than 1 MiB", code="request_too_large")
    try:
        obj = json.loads(raw)
    except ValueError as e:
        raise ApiError(400, f"not a JSON message ({e})", code="invalid_json") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ApiError(400, 'a message is a JSON object with a "type"', code="invalid_message")
    return obj


def _settings(start: dict) -> dict:
    """Engine.duplex's keyword arguments from the start message (checked)."""
    unknown = sorted(set(start) - _START_KEYS)
    if unknown:
        raise ApiError(400, f"unknown start field {unknown[0]!r}", param=unknown[0], code="unknown_parameter")
    commit = start.get("commit", "auto")
    if commit not in COMMITS:
        raise ApiError(400, f"commit must be one of {', '.join(COMMITS)}", param="commit", code="invalid_value")
    conflict = start.get("on_conflict", "keep")
    if conflict not in CONFLICTS:
        raise ApiError(400, f"on_conflict must be one of {', '.join(CONFLICTS)}", param="on_conflict",
                       code="invalid_value")
    kw: dict[str, Any] = {"commit": commit, "on_conflict": conflict}
    for k in ("idle_ms", "utterance_gap_ms"):
        v = start.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 600_000):
            raise ApiError(400, f"{k} must be an integer number of milliseconds in [0, 600000]", param=k,
                           code="invalid_value")
        kw[k] = v
    seed = start.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ApiError(400, "seed must be an integer", param="seed", code="invalid_type")
    kw["seed"] = check_seed(seed)
    lang = start.get("language")
    if lang is not None and not isinstance(lang, str):
        raise ApiError(400, "language must be a string", param="language", code="invalid_type")
    kw["language"] = lang
    return kw


@router.websocket("/v1/duplex")
async def duplex_ws(ws: WebSocket):
    st = state(ws)
    cfg = st.config
    await ws.accept()
    ticket = None
    d = None
    try:
        try:
            start = await _receive_json(ws, 60)
        except ApiError as e:
            raise _Fatal(e) from None
        if start is None:
            return
        if start["type"] != "start":
            raise _Fatal(ApiError(400, 'the first message must be {"type": "start", ...}', code="invalid_message"))
        if cfg.api_key is not None and not bearer_ok(ws.scope, cfg.api_key):
            key = start.get("api_key")
            if not isinstance(key, str) or not bearer_ok({"headers": [(b"authorization", f"Bearer {key}".encode())]},
                                                         cfg.api_key):
                raise _Fatal(ApiError(401, "invalid or missing API key (Authorization: Bearer KEY, or api_key in "
                                           "the start message)", code="invalid_api_key"))
        factory = st.duplex_factory or default_factory()
        if factory is None:
            raise _Fatal(ApiError(501, "duplex streaming is not available in this build of vox (Engine.duplex is "
                                       "missing): use POST /v1/audio/speech", code="unsupported"))
        try:
            kw = _settings(start)
            entry = st.models.get(start.get("model"))
            eng = entry.engine
            if eng.sample_rate != OPENAI_RATE:
                raise ApiError(400, f"the WebSocket sends {OPENAI_RATE} Hz PCM; this model makes {eng.sample_rate} Hz",
                               param="model", code="unsupported")
            opts = synthesis_options(eng, start.get("speed"), start.get("options") if isinstance(
                start.get("options"), dict) or start.get("options") is None else _bad_options())
            voice = await asyncio.to_thread(st.voices.resolve, entry, start.get("voice", "default"),
                                            start.get("instructions"))
        except Exception as e:
            raise _Fatal(from_exception(e)) from None
        try:
            ticket = await st.admission.acquire()
        except ApiError as e:
            raise _Fatal(e) from None
        try:
            if wants_timestamps(eng):
                kw["timestamps"] = True
            d = await asyncio.to_thread(factory, eng, voice, **kw, **opts)
        except Exception as e:
            raise _Fatal(from_exception(e)) from None
        await ws.send_text(json.dumps({"type": "started", "model": entry.id, "voice": voice.name or "default",
                                       "sample_rate": OPENAI_RATE, "format": "pcm_s16le", "channels": 1,
                                       "commit": kw["commit"]}))
        await _run(ws, d, cfg, st)
    except _Fatal as f:
        await _send_error(ws, f.err, close=True)
    except WebSocketDisconnect:
        if d is not None:
            d.cancel()
    finally:
        if d is not None:
            if ws.client_state != WebSocketState.CONNECTED:
                d.cancel()                  # the client is gone: nothing it started may keep computing
            await asyncio.to_thread(_close, d)
        if ticket is not None:
            ticket.release()


def _bad_options():
    raise ApiError(400, "options must be a JSON object", param="options", code="invalid_type")


def _close(d) -> None:
    try:
        d.close()
    except Exception:
        log.exception("closing a duplex session")


async def _audio(d):
    """The duplex object's chunks as an async iterator: audio() on a thread of its own (not aaudio(),
    which waits in the loop's default executor: a few idle duplex sockets would take all of its
    threads, which the rest of the server needs)."""
    loop = asyncio.get_running_loop()
    q: asyncio.Queue = asyncio.Queue()
    end = object()

    def pump():
        try:
            for c in d.audio():
                loop.call_soon_threadsafe(q.put_nowait, c)
        except BaseException as e:
            loop.call_soon_threadsafe(q.put_nowait, e)
        finally:
            loop.call_soon_threadsafe(q.put_nowait, end)

    threading.Thread(target=pump, name="vox-duplex-audio", daemon=True).start()
    while True:
        item = await q.get()
        if item is end:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


async def _run(ws: WebSocket, d, cfg, st) -> None:
    """Read the client's messages into the duplex object while its audio goes out."""
    state_ = {"cancelled": False, "chars": 0, "ended": False}
    sender = asyncio.ensure_future(_send_audio(ws, d, state_))
    try:
        while not sender.done():
            recv = asyncio.ensure_future(_receive_json(ws, cfg.duplex_idle_timeout))
            done, _ = await asyncio.wait({recv, sender}, return_when=asyncio.FIRST_COMPLETED)
            if recv not in done:
                recv.cancel()
                break
            try:
                msg = recv.result()
            except _Fatal as f:
                d.cancel()
                state_["cancelled"] = True
                await _send_error(ws, f.err, close=False)
                break
            except ApiError as e:
                await _send_error(ws, e, close=False)
                continue
            if msg is None:                       # the client left: stop at once
                d.cancel()
                state_["cancelled"] = True
                break
            try:
                await _act(d, msg, cfg, state_)
            except Exception as e:
                await _send_error(ws, from_exception(e, param="text"), close=False)
        await sender
    finally:
        if not sender.done():
            d.cancel()
            sender.cancel()


async def _act(d, msg: dict, cfg, state_: dict) -> None:
    kind = msg["type"]
    if kind in ("text", "set_text"):
        text = msg.get("text")
        if not isinstance(text, str):
            raise ApiError(400, f"a {kind} message needs a string text", param="text", code="invalid_type")
        if state_["ended"]:
            raise ApiError(400, "the text has ended", code="ended")
        if len(text) > cfg.max_input_chars and kind == "text":
            raise ApiError(400, f"a text message holds at most {cfg.max_input_chars} characters", param="text",
                           code="string_above_max_length")
        total = (state_["chars"] + len(text)) if kind == "text" else len(text)
        if total > cfg.max_duplex_chars:
            raise ApiError(400, f"a duplex session takes at most {cfg.max_duplex_chars} characters", param="text",
                           code="string_above_max_length")
        try:
            text = check_text(text, "text")
        except InvalidArgument as e:
            raise ApiError(400, str(e), param="text", code="invalid_value") from None
        state_["chars"] = total if kind == "text" else max(state_["chars"], total)
        await asyncio.to_thread(d.write if kind == "text" else d.set_text, text)
    elif kind == "flush":
        await asyncio.to_thread(d.flush)
    elif kind == "end":
        state_["ended"] = True
        await asyncio.to_thread(d.end)
    elif kind == "cancel":
        state_["cancelled"] = True
        d.cancel()
    elif kind == "start":
        raise ApiError(400, "the session has started already", code="invalid_message")
    else:
        raise ApiError(400, f"unknown message type {kind!r} (text, set_text, flush, end, cancel)", code="invalid_message")


async def _send_audio(ws: WebSocket, d, state_: dict) -> None:
    samples = 0
    err: ApiError | None = None
    try:
        async for chunk in _audio(d):
            words = chunk_words(chunk)
            if words:
                await ws.send_text(json.dumps({"type": "words", "words": words}))
            pcm = to_s16(chunk.samples)
            if pcm.size:
                await ws.send_bytes(pcm.tobytes())
            samples += pcm.size
    except Exception as e:
        from ..errors import Cancelled

        if isinstance(e, Cancelled) or state_["cancelled"]:
            state_["cancelled"] = True
        elif isinstance(e, (WebSocketDisconnect, RuntimeError)) and ws.client_state != WebSocketState.CONNECTED:
            return
        else:
            err = from_exception(e)
    if ws.client_state != WebSocketState.CONNECTED:
        return
    try:
        if err is not None:
            await _send_error(ws, err, close=False)
        await ws.send_text(json.dumps({"type": "done", "samples": samples, "seconds": round(samples / OPENAI_RATE, 4),
                                       "cancelled": bool(state_["cancelled"]), **({"error": True} if err else {})}))
        await ws.close(1000)
    except (WebSocketDisconnect, RuntimeError):
        pass
