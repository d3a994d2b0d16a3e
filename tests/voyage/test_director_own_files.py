"""A resident's program cannot read the server's own files: the world and the session store at
paths outside the harness home (hidden already) and outside /tmp (a fresh tmpfs in bubblewrap),
through the real server, real bubblewrap and a scripted director whose run_code opens them."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from director_support import serving_director, tick_days
from voyage_e2e_support import Player

from starharness.mockllm import ChatRequest, ScriptedCall, Step, Success, ToolCalls
from starharness.runtime.paths import star_harness_home
from starharness.runtime.sandbox import BubblewrapProvider
from starharness.runtime.session import SessionsConfig
from starharness.voyage.content import PLAYER_ID

_PROGRAM = """
for path in {paths!r}:
    try:
        with open(path, "rb") as file:
            print(path, "read", file.read(16))
    except OSError as error:
        print(path, "refused", type(error).__name__)
"""


def _tries_to_read(paths: list[str]) -> Callable[[ChatRequest], Step]:
    def respond(request: ChatRequest) -> Step:
        if request.messages[-1].role == "tool":
            return Success(text="done")
        program = _PROGRAM.format(paths=paths)
        call = ScriptedCall(name="run_code", arguments=json.dumps({"program": program}))
        return ToolCalls(calls=[call])

    return respond


def _run_code_output(bodies: list[dict[str, object]]) -> str:
    for body in bodies:
        messages = body["messages"]
        assert isinstance(messages, list)
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "tool":
                return str(message.get("content"))
    raise AssertionError("the director's run_code never returned")


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder a confined program could read: not /tmp, the harness home or the project."""
    base = Path(tempfile.mkdtemp(prefix="star-harness-test-", dir="/var/tmp"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


async def test_a_residents_program_cannot_read_the_world_or_the_session_store(
    outside: Path,
) -> None:
    missing = BubblewrapProvider().probe()
    if missing is not None and os.environ.get("CI") != "true":
        pytest.skip(f"code mode needs bubblewrap, which does not work here: {missing}")
    world, store = outside / "world.db", outside / "sessions.db"
    for path in (world, store):
        assert not path.is_relative_to(star_harness_home()) and not path.is_relative_to(Path.cwd())
    paths = [str(world), f"{world}-wal", str(store)]
    sessions = SessionsConfig(store="sqlite", path=store, max_write_delay_ms=0)
    async with (
        serving_director(
            outside, responder=_tries_to_read(paths), code_mode=True, sessions=sessions
        ) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        await tick_days(me, 1)
        bodies = [request.body for request in stack.mock.requests]
    assert world.stat().st_size > 0 and store.stat().st_size > 0

    printed = json.loads(_run_code_output(bodies))["output"].splitlines()
    # The program ran and tried each; each was refused or read as empty, never its content.
    assert [line.split(" ", 1)[0] for line in printed] == paths, printed
    assert all(re.fullmatch(r"\S+ (refused \w+|read b'')", line) for line in printed), printed
