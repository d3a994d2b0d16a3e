"""LLM failures as exceptions: each says what happened and whether a retry may help."""

from __future__ import annotations

from ..errors import StarHarnessError, UserFacingError


class LlmError(StarHarnessError):
    """A model request failed. `retryable` says whether the same request may succeed later."""

    retryable: bool = False

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class LlmConnectionError(LlmError):
    """The connection failed or broke (reset, refused, cut mid-stream)."""

    retryable = True


class LlmTimeoutError(LlmError):
    """No connection, first byte or next chunk within its timeout."""

    retryable = True


class RateLimitedError(LlmError):
    """HTTP 429; `retry_after` is honoured."""

    retryable = True


class ServerError(LlmError):
    """HTTP 5xx from the provider."""

    retryable = True


class ProtocolError(LlmError):
    """The provider answered with something that is not the protocol (bad JSON, bad SSE)."""

    retryable = True


class AuthError(LlmError):
    """HTTP 401/403: the key is missing, wrong or not allowed."""


class QuotaExceededError(LlmError):
    """The account is out of quota or balance; retrying will not help."""


class ContextOverflowError(LlmError):
    """The request is longer than the model's context window."""


class InvalidRequestError(LlmError):
    """HTTP 400 for another reason: the request itself is wrong."""


class MissingCredentialError(LlmError, UserFacingError):
    """A provider was asked for explicitly but its key variable is not set."""


class ProviderConfigError(LlmError):
    """A provider cannot be built from its config (no model, no base URL, bad variable name)."""
