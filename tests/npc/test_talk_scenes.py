"""`star-harness talk` in a scene: `/all` walks up to Karsk and Brandt at once, every line is
printed under its speaker's name (from `speakerId`), and `@name words` speaks to one of them;
with two players at the bar, `/all` seats both in one scene and each hears the other under
their name. The real server with the offline brain behind the mock LLM over HTTP; the clients
in this process, their input piped."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from npc_support import eventually, serving
from rich.console import Console

from starharness.npc import ServerSettings
from starharness.npc.client.terminal import TalkSettings, run_talk
from starharness.npc.client.terminal.commands import Invalid, SayTo, parse_command
from starharness.npc.identity import mint_player_token
from starharness.npc.server.settings import IdentitySettings
from starharness.voyage import GAME, PLAYER_ID, open_world
from starharness.voyage.content import OMEGA, OMEGA_STATION, ActorSeed

SECRET_ENV = "STAR_HARNESS_TEST_TALK_SCENE_SECRET"
SECRET = "a-player-token-secret-of-forty-characters"
BIRCH = "player-birch"


def _console(out: io.StringIO) -> Console:
    return Console(file=out, width=200, highlight=False, color_system=None)


async def _talk(url: str, lines: list[str]) -> str:
    async def piped() -> AsyncIterator[str]:
        for line in lines:
            yield line

    out = io.StringIO()
    settings = TalkSettings(url=url, player_id=PLAYER_ID, echo_input=True)
    assert await run_talk(settings, piped(), _console(out)) == 0
    return out.getvalue()


def _answers(text: str) -> list[str]:
    """What followed each echoed input line, up to the next one."""
    return [part.split("\n> ", 1)[0] for part in text.split("\n> ")[1:]]


async def test_talk_names_each_speaker_of_a_scene_and_speaks_to_one_by_name(
    tmp_path: Path,
) -> None:
    lines = [
        "/all",
        "@Brandt what are you selling today?",
        "@karsk what do you have for sale?",
        "Karsk, Brandt: what is the news?",
        "@Vex hello?",
    ]
    async with serving(GAME, tmp_path, responder=GAME.offline_responder) as stack:
        text = await _talk(stack.ws_url, lines)
    opened, to_brandt, to_karsk, both, nobody = _answers(text)[:5]
    assert "Ilse Brandt (attitude 10)" in opened and "Jonah Karsk (attitude 0)" in opened
    # The greeting is the first NPC's; every line starts with its speaker's name.
    greeter = (
        "Ilse Brandt: "
        if opened.index("Ilse Brandt") < opened.index("Jonah")
        else ("Jonah Karsk: ")
    )
    assert f"\n{greeter}" in opened
    assert "\nIlse Brandt: " in to_brandt and "\nJonah Karsk: " not in to_brandt
    assert "\nJonah Karsk: " in to_karsk and "\nIlse Brandt: " not in to_karsk
    assert "Replies to Jonah Karsk:" in to_karsk
    # Both named: two lines, each on its own line under its own name, in the order named.
    assert 0 < both.index("\nJonah Karsk: ") < both.index("\nIlse Brandt: ")
    assert "Nobody in this conversation answers to 'Vex'" in nobody


def test_at_name_parses_into_a_say_to_one_npc() -> None:
    assert parse_command("@Brandt, what does fuel cost?") == SayTo("Brandt", "what does fuel cost?")
    assert isinstance(parse_command("@Brandt"), Invalid)
    assert isinstance(parse_command("@ hello"), Invalid)


async def test_two_players_talking_to_everyone_at_the_bar_share_one_scene(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    world = tmp_path / "world.db"
    birch = ActorSeed(BIRCH, "Captain Birch", "player", "captain", OMEGA, 50_000)
    open_world(
        world, seed=dataclasses.replace(OMEGA_STATION, actors=(*OMEGA_STATION.actors, birch))
    ).close()
    settings = ServerSettings(port=0, world=world, identity=IdentitySettings(secret_env=SECRET_ENV))
    ash_out, birch_out = io.StringIO(), io.StringIO()
    ash_in_scene, birch_in_scene = asyncio.Event(), asyncio.Event()
    ash_asked, birch_asked = asyncio.Event(), asyncio.Event()
    ash_line = "Captain Ash (player): Karsk, I want to buy 2 medical gel\n"
    birch_line = "Captain Birch (player): Brandt, what is the news?\n"

    def heard(out: io.StringIO, line: str, answerer: str) -> bool:
        """Whether `out` holds `line` and, after it, `answerer`'s whole line (its mood)."""
        return (
            re.search(
                re.escape(line) + rf"(?:.*\n)?{answerer}: [^\n]+\(\w+\)\n", out.getvalue(), re.S
            )
            is not None
        )

    # Each generator resumes after a yield only once the harness's answer to that line is
    # over (the client reads input only then).
    async def ash_types() -> AsyncIterator[str]:
        yield "/all"
        ash_in_scene.set()
        await birch_in_scene.wait()
        yield "Karsk, I want to buy 2 medical gel"
        ash_asked.set()
        await birch_asked.wait()
        await eventually(lambda: heard(ash_out, birch_line, "Ilse Brandt"))

    async def birch_types() -> AsyncIterator[str]:
        await ash_in_scene.wait()
        yield "/all"
        birch_in_scene.set()
        await ash_asked.wait()
        await eventually(lambda: heard(birch_out, ash_line, "Jonah Karsk"))
        yield "Brandt, what is the news?"
        birch_asked.set()

    async with serving(GAME, tmp_path, settings, responder=GAME.offline_responder) as stack:

        async def talk(player_id: str, lines: AsyncIterator[str], out: io.StringIO) -> int:
            token = mint_player_token(SECRET, player_id)
            talk = TalkSettings(url=stack.ws_url, player_id=player_id, token=token, echo_input=True)
            return await run_talk(talk, lines, _console(out))

        async with asyncio.timeout(60):
            codes = await asyncio.gather(
                talk(PLAYER_ID, ash_types(), ash_out), talk(BIRCH, birch_types(), birch_out)
            )
    assert codes == [0, 0]
    ash_text, birch_text = ash_out.getvalue(), birch_out.getvalue()
    # Birch joined Ash's scene: no greeting of his own; Ash's words under Ash's name, with no
    # mood, then Karsk's answer; Ash's offer is never listed to Birch.
    joined, after_ash = birch_text.split(ash_line)
    assert "notice you" in joined and "other players who talk to them too" in joined
    assert "\nJonah Karsk: " not in joined.split("notice you")[1]
    assert "\nIlse Brandt: " not in joined.split("notice you")[1]
    assert after_ash.startswith("Jonah Karsk: ")
    assert "[offer] Buy 2 medical gel" in ash_text
    assert "[offer]" not in birch_text.split("> Brandt, what is the news?")[0]
    # Ash hears Birch the same way, and Brandt's answer to him.
    assert heard(ash_out, birch_line, "Ilse Brandt")
    assert "Captain Ash (player)" not in ash_text and "Captain Birch (player)" not in birch_text
    # Each is told who is in the scene: Birch, on joining, that Ash is; Ash, that Birch came.
    assert "\nCaptain Ash is here.\n" in joined
    assert "\nCaptain Birch joined.\n" in ash_text
