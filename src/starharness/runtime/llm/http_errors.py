"""Maps HTTP statuses, error bodies and transport failures to the LlmError hierarchy."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any, cast

import httpx2

from .errors import (
    AuthError,
    ContextOverflowError,
    InvalidRequestError,
    LlmConnectionError,
    LlmError,
    LlmTimeoutError,
    ProtocolError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
)

_CONTEXT_OVERFLOW = re.compile(
    r"context[_ ](length|window|size)|maximum context|prompt is too long|too many tokens"
    r"|exceeds? the (available )?context|exceed_context",
    re.IGNORECASE,
)
_QUOTA = re.compile(r"insufficient[_ ](quota|balance)|quota[_ ]exceeded|billing", re.IGNORECASE)
_RATE_LIMIT = re.compile(r"rate[_ ]limit", re.IGNORECASE)
_MAX_MESSAGE = 400


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def _describe(payload: Any) -> tuple[str, str]:
    """(message, code-and-type text) from the error bodies servers send."""
    if isinstance(payload, dict):
        error: Any = cast(dict[str, Any], payload).get("error", payload)
        if isinstance(error, str):
            return error, ""
        if isinstance(error, dict):
            error = cast(dict[str, Any], error)
            message: Any = error.get("message") or error.get("detail") or error.get("msg") or ""
            kinds = " ".join(str(error[k]) for k in ("code", "type") if error.get(k) is not None)
            if not isinstance(message, str):
                message = json.dumps(message)
            return message, kinds
    if isinstance(payload, str):
        return payload, ""
    return json.dumps(payload), ""


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "..."


def _classify(
    status: int | None, message: str, kinds: str, retry_after: float | None, key_env: str | None
) -> LlmError:
    where = f"HTTP {status}" if status is not None else "stream error"
    detail = _clip(message) or "no details"
    text = f"{where}: {detail}" + (f" ({kinds})" if kinds else "")
    both = f"{kinds} {message}"
    if status == 402 or _QUOTA.search(both):
        return QuotaExceededError(f"quota or balance exhausted: {text}", status=status)
    if status == 429 or (status is None and _RATE_LIMIT.search(both)):
        return RateLimitedError(f"rate limited: {text}", status=status, retry_after=retry_after)
    if status in (401, 403):
        hint = f"; check {key_env}" if key_env else ""
        return AuthError(f"the provider refused the key: {text}{hint}", status=status)
    if (status is None or 400 <= status < 500) and (
        status == 413 or _CONTEXT_OVERFLOW.search(both)
    ):
        return ContextOverflowError(f"context window exceeded: {text}", status=status)
    if status == 408:
        return LlmTimeoutError(f"the provider timed out the request: {text}", status=status)
    if status is None or status >= 500 or status == 409:
        return ServerError(f"provider error: {text}", status=status, retry_after=retry_after)
    return InvalidRequestError(f"the provider refused the request: {text}", status=status)


def error_from_response(
    status: int, headers: Mapping[str, str], body: bytes, *, key_env: str | None = None
) -> LlmError:
    """The error for a non-success HTTP response with this (possibly truncated) body."""
    try:
        payload: Any = json.loads(body) if body.strip() else ""
    except ValueError:
        payload = body.decode("utf-8", "replace")
    message, kinds = _describe(payload)
    return _classify(status, message, kinds, parse_retry_after(headers), key_env)


def error_from_payload(payload: Mapping[str, Any], *, status: int | None) -> LlmError:
    """The error for an `{"error": ...}` object, e.g. one sent as a stream event."""
    message, kinds = _describe(dict(payload))
    return _classify(status, message, kinds, None, None)


def error_from_transport(exc: httpx2.HTTPError, *, url: str) -> LlmError:
    """The error for a failure below HTTP: connecting, sending or reading the stream."""
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, httpx2.ConnectTimeout):
        return LlmTimeoutError(f"no connection to {url} within the connect timeout")
    if isinstance(exc, httpx2.TimeoutException):
        return LlmTimeoutError(f"{url} timed out: {reason}")
    if isinstance(exc, httpx2.ConnectError):
        return LlmConnectionError(f"could not connect to {url}: {reason}")
    if isinstance(exc, httpx2.UnsupportedProtocol | httpx2.InvalidURL):
        return InvalidRequestError(f"cannot use the base URL {url}: {reason}")
    if isinstance(exc, httpx2.DecodingError):
        return ProtocolError(f"the response from {url} could not be decoded: {reason}")
    return LlmConnectionError(f"the connection to {url} broke: {reason}")
