"""One addon connection as an asyncio protocol: the token handshake, then answers and events.

Lines are handled inside `data_received`, so an answer resolves its call without an extra hop
through a reader task.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from .. import errors
from ..errors import HandshakeFailure
from ..protocol.framing import LineSplitter, OversizedLine
from ..protocol.messages import (
    EditorReady,
    MalformedMessageError,
    PlayError,
    RpcResponse,
    SceneChanged,
    parse_incoming,
)
from .clients import EditorClient
from .registry import ClientRegistry
from .routing import project_key

Line = bytes | OversizedLine
OVER_CAP_GRACE_S = 1.0
"""How long a connection arriving when too many wait may take to show the token."""


@dataclass(frozen=True, slots=True)
class ConnectionRules:
    """What every connection is checked against."""

    token: str
    handshake_timeout_s: float
    max_line_bytes: int
    max_handshake_bytes: int = 64 * 1024
    max_unauthenticated: int = 16


class _Refused(Exception):
    def __init__(self, reason: HandshakeFailure) -> None:
        super().__init__(reason.value)
        self.reason = reason


class EditorConnection(asyncio.Protocol):
    """A socket from an addon; it becomes a call target once its editor_ready checks out."""

    def __init__(
        self,
        registry: ClientRegistry,
        rules: ConnectionRules,
        on_closed: Callable[[EditorConnection], None],
    ) -> None:
        self._registry = registry
        self._rules = rules
        self._on_closed = on_closed
        self._splitter = LineSplitter(rules.max_line_bytes)
        self._transport: asyncio.Transport | None = None
        self._client: EditorClient | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._handshake: asyncio.Task[None] | None = None
        self._held: list[Line] = []
        self._paired = False
        self._unpaired_bytes = 0
        self._closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Register the connection and start the handshake clock."""
        self._transport = cast(asyncio.Transport, transport)
        waiting = self._registry.unauthenticated()
        self._client = self._registry.open(self._transport)
        loop = asyncio.get_running_loop()
        if waiting >= self._rules.max_unauthenticated:
            # Full of strangers. The real editor hands over the token as it connects: it gets
            # a moment to, and then takes the place of the oldest stranger (squatters that
            # reconnect kept it out for good when a newcomer was refused at once).
            grace = min(self._rules.handshake_timeout_s, OVER_CAP_GRACE_S)
            self._timer = loop.call_later(
                grace, self._refuse, HandshakeFailure.TOO_MANY_UNAUTHENTICATED
            )
            return
        self._timer = loop.call_later(
            self._rules.handshake_timeout_s, self._refuse, HandshakeFailure.HANDSHAKE_TIMEOUT
        )

    def data_received(self, data: bytes) -> None:
        """Handle complete lines: the handshake first, then answers and events."""
        if self._transport is None or self._transport.is_closing():
            return
        if not self._paired:
            # Before the token is checked nothing is trusted: hold no more than a handshake.
            self._unpaired_bytes += len(data)
            if self._unpaired_bytes > self._rules.max_handshake_bytes:
                self._held.clear()
                self._refuse(HandshakeFailure.HANDSHAKE_TOO_LARGE)
                return
        lines = self._splitter.feed(data)
        if self._paired:
            self._dispatch(lines)
        elif self._handshake is not None:
            self._held.extend(lines)
        elif lines:
            self._held.extend(lines[1:])
            self._begin_handshake(lines[0])

    def connection_lost(self, exc: Exception | None) -> None:
        """Fail the client's in-flight calls at once and forget it."""
        if self._timer is not None:
            self._timer.cancel()
        if self._handshake is not None:
            self._handshake.cancel()
        if self._client is not None:
            self._registry.close(self._client)
        if not self._closed.done():
            self._closed.set_result(None)
        self._on_closed(self)

    def close(self) -> None:
        """Close the socket; connection_lost follows."""
        if self._transport is not None:
            self._transport.close()

    async def wait_closed(self) -> None:
        """Return once the connection is gone and its handshake task has finished."""
        await self._closed
        if self._handshake is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._handshake

    def _begin_handshake(self, first: Line) -> None:
        if self._timer is not None:
            self._timer.cancel()
        try:
            ready = _as_editor_ready(first)
            if not ready.token:
                raise _Refused(HandshakeFailure.MISSING_TOKEN)
            expected = self._rules.token.lower().encode()
            if not secrets.compare_digest(ready.token.lower().encode(), expected):
                raise _Refused(HandshakeFailure.BAD_TOKEN)
        except _Refused as refused:
            self._refuse(refused.reason)
            return
        if self._client is not None:
            self._client.vouched = True
            self._make_room()
        self._handshake = asyncio.create_task(self._pair(ready))

    def _make_room(self) -> None:
        """Over the cap of waiting connections, close the oldest that never showed the token."""
        registry = self._registry
        if registry.unauthenticated() <= self._rules.max_unauthenticated:
            return
        stranger = registry.oldest_stranger()
        if stranger is not None:
            registry.handshake_failed(stranger, HandshakeFailure.TOO_MANY_UNAUTHENTICATED)
            stranger.transport.close()

    async def _pair(self, ready: EditorReady) -> None:
        # Resolving symlinks touches the filesystem, so it runs off the event loop.
        key = await asyncio.to_thread(project_key, ready.project_path)
        transport, client = self._transport, self._client
        if transport is None or client is None or transport.is_closing():
            return
        self._registry.authenticate(client, ready, key)
        self._paired = True
        held, self._held = self._held, []
        self._dispatch(held)

    def _refuse(self, reason: HandshakeFailure) -> None:
        if self._client is not None:
            self._registry.handshake_failed(self._client, reason)
        self.close()

    def _dispatch(self, lines: list[Line]) -> None:
        client = self._client
        if client is None:
            return
        for line in lines:
            if isinstance(line, OversizedLine):
                self._drop_oversized(line, client)
                continue
            try:
                message = parse_incoming(line)
            except MalformedMessageError as exc:
                # Malformed lines are dropped and remembered; the connection lives on.
                self._registry.note_malformed(client, str(exc))
                continue
            if isinstance(message, RpcResponse):
                self._registry.deliver(client, message)
            elif isinstance(message, SceneChanged):
                self._registry.scene_changed(client, message.path)
            elif isinstance(message, PlayError):
                self._registry.play_error(client, message)
            # A repeated editor_ready changes nothing: the client is already paired.

    def _drop_oversized(self, line: OversizedLine, client: EditorClient) -> None:
        request_id = line.request_id()
        pending = client.pending.get(request_id) if request_id is not None else None
        method = pending.method if pending is not None else "a request"
        error = errors.response_too_large(method, line.size, self._rules.max_line_bytes)
        self._registry.note_error(error)
        if request_id is not None:
            self._registry.fail_call(client, request_id, error)


def _as_editor_ready(line: Line) -> EditorReady:
    if isinstance(line, OversizedLine):
        raise _Refused(HandshakeFailure.NOT_EDITOR_READY)
    try:
        message = parse_incoming(line)
    except MalformedMessageError:
        raise _Refused(HandshakeFailure.NOT_EDITOR_READY) from None
    if not isinstance(message, EditorReady):
        raise _Refused(HandshakeFailure.NOT_EDITOR_READY)
    return message
