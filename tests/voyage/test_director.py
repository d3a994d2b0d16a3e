"""The director over 30 game days on the offline brain, through the real server and WebSocket:
every change it made is audited and within the game's bounds, the world stays whole, two runs
from the same seed audit the same, players see its prices and headlines, and an out-of-bounds
call from a model is refused with nothing committed."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from director_support import (
    director_audit,
    director_results,
    serving_director,
    tick_days,
)
from voyage_e2e_support import Player, Stack, line

from starharness.eval.audit import AuditReader
from starharness.mockllm import ChatRequest, ScriptedCall, ServerFault, Step, Success, ToolCalls
from starharness.npc import ResidentDefinitionError, ServerSettings, WorldCalls, render_transcript
from starharness.npc.residents import RESIDENT_KIND, ResidentRunner
from starharness.runtime.kernel import Context
from starharness.runtime.loop import AgentOptions
from starharness.runtime.sandbox import BubblewrapProvider
from starharness.runtime.session import SESSIONS
from starharness.voyage import GAME, VoyageWorld, open_world
from starharness.voyage.content import OMEGA, PLAYER_ID, SMUGGLER
from starharness.voyage.director import (
    DIRECTOR,
    HEADLINE_KIND,
    MAX_HEADLINE_CHARS,
    OMEGA_BOUNDS,
    POST_HEADLINE,
    RESTOCK,
    SET_PRICE,
    parse_brief,
)
from starharness.voyage.store import ClockRules
from world_support import WorldPlace

DAYS = 30


def _requests_with_brief(stack: Stack) -> list[str]:
    briefs: list[str] = []
    for request in stack.mock.requests:
        names = {tool["function"]["name"] for tool in request.body.get("tools") or ()}
        last = request.body["messages"][-1]
        if SET_PRICE in names and last["role"] == "user":
            briefs.append(str(last["content"]))
    return briefs


def _director_calls(stack: Stack) -> list[list[str]]:
    """The names of the calls the director's model made, a list per turn that made any."""
    names: list[list[str]] = []
    for request in stack.mock.requests:
        offered = {tool["function"]["name"] for tool in request.body.get("tools") or ()}
        messages = request.body["messages"]
        if SET_PRICE not in offered or messages[-1]["role"] != "tool":
            continue
        made = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
        names.append([call["function"]["name"] for call in made[-1]["tool_calls"]])
    return names


def _world_rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def test_the_director_is_off_unless_named() -> None:
    assert ServerSettings().residents == []
    assert [resident.name for resident in GAME.residents] == ["director"]


def _needs_bubblewrap(code_mode: bool) -> None:
    missing = BubblewrapProvider().probe() if code_mode else None
    if missing is not None and os.environ.get("CI") != "true":
        pytest.skip(f"code mode needs bubblewrap, which does not work here: {missing}")


@pytest.mark.parametrize("code_mode", [False, True], ids=["tool-calls", "code-mode"])
async def test_thirty_days_every_change_audited_within_bounds_world_whole(
    tmp_path: Path, code_mode: bool, caplog: pytest.LogCaptureFixture
) -> None:
    _needs_bubblewrap(code_mode)
    caplog.set_level(logging.INFO, "starharness.npc.residents")
    path = tmp_path / "world.db"
    async with (
        serving_director(tmp_path, code_mode=code_mode) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        frames = await tick_days(me, DAYS)
        assert frames[-1]["t"] == "welcome"
        assert frames[-1]["hud"]["day"] == DAYS + 1
        briefs = _requests_with_brief(stack)
        results = director_results(stack)
        steps = _director_calls(stack)
    audit = director_audit(path)

    # In code mode each tick is one program (one model step for every exchange), never a
    # direct action call; without it, the actions are called directly.
    assert len(steps) >= DAYS // 2  # most days change something
    said = [r.getMessage() for r in caplog.records if "code mode" in r.getMessage()]
    if code_mode:
        assert all(turn == ["run_code"] for turn in steps), steps
        assert said == ["resident director: code mode on (run_code may call "
                        "['set_price', 'restock', 'post_headline', 'spread_word'])"]  # fmt: skip
    else:
        assert all("run_code" not in turn for turn in steps), steps
        # Said once, with the fix: this runtime has no sandbox row.
        assert len(said) == 1 and "no sandbox row" in said[0], said

    # One turn a tick, each briefed on the day it acts on.
    read = [parse_brief(text) for text in briefs]
    assert [brief.day for brief in read if brief is not None] == list(range(2, DAYS + 2))
    # Every call its model made is one audit row, in order, and each committed.
    assert [(name, args, result["ok"]) for name, args, result in results] == [
        (row[2], json.loads(row[5]), bool(row[6])) for row in audit
    ]
    assert all(row[6] == 1 for row in audit), [row for row in audit if not row[6]]
    kinds = Counter(row[2] for row in audit)
    assert kinds[SET_PRICE] >= DAYS and kinds[POST_HEADLINE] >= DAYS and kinds[RESTOCK] >= 1
    assert len({row[1] for row in audit}) >= DAYS // 2

    # Within the declared bounds: price band and step, restock size and cap, headline quota.
    per_market: Counter[tuple[int, str, str, str]] = Counter()
    for (name, args, result), row in zip(results, audit, strict=True):
        day = row[1]
        if name == SET_PRICE:
            good = OMEGA_BOUNDS.goods[args["good_id"]]
            assert good.min_price <= args["price"] <= good.max_price
            assert abs(args["price"] - result["before"]) <= OMEGA_BOUNDS.price_step(
                result["before"]
            )
        elif name == RESTOCK:
            target = _world_rows(
                path,
                "SELECT target_stock FROM market WHERE location_id = "
                f"'{args['location_id']}' AND good_id = '{args['good_id']}'",
            )[0][0]
            assert args["units"] <= OMEGA_BOUNDS.max_restock(target)
            assert result["stock"] <= OMEGA_BOUNDS.stock_cap(target)
        else:
            assert len(args["headline"]) <= MAX_HEADLINE_CHARS
        key = args.get("good_id", "") if name != POST_HEADLINE else str(row[0])
        per_market[(day, name, args["location_id"], key)] += 1
    assert max(per_market.values()) == 1  # one change per good and place a day
    headlines_a_day = Counter(row[1] for row in audit if row[2] == POST_HEADLINE)
    assert max(headlines_a_day.values()) <= OMEGA_BOUNDS.headlines_per_day

    # Its headlines in the world are exactly the ones it posted, and players heard each.
    posted = [
        (row[1], json.loads(row[5])["location_id"], json.loads(row[5])["headline"])
        for row in audit
        if row[2] == POST_HEADLINE
    ]
    stored = _world_rows(
        path,
        f"SELECT day, location_id, headline FROM world_events WHERE kind = '{HEADLINE_KIND}' "
        "ORDER BY id",
    )
    assert [tuple(row) for row in stored] == posted
    heard = [(f["locationId"], f["headline"]) for f in frames if f["t"] == "world.event"]
    assert [(place, text) for _, place, text in posted] == [
        item for item in heard if item in {(p, t) for _, p, t in posted}
    ]

    # The world's invariants hold.
    check = AuditReader(path).check()
    assert check.ok, check
    assert _world_rows(path, "PRAGMA integrity_check") == [("ok",)]
    assert _world_rows(path, "PRAGMA foreign_key_check") == []
    with open_world(tmp_path / "fresh.db") as fresh, fresh.snapshot() as seed:
        seed_credits = sum(actor.credits for actor in [*seed.npcs(), seed.require_actor(PLAYER_ID)])
    assert _world_rows(path, "SELECT sum(credits) FROM actors") == [(seed_credits,)]
    rules = ClockRules()
    for price, stock, base in _world_rows(
        path,
        "SELECT m.price, m.stock, g.base_price FROM market m JOIN goods g ON g.id = m.good_id",
    ):
        assert base * rules.floor - 1 <= price <= base * rules.ceiling + 1
        assert stock >= 0


async def test_two_runs_from_the_same_seed_make_the_same_audit(tmp_path: Path) -> None:
    audits: list[list[tuple[Any, ...]]] = []
    markets: list[list[tuple[Any, ...]]] = []
    for run in ("a", "b"):
        where = tmp_path / run
        where.mkdir()
        async with (
            serving_director(where) as stack,
            Player(stack.running.ws_url, PLAYER_ID) as me,
        ):
            await me.hello()
            await tick_days(me, DAYS)
        audits.append(director_audit(where / "world.db"))
        markets.append(_world_rows(where / "world.db", "SELECT * FROM market ORDER BY 1, 2"))
    assert audits[0] and audits[0] == audits[1]
    assert markets[0] == markets[1]


def _costly_fuel(world: VoyageWorld) -> None:
    """Fuel at Omega far above its base, so the director steadies it on the first tick."""
    with world.transaction() as tx:
        tx.set_price(OMEGA, "fuel", 1_100)


async def test_a_player_sees_the_directors_price_and_headline(
    tmp_path: Path, world_place: WorldPlace
) -> None:
    async with (
        serving_director(tmp_path, prepare=_costly_fuel, place=world_place) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        frames = await tick_days(me, 1)
        changes = [
            row
            for row in director_audit(stack.world)
            if row[2] == SET_PRICE and json.loads(row[5])["location_id"] == OMEGA
            and json.loads(row[5])["good_id"] == "fuel"
        ]  # fmt: skip
        assert len(changes) == 1 and changes[0][6] == 1
        price = json.loads(changes[0][5])["price"]
        with stack.world.snapshot() as reader:
            assert reader.price(OMEGA, "fuel") == price
        headline = f"Guild traders steady fuel cells: the price eases to {price:,}."
        assert {"t": "world.event", "locationId": OMEGA, "headline": headline} in frames
        huds = [f for f in frames if f["t"] == "hud"]
        assert any(n["headline"] == headline for n in huds[-1]["data"]["news"])
        assert any(n["headline"] == headline for n in frames[-1]["hud"]["news"])

        # Its turn is a transcript of its own, kept and readable like an encounter's.
        store = stack.running.server.ctx.get(SESSIONS).store
        kept = [i for i in await store.list_sessions() if i.meta.get("kind") == RESIDENT_KIND]
        assert len(kept) == 1
        stored = await store.load(kept[0].id)
        assert stored is not None
        shown = render_transcript(stored)
        assert shown.startswith("resident 'director' after a tick of 1 day(s)")
        assert "set_price" in shown and headline in shown

        greeting = await me.open("e1", SMUGGLER)
        scene = json.dumps(stack.mock.requests[-1].body["messages"])
        assert re.search(rf"fuel cells \[fuel\] \d+ at {price:,}\b", scene), scene
        assert headline in scene
        assert f"fuel cells at {price:,}" in line(greeting)


def _scripted_director(request: ChatRequest) -> Step:
    """A model that asks for what the bounds forbid, then stops."""
    if request.messages[-1].role == "tool":
        return Success(text="done")
    brief = parse_brief(str(request.messages[-1].content))
    assert brief is not None
    fuel = next(m for m in brief.markets if (m.location_id, m.good_id) == (OMEGA, "fuel"))
    assert fuel.allowed is not None
    calls = [
        (SET_PRICE, {"location_id": OMEGA, "good_id": "fuel", "price": 99_999}),
        (SET_PRICE, {"location_id": OMEGA, "good_id": "fuel", "price": fuel.allowed[1] + 1}),
        (RESTOCK, {"location_id": OMEGA, "good_id": "fuel", "units": 5_000}),
        (SET_PRICE, {"location_id": OMEGA, "good_id": "tea", "price": 10}),
        (POST_HEADLINE, {"location_id": "atlantis", "headline": "Atlantis rises again."}),
    ]
    return ToolCalls(calls=[ScriptedCall(name=n, arguments=json.dumps(a)) for n, a in calls])


async def test_an_out_of_bounds_call_is_refused_and_nothing_commits(tmp_path: Path) -> None:
    async with (
        serving_director(tmp_path, responder=_scripted_director) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        frames = await tick_days(me, 1)
        results = director_results(stack)
    assert frames[-1]["hud"]["day"] == 2  # the tick itself went through
    reasons = [result.get("reason") for _, _, result in results]
    assert reasons == [
        "price_out_of_bounds",
        "price_step_too_large",
        "restock_out_of_bounds",
        "not_traded_here",
        "unknown_place",
    ]
    assert all(result["ok"] is False for _, _, result in results)
    hints = [result["hint"] for _, _, result in results]
    assert "today you may set" in hints[0] and "99,999" in hints[0]
    assert "ship at most" in hints[2]
    audit = director_audit(tmp_path / "world.db")
    assert [(row[2], row[6], row[7]) for row in audit] == [
        (name, 0, reason) for (name, _, _), reason in zip(results, reasons, strict=True)
    ]
    # Nothing it asked for committed: the world is what the clock alone made of it.
    with open_world(tmp_path / "twin.db") as twin:
        twin.tick(1)
    for table in ("market", "world_events", "cargo", "actors"):
        sql = f"SELECT * FROM {table} ORDER BY 1, 2"
        assert _world_rows(tmp_path / "world.db", sql) == _world_rows(tmp_path / "twin.db", sql)
    assert not [f for f in frames if f["t"] == "world.event" and "Atlantis" in f["headline"]]


async def test_an_unknown_resident_is_refused_at_start(tmp_path: Path) -> None:
    refused = r"no resident 'mayor' \(it has: 'director'\)"
    with pytest.raises(ResidentDefinitionError, match=refused):
        async with serving_director(tmp_path, residents=("mayor",)):
            pass


async def test_without_the_director_the_clock_alone_moves_the_world(tmp_path: Path) -> None:
    async with (
        serving_director(tmp_path, residents=()) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        await tick_days(me, 3)
        assert stack.mock.requests == []
    assert director_audit(tmp_path / "world.db") == []


def _greedy_director(request: ChatRequest) -> Step:
    """A model that changes one price twice and posts more headlines than a day allows."""
    if request.messages[-1].role == "tool":
        return Success(text="done")
    brief = parse_brief(str(request.messages[-1].content))
    assert brief is not None
    fuel = next(m for m in brief.markets if (m.location_id, m.good_id) == (OMEGA, "fuel"))
    assert fuel.allowed is not None
    low, high = fuel.allowed
    calls: list[tuple[str, dict[str, Any]]] = [
        (SET_PRICE, {"location_id": OMEGA, "good_id": "fuel", "price": high}),
        (SET_PRICE, {"location_id": OMEGA, "good_id": "fuel", "price": low}),
    ]
    calls += [
        (POST_HEADLINE, {"location_id": OMEGA, "headline": f"Fuel news, part {n}."})
        for n in range(OMEGA_BOUNDS.headlines_per_day + 1)
    ]
    return ToolCalls(calls=[ScriptedCall(name=n, arguments=json.dumps(a)) for n, a in calls])


async def test_one_change_a_day_per_market_and_a_headline_quota(tmp_path: Path) -> None:
    async with (
        serving_director(tmp_path, responder=_greedy_director) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        frames = await tick_days(me, 1)
        results = director_results(stack)
        with stack.world.snapshot() as reader:
            price = reader.price(OMEGA, "fuel")
    verdicts = [(name, result["ok"], result.get("reason")) for name, _, result in results]
    most = OMEGA_BOUNDS.headlines_per_day
    assert verdicts == [
        (SET_PRICE, True, None),
        (SET_PRICE, False, "already_changed_today"),
        *[(POST_HEADLINE, True, None)] * most,
        (POST_HEADLINE, False, "headline_quota"),
    ]
    assert price == results[0][1]["price"]
    heard = [f["headline"] for f in frames if f["t"] == "world.event"]
    heard = [headline for headline in heard if headline.startswith("Fuel news")]
    assert heard == [f"Fuel news, part {n}." for n in range(most)]


async def test_a_failing_director_leaves_the_tick_done(tmp_path: Path) -> None:
    async with (
        serving_director(tmp_path, responder=lambda request: ServerFault()) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        frames = await tick_days(me, 2)
        assert len(stack.mock.requests) == 2  # one failed director turn a tick
    assert frames[-1]["hud"]["day"] == 3
    assert [f["t"] for f in frames].count("hud") == 2  # the clock's, once a tick
    assert director_audit(tmp_path / "world.db") == []


def _one_call_a_step(request: ChatRequest) -> Step:
    """A model that makes one call a step, for more steps than an NPC's turn allows."""
    brief = parse_brief(_first_user(request))
    assert brief is not None
    done = sum(1 for message in request.messages if message.role == "tool")
    movable = [m for m in brief.markets if m.allowed is not None and m.allowed[0] != m.price]
    if done >= 8:
        return Success(text="done")
    market = movable[done]
    assert market.allowed is not None
    arguments = {"location_id": market.location_id, "good_id": market.good_id}
    call = ScriptedCall(
        name=SET_PRICE, arguments=json.dumps(arguments | {"price": market.allowed[0]})
    )
    return ToolCalls(calls=[call])


def _first_user(request: ChatRequest) -> str:
    return next(str(m.content) for m in request.messages if m.role == "user")


async def test_a_model_making_one_call_a_step_finishes_its_turn(tmp_path: Path) -> None:
    assert ServerSettings().turn.max_steps < 8
    async with (
        serving_director(tmp_path, responder=_one_call_a_step) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        await tick_days(me, 1)
        assert len(stack.mock.requests) == 9
    audit = director_audit(tmp_path / "world.db")
    assert [(row[2], row[6]) for row in audit] == [(SET_PRICE, 1)] * 8


@pytest.mark.parametrize(
    ("actions", "refused"),
    [
        (
            ("set_price",),
            r": an action must come from define_game_action \(or be a tool\), got 'set_price'",
        ),
        ((), " has no actions"),
    ],
)
def test_a_resident_whose_actions_are_not_actions_is_refused(
    tmp_path: Path, actions: tuple[object, ...], refused: str
) -> None:
    resident = dataclasses.replace(DIRECTOR, actions=actions)
    with (
        open_world(tmp_path / "world.db") as world,
        pytest.raises(ResidentDefinitionError, match=f"resident 'director'{refused}"),
    ):
        ResidentRunner(Context(), resident, world, AgentOptions(), calls=WorldCalls(inline=True))
