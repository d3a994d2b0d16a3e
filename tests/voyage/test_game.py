"""The Omega station Game object: what the framework serves, and how a visit is remembered."""

from __future__ import annotations

from pathlib import Path

from voyage_action_support import Bench

from starharness.npc import CommittedAction, GameKit
from starharness.voyage import GAME, PROTOCOL_TEXT, VoyageHud, VoyageWorld, open_game_world
from starharness.voyage.actions import MOODS, SPEAK, SPEECH
from starharness.voyage.content import ATTITUDE_RANGE, PLAYER_ID, SMUGGLER, SPEECH_ACTION
from starharness.voyage.game import play_offline


def test_the_game_declares_its_contract() -> None:
    assert GAME.speech is SPEECH
    assert (SPEECH.tool_name, SPEECH.line_field, SPEECH.mood_field, SPEECH.options_field) == (
        SPEECH_ACTION,
        "line",
        "mood",
        "options",
    )
    assert GAME.protocol_text == PROTOCOL_TEXT
    assert GAME.moods == MOODS and GAME.default_mood in MOODS
    assert GAME.attitude_range == ATTITUDE_RANGE
    assert GAME.greets_first is True
    # One offline brain for every agent of the game: the director's requests go to its own.
    assert GAME.offline_responder is play_offline
    assert [resident.name for resident in GAME.residents] == ["director"]
    assert SPEAK in GAME.actions


def test_the_framework_resolves_the_game() -> None:
    kit = GameKit.of(GAME)
    assert kit.speech_tool is SPEAK
    names = [tool.name for tool in kit.tools]
    assert len(names) == len(set(names)) == len(GAME.actions)
    line = kit.speech_tool.schema.parameters["properties"]
    assert list(line) == ["line", "mood", "options"]
    assert line["mood"]["enum"] == list(MOODS)


def test_the_world_opener_creates_and_reopens_a_world(tmp_path: Path) -> None:
    path = tmp_path / "omega.db"
    with open_game_world(path) as first:
        assert first.has_player(PLAYER_ID)
        with first.transaction() as tx:
            tx.add_credits(PLAYER_ID, 1)
    world = GAME.open_world(path)
    assert isinstance(world, VoyageWorld)
    try:
        assert world.player_view(PLAYER_ID)["credits"] == 12_001
    finally:
        world.close()


def test_the_hud_model_describes_the_player_view(world: VoyageWorld) -> None:
    view = world.player_view(PLAYER_ID)
    hud = VoyageHud.model_validate(view)
    assert hud.model_dump() == view
    with world.transaction() as tx:
        tx.add_cargo(PLAYER_ID, "fuel", 3)
    assert VoyageHud.model_validate(world.player_view(PLAYER_ID)).cargo[0].qty == 3
    assert GAME.hud_model is VoyageHud


async def test_closing_an_encounter_remembers_the_visit(world: VoyageWorld) -> None:
    bench = Bench(world)
    await bench.call("player_buys", good_id="fuel", qty=5, unit_price=450)
    committed = [CommittedAction(r.name, r.arguments, r.summary) for r in bench.reports if r.ok] + [
        CommittedAction(SPEECH_ACTION, {"line": "Done."}, "Done.")
    ]
    card = world.npc(SMUGGLER)
    assert card is not None and GAME.on_encounter_end is not None
    GAME.on_encounter_end(world, card, PLAYER_ID, committed)
    with world.snapshot() as reader:
        memory = reader.memories(SMUGGLER, PLAYER_ID)[-1]
    assert memory.kind == "visit"
    assert memory.text == "They came by. Bought 5 fuel cells for 2,250 credits."
    scene = world.scene(SMUGGLER, PLAYER_ID)
    assert "They bought 5 fuel cells for 2,250" in scene
    assert "They came by. Bought 5 fuel cells" in scene


def test_a_visit_without_deals_is_remembered_as_talk(world: VoyageWorld) -> None:
    card = world.npc(SMUGGLER)
    assert card is not None and GAME.on_encounter_end is not None
    GAME.on_encounter_end(world, card, PLAYER_ID, [])
    with world.snapshot() as reader:
        memory = reader.memories(SMUGGLER, PLAYER_ID)[-1]
    assert memory.text == "They came by and talked; no deal was made."
