"""The scripted player's client: sends one step's frame and gathers the frames of its turn."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, cast

from ..npc.client import FrameConnection, connect
from ..npc.frames import FrameError, FrameProtocol
from ..runtime.errors import StarHarnessError
from .evidence import Frame, PlayerTurn


class TurnTimeoutError(StarHarnessError, TimeoutError):
    """The harness did not finish a turn (no `encounter.idle`) in time."""


class ScriptedPlayer:
    """One frame connection; every down frame is checked against the game's protocol."""

    def __init__(
        self, connection: FrameConnection, protocol: FrameProtocol, player_id: str
    ) -> None:
        self._connection = connection
        self._protocol = protocol
        self.player_id = player_id
        self.last_options: list[Frame] = []
        """The items of the last `options` frame seen."""
        self.stray: list[Frame] = []
        """Frames that arrived outside any turn (HUD updates, world events)."""

    async def open(self, encounter_id: str, npc_id: str, *, timeout_s: float) -> PlayerTurn:
        """Walk up to `npc_id`: the turn is the greeting (or just `encounter.idle`)."""
        frame = {"t": "encounter.open", "id": encounter_id, "npcId": npc_id}
        frame["playerId"] = self.player_id
        turn = await self._turn(frame, f"(walks up to {npc_id})", timeout_s)
        turn.opened = True
        return turn

    async def say(self, encounter_id: str, text: str, *, timeout_s: float) -> PlayerTurn:
        frame = {"t": "encounter.say", "id": encounter_id, "text": text}
        return await self._turn(frame, text, timeout_s)

    async def pick(self, encounter_id: str, option: Frame, *, timeout_s: float) -> PlayerTurn:
        frame = {"t": "encounter.say", "id": encounter_id, "optionId": option["id"]}
        turn = await self._turn(frame, f"[{option['label']}]", timeout_s)
        turn.picked = str(option["id"])
        return turn

    def option(self, wanted: int | str) -> Frame | None:
        """The n-th item of the last `options` frame (1 is the first), or the first whose label
        contains `wanted` (any case); None when there is none."""
        options = self.last_options
        if isinstance(wanted, int):
            return options[wanted - 1] if len(options) >= wanted else None
        text = wanted.casefold()
        return next((o for o in options if text in str(o.get("label", "")).casefold()), None)

    def first_offer(self, action: str | None = None) -> Frame | None:
        """The first offer item (one carrying an `offer`) of the last `options` frame, of
        `action` when named."""
        for item in self.last_options:
            offer: object = item.get("offer")
            if offer and (action is None or _action_of(offer) == action):
                return item
        return None

    async def close(self, encounter_id: str) -> None:
        await self._connection.send_text(json.dumps({"t": "encounter.close", "id": encounter_id}))

    async def _turn(self, frame: Frame, said: str, timeout_s: float) -> PlayerTurn:
        turn = PlayerTurn(step=0, said=said, sent_ms=int(time.time() * 1000))
        started = time.perf_counter()
        deadline = started + timeout_s
        await self._connection.send_text(json.dumps(frame))
        encounter_id = frame["id"]
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                turn.turn_s = time.perf_counter() - started
                if turn.of_type("error"):
                    return turn
                raise TurnTimeoutError(f"no encounter.idle within {timeout_s:g} s after {said!r}")
            try:
                raw = await self._connection.receive_text(remaining)
            except TimeoutError:
                continue
            received = json.loads(raw)
            if not isinstance(received, dict):
                turn.invalid_frames.append(f"not a JSON object: {raw[:80]!r}")
                continue
            down = cast(Frame, received)
            problem = self.check(raw)
            if problem is not None:
                turn.invalid_frames.append(problem)
            if down.get("id") != encounter_id:
                self.stray.append(down)
                continue
            kind = down.get("t")
            if kind == "say.delta" and turn.first_delta_s is None:
                turn.first_delta_s = time.perf_counter() - started
            elif kind == "options":
                items: list[Frame] = list(down.get("items") or [])
                self.last_options = items
            turn.frames.append(down)
            # A refused step (busy, bad option, an NPC who cannot meet) answers with an error
            # alone: no turn ran, so no `encounter.idle` follows. A frame-level `limit` error
            # is alone too, but a turn bound is `limit` before `encounter.idle`; wait briefly.
            alone = kind == "error" and len(turn.frames) == 1
            code = down.get("code")
            if alone and code == "limit":
                deadline = min(deadline, time.perf_counter() + _LIMIT_GRACE_S)
            if kind == "encounter.idle" or (alone and code in _NO_TURN):
                turn.ended_idle = kind == "encounter.idle"
                turn.turn_s = time.perf_counter() - started
                return turn

    def check(self, raw: str) -> str | None:
        """Why `raw` is not a valid down frame of the game's protocol; None when it is."""
        try:
            self._protocol.parse_down_frame(raw)
        except FrameError as exc:
            return str(exc)
        return None


def _action_of(offer: object) -> str:
    """The action an offer item's `offer` terms name ("" when they name none)."""
    terms = cast(dict[str, Any], offer) if isinstance(offer, dict) else {}
    return str(terms.get("action", ""))


_NO_TURN = frozenset(
    {
        "bad_frame",
        "bad_option",
        "busy",
        "encounter_exists",
        "forbidden",
        "npc_unavailable",
        "unauthorized",
        "unknown_encounter",
        "unknown_npc",
        "unknown_player",
    }
)
_LIMIT_GRACE_S = 1.0


@asynccontextmanager
async def scripted_player(
    ws_url: str, protocol: FrameProtocol, player_id: str
) -> AsyncGenerator[ScriptedPlayer]:
    """A connected player, bound to `player_id` with `hello` (its `welcome` is checked too)."""
    async with connect(ws_url, protocol=protocol, open_timeout=10) as connection:
        await connection.send_text(json.dumps({"t": "hello", "playerId": player_id}))
        player = ScriptedPlayer(connection, protocol, player_id)
        welcome = await connection.receive_text(10.0)
        problem = player.check(welcome)
        if problem is not None:
            raise ValueError(f"the welcome frame does not fit the game's protocol: {problem}")
        yield player
