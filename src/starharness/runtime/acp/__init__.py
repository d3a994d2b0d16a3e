"""runtime/acp: the session API as an Agent Client Protocol agent (editors such as Zed)."""

from .agent import AcpAgent
from .serve import serve_acp
from .transport import CheckedTransport

__all__ = ["AcpAgent", "CheckedTransport", "serve_acp"]
