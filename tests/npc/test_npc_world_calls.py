"""Where the world's calls run: worker threads by default, the event loop when the game asks."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from npc_support import serving, spoken, types
from tinygame import GAME, GREETING_GAME
from tinygame.brain import respond
from tinygame.world import TinyWorld

from starharness.npc import (
    GameDefinitionError,
    World,
    calls_inline,
    open_game_world,
    waits_on_network,
)
from starharness.runtime.session.postgres import PostgresTarget


class _Watched(TinyWorld):
    """The tiny world, noting which thread made each call the framework makes."""

    def __init__(self, path: Path | None) -> None:
        super().__init__(path)
        self.threads: dict[str, set[int]] = {}
        self.calls: Counter[str] = Counter()

    def _note(self, call: str) -> None:
        self.threads.setdefault(call, set()).add(threading.get_ident())
        self.calls[call] += 1

    def scene(self, npc_id: str, player_id: str) -> str:
        self._note("scene")
        return super().scene(npc_id, player_id)

    def player_view(self, player_id: str) -> Any:
        self._note("player_view")
        return super().player_view(player_id)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        self._note("transaction")
        with super().transaction() as tx:
            yield tx


def _watched(path: Path | None) -> World:
    return _Watched(path)


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "threads"])
async def test_a_sale_commits_and_the_calls_run_where_the_game_said(
    tmp_path: Path, inline: bool
) -> None:
    game = replace(GAME, open_world=_watched, world_calls_inline=inline)
    loop_thread = threading.get_ident()
    async with serving(game, tmp_path, responder=respond) as stack, stack.client() as client:
        await client.send({"t": "hello", "playerId": "p1"})
        assert (await client.recv())["t"] == "welcome"
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "I would like to buy 2")
        assert types(frames) == [
            "action", "hud", "say.delta", "say.end", "options", "encounter.idle"
        ]  # fmt: skip
        assert frames[0]["ok"] is True and frames[1]["data"]["coins"] == 14
        assert spoken(frames) == "Enjoy your bread."
        refused = await client.say("e1", "I would like to buy 50")
        assert [f["ok"] for f in refused if f["t"] == "action"] == [False]
        world: _Watched = stack.world
        assert world.holdings("p1") == (14, 2)  # the refusal changed nothing
        calls = {name: threads for name, threads in world.threads.items()}
    assert set(calls) >= {"scene", "player_view", "transaction"}
    on_loop = {name: threads == {loop_thread} for name, threads in calls.items()}
    assert on_loop == dict.fromkeys(calls, inline), calls


class _Remote(_Watched):
    """A world that says it waits on a network, as Omega station on PostgreSQL does."""

    blocks_on_network = True


async def test_a_world_that_blocks_on_the_network_is_never_called_on_the_loop(
    tmp_path: Path,
) -> None:
    game = replace(GAME, open_world=_Remote, world_calls_inline=True)
    loop_thread = threading.get_ident()
    async with serving(game, tmp_path, responder=respond) as stack, stack.client() as client:
        await client.send({"t": "hello", "playerId": "p1"})
        assert (await client.recv())["t"] == "welcome"
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "I would like to buy 2")
        assert frames[0]["ok"] is True
        world: _Remote = stack.world
        calls = {name: threads for name, threads in world.threads.items()}
    assert set(calls) >= {"scene", "player_view", "transaction"}
    assert all(loop_thread not in threads for threads in calls.values()), calls


@pytest.mark.parametrize("greets", [False, True], ids=["silent", "greeting"])
async def test_an_open_reads_the_scene_only_for_a_greeting(tmp_path: Path, greets: bool) -> None:
    """Every `say` reads the scene afresh, so only a greeting turn needs the open's read."""
    game = replace(GREETING_GAME if greets else GAME, open_world=_watched)
    async with serving(game, tmp_path, responder=respond) as stack, stack.client() as client:
        await client.send({"t": "hello", "playerId": "p1"})
        assert (await client.recv())["t"] == "welcome"
        opened = await client.open("e1", "n-baker", "p1")
        assert opened[0]["t"] == "encounter.opened" and opened[-1]["t"] == "encounter.idle"
        world: _Watched = stack.world
        assert world.calls["scene"] == (1 if greets else 0)
        frames = await client.say("e1", "I would like to buy 2")
        assert [f["ok"] for f in frames if f["t"] == "action"] == [True]
        assert world.calls["scene"] == (2 if greets else 1)
        # The turn's request carried the scene read for it (the baker's stock before the sale).
        sent = json.dumps(stack.mock.requests[-1].body)
        assert "You have 50 coins and 12 loaves" in sent, sent


def test_a_game_without_open_server_world_refuses_a_database() -> None:
    target = PostgresTarget("postgresql://star@db.example:5432/world")
    with pytest.raises(GameDefinitionError, match="keeps its world in a file") as raised:
        open_game_world(GAME, target)
    assert "postgresql://db.example:5432/world" in str(raised.value)


@pytest.mark.parametrize(
    ("world", "waits", "inline"),
    [
        (object(), False, True),
        (_Remote, True, False),
        (SimpleNamespace(blocks_on_network=False), False, True),
        (SimpleNamespace(blocks_on_network=1), True, False),
    ],
    ids=["no-attribute", "remote", "says-no", "truthy"],
)
def test_a_world_waits_on_the_network_only_when_it_says_so(
    world: object, waits: bool, inline: bool
) -> None:
    assert waits_on_network(world) is waits
    assert calls_inline(True, world) is inline
    assert calls_inline(False, world) is False
