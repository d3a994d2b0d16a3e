"""The meeting's reads: one read transaction on a world that offers it, fresh on every open."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import pytest
from tinygame.world import TinyWorld

from starharness.npc import NpcCard, ReadsTogether, reading_together
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


def test_every_meeting_read_runs_in_one_read_transaction() -> None:
    world = _Noting()
    assert isinstance(world, ReadsTogether)
    npc, attitude, scene = meet(world, "e1", "n-baker", "p1")
    assert (npc.id, attitude) == ("n-baker", 3)
    assert scene is not None and "Attitude: 3." in scene
    # A meeting that succeeds learns that the player exists from `can_meet` alone.
    assert world.inside == dict.fromkeys(("npc", "can_meet", "attitude", "scene"), True)
    assert not world._db.in_transaction  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize(
    ("npc_id", "player_id", "setup", "code", "message", "reads"),
    [
        ("n-nobody", "p1", "", "unknown_npc", "there is no NPC 'n-nobody'", ("npc",)),
        ("n-baker", "p-nobody", "", "unknown_player", "there is no player 'p-nobody'", None),
        # An unknown player is named before a dead NPC, as before the player was read lazily.
        (
            "n-baker",
            "p-nobody",
            "UPDATE actors SET alive = 0 WHERE id = 'n-baker'",
            "unknown_player",
            "there is no player 'p-nobody'",
            ("npc", "has_player"),
        ),
        (
            "n-baker",
            "p1",
            "UPDATE actors SET alive = 0 WHERE id = 'n-baker'",
            "npc_unavailable",
            "Bea is not alive",
            ("npc", "has_player"),
        ),
        ("n-smith", "p1", "", "npc_unavailable", "Tor cannot meet player 'p1' now", None),
    ],
)
def test_a_refused_meeting_says_why_in_a_fixed_order(
    npc_id: str, player_id: str, setup: str, code: str, message: str, reads: tuple[str, ...] | None
) -> None:
    world = _Noting()
    if setup:
        world.set(setup)
    with pytest.raises(FrameError) as refused:
        meet(world, "e1", npc_id, player_id)
    assert (str(refused.value.code), refused.value.message) == (code, message)
    # Every read of a refusal, the player's included, ran inside the meeting's one transaction.
    expected = reads or ("npc", "can_meet", "has_player")
    assert world.inside == dict.fromkeys(expected, True)
    assert not world._db.in_transaction  # pyright: ignore[reportPrivateUsage]


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


def test_a_meeting_without_the_scene_does_not_read_it() -> None:
    world = _Noting()
    npc, attitude, scene = meet(world, "e1", "n-baker", "p1", with_scene=False)
    assert (npc.id, attitude, scene) == ("n-baker", 3, None)
    assert world.inside == dict.fromkeys(("npc", "can_meet", "attitude"), True)
    with pytest.raises(FrameError, match="cannot meet"):
        meet(world, "e2", "n-smith", "p1", with_scene=False)


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
