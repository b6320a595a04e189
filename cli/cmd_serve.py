"""vox serve: the OpenAI-compatible speech server (docs/server.md)."""

from __future__ import annotations

import argparse
import sys

from .common import THREADS, int_in

EXAMPLES = """\
examples:
  vox serve                                              # the built-in Kokoro-82M on http://127.0.0.1:8080
  vox serve --model base-q8.tmod --model custom=custom.tmod --voices ./voices --port 8080
  vox serve --api-key "$KEY" --max-sessions 4 --max-queue 16 --voice-map voices.json
  curl -s localhost:8080/v1/audio/speech -H 'Content-Type: application/json' \\
       -d '{"input": "Hello there.", "voice": "alloy", "response_format": "wav"}' -o hello.wav

The page at / speaks, streams a live-typing box and creates voices; the OpenAPI page is /docs.
Needs the server's packages: pip install 'vox[serve]'.
"""


def _positive_float(what: str):
    def parse(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, not {s!r}") from None
        if not v > 0:
            raise argparse.ArgumentTypeError(f"{what} must be positive, not {s}")
        return v
    return parse


def register(sub) -> None:
    p = sub.add_parser("serve", help="an OpenAI-compatible speech server with a web page",
                       description="Serve speech over HTTP: OpenAI's POST /v1/audio/speech (audio streamed as it "
                                   "is made, or as SSE events), voices, models, a duplex WebSocket, /health and "
                                   "Prometheus /metrics. Listens on the loopback interface unless --host says "
                                   "otherwise.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("models and voices")
    g.add_argument("--model", "-m", action="append", metavar="[NAME=]FILE", default=[],
                   help="a .tmod to serve (repeatable; the first is the default; NAME= sets its id, else the file's "
                        "stem). None: the built-in Kokoro-82M")
    g.add_argument("--voices", metavar="DIR", default="voices",
                   help="where stored voices (.tvoice) live and POST /v1/voices writes (default ./voices)")
    g.add_argument("--voice-map", metavar="FILE.json",
                   help='names for voices, e.g. OpenAI\'s: {"voices": {"alloy": "jf_alpha"}, "models": {ID: {...}}}')
    g.add_argument("--device", default="cpu", help="compute device of the engines (vox say --help)")
    g.add_argument("--threads", type=int_in(*THREADS, "--threads"), default=0,
                   help="each engine's compute threads (default: every CPU)")
    n = p.add_argument_group("network")
    n.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 opens it to the network)")
    n.add_argument("--port", type=int_in(0, 65535, "--port"), default=8080, help="port (default 8080; 0: any free one)")
    n.add_argument("--api-key", metavar="KEY", help="require Authorization: Bearer KEY on /v1/ (default: none)")
    lim = p.add_argument_group("limits")
    lim.add_argument("--max-sessions", type=int_in(1, 4096, "--max-sessions"), default=8,
                     help="synthesis sessions at once, all models together (default 8); more get 429 + Retry-After")
    lim.add_argument("--max-queue", type=int_in(0, 65536, "--max-queue"), default=0,
                     help="requests that may wait for a session slot (default 0: none wait)")
    lim.add_argument("--queue-timeout", type=_positive_float("--queue-timeout"), default=30.0,
                     help="seconds a queued request waits before its 429 (default 30)")
    lim.add_argument("--max-input-chars", type=int_in(1, 1 << 20, "--max-input-chars"), default=4096,
                     help="characters of input per request (default 4096, as OpenAI)")
    lim.add_argument("--max-body-bytes", type=int_in(1024, 1 << 30, "--max-body-bytes"), default=1 << 20,
                     help="bytes of a JSON request body (default 1 MiB)")
    lim.add_argument("--max-upload-bytes", type=int_in(1024, 1 << 30, "--max-upload-bytes"), default=20 << 20,
                     help="bytes of a recording for POST /v1/voices (default 20 MiB)")
    lim.add_argument("--max-upload-seconds", type=_positive_float("--max-upload-seconds"), default=60.0,
                     help="seconds of a recording for POST /v1/voices (default 60)")
    lim.add_argument("--workers", type=int_in(0, 256, "--workers"), default=0,
                     help="synthesis worker threads (default: CPUs, at most 4)")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))
    p.set_defaults(func=run)


def config_from_args(a):
    from vox.server.config import ServerConfig
    from vox.server.registry import parse_model_arg

    cfg = ServerConfig(models=[parse_model_arg(m) for m in a.model], voices_dir=a.voices, api_key=a.api_key,
                       max_sessions=a.max_sessions, max_queue=a.max_queue, queue_timeout=a.queue_timeout,
                       max_input_chars=a.max_input_chars, max_body_bytes=a.max_body_bytes,
                       max_upload_bytes=a.max_upload_bytes, max_upload_seconds=a.max_upload_seconds,
                       voice_map=a.voice_map, workers=a.workers, device=a.device, threads=a.threads)
    cfg.check()
    return cfg


def serve(a, **app_kw) -> int:
    """Build the app from the parsed flags and run it until interrupted."""
    try:
        import uvicorn

        from vox.server import create_app
    except ImportError as e:
        raise OSError(f"vox serve needs the server's packages ({e.name} is missing): pip install 'vox[serve]'") from None
    cfg = config_from_args(a)
    app = create_app(cfg, **app_kw)
    if a.api_key is None and a.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"vox serve: warning: listening on {a.host} without --api-key: anyone who reaches it can use it",
              file=sys.stderr)
    config = uvicorn.Config(app, host=a.host, port=a.port, log_level=a.log_level, access_log=False,
                            timeout_graceful_shutdown=5, ws_max_size=1 << 20)
    server = uvicorn.Server(config)
    server.run()
    return 0


def run(a) -> int:
    return serve(a)
