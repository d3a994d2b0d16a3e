"""Archetype presets on Omega station: NPCs of one kind send the same tools and static prefix.

Four encounters through the real server, a WebSocket player and the mock LLM over HTTP (the
offline brain answering): Karsk and Vex are both fixers, Okoro a trader, Brandt an official.
The request bodies the mock received are compared, in both turn plans.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from voyage_e2e_support import Player, line, serving_voyage

from starharness.mockllm import MockCapabilities
from starharness.mockllm.capabilities import FULL, LLAMA_CPP
from starharness.npc.encounter.decision import DECISION_TOOL
from starharness.voyage import GAME, PROTOCOL_TEXT
from starharness.voyage.content import (
    BROKER,
    BROKER_PERSONA,
    CERES,
    DOCK_MASTER,
    DOCK_MASTER_PERSONA,
    FIXER,
    FIXER_RULES,
    KESSLER,
    OFFICIAL_RULES,
    OMEGA,
    PLAYER_ID,
    QUARTERMASTER,
    QUARTERMASTER_PERSONA,
    SMUGGLER,
    SMUGGLER_PERSONA,
    TRADER_RULES,
)

# Where the player stands to meet each NPC, in the order they are met.
_VISITS = ((SMUGGLER, OMEGA), (BROKER, KESSLER), (QUARTERMASTER, CERES), (DOCK_MASTER, OMEGA))


def _tools_bytes(body: dict[str, Any]) -> bytes:
    # The mock keeps the body as parsed JSON; dumped without sorting, in the order it came.
    return json.dumps(body["tools"], separators=(",", ":"), ensure_ascii=False).encode()


def _system(body: dict[str, Any]) -> bytes:
    first = body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"]).encode()


def _prefix(rules: str) -> bytes:
    """What every NPC of an archetype sends before its persona."""
    return f"{PROTOCOL_TEXT}\n\n{rules}\n\n".encode()


async def _first_requests(tmp_path: Path, plays: MockCapabilities, provider: str) -> dict[str, Any]:
    """The first request body of an encounter with each NPC (each greets the player first)."""
    firsts: dict[str, Any] = {}
    async with (
        serving_voyage(tmp_path, plays=plays, provider=provider) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        # On a local model the server first warms each NPC's prefix: those requests are not
        # an encounter's, so they are done before the first one opens.
        await stack.running.server.prefix_warmer.wait()
        for npc_id, place in _VISITS:
            with stack.world.transaction() as tx:
                tx.move_actor(PLAYER_ID, place)
            before = len(stack.mock.requests)
            opened = await me.open(npc_id, npc_id)
            assert line(opened), f"{npc_id} did not greet: {opened}"
            await me.close(npc_id)
            firsts[npc_id] = stack.mock.requests[before].body
    return firsts


@pytest.mark.parametrize(
    ("plays", "provider"), [(FULL, "openai-compatible"), (LLAMA_CPP, "llama-cpp")]
)
async def test_npcs_of_one_archetype_share_tool_schemas_and_the_static_prefix_byte_for_byte(
    tmp_path: Path, plays: MockCapabilities, provider: str
) -> None:
    firsts = await _first_requests(tmp_path, plays, provider)
    karsk, vex = firsts[SMUGGLER], firsts[BROKER]
    okoro, brandt = firsts[QUARTERMASTER], firsts[DOCK_MASTER]

    # Two fixers: the same tools, byte for byte, and the same system prompt up to the persona.
    assert _tools_bytes(karsk) == _tools_bytes(vex)
    assert _system(karsk) == _prefix(FIXER_RULES) + SMUGGLER_PERSONA.encode()
    assert _system(vex) == _prefix(FIXER_RULES) + BROKER_PERSONA.encode()

    # Other kinds share the protocol, then their own rules; their tools differ where their
    # actions do (a trader sells no intel, an official gives no jobs).
    assert _system(okoro) == _prefix(TRADER_RULES) + QUARTERMASTER_PERSONA.encode()
    assert _system(brandt) == _prefix(OFFICIAL_RULES) + DOCK_MASTER_PERSONA.encode()
    tools = {npc: _tools_bytes(body) for npc, body in firsts.items()}
    assert len({tools[SMUGGLER], tools[QUARTERMASTER], tools[DOCK_MASTER]}) == 3
    names = {npc: {t["function"]["name"] for t in body["tools"]} for npc, body in firsts.items()}
    if provider == "llama-cpp":
        # Decide, act, speak: the same two tools, but each kind's decision lists its actions.
        assert all(found == {DECISION_TOOL, "npc_speak"} for found in names.values())
        decisions = {npc: _decision_actions(body) for npc, body in firsts.items()}
        assert decisions[SMUGGLER] == decisions[BROKER]
        assert "sell_intel" in decisions[SMUGGLER] and "sell_intel" not in decisions[QUARTERMASTER]
        assert "offer_quest" not in decisions[DOCK_MASTER]
    else:
        assert names[SMUGGLER] == names[BROKER] >= {"sell_intel", "offer_quest", "book_passage"}
        assert names[QUARTERMASTER] == names[SMUGGLER] - {"sell_intel"}
        assert names[DOCK_MASTER] == names[SMUGGLER] - {"offer_quest", "complete_quest"}


def _decision_actions(body: dict[str, Any]) -> set[str]:
    (decide,) = (t for t in body["tools"] if t["function"]["name"] == DECISION_TOOL)
    variants = decide["function"]["parameters"]["properties"]["action"]["anyOf"]
    return {name for v in variants for name in v["properties"]["name"]["enum"]}


def test_every_seeded_npc_has_an_archetype_the_game_declares() -> None:
    from starharness.voyage.content import OMEGA_STATION

    declared = {archetype.name for archetype in GAME.archetypes}
    npcs = [actor for actor in OMEGA_STATION.actors if actor.kind == "npc"]
    assert npcs and all(actor.archetype in declared for actor in npcs)
    assert sum(actor.archetype == FIXER for actor in npcs) >= 2
