"""`inspect` finds the director's turns: listed next to encounters, and printed by its name.

The real server with the director on, the offline brain behind the mock LLM over HTTP, a
WebSocket player who ticks the clock and meets an NPC, an SQLite session store on disk; then
the `inspect` command reads that file.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import typer
from director_support import serving_director, tick_days
from typer.testing import CliRunner, Result
from voyage_e2e_support import Player, line

from starharness.cli import inspect_cmd
from starharness.runtime.session import SessionsConfig
from starharness.voyage.content import PLAYER_ID, SMUGGLER

_RESIDENT_LINE = re.compile(r"^(\S+)  \S+ \S+Z  resident 'director' after a tick of 1 day\(s\)$")


def _inspect(*args: str) -> Result:
    app = typer.Typer()
    inspect_cmd.register(app)
    app.command("unused")(lambda: None)  # keeps `inspect` a subcommand
    return CliRunner().invoke(app, ["inspect", *args])


async def test_inspect_lists_the_directors_turns_and_prints_the_newest_by_name(
    tmp_path: Path,
) -> None:
    store = tmp_path / "sessions.db"
    sessions = SessionsConfig(store="sqlite", path=store, max_write_delay_ms=0)
    async with (
        serving_director(tmp_path, sessions=sessions) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        await tick_days(me, 2)
        assert line(await me.open("e1", SMUGGLER))
        await me.close("e1")

    # In a thread: the command runs its own event loop.
    listing = await asyncio.to_thread(_inspect, "--sessions", str(store))
    assert listing.exit_code == 0, listing.output
    lines = listing.output.splitlines()
    residents = [m.group(1) for m in map(_RESIDENT_LINE.match, lines) if m]
    assert len(residents) == 2, listing.output
    encounters = [row for row in lines if row.endswith("encounter 'e1'")]
    assert len(encounters) == 1 and f"({SMUGGLER}) with {PLAYER_ID}" in encounters[0]

    # By name: the newest turn (the listing is most recently active first).
    newest = await asyncio.to_thread(_inspect, "director", "--sessions", str(store))
    assert newest.exit_code == 0, newest.output
    first = newest.output.splitlines()[0]
    assert first == f"resident 'director' after a tick of 1 day(s), session {residents[0]}"
    assert "--- request " in newest.output and "set_price" in newest.output

    # The older turn by its session id; the encounter by its id, as before.
    older = await asyncio.to_thread(_inspect, residents[1], "--sessions", str(store))
    assert older.exit_code == 0 and older.output.splitlines()[0].endswith(residents[1])
    encounter = await asyncio.to_thread(_inspect, "e1", "--sessions", str(store))
    assert encounter.exit_code == 0 and encounter.output.startswith("encounter 'e1': ")

    typo = await asyncio.to_thread(_inspect, "directr", "--sessions", str(store))
    assert typo.exit_code != 0 and "no transcript 'directr'" in str(typo.exception)
