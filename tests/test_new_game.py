"""`star-harness new-game NAME` makes a game that its own tests pass and `play --game` serves.

Everything runs as real processes from a fresh folder, the way a newcomer would type it: the
scaffold, the commands it prints run as printed (`uv run ...`, from a shell without the
project's environment), `play --game ./NAME` (offline brain, no key), an encounter over a real
WebSocket, and every frame checked against `star-harness schema --game` for that game. The
scaffold's brain answers any words at all through the real server (a hypothesis test).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from stack_support import start_runtime
from starharness.mockllm import MockLlmServer
from starharness.npc import Game, ServerSettings, load_game, start_server
from starharness.npc.client import FrameConnection, connect
from starharness.scaffold import new_game

NAME = "tea_stall"
START_S = 60.0
PROJECT = Path(__file__).resolve().parents[1]
"""The star-harness project, where `uv run` finds the environment the printed commands use."""


def _cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starharness.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    clean["STAR_HARNESS_HOME"] = str(tmp_path / "home")
    return clean


@pytest.fixture
def made(tmp_path: Path, env: dict[str, str]) -> Path:
    result = _cli("new-game", NAME, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert f"star-harness play --game ./{NAME}:GAME" in result.stdout
    return tmp_path / NAME


@pytest.fixture
def playing(made: Path, env: dict[str, str]) -> Iterator[dict[str, Any]]:
    ready = made.parent / "ready.json"
    command = [sys.executable, "-m", "starharness.cli", "play", "--game", f"./{NAME}:GAME"]
    proc = subprocess.Popen(
        [*command, "--port", "0", "--ready-file", str(ready)],
        cwd=made.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield _ready(proc, ready, START_S)
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0, out
        assert "Traceback" not in out


def _ready(play: subprocess.Popen[str], ready: Path, within_s: float) -> dict[str, Any]:
    """What `play` wrote to its ready file, once it has (failing if it exits or takes longer)."""
    deadline = time.monotonic() + within_s
    while not ready.exists():
        if play.poll() is not None:
            pytest.fail(f"play exited: {play.stdout.read() if play.stdout else ''}")
        if time.monotonic() > deadline:
            pytest.fail("play did not become ready")
        time.sleep(0.05)
    return json.loads(ready.read_text())


def test_the_scaffold_passes_its_own_tests(made: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", NAME, "-q", "-p", "no:cacheprovider"],
        cwd=made.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_a_second_game_of_the_same_name_is_refused(made: Path, env: dict[str, str]) -> None:
    result = _cli("new-game", NAME, cwd=made.parent, env=env)
    assert result.returncode == 2
    assert "already exists" in result.stderr
    bad = _cli("new-game", "Tea-Stall", cwd=made.parent, env=env)
    assert bad.returncode == 2 and "not a usable package name" in bad.stderr


def test_a_python_keyword_is_refused_as_a_keyword(tmp_path: Path, env: dict[str, str]) -> None:
    result = _cli("new-game", "class", cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert "'class' is not a usable package name: it is a Python keyword" in result.stderr
    assert "lower case" not in result.stderr
    upper = _cli("new-game", "TeaStall", cwd=tmp_path, env=env)
    assert upper.returncode == 2 and "lower case: try teastall" in upper.stderr
    assert not (tmp_path / "class").exists() and not (tmp_path / "TeaStall").exists()


def test_a_name_too_long_for_a_folder_is_refused_plainly(
    tmp_path: Path, env: dict[str, str]
) -> None:
    result = _cli("new-game", "x" * 300, cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert "it has 300 characters; at most 64 are allowed" in result.stderr
    assert "x" * 65 not in result.stderr, "the name is shortened, not echoed whole"
    assert "Traceback" not in result.stderr and not list(tmp_path.iterdir())


def _fresh_shell(env: dict[str, str]) -> dict[str, str]:
    """A new terminal in the project: uv on PATH, no virtual environment active."""
    shell = {k: v for k, v in env.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT")}
    venv_bin = str(Path(sys.executable).parent)
    shell["PATH"] = os.pathsep.join(
        part for part in shell.get("PATH", "").split(os.pathsep) if part and part != venv_bin
    )
    # The shell stands in the project; the game is made in a folder of the test's own.
    shell["UV_PROJECT"] = str(PROJECT)
    return shell


def _printed_commands(stdout: str) -> dict[str, list[str]]:
    """`play it`, `test it`, `its schema` -> the command printed after each."""
    found: dict[str, list[str]] = {}
    for line in stdout.splitlines():
        for what in ("play it", "test it", "its schema"):
            if line.strip().startswith(what):
                found[what] = shlex.split(line.strip().removeprefix(what))
    return found


@pytest.mark.slow
def test_the_printed_next_steps_work_as_printed(tmp_path: Path, env: dict[str, str]) -> None:
    uv = shutil.which("uv")
    assert uv is not None, "uv is how the README runs everything"
    shell = _fresh_shell(env)
    made = subprocess.run(
        ["uv", "run", "star-harness", "new-game", NAME],
        cwd=tmp_path, env=shell, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    commands = _printed_commands(made.stdout)
    assert set(commands) == {"play it", "test it", "its schema"}, made.stdout
    assert all(command[:2] == ["uv", "run"] for command in commands.values()), commands

    tests = subprocess.run(
        [*commands["test it"], "-p", "no:cacheprovider"],
        cwd=tmp_path, env=shell, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout and "failed" not in tests.stdout

    schema = subprocess.run(
        commands["its schema"], cwd=tmp_path, env=shell, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert schema.returncode == 0, schema.stderr
    assert "Coins" in schema.stdout or "coins" in schema.stdout

    ready = tmp_path / "ready.json"
    play = subprocess.Popen(
        [*commands["play it"], "--port", "0", "--ready-file", str(ready)],
        cwd=tmp_path, env=shell, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        welcome = asyncio.run(_welcome(_ready(play, ready, 300)["ws"]))
        assert [npc["name"] for npc in welcome["npcs"]] == ["Mira"]
    finally:
        play.send_signal(signal.SIGINT)
        out, _ = play.communicate(timeout=60)
    assert play.returncode == 0, out


async def _welcome(url: str) -> dict[str, Any]:
    async with connect(url, open_timeout=10) as ws:
        await ws.hello("player-1")
        return json.loads(await ws.receive_text(30))


def test_game_without_an_attribute_means_its_game(made: Path, env: dict[str, str]) -> None:
    named = _cli("schema", "--game", f"./{NAME}:GAME", cwd=made.parent, env=env)
    bare = _cli("schema", "--game", f"./{NAME}", cwd=made.parent, env=env)
    assert named.returncode == 0, named.stderr
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout == named.stdout
    # Two games and no GAME: the error names the rule and the games there are.
    two = made.parent / "two_games.py"
    two.write_text(f"from {NAME} import GAME as _G\nTEA = _G\nCOFFEE = _G\n", encoding="utf-8")
    ambiguous = _cli("schema", "--game", "./two_games.py", cwd=made.parent, env=env)
    assert ambiguous.returncode != 0
    assert "has no attribute 'GAME'" in ambiguous.stderr
    assert "(a spec without ':attribute' means :GAME)" in ambiguous.stderr
    assert "it holds COFFEE, TEA" in ambiguous.stderr
    assert "--game ./two_games.py:COFFEE" in ambiguous.stderr


async def _turn(ws: FrameConnection, seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while True:
        frame = json.loads(await ws.receive_text(30))
        frames.append(frame)
        seen.append(frame)
        if frame["t"] in ("encounter.idle", "error"):
            return frames


def test_play_serves_the_new_game_over_a_real_websocket(
    playing: dict[str, Any], made: Path, env: dict[str, str]
) -> None:
    schema = _cli("schema", "--game", f"./{NAME}:GAME", cwd=made.parent, env=env)
    assert schema.returncode == 0, schema.stderr
    validator = Draft202012Validator(json.loads(schema.stdout))
    seen: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []
    asyncio.run(_buy_tea_and_leave(playing["ws"], sent, seen))
    for frame in sent + seen:
        errors = [error.message for error in validator.iter_errors(frame)]
        assert not errors, f"{frame}: {errors[:3]}"


async def _buy_tea_and_leave(
    url: str, sent: list[dict[str, Any]], seen: list[dict[str, Any]]
) -> None:
    """Greet Mira, buy three cups, be refused ten, leave, tick a day: every frame sent and
    seen is kept, for the schema check."""
    async with connect(url, open_timeout=10) as ws:

        async def send(frame: dict[str, Any]) -> None:
            sent.append(frame)
            await ws.send_text(json.dumps(frame))

        await send({"t": "hello", "playerId": "player-1"})
        welcome = json.loads(await ws.receive_text(30))
        seen.append(welcome)
        assert welcome["hud"]["coins"] == 20
        assert [npc["name"] for npc in welcome["npcs"]] == ["Mira"]

        await send({"t": "encounter.open", "id": "e1", "npcId": "npc-mira", "playerId": "player-1"})
        greeting = await _turn(ws, seen)
        assert greeting[0]["t"] == "encounter.opened"
        options = next(f["items"] for f in greeting if f["t"] == "options")
        three = next(item for item in options if item["id"] == "tea:3")

        await send({"t": "encounter.say", "id": "e1", "optionId": three["id"]})
        offered = await _turn(ws, seen)
        # Selling takes the customer's coins: Mira offers, nothing moves until they accept.
        assert [f for f in offered if f["t"] == "action"] == []
        offer = next(
            item for f in offered if f["t"] == "options" for item in f["items"] if "offer" in item
        )
        assert (offer["label"], offer["offer"]) == (
            "3 cups of tea",
            {"action": "sell_tea", "cost": "9 coins"},
        )
        await send({"t": "encounter.say", "id": "e1", "optionId": offer["id"]})
        bought = await _turn(ws, seen)
        assert [(f["name"], f["ok"]) for f in bought if f["t"] == "action"] == [("sell_tea", True)]
        assert [f["data"]["coins"] for f in bought if f["t"] == "hud"] == [11]

        await send({"t": "encounter.say", "id": "e1", "text": "10 cups please"})
        refused = await _turn(ws, seen)
        card = next(f for f in refused if f["t"] == "action")
        assert card["ok"] is False and card["summary"] == "Only 9 cups are left in the pot."

        await send({"t": "encounter.say", "id": "e1", "optionId": "bye"})
        farewell = await _turn(ws, seen)
        assert farewell[-1]["t"] == "encounter.idle"
        await send({"t": "encounter.close", "id": "e1"})
        await send({"t": "world.tick", "days": 1})
        while seen[-1]["t"] != "hud":
            seen.append(json.loads(await ws.receive_text(30)))


# -- the scaffold's brain answers any words, through the real server ---------------------------

BRAIN_GAME = "brain_stall"
"""The scaffold made under another name, imported into this process (no clash with NAME)."""
_ids = count()


class _Served:
    """The scaffolded game served on a loop in a thread: the mock LLM playing its offline brain
    over real HTTP (one attempt: a brain that raises is an `llm_unavailable` at once), the
    runtime, the NPC server; tests speak to it over a real WebSocket."""

    def __init__(self, game: Game[Any], world: Path) -> None:
        self._game = game
        self._world = world
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._stack = AsyncExitStack()
        self.ws = ""

    def __enter__(self) -> _Served:
        self._thread.start()
        self.ws = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(START_S)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stack.aclose(), self._loop).result(START_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_S)
        self._loop.close()

    async def _start(self) -> str:
        respond = self._game.offline_responder
        mock = await self._stack.enter_async_context(MockLlmServer(responder=respond))
        ctx = await start_runtime(mock.base_url, max_attempts=1, first_byte_s=30.0)
        self._stack.push_async_callback(ctx.dispose)
        running = await start_server(ctx, self._game, ServerSettings(port=0, world=self._world))
        self._stack.push_async_callback(running.stop)
        return running.ws_url


@pytest.fixture(scope="module")
def stall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Served]:
    where = tmp_path_factory.mktemp("brain")
    made = new_game(BRAIN_GAME, where)
    with _Served(load_game(f"{made}:GAME"), where / "world.db") as served:
        yield served


async def _turn_frames(ws: FrameConnection) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while not frames or frames[-1]["t"] != "encounter.idle":
        frames.append(json.loads(await ws.receive_text(30)))
    return frames


def _talk(served: _Served, *words: str) -> list[list[dict[str, Any]]]:
    """Walk up to Mira, say each of `words` in turn; the frames of the greeting and each turn.
    An offer in a turn's options is accepted before the next words (selling is two steps)."""
    return asyncio.run(_talk_over(served.ws, f"e{next(_ids)}", words))


async def _talk_over(
    url: str, encounter: str, words: tuple[str, ...]
) -> list[list[dict[str, Any]]]:
    turns: list[list[dict[str, Any]]] = []
    async with connect(url, open_timeout=10) as ws:
        await ws.hello("player-1")
        assert json.loads(await ws.receive_text(30))["t"] == "welcome"
        await ws.open_encounter(encounter, "npc-mira", "player-1")
        turns.append(await _turn_frames(ws))
        for text in words:
            await ws.say(encounter, text)
            turns.append(await _turn_frames(ws))
            offers = _offers(turns[-1])
            if offers:
                await ws.choose(encounter, offers[0]["id"])
                turns.append(await _turn_frames(ws))
        await ws.close_encounter(encounter)
    return turns


def _offers(turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [i for f in turn if f["t"] == "options" for i in f["items"] if "offer" in i]


def _spoke_without_error(turn: list[dict[str, Any]]) -> None:
    assert [f for f in turn if f["t"] == "error"] == [], turn
    assert any(f["t"] == "say.end" for f in turn), f"Mira said nothing: {turn}"


def test_buy_2_tea_offers_2_cups_and_100_cups_gets_an_answer(stall: _Served) -> None:
    greeting, asked, bought = _talk(stall, "buy 2 tea")
    offer = _offers(asked)[0]
    assert offer["label"] == "2 cups of tea"
    assert [(f["name"], f["ok"]) for f in bought if f["t"] == "action"] == [("sell_tea", True)]
    for turn in (greeting, *_talk(stall, "I'll take 100 cups of tea")):
        _spoke_without_error(turn)


_ORDERS = st.builds(
    "{} {} {}".format,
    st.sampled_from(["I'll take", "buy", "give me", "", "can I have"]),
    st.one_of(
        st.integers(min_value=-5, max_value=10**40).map(str),
        st.sampled_from(["a", "an", "one", "two", "ten", "zero", "٣", "a dozen"]),
    ),
    st.sampled_from(["cups of tea", "tea", "cup", "mugs", "teas please", "coins", "tea:"]),
)
_WORDS = st.one_of(
    _ORDERS,
    st.text(min_size=1, max_size=300).filter(str.strip),
    st.sampled_from(["tea:3", "tea:99999999999", "(walks up)", "I accept: 3 cups", "bye"]),
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(words=st.lists(_WORDS, min_size=1, max_size=3))
def test_the_scaffold_brain_answers_any_words(stall: _Served, words: list[str]) -> None:
    for turn in _talk(stall, *words):
        _spoke_without_error(turn)
