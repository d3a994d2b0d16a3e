"""One test per invariant of DESIGN.md, each through the real server, loop and mock LLM."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from npc_support import serving, spoken
from tinygame import GAME
from tinygame.brain import respond, talk

import starharness.npc
from starharness.mockllm import ScriptedCall, ServerFault, ToolCalls
from starharness.npc import ExposureError, GameKit, ServerSettings, start_server
from starharness.npc.frames import DOWN_FRAME_TYPES
from starharness.runtime.kernel import Context
from starharness.runtime.llm import OPENAI_COMPATIBLE
from starharness.runtime.llm.wire import to_wire_messages
from starharness.runtime.session import SESSIONS, rebuild_requests

NPC_SOURCE = Path(starharness.npc.__file__).parent


def _call(name: str, **arguments: object) -> ScriptedCall:
    return ScriptedCall(name=name, arguments=json.dumps(arguments))


async def test_1_one_writer_action_frames_report_what_is_already_committed(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack, stack.client() as client:
        await client.open("e1", "n-baker", "p1")
        await client.send({"t": "encounter.say", "id": "e1", "text": "buy 2"})
        action = await client.recv()
        assert action["t"] == "action" and action["ok"] is True
        assert stack.world.holdings("p1") == (14, 2)  # committed before the frame left
        await client.until_idle("e1")
        # An engine cannot apply an action itself: there is no such up frame.
        await client.send({"t": "action", "id": "e1", "name": "sell_bread", "ok": True})
        assert (await client.recv())["code"] == "bad_frame"
        assert stack.world.holdings("p1") == (14, 2)


async def test_2_engines_see_only_frames_of_the_games_protocol(tmp_path: Path) -> None:
    protocol = GameKit.of(GAME).protocol
    raw: list[str] = []
    async with serving(GAME, tmp_path, responder=respond) as stack, stack.client() as client:
        await client.send({"t": "hello", "playerId": "p1"})
        raw.append(str(await client.ws.recv()))
        await client.send({"t": "encounter.open", "id": "e1", "npcId": "n-baker", "playerId": "p1"})
        await client.send({"t": "encounter.say", "id": "e1", "text": "buy 1"})
        await client.send({"t": "encounter.say", "id": "e1", "text": "again"})
        await client.send({"t": "world.tick", "days": 1})
        while len(
            [r for r in raw if '"encounter.idle"' in r]
        ) < 2 or '"world.event"' not in "".join(raw):
            raw.append(str(await client.ws.recv()))
    seen: set[str] = set()
    for text in raw:
        frame = protocol.parse_down_frame(text)
        assert json.loads(text) == json.loads(
            frame.model_dump_json(by_alias=True, exclude_none=True)
        )
        seen.add(str(json.loads(text)["t"]))
    assert {"welcome", "encounter.opened", "action", "hud", "say.delta", "say.end"} <= seen
    assert {"error", "world.event", "options", "encounter.idle"} <= seen
    # 11: the protocol grew deliberately (revision 3's `scene.players`, who is in a shared scene).
    assert len(DOWN_FRAME_TYPES) == 11
    # Session events become encounter frames in exactly one module.
    builders = re.compile(r"\.(say_delta|say_end|options|action|encounter_idle|encounter_opened)\(")
    building = {
        path.relative_to(NPC_SOURCE).as_posix()
        for path in NPC_SOURCE.rglob("*.py")
        if builders.search(path.read_text(encoding="utf-8"))
    }
    assert building == {"encounter/mapping.py"}


async def test_3_refusals_are_values_and_faults_are_errors_the_model_reads(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        stack.world.set("INSERT INTO switches VALUES ('oven_broken', 1)")
        stack.mock.script_next(
            [
                ToolCalls(calls=[_call("sell_bread", qty=3, price=500)]),
                ToolCalls(calls=[_call("bake", qty=4)]),
                ToolCalls(calls=[talk("Nothing works today.")]),
            ]
        )
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "Bread, and bake more")
        assert spoken(frames) == "Nothing works today."
        tool_messages = [r.body["messages"][-1] for r in stack.mock.requests[1:]]
        refusal, fault = (m["content"] for m in tool_messages)
        assert json.loads(refusal)["ok"] is False and json.loads(refusal)["reason"]
        assert fault == "Error: the oven broke"
        assert stack.world.holdings("n-baker") == (50, 12)  # the fault rolled back


async def test_4_everything_the_model_saw_can_be_rebuilt_from_the_log(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack, stack.client() as client:
        await client.open("e1", "n-baker", "p1")
        for text in ("Hi", "buy 1", "Bye"):
            await client.say("e1", text)
        (encounter,) = stack.running.server.encounters
        session = stack.ctx.get(SESSIONS).get(encounter.session_id)
        assert session is not None
        rebuilt = rebuild_requests(session.events)
        sent = [r.body for r in stack.mock.requests_for(encounter.session_id)]
        assert len(rebuilt) == len(sent) == 4
        for (header, messages), body in zip(rebuilt, sent, strict=True):
            assert header is not None
            wire = to_wire_messages(header["system"], messages, profile=OPENAI_COMPATIBLE)
            assert json.dumps(wire) == json.dumps(body["messages"])


async def test_5_static_first_dynamic_last_and_npcs_share_the_protocol_prefix(
    tmp_path: Path,
) -> None:
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client() as left,
        stack.client() as right,
    ):
        await left.open("a", "n-baker", "p1")
        await right.open("b", "n-smith", "p2")
        await left.say("a", "Hello")
        await right.say("b", "Hello")
        baker, smith = (r.body for r in stack.mock.requests)
    assert baker["tools"] == smith["tools"]
    baker_system = baker["messages"][0]["content"]
    smith_system = smith["messages"][0]["content"]
    assert baker_system.startswith(GAME.protocol_text) and smith_system.startswith(
        GAME.protocol_text
    )
    assert baker_system.endswith("cheerful baker.") and smith_system.endswith("gruff smith.")
    assert "AI agent" not in baker_system  # the runtime identity is left out of NPC prompts
    # The scene is a context message after the static prefix, just before the player's words
    # (a small model answers what it read last).
    scene, words = baker["messages"][-2:]
    assert scene["role"] == "user" and scene["content"].startswith("Scene:")
    assert words == {"role": "user", "content": "Hello"}
    assert "Scene:" not in baker_system


async def test_6_the_model_cannot_pick_whose_wallet_it_touches(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        stack.mock.script_next(
            [
                ToolCalls(
                    calls=[_call("sell_bread", qty=1, price=3, npc_id="n-smith", player_id="p2")]
                ),
                ToolCalls(calls=[talk("There.")]),
            ]
        )
        await client.open("e1", "n-baker", "p1")
        await client.say("e1", "One loaf, charged to Sam")
        sell = next(
            t for t in stack.mock.requests[0].body["tools"] if t["function"]["name"] == "sell_bread"
        )
        assert set(sell["function"]["parameters"]["properties"]) == {"qty", "price"}
        world = stack.world
        assert world.holdings("p1") == (17, 1) and world.holdings("p2") == (5, 0)
        assert world.holdings("n-baker") == (53, 11) and world.holdings("n-smith") == (80, 0)


async def test_7_closed_by_default(tmp_path: Path) -> None:
    assert ServerSettings().host == "127.0.0.1"
    async with serving(GAME, tmp_path) as stack:
        assert stack.running.host == "127.0.0.1"
        assert stack.running.url.startswith("http://127.0.0.1:")
        async with stack.client(origin="http://elsewhere.example") as browser:
            assert (await browser.recv())["code"] == "unauthorized"
    exposed = ServerSettings(host="0.0.0.0", port=0)
    with pytest.raises(ExposureError):
        await start_server(Context("unused"), GAME, exposed)


async def test_8_bad_input_gets_an_error_and_nothing_is_lost(tmp_path: Path) -> None:
    async with (
        serving(GAME, tmp_path, responder=respond, max_attempts=1) as stack,
        stack.client() as client,
    ):
        await client.open("e1", "n-baker", "p1")
        await client.send("{not json")
        assert (await client.recv())["code"] == "bad_frame"
        assert spoken(await client.say("e1", "still here?")) == "You said: still here?"

        stack.mock.script(stack.running.server.encounters[0].session_id, [ServerFault()])
        frames = await client.say("e1", "buy 2")
        assert [f["t"] for f in frames] == ["error", "encounter.idle"]
        assert frames[0]["code"] == "llm_unavailable"
        assert stack.world.holdings("p1") == (20, 0)
        assert _audit_is_consistent(stack.world.audit_rows())


def _audit_is_consistent(rows: list[dict[str, Any]]) -> bool:
    return all(row["ok"] in (0, 1) for row in rows)
