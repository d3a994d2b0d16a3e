"""The framework's read side: NPC cards, meeting rules and the HUD."""

from __future__ import annotations

import json

import pytest

from starharness.npc import ReadsMeetings
from starharness.voyage import GAME, VoyageWorld
from starharness.voyage.content import (
    BROKER,
    DOCK_MASTER,
    FIXER,
    KESSLER,
    OMEGA,
    PLAYER_ID,
    SMUGGLER,
)
from starharness.voyage.store import UnknownEntityError, attitude_word


@pytest.fixture
def world(placed_world: VoyageWorld) -> VoyageWorld:
    """Every test here runs on SQLite and on PostgreSQL."""
    return placed_world


def test_npc_cards_carry_persona_and_place(world: VoyageWorld) -> None:
    cards = {card.id: card for card in world.npcs()}
    assert set(cards) >= {SMUGGLER, DOCK_MASTER, BROKER}
    smuggler = cards[SMUGGLER]
    assert smuggler.location_id == OMEGA and smuggler.alive
    assert "Rusty Nebula" in smuggler.persona and "player's language" in smuggler.persona
    assert world.npc(SMUGGLER) == smuggler
    assert world.npc(PLAYER_ID) is None
    assert world.npc("nobody") is None
    # Archetypes are shared kinds (Karsk and Vex are both fixers), each declared by the game.
    assert {card.archetype for card in cards.values()} <= {a.name for a in GAME.archetypes}
    assert cards[SMUGGLER].archetype == cards[BROKER].archetype == FIXER


def test_players_are_players(world: VoyageWorld) -> None:
    assert world.has_player(PLAYER_ID)
    assert not world.has_player(SMUGGLER)
    assert not world.has_player("nobody")


def test_meeting_needs_the_same_place_and_a_living_npc(world: VoyageWorld) -> None:
    assert world.can_meet(SMUGGLER, PLAYER_ID)
    assert not world.can_meet(BROKER, PLAYER_ID)
    with world.transaction() as tx:
        tx.move_actor(PLAYER_ID, KESSLER)
    assert world.can_meet(BROKER, PLAYER_ID)
    assert not world.can_meet(SMUGGLER, PLAYER_ID)
    with world.transaction() as tx:
        tx.set_alive(BROKER, False)
    assert not world.can_meet(BROKER, PLAYER_ID)
    assert not world.can_meet("nobody", PLAYER_ID)
    # False, not an error, for a player who does not exist.
    assert not world.can_meet(SMUGGLER, "nobody")
    assert not world.can_meet(SMUGGLER, BROKER)


def _meetings_agree(world: VoyageWorld) -> int:
    """`meeting` says what `npc`, `has_player`, `can_meet` and `attitude` say; how many met."""
    ids = [card.id for card in world.npcs()] + [PLAYER_ID, "nobody"]
    met = 0
    for npc_id in ids:
        for player_id in ids:
            found = world.meeting(npc_id, player_id)
            card = world.npc(npc_id)
            if card is None:
                assert found is None, (npc_id, player_id)
                continue
            assert found is not None and found.npc == card, (npc_id, player_id)
            can = world.has_player(player_id) and world.can_meet(npc_id, player_id)
            assert found.can_meet == can, (npc_id, player_id)
            assert found.attitude == world.attitude(npc_id, player_id), (npc_id, player_id)
            met += can
    return met


def test_one_meeting_read_says_what_the_separate_reads_say(world: VoyageWorld) -> None:
    assert isinstance(world, ReadsMeetings)
    at_omega = _meetings_agree(world)
    assert at_omega >= 1
    with world.transaction() as tx:
        tx.move_actor(PLAYER_ID, KESSLER)
        tx.set_attitude(BROKER, PLAYER_ID, 40)
    assert _meetings_agree(world) >= 1
    found = world.meeting(BROKER, PLAYER_ID)
    assert found is not None and (found.can_meet, found.attitude) == (True, 40)
    with world.transaction() as tx:
        tx.set_alive(BROKER, False)
    _meetings_agree(world)
    found = world.meeting(BROKER, PLAYER_ID)
    assert found is not None and not found.can_meet and not found.npc.alive


def test_the_broker_starts_hostile(world: VoyageWorld) -> None:
    assert attitude_word(world.attitude(BROKER, PLAYER_ID)) == "hostile"
    assert "(hostile)" in world.scene(BROKER, PLAYER_ID)
    assert world.attitude(SMUGGLER, "never-met") == 0


def test_player_view_is_json_and_follows_the_world(world: VoyageWorld) -> None:
    view = world.player_view(PLAYER_ID)
    assert view == json.loads(json.dumps(view))
    assert view["credits"] == 12_000 and view["cargo"] == [] and view["day"] == 1
    place = view["location"]
    assert (place["id"], place["name"]) == (OMEGA, "Omega station")
    assert place["description"].startswith("The Rusty Nebula")
    assert [person["id"] for person in place["people"]] == [DOCK_MASTER, SMUGGLER]
    with world.transaction() as tx:
        tx.move_cargo(SMUGGLER, PLAYER_ID, "medgel", 2)
        tx.add_credits(PLAYER_ID, -2_200)
    view = world.player_view(PLAYER_ID)
    assert view["credits"] == 9_800
    assert view["cargo"] == [{"goodId": "medgel", "name": "medical gel", "qty": 2}]


def test_player_view_carries_each_npcs_attitude(world: VoyageWorld) -> None:
    before = world.player_view(PLAYER_ID)["attitudes"]
    assert before[BROKER] == world.attitude(BROKER, PLAYER_ID)
    assert all(-100 <= score <= 100 for score in before.values())
    lowered = world.attitude(SMUGGLER, PLAYER_ID) - 7
    with world.transaction() as tx:
        tx.set_attitude(SMUGGLER, PLAYER_ID, lowered)
    after = world.player_view(PLAYER_ID)["attitudes"]
    assert after[SMUGGLER] == world.attitude(SMUGGLER, PLAYER_ID)
    assert after[SMUGGLER] == before.get(SMUGGLER, 0) - 7
    assert {k: v for k, v in after.items() if k != SMUGGLER} == {
        k: v for k, v in before.items() if k != SMUGGLER
    }


def test_player_view_of_an_unknown_player_is_a_clear_error(world: VoyageWorld) -> None:
    with pytest.raises(UnknownEntityError, match="no player with id 'player-9'"):
        world.player_view("player-9")


def test_a_closed_world_says_so(world: VoyageWorld) -> None:
    world.close()
    with pytest.raises(Exception, match="is closed"):
        world.npcs()
