"""A tiny stand-in harness: serves web/ and speaks frame protocol v1 with canned turns.

It validates every frame the page sends with the real frame parser, records them, and can be
stopped and restarted on the same port (to test reconnecting). A gate holds turns half-way so a
test can look at the page while a line is still streaming.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from starharness.npc.frames import FrameError, parse_up_frame

WEB_ROOT = Path(__file__).resolve().parents[2] / "web"
WAIT_S = 15.0
"""Generous: only a broken test waits this long."""

PLAYER = "player-1"
HOME = {"id": "omega-station", "name": "Omega station"}
NPCS = [
    {"id": "npc-karsk", "name": "Jonah Karsk", "locationId": "omega-station"},
    {"id": "npc-brandt", "name": "Ilse Brandt", "locationId": "omega-station"},
    {"id": "npc-vex", "name": "Vex", "locationId": "kessler-hollow"},
]
ATTITUDES = {"npc-karsk": 0, "npc-brandt": 10, "npc-vex": -30}
GOOD_CUSTOMER = 15
"""How much a purchase warms Karsk; the `hud` frame after it carries his new attitude."""

GREETING = "Sit down, captain. Fuel, gel, the odd crate nobody asks about. What do you need?"
SOLD = "Two cells, topped up. Fly safe."
REFUSED = "You have 11,100 credits. That freighter costs 90,000. Come back richer."
OPTIONS = [
    {"id": "buy-fuel", "label": "Two fuel cells, please (900 cr)"},
    {"id": "buy-ship", "label": "I'll take your freighter (90,000 cr)"},
    {"id": "not-today", "label": "Nothing today"},
]
FUEL_PRICE = 900
GEL_TEXT = "medical gel"
"""Free text the NPC answers with an offer (an option the player accepts to commit a trade)."""
GEL_PITCH = "Three packs of gel, 1,100 a pack. Say the word."
GEL_PRICE = 3_300
GEL_SOLD = "Pleasure. Keep them cold."
GEL_MOVED = "Prices went up while we talked. Still want them?"
OFFER = {
    "id": "offer-1",
    "label": "Buy 3 medical gel",
    "offer": {"action": "player_buys", "cost": "3,300 cr"},
}
OFFER_OPTIONS = [OFFER, {"id": "too-steep", "label": "Too steep for me."}, OPTIONS[2]]
FAILING_TEXT = "break the model"
"""Free text that makes the fake report `llm_unavailable`, like a model outage would."""
ODD_MOOD_TEXT = "tell me a joke"
"""Free text answered with a mood outside the protocol's enum."""
ODD_MOOD = "bemused"
TRAVEL_TEXT = "passage to the hollow"
"""Free text the NPC answers by flying the player to Kessler Hollow (a committed action)."""
AWAY: dict[str, Any] = {
    "id": "kessler-hollow",
    "name": "Kessler Hollow",
    "description": "A hollowed rock at the edge of the belt; nobody asks where cargo came from.",
    "people": [{"id": "npc-vex", "name": "Vex"}],
}
"""Where passage takes the player: its view says who is here (HOME's leaves it to `welcome`)."""
STORY_TEXT = "tell me about the station"
"""Free text the NPC answers at length (a paragraph), for layout tests."""
STORY = (
    "Omega was a mining platform before it was a port: the ring you walked in on was the ore "
    "conveyor, and the bar sits where the smelter foreman drank himself out of a job. Keep "
    "your hold sealed and your manifest honest."
)
LONG_CARGO = [
    {"goodId": f"good-{n}", "name": name, "qty": qty}
    for n, (name, qty) in enumerate(
        [
            ("hydroponic seed vaults", 12),
            ("reactor-grade coolant", 250),
            ("medical gel", 3),
            ("nebula spice", 1),
            ("salvaged navigation cores", 7),
            ("drive parts", 40),
            ("sealed diplomatic pouches", 2),
            ("coffee", 1_500),
        ]
    )
]
"""A hold full of goods with long names: what a long cargo line must show whole."""
FAREWELL = "Strap in, captain. Next stop, the Hollow."


@dataclass
class _Turn:
    """One canned NPC turn."""

    line: str
    mood: str
    action: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    options: list[dict[str, Any]] | None = None
    """The replies after the line; the usual three when None."""
    closes: bool = False
    """End with `encounter.closed` instead of options and idle."""
    parts: bool = False
    """The player left: the harness ends the encounter after this turn (as the real one does
    once the NPC can no longer meet the player)."""


@dataclass
class FakeHarness:
    """Serve the client and answer its frames; one instance per test."""

    web_root: Path = WEB_ROOT
    received: list[dict[str, Any]] = field(default_factory=list)
    credits: int = 12_000
    day: int = 1
    fuel: int = 0
    gel: int = 0
    gel_price_moved: bool = False
    """Refuse the gel offer as a harness does when the world changed under it."""
    attitudes: dict[str, int] = field(default_factory=lambda: dict(ATTITUDES))
    location: dict[str, Any] = field(default_factory=lambda: dict(HOME))
    cargo: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """More goods in the hold, after the fuel and gel bought in the test."""
    closes_on_travel: bool = False
    """End a travel turn with `encounter.closed` (no options, no idle), as a harness that closes
    the encounter when the player leaves; otherwise the turn ends as any other."""
    port: int = 0
    _sockets: set[WebSocket] = field(default_factory=set)
    _open: set[str] = field(default_factory=set[str])
    """Encounters open on the harness's side; closing another is `unknown_encounter`."""
    _gate: asyncio.Event = field(default_factory=asyncio.Event)
    _engine: uvicorn.Server | None = None
    _task: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self._gate.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    # lifecycle

    async def start(self) -> None:
        """Listen (on the previous port after a stop, so the page can find us again)."""
        sock = _bind(self.port)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self._app(), log_level="warning", access_log=False, lifespan="off")
        engine = _QuietUvicorn(config)
        self._engine = engine
        self._task = asyncio.create_task(engine.serve(sockets=[sock]))
        async with asyncio.timeout(WAIT_S):
            while not engine.started:
                if self._task.done():
                    self._task.result()
                await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """Close every socket and the listener, like a server process going away."""
        self._gate.set()
        for ws in list(self._sockets):
            with contextlib.suppress(Exception):
                await ws.close(code=1012)
        if self._engine is not None and self._task is not None:
            self._engine.should_exit = True
            await self._task
        self._engine = None
        self._task = None

    # what tests use

    def hold_turns(self) -> None:
        """Make the next turns stop half-way through their line until `release_turns`."""
        self._gate.clear()

    def release_turns(self) -> None:
        self._gate.set()

    async def push(self, frame: dict[str, Any]) -> None:
        """Send `frame` to every connected page (there must be one)."""
        assert self._sockets, "no page is connected; wait for its hello first"
        for ws in list(self._sockets):
            await ws.send_text(json.dumps(frame))

    def frames(self, t: str) -> list[dict[str, Any]]:
        return [frame for frame in self.received if frame["t"] == t]

    async def wait_for(
        self, t: str, match: Callable[[dict[str, Any]], bool] = lambda _: True, count: int = 1
    ) -> dict[str, Any]:
        """The `count`-th received frame of type `t` that `match` accepts."""
        async with asyncio.timeout(WAIT_S):
            while True:
                found = [frame for frame in self.frames(t) if match(frame)]
                if len(found) >= count:
                    return found[count - 1]
                await asyncio.sleep(0.01)

    # the protocol

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                WebSocketRoute("/gh", self._serve_socket),
                Mount("/", StaticFiles(directory=self.web_root, html=True)),
            ]
        )

    async def _serve_socket(self, ws: WebSocket) -> None:
        await ws.accept()
        self._sockets.add(ws)
        options: dict[str, list[dict[str, Any]]] = {}
        try:
            while True:
                raw = await ws.receive_text()
                try:
                    parse_up_frame(raw)
                except FrameError as problem:
                    await _send(
                        ws, {"t": "error", "code": problem.code, "message": problem.message}
                    )
                    continue
                frame: dict[str, Any] = json.loads(raw)
                self.received.append(frame)
                await self._answer(ws, frame, options)
        except WebSocketDisconnect:
            pass
        finally:
            self._sockets.discard(ws)

    async def _answer(
        self, ws: WebSocket, frame: dict[str, Any], options: dict[str, list[dict[str, Any]]]
    ) -> None:
        match frame["t"]:
            case "hello":
                await _send(ws, {"t": "welcome", "protocol": 1, "hud": self.hud(), "npcs": NPCS})
            case "encounter.open":
                npc = next((n for n in NPCS if n["id"] == frame["npcId"]), None)
                if npc is None:
                    await _error(ws, frame["id"], "unknown_npc", f"no NPC {frame['npcId']!r}")
                    return
                self._open.add(frame["id"])
                opened = {"t": "encounter.opened", "id": frame["id"], "npcName": npc["name"]}
                await _send(ws, {**opened, "attitude": self.attitudes[npc["id"]]})
                await self._turn(ws, frame["id"], _Turn(GREETING, "neutral"), options)
            case "encounter.say":
                turn = self._reply(frame, options.get(frame["id"], []))
                if turn is None:
                    message = f"optionId {frame.get('optionId')!r} is not among the last options"
                    await _error(ws, frame["id"], "bad_option", message)
                    return
                await self._turn(ws, frame["id"], turn, options)
            case "world.tick":
                self.day += frame["days"]
                await self.push(
                    {
                        "t": "world.event",
                        "locationId": "kessler-hollow",
                        "headline": "Pirates raid a convoy near the Hollow.",
                    }
                )
                await self.push(
                    {
                        "t": "world.event",
                        "locationId": HOME["id"],
                        "headline": f"Day {self.day}: fuel prices climb on the ring.",
                    }
                )
                await self.push({"t": "hud", "playerId": PLAYER, "data": self.hud()})
            case "encounter.close":
                if frame["id"] not in self._open:
                    message = f"no open encounter {frame['id']!r} on this connection"
                    await _error(ws, frame["id"], "unknown_encounter", message)
                self._open.discard(frame["id"])
            case _:
                pass

    def _reply(self, frame: dict[str, Any], offered: list[dict[str, Any]]) -> _Turn | None:
        if "text" in frame:
            text: str = frame["text"]
            if text == FAILING_TEXT:
                message = "the model did not answer after 3 attempts (HTTP 503)"
                return _Turn("", "neutral", error={"code": "llm_unavailable", "message": message})
            if text == GEL_TEXT:
                return _Turn(GEL_PITCH, "pleased", options=OFFER_OPTIONS)
            if text == STORY_TEXT:
                return _Turn(STORY, "amused")
            if text == TRAVEL_TEXT:
                self.location = dict(AWAY)
                summary = f"Passage to {AWAY['name']}: you are there."
                action = {"name": "passage", "ok": True, "summary": summary}
                return _Turn(FAREWELL, "friendly", action, closes=self.closes_on_travel, parts=True)
            mood = ODD_MOOD if text == ODD_MOOD_TEXT else "neutral"
            return _Turn(f"You said: {text}", mood)
        choice = frame["optionId"]
        if choice not in {item["id"] for item in offered}:
            return None
        if choice == "buy-fuel":
            self.credits -= FUEL_PRICE
            self.fuel += 2
            self.attitudes["npc-karsk"] += GOOD_CUSTOMER
            summary = f"Jonah Karsk sells you 2 fuel cells for {FUEL_PRICE} cr."
            return _Turn(SOLD, "friendly", {"name": "trade", "ok": True, "summary": summary})
        if choice == OFFER["id"]:
            return self._accept_gel()
        if choice == "buy-ship":
            summary = (
                f"Not enough credits: the freighter costs 90,000 cr, you have {self.credits:,}."
            )
            return _Turn(REFUSED, "annoyed", {"name": "trade", "ok": False, "summary": summary})
        return _Turn("Suit yourself.", "neutral")

    def _accept_gel(self) -> _Turn:
        """The player accepted the offer: commit it, or refuse it with the reason."""
        if self.gel_price_moved:
            summary = "The price moved: 3 medical gel now cost 3,600 cr. Nothing changed."
            action = {"name": "player_buys", "ok": False, "summary": summary}
            return _Turn(GEL_MOVED, "wary", action, options=OFFER_OPTIONS)
        self.credits -= GEL_PRICE
        self.gel += 3
        summary = f"Sold 3 medical gel for {GEL_PRICE:,} credits."
        return _Turn(GEL_SOLD, "friendly", {"name": "player_buys", "ok": True, "summary": summary})

    async def _turn(
        self,
        ws: WebSocket,
        encounter_id: str,
        turn: _Turn,
        options: dict[str, list[dict[str, Any]]],
    ) -> None:
        if turn.error is not None:
            await _error(ws, encounter_id, turn.error["code"], turn.error["message"])
            await _send(ws, {"t": "encounter.idle", "id": encounter_id})
            return
        if turn.action is not None:
            await _send(ws, {"t": "action", "id": encounter_id, **turn.action})
            if turn.action["ok"]:
                await _send(ws, {"t": "hud", "playerId": PLAYER, "data": self.hud()})
        pieces = _pieces(turn.line)
        half = len(pieces) // 2
        for index, piece in enumerate(pieces):
            if index == half:
                await self._gate.wait()
            await _send(ws, {"t": "say.delta", "id": encounter_id, "text": piece})
            await asyncio.sleep(0.005)  # a stream, not one burst
        await _send(ws, {"t": "say.end", "id": encounter_id, "mood": turn.mood})
        if turn.parts:
            self._open.discard(encounter_id)
        if turn.closes:
            await _send(ws, {"t": "encounter.closed", "id": encounter_id})
            return
        items = OPTIONS if turn.options is None else turn.options
        options[encounter_id] = items
        await _send(ws, {"t": "options", "id": encounter_id, "items": items})
        await _send(ws, {"t": "encounter.idle", "id": encounter_id})

    def hud(self) -> dict[str, Any]:
        """The player's view as the `welcome` and `hud` frames carry it."""
        cargo = [{"goodId": "fuel", "name": "fuel cells", "qty": self.fuel}] if self.fuel else []
        if self.gel:
            cargo.append({"goodId": "gel", "name": "medical gel", "qty": self.gel})
        cargo.extend(self.cargo)
        return {
            "playerId": PLAYER,
            "name": "Captain Ash",
            "credits": self.credits,
            "day": self.day,
            "location": self.location,
            "cargo": cargo,
            "attitudes": dict(self.attitudes),
        }


class _QuietUvicorn(uvicorn.Server):
    """uvicorn without signal handlers: pytest owns Ctrl-C."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    return sock


def _pieces(line: str, size: int = 6) -> list[str]:
    return [line[i : i + size] for i in range(0, len(line), size)]


async def _send(ws: WebSocket, frame: dict[str, Any]) -> None:
    await ws.send_text(json.dumps(frame))


async def _error(ws: WebSocket, encounter_id: str, code: str, message: str) -> None:
    await _send(ws, {"t": "error", "id": encounter_id, "code": code, "message": message})
