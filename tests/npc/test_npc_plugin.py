"""Loading a game by `module:attr`, and the NPC server as a runtime plugin."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from npc_support import Client, start_runtime
from tinygame import GAME

from starharness.mockllm import MockLlmServer
from starharness.npc import NPC_SERVER, GameLoadError, NpcServerConfig, NpcServerPlugin, load_game
from starharness.npc.encounter import GameDefinitionError, GameKit


def test_load_game_finds_a_game_or_a_factory() -> None:
    assert load_game("tinygame:GAME") is GAME
    assert load_game("tinygame:make_game").name == "tinygame"
    # Without ':attribute' the attribute is GAME, the name new-game and the sample game use.
    assert load_game("tinygame") is GAME


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (":GAME", "'package.module[:attribute]'"),
        ("tinygame.actions", "has no attribute 'GAME' (a spec without ':attribute' means :GAME)"),
        ("no_such_module_here:GAME", "cannot import the game module 'no_such_module_here'"),
        ("tinygame:NOPE", "has no attribute 'NOPE'"),
        ("tinygame:MOODS", "is a tuple, not a starharness.npc.Game"),
    ],
)
def test_load_game_errors_name_the_problem(spec: str, words: str) -> None:
    with pytest.raises(GameLoadError) as error:
        load_game(spec)
    assert words in str(error.value)


def test_a_game_without_a_speech_tool_gets_the_default_one() -> None:
    from dataclasses import replace

    from tinygame.actions import BAKE, SELL

    kit = GameKit.of(replace(GAME, actions=(SELL, BAKE)))
    assert kit.speech_tool.name == "talk"
    assert [t.name for t in kit.tools] == ["sell_bread", "bake", "talk"]
    with pytest.raises(GameDefinitionError, match="two actions are named 'bake'"):
        GameKit.of(replace(GAME, actions=(BAKE, BAKE)))
    with pytest.raises(GameDefinitionError, match="define_game_action"):
        GameKit.of(replace(GAME, actions=("bake",)))


async def test_the_plugin_serves_the_game_until_disposed(tmp_path: Path) -> None:
    async with MockLlmServer() as mock:
        ctx = await start_runtime(mock.base_url)
        try:
            plugin_ctx = ctx.fork("npc")
            config = NpcServerConfig(game="tinygame:GAME", port=0, world=tmp_path / "w.db")
            await NpcServerPlugin().setup(plugin_ctx, config)
            running = plugin_ctx.get(NPC_SERVER)
            async with httpx.AsyncClient(trust_env=False) as http:
                assert (await http.get(running.url + "/healthz")).json()["game"] == "tinygame"
            async with Client(running.ws_url) as client:
                await client.open("e1", "n-baker", "p1")
                assert len(running.server.encounters) == 1
            await plugin_ctx.dispose()
            assert running.server.encounters == []
            with pytest.raises(httpx.ConnectError):
                async with httpx.AsyncClient(trust_env=False) as http:
                    await http.get(running.url + "/healthz")
        finally:
            await ctx.dispose()
