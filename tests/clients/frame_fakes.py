"""A canned harness for client tests: a real WebSocket server that answers with fixed frames.

It parses what clients send with the real up-frame parser and builds every answer from the
real down-frame models, so a client that passes against it speaks the protocol.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from starharness.npc.frames import (
    ActionFrame,
    EncounterClose,
    EncounterIdle,
    EncounterOpen,
    EncounterOpened,
    EncounterSay,
    ErrorCode,
    ErrorFrame,
    Frame,
    FrameError,
    Hello,
    Hud,
    NpcEntry,
    OfferTerms,
    OptionItem,
    Options,
    SayDelta,
    SayEnd,
    Welcome,
    WorldEvent,
    WorldTick,
    encode,
    parse_up_frame,
)

NPCS = (
    NpcEntry(id="n1", name="Ada", location_id="dock"),
    NpcEntry(id="n2", name="Bo", location_id="bar"),
)
OPTIONS = (
    OptionItem(id="buy", label="Buy one ore for 40"),
    OptionItem(id="ship", label="Buy a ship for 9000"),
)
UNKNOWN_PLAYER = "stranger"
ORE_PRICE = 40
OFFER_PRICE = 50
"""What the NPC's offer of 2 ore costs (a discount on two at ORE_PRICE)."""
OFFER_TEXT = "sell me ore"
"""Free text the NPC answers with an offer: an option that commits a trade when picked."""
OFFER = OptionItem(
    id="offer-1",
    label="Buy 2 ore",
    offer=OfferTerms(action="player_buys", cost=f"{OFFER_PRICE} coins"),
)
OFFER_OPTIONS = (OFFER, OptionItem(id="no", label="Too dear."))


@dataclass(slots=True)
class _Player:
    player_id: str = ""
    money: int = 100
    ore: int = 0
    open_ids: set[str] = field(default_factory=set[str])

    def hud(self) -> dict[str, Any]:
        return {"money": self.money, "cargo": {"ore": self.ore}}


@dataclass(slots=True)
class FakeHarness:
    """Answers frames with canned turns; `received` holds every up frame, as JSON objects."""

    received: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    url: str = ""
    drop_after_frames: int | None = None
    """Close the connection after this many received frames (to test a lost connection)."""
    raw_after_hello: str | None = None
    """Extra raw text sent after `welcome` (to test frames a client cannot read)."""
    greeting: tuple[str, ...] = ("Well, ", "hello", " there.")
    """The `say.delta` pieces of the NPC's greeting."""

    async def handle(self, socket: ServerConnection) -> None:
        player = _Player()
        try:
            async for raw in socket:
                self.received.append(_recorded(raw))
                for frame in self._answer(raw, player):
                    await socket.send(frame if isinstance(frame, str) else encode(frame))
                limit = self.drop_after_frames
                if limit is not None and len(self.received) >= limit:
                    await socket.close(1011, "fake harness stopping")
                    return
        except ConnectionClosed:
            return

    def _answer(self, raw: str | bytes, player: _Player) -> list[Frame | str]:
        try:
            frame = parse_up_frame(raw)
        except FrameError as exc:
            return [ErrorFrame.from_error(exc)]
        match frame:
            case Hello(player_id=player_id):
                return self._welcome(player_id, player)
            case EncounterOpen():
                answer = self._open(frame)
                if isinstance(answer[0], EncounterOpened):
                    player.open_ids.add(frame.id)
                return answer
            case EncounterSay(option_id=str(option_id)):
                return self._choose(frame.id, option_id, player)
            case EncounterSay(text=str(text)):
                return self._say(frame.id, text)
            case EncounterClose(id=encounter_id) if encounter_id in player.open_ids:
                player.open_ids.discard(encounter_id)
                return []
            case EncounterClose(id=encounter_id):
                # As the harness does: the terminal client's fences rely on this answer.
                message = f"no open encounter {encounter_id!r} on this connection"
                return [
                    ErrorFrame(id=encounter_id, code=ErrorCode.UNKNOWN_ENCOUNTER, message=message)
                ]
            case WorldTick(days=days):
                return [WorldEvent(location_id="dock", headline=f"{days} days pass")]
            case _:
                return []

    def _welcome(self, player_id: str, player: _Player) -> list[Frame | str]:
        if player_id == UNKNOWN_PLAYER:
            message = f"no player {player_id!r}"
            return [ErrorFrame(code=ErrorCode.UNKNOWN_PLAYER, message=message)]
        player.player_id = player_id
        answer: list[Frame | str] = [Welcome(hud=player.hud(), npcs=list(NPCS))]
        if self.raw_after_hello is not None:
            answer.append(self.raw_after_hello)
        return answer

    def _open(self, frame: EncounterOpen) -> list[Frame | str]:
        npc = next((npc for npc in NPCS if npc.id == frame.npc_id), None)
        if npc is None:
            message = f"no NPC {frame.npc_id!r}"
            return [ErrorFrame(id=frame.id, code=ErrorCode.UNKNOWN_NPC, message=message)]
        return [
            EncounterOpened(id=frame.id, npc_name=npc.name, attitude=10),
            *_line(frame.id, list(self.greeting), "neutral"),
            Options(id=frame.id, items=list(OPTIONS)),
            EncounterIdle(id=frame.id),
        ]

    def _choose(self, encounter_id: str, option_id: str, player: _Player) -> list[Frame | str]:
        if option_id == OFFER.id:
            player.money -= OFFER_PRICE
            player.ore += 2
            summary = f"You buy 2 ore for {OFFER_PRICE}."
            result: list[Frame | str] = [
                ActionFrame(id=encounter_id, name="player_buys", ok=True, summary=summary),
                Hud(player_id=player.player_id, data=player.hud()),
                *_line(encounter_id, ["Deal."], "friendly"),
            ]
        elif option_id == "buy":
            player.money -= ORE_PRICE
            player.ore += 1
            result = [
                ActionFrame(id=encounter_id, name="trade", ok=True, summary="You buy 1 ore."),
                Hud(player_id=player.player_id, data=player.hud()),
                *_line(encounter_id, ["Pleasure."], "friendly"),
            ]
        elif option_id == "ship":
            summary = f"Not enough money: 9000 needed, {player.money} held."
            result = [
                ActionFrame(id=encounter_id, name="trade", ok=False, summary=summary),
                *_line(encounter_id, ["Come back richer."], "annoyed"),
            ]
        else:
            message = f"no option {option_id!r} in the last options"
            return [ErrorFrame(id=encounter_id, code=ErrorCode.BAD_OPTION, message=message)]
        return [
            *result,
            Options(id=encounter_id, items=list(OPTIONS)),
            EncounterIdle(id=encounter_id),
        ]

    def _say(self, encounter_id: str, text: str) -> list[Frame | str]:
        if text == "no model":
            message = "the model did not answer"
            error = ErrorFrame(id=encounter_id, code=ErrorCode.LLM_UNAVAILABLE, message=message)
            return [error, EncounterIdle(id=encounter_id)]
        if text == "too fast":
            # A refused say: the harness starts no turn, so no idle follows.
            message = "a turn is already running"
            return [ErrorFrame(id=encounter_id, code=ErrorCode.BUSY, message=message)]
        if text == OFFER_TEXT:
            return [
                *_line(encounter_id, ["Two for ", str(OFFER_PRICE), "."], "pleased"),
                Options(id=encounter_id, items=list(OFFER_OPTIONS)),
                EncounterIdle(id=encounter_id),
            ]
        return [
            *_line(encounter_id, ["You said: ", text], "neutral"),
            Options(id=encounter_id, items=[]),
            EncounterIdle(id=encounter_id),
        ]


def _recorded(raw: str | bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {"raw": raw}
    return value if isinstance(value, dict) else {"raw": raw}


def _line(encounter_id: str, pieces: list[str], mood: str) -> list[Frame | str]:
    deltas: list[Frame | str] = [SayDelta(id=encounter_id, text=piece) for piece in pieces]
    return [*deltas, SayEnd(id=encounter_id, mood=mood)]


@asynccontextmanager
async def running_fake(harness: FakeHarness | None = None) -> AsyncIterator[FakeHarness]:
    """Serve a fake harness on an ephemeral loopback port; `harness.url` is its `/gh` URL."""
    fake = harness if harness is not None else FakeHarness()
    async with serve(fake.handle, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        fake.url = f"ws://127.0.0.1:{port}/gh"
        yield fake


def up_types(harness: FakeHarness) -> list[str]:
    """The `t` of every frame the fake received, in order."""
    return [str(frame.get("t")) for frame in harness.received]
