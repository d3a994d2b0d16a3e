"""`star-harness talk` in a scene: `/all` walks up to Karsk and Brandt at once, every line is
printed under its speaker's name (from `speakerId`), and `@name words` speaks to one of them.
The real server with the offline brain behind the mock LLM over HTTP; the client in this
process, its input piped."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

from npc_support import serving
from rich.console import Console

from starharness.npc.client.terminal import TalkSettings, run_talk
from starharness.npc.client.terminal.commands import Invalid, SayTo, parse_command
from starharness.voyage import GAME, PLAYER_ID


async def _talk(url: str, lines: list[str]) -> str:
    async def piped() -> AsyncIterator[str]:
        for line in lines:
            yield line

    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False, color_system=None)
    settings = TalkSettings(url=url, player_id=PLAYER_ID, echo_input=True)
    assert await run_talk(settings, piped(), console) == 0
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
