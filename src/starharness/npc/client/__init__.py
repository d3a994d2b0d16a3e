"""An async client for the frame protocol: what an engine does, in Python (tools and tests)."""

from .connection import DEFAULT_URL, FrameConnection, connect
from .errors import ClientError, ConnectionLostError, ServerUnreachableError
from .handlers import HANDLER_NAMES, DownFrameHandler, dispatch, handler_name

__all__ = [
    "DEFAULT_URL",
    "HANDLER_NAMES",
    "ClientError",
    "ConnectionLostError",
    "DownFrameHandler",
    "FrameConnection",
    "ServerUnreachableError",
    "connect",
    "dispatch",
    "handler_name",
]
