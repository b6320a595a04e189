"""Errors as the OpenAI API writes them: {"error": {"message", "type", "param", "code"}}, with the HTTP
status that vox's exception classes (vox.errors) stand for.

    ==================  ======  =======================  ===================================
    raised              status  type                     code
    ==================  ======  =======================  ===================================
    InvalidArgument     400     invalid_request_error    invalid_argument
    FormatError         400     invalid_request_error    invalid_format
    Unsupported         400     invalid_request_error    unsupported
    LimitExceeded       400     invalid_request_error    limit_exceeded
    NotFound            404     invalid_request_error    not_found
    SessionLimit        429     rate_limit_error         session_limit      (with Retry-After)
    OutOfMemory         503     server_error             out_of_memory      (with Retry-After)
    DeviceError         503     server_error             device_error
    anything else       500     server_error             internal_error     (logged, never shown)

(Requests are checked before any work, so a TypeError or ValueError that reaches here is a fault of
the server, not of the request: a 500.)
    ==================  ======  =======================  ===================================

A client never sees a traceback: an unexpected exception is logged on the server and answered with
a generic message.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Mapping

from .. import errors as vx

log = logging.getLogger("vox.server")

_TYPE_BY_STATUS = {401: "invalid_request_error", 403: "invalid_request_error", 429: "rate_limit_error"}


class ApiError(Exception):
    """An answer other than success: HTTP status, message, and OpenAI's type / param / code."""

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None,
                 type: str | None = None, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code
        self.type = type or _TYPE_BY_STATUS.get(status, "invalid_request_error" if status < 500 else "server_error")
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def json_bytes(self) -> bytes:
        return json.dumps(self.body(), ensure_ascii=False).encode("utf-8")


def retry_after_headers(seconds: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, int(seconds + 0.999)))}


def from_exception(e: BaseException, *, param: str | None = None, retry_after: float = 1.0) -> ApiError:
    """The answer for an exception raised while serving a request."""
    if isinstance(e, ApiError):
        return e
    msg = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    if isinstance(e, vx.SessionLimit):
        return ApiError(429, msg or "too many sessions", code="session_limit", headers=retry_after_headers(retry_after))
    if isinstance(e, vx.OutOfMemory):
        return ApiError(503, msg, code="out_of_memory", headers=retry_after_headers(retry_after))
    if isinstance(e, vx.DeviceError):
        return ApiError(503, msg, code="device_error")
    if isinstance(e, vx.NotFound):
        return ApiError(404, msg, param=param, code="not_found")
    for cls, code in ((vx.InvalidArgument, "invalid_argument"), (vx.FormatError, "invalid_format"),
                      (vx.Unsupported, "unsupported"), (vx.LimitExceeded, "limit_exceeded")):
        if isinstance(e, cls):
            return ApiError(400, msg, param=param, code=code)
    log.error("internal error", exc_info=(type(e), e, e.__traceback__))
    return ApiError(500, "internal error (the server log has the details)", code="internal_error")
