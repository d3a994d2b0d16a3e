"""Scenes of several NPCs through the real server: Omega station's bar, where Jonah Karsk and
Ilse Brandt stand, played by the offline brain behind the mock LLM over HTTP, and a WebSocket
player. Who answers, `speakerId` on every frame that speaks, the bound on NPC lines per player
line, what the others hear (logged dynamic context, static prefixes byte-stable), and hostile
opens refused with the connection living on."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from npc_support import Client, Stack, eventually, serving, spoken

from starharness.mockllm import ChatRequest, ScriptedCall, Step, ToolCalls
from starharness.npc import ServerSettings
from starharness.npc.frames import MAX_SCENE_NPCS, PROTOCOL_REVISION
from starharness.npc.server import SceneSettings
from starharness.npc.server.scene import HEARD_HEADING
from starharness.voyage import GAME
from starharness.voyage.content import BROKER, DOCK_MASTER, PLAYER_ID, SMUGGLER

Frame = dict[str, Any]
SPEAKING = {"say.delta", "say.end", "options", "action"}
BAR = [SMUGGLER, DOCK_MASTER]
_BRAIN = GAME.offline_responder
assert _BRAIN is not None
BRAIN: Callable[[ChatRequest], Step] = _BRAIN


@asynccontextmanager
async def _at_the_bar(
    tmp_path: Path,
    settings: ServerSettings | None = None,
    responder: Callable[[ChatRequest], Step] = BRAIN,
) -> AsyncIterator[tuple[Stack, Client]]:
    """Omega station served, and the player connected (welcomed)."""
    async with AsyncExitStack() as inside:
        stack = await inside.enter_async_context(
            serving(GAME, tmp_path, settings, responder=responder)
        )
        me = await inside.enter_async_context(stack.client())
        await _hello(me)
        yield stack, me


def _bound(lines: int) -> ServerSettings:
    return ServerSettings(port=0, scene=SceneSettings(max_npc_lines=lines))


async def _hello(client: Client) -> Frame:
    await client.send({"t": "hello", "playerId": PLAYER_ID})
    return (await client.until(lambda f: f["t"] == "welcome"))[-1]


async def _open_bar(client: Client, scene_id: str = "s1", first: str = SMUGGLER) -> list[Frame]:
    await client.send(
        {
            "t": "encounter.open",
            "id": scene_id,
            "npcId": first,
            "npcIds": BAR,
            "playerId": PLAYER_ID,
        }
    )
    return await client.until_idle(scene_id)


async def _say(
    client: Client, text: str, to: str | None = None, scene_id: str = "s1"
) -> list[Frame]:
    frame: Frame = {"t": "encounter.say", "id": scene_id, "text": text}
    if to is not None:
        frame["to"] = to
    await client.send(frame)
    return await client.until_idle(scene_id)


def _speakers(frames: list[Frame]) -> list[str]:
    """Who spoke each line of `frames`, in order (one entry per `say.end`)."""
    return [f["speakerId"] for f in frames if f["t"] == "say.end"]


def _every_speaking_frame_names_its_speaker(frames: list[Frame]) -> None:
    for frame in frames:
        if frame["t"] in SPEAKING:
            assert frame.get("speakerId") in BAR, frame


def _requests(stack: Any, session_id: str) -> list[dict[str, Any]]:
    return [request.body for request in stack.mock.requests_for(session_id)]


def _session(stack: Any, npc_id: str) -> str:
    return next(e.session_id for e in stack.running.server.encounters if e.npc.id == npc_id)


def _heard(bodies: list[dict[str, Any]]) -> list[str]:
    return [
        m["content"]
        for body in bodies
        for m in body["messages"]
        if m["role"] == "user" and str(m["content"]).startswith(HEARD_HEADING)
    ]


async def test_the_player_addresses_each_npc_by_name_and_the_right_one_answers(
    tmp_path: Path,
) -> None:
    async with _at_the_bar(tmp_path) as (stack, me):
        # A second hello answers again: the server says it speaks scenes.
        assert (await _hello(me))["revision"] == PROTOCOL_REVISION
        opening = await _open_bar(me)
        opened = opening[0]
        assert opened["t"] == "encounter.opened" and opened["speakerId"] == SMUGGLER
        assert [(n["id"], n["name"]) for n in opened["npcs"]] == [
            (SMUGGLER, "Jonah Karsk"),
            (DOCK_MASTER, "Ilse Brandt"),
        ]
        # Karsk, who the player walked up to, greets; Brandt stays quiet.
        assert _speakers(opening) == [SMUGGLER]
        assert [f["t"] for f in opening].count("encounter.idle") == 1

        to_brandt = await _say(me, "Brandt, what are you selling today?")
        to_karsk = await _say(me, "Karsk, what do you have for sale?")
        picked = await _say(me, "And what do you buy?", to=DOCK_MASTER)
        # Named by no one: the NPC who spoke last answers.
        unnamed = await _say(me, "What do you pay for ore?")
        for frames in (opening, to_brandt, to_karsk, picked, unnamed):
            _every_speaking_frame_names_its_speaker(frames)
            assert frames[-1] == {"t": "encounter.idle", "id": "s1"}
        assert _speakers(to_brandt) == [DOCK_MASTER]
        assert _speakers(to_karsk) == [SMUGGLER]
        assert _speakers(picked) == [DOCK_MASTER]
        assert _speakers(unnamed) == [DOCK_MASTER]
        assert spoken(to_brandt) and spoken(to_karsk)
        options = [f for f in to_karsk if f["t"] == "options"]
        assert options and all(f["speakerId"] == SMUGGLER for f in options)
        karsk, brandt = _session(stack, SMUGGLER), _session(stack, DOCK_MASTER)
        await me.send({"t": "encounter.close", "id": "s1"})

    karsk_bodies, brandt_bodies = _requests(stack, karsk), _requests(stack, brandt)
    # Each NPC's static prefix is byte-stable across all its requests, and its own.
    for bodies in (karsk_bodies, brandt_bodies):
        systems = {m["content"] for b in bodies for m in b["messages"] if m["role"] == "system"}
        assert len(systems) == 1
    assert karsk_bodies[0]["messages"][0] != brandt_bodies[0]["messages"][0]
    # Brandt heard Karsk's greeting before her first line; Karsk heard the player ask Brandt
    # and what she answered, in the logged dynamic context, never in the prefix.
    brandt_heard, karsk_heard = _heard(brandt_bodies), _heard(karsk_bodies)
    assert any("Jonah Karsk: " in text for text in brandt_heard), brandt_heard
    assert any(
        'The player, to Ilse Brandt: "Brandt, what are you selling today?"' in text
        and "Ilse Brandt: " in text
        for text in karsk_heard
    ), karsk_heard
    assert all(HEARD_HEADING not in m["content"] for b in karsk_bodies for m in b["messages"]
               if m["role"] == "system")  # fmt: skip


async def test_a_line_naming_both_gets_both_answers_within_the_bound(tmp_path: Path) -> None:
    question = "Karsk, Brandt: what is the news on the station?"
    async with _at_the_bar(tmp_path) as (stack, me):
        await _open_bar(me)
        both = await _say(me, question)
        brandt = _session(stack, DOCK_MASTER)
    assert _speakers(both) == [SMUGGLER, DOCK_MASTER]
    assert [f["t"] for f in both].count("encounter.idle") == 1
    # Only Karsk, named first, may act on the line; Brandt is told it was said to both of them
    # and answers in a turn that only speaks.
    last = _requests(stack, brandt)[-1]
    said = [m["content"] for m in last["messages"] if m["role"] == "user"][-1]
    assert said == f'The player says to you and Jonah Karsk: "{question}"'
    assert last["tool_choice"] == {"type": "function", "function": {"name": "npc_speak"}}

    async with _at_the_bar(tmp_path / "one", _bound(1)) as (_, me):
        await _open_bar(me)
        bounded = await _say(me, question)
    assert _speakers(bounded) == [SMUGGLER]


def _naming_the_other(request: ChatRequest) -> Step:
    """The offline brain, but every line ends by turning to the other NPC at the bar."""
    step = BRAIN(request)
    system = "".join(m.text for m in request.messages if m.role == "system")
    other = "Brandt" if "Jonah Karsk" in system.split("Ilse Brandt")[0] else "Karsk"
    if not isinstance(step, ToolCalls):
        return step
    calls: list[ScriptedCall] = []
    for call in step.calls:
        arguments = json.loads(call.arguments)
        if call.name == "npc_speak" and isinstance(arguments.get("line"), str):
            arguments["line"] = f"{arguments['line']} What do you say, {other}?"
        calls.append(ScriptedCall(name=call.name, arguments=json.dumps(arguments)))
    return step.model_copy(update={"calls": calls})


@pytest.mark.parametrize(("bound", "lines"), [(2, 2), (3, 3)])
async def test_npcs_answer_each_other_until_the_bound_then_the_player_has_the_floor(
    tmp_path: Path, bound: int, lines: int
) -> None:
    async with _at_the_bar(tmp_path, _bound(bound), _naming_the_other) as (_, me):
        opening = await _open_bar(me)
        frames = await _say(me, "Karsk, what do you sell?")
        # The floor is the player's again: a say is answered, not refused as busy.
        again = await _say(me, "Karsk?")
    # Karsk greets and turns to Brandt, who answers and turns to Karsk: the greeting is a
    # round of its own, bounded the same way.
    assert _speakers(opening) == [SMUGGLER, DOCK_MASTER, SMUGGLER][:lines]
    assert _speakers(frames) == [SMUGGLER, DOCK_MASTER, SMUGGLER][:lines]
    assert _speakers(again)[0] == SMUGGLER
    assert [f["t"] for f in frames].count("encounter.idle") == 1
    assert not [f for f in frames if f["t"] == "error"], frames


async def test_old_single_npc_frames_carry_no_speaker(tmp_path: Path) -> None:
    async with _at_the_bar(tmp_path) as (_, me):
        opening = await me.open("e1", SMUGGLER, PLAYER_ID)
        turn = await me.say("e1", "What do you sell?")
        await me.send({"t": "encounter.say", "id": "e1", "text": "hi", "to": DOCK_MASTER})
        refused = (await me.until(lambda f: f["t"] == "error"))[-1]
    assert all("speakerId" not in f and "npcs" not in f for f in opening + turn)
    assert refused["code"] == "unknown_npc" and DOCK_MASTER in refused["message"]


@pytest.mark.parametrize(
    ("npc_ids", "code", "says"),
    [
        ([SMUGGLER, DOCK_MASTER, BROKER, "npc-a", "npc-b"], "bad_frame", "at most 4"),
        ([SMUGGLER, "npc-nobody"], "unknown_npc", "npc-nobody"),
        ([SMUGGLER, BROKER], "npc_unavailable", "Vex"),
        ([SMUGGLER, DOCK_MASTER, SMUGGLER], "bad_frame", "more than once"),
        ([DOCK_MASTER], "bad_frame", "must be one of 'npcIds'"),
        ([], "bad_frame", "at least 1"),
    ],
)
async def test_a_hostile_open_is_refused_plainly_and_the_connection_lives_on(
    tmp_path: Path, npc_ids: list[str], code: str, says: str
) -> None:
    async with _at_the_bar(tmp_path) as (stack, me):
        await me.send(
            {
                "t": "encounter.open",
                "id": "bad",
                "npcId": SMUGGLER,
                "npcIds": npc_ids,
                "playerId": PLAYER_ID,
            }
        )
        error = (await me.until(lambda f: f["t"] == "error"))[-1]
        assert error["code"] == code and says in error["message"], error
        assert error["id"] == "bad"
        # Nothing of the refused scene stays open, and the connection serves on.
        assert stack.running.server.encounters == []
        opening = await _open_bar(me)
        assert _speakers(opening) == [SMUGGLER]
    assert MAX_SCENE_NPCS == 4


async def test_a_say_to_someone_not_in_the_scene_is_refused_and_the_scene_goes_on(
    tmp_path: Path,
) -> None:
    async with _at_the_bar(tmp_path) as (stack, me):
        await _open_bar(me)
        await me.send({"t": "encounter.say", "id": "s1", "text": "hi", "to": BROKER})
        error = (await me.until(lambda f: f["t"] == "error"))[-1]
        assert error["code"] == "unknown_npc" and BROKER in error["message"]
        await me.send({"t": "encounter.say", "id": "s1", "optionId": "nope"})
        error = (await me.until(lambda f: f["t"] == "error"))[-1]
        assert error["code"] == "bad_option"
        assert _speakers(await _say(me, "Brandt, hello.")) == [DOCK_MASTER]
        # Closing the scene closes every NPC's encounter.
        await me.send({"t": "encounter.close", "id": "s1"})
        await me.send({"t": "encounter.say", "id": "s1", "text": "still there?"})
        gone = (await me.until(lambda f: f["t"] == "error"))[-1]
        assert gone["code"] == "unknown_encounter"
        assert stack.running.server.encounters == []


async def test_a_deal_that_takes_the_player_away_ends_the_whole_scene(tmp_path: Path) -> None:
    async with _at_the_bar(tmp_path) as (stack, me):
        await _open_bar(me)
        asked = await _say(me, "Brandt, I need passage to Ceres Deep")
        items = [f for f in asked if f["t"] == "options"][-1]["items"]
        passage = next(
            item for item in items if item.get("offer", {}).get("action") == "book_passage"
        )
        await me.send({"t": "encounter.say", "id": "s1", "optionId": passage["id"]})
        farewell = await me.until_idle("s1")
        bought = [f for f in farewell if f["t"] == "action"]
        assert [(f["ok"], f["speakerId"]) for f in bought] == [(True, DOCK_MASTER)]
        # Brandt's encounter ends after her farewell, and Karsk's with it: the player is gone.
        await me.send({"t": "encounter.say", "id": "s1", "text": "Karsk?"})
        gone = (await me.until(lambda f: f["t"] == "error"))[-1]
        assert gone["code"] == "unknown_encounter"
        await me.send({"t": "encounter.close", "id": "s1"})  # quiet, as for any ended encounter
        await eventually(lambda: stack.running.server.encounters == [])
