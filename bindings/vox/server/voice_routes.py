"""Voices over HTTP: list them, create one from a recording (cloned natively, stored in --voices),
delete one.

POST /v1/voices takes a multipart form: `file` (the recording: WAV, FLAC, OGG, MP3, ... whatever
libsndfile reads), `text` (what the recording says), `name`, and optionally `model` (default: the
first model that can clone), `language`, `seed` (the voice's default seed). The recording is checked
(size, duration, finite samples) before any cloning; the voice is made with Engine.clone_voice and
linked into --voices only when it is complete.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import Any

from fastapi import APIRouter, Query, Request

from ..formats.audio import read_audio_file
from ..engine import check_text
from ..errors import InvalidArgument
from .errors import ApiError, from_exception
from .voices import check_name

router = APIRouter()
_FIELDS = {"file", "text", "name", "model", "language", "seed"}


@router.get("/v1/voices", summary="Voices a request may name (stored, the models' speakers, aliases, defaults)")
async def list_voices(request: Request, model: str | None = Query(None, description="only this model's voices")):
    from .app import state

    st = state(request)
    entries = [st.models.get(model)] if model else list(st.models.entries.values())
    data = await asyncio.to_thread(st.voices.listing, entries)
    return {"object": "list", "data": data}


@router.get("/v1/audio/voices", summary="Voice names only ({\"voices\": [...]}), as other OpenAI-compatible speech servers list them")
async def list_voice_names(request: Request, model: str | None = Query(None)):
    from .app import state

    st = state(request)
    entries = [st.models.get(model)] if model else list(st.models.entries.values())
    data = await asyncio.to_thread(st.voices.listing, entries)
    names = list(dict.fromkeys(v["id"] for v in data))
    return {"voices": names}


@router.delete("/v1/voices/{name}", summary="Delete a stored voice")
async def delete_voice(name: str, request: Request):
    from .app import state

    st = state(request)
    check_name(name)
    st.store.delete(name)
    return {"id": name, "object": "voice", "deleted": True}


@router.post("/v1/voices", status_code=201, summary="Create a voice from a recording and its transcript",
             openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
                 "type": "object", "required": ["file", "text", "name"],
                 "properties": {"file": {"type": "string", "format": "binary"}, "text": {"type": "string"},
                                "name": {"type": "string"}, "model": {"type": "string"},
                                "language": {"type": "string"}, "seed": {"type": "integer"}}}}}}})
async def create_voice(request: Request):
    from .app import state

    st = state(request)
    cfg = st.config
    ctype = request.headers.get("content-type", "")
    if not ctype.startswith("multipart/form-data"):
        raise ApiError(415, "send the recording as multipart/form-data (file, text, name)", code="unsupported_media")
    try:
        form = await request.form(max_files=1, max_fields=len(_FIELDS), max_part_size=64 << 10)
    except Exception as e:      # malformed multipart, too many parts, a field part too large
        from .app import _TooLarge

        if isinstance(e, (ApiError, _TooLarge)):
            raise
        raise ApiError(400, f"malformed multipart form: {getattr(e, 'detail', None) or e}", code="invalid_form") from None
    try:
        unknown = sorted(set(form.keys()) - _FIELDS)
        if unknown:
            raise ApiError(400, f"unknown form field {unknown[0]!r} (fields: {', '.join(sorted(_FIELDS))})",
                           param=unknown[0], code="unknown_parameter")
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise ApiError(400, "missing the recording: a file field named 'file'", param="file",
                           code="missing_parameter")
        fields: dict[str, Any] = {}
        for k in ("text", "name", "model", "language", "seed"):
            v = form.get(k)
            if v is not None and not isinstance(v, str):
                raise ApiError(400, f"{k} must be a text field, not a file", param=k, code="invalid_type")
            fields[k] = v
        name = check_name(fields["name"] if fields["name"] is not None else None)
        text = fields["text"]
        if text is None or not text.strip():
            raise ApiError(400, "missing the transcript: a text field named 'text' saying what the recording says",
                           param="text", code="missing_parameter")
        if len(text) > cfg.max_input_chars:
            raise ApiError(400, f"text is {len(text)} characters; at most {cfg.max_input_chars}", param="text",
                           code="string_above_max_length")
        try:
            text = check_text(text, "text")
        except InvalidArgument as e:
            raise ApiError(400, str(e), param="text", code="invalid_value") from None
        seed = None
        if fields["seed"] not in (None, ""):
            try:
                seed = int(fields["seed"])
            except ValueError:
                raise ApiError(400, "seed must be an integer", param="seed", code="invalid_type") from None
            if not 0 <= seed < 2**64:
                raise ApiError(400, "seed must be in [0, 2^64 - 1]", param="seed", code="invalid_value")
        if fields["model"]:
            entry = st.models.get(fields["model"])
            if not entry.engine.capabilities.get("clone"):
                raise ApiError(400, f"the model {entry.id!r} cannot clone voices (its family makes voices another "
                                    "way)", param="model", code="unsupported")
        else:
            cloner = next((e for e in st.models.entries.values() if e.engine.capabilities.get("clone")), None)
            if cloner is None:
                raise ApiError(400, "no model here can clone a voice from a recording", param="model",
                               code="unsupported")
            entry = cloner
        if st.store.exists(name):
            raise ApiError(409, f"a voice named {name!r} exists (DELETE /v1/voices/{name} first)", param="name",
                           code="voice_exists")
        data = await upload.read(cfg.max_upload_bytes + 1)
        if len(data) > cfg.max_upload_bytes:
            raise ApiError(413, f"the recording is larger than {cfg.max_upload_bytes} bytes", param="file",
                           code="request_too_large")
        if not data:
            raise ApiError(400, "the recording is empty", param="file", code="invalid_value")
    finally:
        await form.close()

    def make():
        # the upload goes to a private temporary file (never into --voices), read with the limits
        fd, tmp = tempfile.mkstemp(prefix="vox-upload-", suffix=".audio")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            try:
                samples, sr = read_audio_file(tmp, max_seconds=cfg.max_upload_seconds)
            except Exception as e:
                raise ApiError(400, str(e).replace(tmp, "the recording"), param="file", code="invalid_audio") from None
        finally:
            os.unlink(tmp)
        seconds = samples.shape[0] / sr
        if seconds < cfg.min_upload_seconds:
            raise ApiError(400, f"the recording is {seconds:.2f} s; a voice needs at least {cfg.min_upload_seconds:g} s",
                           param="file", code="invalid_audio")
        voice = entry.engine.clone_voice((samples, sr), text, name=name, language=fields["language"] or None,
                                         seed=seed)
        st.store.save(name, voice)
        return voice, seconds

    ticket = await st.admission.acquire()
    try:
        voice, seconds = await asyncio.to_thread(make)
    except ApiError:
        raise
    except Exception as e:
        raise from_exception(e, param="file") from None
    finally:
        ticket.release()
    info = voice.info
    return {"id": name, "object": "voice", "name": name, "model": entry.id, "family": info.get("family"),
            "mode": info.get("mode"), "language": info.get("language"), "seconds": round(seconds, 3)}
