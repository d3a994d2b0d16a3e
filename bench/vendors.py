"""Many NPCs for the tiny test game: vendors on its square, spread over `kind-N` archetypes."""

from __future__ import annotations

from typing import Any

PERSONA = (
    "You are {name}, who has kept a stall on the square for {years} years. You speak briefly, "
    "you remember faces, and you bargain hard but fairly. You never sell what you do not have, "
    "and you never promise what the world has not committed."
)


def populate(world: Any, npcs: int, archetypes: int) -> list[str]:
    """Add `npcs` vendors to the tiny world, archetype `kind-{i % archetypes}`; their ids."""
    rows = [
        (
            f"n-{i:04d}",
            f"Vendor {i}",
            "npc",
            "square",
            1,
            50,
            12,
            f"kind-{i % archetypes}",
            PERSONA.format(name=f"Vendor {i}", years=3 + i % 30),
        )
        for i in range(npcs)
    ]
    with world.transaction() as tx:
        tx.db.executemany("INSERT INTO actors VALUES (?,?,?,?,?,?,?,?,?)", rows)
    return [row[0] for row in rows]
