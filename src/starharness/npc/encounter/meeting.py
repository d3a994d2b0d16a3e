"""Whether a player and an NPC can meet, read from the world before an encounter opens."""

from __future__ import annotations

from ..frames import ErrorCode, FrameError
from ..world import NpcCard, World, reading_together


def meet(
    world: World, encounter_id: str, npc_id: str, player_id: str, *, with_scene: bool = True
) -> tuple[NpcCard, int, str | None]:
    """The NPC's card, its attitude and (`with_scene`) the scene, or FrameError saying why they
    cannot meet."""
    # One consistent state for every check and read (and, on SQLite, one lock, not one each).
    with reading_together(world):
        return _meet(world, encounter_id, npc_id, player_id, with_scene)


def _meet(
    world: World, encounter_id: str, npc_id: str, player_id: str, with_scene: bool
) -> tuple[NpcCard, int, str | None]:
    npc = world.npc(npc_id)
    if npc is None:
        raise FrameError(ErrorCode.UNKNOWN_NPC, f"there is no NPC {npc_id!r}", encounter_id)
    # `can_meet` is false for a player who does not exist, so an open that succeeds reads the
    # player only through it; the player is read on its own only to say why one was refused.
    if not (npc.alive and world.can_meet(npc_id, player_id)):
        raise _refusal(world, npc, encounter_id, player_id)
    scene = world.scene(npc_id, player_id) if with_scene else None
    return npc, world.attitude(npc_id, player_id), scene


def _refusal(world: World, npc: NpcCard, encounter_id: str, player_id: str) -> FrameError:
    """Why they cannot meet: an unknown player first, then a dead NPC, then the game's rule."""
    if not world.has_player(player_id):
        return FrameError(
            ErrorCode.UNKNOWN_PLAYER, f"there is no player {player_id!r}", encounter_id
        )
    if not npc.alive:
        return FrameError(ErrorCode.NPC_UNAVAILABLE, f"{npc.name} is not alive", encounter_id)
    return FrameError(
        ErrorCode.NPC_UNAVAILABLE, f"{npc.name} cannot meet player {player_id!r} now", encounter_id
    )
