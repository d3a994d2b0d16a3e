"""Transcripts: kept in the session store with retention, rebuilt exactly, printed by `inspect`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer
from npc_support import serving
from tinygame import GAME
from tinygame.brain import respond
from typer.testing import CliRunner, Result

from starharness.cli import inspect_cmd
from starharness.npc import ServerSettings, TranscriptSettings, list_transcripts
from starharness.runtime.llm import OPENAI_COMPATIBLE, ToolSchema
from starharness.runtime.llm.wire import to_wire_messages, to_wire_tools
from starharness.runtime.session import SessionsConfig, SqliteStore, rebuild_requests
from store_support import StorePlace


def _sqlite(path: Path) -> SessionsConfig:
    return SessionsConfig(store="sqlite", path=path, max_write_delay_ms=0)


async def _talk(
    tmp_path: Path,
    store: Path,
    keep: int | None,
    encounters: int = 1,
    sessions: SessionsConfig | None = None,
) -> list[str]:
    settings = ServerSettings(port=0, transcripts=TranscriptSettings(keep=keep))
    conversations: list[str] = []
    config = sessions if sessions is not None else _sqlite(store)
    async with (
        serving(GAME, tmp_path, settings, responder=respond, sessions=config) as stack,
        stack.client() as client,
    ):
        for number in range(encounters):
            await client.open("e1", "n-baker", "p1")
            conversations.append(stack.running.server.encounters[0].session_id)
            await client.say("e1", f"Hello {number}")
            await client.say("e1", "buy 1")
            await client.send({"t": "encounter.close", "id": "e1"})
            await client.send({"t": "hello", "playerId": "p1"})
            await client.until(lambda f: f["t"] == "welcome")
        recorded = {c: [r.body for r in stack.mock.requests_for(c)] for c in conversations}
    (store.parent / "recorded.json").write_text(json.dumps(recorded), encoding="utf-8")
    return conversations


async def test_every_request_is_rebuilt_from_the_log_exactly_as_sent(tmp_path: Path) -> None:
    store_path = tmp_path / "sessions.db"
    (session_id,) = await _talk(tmp_path, store_path, keep=None)
    recorded = json.loads((tmp_path / "recorded.json").read_text(encoding="utf-8"))[session_id]
    store = await SqliteStore.open(store_path)
    try:
        stored = await store.load(session_id)
    finally:
        await store.aclose()
    assert stored is not None
    rebuilt = rebuild_requests(stored.events)
    assert len(rebuilt) == len(recorded) == 3
    for (header, messages), body in zip(rebuilt, recorded, strict=True):
        assert header is not None
        wire = to_wire_messages(header["system"], messages, profile=OPENAI_COMPATIBLE)
        assert json.dumps(wire) == json.dumps(body["messages"])
        tools = [ToolSchema(t["name"], t["description"], t["parameters"]) for t in header["tools"]]
        assert to_wire_tools(tools, profile=OPENAI_COMPATIBLE) == body["tools"]


async def test_inspect_lists_and_prints_transcripts(
    tmp_path: Path, store_place: StorePlace
) -> None:
    store_path = tmp_path / "s.db"
    (session_id,) = await _talk(
        tmp_path, store_path, keep=None, sessions=store_place.sessions_config()
    )
    where = store_place.cli_args()
    app = typer.Typer()
    inspect_cmd.register(app)
    app.command("unused")(lambda: None)  # keeps `inspect` a subcommand
    runner = CliRunner()

    def run(*args: str) -> Result:
        # In a thread: the command runs its own event loop.
        return runner.invoke(app, ["inspect", *args])

    listing = await asyncio.to_thread(run, *where)
    assert listing.exit_code == 0, listing.output
    assert session_id in listing.output and "Bea (n-baker) with p1" in listing.output

    printed = await asyncio.to_thread(run, "e1", *where)
    assert printed.exit_code == 0, printed.output
    text = printed.output
    assert text.count("--- request ") == 3
    assert GAME.protocol_text in text and "You are Bea, a cheerful baker." in text
    assert '"role":"user","content":"Hello 0"' in text
    assert "tool sell_bread -> ok" in text and "=== turn 2 ended: completed" in text
    # The turn plan and why it was chosen are part of the transcript.
    assert "turn plan: native (openai-compatible streams an open tool choice" in text

    missing = await asyncio.to_thread(run, "nope", *where)
    assert missing.exit_code != 0 and "no transcript 'nope'" in str(missing.exception)
    absent = await asyncio.to_thread(run, "--sessions", str(tmp_path / "none.db"))
    assert absent.exit_code != 0 and "no session store" in str(absent.exception)


async def test_retention_keeps_only_the_newest_transcripts(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    ids = await _talk(kept, kept / "sessions.db", keep=1, encounters=3)
    store = await SqliteStore.open(kept / "sessions.db")
    try:
        assert [info.session_id for info in await list_transcripts(store)] == [ids[-1]]
    finally:
        await store.aclose()

    none = tmp_path / "none"
    none.mkdir()
    await _talk(none, none / "sessions.db", keep=0, encounters=2)
    store = await SqliteStore.open(none / "sessions.db")
    try:
        assert await list_transcripts(store) == []
    finally:
        await store.aclose()
