"""What can go wrong for a frame-protocol client, as exceptions that say it in one line."""

from __future__ import annotations

from ...runtime.errors import StarHarnessError


class ClientError(StarHarnessError):
    """A frame-protocol client failed; the message is one line for a person."""


class ServerUnreachableError(ClientError):
    """The harness could not be reached or refused the WebSocket handshake."""


class ConnectionLostError(ClientError):
    """The open connection ended (the harness stopped, or the network dropped); `code` and
    `reason` are the harness's close frame's, None and "" when it sent none."""

    def __init__(self, message: str, code: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
