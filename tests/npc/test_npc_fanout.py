"""Several NPC servers on one world and one PostgreSQL bus: news once per worker, HUDs across
workers, the clock once per period, a shared day budget, LISTEN reconnects, /readyz."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from npc_support import Client, eventually, start_runtime
from tinygame import GAME
from tinygame.brain import respond
from tinygame.world import TinyWorld

from pg_support import PASSWORD_VARIABLE, pg_execute
from starharness.mockllm import MockLlmServer
from starharness.npc import FanoutSettings, RunningServer, ServerSettings, start_server
from starharness.npc.server import PostgresFanout
from starharness.npc.server.fanout import BUS_NAMESPACE
from starharness.npc.server.fanout.schema import NEWS_LOCK, TICK_LOCK
from starharness.npc.server.settings import TickSettings
from starharness.npc.world import NewsItem
from starharness.runtime.session import StoreFormatError
from starharness.runtime.session.postgres import PostgresTarget


def _ticks(running: RunningServer) -> int:
    value = running.server.metrics.registry.get_sample_value("star_harness_npc_ticks_total")
    return int(value or 0)


def _fanout(running: RunningServer) -> PostgresFanout:
    fanout = running.server.fanout
    assert isinstance(fanout, PostgresFanout)
    return fanout


@asynccontextmanager
async def _workers(
    tmp_path: Path, target: PostgresTarget, count: int, ticks: TickSettings | None = None
) -> AsyncIterator[list[RunningServer]]:
    """`count` servers on one SQLite world file and one bus, each listening."""
    bus = FanoutSettings(url=target.url, password_env=target.password_env)
    async with MockLlmServer(responder=respond) as mock:
        ctx = await start_runtime(mock.base_url)
        running: list[RunningServer] = []
        try:
            for index in range(count):
                settings = ServerSettings(
                    port=0,
                    world=tmp_path / "world.db",
                    fanout=bus,
                    worker_id=f"w{index}",
                    ticks=ticks or TickSettings(),
                )
                running.append(await start_server(ctx, GAME, settings))
            for worker in running:
                await _fanout(worker).wait_listening()
            yield running
        finally:
            for worker in running:
                await worker.stop()
            await ctx.dispose()


async def _hello(client: Client, player_id: str) -> dict[str, Any]:
    await client.send({"t": "hello", "playerId": player_id})
    # News goes to every connection: a scheduled tick's may come before the welcome.
    frames = await client.until(lambda f: f["t"] != "world.event")
    welcome = frames[-1]
    assert welcome["t"] == "welcome", welcome
    return welcome


def _headlines(frames: list[dict[str, Any]]) -> list[str]:
    return [f["headline"] for f in frames if f["t"] == "world.event"]


def _dawn(day: int) -> Any:
    return lambda f: f["t"] == "world.event" and f["headline"] == f"Day {day} dawns."


async def test_one_tick_reaches_a_player_on_every_worker_exactly_once(
    tmp_path: Path, pg_target: PostgresTarget
) -> None:
    async with _workers(tmp_path, pg_target, 3) as workers:
        clients = [Client(w.ws_url) for w in workers]
        for client in clients:
            await client.__aenter__()
        try:
            for client in clients:
                await _hello(client, "p1")
            await clients[0].send({"t": "world.tick", "days": 2})
            firsts = [await c.until(_dawn(3)) for c in clients]
            # A second tick, from another worker: everything up to its news came once.
            await clients[1].send({"t": "world.tick", "days": 1})
            for client, first in zip(clients, firsts, strict=True):
                frames = first + await client.until(_dawn(4))
                assert _headlines(frames) == ["Day 2 dawns.", "Day 3 dawns.", "Day 4 dawns."]
                huds = await client.until(lambda f: f["t"] == "hud" and f["data"]["day"] == 4)
                assert huds[-1]["data"]["coins"] == 20
            assert [_ticks(w) for w in workers] == [1, 1, 0]
        finally:
            for client in clients:
                await client.__aexit__(None, None, None)


async def test_a_trade_on_one_worker_updates_the_players_hud_on_another(
    tmp_path: Path, pg_target: PostgresTarget
) -> None:
    async with (
        _workers(tmp_path, pg_target, 2) as (a, b),
        Client(a.ws_url) as trader,
        Client(b.ws_url) as watcher,
        Client(b.ws_url) as other,
    ):
        assert (await _hello(watcher, "p1"))["hud"]["coins"] == 20
        await _hello(other, "p2")
        await trader.open("e1", "n-baker", "p1")
        await trader.say("e1", "buy 2")
        hud = await watcher.until(lambda f: f["t"] == "hud")
        assert hud[-1]["data"]["coins"] == 14 and hud[-1]["data"]["loaves"] == 2
        # p2's connection heard nothing of p1's trade: its next frame is the tick's news.
        await trader.send({"t": "world.tick", "days": 1})
        assert (await other.recv())["t"] == "world.event"


async def test_news_is_not_lost_or_repeated_across_listen_reconnects(
    tmp_path: Path, pg_target: PostgresTarget
) -> None:
    async with (
        _workers(tmp_path, pg_target, 2) as (a, b),
        Client(a.ws_url) as ticker,
        Client(b.ws_url) as player,
    ):
        await _hello(ticker, "p2")
        await _hello(player, "p1")
        listener = _fanout(b)
        # The notice is sent at commit, after the listener's backend was ended: only reading
        # news by id after the reconnect delivers it.
        pid = listener.backend_pid
        with pg_target.connect() as conn, conn.transaction():
            conn.execute(
                f"INSERT INTO {BUS_NAMESPACE}.news (location_id, headline)"
                " VALUES ('square', 'Lost?')"
            )
            conn.execute("SELECT pg_notify('star_harness_world', '1')")
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        frames = await player.until(lambda f: f["t"] == "world.event")
        assert _headlines(frames) == ["Lost?"]
        # The HUD is state: after the reconnect the worker re-pushed it.
        hud = (
            frames
            if any(f["t"] == "hud" for f in frames)
            else await player.until(lambda f: f["t"] == "hud")
        )
        assert any(f["t"] == "hud" and f["data"]["coins"] == 20 for f in hud)
        for _ in range(2, 7):
            pid = listener.backend_pid
            await ticker.send({"t": "world.tick", "days": 1})
            pg_execute(pg_target, "SELECT pg_terminate_backend(%s)", pid)
            await eventually(lambda p=pid: listener.backend_pid != p)
        frames = await player.until(_dawn(6))
        assert _headlines(frames) == [f"Day {day} dawns." for day in range(2, 7)]
        assert listener.reconnects == 6
        # Nothing more arrives than the next tick's news: no replay after the reconnects.
        await ticker.send({"t": "world.tick", "days": 1})
        frames = await player.until(_dawn(7))
        assert _headlines(frames) == ["Day 7 dawns."]


async def test_news_of_concurrent_publishers_commits_in_id_order(
    tmp_path: Path, pg_target: PostgresTarget
) -> None:
    async with (
        _workers(tmp_path, pg_target, 2) as (a, b),
        Client(b.ws_url) as player,
        await pg_target.aconnect(autocommit=True) as other,
    ):
        # Another worker's publishing transaction holds an earlier id, not yet committed.
        async with other.transaction():
            await other.execute("SELECT pg_advisory_xact_lock(%s, %s)", NEWS_LOCK)
            await other.execute(
                f"INSERT INTO {BUS_NAMESPACE}.news (location_id, headline)"
                " VALUES ('square', 'first')"
            )
            late = asyncio.create_task(_fanout(a).publish([NewsItem("forge", "second")]))
            done, _ = await asyncio.wait({late}, timeout=1.0)
            if done:  # only without the lock: a reader may now see `second` alone
                assert _headlines(await player.until(lambda f: f["t"] == "world.event")) == [
                    "second"
                ]
        await late
        frames = await player.until(lambda f: f.get("headline") == "second")
        assert _headlines(frames) == ["first", "second"]


async def test_the_scheduled_clock_advances_once_per_period_with_three_workers(
    tmp_path: Path, pg_target: PostgresTarget
) -> None:
    ticks = TickSettings(every_s=0.2, days=1)
    async with _workers(tmp_path, pg_target, 3, ticks) as workers:
        clients = [Client(w.ws_url) for w in workers]
        for client in clients:
            await client.__aenter__()
        try:
            for client in clients:
                await _hello(client, "p1")
            for client in clients:
                days = [int(h.split()[1]) for h in _headlines(await client.until(_dawn(8)))]
                # A client that joined mid-schedule missed the first days; it never gets one
                # twice or out of order.
                assert days == list(range(days[0], 9))
        finally:
            for client in clients:
                await client.__aexit__(None, None, None)

        def under_the_tick_lock() -> tuple[int, int]:
            with pg_target.connect() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", TICK_LOCK)
                world = TinyWorld(tmp_path / "world.db")
                try:
                    day = int(world.player_view("p1")["day"])
                finally:
                    world.close()
                return day, sum(_ticks(w) for w in workers)

        day, ran = await asyncio.to_thread(under_the_tick_lock)
        # Every day the world advanced is one claimed period's tick, run by one worker.
        assert day == 1 + ran and ran >= 7


async def test_a_tick_without_the_bus_is_refused_and_the_world_stays(
    tmp_path: Path, pg_target: PostgresTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _workers(tmp_path, pg_target, 1) as (worker,), Client(worker.ws_url) as client:
        await _hello(client, "p1")
        # The tick lock's connection opens on the first tick: it cannot log in now.
        monkeypatch.setenv(PASSWORD_VARIABLE, "not-the-password")
        await client.send({"t": "world.tick", "days": 1})
        refused = await client.until(lambda f: f["t"] == "error")
        # The outage's refusal: nothing was done, try again shortly.
        assert refused[-1]["code"] == "busy"
        assert "the world clock's lock could not be had" in refused[-1]["message"]
        assert "postgresql" not in refused[-1]["message"] and "127.0.0.1" not in str(refused)
        monkeypatch.undo()
        assert (await client.send({"t": "world.tick", "days": 1})) is None
        frames = await client.until(lambda f: f["t"] == "world.event")
        # The refused tick advanced nothing: the next one is day 2.
        assert _headlines(frames) == ["Day 2 dawns."]


async def test_exactly_one_worker_claims_each_period(pg_target: PostgresTarget) -> None:
    fanouts = [await PostgresFanout.open(pg_target) for _ in range(3)]
    try:
        for _ in range(5):
            pg_execute(
                pg_target, f"UPDATE {BUS_NAMESPACE}.clock SET next_tick_at = now() - interval '1 s'"
            )
            claims = await asyncio.gather(*(f.claim_period(3600) for f in fanouts))
            assert sorted(claims) == [False, False, True]
            # The period is taken: no worker claims it again.
            assert not any(await asyncio.gather(*(f.claim_period(3600) for f in fanouts)))
    finally:
        for fanout in fanouts:
            await fanout.aclose()


async def test_the_day_budget_holds_across_workers(
    tmp_path: Path, pg_target: PostgresTarget
) -> None:
    ticks = TickSettings(max_days_per_minute=5)
    async with (
        _workers(tmp_path, pg_target, 2, ticks) as (a, b),
        Client(a.ws_url) as first,
        Client(b.ws_url) as second,
    ):
        await first.send({"t": "world.tick", "days": 3})
        await first.until(_dawn(4))
        await second.until(_dawn(4))
        await second.send({"t": "world.tick", "days": 3})
        refused = await second.until(lambda f: f["t"] == "error")
        assert refused[-1]["code"] == "limit"
        assert "at most 5 days a minute; 2 are left" in refused[-1]["message"]
        await second.send({"t": "world.tick", "days": 2})
        await first.until(_dawn(6))
        await first.send({"t": "world.tick", "days": 1})
        refused = await first.until(lambda f: f["t"] == "error")
        assert "0 are left" in refused[-1]["message"]


async def test_readyz_reports_the_world_and_the_listen_connection(
    tmp_path: Path, pg_target: PostgresTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        _workers(tmp_path, pg_target, 1) as (worker,),
        httpx.AsyncClient(base_url=worker.url, trust_env=False) as http,
    ):
        ready = await http.get("/readyz")
        assert ready.status_code == 200
        assert ready.json() == {"ready": True, "worker": "w0"}
        # The listener loses its backend and cannot log in again: not ready, and why.
        with pg_target.connect(autocommit=True) as admin:
            monkeypatch.setenv(PASSWORD_VARIABLE, "not-the-password")
            admin.execute("SELECT pg_terminate_backend(%s)", (_fanout(worker).backend_pid,))
        await eventually(lambda: _fanout(worker).not_ready() is not None)
        down = await http.get("/readyz")
        assert down.status_code == 503
        assert down.json()["worker"] == "w0"
        assert "LISTEN connection" in down.json()["reason"]
        assert "127.0.0.1" not in down.text and "postgresql" not in down.text
        monkeypatch.undo()
        await _fanout(worker).wait_listening()
        assert (await http.get("/readyz")).status_code == 200
        # A world that cannot be read is not ready either.
        world = worker.server.world
        assert isinstance(world, TinyWorld)
        world.close()
        gone = await http.get("/readyz")
        assert gone.status_code == 503
        assert "the world cannot be read" in gone.json()["reason"]
        assert (await http.get("/healthz")).status_code == 200


async def test_metrics_carry_the_worker_label(tmp_path: Path, pg_target: PostgresTarget) -> None:
    async with _workers(tmp_path, pg_target, 2) as workers, Client(workers[0].ws_url) as client:
        await client.send({"t": "world.tick", "days": 1})
        await client.until(_dawn(2))
        for worker, ticks in zip(workers, (1, 0), strict=True):
            async with httpx.AsyncClient(base_url=worker.url, trust_env=False) as http:
                text = (await http.get("/metrics")).text
            worker_id = worker.server.metrics.worker
            assert f'star_harness_npc_ticks_total{{worker="{worker_id}"}} {float(ticks)}' in text
            samples = [line for line in text.splitlines() if line and not line.startswith("#")]
            assert samples and all(f'worker="{worker_id}"' in line for line in samples)


async def test_a_bus_schema_of_another_application_is_refused(pg_target: PostgresTarget) -> None:
    pg_execute(pg_target, f"CREATE SCHEMA {BUS_NAMESPACE}")
    with pytest.raises(StoreFormatError, match="not a star-harness fan-out bus"):
        await PostgresFanout.open(pg_target)
    pg_execute(
        pg_target,
        f"CREATE TABLE {BUS_NAMESPACE}.identity (application text, version integer);"
        f" INSERT INTO {BUS_NAMESPACE}.identity VALUES ('someone else', 1)",
    )
    with pytest.raises(StoreFormatError, match="belongs to another application"):
        await PostgresFanout.open(pg_target)


def test_a_fanout_url_with_a_password_is_refused() -> None:
    with pytest.raises(ValueError, match="carries a password"):
        FanoutSettings(url="postgresql://u:secret@localhost/db")
    with pytest.raises(ValueError, match="NAME of an environment variable"):
        FanoutSettings(url="postgresql://u@localhost/db", password_env="not a name")


async def test_news_and_huds_wait_while_the_bus_is_out_of_reach_and_none_is_lost(
    tmp_path: Path, pg_target: PostgresTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        _workers(tmp_path, pg_target, 2) as (a, b),
        Client(a.ws_url) as ticker,
        Client(b.ws_url) as watcher,
        httpx.AsyncClient(base_url=a.url, trust_env=False) as http,
    ):
        await _hello(watcher, "p1")
        await ticker.send({"t": "world.tick", "days": 1})
        await watcher.until(_dawn(2))
        # The announcing connection is lost and cannot log in again; the clock's still holds.
        pid = _fanout(a).announce_backend_pid
        assert pid is not None
        pg_execute(pg_target, "SELECT pg_terminate_backend(%s)", pid)
        monkeypatch.setenv(PASSWORD_VARIABLE, "not-the-password")
        await ticker.send({"t": "world.tick", "days": 1})
        await eventually(lambda: _fanout(a).not_ready() is not None)
        waiting = await http.get("/readyz")
        assert waiting.status_code == 503
        assert "news items" in waiting.json()["down"]["fanout"], waiting.text
        # The bus answers again: the tick's news and HUD reach the other worker, once.
        monkeypatch.undo()
        frames = await watcher.until(lambda f: f["t"] == "hud" and f["data"]["day"] == 3)
        assert _headlines(frames) == ["Day 3 dawns."]
        await ticker.send({"t": "world.tick", "days": 1})
        frames = await watcher.until(_dawn(4))
        assert _headlines(frames) == ["Day 4 dawns."]
        assert (await http.get("/readyz")).status_code == 200
