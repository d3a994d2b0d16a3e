"""The director served for real: the mock LLM over HTTP, the runtime, the NPC server with the
director resident on, and helpers that read what it did from the world file and the mock."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from voyage_e2e_support import WAIT_S, Player, Stack

from stack_support import start_runtime
from starharness.mockllm import MockLlmServer, Responder
from starharness.npc import ServerSettings, start_server
from starharness.runtime.session import SessionsConfig
from starharness.voyage import GAME, VoyageWorld, open_world
from starharness.voyage.content import PLAYER_ID
from starharness.voyage.director import DIRECTOR_NAME
from world_support import WorldPlace

AuditRow = tuple[Any, ...]

SANDBOX_ROW: dict[str, Any] = {
    "id": "sandbox",
    "plugin": "starharness.runtime.sandbox:SandboxPlugin",
    "before": "agents",
    "config": {"tools": False, "guidance": False},
}
"""The row `play` and `serve` have: the sandbox for code mode, no shell for anyone."""


@asynccontextmanager
async def serving_director(
    tmp_path: Path,
    *,
    responder: Responder | None = None,
    residents: Sequence[str] = (DIRECTOR_NAME,),
    prepare: Callable[[VoyageWorld], None] | None = None,
    name: str = "world.db",
    code_mode: bool = False,
    place: WorldPlace | None = None,
    sessions: SessionsConfig | None = None,
) -> AsyncIterator[Stack]:
    """Omega station with the director on (unless `residents` says otherwise).

    `prepare` edits the fresh world before the server opens it; `responder` plays the model
    (default: the game's offline brain, which plays the director and the NPCs). `code_mode`
    adds the game profiles' sandbox row, so the director gets run_code. `place` puts the world
    in PostgreSQL instead of `tmp_path / name`; `sessions` keeps the logs somewhere other
    than memory.
    """
    place = place if place is not None and place.target is not None else None
    path = tmp_path / name
    if prepare is not None:
        with place.open() if place is not None else open_world(path) as world:
            prepare(world)
    if place is not None and place.target is not None:
        target = place.target
        settings = ServerSettings(
            port=0,
            world=target.url,
            world_password_env=target.password_env,
            residents=list(residents),
        )
    else:
        settings = ServerSettings(port=0, world=path, residents=list(residents))
    async with MockLlmServer(responder=responder or GAME.offline_responder) as mock:
        rows = [SANDBOX_ROW] if code_mode else []
        ctx = await start_runtime(
            mock.base_url, max_attempts=1, first_byte_s=WAIT_S, rows=rows, sessions=sessions
        )
        try:
            running = await start_server(ctx, GAME, settings)
            try:
                yield Stack(mock, running)
            finally:
                await running.stop()
        finally:
            await ctx.dispose()


async def tick_days(me: Player, days: int) -> list[dict[str, Any]]:
    """Tick one day at a time, then wait until the server handled every tick (frames of one
    connection are handled in order, so the `welcome` answering a later hello comes last)."""
    for _ in range(days):
        await me.send({"t": "world.tick", "days": 1})
    await me.send({"t": "hello", "playerId": PLAYER_ID})
    return await me.until(lambda f: f["t"] in ("welcome", "error"))


def director_audit(source: Path | VoyageWorld) -> list[AuditRow]:
    """The director's audit rows, oldest first, without the wall-clock time; from a world file,
    or through an open world (either store)."""
    if isinstance(source, VoyageWorld):
        with source.snapshot() as reader:
            entries = reader.audit_log(limit=100_000)
        return [
            (e.id, e.day, e.action, e.actor_id, e.target_id,
             json.dumps(e.arguments, sort_keys=True), int(e.ok), e.reason, e.summary)
            for e in reversed(entries)
            if e.actor_id == DIRECTOR_NAME
        ]  # fmt: skip
    with sqlite3.connect(source) as conn:
        return conn.execute(
            "SELECT id, day, action, actor_id, target_id, args, ok, reason, summary FROM audit "
            "WHERE actor_id = ? ORDER BY id",
            (DIRECTOR_NAME,),
        ).fetchall()


def director_results(stack: Stack) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Every call the director's model made, with the result it read: (name, args, result)."""
    seen: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for request in stack.mock.requests:
        if request.body.get("tools") is None:
            continue
        names = {tool["function"]["name"] for tool in request.body["tools"]}
        if not {"set_price", "post_headline"} <= names:
            continue
        messages: list[dict[str, Any]] = request.body["messages"]
        if messages[-1]["role"] != "tool":
            continue
        calls = {
            call["id"]: call["function"]
            for message in messages
            if message["role"] == "assistant"
            for call in message.get("tool_calls") or ()
        }
        for message in messages:
            if message["role"] != "tool":
                continue
            function = calls[message["tool_call_id"]]
            if function["name"] == "run_code":
                seen.extend(program_results(message["content"]))
                continue
            seen.append(
                (
                    function["name"],
                    json.loads(function["arguments"]),
                    json.loads(message["content"]),
                )
            )
    return seen


def program_results(content: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The calls a tick program printed (one JSON line each), from run_code's result."""
    ran = json.loads(content)
    assert ran["status"] == "ok", ran
    lines = [json.loads(line) for line in ran["output"].splitlines()]
    # What the program printed is what the host ran, call for call.
    assert [(c["tool"], c["args"]) for c in ran["calls"]] == [(x["tool"], x["args"]) for x in lines]
    return [(line["tool"], line["args"], line["result"]) for line in lines]
