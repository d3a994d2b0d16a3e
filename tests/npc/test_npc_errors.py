"""Errors are frames and the connection lives on: every error path over a real WebSocket."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from npc_support import Client, serving, spoken
from tinygame import GAME
from tinygame.brain import respond

from starharness.npc import LimitsSettings, ServerSettings


async def _error(client: Client, frame: dict[str, Any] | str | bytes) -> dict[str, Any]:
    """Send `frame`, expect an error, and check the connection still answers a hello."""
    await client.send(frame)
    error = await client.recv()
    assert error["t"] == "error", error
    await client.send({"t": "hello", "playerId": "p1"})
    assert (await client.recv())["t"] == "welcome"
    return error


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"id": "e1"}', "no 't' field"),
        ('{"t": "encounter.shout", "id": "e1"}', "unknown frame type"),
        ('{"t": "encounter.open", "id": "e1", "playerId": "p1"}', "'npcId' is required"),
        ('{"t": "encounter.say", "id": "e1", "text": "a", "optionId": "b"}', "got both"),
        ('{"t": "encounter.say", "id": "e1"}', "got neither"),
        ('{"t": "world.tick", "days": "3"}', "days"),
        ('{"t": "action", "id": "e1", "name": "sell_bread", "ok": true}', "unknown frame type"),
        (b'{"t": "hello", "playerId": "p1"}', "not binary"),
    ],
)
async def test_malformed_frames_get_bad_frame(
    tmp_path: Path, frame: str | bytes, words: str
) -> None:
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        error = await _error(client, frame)
        assert error["code"] == "bad_frame"
        assert words in error["message"]


async def test_a_bad_frame_names_its_encounter_when_it_can(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        error = await _error(client, {"t": "encounter.say", "id": "e7", "text": ""})
        assert error["code"] == "bad_frame" and error["id"] == "e7"


async def test_unknown_encounters_npcs_and_players(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        say = await _error(client, {"t": "encounter.say", "id": "nope", "text": "hi"})
        assert (say["code"], say["id"]) == ("unknown_encounter", "nope")
        close = await _error(client, {"t": "encounter.close", "id": "nope"})
        assert close["code"] == "unknown_encounter"
        npc = await _error(
            client, {"t": "encounter.open", "id": "e1", "npcId": "n-ghost", "playerId": "p1"}
        )
        assert npc["code"] == "unknown_npc" and "n-ghost" in npc["message"]
        player = await _error(
            client, {"t": "encounter.open", "id": "e1", "npcId": "n-baker", "playerId": "p9"}
        )
        # `_error` bound this connection to p1 with its hello: acting for p9 is forbidden.
        assert player["code"] == "forbidden" and "p9" in player["message"]
        async with stack.client() as fresh:
            await fresh.send(
                {"t": "encounter.open", "id": "e1", "npcId": "n-baker", "playerId": "p9"}
            )
            unknown = await fresh.recv()
            assert unknown["code"] == "unknown_player" and "p9" in unknown["message"]
            # An NPC's id is no player's, though Bea stands where she stands.
            await fresh.send(
                {"t": "encounter.open", "id": "e2", "npcId": "n-baker", "playerId": "n-baker"}
            )
            itself = await fresh.recv()
            assert itself["code"] == "unknown_player" and "n-baker" in itself["message"]
        far = await _error(
            client, {"t": "encounter.open", "id": "e1", "npcId": "n-smith", "playerId": "p1"}
        )
        assert far["code"] == "npc_unavailable" and "Tor" in far["message"]
        stack.world.set("UPDATE actors SET alive = 0 WHERE id = 'n-baker'")
        dead = await _error(
            client, {"t": "encounter.open", "id": "e1", "npcId": "n-baker", "playerId": "p1"}
        )
        assert dead["code"] == "npc_unavailable" and "not alive" in dead["message"]
        assert stack.running.server.encounters == []
        assert stack.mock.requests == []


async def test_a_hello_binds_the_connection_to_its_player(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path) as stack, stack.client() as client:
        await client.send({"t": "hello", "playerId": "p9"})
        assert (await client.recv())["code"] == "unknown_player"
        await client.send({"t": "hello", "playerId": "p2"})
        assert (await client.recv())["t"] == "welcome"
        other = {"t": "encounter.open", "id": "e1", "npcId": "n-baker", "playerId": "p1"}
        await client.send(other)
        refused = await client.recv()
        assert refused["code"] == "forbidden" and "p2" in refused["message"]
        await client.send({"t": "hello", "playerId": "p1"})
        assert (await client.recv())["code"] == "forbidden"


async def test_limits_get_clear_errors(tmp_path: Path) -> None:
    limits = LimitsSettings(
        max_frame_bytes=1024,
        max_encounters=1,
        says_per_second=0.001,
        say_burst=1,
        max_text_chars=20,
        max_tick_days=7,
    )
    settings = ServerSettings(port=0, limits=limits)
    async with (
        serving(GAME, tmp_path, settings, responder=respond) as stack,
        stack.client() as client,
    ):
        big = json.dumps({"t": "hello", "playerId": "p1", "pad": "x" * 2000})
        too_big = await _error(client, big)
        assert too_big["code"] == "limit" and "1024 bytes" in too_big["message"]

        await client.open("e1", "n-baker", "p1")
        second = await _error(
            client, {"t": "encounter.open", "id": "e2", "npcId": "n-baker", "playerId": "p1"}
        )
        assert second["code"] == "limit" and "at most 1 encounters" in second["message"]

        long = await _error(client, {"t": "encounter.say", "id": "e1", "text": "y" * 21})
        assert long["code"] == "limit" and "21 characters" in long["message"]

        assert spoken(await client.say("e1", "hello")) == "You said: hello"
        fast = await _error(client, {"t": "encounter.say", "id": "e1", "text": "again"})
        assert fast["code"] == "limit" and "per second" in fast["message"]

        days = await _error(client, {"t": "world.tick", "days": 8})
        assert days["code"] == "limit" and "7 days" in days["message"]


async def test_world_tick_broadcasts_world_events_to_every_connection(tmp_path: Path) -> None:
    async with (
        serving(GAME, tmp_path) as stack,
        stack.client() as first,
        stack.client() as second,
    ):
        await second.send({"t": "hello", "playerId": "p2"})
        assert (await second.recv())["t"] == "welcome"
        await first.send({"t": "world.tick", "days": 2})
        expected = [
            {"t": "world.event", "locationId": "forge", "headline": "Day 2 dawns."},
            {"t": "world.event", "locationId": "square", "headline": "Day 3 dawns."},
        ]
        assert [await first.recv(), await first.recv()] == expected
        assert [await second.recv(), await second.recv()] == expected
        hud = await second.recv()  # the tick changed p2's view (the day)
        assert hud["t"] == "hud" and hud["data"]["day"] == 3
