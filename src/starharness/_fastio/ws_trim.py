"""What an open WebSocket no longer needs from its handshake, and what connections can share.

uvicorn's sans-I/O protocol keeps the handshake request (its headers as a websockets `Headers`,
a second copy of the ASGI scope's) and the response for the connection's life, and the
websockets parser keeps the request too, in the frame of the generator that parsed it: about
4 KB of each open connection (bench/ws_heap.py). Later, the parser also keeps the last frame it
parsed; and each scope and address is a copy of the same values.

These read the websockets library's insides (its parser generators, checked by their code
objects, and its stream reader): `ws.py` uses them only on the releases they were tested on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, TypeVar, cast

from websockets.extensions import ServerExtensionFactory
from websockets.protocol import CONNECTING, OPEN, Protocol
from websockets.server import ServerProtocol
from websockets.streams import StreamReader

PROTOCOL_ATTRIBUTES = (
    "app",
    "app_state",
    "asgi_version",
    "client",
    "close_sent",
    "close_timeout",
    "close_timer",
    "config",
    "conn",
    "connections",
    "curr_msg_data_type",
    "default_headers",
    "disconnected",
    "frames",
    "handshake_complete",
    "handshake_initiated",
    "initial_response",
    "last_ping_rtt",
    "logger",
    "loop",
    "pending_ping_payload",
    "ping_interval",
    "ping_sent_at",
    "ping_timeout",
    "ping_timer",
    "pong_timer",
    "queue",
    "read_paused",
    "request",
    "response",
    "root_path",
    "scheme",
    "scope",
    "server",
    "tasks",
    "transport",
    "writable",
)
"""The instance attributes of uvicorn's WebSocketsSansIOProtocol (0.54): `ws_lean` slots them."""

_SHARED_EXTENSIONS: dict[int, tuple[Any, Sequence[ServerExtensionFactory]]] = {}


def share_extensions(conn: ServerProtocol, config: Any) -> None:
    """Use the first connection's extension factories (settings only) for every later one.

    uvicorn builds a permessage-deflate factory per connection; it holds only settings and
    makes a new extension object for each handshake that asks for compression.
    """
    shared = _SHARED_EXTENSIONS.get(id(config))
    if shared is None or shared[0] is not config:
        _SHARED_EXTENSIONS.clear()  # one server's config at a time; tests start many in turn
        _SHARED_EXTENSIONS[id(config)] = (config, conn.available_extensions or [])
        return
    conn.available_extensions = shared[1]


def restart_parser(conn: ServerProtocol) -> None:
    """Parse frames with a fresh parser that never saw the request (the old one holds it).

    Only while the parser waits for the first frame with nothing buffered: then the fresh
    generator is exactly where the old one stood (websockets' ServerProtocol.parse delegates
    to Protocol.parse after the request and waits in `at_eof` until data comes).
    """
    reader = conn.reader
    if conn.state is not CONNECTING or conn.eof_sent or conn.handshake_exc is not None:
        return
    if reader.buffer or reader.eof or conn.parser_exc is not None:
        return
    parser = Protocol.parse(conn)
    next(parser)
    conn.parser = parser


_Address = TypeVar("_Address", bound=tuple[Any, ...])
_LOCAL_ADDRESSES: dict[tuple[Any, ...], Any] = {}
_MAX_LOCAL_ADDRESSES = 64


def share_peer(client: _Address | None, transport: asyncio.BaseTransport) -> _Address | None:
    """The transport's own `peername` tuple when it says the same as uvicorn's copy."""
    peer: object = transport.get_extra_info("peername")
    if client is not None and type(peer) is tuple and peer == client:
        return cast(_Address, peer)
    return client


def share_local(server: _Address | None) -> _Address | None:
    """One tuple per local address for every connection (uvicorn makes one per connection)."""
    if server is None:
        return None
    shared: _Address | None = _LOCAL_ADDRESSES.get(server)
    if shared is not None:
        return shared
    if len(_LOCAL_ADDRESSES) >= _MAX_LOCAL_ADDRESSES:
        _LOCAL_ADDRESSES.clear()  # a server listens on a few; tests start many in turn
    _LOCAL_ADDRESSES[server] = server
    return server


_PARSE = Protocol.parse.__code__
_AT_EOF = StreamReader.at_eof.__code__


def restart_idle_parser(conn: ServerProtocol) -> None:
    """Between frames, with nothing buffered, swap in a fresh parser: the running one keeps
    the last frame it parsed (and its payload) in its generator frame until the next comes.

    Only where the fresh one would stand: in `Protocol.parse`, waiting in `at_eof` at the top
    of its loop, with no state of its own but that frame (websockets 17).
    """
    parser: Any = conn.parser
    if conn.state is not OPEN or conn.parser_exc is not None or conn.eof_sent:
        return
    reader = conn.reader
    if reader.buffer or reader.eof or getattr(parser, "gi_code", None) is not _PARSE:
        return
    waiting = parser.gi_yieldfrom
    if getattr(waiting, "gi_code", None) is not _AT_EOF:
        return
    fresh = Protocol.parse(conn)
    next(fresh)
    conn.parser = fresh


_SHARED_SCOPE_PARTS: dict[str, Any] = {}
_SHARED_KEYS = ("asgi", "extensions", "path", "raw_path")


def share_scope_parts(scope: dict[str, Any]) -> None:
    """Share what every WebSocket's scope says alike, instead of a copy per connection.

    uvicorn builds the `asgi` and `extensions` dicts, the path (str and bytes), an empty
    subprotocol list and an empty `state` dict afresh per connection; nothing here (or in
    Starlette) changes them. The list becomes an empty tuple (the spec asks an iterable) and
    an empty `state` goes (Starlette makes one again if a handler asks for its state).
    """
    for key in _SHARED_KEYS:
        value = scope.get(key)
        shared = _SHARED_SCOPE_PARTS.get(key)
        if shared is not None and type(shared) is type(value) and shared == value:
            scope[key] = shared
        elif isinstance(value, dict | str | bytes):
            _SHARED_SCOPE_PARTS[key] = value
    if scope.get("subprotocols") == []:
        scope["subprotocols"] = ()
    if scope.get("state") == {}:
        del scope["state"]
