"""Whether a player and an NPC can meet, read from the world before an encounter opens."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..frames import ErrorCode, FrameError
from ..world import Meeting, NpcCard, World, reading_together


def meet(
    world: World, encounter_id: str, npc_id: str, player_id: str, *, with_scene: bool = True
) -> tuple[NpcCard, int, str | None]:
    """The NPC's card, its attitude and (`with_scene`) the scene, or FrameError saying why they
    cannot meet."""
    # getattr, not isinstance: a runtime protocol check costs more than the read it saves.
    read: Callable[[str, str], Meeting | None] | None = getattr(world, "meeting", None)
    if read is not None and not with_scene:
        # One consistent read already (`ReadsMeetings`): no read transaction around it.
        return _checked(world, read(npc_id, player_id), encounter_id, npc_id, player_id, None)
    # One consistent state for every check and read (and, on SQLite, one lock, not one each).
    with reading_together(world):
        found = _read_meeting(world, npc_id, player_id) if read is None else read(npc_id, player_id)
        scene = world.scene(npc_id, player_id) if with_scene and _can(found) else None
        return _checked(world, found, encounter_id, npc_id, player_id, scene)


def meet_together(
    world: World, encounter_id: str, npc_ids: Sequence[str], player_id: str
) -> list[NpcCard]:
    """The cards of a scene's NPCs, in `npc_ids`' order, or FrameError naming the first NPC
    the player cannot meet there: unknown, unable to meet, or in another place than the first."""
    cards: list[NpcCard] = []
    with reading_together(world):
        for npc_id in npc_ids:
            card, _attitude, _scene = meet(world, encounter_id, npc_id, player_id, with_scene=False)
            if cards and card.location_id != cards[0].location_id:
                first = cards[0]
                raise FrameError(
                    ErrorCode.NPC_UNAVAILABLE,
                    f"{card.name} ({npc_id!r}) is not where {first.name} is: the NPCs of one "
                    f"scene share a place ({card.location_id!r}, not {first.location_id!r})",
                    encounter_id,
                )
            cards.append(card)
    return cards


def _can(found: Meeting | None) -> bool:
    return found is not None and found.can_meet


def _read_meeting(world: World, npc_id: str, player_id: str) -> Meeting | None:
    """The meeting read call by call, from a world without `meeting` (`ReadsMeetings`)."""
    npc = world.npc(npc_id)
    if npc is None:
        return None
    if not (npc.alive and world.has_player(player_id) and world.can_meet(npc_id, player_id)):
        return Meeting(npc, False, 0)
    return Meeting(npc, True, world.attitude(npc_id, player_id))


def _checked(
    world: World,
    found: Meeting | None,
    encounter_id: str,
    npc_id: str,
    player_id: str,
    scene: str | None,
) -> tuple[NpcCard, int, str | None]:
    if found is None:
        raise FrameError(ErrorCode.UNKNOWN_NPC, f"there is no NPC {npc_id!r}", encounter_id)
    if not found.can_meet:
        raise _refusal(world, found.npc, encounter_id, player_id)
    return found.npc, found.attitude, scene


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
