"""One WebSocket connection to a harness, from the engine's side of the frame protocol.

The one frame client: `star-harness talk`, the eval's scripted player and the tests all use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Literal

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import (
    ConnectionClosed,
    InvalidHandshake,
    InvalidStatus,
    InvalidURI,
)
from websockets.typing import Origin

from ..frames import (
    GENERIC_PROTOCOL,
    EncounterClose,
    EncounterOpen,
    EncounterSay,
    Frame,
    FrameProtocol,
    Hello,
    WorldTick,
    encode,
)
from ..frames.base import WireModel
from .errors import ClientError, ConnectionLostError, ServerUnreachableError

DEFAULT_URL = "ws://127.0.0.1:3099/gh"
_MAX_FRAME_BYTES = 16 * 1024 * 1024
# Leaving must stay quick even when the harness no longer answers the closing handshake.
_CLOSE_TIMEOUT_S = 2.0


class FrameConnection:
    """Send up frames and receive parsed down frames over one open WebSocket."""

    def __init__(self, socket: ClientConnection, url: str, protocol: FrameProtocol) -> None:
        self._socket = socket
        self._protocol = protocol
        self.url = url

    @property
    def socket(self) -> ClientConnection:
        """The WebSocket itself, for what frames do not say (tests write raw bytes on it)."""
        return self._socket

    async def receive(self) -> Frame:
        """The next down frame; `FrameError` if unreadable, `ConnectionLostError` at the end."""
        return self._protocol.parse_down_frame(await self.receive_text())

    async def receive_text(self, timeout_s: float | None = None) -> str:
        """The next frame's text, unparsed; `TimeoutError` after `timeout_s`,
        `ConnectionLostError` at the end."""
        try:
            raw = await asyncio.wait_for(self._socket.recv(), timeout_s)
        except ConnectionClosed as exc:
            received = exc.rcvd
            code, reason = (received.code, received.reason) if received else (None, "")
            raise ConnectionLostError(_closed_reason(exc), code, reason) from None
        return raw if isinstance(raw, str) else raw.decode("utf-8", "replace")

    async def send(self, frame: WireModel) -> None:
        """Send one frame as JSON text."""
        await self.send_text(encode(frame))

    async def send_text(self, text: str) -> None:
        """Send raw text as one frame (tests use it to send malformed frames)."""
        try:
            await self._socket.send(text)
        except ConnectionClosed as exc:
            raise ConnectionLostError(_closed_reason(exc)) from None

    async def hello(self, player_id: str) -> None:
        """Bind this connection to `player_id`; the harness answers `welcome`."""
        await self.send(Hello(player_id=player_id))

    async def open_encounter(
        self,
        encounter_id: str,
        npc_id: str,
        player_id: str,
        npc_ids: Sequence[str] | None = None,
        *,
        join: bool = False,
    ) -> None:
        """Walk up to an NPC (with `npc_ids`, to a scene of these NPCs, `npc_id` first; with
        `join` too, revision 3, the scene other players at the place share with them);
        `encounter_id` is ours to choose, unique on this connection."""
        scene = None if npc_ids is None else list(npc_ids)
        await self.send(
            EncounterOpen(
                id=encounter_id,
                npc_id=npc_id,
                player_id=player_id,
                npc_ids=scene,
                join=True if join else None,
            )
        )

    async def say(self, encounter_id: str, text: str, to: str | None = None) -> None:
        """Say free text in an encounter (in a scene, `to` one of its NPCs)."""
        await self.send(EncounterSay(id=encounter_id, text=text, to=to))

    async def choose(self, encounter_id: str, option_id: str) -> None:
        """Pick an item of the encounter's last `options` frame."""
        await self.send(EncounterSay(id=encounter_id, option_id=option_id))

    async def close_encounter(self, encounter_id: str) -> None:
        """Walk away from an encounter."""
        await self.send(EncounterClose(id=encounter_id))

    async def tick(self, days: int) -> None:
        """Advance the world clock by `days`."""
        await self.send(WorldTick(days=days))

    async def close(self) -> None:
        """Close the WebSocket; the harness closes this connection's encounters."""
        await self._socket.close()


@asynccontextmanager
async def connect(
    url: str = DEFAULT_URL,
    *,
    token: str | None = None,
    protocol: FrameProtocol = GENERIC_PROTOCOL,
    open_timeout: float = 5.0,
    headers: Mapping[str, str] | None = None,
    origin: str | None = None,
    compression: Literal["deflate"] | None = "deflate",
    max_queue: int | None = 16,
) -> AsyncGenerator[FrameConnection]:
    """Open a frame connection to `url`; `ServerUnreachableError` says why when it cannot.

    `origin` is what a browser page would send; `max_queue` (frames received and not yet
    read, None for no bound) is websockets' own.
    """
    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    try:
        socket = await ws_connect(
            url,
            additional_headers=sent or None,
            origin=None if origin is None else Origin(origin),
            compression=compression,
            max_queue=max_queue,
            open_timeout=open_timeout,
            close_timeout=_CLOSE_TIMEOUT_S,
            max_size=_MAX_FRAME_BYTES,
            # A harness is usually on this machine; a system proxy would only get in the way.
            proxy=None,
        )
    except InvalidURI:
        raise ClientError(f"{url!r} is not a WebSocket URL (like {DEFAULT_URL})") from None
    except InvalidStatus as exc:
        status = exc.response.status_code
        raise ServerUnreachableError(f"{url} refused the connection: HTTP {status}") from None
    except InvalidHandshake as exc:
        raise ServerUnreachableError(f"{url} did not accept a WebSocket: {exc}") from None
    except TimeoutError:
        raise ServerUnreachableError(f"{url} did not answer within {open_timeout:g} s") from None
    except ConnectionRefusedError:
        raise ServerUnreachableError(
            f"cannot reach {url}: connection refused (is the server running?)"
        ) from None
    except OSError as exc:
        raise ServerUnreachableError(f"cannot reach {url}: {exc.strerror or exc}") from None
    connection = FrameConnection(socket, url, protocol)
    try:
        yield connection
    finally:
        await connection.close()


def _closed_reason(exc: ConnectionClosed) -> str:
    received = exc.rcvd
    if received is None:
        return "the connection to the harness dropped"
    reason = f": {received.reason}" if received.reason else ""
    return f"the harness closed the connection (code {received.code}{reason})"
