"""`vox serve`: an OpenAI-compatible speech server with a web page (FastAPI + uvicorn; the extra
vox[serve] installs them).

    from vox.server import ServerConfig, create_app
    app = create_app(ServerConfig(models=[(None, "model.tmod")], voices_dir="voices"))

Endpoints (docs/server.md): POST /v1/audio/speech (streamed audio or SSE), GET /v1/models,
GET/POST /v1/voices, DELETE /v1/voices/{name}, WS /v1/duplex, GET /health, GET /metrics, the page
at / and the OpenAPI page at /docs.

The modules: app (the factory, middleware), speech, voice_routes, duplex (the routes), registry (the
models), voices (the voice store and how a request's voice is read), scheduler (admission and the
workers), audio (response formats), metrics (Prometheus), errors (OpenAI's error bodies),
timestamps (word timestamps, where the family gives them).
"""

from __future__ import annotations

from .config import ServerConfig


def create_app(config: ServerConfig, **kw):
    from .app import create_app as _create

    return _create(config, **kw)


__all__ = ["ServerConfig", "create_app"]
