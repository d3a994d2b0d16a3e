"""The director may get a place talking: one more round of gossip there today, through its own
guarded, audited action, seeded apart from the clock's round; once a day per place."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starharness.npc.actions import ENCOUNTER, ActionAttempt, EncounterBinding
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import ToolRegistry, ToolSuccess
from starharness.voyage import VoyageWorld
from starharness.voyage.content import BROKER, DOCK_MASTER, OMEGA, PLAYER_ID, SMUGGLER
from starharness.voyage.content.social import GOSSIP_ACTION
from starharness.voyage.director import DIRECTOR_ACTIONS, DIRECTOR_NAME
from starharness.voyage.director.lines import SPREAD_WORD


def _call(world: VoyageWorld, name: str, **arguments: Any) -> dict[str, Any]:
    reports: list[ActionAttempt] = []
    ctx = Context().child("agent")
    ctx.provide(ENCOUNTER, EncounterBinding(world, DIRECTOR_NAME, "", reports.append))
    registry = ToolRegistry().bind(ctx)
    for action in DIRECTOR_ACTIONS:
        registry.register(action.tool)
    outcome = asyncio.run(registry.execute(ToolCall("call-1", name, json.dumps(arguments))))
    assert isinstance(outcome.result, ToolSuccess), outcome.content
    value = outcome.result.value
    assert isinstance(value, dict), value
    return value


def _gossip(world: VoyageWorld) -> list[tuple[str, str | None, str | None]]:
    with world.snapshot() as reader:
        rows = [e for e in reader.audit_log(1_000) if e.action == GOSSIP_ACTION]
    return sorted((e.actor_id, e.target_id, e.summary) for e in rows)


def _deal_at_the_bar(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.remember(SMUGGLER, PLAYER_ID, "They bought 2 nebula spice for 5,800 (2,900 each).",
                    kind="trade", action="bought", good_id="spice", qty=2, price=5_800)  # fmt: skip


def test_the_director_gets_the_bar_talking_today_once(world: VoyageWorld) -> None:
    _deal_at_the_bar(world)
    assert _gossip(world) == []
    done = _call(world, SPREAD_WORD, location_id=OMEGA)
    assert done["ok"] and done["passed_on"] >= 1, done
    passes = _gossip(world)
    # Only pairs with someone at the station talked; each pass names its teller.
    assert passes and all(SMUGGLER in p[:2] or DOCK_MASTER in p[:2] for p in passes), passes
    for teller, listener, summary in passes:
        assert teller != listener and summary is not None and " says: " in summary
    refused = _call(world, SPREAD_WORD, location_id=OMEGA)
    assert not refused["ok"] and refused["reason"] == "already_talking_today", refused
    assert _gossip(world) == passes
    unknown = _call(world, SPREAD_WORD, location_id="nowhere")
    assert not unknown["ok"] and unknown["reason"] == "unknown_place"


def test_the_same_trigger_on_the_same_world_spreads_the_same_words(
    world: VoyageWorld, tmp_path: Any
) -> None:
    from starharness.voyage import open_world

    _deal_at_the_bar(world)
    _call(world, SPREAD_WORD, location_id=OMEGA)
    with open_world(tmp_path / "other.db") as other:
        _deal_at_the_bar(other)
        _call(other, SPREAD_WORD, location_id=OMEGA)
        assert _gossip(other) == _gossip(world)
    with world.snapshot() as reader:
        vex = reader.memories(BROKER, PLAYER_ID)
    assert all(m.kind == "gossip" and m.hops == 1 for m in vex)
