"""Fast I/O paths that replace a library's stock one where a benchmark shows the gain.

Private to star-harness. Each module here has a stock twin (the library's own, chosen with
`STAR_HARNESS_STOCK_TRANSPORTS=1`) and a benchmark in `bench/` that prints its gain over that
twin; a path that stops winning is deleted. Only this package may import the layers under
the HTTP clients (httpcore, httpcore2, h11, anyio) and uvicorn's and websockets' insides (the
lean WebSocket protocol, `ws.websocket_protocol`): import-linter contracts say so.
"""

from .http import ReusingTransport

__all__ = ["ReusingTransport"]
