"""Starter's own tests: the world keeps its rules, the offline brain sells and refuses.

Run them with `uv run pytest starter` from the folder that holds the package.
"""

from __future__ import annotations

import json
from pathlib import Path

from starharness.mockllm import ChatMessage, ChatRequest, ToolCalls

from .. import GAME
from ..brain import respond
from ..world import KEEPER, PLAYER_ID, StarterWorld


def _request(*messages: ChatMessage) -> ChatRequest:
    return ChatRequest(
        conversation="test",
        turn=1,
        model="offline",
        messages=messages,
        tools=(),
        tool_choice=None,
        stream=True,
        headers={},
        body={},
    )


def _scene(world: StarterWorld) -> ChatMessage:
    return ChatMessage(role="user", content=world.scene(KEEPER, PLAYER_ID))


def test_the_world_seeds_once_and_ticks(tmp_path: Path) -> None:
    world = StarterWorld(tmp_path / "world.db")
    assert [card.name for card in world.npcs()] == ["Mira"]
    assert world.can_meet(KEEPER, PLAYER_ID)
    # False, not an error, for a player who does not exist, or for an NPC's id.
    assert not world.can_meet(KEEPER, "nobody")
    assert not world.can_meet(KEEPER, KEEPER)
    assert world.player_view(PLAYER_ID)["coins"] == 20
    assert world.tick(2)[0].headline
    world.close()
    again = StarterWorld(tmp_path / "world.db")
    assert again.player_view(PLAYER_ID)["day"] == 3
    again.close()


def test_the_brain_sells_what_is_asked_and_offers_only_what_fits(tmp_path: Path) -> None:
    world = StarterWorld(tmp_path / "world.db")
    step = respond(_request(_scene(world), ChatMessage(role="user", content="2 cups please")))
    assert isinstance(step, ToolCalls)
    assert step.calls[0].name == "sell_tea"
    assert json.loads(step.calls[0].arguments) == {"cups": 2}

    greeting = respond(_request(_scene(world), ChatMessage(role="user", content="(hello)")))
    assert isinstance(greeting, ToolCalls)
    said = json.loads(greeting.calls[0].arguments)
    assert said["mood"] in GAME.moods
    assert [o["id"] for o in said["options"]] == ["tea:1", "tea:3", "bye"]
    world.close()


def test_the_brain_hears_how_many_and_never_pours_more_than_one_sale_allows(
    tmp_path: Path,
) -> None:
    world = StarterWorld(tmp_path / "world.db")
    asked = {"buy 2 tea": 2, "two cups, please": 2, "a cup of tea": 1, "tea please": 1}
    for words, cups in asked.items():
        step = respond(_request(_scene(world), ChatMessage(role="user", content=words)))
        assert isinstance(step, ToolCalls)
        assert json.loads(step.calls[0].arguments) == {"cups": cups}, words
    too_many = respond(_request(_scene(world), ChatMessage(role="user", content="100 cups")))
    assert isinstance(too_many, ToolCalls)
    assert too_many.calls[0].name == "say"
    world.close()
