"""Error mapping for answers the mock does not produce: other statuses and body shapes."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from starharness.runtime.llm import (
    AuthError,
    ContextOverflowError,
    InvalidRequestError,
    LlmError,
    LlmTimeoutError,
    QuotaExceededError,
    ServerError,
)
from starharness.runtime.llm.http_errors import error_from_response, parse_retry_after


def test_retry_after_in_seconds_milliseconds_and_as_a_date() -> None:
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"retry-after": "7", "retry-after-ms": "1500"}) == 1.5
    now = 1_800_000_000.0
    date = formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30.0)
    assert parse_retry_after({"retry-after": formatdate(now - 30, usegmt=True)}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (413, b"request entity too large", ContextOverflowError),
        (
            400,
            b'{"error": {"message": "the request exceeds the available context size"}}',
            ContextOverflowError,
        ),
        (400, b'{"detail": "prompt is too long: 300000 tokens"}', ContextOverflowError),
        (402, b'{"error": {"message": "Insufficient Balance"}}', QuotaExceededError),
        (403, b'{"error": "forbidden"}', AuthError),
        (404, b'{"error": "model \\"x\\" not found"}', InvalidRequestError),
        (422, b"not json at all", InvalidRequestError),
        (408, b"", LlmTimeoutError),
        (504, b"<html>gateway timeout</html>", ServerError),
    ],
)
def test_status_and_body_pick_the_error(status: int, body: bytes, error: type[LlmError]) -> None:
    mapped = error_from_response(status, {}, body, key_env="SOME_KEY")
    assert type(mapped) is error
    assert mapped.status == status
    assert f"HTTP {status}" in str(mapped)


def test_auth_error_names_the_variable_and_long_bodies_are_clipped() -> None:
    auth = error_from_response(401, {}, b'{"error": {"message": "bad key"}}', key_env="MY_KEY")
    assert str(auth).endswith("check MY_KEY")
    long = error_from_response(400, {}, b"x" * 10_000)
    assert len(str(long)) < 600
