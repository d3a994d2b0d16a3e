"""A worker's open connections and the players they show: where news and HUD changes land."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..frames import FrameProtocol, encode
from ..world import NewsItem, World
from ..world_calls import WorldCalls
from .connection import Connection
from .metrics import ServerMetrics
from .outage import WorldWatch, is_outage


class PlayerConnections:
    """Counts this worker's connections, and which of them show each player; delivers the
    fan-out's news to every one and a player's HUD to that player's (the fan-out's sink)."""

    def __init__(
        self,
        protocol: FrameProtocol,
        world: World,
        calls: WorldCalls,
        watch: WorldWatch,
        metrics: ServerMetrics,
    ) -> None:
        self._protocol = protocol
        self._world = world
        self._calls = calls
        self._watch = watch
        self._metrics = metrics
        self.connections: set[Connection] = set()
        self._players: dict[str, dict[Connection, int]] = {}
        self._pending: set[asyncio.Task[str | None]] = set()
        """HUD reads the outboxes of a player's connections wait for."""

    # -- who is here -------------------------------------------------------------------------

    def connected(self, connection: Connection) -> None:
        """`connection` was accepted: counted until `disconnected`."""
        self.connections.add(connection)
        self._metrics.connections.inc()

    def disconnected(self, connection: Connection) -> None:
        """`connection` ended (its encounters are closed): no longer counted or sent HUDs."""
        self.connections.discard(connection)
        self._metrics.connections.dec()
        if connection.attached and connection.player_id is not None:
            self.release(connection, connection.player_id)

    def attach(self, connection: Connection, player_id: str) -> None:
        """Count `connection` among the player's (for HUD frames) until released."""
        holders = self._players.setdefault(player_id, {})
        holders[connection] = holders.get(connection, 0) + 1

    def release(self, connection: Connection, player_id: str) -> None:
        """One `attach` of `connection` to the player is over (an encounter ended, or the
        connection's `hello`): past the last, it gets no more of the player's HUDs."""
        holders = self._players.get(player_id)
        if holders is None or connection not in holders:
            return
        holders[connection] -= 1
        if holders[connection] <= 0:
            del holders[connection]
        if not holders:
            del self._players[player_id]

    # -- what the fan-out delivers -----------------------------------------------------------

    def deliver_news(self, events: Sequence[NewsItem]) -> None:
        """`world.event` frames for `events` to every connection of this worker."""
        frames = [
            encode(self._protocol.world_event(location_id=e.location_id, headline=e.headline))
            for e in events
        ]
        for connection in list(self.connections):
            for text in frames:
                connection.outbox.put(text)

    def deliver_hud(self, player_id: str | None) -> None:
        """Push the HUD of `player_id` (None: every player) to its connections here."""
        for player in list(self._players) if player_id is None else [player_id]:
            self._push_hud_here(player)

    def bus_lost(self) -> None:
        """The fan-out's link dropped: the world's database may be down with it."""
        self._watch.suspect()

    def _push_hud_here(self, player_id: str) -> None:
        connections = self._players.get(player_id)
        if not connections:
            return
        # One read of the world, in a thread, shared by every connection of the player; each
        # outbox waits for it in place, so the HUD keeps its order among the frames.
        task = asyncio.get_running_loop().create_task(self._hud_text(player_id))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        for connection in connections:
            connection.send_pending(task)

    async def _hud_text(self, player_id: str) -> str | None:
        try:
            data = await self._calls.run(self._world.player_view, player_id)
        except Exception as exc:
            if not is_outage(exc):
                raise
            # Skipped, not lost: the watch pushes every HUD again once the world answers.
            self._watch.failed(exc, "a HUD read")
            return None
        return encode(self._protocol.hud(player_id=player_id, data=dict(data)))

    async def aclose(self) -> None:
        """Stop the HUD reads still pending."""
        for task in list(self._pending):
            task.cancel()
        await asyncio.gather(*self._pending, return_exceptions=True)
