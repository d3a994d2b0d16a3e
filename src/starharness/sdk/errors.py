"""What the SDK raises."""

from __future__ import annotations

from typing import Any

from ..runtime.errors import StarHarnessError


class SdkError(StarHarnessError):
    """Base of the SDK's errors."""


class RpcCallError(SdkError):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{method}: {message} (code {code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class ConnectionLostError(SdkError):
    """The server went away (its process ended, or the stream closed) before answering."""
