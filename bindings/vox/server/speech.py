"""POST /v1/audio/speech: OpenAI's speech endpoint, streaming.

The body is OpenAI's (model, input, voice, instructions, response_format, speed, stream_format) plus
vox's own: seed (the same seed gives the same audio), language, and options (the model family's
synthesis options, as `vox say` takes them). The answer streams as the audio is made (a chunked body):
the response starts once the first chunk is ready, so an error in the request or in the first chunk
is still an HTTP error; one after that ends the stream early (audio: the connection closes before the
end of the chunked body; SSE: an "error" event).

stream_format "sse" sends OpenAI's events, one per chunk, each a `data:` line of JSON:
    {"type": "speech.audio.delta", "audio": BASE64 of the response_format bytes[, "words": [...]]}
    {"type": "speech.audio.done", "usage": {"input_tokens", "output_tokens", "total_tokens"}}
usage counts characters in and chunks out (vox has no billing tokens). "words" carries word
timestamps (seconds from the start of the audio) where the model's family gives them.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from typing import Any, Literal, Union

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

from ..engine import Chunk, check_text
from ..errors import InvalidArgument
from .audio import OPENAI_RATE, Encoder, check_format, to_s16
from .errors import ApiError, from_exception
from .scheduler import Job, Piece, Ticket
from .timestamps import chunk_words, wants_timestamps

log = logging.getLogger("vox.server")
router = APIRouter()
SPEED_RANGE = (0.25, 4.0)      # OpenAI's


class VoiceId(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: StrictStr


class SpeechRequest(BaseModel):
    """OpenAI's speech request, and vox's seed, language and options."""

    model_config = ConfigDict(extra="forbid")
    model: StrictStr | None = Field(None, description="a model id or alias (GET /v1/models); default: the first "
                                                      "model")
    input: StrictStr = Field(..., description="the text to speak (at most --max-input-chars characters)")
    voice: Union[StrictStr, VoiceId] = Field("default", description="a stored voice, a speaker, an OpenAI voice "
                                                                    "name (the voice map), a blend, or 'default'")
    instructions: StrictStr | None = Field(None, description="a CustomVoice speaker's style, or a VoiceDesign "
                                                             "model's voice description")
    response_format: StrictStr | None = Field(None, description="mp3 (default), opus, flac, wav or pcm "
                                                                "(s16le 24 kHz)")
    speed: Union[StrictFloat, StrictInt, None] = Field(None, description="0.25 to 4 (models with a speed option)")
    stream_format: Literal["audio", "sse"] | None = Field(None, description="audio (default) or sse")
    seed: StrictInt | None = Field(None, description="vox: the sampling seed (default: the voice's, else 0)")
    language: StrictStr | None = Field(None, description="vox: the text's language (default: auto)")
    options: dict[str, Any] | None = Field(None, description="vox: the model family's synthesis options")


def _text(req: SpeechRequest, limit: int) -> str:
    text = req.input
    if not text.strip():
        raise ApiError(400, "input is empty: nothing to speak", param="input", code="empty_input")
    if len(text) > limit:
        raise ApiError(400, f"input is {len(text)} characters; at most {limit} are allowed", param="input",
                       code="string_above_max_length")
    try:
        return check_text(text, "input")
    except InvalidArgument as e:
        raise ApiError(400, str(e), param="input", code="invalid_value") from None


def synthesis_options(engine, speed, options: dict | None) -> dict:
    """The family options of a request, checked now (a bad one is a 400 before any work)."""
    opts = dict(options or {})
    if speed is not None:
        s = float(speed)
        if not SPEED_RANGE[0] <= s <= SPEED_RANGE[1]:
            raise ApiError(400, f"speed must be in [{SPEED_RANGE[0]}, {SPEED_RANGE[1]}], not {speed}", param="speed",
                           code="invalid_value")
        if "speed" in engine.family.Options.field_names():
            opts["speed"] = s
        elif s != 1.0:
            raise ApiError(400, f"this {engine.family.title} model has no speed control (speed must be 1)",
                           param="speed", code="unsupported")
    try:
        engine.family.options_json(None, opts)
    except (TypeError, ValueError) as e:
        raise ApiError(400, str(e), param="options", code="invalid_value") from None
    return opts


def check_seed(seed) -> int | None:
    if seed is not None and not 0 <= seed < 2**64:
        raise ApiError(400, "seed must be in [0, 2^64 - 1]", param="seed", code="invalid_value")
    return seed


async def until_disconnect(receive) -> None:
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            return


@router.post("/v1/audio/speech", summary="Speak text (OpenAI's speech API), streamed as it is made",
             responses={200: {"content": {"audio/mpeg": {}, "audio/wav": {}, "audio/flac": {}, "audio/pcm": {},
                                          "audio/ogg": {}, "text/event-stream": {}}}})
async def speech(req: SpeechRequest, request: Request):
    from .app import state

    received = time.monotonic()
    st = state(request)
    entry = st.models.get(req.model)
    eng = entry.engine
    text = _text(req, st.config.max_input_chars)
    fmt = check_format(req.response_format, eng.sample_rate)
    sse = req.stream_format == "sse"
    seed = check_seed(req.seed)
    opts = synthesis_options(eng, req.speed, req.options)
    spec = req.voice.id if isinstance(req.voice, VoiceId) else req.voice
    try:
        voice = await asyncio.to_thread(st.voices.resolve, entry, spec, req.instructions)
    except Exception as e:
        raise from_exception(e, param="voice") from None
    language = req.language

    ticket = await st.admission.acquire()
    try:
        encoder = Encoder(fmt, eng.sample_rate)

        timestamps = sse and wants_timestamps(eng)     # words go out in the SSE events only

        def open_session():
            s = eng.session(voice, seed=seed, language=language, timestamps=timestamps, **opts)
            try:
                s.feed(text)
                s.end()
            except BaseException:
                s.close()
                raise
            return s

        def encode(chunk: Chunk, at: int) -> Piece:
            pcm = to_s16(chunk.samples)
            return Piece(encoder.feed(pcm), pcm.size, at, chunk.sample_rate, chunk.is_last, chunk_words(chunk),
                         pcm if sse else None)

        job = st.scheduler.submit(open_session, encode, encoder.finish, received)
        first = await _first_piece(job, request.receive)
    except BaseException as e:
        ticket.release()
        if isinstance(e, asyncio.CancelledError):
            raise
        raise from_exception(e, param="input", retry_after=st.admission.retry_after()) from None
    if first is None:          # the client left while waiting
        await _drain(job)
        ticket.release()
        return _Gone()
    try:
        headers = {"X-Sample-Rate": str(eng.sample_rate), "X-Vox-Model": entry.id, "Cache-Control": "no-store",
                   "X-Accel-Buffering": "no"}
        if job.seed is not None:
            headers["X-Vox-Seed"] = str(job.seed)
        media = "text/event-stream" if sse else encoder.media_type
        return AudioStream(job, ticket, first, media, headers, sse=sse, chars=len(text), encoder=encoder)
    except BaseException:
        job.cancel("client")
        await _drain(job)
        ticket.release()
        raise


async def _first_piece(job: Job, receive) -> Piece | None:
    """The job's first piece, or None if the client disconnects first (the job is then cancelled)."""
    nxt = asyncio.ensure_future(job.next())
    gone = asyncio.ensure_future(until_disconnect(receive))
    try:
        done, _ = await asyncio.wait({nxt, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if nxt in done:
        piece = nxt.result()                 # raises the session's error
        if piece is None:
            raise ApiError(500, "the model made no audio for this text", code="no_audio")
        return piece
    job.cancel("disconnect")
    nxt.cancel()
    return None


async def _drain(job: Job) -> None:
    """Wait until the job's worker is done with it (its session closed)."""
    while True:
        try:
            if await job.next() is None:
                return
        except Exception:
            return


class _Gone(Response):
    """The response to a client that has left: nothing to send."""

    def __init__(self) -> None:
        self.background = None

    async def __call__(self, scope, receive, send):
        return


class AudioStream(Response):
    """The streamed answer: each piece as it is made, the client's disconnect watched all along (a
    Response only so that FastAPI hands it on as it is; it writes itself to the ASGI channel)."""

    def __init__(self, job: Job, ticket: Ticket, first: Piece, media: str, headers: dict, *, sse: bool, chars: int,
                 encoder: Encoder):
        self.background = None
        self.job, self.ticket, self.first = job, ticket, first
        self.media, self.extra_headers, self.sse, self.chars = media, headers, sse, chars
        self.encoder = encoder

    def _event(self, obj: dict) -> bytes:
        return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"

    def _body(self, piece: Piece) -> bytes:
        if not self.sse:
            return piece.data
        if not piece.data and not piece.words:
            return b""
        ev: dict[str, Any] = {"type": "speech.audio.delta", "audio": base64.b64encode(piece.data).decode("ascii")}
        if piece.words:
            ev["words"] = piece.words
        return self._event(ev)

    async def __call__(self, scope, receive, send):
        job = self.job
        headers = [(b"content-type", self.media.encode())]
        headers += [(k.lower().encode(), v.encode()) for k, v in self.extra_headers.items()]
        watcher = asyncio.ensure_future(self._watch(receive))
        completed = False
        try:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            piece: Piece | None = self.first
            while piece is not None:
                body = self._body(piece)
                if body:
                    await send({"type": "http.response.body", "body": body, "more_body": True})
                if watcher.done():
                    return
                try:
                    piece = await job.next()
                except Exception as e:
                    if job.cancelled:
                        return
                    err = from_exception(e)
                    log.warning("speech stream ended early: %s", err.message)
                    if self.sse:
                        await send({"type": "http.response.body", "more_body": True,
                                    "body": self._event({"type": "error", "error": err.body()["error"]})})
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                        completed = True
                    return      # audio: the chunked body ends without its last chunk; the client sees it cut
            if job.cancelled:
                return
            if self.sse:
                usage = {"input_tokens": self.chars, "output_tokens": job.chunks,
                         "total_tokens": self.chars + job.chunks}
                await send({"type": "http.response.body", "more_body": True,
                            "body": self._event({"type": "speech.audio.done", "usage": usage})})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            completed = True
        except OSError:
            job.cancel("disconnect")      # the client closed the connection under us
        finally:
            watcher.cancel()
            if not completed and not job.done:
                job.cancel("disconnect" if watcher.done() else "client")
            await _drain(job)             # the worker is done with the job (and the encoder) after this
            if not completed:
                self.encoder.close()
            self.ticket.release()

    async def _watch(self, receive) -> None:
        await until_disconnect(receive)
        self.job.cancel("disconnect")
