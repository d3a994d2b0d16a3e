"""What can go wrong for a frame-protocol client, as exceptions that say it in one line."""

from __future__ import annotations


class ClientError(Exception):
    """A frame-protocol client failed; the message is one line for a person."""


class ServerUnreachable(ClientError):
    """The harness could not be reached or refused the WebSocket handshake."""


class ConnectionLost(ClientError):
    """The open connection ended (the harness stopped, or the network dropped)."""
