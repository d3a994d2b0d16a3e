"""Two players in one scene, through the real server and real WebSockets: Omega station's bar
(Jonah Karsk and Ilse Brandt) played by the offline brain behind the mock LLM over HTTP, each
player connected with their own player token. Each player's deals stay their own (credits and
the world's audit), the other's pick of an offer is refused, both see every NPC line and each
other's words, one floor for the scene, each NPC hears the other player, a player leaving
closes only their encounters, and hostile joins are refused with the connection living on."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from npc_support import Client, Stack, eventually, serving, spoken

from starharness.mockllm import ChatRequest, Step
from starharness.npc import ServerSettings
from starharness.npc.frames import EncounterOpen, FrameError, encode, parse_up_frame
from starharness.npc.identity import mint_player_token
from starharness.npc.server.scene import HEARD_HEADING
from starharness.npc.server.settings import IdentitySettings
from starharness.voyage import GAME, open_world
from starharness.voyage.content import (
    BROKER,
    DOCK_MASTER,
    KESSLER,
    OMEGA,
    OMEGA_STATION,
    PLAYER_ID,
    SMUGGLER,
    ActorSeed,
)

Frame = dict[str, Any]
SECRET_ENV = "STAR_HARNESS_TEST_SCENE_SECRET"
SECRET = "a-player-token-secret-of-forty-characters"
ASH = PLAYER_ID  # Captain Ash, 12,000 cr
BIRCH = "player-birch"
CORA = "player-cora"  # at Kessler's Hollow, not at the bar
BAR = [SMUGGLER, DOCK_MASTER]
_SEED = dataclasses.replace(
    OMEGA_STATION,
    actors=(
        *OMEGA_STATION.actors,
        ActorSeed(BIRCH, "Captain Birch", "player", "captain", OMEGA, 50_000),
        ActorSeed(CORA, "Captain Cora", "player", "captain", KESSLER, 9_000),
    ),
)
_BRAIN = GAME.offline_responder
assert _BRAIN is not None
BRAIN: Callable[[ChatRequest], Step] = _BRAIN


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)


@asynccontextmanager
async def _bar(
    tmp_path: Path, responder: Callable[[ChatRequest], Any] = BRAIN
) -> AsyncIterator[Stack]:
    """Omega station with a second captain at the bar and a third at Kessler's Hollow, served
    with player tokens."""
    world = tmp_path / "world.db"
    open_world(world, seed=_SEED).close()
    settings = ServerSettings(port=0, world=world, identity=IdentitySettings(secret_env=SECRET_ENV))
    async with serving(GAME, tmp_path, settings, responder=responder) as stack:
        yield stack


@asynccontextmanager
async def _player(stack: Stack, player_id: str) -> AsyncIterator[Client]:
    """A connection with `player_id`'s own token, welcomed."""
    token = mint_player_token(SECRET, player_id)
    async with stack.client(headers={"Authorization": f"Bearer {token}"}) as client:
        await client.send({"t": "hello", "playerId": player_id})
        assert (await client.recv())["t"] == "welcome"
        yield client


def _join(scene_id: str, player_id: str, npc_ids: list[str] = BAR) -> Frame:
    return {
        "t": "encounter.open",
        "id": scene_id,
        "npcId": npc_ids[0],
        "npcIds": npc_ids,
        "playerId": player_id,
        "join": True,
    }


async def _say(client: Client, scene_id: str, **say: str) -> list[Frame]:
    await client.send({"t": "encounter.say", "id": scene_id, **say})
    return await client.until_idle(scene_id)


async def _error(client: Client) -> Frame:
    return (await client.until(lambda f: f["t"] == "error"))[-1]


def _lines(frames: list[Frame]) -> list[tuple[str, str]]:
    """Each line of `frames` (who said it, the text), in order."""
    lines: list[tuple[str, str]] = []
    text: list[str] = []
    for frame in frames:
        if frame["t"] == "say.delta":
            text.append(frame["text"])
        elif frame["t"] == "say.end":
            lines.append((frame["speakerId"], "".join(text)))
            text.clear()
    return lines


def _offer(frames: list[Frame]) -> Frame:
    items = [f for f in frames if f["t"] == "options"][-1]["items"]
    return next(item for item in items if "offer" in item)


def _credits(stack: Stack, player_id: str) -> int:
    return int(stack.world.player_view(player_id)["credits"])


def _deals(stack: Stack) -> list[tuple[str, str | None, bool]]:
    """The world's audit of committed buys: (actor, target, ok), oldest first."""
    with stack.world.snapshot() as reader:
        rows = reader.audit_log(500)
    return [(r.actor_id, r.target_id, r.ok) for r in reversed(rows) if r.action == "player_buys"]


def _heard(stack: Stack, npc_id: str, player_id: str) -> list[str]:
    session = next(
        e.session_id
        for e in stack.running.server.encounters
        if e.npc.id == npc_id and e.player_id == player_id
    )
    return [
        str(m["content"])
        for request in stack.mock.requests_for(session)
        for m in request.body["messages"]
        if m["role"] == "user" and str(m["content"]).startswith(HEARD_HEADING)
    ]


async def test_two_players_in_one_scene_each_deal_only_as_themselves(
    tmp_path: Path, secret: None
) -> None:
    async with (
        _bar(tmp_path) as stack,
        _player(stack, ASH) as ash,
        _player(stack, BIRCH) as birch,
    ):
        await ash.send(_join("s1", ASH))
        opening = await ash.until_idle("s1")
        assert opening[0]["t"] == "encounter.opened" and [s for s, _ in _lines(opening)] == [
            SMUGGLER
        ]
        # Birch joins the open scene under an id of his own: no greeting, the floor is free.
        await birch.send(_join("b1", BIRCH))
        joined = await birch.until_idle("b1")
        assert [f["t"] for f in joined] == ["encounter.opened", "scene.players", "encounter.idle"]
        assert [n["id"] for n in joined[0]["npcs"]] == BAR
        assert len(stack.running.server.open_encounters.shared_scenes) == 1

        ash_asks = await _say(ash, "s1", text="Karsk, I want to buy 2 medical gel")
        birch_saw = await birch.until_idle("b1")
        offer = _offer(ash_asks)
        assert offer["offer"]["action"] == "player_buys"
        # Birch hears Ash's words and Karsk's answer, never Ash's options.
        assert _lines(birch_saw)[0] == (ASH, "Karsk, I want to buy 2 medical gel")
        assert birch_saw[0]["speakerName"] == "Captain Ash"
        assert _lines(birch_saw)[1:] == _lines(ash_asks)
        assert not [f for f in birch_saw if f["t"] in ("options", "action")]
        assert all(f["id"] == "b1" for f in birch_saw)

        # Ash's offer is not Birch's to take: refused, and his connection serves on.
        await birch.send({"t": "encounter.say", "id": "b1", "optionId": offer["id"]})
        refused = await _error(birch)
        assert (refused["code"], refused["id"]) == ("bad_option", "b1")
        assert _credits(stack, ASH) == 12_000 and _credits(stack, BIRCH) == 50_000

        bought = await _say(ash, "s1", optionId=offer["id"])
        birch_saw_deal = await birch.until_idle("b1")
        actions = [f for f in bought if f["t"] == "action"]
        assert [(f["ok"], f["speakerId"]) for f in actions] == [(True, SMUGGLER)]
        assert not [f for f in birch_saw_deal if f["t"] in ("options", "action")]
        assert _lines(birch_saw_deal)[1:] == _lines(bought)
        assert _credits(stack, ASH) == 12_000 - 2 * 1_100
        assert _credits(stack, BIRCH) == 50_000

        # Birch's own deal, with his own offer, moves only his credits.
        birch_asks = await _say(birch, "b1", text="Karsk, I want to buy 1 medical gel")
        ash_saw = await ash.until_idle("s1")
        assert _lines(ash_saw)[0] == (BIRCH, "Karsk, I want to buy 1 medical gel")
        assert _lines(ash_saw)[1:] == _lines(birch_asks)
        await _say(birch, "b1", optionId=_offer(birch_asks)["id"])
        await ash.until_idle("s1")
        assert _credits(stack, BIRCH) == 50_000 - 1_100
        assert _credits(stack, ASH) == 12_000 - 2 * 1_100
        # The audit holds one committed buy for each player, each from their own encounter.
        assert _deals(stack) == [(SMUGGLER, ASH, True), (SMUGGLER, BIRCH, True)]

        # Karsk's encounter with Birch heard Ash ask, and what Karsk answered him; Brandt's
        # with Ash heard Birch ask Karsk.
        karsk_birch = _heard(stack, SMUGGLER, BIRCH)
        assert any(
            'Captain Ash, to Jonah Karsk: "Karsk, I want to buy 2 medical gel"' in text
            and 'You, to Captain Ash: "' in text
            for text in karsk_birch
        ), karsk_birch
        await _say(ash, "s1", text="Brandt, what is the news?")
        await birch.until_idle("b1")
        brandt_ash = _heard(stack, DOCK_MASTER, ASH)
        assert any(
            'Captain Birch, to Jonah Karsk: "Karsk, I want to buy 1 medical gel"' in text
            and 'Jonah Karsk, to Captain Birch: "' in text
            for text in brandt_ash
        ), brandt_ash


def _held(gate: asyncio.Event, arrived: asyncio.Event) -> Callable[[ChatRequest], Any]:
    """The offline brain, but each request waits for `gate` (and says it `arrived`)."""

    async def respond(request: ChatRequest) -> Step:
        arrived.set()
        await gate.wait()
        return BRAIN(request)

    return respond


async def test_one_floor_for_the_scene_across_players(tmp_path: Path, secret: None) -> None:
    gate, arrived = asyncio.Event(), asyncio.Event()
    gate.set()
    async with (
        _bar(tmp_path, _held(gate, arrived)) as stack,
        _player(stack, ASH) as ash,
        _player(stack, BIRCH) as birch,
    ):
        await ash.send(_join("s1", ASH))
        await ash.until_idle("s1")
        await birch.send(_join("b1", BIRCH))
        await birch.until_idle("b1")
        gate.clear()
        arrived.clear()
        await ash.send({"t": "encounter.say", "id": "s1", "text": "Brandt, any news?"})
        await arrived.wait()
        # Ash's round runs: Birch's line is refused, not queued, and says whose floor it is.
        await birch.send({"t": "encounter.say", "id": "b1", "text": "Karsk, hello"})
        busy = await _error(birch)
        assert busy["code"] == "busy" and "Captain Ash" in busy["message"], busy
        gate.set()
        ash_round = await ash.until_idle("s1")
        birch_round = await birch.until_idle("b1")
        assert [s for s, _ in _lines(ash_round)] == [DOCK_MASTER]
        assert [s for s, _ in _lines(birch_round)] == [ASH, DOCK_MASTER]
        # The floor is free again, for either player.
        answered = await _say(birch, "b1", text="Karsk, hello")
        assert [s for s, _ in _lines(answered)] == [SMUGGLER]
        assert spoken(answered)
        await ash.until_idle("s1")


async def test_a_player_leaving_closes_only_their_encounters(tmp_path: Path, secret: None) -> None:
    async with _bar(tmp_path) as stack:
        server = stack.running.server
        async with _player(stack, ASH) as ash:
            await ash.send(_join("s1", ASH))
            await ash.until_idle("s1")
            async with _player(stack, BIRCH) as birch:
                await birch.send(_join("b1", BIRCH))
                await birch.until_idle("b1")
                assert len(server.encounters) == 4
                await birch.send({"t": "encounter.close", "id": "b1"})
                await eventually(lambda: len(server.encounters) == 2)
                assert {e.player_id for e in server.encounters} == {ASH}
                # Ash's scene goes on without Birch, who sees nothing more of it.
                frames = await _say(ash, "s1", text="Karsk, what do you sell?")
                assert [s for s, _ in _lines(frames)] == [SMUGGLER]
                # Birch's connection serves on: he joins again, Ash's scene still.
                await birch.send(_join("b2", BIRCH))
                again = await birch.until_idle("b2")
                assert [f["t"] for f in again] == [
                    "encounter.opened",
                    "scene.players",
                    "encounter.idle",
                ]
            # Birch's disconnect is his leaving too.
            await eventually(lambda: {e.player_id for e in server.encounters} == {ASH})
            assert len(server.open_encounters.shared_scenes) == 1
        # The last player gone, the scene is gone.
        await eventually(
            lambda: server.encounters == [] and server.open_encounters.shared_scenes == []
        )
        async with _player(stack, BIRCH) as birch:
            await birch.send(_join("b3", BIRCH))
            fresh = await birch.until_idle("b3")
            # A new scene: its first player is greeted.
            assert [s for s, _ in _lines(fresh)] == [SMUGGLER]


def _present(frame: Frame) -> list[tuple[str, str]]:
    assert frame["t"] == "scene.players", frame
    return [(p["id"], p["name"]) for p in frame["players"]]


async def _notice(client: Client) -> Frame:
    return (await client.until(lambda f: f["t"] == "scene.players"))[-1]


ASH_HERE = (ASH, "Captain Ash")
BIRCH_HERE = (BIRCH, "Captain Birch")


async def test_every_player_is_told_who_joins_and_who_leaves(tmp_path: Path, secret: None) -> None:
    async with _bar(tmp_path) as stack, _player(stack, ASH) as ash:
        await ash.send(_join("s1", ASH))
        opening = await ash.until_idle("s1")
        # The scene's first player is told it is theirs alone, right after it opened.
        assert [f["t"] for f in opening[:2]] == ["encounter.opened", "scene.players"]
        assert opening[1]["id"] == "s1" and _present(opening[1]) == [ASH_HERE]
        async with _player(stack, BIRCH) as birch:
            await birch.send(_join("b1", BIRCH))
            joined = await birch.until_idle("b1")
            # The one joining learns who is there; Ash, under his own id, that Birch came.
            assert (joined[1]["id"], _present(joined[1])) == ("b1", [ASH_HERE, BIRCH_HERE])
            came = await _notice(ash)
            assert (came["id"], _present(came)) == ("s1", [ASH_HERE, BIRCH_HERE])
            await birch.send({"t": "encounter.close", "id": "b1"})
            left = await _notice(ash)
            assert (left["id"], _present(left)) == ("s1", [ASH_HERE])
            await birch.send(_join("b2", BIRCH))
            await birch.until_idle("b2")
            assert _present(await _notice(ash)) == [ASH_HERE, BIRCH_HERE]
        # Birch's connection is gone: a disconnect is a leaving too.
        gone = await _notice(ash)
        assert (gone["id"], _present(gone)) == ("s1", [ASH_HERE])
        # Nothing else came: the next frames are the round's.
        frames = await _say(ash, "s1", text="Karsk, what do you sell?")
        assert not [f for f in frames if f["t"] == "scene.players"]


async def test_a_player_taken_away_by_a_deal_is_seen_to_leave(tmp_path: Path, secret: None) -> None:
    async with (
        _bar(tmp_path) as stack,
        _player(stack, ASH) as ash,
        _player(stack, BIRCH) as birch,
    ):
        await ash.send(_join("s1", ASH))
        await ash.until_idle("s1")
        await birch.send(_join("b1", BIRCH))
        await birch.until_idle("b1")
        assert _present(await _notice(ash)) == [ASH_HERE, BIRCH_HERE]
        asked = await _say(birch, "b1", text="Brandt, I need passage to Ceres Deep")
        await ash.until_idle("s1")
        passage = next(
            item
            for item in [f for f in asked if f["t"] == "options"][-1]["items"]
            if item.get("offer", {}).get("action") == "book_passage"
        )
        await _say(birch, "b1", optionId=passage["id"])
        left = await _notice(ash)
        assert (left["id"], _present(left)) == ("s1", [ASH_HERE])


async def test_a_deal_that_takes_one_player_away_leaves_the_other_in_the_scene(
    tmp_path: Path, secret: None
) -> None:
    async with (
        _bar(tmp_path) as stack,
        _player(stack, ASH) as ash,
        _player(stack, BIRCH) as birch,
    ):
        server = stack.running.server
        await ash.send(_join("s1", ASH))
        await ash.until_idle("s1")
        await birch.send(_join("b1", BIRCH))
        await birch.until_idle("b1")
        asked = await _say(birch, "b1", text="Brandt, I need passage to Ceres Deep")
        await ash.until_idle("s1")
        passage = next(
            item
            for item in [f for f in asked if f["t"] == "options"][-1]["items"]
            if item.get("offer", {}).get("action") == "book_passage"
        )
        booked = await _say(birch, "b1", optionId=passage["id"])
        ash_saw = await ash.until_idle("s1")
        assert [(f["ok"], f["speakerId"]) for f in booked if f["t"] == "action"] == [
            (True, DOCK_MASTER)
        ]
        assert not [f for f in ash_saw if f["t"] == "action"]
        # Birch is gone to Ceres Deep, and out of the scene; Ash is still in it.
        await eventually(lambda: {e.player_id for e in server.encounters} == {ASH})
        await birch.send({"t": "encounter.say", "id": "b1", "text": "Karsk?"})
        assert (await _error(birch))["code"] == "unknown_encounter"
        frames = await _say(ash, "s1", text="Karsk, what do you sell?")
        assert [s for s, _ in _lines(frames)] == [SMUGGLER]
        assert len(server.encounters) == 2 and len(server.open_encounters.shared_scenes) == 1


async def test_a_scene_opened_without_join_stays_private(tmp_path: Path, secret: None) -> None:
    async with (
        _bar(tmp_path) as stack,
        _player(stack, ASH) as ash,
        _player(stack, BIRCH) as birch,
    ):
        private = {k: v for k, v in _join("s1", ASH).items() if k != "join"}
        await ash.send(private)
        await ash.until_idle("s1")
        await birch.send(_join("b1", BIRCH))
        greeted = await birch.until_idle("b1")
        assert [s for s, _ in _lines(greeted)] == [SMUGGLER]  # a scene of his own
        frames = await _say(birch, "b1", text="Karsk, what do you sell?")
        mine = await _say(ash, "s1", text="Brandt, any news?")
        assert [s for s, _ in _lines(frames)] == [SMUGGLER]
        # Ash's private scene heard nothing of Birch, and its frames are revision 2's.
        assert [s for s, _ in _lines(mine)] == [DOCK_MASTER]
        assert not [f for f in mine if "speakerName" in f or f.get("speakerId") == BIRCH]


async def test_a_private_scene_is_never_told_who_is_there(tmp_path: Path, secret: None) -> None:
    async with (
        _bar(tmp_path) as stack,
        _player(stack, ASH) as ash,
        _player(stack, BIRCH) as birch,
    ):
        private = {k: v for k, v in _join("s1", ASH).items() if k != "join"}
        await ash.send(private)
        seen = await ash.until_idle("s1")
        # Birch at the same bar, in a shared scene of the same NPCs, comes and goes.
        await birch.send(_join("b1", BIRCH))
        await birch.until_idle("b1")
        await birch.send({"t": "encounter.close", "id": "b1"})
        await birch.send(_join("b2", BIRCH))
        await birch.until_idle("b2")
        # Frames to Ash for any of that would be queued before his round's.
        seen += await _say(ash, "s1", text="Brandt, any news?")
        assert not [f for f in seen if f["t"] == "scene.players"], seen


@pytest.mark.parametrize(
    ("who", "frame", "code", "says"),
    [
        # At Kessler's Hollow: the bar's scene is at another place.
        (CORA, _join("c1", CORA), "npc_unavailable", "Jonah Karsk"),
        # Birch's token, Ash's name.
        (BIRCH, _join("b1", ASH), "forbidden", BIRCH),
        # Already in the scene (Ash's second join, under a fresh id).
        (ASH, _join("s2", ASH), "encounter_exists", "already in this scene"),
        # Forged frames: a join naming no scene, a join flag that is not a boolean.
        (
            BIRCH,
            {"t": "encounter.open", "id": "b1", "npcId": SMUGGLER, "playerId": BIRCH, "join": True},
            "bad_frame",
            "'join' needs 'npcIds'",
        ),
        (BIRCH, {**_join("b1", BIRCH), "join": "yes"}, "bad_frame", "join"),
        # Ash's scene id on Birch's connection: ids are the connection's own.
        (BIRCH, {"t": "encounter.say", "id": "s1", "text": "hi"}, "unknown_encounter", "s1"),
        # A player is not an NPC to address.
        (ASH, {"t": "encounter.say", "id": "s1", "text": "hi", "to": BIRCH}, "unknown_npc", BIRCH),
    ],
)
async def test_a_hostile_join_is_refused_and_the_connection_lives_on(
    tmp_path: Path, secret: None, who: str, frame: Frame, code: str, says: str
) -> None:
    async with AsyncExitStack() as inside:
        stack = await inside.enter_async_context(_bar(tmp_path))
        ash = await inside.enter_async_context(_player(stack, ASH))
        await ash.send(_join("s1", ASH))
        await ash.until_idle("s1")
        client = ash if who == ASH else await inside.enter_async_context(_player(stack, who))
        await client.send(frame)
        error = await _error(client)
        assert error["code"] == code and says in error["message"], error
        # Nothing of the refused join stays open, and the connection serves on.
        assert {e.player_id for e in stack.running.server.encounters} == {ASH}
        if who == CORA:
            await client.send(_join("c2", CORA, [BROKER]))
            frames = await client.until_idle("c2")
        elif who == BIRCH:
            await client.send(_join("b9", BIRCH))
            frames = await client.until_idle("b9")
        else:
            frames = await _say(ash, "s1", text="Karsk, what do you sell?")
        assert frames[-1]["t"] == "encounter.idle"
        assert not [f for f in frames if f["t"] == "error"], frames


_ids = st.text(st.characters(categories=["L", "N", "P"]), min_size=1, max_size=8)


@given(
    scene_id=_ids,
    player=_ids,
    npcs=st.lists(_ids, min_size=1, max_size=4, unique=True),
    join=st.none() | st.booleans() | st.integers() | st.text(max_size=3) | st.just([]),
    scene=st.booleans(),
)
def test_join_parses_only_as_a_boolean_on_a_scene_and_leaves_old_frames_unchanged(
    scene_id: str, player: str, npcs: list[str], join: object, scene: bool
) -> None:
    frame: Frame = {"t": "encounter.open", "id": scene_id, "npcId": npcs[0], "playerId": player}
    if scene:
        frame["npcIds"] = npcs
    if join is not None:
        frame["join"] = join
    raw = json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
    valid_join = join is None or isinstance(join, bool)
    if not valid_join or (join is True and not scene):
        with pytest.raises(FrameError) as refused:
            parse_up_frame(raw)
        assert refused.value.code == "bad_frame" and "join" in refused.value.message
        return
    parsed = parse_up_frame(raw)
    assert isinstance(parsed, EncounterOpen)
    assert parsed.join == join
    # A frame without `join` is exactly what revision 2 sent: it encodes back byte for byte.
    assert encode(parsed) == raw
