"""runtime/acp: the session API as an Agent Client Protocol agent (editors such as Zed)."""

from .agent import AcpAgent
from .serve import serve_acp

__all__ = ["AcpAgent", "serve_acp"]
