"""End to end: a WebSocket client, the NPC server, the agent loop and the mock LLM over HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
from npc_support import eventually, serving, spoken, types
from tinygame import GAME, GREETING_GAME
from tinygame.brain import OPTIONS, respond, talk

from starharness.mockllm import MockLlmServer, ScriptedCall, ServerFault, Stall, Success, ToolCalls
from starharness.npc import ServerSettings, TurnSettings
from starharness.runtime.loop import AGENTS


async def _until_requested(mock: MockLlmServer, count: int) -> None:
    await eventually(lambda: len(mock.requests) >= count)


def _sell(qty: int, price: int, **extra: object) -> ScriptedCall:
    return ScriptedCall(
        name="sell_bread", arguments=json.dumps({"qty": qty, "price": price, **extra})
    )


async def test_multi_turn_streaming_with_options(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack, stack.client() as client:
        await client.send({"t": "hello", "playerId": "p1"})
        welcome = await client.recv()
        assert welcome["t"] == "welcome" and welcome["protocol"] == 1
        assert {"id": "n-baker", "name": "Bea", "locationId": "square"} in welcome["npcs"]
        assert welcome["hud"]["coins"] == 20

        opened = await client.open("e1", "n-baker", "p1")
        assert opened == [
            {"t": "encounter.opened", "id": "e1", "npcName": "Bea", "attitude": 3},
            {"t": "encounter.idle", "id": "e1"},
        ]
        assert stack.mock.requests == []  # opened and idle came before any model call

        first = await client.say("e1", "Good morning")
        assert types(first) == ["say.delta", "say.end", "options", "encounter.idle"]
        deltas = [f for f in first if f["t"] == "say.delta"]
        # Streamed while the arguments arrived: the first words left before the line was whole.
        assert len(deltas) >= 2 and len(deltas[0]["text"]) < len("You said: Good morning")
        assert spoken(first) == "You said: Good morning"
        assert first[-3] == {"t": "say.end", "id": "e1", "mood": "calm"}
        assert first[-2]["items"] == OPTIONS
        assert len(stack.mock.requests) == 1  # a talk-only turn is one request

        await client.send({"t": "encounter.say", "id": "e1", "optionId": "bye"})
        second = await client.until_idle("e1")
        assert spoken(second) == "You said: Goodbye"  # the model heard the option's label
        assert len(stack.mock.requests) == 2
        last_user = stack.mock.requests[-1].body["messages"]
        assert {"role": "user", "content": "Goodbye"} in last_user

        third = await client.say("e1", "What else?")
        assert spoken(third) == "You said: What else?"
        assert len(stack.mock.requests) == 3


async def test_action_then_speech_pushes_the_hud_to_the_players_connections(
    tmp_path: Path,
) -> None:
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client() as talker,
        stack.client() as watcher,
        stack.client() as other,
    ):
        for client, player in ((talker, "p1"), (watcher, "p1"), (other, "p2")):
            await client.send({"t": "hello", "playerId": player})
            assert (await client.recv())["t"] == "welcome"
        await talker.open("e1", "n-baker", "p1")

        frames = await talker.say("e1", "I would like to buy 2")
        assert types(frames) == [
            "action", "hud", "say.delta", "say.end", "options", "encounter.idle"
        ]  # fmt: skip
        action, hud = frames[0], frames[1]
        assert action == {
            "t": "action", "id": "e1", "name": "sell_bread", "ok": True,
            "summary": "Sold 2 loaves for 6 coins.",
        }  # fmt: skip
        assert hud == {
            "t": "hud", "playerId": "p1",
            "data": {"name": "Pat", "coins": 14, "loaves": 2, "place": "square", "day": 1},
        }  # fmt: skip
        assert spoken(frames) == "Enjoy your bread."
        assert stack.world.holdings("p1") == (14, 2)

        assert await watcher.recv() == hud  # the player's other connection
        await other.send({"t": "hello", "playerId": "p2"})
        assert (await other.recv())["t"] == "welcome"  # no HUD of p1 was queued before it


async def test_speech_waits_for_the_steps_actions(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        # The model speaks first and sells second, in one step: the sale runs, then the line
        # ends, and the turn is over after this one request.
        stack.mock.script_next([ToolCalls(calls=[talk("Here, one loaf.", "happy"), _sell(1, 3)])])
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "One please")
        assert types(frames) == [
            "say.delta", "action", "hud", "say.end", "options", "encounter.idle"
        ]  # fmt: skip
        assert frames[-3]["mood"] == "happy"
        assert len(stack.mock.requests) == 1
        assert stack.world.holdings("p1") == (17, 1)


async def test_a_refused_action_keeps_the_turn_open(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        stack.mock.script_next(
            [
                ToolCalls(calls=[talk("Ten loaves, coming up.", "happy"), _sell(10, 300)]),
                ToolCalls(calls=[talk("Ah, you cannot pay that.", "cross")]),
            ]
        )
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "Ten please")
        assert types(frames) == [
            "say.delta", "action", "say.end", "options",
            "say.delta", "say.end", "options", "encounter.idle",
        ]  # fmt: skip
        refused = frames[[f["t"] for f in frames].index("action")]
        assert refused["ok"] is False and "300" in refused["summary"]
        assert spoken(frames) == "Ten loaves, coming up.Ah, you cannot pay that."
        assert len(stack.mock.requests) == 2  # the model read the refusal and answered it
        reread = stack.mock.requests[1].body["messages"][-1]
        assert reread["role"] == "tool" and '"reason":"cannot_afford"' in reread["content"]
        assert stack.world.holdings("p1") == (20, 0)


async def test_a_plain_text_answer_is_delivered_as_the_line(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        stack.mock.script_next([Success(text="  Just words, no tool.  ")])
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "Hi")
        assert spoken(frames) == "Just words, no tool."
        assert {f["t"] for f in frames[:-3]} == {"say.delta"}
        assert frames[-3:] == [
            {"t": "say.end", "id": "e1", "mood": "calm"},
            {"t": "options", "id": "e1", "items": []},
            {"t": "encounter.idle", "id": "e1"},
        ]


async def test_a_plain_text_answer_streams_as_it_is_written(tmp_path: Path) -> None:
    line = "Words arrive one by one, as the model writes them."
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        stack.mock.script_next([Success(text=line, chunk_size=5, delay_ms=30)])
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "Hi")
        deltas = [f["text"] for f in frames if f["t"] == "say.delta"]
        assert "".join(deltas) == line
        assert len(deltas) >= 5  # not one line at the end: pieces, as the model wrote them


async def test_unknown_mood_and_junk_options_are_cleaned_up(tmp_path: Path) -> None:
    options = [
        {"id": "x", "label": "One"},
        {"id": "x", "label": "Two"},
        "Three",
        {"label": "  "},
        {"id": "y", "label": "Four"},
        {"id": "z", "label": "Five"},
    ]
    arguments = json.dumps({"options": options, "mood": "ecstatic", "line": "Pick."})
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        stack.mock.script_next([ToolCalls(calls=[ScriptedCall(name="talk", arguments=arguments)])])
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "Hi")
        assert spoken(frames) == "Pick."
        assert frames[-3] == {"t": "say.end", "id": "e1", "mood": "calm"}
        assert frames[-2]["items"] == [
            {"id": "1", "label": "One"},
            {"id": "2", "label": "Two"},
            {"id": "3", "label": "Three"},
        ]
        await client.send({"t": "encounter.say", "id": "e1", "optionId": "x"})
        assert (await client.recv())["code"] == "bad_option"


async def test_the_npc_can_greet_first(tmp_path: Path) -> None:
    async with (
        serving(GREETING_GAME, tmp_path, responder=respond) as stack,
        stack.client() as client,
    ):
        frames = await client.open("e1", "n-baker", "p1")
        assert types(frames) == [
                "encounter.opened", "say.delta", "say.end", "options", "encounter.idle"
            ]  # fmt: skip
        assert spoken(frames) == f"You said: {GREETING_GAME.greeting_prompt}"


async def test_busy_then_close_mid_turn(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack, stack.client() as client:
        stack.mock.script_next([Stall(phase="before_headers")])
        await client.open("e1", "n-baker", "p1")
        await client.send({"t": "encounter.say", "id": "e1", "text": "Hello?"})
        await client.send({"t": "encounter.say", "id": "e1", "text": "Hello??"})
        busy = await client.recv()
        assert busy["t"] == "error" and busy["code"] == "busy" and busy["id"] == "e1"
        await _until_requested(stack.mock, 1)  # the model request is in flight

        await client.send({"t": "encounter.close", "id": "e1"})
        await client.send({"t": "encounter.say", "id": "e1", "text": "Still there?"})
        gone = await client.recv()  # nothing was sent for the cancelled turn in between
        assert gone["code"] == "unknown_encounter"
        assert stack.running.server.encounters == []
        assert stack.ctx.get(AGENTS).list() == []
        assert stack.world.memories("n-baker", "p1") == ["We met; 0 deal(s)."]

        # The same id can be opened again, and talks normally.
        await client.open("e1", "n-baker", "p1")
        assert spoken(await client.say("e1", "Back again")) == "You said: Back again"


async def test_disconnecting_disposes_every_encounter(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack:
        stack.mock.script_next([Stall(phase="before_headers")])
        async with stack.client() as client:
            await client.open("busy", "n-baker", "p1")
            await client.send({"t": "encounter.say", "id": "busy", "text": "Hello?"})
            await _until_requested(stack.mock, 1)
            await client.open("quiet", "n-baker", "p1")
            assert len(stack.running.server.encounters) == 2
            owner = stack.ctx.get(AGENTS).list()[0].ctx.parent
            assert owner is not None
            owned_while_open = len(owner.scope)
        server = stack.running.server
        await eventually(
            lambda: not (server.encounters or server.connections or stack.ctx.get(AGENTS).list())
        )
        # The runtime keeps nothing of the disposed agents (it used to keep their scopes).
        assert len(owner.scope) == owned_while_open - 2
        assert stack.world.memories("n-baker", "p1") == ["We met; 0 deal(s)."] * 2


async def test_an_llm_failure_ends_the_turn_with_llm_unavailable(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, max_attempts=2) as stack, stack.client() as client:
        stack.mock.script_next([ServerFault(), ServerFault(), ToolCalls(calls=[talk("Back.")])])
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "Hello")
        assert [f["t"] for f in frames] == ["error", "encounter.idle"]
        assert frames[0]["code"] == "llm_unavailable" and frames[0]["id"] == "e1"
        assert stack.world.holdings("p1") == (20, 0)
        # The encounter lives on: the next say works.
        assert spoken(await client.say("e1", "Hello again")) == "Back."


async def test_a_model_that_keeps_retrying_a_refused_action_hits_the_step_bound(
    tmp_path: Path,
) -> None:
    settings = ServerSettings(port=0, turn=TurnSettings(max_steps=3))
    async with serving(GAME, tmp_path, settings) as stack, stack.client() as client:
        stack.mock.script_next([ToolCalls(calls=[_sell(5, 999)])] * 3)
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "Sell me five")
        assert [f["t"] for f in frames] == ["action", "action", "action", "error", "encounter.idle"]
        assert frames[-2]["code"] == "limit" and "3 steps" in frames[-2]["message"]
        assert len(stack.mock.requests) == 3


async def test_a_turn_is_bounded_in_wall_time(tmp_path: Path) -> None:
    settings = ServerSettings(port=0, turn=TurnSettings(timeout_s=0.3))
    async with serving(GAME, tmp_path, settings) as stack, stack.client() as client:
        stack.mock.script_next([Stall(phase="before_headers")])
        await client.open("e1", "n-baker", "p1")
        frames = await client.say("e1", "Hello?")
        assert [f["t"] for f in frames] == ["error", "encounter.idle"]
        assert frames[0]["code"] == "limit" and "time limit" in frames[0]["message"]


async def test_encounter_ids_are_scoped_to_their_connection(tmp_path: Path) -> None:
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client() as first,
        stack.client() as second,
    ):
        await first.open("e1", "n-baker", "p1")
        await second.open("e1", "n-baker", "p1")
        assert spoken(await second.say("e1", "two")) == "You said: two"
        assert spoken(await first.say("e1", "one")) == "You said: one"
        await first.send({"t": "encounter.open", "id": "e1", "npcId": "n-baker", "playerId": "p1"})
        assert (await first.recv())["code"] == "encounter_exists"


async def test_headless_serves_no_page_but_frames_work(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack:
        async with httpx.AsyncClient(base_url=stack.running.url, trust_env=False) as http:
            assert (await http.get("/")).status_code == 404
            health = await http.get("/healthz")
            assert health.status_code == 200 and health.json()["game"] == "tinygame"
        async with stack.client() as client:
            await client.open("e1", "n-baker", "p1")
            assert spoken(await client.say("e1", "hi")) == "You said: hi"


async def test_a_web_root_is_served_at_the_root(tmp_path: Path) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<h1>tiny</h1>", encoding="utf-8")
    settings = ServerSettings(port=0, web_root=web)
    async with (
        serving(GAME, tmp_path, settings) as stack,
        httpx.AsyncClient(base_url=stack.running.url, trust_env=False) as http,
    ):
        page = await http.get("/")
        assert page.status_code == 200 and "<h1>tiny</h1>" in page.text


async def test_clients_only_see_frames_of_their_own_encounters(tmp_path: Path) -> None:
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client() as baker_side,
        stack.client() as smith_side,
    ):
        await baker_side.open("a", "n-baker", "p1")
        await smith_side.open("b", "n-smith", "p2")
        spoken_a, spoken_b = await asyncio.gather(
            baker_side.say("a", "left"), smith_side.say("b", "right")
        )
        assert {f["id"] for f in spoken_a} == {"a"} and {f["id"] for f in spoken_b} == {"b"}
