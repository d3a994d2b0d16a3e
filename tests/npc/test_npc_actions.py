"""The action factory, tried on the tiny game's world: guards, transactions, audit, binding."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic import BaseModel
from tinygame import TinyWorld, open_world
from tinygame.actions import BAKE, SELL
from tinygame.world import SCENE_MEMORIES

from starharness.npc import (
    ENCOUNTER,
    ActionAttempt,
    ActionDefinitionError,
    EncounterBinding,
    Role,
    define_game_action,
)
from starharness.runtime.kernel import Context
from starharness.runtime.llm import ToolCall
from starharness.runtime.tools import TOOLS, ToolOutcome, ToolsConfig, ToolsPlugin


@dataclass
class Bench:
    world: TinyWorld
    layer: Context
    attempts: list[ActionAttempt]

    async def call(self, name: str, **arguments: object) -> ToolOutcome:
        call = ToolCall(f"call-{len(self.attempts)}", name, json.dumps(arguments))
        return await self.layer.get(TOOLS).execute(call, self.layer)


@pytest_asyncio.fixture
async def bench(tmp_path: Path) -> AsyncIterator[Bench]:
    world = open_world(tmp_path / "world.db")
    root = Context("root")
    await ToolsPlugin().setup(root.fork("tools"), ToolsConfig())
    layer = root.child("encounter")
    attempts: list[ActionAttempt] = []
    layer.provide(ENCOUNTER, EncounterBinding(world, "n-baker", "p1", attempts.append))
    for action in (SELL, BAKE):
        layer.get(TOOLS).register(action.tool)
    try:
        yield Bench(world, layer, attempts)
    finally:
        await root.dispose()
        world.close()


def test_bound_parameters_are_not_in_the_schema() -> None:
    properties = SELL.tool.schema.parameters["properties"]
    assert set(properties) == {"qty", "price"}
    assert "npc_id" not in json.dumps(SELL.tool.schema.parameters)
    assert set(BAKE.tool.schema.parameters["properties"]) == {"qty"}


async def test_a_committed_action_writes_audits_and_reports(bench: Bench) -> None:
    outcome = await bench.call("sell_bread", qty=2, price=6)
    assert not outcome.is_error
    assert json.loads(outcome.content) == {
        "ok": True,
        "summary": "Sold 2 loaves for 6 coins.",
        "customer_coins": 14,
    }
    assert bench.world.holdings("p1") == (14, 2)
    assert bench.world.holdings("n-baker") == (56, 10)
    (row,) = bench.world.audit_rows()
    assert row["action"] == "sell_bread" and row["ok"] == 1 and row["reason"] is None
    assert (row["actor"], row["target"]) == ("n-baker", "p1")
    assert json.loads(row["args"]) == {"npc_id": "n-baker", "player_id": "p1", "qty": 2, "price": 6}
    (attempt,) = bench.attempts
    assert (attempt.name, attempt.ok, attempt.summary) == ("sell_bread", True, row["summary"])


async def test_the_model_cannot_override_bound_parameters(bench: Bench) -> None:
    outcome = await bench.call("sell_bread", qty=1, price=3, npc_id="n-smith", player_id="p2")
    assert not outcome.is_error
    assert bench.world.holdings("p1") == (17, 1)
    assert bench.world.holdings("p2") == (5, 0)
    assert bench.world.holdings("n-smith") == (80, 0)
    assert json.loads(bench.world.audit_rows()[0]["args"])["player_id"] == "p1"


async def test_a_refusal_is_a_normal_result_with_reason_hint_and_facts(bench: Bench) -> None:
    outcome = await bench.call("sell_bread", qty=2, price=90)
    assert not outcome.is_error and not outcome.content.startswith("Error")
    assert json.loads(outcome.content) == {
        "ok": False,
        "reason": "cannot_afford",
        "hint": "they have 20 coins, the deal is 90",
        "facts": {"have": 20, "want": 90},
    }
    assert bench.world.holdings("p1") == (20, 0)
    (row,) = bench.world.audit_rows()
    assert (row["ok"], row["reason"], row["summary"]) == (0, "cannot_afford", None)
    assert bench.attempts[0].ok is False


async def test_generic_range_guard(bench: Bench) -> None:
    outcome = await bench.call("sell_bread", qty=11, price=1)
    result = json.loads(outcome.content)
    assert result["reason"] == "out_of_range" and result["facts"]["qty"] == 11
    assert "between 1 and 10" in result["hint"]


async def test_a_dead_actor_cannot_act(bench: Bench) -> None:
    bench.world.set("UPDATE actors SET alive = 0 WHERE id = 'n-baker'")
    result = json.loads((await bench.call("bake", qty=3)).content)
    assert (result["ok"], result["reason"]) == (False, "actor_dead")
    assert bench.world.holdings("n-baker") == (50, 12)


async def test_an_exception_rolls_back_every_write_and_is_still_audited(bench: Bench) -> None:
    bench.world.set("INSERT INTO switches VALUES ('oven_broken', 1)")
    outcome = await bench.call("bake", qty=5)
    assert outcome.is_error and outcome.content == "Error: the oven broke"
    assert bench.world.holdings("n-baker") == (50, 12)  # the added loaves were rolled back
    (row,) = bench.world.audit_rows()
    assert (row["action"], row["ok"], row["reason"]) == ("bake", 0, "error: the oven broke")
    assert bench.attempts == []  # nothing committed, nothing refused: a fault


async def test_invalid_arguments_name_the_field(bench: Bench) -> None:
    outcome = await bench.call("sell_bread", qty="lots", price=3)
    assert outcome.is_error and "qty" in outcome.content
    assert bench.world.audit_rows() == []


def test_declaration_errors_name_the_field() -> None:
    class Args(BaseModel):
        npc_id: str

    with pytest.raises(ActionDefinitionError, match="'who'"):
        define_game_action(
            "x",
            "x",
            Args,
            apply=lambda tx, a: None,
            narrate=lambda a, e: "",
            bind={"who": Role.NPC},
        )
    with pytest.raises(ActionDefinitionError, match="'nobody'"):
        define_game_action(
            "x", "x", Args, apply=lambda tx, a: None, narrate=lambda a, e: "", actor="nobody"
        )


def test_the_tiny_games_scene_names_only_the_latest_memories() -> None:
    # The encounters bench meets the same pair a thousand times; its prompts must not grow.
    world = open_world(None)
    for index in range(SCENE_MEMORIES + 3):
        world.remember("n-baker", "p1", f"memory {index}.")
    scene = world.scene("n-baker", "p1")
    latest = range(3, SCENE_MEMORIES + 3)
    assert scene.endswith("You remember: " + " ".join(f"memory {i}." for i in latest))
    assert len(world.memories("n-baker", "p1")) == SCENE_MEMORIES + 3
