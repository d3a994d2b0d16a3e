"""Overload and stalls through the real server: retried within the turn, capacity says busy."""

from __future__ import annotations

from pathlib import Path

from npc_support import Client, eventually, spoken
from tinygame import GAME
from tinygame.brain import respond, talk

from stack_support import start_runtime
from starharness.mockllm import ChatRequest, MockLlmServer, ServerFault, Stall, Step, ToolCalls
from starharness.npc import LimitsSettings, ServerSettings, start_server


async def test_a_stalled_request_is_retried_within_the_turn(tmp_path: Path) -> None:
    calls: list[int] = []

    def stall_first(request: ChatRequest) -> Step:
        calls.append(1)
        if len(calls) == 1:
            return Stall(phase="before_headers")
        return ToolCalls(calls=[talk("Sorry, I was miles away.")])

    async with MockLlmServer(responder=stall_first) as mock:
        ctx = await start_runtime(mock.base_url, max_attempts=3, first_byte_s=0.5)
        running = await start_server(ctx, GAME, ServerSettings(port=0, world=tmp_path / "w.db"))
        try:
            async with Client(running.ws_url) as client:
                await client.open("e1", "n-baker", "p1")
                frames = await client.say("e1", "hello?")
                assert "error" not in [f["t"] for f in frames]
                assert spoken(frames) == "Sorry, I was miles away."
                assert len(calls) == 2
        finally:
            await running.stop()
            await ctx.dispose()


async def test_the_player_sees_no_url_or_variable_when_the_model_is_gone(
    tmp_path: Path,
) -> None:
    async with MockLlmServer(responder=lambda _request: ServerFault()) as mock:
        ctx = await start_runtime(mock.base_url, max_attempts=2)
        running = await start_server(ctx, GAME, ServerSettings(port=0, world=tmp_path / "w.db"))
        try:
            async with Client(running.ws_url) as client:
                await client.open("e1", "n-baker", "p1")
                frames = await client.say("e1", "hello?")
                error = next(f for f in frames if f["t"] == "error")
                assert error["code"] == "llm_unavailable"
                for leak in (mock.base_url, "127.0.0.1", "http", "API_KEY", "HTTP 5"):
                    assert leak not in error["message"]
        finally:
            await running.stop()
            await ctx.dispose()


async def test_opens_beyond_the_servers_capacity_get_busy(tmp_path: Path) -> None:
    limits = LimitsSettings(max_server_encounters=2)
    settings = ServerSettings(port=0, world=tmp_path / "w.db", limits=limits)
    async with MockLlmServer(responder=respond) as mock:
        ctx = await start_runtime(mock.base_url)
        running = await start_server(ctx, GAME, settings)
        try:
            async with Client(running.ws_url) as first, Client(running.ws_url) as second:
                await first.open("a", "n-baker", "p1")
                await second.open("b", "n-baker", "p1")
                await second.send(
                    {"t": "encounter.open", "id": "c", "npcId": "n-baker", "playerId": "p1"}
                )
                full = await second.recv()
                assert (full["t"], full["code"], full["id"]) == ("error", "busy", "c")
                await first.send({"t": "encounter.close", "id": "a"})
                await eventually(lambda: len(running.server.encounters) == 1)
                await second.open("c", "n-baker", "p1")
        finally:
            await running.stop()
            await ctx.dispose()


async def test_opens_faster_than_the_connection_rate_get_limit(tmp_path: Path) -> None:
    limits = LimitsSettings(opens_per_second=0.001, open_burst=2)
    settings = ServerSettings(port=0, world=tmp_path / "w.db", limits=limits)
    async with MockLlmServer(responder=respond) as mock:
        ctx = await start_runtime(mock.base_url)
        running = await start_server(ctx, GAME, settings)
        try:
            async with Client(running.ws_url) as client:
                await client.open("a", "n-baker", "p1")
                await client.open("b", "n-baker", "p1")
                await client.send(
                    {"t": "encounter.open", "id": "c", "npcId": "n-baker", "playerId": "p1"}
                )
                refused = await client.recv()
                assert (refused["code"], refused["id"]) == ("limit", "c")
        finally:
            await running.stop()
            await ctx.dispose()
