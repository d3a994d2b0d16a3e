"""An async client for the frame protocol: what an engine does, in Python (tools and tests)."""

from .connection import DEFAULT_URL, FrameConnection, connect
from .errors import ClientError, ConnectionLost, ServerUnreachable
from .handlers import HANDLER_NAMES, DownFrameHandler, dispatch, handler_name

__all__ = [
    "DEFAULT_URL",
    "HANDLER_NAMES",
    "ClientError",
    "ConnectionLost",
    "DownFrameHandler",
    "FrameConnection",
    "ServerUnreachable",
    "connect",
    "dispatch",
    "handler_name",
]
