"""The application: create_app(config) builds the FastAPI app with its state (models, voices,
scheduler, metrics), the middleware that guards every request (API key, body size, request counts),
and the routes (speech.py, voice_routes.py, duplex.py, and the small ones here).

    from vox.server import ServerConfig, create_app
    app = create_app(ServerConfig(models=[(None, "model.tmod")], voices_dir="voices"))
    # uvicorn.run(app, host="127.0.0.1", port=8080)
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from .config import ServerConfig, default_workers
from .errors import ApiError, from_exception
from .metrics import Metrics, engine_lines
from .registry import Models
from .scheduler import Admission, Scheduler
from .voices import Voices, VoiceStore, load_voice_map

log = logging.getLogger("vox.server")
STATIC = Path(__file__).resolve().parent / "static"
# endpoints by which requests are counted (anything else counts as "other": no label per URL)
_ENDPOINTS = ("/v1/audio/speech", "/v1/models", "/v1/voices", "/v1/audio/voices", "/v1/duplex", "/health",
              "/metrics", "/")


@dataclass
class State:
    config: ServerConfig
    models: Models
    voices: Voices
    store: VoiceStore
    metrics: Metrics
    admission: Admission
    scheduler: Scheduler
    duplex_factory: Callable | None


def state(request_or_ws) -> State:
    return request_or_ws.app.state.vox


def create_app(config: ServerConfig, *, models: Models | None = None, duplex_factory: Callable | None = None) -> FastAPI:
    """The server for `config` (models are loaded here unless given). duplex_factory(engine, voice,
    **settings) makes the WebSocket's duplex object; by default Engine.duplex."""
    config.check()
    metrics = Metrics()
    store = VoiceStore(config.voices_dir)
    vmap = load_voice_map(config.voice_map)
    models = models or Models(config.models, device=config.device, threads=config.threads)
    try:
        st = State(config=config, models=models, voices=Voices(store, vmap), store=store, metrics=metrics,
                   admission=Admission(config.max_sessions, config.max_queue, config.queue_timeout, metrics),
                   scheduler=Scheduler(config.workers or default_workers(), metrics, config.lookahead),
                   duplex_factory=duplex_factory)
        for entry in models.entries.values():  # each model's voice map, built once (the family's defaults)
            st.voices.aliases(entry)
    except BaseException:
        models.close()
        raise
    metrics.add_collector(lambda: engine_lines(models.engines))

    @asynccontextmanager
    async def lifespan(app):
        yield
        st.scheduler.close()
        st.models.close()

    app = FastAPI(title="vox", version=__version__, lifespan=lifespan,
                  description="OpenAI-compatible speech synthesis with vox: POST /v1/audio/speech streams audio as it "
                              "is made; voices, models, a duplex WebSocket, health and Prometheus metrics.",
                  docs_url="/docs", redoc_url=None)
    app.state.vox = st

    _install_errors(app)
    from . import duplex, speech, voice_routes

    app.include_router(speech.router)
    app.include_router(voice_routes.router)
    app.include_router(duplex.router)
    _misc_routes(app, st)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    # outermost first: counting sees every answer, the key is checked before a body is read
    app.add_middleware(BodyLimit, config=config)
    app.add_middleware(ApiKey, key=config.api_key)
    app.add_middleware(CountRequests, metrics=metrics)
    return app


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(request: Request, e: ApiError):
        return JSONResponse(e.body(), status_code=e.status, headers=e.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, e: RequestValidationError):
        return JSONResponse(validation_error(e.errors()).body(), status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, e: StarletteHTTPException):
        code = {404: "not_found", 405: "method_not_allowed"}.get(e.status_code)
        msg = e.detail if isinstance(e.detail, str) else "error"
        if e.status_code == 404:
            msg = f"no route {request.method} {request.url.path}"
        return JSONResponse(ApiError(e.status_code, msg, code=code).body(), status_code=e.status_code,
                            headers=getattr(e, "headers", None))

    @app.exception_handler(Exception)
    async def _other(request: Request, e: Exception):
        err = from_exception(e)
        return JSONResponse(err.body(), status_code=err.status, headers=err.headers)


def validation_error(errors) -> ApiError:
    """A 400 in OpenAI's form from pydantic's first complaint (malformed JSON, a missing field, a
    wrong type, an unknown field)."""
    if not errors:
        return ApiError(400, "invalid request", code="invalid_request")
    e = errors[0]
    loc = [str(x) for x in e.get("loc", ()) if x not in ("body",)]
    kind = e.get("type", "")
    param = loc[0] if loc else None
    if kind == "json_invalid":
        ctx = e.get("ctx", {}).get("error", "")
        return ApiError(400, f"the request body is not valid JSON{': ' + ctx if ctx else ''}", code="invalid_json")
    if kind == "missing":
        return ApiError(400, f"missing required parameter {param!r}", param=param, code="missing_parameter")
    if kind == "extra_forbidden":
        return ApiError(400, f"unrecognized request argument {param!r}", param=param, code="unknown_parameter")
    if kind in ("model_attributes_type", "dict_type") and not loc:
        return ApiError(400, "the request body must be a JSON object", code="invalid_request")
    where = param or "the body"     # (pydantic adds the union member tried, e.g. speed.float: not for people)
    return ApiError(400, f"{where}: {e.get('msg', 'invalid value')}", param=param, code="invalid_type"
                    if kind.endswith("_type") or "type" in kind else "invalid_value")


def _misc_routes(app: FastAPI, st: State) -> None:
    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8",
                            headers={"Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon():
        return Response(status_code=204)

    @app.get("/health", summary="Liveness and load")
    async def health() -> dict[str, Any]:
        a = st.admission
        return {"status": "ok", "version": __version__, "models": list(st.models.entries),
                "default_model": st.models.default_id, "active_sessions": a.active, "max_sessions": a.max_sessions,
                "queued": len(a._waiters), "max_queue": a.max_queue}

    @app.get("/metrics", summary="Prometheus metrics (text exposition format)", response_class=PlainTextResponse)
    async def metrics_route():
        return Response(st.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.get("/v1/models", summary="The models this server speaks with (OpenAI's list format)")
    async def list_models() -> dict[str, Any]:
        return {"object": "list", "data": [e.describe() for e in st.models.entries.values()]}

    @app.get("/v1/models/{model_id}", summary="One model")
    async def get_model(model_id: str) -> dict[str, Any]:
        return st.models.get(model_id).describe()


# ------------------------------------------------------------------------------ middleware (pure ASGI)
async def _send_error(send, err: ApiError) -> None:
    body = err.json_bytes()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in err.headers.items()]
    await send({"type": "http.response.start", "status": err.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _header(scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", ()):
        if k.lower() == name:
            return v.decode("latin-1")
    return None


def bearer_ok(scope, key: str | None) -> bool:
    if key is None:
        return True
    auth = _header(scope, b"authorization") or ""
    scheme, _, token = auth.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), key.encode())


class ApiKey:
    """With --api-key, every /v1/ HTTP request needs `Authorization: Bearer KEY` (OpenAI's clients send
    their api_key so). The WebSocket checks the header or its start message itself (browsers cannot
    set headers on a WebSocket)."""

    def __init__(self, app, key: str | None):
        self.app, self.key = app, key

    async def __call__(self, scope, receive, send):
        if (scope["type"] == "http" and self.key is not None and scope["path"].startswith("/v1/")
                and not bearer_ok(scope, self.key)):
            await _send_error(send, ApiError(401, "invalid or missing API key: send Authorization: Bearer KEY",
                                             code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"}))
            return
        await self.app(scope, receive, send)


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Request bodies are bounded: --max-body-bytes for JSON, --max-upload-bytes (+ room for the form's
    other fields) for POST /v1/voices. A Content-Length over the limit is refused before reading; a
    body that grows past it while read is cut off with the same 413."""

    def __init__(self, app, config: ServerConfig):
        self.app, self.config = app, config

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        upload = scope["path"].rstrip("/") == "/v1/voices" and scope["method"] == "POST"
        limit = self.config.max_upload_bytes + (64 << 10) if upload else self.config.max_body_bytes
        what = "upload" if upload else "request body"
        err = ApiError(413, f"the {what} is larger than {limit} bytes", code="request_too_large")
        length = _header(scope, b"content-length")
        if length is not None:
            try:
                too_big = int(length) > limit
            except ValueError:
                await _send_error(send, ApiError(400, "invalid Content-Length", code="invalid_request"))
                return
            if too_big:
                await _send_error(send, err)
                return
        seen = 0
        state = {"started": False, "over": False}

        async def counted():
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    state["over"] = True
                    raise _TooLarge()
            return msg

        async def watched(msg):
            if state["over"]:
                # the app's own answer to the cut-off body (a parse error): the 413 goes instead
                if msg["type"] == "http.response.start" and not state["started"]:
                    state["started"] = True
                    await _send_error(send, err)
                return
            if msg["type"] == "http.response.start":
                state["started"] = True
            await send(msg)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            pass
        if state["over"] and not state["started"]:
            await _send_error(send, err)


class CountRequests:
    """vox_server_requests_total{endpoint, status}: the status each answer starts with."""

    def __init__(self, app, metrics: Metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = scope["path"].rstrip("/") or "/"
        endpoint = next((e for e in _ENDPOINTS if path == e or (e != "/" and path.startswith(e + "/"))), "other")
        status = {"code": 0}

        async def watched(msg):
            if msg["type"] == "http.response.start":
                status["code"] = msg["status"]
            elif msg["type"] == "websocket.accept":
                status["code"] = 101
            elif msg["type"] == "websocket.close" and not status["code"]:
                status["code"] = 403
            await send(msg)

        try:
            await self.app(scope, receive, watched)
        finally:
            self.metrics.requests.inc(1, endpoint, str(status["code"] or 500))


def json_dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def now() -> float:
    return time.monotonic()
