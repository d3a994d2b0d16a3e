"""Archetype presets: each kind of NPC registered once, encounters add only their own part.

Through the real server, WebSocket clients and the mock LLM over HTTP, on the tiny game with
archetypes declared for its baker and smith (and a third NPC of the baker's kind added).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from npc_support import serving, spoken
from tinygame import GAME, PROTOCOL
from tinygame.brain import respond

from starharness.npc import Archetype, GameDefinitionError, GameKit
from starharness.npc.encounter.decision import DECISION_TOOL
from starharness.runtime.loop import AGENTS
from starharness.runtime.tools import TOOLS

BAKERS_RULES = "Bakers sell what is on the shelf and never promise tomorrow's bread."
SMITHS_PROTOCOL = "You are a smith of a small town. Speak only through the talk tool."
GAME_WITH_KINDS = dataclasses.replace(
    GAME,
    archetypes=(
        Archetype("baker", actions=("sell_bread",), sections=(BAKERS_RULES,)),
        Archetype("smith", protocol_text=SMITHS_PROTOCOL, turn_plan="decide-act-speak"),
    ),
)


def _names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body["tools"]]


def _add_baker(world: Any, npc_id: str, persona: str) -> None:
    world.set(
        "INSERT INTO actors VALUES (?,?,?,?,?,?,?,?,?)",
        npc_id, npc_id, "npc", "square", 1, 10, 5, "baker", persona,
    )  # fmt: skip


async def test_an_archetype_gives_its_npcs_its_tools_rules_protocol_and_plan(
    tmp_path: Path,
) -> None:
    async with (
        serving(GAME_WITH_KINDS, tmp_path, responder=respond) as stack,
        stack.client() as left,
        stack.client() as right,
    ):
        _add_baker(stack.world, "n-baker2", "You are Bo, a sleepy baker.")
        await left.open("a", "n-baker", "p1")
        await left.open("b", "n-baker2", "p1")
        await right.open("c", "n-smith", "p2")
        assert spoken(await left.say("a", "Hello"))
        assert spoken(await left.say("b", "Hello"))
        await right.say("c", "Hello")
        bea, bo, tor = (r.body for r in stack.mock.requests[:3])
    # The baker's kind: only its action and speech, its rules after the protocol.
    assert _names(bea) == _names(bo) == ["sell_bread", "talk"]
    assert json.dumps(bea["tools"]) == json.dumps(bo["tools"])
    shared = f"{PROTOCOL}\n\n{BAKERS_RULES}\n\n"
    assert bea["messages"][0]["content"] == shared + "You are Bea, a cheerful baker."
    assert bo["messages"][0]["content"] == shared + "You are Bo, a sleepy baker."
    # The smith's kind: its own protocol and the decide-act-speak plan, whatever the provider.
    assert tor["messages"][0]["content"] == f"{SMITHS_PROTOCOL}\n\nYou are Tor, a gruff smith."
    assert _names(tor) == [DECISION_TOOL, "talk"]
    assert tor["tool_choice"] == {"type": "function", "function": {"name": DECISION_TOOL}}


async def test_a_preset_is_built_once_and_encounters_add_only_their_own_part(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "starharness.npc.encounter")
    async with (
        serving(GAME_WITH_KINDS, tmp_path, responder=respond) as stack,
        stack.client() as client,
    ):
        _add_baker(stack.world, "n-baker2", "You are Bo, a sleepy baker.")
        await client.open("a", "n-baker", "p1")
        await client.open("b", "n-baker2", "p1")
        await client.open("c", "n-baker", "p1")
        first, second, third = stack.running.server.encounters
        preset = first.preset
        assert second.preset is preset and third.preset is preset
        agents = stack.ctx.get(AGENTS)
        shared = preset.layer.get(TOOLS).schemas()
        for encounter in (first, second, third):
            agent = agents.get(encounter.session_id)
            assert agent is not None and agent.ctx.parent is preset.layer
            # The agent layer registers no tool: it sees the preset's schema objects.
            seen = agent.ctx.get(TOOLS).schemas()
            assert len(seen) == len(shared)
            assert all(a is b for a, b in zip(seen, shared, strict=True))
        assert spoken(await client.say("b", "Hello"))
        assert preset.open_encounters == 3
        await client.send({"t": "encounter.close", "id": "a"})
        assert spoken(await client.say("c", "buy 1"))  # the others still work after a close
        assert preset.open_encounters == 2
    built = [r.getMessage() for r in caplog.records if "preset built" in r.getMessage()]
    assert built == [next(m for m in built if m.startswith("archetype baker:"))]
    assert preset.layer.scope.closed  # the server's stop undid the preset
    assert preset.open_encounters == 0


async def test_an_npc_of_an_undeclared_archetype_gets_the_default_preset(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    game = dataclasses.replace(GAME, archetypes=(Archetype("smith", actions=()),))
    async with (
        serving(game, tmp_path, responder=respond) as stack,
        stack.client() as left,
        stack.client() as right,
    ):
        await left.open("a", "n-baker", "p1")
        await left.open("b", "n-baker", "p1")
        await right.open("c", "n-smith", "p2")
        assert spoken(await left.say("a", "Hello"))
        await right.say("c", "Hello")
        bea, tor = (r.body for r in stack.mock.requests[:2])
    assert _names(bea) == ["bake", "sell_bread", "talk"]  # every action of the game
    assert bea["messages"][0]["content"] == f"{PROTOCOL}\n\nYou are Bea, a cheerful baker."
    assert _names(tor) == ["talk"]  # no action: the smith only talks
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("declares no archetype 'baker'" in w for w in warnings) == 1


@pytest.mark.parametrize(
    ("archetypes", "message"),
    [
        ((Archetype("baker"), Archetype("baker")), "two archetypes are named 'baker'"),
        ((Archetype(" "),), "an archetype needs a name"),
        ((Archetype("baker", actions=("fly",)),), "no action named 'fly'"),
        ((Archetype("baker", without=("juggle",)),), "no action named 'juggle'"),
        ((Archetype("baker", without=("talk",)),), "'talk' cannot be left out"),
        ((Archetype("baker", sections=("",)),), "a section must be non-empty literal text"),
        ((Archetype("baker", turn_plan="psychic"),), "unknown turn plan 'psychic'"),  # type: ignore[arg-type]
        (("baker",), "archetypes must be Archetype objects"),
    ],
)
def test_a_bad_archetype_declaration_is_a_clear_error(
    archetypes: tuple[Any, ...], message: str
) -> None:
    with pytest.raises(GameDefinitionError, match=message):
        GameKit.of(dataclasses.replace(GAME, archetypes=archetypes))


def test_archetypes_with_every_action_share_the_default_schemas() -> None:
    kit = GameKit.of(dataclasses.replace(GAME, archetypes=(Archetype("baker"),)))
    baker = kit.archetype("baker")
    assert baker.tools is kit.default.tools and baker.decision_tool is kit.default.decision_tool
    assert kit.archetype("nobody") is kit.default
