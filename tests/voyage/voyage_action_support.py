"""Calling Omega station's action tools directly, as an encounter's agent would; no server."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starharness.npc.actions import (
    ENCOUNTER,
    OFFERED,
    ActionAttempt,
    EncounterBinding,
    Offer,
    OfferDraft,
)
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import ToolOutcome, ToolRegistry, ToolSuccess
from starharness.voyage import VoyageWorld
from starharness.voyage.actions import ACTIONS
from starharness.voyage.content import PLAYER_ID, SMUGGLER


def action_tools() -> list[Any]:
    return [getattr(action, "tool", action) for action in ACTIONS]


@dataclass
class Bench:
    """One encounter's agent layer with the game's tools, bound to an NPC and the player."""

    world: VoyageWorld
    npc_id: str = SMUGGLER
    player_id: str = PLAYER_ID
    reports: list[ActionAttempt] = field(default_factory=list[ActionAttempt])
    calls: int = 0
    accept: bool = True
    """Whether `call` accepts an offer at once, as the player would (the settled result)."""
    offers: dict[str, Offer] = field(default_factory=dict[str, Offer])
    made: int = 0

    def __post_init__(self) -> None:
        self.ctx = Context().child("agent")
        binding = EncounterBinding(
            self.world, self.npc_id, self.player_id, self.reports.append, propose=self._propose
        )
        self.ctx.provide(ENCOUNTER, binding)
        self.registry = ToolRegistry().bind(self.ctx)
        for tool in action_tools():
            self.registry.register(tool)

    async def call_raw(self, name: str, arguments: str) -> ToolOutcome:
        self.calls += 1
        return await self.registry.execute(ToolCall(f"call-{self.calls}", name, arguments))

    async def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        """Run a tool; returns its result value (the `{ok: ...}` mapping)."""
        outcome = await self.call_raw(name, json.dumps(arguments))
        assert isinstance(outcome.result, ToolSuccess), outcome.content
        value = outcome.result.value
        assert isinstance(value, dict), value
        # A refusal's counter-offer (ok false, offered) waits for a test to settle it.
        if self.accept and OFFERED in value and value.get("ok") is True:
            return (await self.settle(value[OFFERED])).result
        return value

    async def settle(self, offer_id: str) -> ActionAttempt:
        """Accept a held offer: commit it as the encounter does when the player picks it."""
        offer = self.offers.pop(offer_id)
        attempt = await asyncio.to_thread(offer.draft.settle, offer.id)
        self.reports.append(attempt)
        return attempt

    def _propose(self, draft: OfferDraft) -> Offer:
        self.made += 1
        offer = Offer(f"offer-{self.made}", draft)
        self.offers[offer.id] = offer
        return offer


@dataclass(frozen=True)
class Ledger:
    """The parts of the world a trade touches, to compare before and after."""

    credits: dict[str, int]
    cargo: dict[str, dict[str, int]]
    memories: int
    attitude: int


def ledger(world: VoyageWorld, npc_id: str = SMUGGLER, player_id: str = PLAYER_ID) -> Ledger:
    with world.snapshot() as reader:
        return Ledger(
            credits={a: reader.credits(a) for a in (npc_id, player_id)},
            cargo={a: reader.cargo(a) for a in (npc_id, player_id)},
            memories=len(reader.memories(npc_id, player_id)),
            attitude=reader.attitude(npc_id, player_id),
        )


def jam_player_hold(path: Path, player_id: str = PLAYER_ID) -> None:
    """Make any write of a new cargo row for the player fail, as a fault in mid-trade would."""
    conn = sqlite3.connect(path)
    try:
        conn.execute(
            "CREATE TRIGGER jammed BEFORE INSERT ON cargo "
            f"WHEN NEW.actor_id = '{player_id}' BEGIN SELECT RAISE(ABORT, 'hold jammed'); END"
        )
        conn.commit()
    finally:
        conn.close()
