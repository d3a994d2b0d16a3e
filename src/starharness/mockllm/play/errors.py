"""Provider error answers with the OpenAI error shape."""

from __future__ import annotations

import math

from ...responder.steps import (
    BadApiKey,
    ContextOverflow,
    InvalidRequest,
    QuotaExceeded,
    RateLimit,
    ServerFault,
    ServiceUnavailable,
)
from ..shapes import error_body
from .exchange import Exchange

ErrorStep = (
    RateLimit
    | ServerFault
    | ServiceUnavailable
    | BadApiKey
    | InvalidRequest
    | ContextOverflow
    | QuotaExceeded
)


def _retry_headers(seconds: float | None) -> list[tuple[str, str]]:
    if seconds is None:
        return []
    # Retry-After only carries whole seconds; OpenAI clients prefer the precise retry-after-ms.
    return [
        ("Retry-After", str(math.ceil(seconds))),
        ("retry-after-ms", str(round(seconds * 1000))),
    ]


async def play_error(exchange: Exchange, step: ErrorStep) -> None:
    """Answer with the HTTP error `step` describes."""
    headers: list[tuple[str, str]] = []
    match step:
        case RateLimit():
            status = 429
            body = error_body(step.message, "requests", "rate_limit_exceeded")
            headers = _retry_headers(step.retry_after_s)
        case ServerFault():
            status = step.status
            body = error_body(step.message, "server_error", None)
        case ServiceUnavailable():
            status = 503
            body = error_body(step.message, "server_error", "service_unavailable")
            headers = _retry_headers(step.retry_after_s)
        case BadApiKey():
            status = 401
            body = error_body(step.message, "invalid_request_error", "invalid_api_key")
        case InvalidRequest():
            status = 400
            body = error_body(step.message, "invalid_request_error", step.code, step.param)
        case ContextOverflow():
            status = 400
            requested = max(exchange.prompt_tokens, step.max_context_tokens + 1)
            message = (
                f"This model's maximum context length is {step.max_context_tokens} tokens. "
                f"However, you requested {requested} tokens ({requested} in the messages, "
                "0 in the completion). Please reduce the length of the messages or completion."
            )
            body = error_body(
                message, "invalid_request_error", "context_length_exceeded", "messages"
            )
        case QuotaExceeded():
            status = step.status
            body = error_body(step.message, "insufficient_quota", "insufficient_quota")
    await exchange.out.send(status, body, "application/json", headers=headers)
