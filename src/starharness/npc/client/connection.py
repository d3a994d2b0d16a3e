"""One WebSocket connection to a harness, from the engine's side of the frame protocol."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import (
    ConnectionClosed,
    InvalidHandshake,
    InvalidStatus,
    InvalidURI,
)

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

    async def receive(self) -> Frame:
        """The next down frame; `FrameError` if unreadable, `ConnectionLostError` at the end."""
        try:
            raw = await self._socket.recv()
        except ConnectionClosed as exc:
            raise ConnectionLostError(_closed_reason(exc)) from None
        return self._protocol.parse_down_frame(raw)

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

    async def open_encounter(self, encounter_id: str, npc_id: str, player_id: str) -> None:
        """Walk up to an NPC; `encounter_id` is ours to choose, unique on this connection."""
        await self.send(EncounterOpen(id=encounter_id, npc_id=npc_id, player_id=player_id))

    async def say(self, encounter_id: str, text: str) -> None:
        """Say free text in an encounter."""
        await self.send(EncounterSay(id=encounter_id, text=text))

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
) -> AsyncGenerator[FrameConnection]:
    """Open a frame connection to `url`; `ServerUnreachableError` says why when it cannot."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    try:
        socket = await ws_connect(
            url,
            additional_headers=headers,
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
