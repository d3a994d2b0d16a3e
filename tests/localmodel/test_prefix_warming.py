"""On a local model server the NPC server evaluates each NPC's static prefix before anyone
talks, byte-equal to what that NPC's encounter will send, and stops when a player talks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from stack_support import start_runtime
from starharness.eval import scripted_player
from starharness.mockllm import ChatRequest, MockLlmServer
from starharness.mockllm.capabilities import LLAMA_CPP as PLAYS_LLAMA_CPP
from starharness.npc import GameKit, RunningServer, ServerSettings, TurnSettings, start_server
from starharness.npc.world import scene_opening
from starharness.voyage import GAME, PLAYER_ID
from starharness.voyage.game import play_offline

WAIT_S = 30
TURN_LIMIT_S = 1.5
OFFLINE = play_offline


@asynccontextmanager
async def _serving(
    tmp_path: Path,
    provider: str,
    responder: Callable[[ChatRequest], Any],
    turn: TurnSettings | None = None,
) -> AsyncIterator[tuple[MockLlmServer, RunningServer]]:
    async with MockLlmServer(responder=responder, plays=PLAYS_LLAMA_CPP) as mock:
        ctx = await start_runtime(mock.base_url, provider=provider, max_attempts=1)
        try:
            settings = ServerSettings(port=0, world=tmp_path / "world.db")
            if turn is not None:
                settings = settings.model_copy(update={"turn": turn})
            running = await start_server(ctx, GAME, settings)
            try:
                yield mock, running
            finally:
                await running.stop()
        finally:
            await ctx.dispose()


async def _until_open(running: RunningServer) -> None:
    """Until the server holds an encounter (its greeting may still be waiting)."""
    async with asyncio.timeout(WAIT_S):
        while not running.server.encounters:  # noqa: ASYNC110 (no event for it)
            await asyncio.sleep(0.01)


def _is_warming(body: Any) -> bool:
    return isinstance(body, dict) and body.get("max_tokens") == 1


async def test_every_npc_prefix_is_warmed_and_a_greeting_begins_with_it(tmp_path: Path) -> None:
    async with _serving(tmp_path, "llama-cpp", OFFLINE) as (mock, running):
        warmer = running.server.prefix_warmer
        async with asyncio.timeout(WAIT_S):
            await warmer.wait()
        npcs = [npc.id for npc in running.server.world.npcs() if npc.alive]
        assert warmer.warmed == npcs and len(npcs) >= 4
        warm_bodies = [record.body for record in mock.requests]
        assert len(warm_bodies) == len(npcs) and all(_is_warming(b) for b in warm_bodies)
        for npc, body in zip(npcs, warm_bodies, strict=True):
            assert body["messages"][0]["role"] == "system"
            assert body["tool_choice"] == {"type": "function", "function": {"name": "decide"}}
            # The prefix is followed by the opening every player's scene with the NPC shares.
            assert [m["role"] for m in body["messages"]] == ["system", "user"]
            assert body["messages"][1]["content"] == scene_opening(running.server.world, npc)

        async with scripted_player(running.ws_url, GameKit.of(GAME).protocol, PLAYER_ID) as me:
            for npc in ("npc-karsk", "npc-brandt"):
                seen = len(mock.requests)
                await me.open(f"open-{npc}", npc, timeout_s=WAIT_S)
                greeting = mock.requests[seen].body
                warmed = warm_bodies[npcs.index(npc)]
                # Byte-equal: the server's cache reuses only an identical token prefix.
                assert greeting["messages"][0] == warmed["messages"][0]
                assert greeting["tools"] == warmed["tools"]
                scene = greeting["messages"][1]["content"]
                opening = warmed["messages"][1]["content"]
                assert scene.startswith(opening + "\n") and "The player: " in scene
                assert "The player: " not in opening and "Memories" not in opening
                assert len(greeting["messages"]) > 2


async def test_warming_stops_when_a_player_opens_an_encounter(tmp_path: Path) -> None:
    release = asyncio.Event()
    warm_seen = asyncio.Event()

    async def responder(request: ChatRequest) -> Any:
        if (
            request.body.get("max_tokens") == 1
        ):  # a prefix being warmed: held until the player is in
            warm_seen.set()
            await release.wait()
        return await asyncio.to_thread(OFFLINE, request)

    async with _serving(tmp_path, "llama-cpp", responder) as (mock, running):
        async with asyncio.timeout(WAIT_S):
            await warm_seen.wait()
        async with scripted_player(running.ws_url, GameKit.of(GAME).protocol, PLAYER_ID) as me:
            opening = asyncio.create_task(me.open("e1", "npc-karsk", timeout_s=WAIT_S))
            # The encounter is open (its greeting queued behind the warm request in flight).
            await _until_open(running)
            release.set()
            await opening
            async with asyncio.timeout(WAIT_S):
                await running.server.prefix_warmer.wait()
        assert len(running.server.prefix_warmer.warmed) == 1
        assert sum(_is_warming(record.body) for record in mock.requests) == 1


async def test_a_greetings_turn_limit_does_not_run_while_a_prefix_is_being_warmed(
    tmp_path: Path,
) -> None:
    # A local server evaluates one prompt at a time: the lock stands for that. The prefix in
    # flight takes longer than a whole turn may; the greeting behind it must still be heard.
    one_at_a_time = asyncio.Lock()
    release = asyncio.Event()
    warm_seen = asyncio.Event()

    async def responder(request: ChatRequest) -> Any:
        async with one_at_a_time:
            if request.body.get("max_tokens") == 1:
                warm_seen.set()
                await release.wait()
            return await asyncio.to_thread(OFFLINE, request)

    turn = TurnSettings(timeout_s=TURN_LIMIT_S)
    async with _serving(tmp_path, "llama-cpp", responder, turn=turn) as (mock, running):
        async with asyncio.timeout(WAIT_S):
            await warm_seen.wait()
        async with scripted_player(running.ws_url, GameKit.of(GAME).protocol, PLAYER_ID) as me:
            opening = asyncio.create_task(me.open("e1", "npc-karsk", timeout_s=WAIT_S))
            await _until_open(running)
            # Longer than the greeting's whole turn may take.
            await asyncio.sleep(TURN_LIMIT_S * 2)
            release.set()
            greeting = await opening
    assert greeting.of_type("error") == [], greeting.frames
    assert greeting.lines() and greeting.ended_idle
    # Warming stopped after the prefix in flight: the greeting was the next request.
    assert sum(_is_warming(record.body) for record in mock.requests) == 1


async def test_a_provider_that_keeps_no_prompts_is_sent_no_warming(tmp_path: Path) -> None:
    async with _serving(tmp_path, "openai-compatible", OFFLINE) as (mock, running):
        await running.server.prefix_warmer.wait()
        await asyncio.sleep(0.2)  # a warming task, if one had started, would have sent by now
        assert running.server.prefix_warmer.warmed == []
        assert mock.requests == []
