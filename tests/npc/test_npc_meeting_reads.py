"""The meeting's reads: one statement on a world offering `meeting`, else one read transaction
where the world offers it; fresh on every open, and a non-player never meets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import pytest
from tinygame.world import TinyWorld

from starharness.npc import Meeting, NpcCard, ReadsMeetings, ReadsTogether, reading_together
from starharness.npc.encounter.meeting import meet
from starharness.npc.frames import FrameError


class _Noting(TinyWorld):
    """The tiny world, noting for each read whether a read transaction was open around it."""

    def __init__(self) -> None:
        super().__init__(None)
        self.inside: dict[str, bool] = {}

    def _note(self, call: str) -> None:
        self.inside[call] = self._db.in_transaction

    def npc(self, npc_id: str) -> NpcCard | None:
        self._note("npc")
        return super().npc(npc_id)

    def meeting(self, npc_id: str, player_id: str) -> Meeting | None:
        self._note("meeting")
        return super().meeting(npc_id, player_id)

    def has_player(self, player_id: str) -> bool:
        self._note("has_player")
        return super().has_player(player_id)

    def can_meet(self, npc_id: str, player_id: str) -> bool:
        self._note("can_meet")
        return super().can_meet(npc_id, player_id)

    def attitude(self, npc_id: str, player_id: str) -> int:
        self._note("attitude")
        return super().attitude(npc_id, player_id)

    def scene(self, npc_id: str, player_id: str) -> str:
        self._note("scene")
        return super().scene(npc_id, player_id)


class _CallByCall(_Noting):
    """The noting world without `meeting` (`ReadsMeetings`): the open reads it call by call."""

    @property
    def meeting(self) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]
        raise AttributeError("meeting")


class _OldContract(_CallByCall):
    """A world whose `can_meet` never asks whether the player is one (as the contract allows)."""

    def can_meet(self, npc_id: str, player_id: str) -> bool:
        self._note("can_meet")
        return True


class _Plain:
    """A world without `reading()`: the meeting reads it call by call."""

    def __init__(self, world: TinyWorld) -> None:
        self._world = world

    def npc(self, npc_id: str) -> NpcCard | None:
        return self._world.npc(npc_id)

    def npcs(self) -> Sequence[NpcCard]:
        return self._world.npcs()

    def has_player(self, player_id: str) -> bool:
        return self._world.has_player(player_id)

    def can_meet(self, npc_id: str, player_id: str) -> bool:
        return self._world.can_meet(npc_id, player_id)

    def player_view(self, player_id: str) -> Mapping[str, Any]:
        return self._world.player_view(player_id)

    def scene(self, npc_id: str, player_id: str) -> str:
        return self._world.scene(npc_id, player_id)

    def attitude(self, npc_id: str, player_id: str) -> int:
        return self._world.attitude(npc_id, player_id)

    def tick(self, days: int) -> Any:
        return self._world.tick(days)

    def transaction(self) -> AbstractContextManager[Any]:
        return self._world.transaction()

    def run_action(self, work: Any) -> Any:
        return self._world.run_action(work)

    def is_alive(self, tx: Any, actor_id: str) -> bool:
        return self._world.is_alive(tx, actor_id)

    def audit(self, tx: Any | None, record: Any) -> None:
        self._world.audit(tx, record)


def test_an_open_without_the_scene_is_one_read_and_no_transaction() -> None:
    world = _Noting()
    assert isinstance(world, ReadsMeetings)
    npc, attitude, scene = meet(world, "e1", "n-baker", "p1", with_scene=False)
    assert (npc.id, attitude, scene) == ("n-baker", 3, None)
    assert world.inside == {"meeting": False}


def test_the_meeting_and_the_scene_share_one_read_transaction() -> None:
    world = _Noting()
    npc, attitude, scene = meet(world, "e1", "n-baker", "p1")
    assert (npc.id, attitude) == ("n-baker", 3)
    assert scene is not None and "Attitude: 3." in scene
    assert world.inside == {"meeting": True, "scene": True}
    assert not world._db.in_transaction  # pyright: ignore[reportPrivateUsage]


def test_call_by_call_every_read_runs_in_one_read_transaction() -> None:
    world = _CallByCall()
    assert getattr(world, "meeting", None) is None
    npc, attitude, scene = meet(world, "e1", "n-baker", "p1")
    assert (npc.id, attitude) == ("n-baker", 3)
    assert scene is not None and "Attitude: 3." in scene
    reads = ("npc", "has_player", "can_meet", "attitude", "scene")
    assert world.inside == dict.fromkeys(reads, True)
    assert not world._db.in_transaction  # pyright: ignore[reportPrivateUsage]


_DEAD_BAKER = "UPDATE actors SET alive = 0 WHERE id = 'n-baker'"
_REFUSALS = [
    ("n-nobody", "p1", "", "unknown_npc", "there is no NPC 'n-nobody'"),
    ("n-baker", "p-nobody", "", "unknown_player", "there is no player 'p-nobody'"),
    # An NPC's id is not a player's, though it stands in the same place.
    ("n-baker", "n-baker", "", "unknown_player", "there is no player 'n-baker'"),
    # An unknown player is named before a dead NPC.
    ("n-baker", "p-nobody", _DEAD_BAKER, "unknown_player", "there is no player 'p-nobody'"),
    ("n-baker", "p1", _DEAD_BAKER, "npc_unavailable", "Bea is not alive"),
    ("n-smith", "p1", "", "npc_unavailable", "Tor cannot meet player 'p1' now"),
]


@pytest.mark.parametrize("kind", [_Noting, _CallByCall])
@pytest.mark.parametrize(("npc_id", "player_id", "setup", "code", "message"), _REFUSALS)
def test_a_refused_meeting_says_why_in_a_fixed_order(
    kind: type[_Noting], npc_id: str, player_id: str, setup: str, code: str, message: str
) -> None:
    world = kind()
    if setup:
        world.set(setup)
    for with_scene in (True, False):
        world.inside.clear()
        with pytest.raises(FrameError) as refused:
            meet(world, "e1", npc_id, player_id, with_scene=with_scene)
        assert (str(refused.value.code), refused.value.message) == (code, message)
        assert "scene" not in world.inside and "attitude" not in world.inside
        assert not world._db.in_transaction  # pyright: ignore[reportPrivateUsage]


def test_a_world_whose_can_meet_ignores_the_player_still_meets_only_players() -> None:
    world = _OldContract()
    with pytest.raises(FrameError) as refused:
        meet(world, "e1", "n-baker", "n-smith")
    assert str(refused.value.code) == "unknown_player"
    assert meet(world, "e2", "n-baker", "p1")[0].id == "n-baker"


def test_a_refused_meeting_ends_its_read_transaction() -> None:
    world = TinyWorld(None)
    with pytest.raises(FrameError, match="no NPC"):
        meet(world, "e1", "n-nobody", "p1")
    with pytest.raises(FrameError, match="cannot meet"):
        meet(world, "e2", "n-smith", "p1")
    # A write right after: no read transaction was left open on the connection.
    world.set("UPDATE actors SET coins = 7 WHERE id = 'p1'")
    assert "The customer has 7 coins." in str(meet(world, "e3", "n-baker", "p1")[2])


def test_each_open_reads_the_world_as_it_is_now() -> None:
    world = TinyWorld(None)
    first = meet(world, "e1", "n-baker", "p1")
    world.set("UPDATE actors SET coins = 44, persona = 'You are Bea, tired.' WHERE id = 'n-baker'")
    world.set("UPDATE attitudes SET score = -1 WHERE npc = 'n-baker' AND player = 'p1'")
    world.remember("n-baker", "p1", "Pat paid late.")
    npc, attitude, scene = meet(world, "e2", "n-baker", "p1")
    assert first[0].persona != npc.persona == "You are Bea, tired."
    assert attitude == -1
    assert scene is not None and "You have 44 coins" in scene
    assert "Attitude: -1." in scene
    assert "You remember: Pat paid late." in scene
    world.set("UPDATE actors SET alive = 0 WHERE id = 'n-baker'")
    with pytest.raises(FrameError, match="not alive"):
        meet(world, "e3", "n-baker", "p1")


def test_a_world_without_reading_meets_call_by_call() -> None:
    world = _Plain(TinyWorld(None))
    assert not isinstance(world, ReadsTogether)
    npc, attitude, scene = meet(world, "e1", "n-baker", "p1")
    assert (npc.name, attitude) == ("Bea", 3)
    assert scene == TinyWorld.scene(world._world, "n-baker", "p1")  # pyright: ignore[reportPrivateUsage]


def test_reading_nests_inside_itself() -> None:
    world = TinyWorld(None)
    with reading_together(world):
        with reading_together(world):
            assert world.has_player("p1")
        assert world._db.in_transaction  # pyright: ignore[reportPrivateUsage]
    assert not world._db.in_transaction  # pyright: ignore[reportPrivateUsage]
