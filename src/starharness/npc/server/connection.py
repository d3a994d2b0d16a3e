"""One engine connection: reads frames in order, runs its encounters, writes through an outbox."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Collection, Coroutine, Mapping
from typing import Any, Protocol, cast

from starlette.types import Message, Receive
from starlette.websockets import WebSocket, WebSocketState

from ..encounter import Encounter
from ..frames import (
    EncounterClose,
    EncounterOpen,
    EncounterSay,
    ErrorCode,
    ErrorFrame,
    Frame,
    FrameError,
    Hello,
    Welcome,
    WorldTick,
    encode,
    parse_up_frame,
)
from ..identity import SCOPE_TICK
from .access import Access
from .frame_fairness import PassBudget
from .metrics import ServerMetrics
from .outage import WorldWatch, is_outage, outage_error
from .outbox import Outbox, Pending
from .rate import TokenBucket
from .scene import SceneSeat
from .settings import ServerSettings

_log = logging.getLogger("starharness.npc.server")

POLICY_VIOLATION = 1008
KEPT_HEADERS = frozenset((b"host", b"origin"))
"""The headers an accepted WebSocket's scope keeps (the rest go once it is admitted)."""


def keep_headers(scope: Mapping[str, Any], names: Collection[bytes]) -> None:
    """Keep only the headers named `names` in an accepted WebSocket's scope (in place).

    Once it is admitted, nothing reads a connection's other headers; a browser's (cookies,
    user agent, languages) are most of what its scope holds.
    """
    headers = scope.get("headers")
    if isinstance(headers, list):
        kept: list[tuple[bytes, bytes]] = [
            (name, value)
            for name, value in cast(list[tuple[bytes, bytes]], headers)
            if name in names
        ]
        headers[:] = kept


class FrameWebSocket(WebSocket):
    """Starlette's WebSocket with its attributes (and the lazily cached ones) in slots."""

    __slots__ = (
        "_base_url",
        "_cookies",
        "_headers",
        "_query_params",
        "_receive",
        "_send",
        "_state",
        "_url",
        "application_state",
        "client_state",
        "scope",
    )
    _receive: Receive

    def next_message(self) -> Awaitable[Message]:
        """The server's own `receive`: Starlette's adds a coroutine frame to every waiting
        socket (its checks are the connection's, see `Connection.serve`)."""
        return self._receive()


class ConnectionHost(Protocol):
    """What a connection asks of the server it belongs to (`NpcServer`)."""

    @property
    def settings(self) -> ServerSettings: ...

    @property
    def metrics(self) -> ServerMetrics: ...

    @property
    def frame_budget(self) -> PassBudget: ...

    @property
    def world_watch(self) -> WorldWatch: ...

    @property
    def players_may_tick(self) -> bool: ...

    def connected(self, connection: Connection) -> None: ...

    def disconnected(self, connection: Connection) -> None: ...

    async def welcome(self, player_id: str) -> Welcome: ...

    def attach(self, connection: Connection, player_id: str) -> None: ...

    async def open_encounter(self, connection: Connection, frame: EncounterOpen) -> Encounter: ...

    async def open_scene(self, connection: Connection, frame: EncounterOpen) -> SceneSeat: ...

    def end_scene(self, seat: SceneSeat) -> None: ...

    async def tick(self, days: int) -> None: ...


class Connection:
    """Frames are handled one at a time, in arrival order; turns run in the agents' tasks."""

    __slots__ = (
        "_close_code",
        "_ended",
        "_expiry",
        "_frames",
        "_left",
        "_limits",
        "_opens",
        "_reading",
        "_says",
        "access",
        "attached",
        "dropped",
        "encounters",
        "outbox",
        "server",
        "websocket",
    )

    def __init__(self, server: ConnectionHost, websocket: FrameWebSocket, access: Access) -> None:
        self.server = server
        self.websocket = websocket
        self.access = access
        # Counted among its player's connections (for HUD frames) since `hello`.
        self.attached = False
        self.encounters: dict[str, Encounter | SceneSeat] = {}
        self._left: dict[str, None] = {}
        """Ids of encounters the harness ended (in order, the latest few): the client's own
        `encounter.close` of one is then quiet, though it holds no slot any more."""
        limits = server.settings.limits
        self._limits = limits
        self._says = TokenBucket(limits.says_per_second, limits.say_burst)
        self._opens = TokenBucket(limits.opens_per_second, limits.open_burst)
        self._frames = TokenBucket(limits.frames_per_second, limits.frame_burst)
        # The task reading frames (the one serving the WebSocket), until it stops.
        self._reading: asyncio.Task[None] | None = None
        self._ended = False
        # Set when the server ends the connection for a reason the client must hear in the close.
        self._close_code: int | None = None
        # Fires when the token binding this connection expires (a timer, not a task: an open
        # connection keeps no coroutine frame for it); cancelled when the connection ends.
        self._expiry: asyncio.TimerHandle | None = None
        self.dropped: str | None = None
        self.outbox = Outbox(
            self, max_frames=limits.send_queue_frames, timeout_s=limits.send_timeout_s
        )

    @property
    def player_id(self) -> str | None:
        """The player this connection is bound to (by its token or `hello`), if any."""
        return self.access.player_id

    # -- output ------------------------------------------------------------------------------

    def send(self, frame: Frame) -> None:
        """Queue a frame for this connection."""
        if isinstance(frame, ErrorFrame):
            self.server.metrics.errors.labels(frame.code.value).inc()
        self.outbox.put(encode(frame))

    def send_pending(self, pending: Pending) -> None:
        self.outbox.put(pending)

    def _error(self, error: FrameError) -> None:
        self.send(ErrorFrame.from_error(error))

    def send_text(self, text: str) -> Coroutine[Any, Any, None]:
        """One frame to the socket (the outbox's way out)."""
        return self.websocket.send_text(text)

    def stalled(self, reason: str) -> None:
        """The outbox gave up on a client that stopped reading: drop the connection."""
        _log.warning("dropping a connection: %s", reason)
        self.dropped = reason
        self.server.metrics.dropped.inc()
        self._end()

    def send_failed(self, error: BaseException) -> None:
        """A send failed (the outbox is closed by then)."""
        # The client is gone (or the socket broke): nothing more can reach it.
        _log.debug("a send failed; closing the connection: %r", error)
        self._end()

    def _watch_expiry(self) -> None:
        """(Re)arm the timer ending this connection when its player token expires."""
        deadline = self.access.expires_at
        if deadline is None or self._ended:
            return
        if self._expiry is not None:
            self._expiry.cancel()
        delay = max(0.0, deadline - time.time())
        self._expiry = asyncio.get_running_loop().call_later(delay, self._expired)

    def _expired(self) -> None:
        self._expiry = None
        if self._ended:
            return
        # The token may have been renewed meanwhile (a later `hello` with a fresh one).
        if not self.access.expired(time.time()):
            self._watch_expiry()
            return
        _log.info("closing a connection of %r: its player token expired", self.player_id)
        self._error(self.access.expiry_error())
        self._close_code = POLICY_VIOLATION
        self._end()

    def _end(self) -> None:
        # Stops the reading where it waits (mid-frame too), as a cancelled reader task would.
        if self._ended:
            return
        self._ended = True
        if self._reading is not None:
            self._reading.cancel()

    # -- the connection's life ---------------------------------------------------------------

    async def serve(self) -> None:
        """Accept; read frames until the client leaves or is dropped; then close every encounter.

        One coroutine from the accept to the end: the server's `connect` hands it to the ASGI
        server as is. Frames are read in this very frame, straight from the ASGI `receive`;
        a reader task of its own, or each frame of Starlette's and the server's plumbing, cost
        every open connection memory for its whole life.
        """
        task = asyncio.current_task()
        assert task is not None
        websocket = self.websocket
        await websocket.accept()
        # Admitted: only Host and Origin are still told (a connection's peer is in the scope).
        keep_headers(websocket.scope, KEPT_HEADERS)
        server = self.server
        server.connected(self)
        self._reading = task
        self._watch_expiry()
        limit = self._limits.max_frame_bytes
        budget = server.frame_budget
        try:
            while True:
                mark = budget.mark()
                message = await websocket.next_message()
                # Still the pass of the last frame handled: this one was queued already.
                queued = mark is not None and budget.mark() is mark
                owed = self._frames.reserve()
                if owed:
                    # A flood: this socket is not read until its turn comes (its sender backs
                    # up in TCP), while every other connection is served.
                    await asyncio.sleep(owed)
                if budget.spent() and queued:
                    # A backlog, and enough frames this pass: the rest of the loop runs first.
                    # A frame the socket waited for is not held: it has waited its turn.
                    await asyncio.sleep(0)
                if message["type"] != "websocket.receive":
                    # As Starlette's receive: a disconnect ends the socket, anything else is
                    # an error (which ended the reading just the same).
                    if message["type"] == "websocket.disconnect":
                        websocket.client_state = WebSocketState.DISCONNECTED
                    return
                text: str | None = message.get("text")
                # Neither the message nor its text is held while the next one is awaited.
                del message
                if text is None:
                    self._error(
                        FrameError(ErrorCode.BAD_FRAME, "frames must be JSON text, not binary")
                    )
                    continue
                if len(text) * 4 > limit and len(text.encode()) > limit:
                    del text
                    self._error(
                        FrameError(ErrorCode.LIMIT, f"the frame is larger than {limit} bytes")
                    )
                    continue
                await self._handle(text)
                del text
        except asyncio.CancelledError:
            # Ours (the connection was dropped) ends here; anyone else's goes on up.
            if not self._ended or task.uncancel() > 0:
                raise
        finally:
            self._reading = None
            self._ended = True
            if self._expiry is not None:
                self._expiry.cancel()
                self._expiry = None
            try:
                if self._close_code is not None:
                    await self._close_socket(self._close_code)
                await self.outbox.aclose()
                await self._close_encounters()
            finally:
                server.disconnected(self)

    async def _close_socket(self, code: int) -> None:
        """Let the frames already queued (the `error` saying why) leave, then close with `code`."""
        await self.outbox.drain(self._limits.send_timeout_s)
        websocket = self.websocket
        if websocket.client_state is not WebSocketState.CONNECTED:
            return
        try:
            await websocket.close(code, "unauthorized")
        except Exception as exc:  # the client left first: nothing more to tell it
            _log.debug("closing a connection failed: %r", exc)

    async def _close_encounters(self) -> None:
        encounters = list(self.encounters.values())
        self.encounters.clear()
        if encounters:
            await asyncio.gather(*(e.close() for e in encounters), return_exceptions=True)

    async def _handle(self, text: str) -> None:
        frame: Frame | None = None
        try:
            if self.access.expired(time.time()):
                # The timer may not have run yet: nothing is done on an expired token's word.
                self._expired()
                return
            frame = parse_up_frame(text)
            if not isinstance(frame, EncounterClose):
                # The others read or write the world: none starts while it is out of reach.
                watch = self.server.world_watch
                if watch.deciding:
                    await watch.decided()
                watch.refuse_if_down(_encounter_id(frame))
            if isinstance(frame, EncounterSay):
                await self._say(frame)
            elif isinstance(frame, EncounterOpen):
                await self._open(frame)
            elif isinstance(frame, EncounterClose):
                await self._close(frame)
            elif isinstance(frame, Hello):
                await self._hello(frame)
            else:
                await self._tick(frame)
        except FrameError as error:
            self._error(error)
        except Exception as exc:
            if is_outage(exc):
                # A database down: said plainly to the player, one log line per kind.
                encounter_id = None if frame is None else _encounter_id(frame)
                self.server.world_watch.failed(exc, f"a {getattr(frame, 't', 'frame')} frame")
                self._error(outage_error(encounter_id))
                return
            _log.exception("a frame failed: %.200s", text)
            self._error(FrameError(ErrorCode.INTERNAL, "the frame failed inside the harness"))

    # -- frames ------------------------------------------------------------------------------

    async def _hello(self, frame: Hello) -> None:
        access = self.access
        player = frame.player_id
        if frame.token is not None and access.credentials.players is not None:
            access.bind_token(frame.token, player)
            self._watch_expiry()
        access.check_acts_for(player, time.time())
        welcome = await self.server.welcome(player)
        access.bind(player)
        if not self.attached:
            self.attached = True
            self.server.attach(self, player)
        self.send(welcome)

    async def _open(self, frame: EncounterOpen) -> None:
        if frame.id in self.encounters:
            raise FrameError(
                ErrorCode.ENCOUNTER_EXISTS, f"encounter {frame.id!r} is already open", frame.id
            )
        self.access.check_acts_for(frame.player_id, time.time(), frame.id)
        if len(self.encounters) >= self._limits.max_encounters:
            raise FrameError(
                ErrorCode.LIMIT,
                f"at most {self._limits.max_encounters} encounters may be open per connection",
                frame.id,
            )
        if not self._opens.take():
            raise FrameError(
                ErrorCode.LIMIT,
                f"too many opens: at most {self._limits.opens_per_second:g} per second",
                frame.id,
            )
        if frame.npc_ids is not None:
            self.encounters[frame.id] = await self.server.open_scene(self, frame)
            return
        encounter = await self.server.open_encounter(self, frame)
        self.encounters[frame.id] = encounter

    async def _say(self, frame: EncounterSay) -> None:
        encounter = self._encounter(frame.id)
        if frame.text is not None and len(frame.text) > self._limits.max_text_chars:
            raise FrameError(
                ErrorCode.LIMIT,
                f"the text has {len(frame.text)} characters; at most "
                f"{self._limits.max_text_chars} are allowed",
                frame.id,
            )
        if not self._says.take():
            raise FrameError(
                ErrorCode.LIMIT,
                f"too many says: at most {self._limits.says_per_second:g} per second",
                frame.id,
            )
        if isinstance(encounter, Encounter) and frame.to not in (None, encounter.npc.id):
            raise FrameError(
                ErrorCode.UNKNOWN_NPC,
                f"NPC {frame.to!r} is not in this encounter (it is with {encounter.npc.id!r}); "
                "open a scene with npcIds to talk to several",
                frame.id,
            )
        await encounter.say(frame)

    async def _close(self, frame: EncounterClose) -> None:
        if frame.id not in self.encounters and frame.id in self._left:
            del self._left[frame.id]
            return
        encounter = self._encounter(frame.id)
        del self.encounters[frame.id]
        await encounter.close()

    async def _tick(self, frame: WorldTick) -> None:
        if not (self.server.players_may_tick or self.access.has_scope(SCOPE_TICK)):
            raise FrameError(
                ErrorCode.FORBIDDEN,
                "the world clock belongs to the game: players may not send world.tick here",
            )
        await self.server.tick(frame.days)

    def forget(self, encounter: Encounter) -> None:
        """`encounter` ended without this connection closing it (the harness ended it after a
        deal took the player away): it no longer holds one of the connection's slots. In a
        scene, the player's other encounters there are closed too (they leave it)."""
        held = self.encounters.get(encounter.id)
        in_scene = isinstance(held, SceneSeat) and held.holds(encounter)
        if held is encounter or in_scene:
            if isinstance(held, SceneSeat):
                self.server.end_scene(held)
            del self.encounters[encounter.id]
            self._left[encounter.id] = None
            if len(self._left) > self._limits.max_encounters:
                del self._left[next(iter(self._left))]

    def _encounter(self, encounter_id: str) -> Encounter | SceneSeat:
        encounter = self.encounters.get(encounter_id)
        if encounter is None:
            raise FrameError(
                ErrorCode.UNKNOWN_ENCOUNTER,
                f"no open encounter {encounter_id!r} on this connection",
                encounter_id,
            )
        return encounter


def _encounter_id(frame: Frame) -> str | None:
    encounter_id = getattr(frame, "id", None)
    return encounter_id if isinstance(encounter_id, str) else None
