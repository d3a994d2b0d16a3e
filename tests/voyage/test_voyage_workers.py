"""Three real `serve` workers on one PostgreSQL world and bus: buyers racing across them for
the last units and one player's credits, one tick heard once everywhere, kill -9 mid-trade."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from voyage_e2e_support import Player, options

from pg_support import PASSWORD_VARIABLE, pg_execute
from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage.content import PLAYER_ID, SMUGGLER

_START_TIMEOUT_S = 90
_TOKEN_ENV = "STAR_HARNESS_TEST_SERVER_TOKEN"
_TOKEN = "a-server-token-of-32-characters!"
_AUTH = {"Authorization": f"Bearer {_TOKEN}"}
RICH = "player-rich"
BUY = "offer-1"
"""The greeting's first offer, 5 fuel cells at the going price: picking it commits the sale."""
PER_CONNECTION = 6


@dataclass
class Worker:
    name: str
    proc: subprocess.Popen[str]
    url: str
    ws: str


def _start(tmp_path: Path, target: PostgresTarget, name: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(tmp_path / "home")
    env[_TOKEN_ENV] = _TOKEN
    # stdout to a file: a pipe nobody reads would block a chatty worker.
    log = (tmp_path / f"{name}.log").open("w")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "starharness.cli",
            "serve",
            "--offline",
            "--port",
            "0",
            "--world",
            target.url,
            "--world-password-env",
            PASSWORD_VARIABLE,
            "--fanout",
            target.url,
            "--fanout-password-env",
            PASSWORD_VARIABLE,
            "--worker-id",
            name,
            "--auth-token-env",
            _TOKEN_ENV,
            "--ready-file",
            str(tmp_path / f"{name}.json"),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _log(tmp_path: Path, name: str) -> str:
    return (tmp_path / f"{name}.log").read_text()


@pytest.fixture
def workers(tmp_path: Path, pg_target: PostgresTarget) -> Iterator[list[Worker]]:
    started: list[Worker] = []
    try:
        for name in ("w1", "w2", "w3"):
            proc = _start(tmp_path, pg_target, name)
            ready = tmp_path / f"{name}.json"
            deadline = time.monotonic() + _START_TIMEOUT_S
            while not ready.exists():
                if proc.poll() is not None:
                    pytest.fail(f"{name} exited early:\n{_log(tmp_path, name)}")
                if time.monotonic() > deadline:
                    proc.kill()
                    pytest.fail(f"{name} did not become ready:\n{_log(tmp_path, name)}")
                time.sleep(0.05)
            info = json.loads(ready.read_text())
            started.append(Worker(name, proc, info["url"], info["ws"]))
        yield started
    finally:
        for worker in started:
            if worker.proc.poll() is None:
                worker.proc.terminate()
        for worker in started:
            worker.proc.wait(timeout=30)
        for worker in started:
            if worker.proc.returncode != -signal.SIGKILL:
                out = _log(tmp_path, worker.name)
                assert worker.proc.returncode == 0, out
                assert "Traceback" not in out, out


async def _ready(worker: Worker) -> None:
    async with httpx.AsyncClient(base_url=worker.url, trust_env=False) as http:
        for _ in range(1000):
            answer = await http.get("/readyz")
            if answer.status_code == 200:
                assert answer.json()["worker"] == worker.name
                return
            await asyncio.sleep(0.02)
    pytest.fail(f"{worker.name}: /readyz never answered 200")


def _holdings(target: PostgresTarget, players: tuple[str, ...]) -> tuple[int, int, int]:
    """Fuel held by the smuggler and the players, their credits summed, and fuel at the market."""
    ids = (SMUGGLER, *players)
    fuel = pg_execute(
        target,
        "SELECT coalesce(sum(qty), 0) FROM voyage.cargo WHERE good_id = 'fuel' "
        "AND actor_id = ANY(%s)",
        list(ids),
    )
    credits = pg_execute(
        target, "SELECT sum(credits) FROM voyage.actors WHERE id = ANY(%s)", list(ids)
    )
    negative = pg_execute(
        target,
        "SELECT (SELECT count(*) FROM voyage.actors WHERE credits < 0) + "
        "(SELECT count(*) FROM voyage.cargo WHERE qty < 0)",
    )
    return int(str(fuel[0][0])), int(str(credits[0][0])), int(str(negative[0][0]))


def _bought(target: PostgresTarget, player: str, since_id: int) -> int:
    """Fuel the audit says `player` bought (accepted player_buys rows after `since_id`)."""
    rows = pg_execute(
        target,
        "SELECT args FROM voyage.audit WHERE action = 'player_buys' AND ok = 1 "
        "AND target_id = %s AND id > %s",
        player,
        since_id,
    )
    return sum(int(json.loads(str(row[0]))["qty"]) for row in rows)


def _last_audit_id(target: PostgresTarget) -> int:
    return int(str(pg_execute(target, "SELECT coalesce(max(id), 0) FROM voyage.audit")[0][0]))


def _fuel_of(target: PostgresTarget, actor: str) -> int:
    rows = pg_execute(
        target, "SELECT qty FROM voyage.cargo WHERE actor_id = %s AND good_id = 'fuel'", actor
    )
    return int(str(rows[0][0])) if rows else 0


def _credits_of(target: PostgresTarget, actor: str) -> int:
    return int(
        str(pg_execute(target, "SELECT credits FROM voyage.actors WHERE id = %s", actor)[0][0])
    )


async def _open_buyers(
    workers: list[Worker], players: list[str], count: int, tag: str
) -> list[tuple[Player, str]]:
    """`count` encounters with the smuggler, round-robin over workers and players, greeted."""
    clients: dict[tuple[int, str, int], Player] = {}
    opened: list[tuple[Player, str]] = []
    for i in range(count):
        worker, player = i % len(workers), players[i % len(players)]
        slot = (worker, player, (i // (len(workers) * len(players))) // PER_CONNECTION)
        if slot not in clients:
            client = Player(workers[worker].ws, player, headers=_AUTH)
            await client.__aenter__()
            assert (await client.hello())["t"] == "welcome"
            clients[slot] = client
        opened.append((clients[slot], f"{tag}-{i}"))

    async def greet(client: Player, encounter: str) -> None:
        frames = await client.open(encounter, SMUGGLER)
        assert BUY in options(frames), frames
        offered = next(item for f in frames if f["t"] == "options" for item in f["items"])
        assert offered["id"] == BUY and offered["label"].startswith("Buy 5 fuel cells"), frames

    # A connection's frames arrive in order; each connection opens its encounters in turn.
    by_client: dict[int, list[tuple[Player, str]]] = {}
    for client, encounter in opened:
        by_client.setdefault(id(client), []).append((client, encounter))

    async def greet_all(items: list[tuple[Player, str]]) -> None:
        for client, encounter in items:
            await greet(client, encounter)

    await asyncio.gather(*(greet_all(items) for items in by_client.values()))
    return opened


async def _pick_all(opened: list[tuple[Player, str]]) -> list[list[dict[str, Any]]]:
    """Every encounter picks the offer at once; what each connection then hears, by encounter."""
    by_client: dict[int, list[tuple[Player, str]]] = {}
    for client, encounter in opened:
        by_client.setdefault(id(client), []).append((client, encounter))
    for client, encounter in opened:
        await client.send({"t": "encounter.say", "id": encounter, "optionId": BUY})

    async def hear(items: list[tuple[Player, str]]) -> dict[str, list[dict[str, Any]]]:
        client = items[0][0]
        waiting = {encounter for _, encounter in items}
        heard: dict[str, list[dict[str, Any]]] = {e: [] for e in waiting}
        while waiting:
            frame = await client.recv()
            if frame.get("id") in heard:
                heard[frame["id"]].append(frame)
                if frame["t"] == "encounter.idle":
                    waiting.discard(frame["id"])
        return heard

    results = await asyncio.gather(*(hear(items) for items in by_client.values()))
    merged = {k: v for result in results for k, v in result.items()}
    return [merged[encounter] for _, encounter in opened]


def _accepted(frames: list[dict[str, Any]]) -> bool:
    return any(f["t"] == "action" and f["name"] == "player_buys" and f["ok"] for f in frames)


async def _close_clients(opened: list[tuple[Player, str]]) -> None:
    seen: set[int] = set()
    for client, _ in opened:
        if id(client) not in seen:
            seen.add(id(client))
            await client.__aexit__(None, None, None)


async def test_three_workers_share_one_world(
    workers: list[Worker], pg_target: PostgresTarget
) -> None:
    for worker in workers:
        await _ready(worker)
    pg_execute(
        pg_target,
        "INSERT INTO voyage.actors (id, name, kind, archetype, location_id, alive, credits, "
        "persona) VALUES (%s, 'Captain Birch', 'player', 'captain', 'omega-station', 1, "
        "1000000, '')",
        RICH,
    )
    players = (PLAYER_ID, RICH)
    fuel_before, credits_before, _ = _holdings(pg_target, players)
    smuggler_fuel = _fuel_of(pg_target, SMUGGLER)
    ash_credits = _credits_of(pg_target, PLAYER_ID)

    # 90 buyers across the three workers: the smuggler's last fuel and Ash's credits.
    opened = await _open_buyers(workers, list(players), 90, "race")
    try:
        heard = await _pick_all(opened)
    finally:
        await _close_clients(opened)
    wins = [_accepted(frames) for frames in heard]
    fuel_after, credits_after, negative = _holdings(pg_target, players)
    assert negative == 0
    assert (fuel_after, credits_after) == (fuel_before, credits_before)  # conserved
    sold = smuggler_fuel - _fuel_of(pg_target, SMUGGLER)
    assert sold == 5 * sum(wins) <= smuggler_fuel  # never oversold
    assert sold == _bought(pg_target, PLAYER_ID, 0) + _bought(pg_target, RICH, 0)
    ash_wins = sum(
        w for (client, _), w in zip(opened, wins, strict=True) if client.player_id == PLAYER_ID
    )
    assert ash_wins <= ash_credits // 2_250  # Ash could pay for this many, no more
    assert _fuel_of(pg_target, PLAYER_ID) == 5 * ash_wins
    assert sum(wins) > 0

    # One tick, sent once by the game server, heard once by a player on every worker.
    watchers = [Player(worker.ws, PLAYER_ID, headers=_AUTH) for worker in workers]
    for watcher in watchers:
        await watcher.__aenter__()
        await watcher.hello()
    events_before = _count(pg_target, "SELECT count(*) FROM voyage.world_events")
    day_before = _count(pg_target, "SELECT day FROM voyage.clock")
    try:
        async with Player(workers[0].ws, PLAYER_ID, headers=_AUTH) as server:
            await server.send({"t": "world.tick", "days": 30})
            async with asyncio.timeout(60):
                # The tick's own worker answers nothing on the socket: the clock row tells.
                while _count(pg_target, "SELECT day FROM voyage.clock") < day_before + 30:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
        rows = pg_execute(
            pg_target,
            "SELECT headline FROM voyage.world_events ORDER BY id OFFSET %s",
            events_before,
        )
        expected = [str(row[0]) for row in rows]
        assert expected, "a 30-day tick made no news: the test would prove nothing"
        heard_news = [await _news(watcher, len(expected)) for watcher in watchers]
    finally:
        for watcher in watchers:
            await watcher.__aexit__(None, None, None)
    assert heard_news == [expected] * 3

    # kill -9 of a worker while its trades are in flight: no half-trade, and the player
    # reopens on another worker.
    audit_mark = _last_audit_id(pg_target)
    fuel_before, credits_before, _ = _holdings(pg_target, players)
    rich_fuel = _fuel_of(pg_target, RICH)
    doomed = await _open_buyers([workers[2]], [RICH], PER_CONNECTION, "doomed")
    for client, encounter in doomed:
        await client.send({"t": "encounter.say", "id": encounter, "optionId": BUY})
    await doomed[0][0].until(lambda f: f["t"] in ("action", "say.delta"))
    workers[2].proc.send_signal(signal.SIGKILL)
    workers[2].proc.wait(timeout=30)
    with contextlib.suppress(Exception):
        await _close_clients(doomed)
    fuel_after, credits_after, negative = _holdings(pg_target, players)
    assert negative == 0
    assert (fuel_after, credits_after) == (fuel_before, credits_before)
    assert _fuel_of(pg_target, RICH) - rich_fuel == _bought(pg_target, RICH, audit_mark)
    async with Player(workers[0].ws, RICH, headers=_AUTH) as again:
        assert (await again.hello())["t"] == "welcome"
        frames = await again.open("again", SMUGGLER)
        assert frames[0]["t"] == "encounter.opened" and frames[-1]["t"] == "encounter.idle"


def _count(target: PostgresTarget, statement: str) -> int:
    return int(str(pg_execute(target, statement)[0][0]))


async def _news(watcher: Player, expected: int) -> list[str]:
    """The headlines a watcher hears: `expected` of them, then a second more (for repeats)."""
    heard: list[str] = []
    async with asyncio.timeout(60):
        while len(heard) < expected:
            frame = await watcher.recv()
            if frame["t"] == "world.event":
                heard.append(frame["headline"])
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(1.0):
            while True:
                frame = await watcher.recv()
                if frame["t"] == "world.event":
                    heard.append(frame["headline"])
    return heard
