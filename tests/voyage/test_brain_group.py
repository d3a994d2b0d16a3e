"""The offline brain plays a scene at the bar, through the real server, the mock LLM over HTTP
and a WebSocket player: an NPC turns to the other by name when it has reason to (the other
trades what the player asks for, or just offered it cheaper), the other answers only by
speaking, the server's bound holds, lore answers a question about the station, and the same
seed gives the same lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voyage_e2e_support import Frame, Player, serving_voyage

from starharness.npc import ServerSettings
from starharness.npc.lore import LORE_HEADING as FRAMEWORK_LORE_HEADING
from starharness.npc.server import SceneSettings
from starharness.npc.server import scene as framework_scene
from starharness.voyage import GAME
from starharness.voyage.brain import heard
from starharness.voyage.content import DOCK_MASTER, PLAYER_ID, SMUGGLER

BAR = [SMUGGLER, DOCK_MASTER]
Line = tuple[str, str, tuple[str, ...]]
"""One NPC line of a round: who spoke, what, and the labels of the options after it."""


def _lines(frames: list[Frame]) -> list[Line]:
    found: list[Line] = []
    text: list[str] = []
    for frame in frames:
        if frame["t"] == "say.delta":
            text.append(frame["text"])
        elif frame["t"] == "say.end":
            found.append((frame["speakerId"], "".join(text), ()))
            text = []
        elif frame["t"] == "options" and found:
            who, said, _ = found[-1]
            found[-1] = (who, said, tuple(item["label"] for item in frame["items"]))
    return found


async def _open_bar(me: Player) -> list[Frame]:
    await me.hello()
    await me.send(
        {"t": "encounter.open", "id": "s1", "npcId": SMUGGLER, "npcIds": BAR, "playerId": PLAYER_ID}
    )
    return await me.until(lambda f: f["t"] in ("encounter.idle", "error"))


async def _play(
    tmp_path: Path, said: list[str], max_npc_lines: int | None = None
) -> tuple[list[list[Line]], dict[str, list[dict[str, Any]]]]:
    """Open the bar scene, say each line; the rounds' lines and each NPC's request bodies."""
    async with serving_voyage(tmp_path) as stack:
        if max_npc_lines is not None:
            scene = SceneSettings(max_npc_lines=max_npc_lines)
            settings = stack.running.server.settings
            assert isinstance(settings, ServerSettings)
            settings.scene = scene
        async with Player(stack.running.ws_url, PLAYER_ID) as me:
            rounds = [_lines(await _open_bar(me))]
            for text in said:
                frames = await me.say("s1", text)
                assert [f["t"] for f in frames].count("encounter.idle") == 1
                assert not [f for f in frames if f["t"] == "error"], frames
                rounds.append(_lines(frames))
            sessions = {e.npc.id: e.session_id for e in stack.running.server.encounters}
        bodies = {
            npc: [request.body for request in stack.mock.requests_for(session)]
            for npc, session in sessions.items()
        }
    return rounds, bodies


def _speakers(lines: list[Line]) -> list[str]:
    return [who for who, _, _ in lines]


async def test_brandt_sends_the_player_to_karsk_who_answers_within_the_bound(
    tmp_path: Path,
) -> None:
    rounds, bodies = await _play(tmp_path / "two", ["Brandt, I want medical gel"])
    greeting, asked = rounds
    assert _speakers(greeting) == [SMUGGLER]
    assert "medical gel at 1,100" in greeting[0][1]
    # Brandt sells no gel, but heard Karsk offer it: she names him, so he answers her line.
    assert _speakers(asked) == [DOCK_MASTER, SMUGGLER]
    (_, referral, _), (_, answer, options) = asked
    assert "I don't sell medical gel" in referral and "Jonah Karsk" in referral
    assert "1,100" in referral and referral.endswith("Karsk.")
    assert "Medical gel: 1,100 a unit" in answer and "Brandt" not in answer
    assert any("medical gel" in label for label in options)
    # Karsk's answer was a turn that only speaks: forced to speak, nothing offered in it.
    last = bodies[SMUGGLER][-1]
    assert last["tool_choice"] == {"type": "function", "function": {"name": "npc_speak"}}
    said_to_karsk = [m["content"] for m in last["messages"] if m["role"] == "user"][-1]
    assert said_to_karsk == f'Ilse Brandt says to you: "{referral}"'

    # With the server's bound at one line per player line, Karsk does not get to answer.
    bounded, _ = await _play(tmp_path / "one", ["Brandt, I want medical gel"], max_npc_lines=1)
    assert _speakers(bounded[1]) == [DOCK_MASTER]
    assert bounded[1][0][1] == referral


async def test_karsk_sends_the_player_to_brandts_cheaper_offer_and_she_keeps_to_it(
    tmp_path: Path,
) -> None:
    rounds, _ = await _play(tmp_path, ["Brandt, fuel is too expensive", "Karsk, fuel cells?"])
    haggled, asked = rounds[1], rounds[2]
    assert _speakers(haggled) == [DOCK_MASTER]
    assert "428 a unit" in haggled[0][1]
    assert _speakers(asked) == [SMUGGLER, DOCK_MASTER]
    (_, referral, _), (_, answer, options) = asked
    assert "Brandt sells fuel cells cheaper than I do" in referral
    assert "428 against my 450" in referral
    assert "428 a unit for you" in answer and "Karsk" not in answer
    assert any("428" in label for label in options)


async def test_the_same_seed_gives_the_same_scene(tmp_path: Path) -> None:
    said = [
        "Brandt, I want medical gel",
        "Brandt, fuel is too expensive",
        "Karsk, fuel cells?",
        "Karsk, Brandt: what is the news on the station?",
    ]
    first, _ = await _play(tmp_path / "a", said)
    again, _ = await _play(tmp_path / "b", said)
    assert first == again
    assert [len(lines) for lines in first] == [1, 2, 1, 2, 2]


async def test_a_question_about_the_station_is_answered_from_the_lore_given(
    tmp_path: Path,
) -> None:
    rounds, bodies = await _play(tmp_path, ["Karsk, what is Omega station like?"])
    assert GAME.lore is not None
    station = next(e.text for e in GAME.lore.entries if e.id == "omega-station")
    (who, line, _) = rounds[1][0]
    assert who == SMUGGLER and line.startswith(station)
    given = [
        m["content"]
        for m in bodies[SMUGGLER][-1]["messages"]
        if m["role"] == "user" and str(m["content"]).startswith(heard.LORE_HEADING)
    ]
    assert given and station in given[-1]


def test_the_brain_reads_the_frameworks_own_wording() -> None:
    assert heard.HEARD_HEADING == framework_scene.HEARD_HEADING
    assert heard.PLAYER == framework_scene.PLAYER
    assert heard.LORE_HEADING == FRAMEWORK_LORE_HEADING
    text = "\n".join(
        [
            heard.HEARD_HEADING,
            f'- {heard.PLAYER}, to Ilse Brandt and Jonah Karsk: "Hello, both."',
            '- Ilse Brandt: "Fuel cells: 450 a unit."',
        ]
    )
    assert heard.read_heard(text) == [
        heard.Heard(heard.PLAYER, "Hello, both.", ("Ilse Brandt", "Jonah Karsk")),
        heard.Heard("Ilse Brandt", "Fuel cells: 450 a unit."),
    ]
    assert heard.read_answering('Ilse Brandt says to you: "Ask "Karsk"."') == heard.Answering(
        "Ilse Brandt", 'Ask "Karsk".'
    )
    assert heard.read_answering("Karsk, fuel?") is None
