"""Two workers on a PostgreSQL world and bus while the database server is stopped and started:
players hear a plain refusal, the log a line per kind, `/readyz` names what is down, and after
the restart the first tick works and its news and HUDs reach a player on the other worker."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from npc_support import Client

from pg_support import PASSWORD_VARIABLE, PgCluster
from stack_support import start_runtime
from starharness.mockllm import MockLlmServer
from starharness.npc import FanoutSettings, RunningServer, ServerSettings, start_server
from starharness.npc.server import PostgresFanout
from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage import GAME
from starharness.voyage.content import PLAYER_ID, SMUGGLER

_TOKEN_ENV = "STAR_HARNESS_TEST_OUTAGE_TOKEN"
_TOKEN = "a-server-token-of-32-characters!"
_AUTH = {"Authorization": f"Bearer {_TOKEN}"}
_RECOVER_S = 60.0
"""Generous: only a broken recovery takes this long."""


@asynccontextmanager
async def _workers(
    target: PostgresTarget, monkeypatch: pytest.MonkeyPatch, count: int = 2, *, bus: bool = True
) -> AsyncIterator[list[RunningServer]]:
    """`serve` workers on one PostgreSQL world (and one bus), a server token for the clock."""
    monkeypatch.setenv(_TOKEN_ENV, _TOKEN)
    fanout = FanoutSettings(url=target.url, password_env=target.password_env) if bus else None
    async with MockLlmServer(responder=GAME.offline_responder) as mock:
        ctx = await start_runtime(mock.base_url, max_attempts=1)
        running: list[RunningServer] = []
        try:
            for index in range(count):
                settings = ServerSettings(
                    port=0,
                    world=target.url,
                    world_password_env=PASSWORD_VARIABLE,
                    fanout=fanout,
                    worker_id=f"w{index}",
                    auth_token_env=_TOKEN_ENV,
                )
                running.append(await start_server(ctx, GAME, settings))
            for worker in running:
                listener = worker.server.fanout
                if isinstance(listener, PostgresFanout):
                    await listener.wait_listening()
            yield running
        finally:
            for worker in running:
                await worker.stop()
            await ctx.dispose()


def _is(kind: str) -> Any:
    return lambda f: f["t"] == kind


async def _until_ready(http: httpx.AsyncClient, deadline: float) -> None:
    while time.monotonic() < deadline:
        if (await http.get("/readyz")).status_code == 200:
            return
        await asyncio.sleep(0.05)
    pytest.fail("/readyz did not answer 200 after the restart")


async def test_a_database_restart_is_spoken_plainly_and_recovered_fully(
    pg_target: PostgresTarget, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cluster = PgCluster()
    caplog.set_level(logging.INFO, logger="starharness")
    async with (
        _workers(pg_target, monkeypatch) as (a, b),
        Client(a.ws_url, headers=_AUTH) as game_server,
        Client(b.ws_url, headers=_AUTH) as player,
        httpx.AsyncClient(base_url=a.url, trust_env=False) as http_a,
        httpx.AsyncClient(base_url=b.url, trust_env=False) as http_b,
    ):
        await player.send({"t": "hello", "playerId": PLAYER_ID})
        day = (await player.until(_is("welcome")))[-1]["hud"]["day"]
        await player.open("e1", SMUGGLER, PLAYER_ID)
        # A tick before the outage: the clock's and the bus's connections are open (and kept).
        await game_server.send({"t": "world.tick", "days": 1})
        await player.until(lambda f: f["t"] == "hud" and f["data"]["day"] == day + 1)
        caplog.clear()

        await asyncio.to_thread(cluster.stop)
        restarted = False
        try:
            # The player's frames get the outage's refusal; the connection lives on.
            refusals: list[dict[str, Any]] = []
            for index in range(6):
                await player.send({"t": "encounter.say", "id": "e1", "text": "hello there"})
                refusals.append((await player.until(_is("error")))[-1])
                await player.send(
                    {"t": "encounter.open", "id": f"x{index}", "npcId": SMUGGLER, "playerId": "x"}
                )
                refusals.append((await player.until(_is("error")))[-1])
            for refusal in refusals:
                assert refusal["code"] == "busy", refusal
                assert "out of reach" in refusal["message"], refusal
                assert "127.0.0.1" not in refusal["message"]
            assert {r.get("id") for r in refusals[0::2]} == {"e1"}
            # /readyz names the world's database (and the bus) on both workers.
            for http in (http_a, http_b):
                down = await http.get("/readyz")
                assert down.status_code == 503
                parts = down.json()["down"]
                assert "world database" in parts["world"], parts
                assert "fanout" in parts, parts
                assert "127.0.0.1" not in down.text and "postgresql" not in down.text
            metrics = (await http_b.get("/metrics", headers=_AUTH)).text
            assert 'star_harness_npc_world_down{worker="w1"} 1.0' in metrics
            # The log: no traceback, and a line per kind (not one per frame).
            ours = [r for r in caplog.records if r.name.startswith("starharness")]
            assert not [r for r in ours if r.exc_info], [r.getMessage() for r in ours]
            outage_lines = [r for r in ours if "out of reach" in r.getMessage()]
            assert 0 < len(outage_lines) < len(refusals) // 2, [r.getMessage() for r in ours]

            await asyncio.to_thread(cluster.start)
            restarted = True
            await _until_ready(http_a, time.monotonic() + _RECOVER_S)
            await _until_ready(http_b, time.monotonic() + _RECOVER_S)
            metrics = (await http_b.get("/metrics", headers=_AUTH)).text
            assert 'star_harness_npc_world_down{worker="w1"} 0.0' in metrics
            # The connection that was refused is served again.
            said = await player.say("e1", "hello there")
            assert not [f for f in said if f["t"] == "error"], said
            ours = [r for r in caplog.records if r.name.startswith("starharness")]
            assert not [r for r in ours if r.exc_info], [r.getMessage() for r in ours]
        finally:
            if not restarted:
                await asyncio.to_thread(cluster.start)


async def test_after_a_database_restart_the_first_tick_works_and_its_news_reaches_everyone(
    pg_target: PostgresTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = PgCluster()
    async with (
        _workers(pg_target, monkeypatch) as (a, b),
        Client(a.ws_url, headers=_AUTH) as game_server,
        Client(b.ws_url, headers=_AUTH) as player,
        httpx.AsyncClient(base_url=a.url, trust_env=False) as http_a,
        httpx.AsyncClient(base_url=b.url, trust_env=False) as http_b,
    ):
        await player.send({"t": "hello", "playerId": PLAYER_ID})
        day = (await player.until(_is("welcome")))[-1]["hud"]["day"]
        # A tick before the outage: the clock's and the bus's connections are open (and kept).
        await game_server.send({"t": "world.tick", "days": 1})
        await player.until(lambda f: f["t"] == "hud" and f["data"]["day"] == day + 1)
        await asyncio.to_thread(cluster.stop)
        try:
            down = await http_b.get("/readyz")
            assert down.status_code == 503 and "world" in down.json()["down"], down.text
        finally:
            await asyncio.to_thread(cluster.start)
        started = time.monotonic()
        await _until_ready(http_a, started + _RECOVER_S)
        await _until_ready(http_b, started + _RECOVER_S)
        ready_s = time.monotonic() - started
        # The first tick after the restart moves the world (its lock is had on a fresh
        # connection); its news and HUD reach the player on the other worker.
        await game_server.send({"t": "world.tick", "days": 3})
        answer = await game_server.until(lambda f: f["t"] in ("error", "world.event"))
        assert answer[-1]["t"] == "world.event", answer
        frames = await player.until(lambda f: f["t"] == "hud" and f["data"]["day"] == day + 4)
        heard = [f["headline"] for f in frames if f["t"] == "world.event"]
        assert heard[:1] == [answer[-1]["headline"]], (answer, frames)
        tick_s = time.monotonic() - started
        print(
            f"recovery: /readyz 200 on both workers {ready_s:.2f} s after the restart;"
            f" the first tick's news and HUD on the other worker at {tick_s:.2f} s"
        )


async def test_without_a_bus_the_first_failing_frame_reveals_the_outage_in_one_line(
    pg_target: PostgresTarget, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # No LISTEN connection to drop: the first frame to reach the world finds the outage.
    cluster = PgCluster()
    caplog.set_level(logging.INFO, logger="starharness")
    async with (
        _workers(pg_target, monkeypatch, 1, bus=False) as (worker,),
        Client(worker.ws_url, headers=_AUTH) as player,
    ):
        await player.send({"t": "hello", "playerId": PLAYER_ID})
        await player.until(_is("welcome"))
        await player.open("e1", SMUGGLER, PLAYER_ID)
        caplog.clear()
        await asyncio.to_thread(cluster.stop)
        try:
            errors: list[dict[str, Any]] = []
            for _ in range(8):
                await player.send({"t": "encounter.say", "id": "e1", "text": "hello there"})
                errors.append((await player.until(_is("error")))[-1])
            # The first may be the turn's own failure; from then on the outage's refusal.
            assert all(e["code"] == "busy" and "out of reach" in e["message"] for e in errors[1:])
            ours = [r for r in caplog.records if r.name.startswith("starharness")]
            assert not [r for r in ours if r.exc_info], [r.getMessage() for r in ours]
            assert len(ours) < len(errors) // 2, [r.getMessage() for r in ours]
        finally:
            await asyncio.to_thread(cluster.start)
        await _until_ready_url(worker.url)
        said = await player.say("e1", "hello there")
        assert not [f for f in said if f["t"] == "error"], said


async def _until_ready_url(url: str) -> None:
    async with httpx.AsyncClient(base_url=url, trust_env=False) as http:
        await _until_ready(http, time.monotonic() + _RECOVER_S)
