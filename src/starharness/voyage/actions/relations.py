"""How the NPC feels and what it remembers: attitude changes and notes, both kept as memories."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from starharness.npc.actions import Refusal, Role, define_game_action

from ..store import WorldTx

CHANGE_ATTITUDE = "change_attitude"
NOTE_MEMORY = "note_memory"
MAX_ATTITUDE_STEP = 10
"""The most an attitude may move in one call (one turn): feelings shift, they do not flip."""


class AttitudeArgs(BaseModel):
    """A change of heart and why."""

    npc_id: str
    player_id: str
    delta: int = Field(description="+ warmer, - colder.")
    reason: str = Field(min_length=3, max_length=200, description="Why; you will remember it.")


class NoteArgs(BaseModel):
    """Something worth remembering about the player."""

    npc_id: str
    player_id: str
    text: str = Field(min_length=3, max_length=200, description="One sentence.")


def _bounded(_tx: WorldTx, args: AttitudeArgs) -> Refusal | None:
    if 0 < abs(args.delta) <= MAX_ATTITUDE_STEP:
        return None
    nearest = max(-MAX_ATTITUDE_STEP, min(MAX_ATTITUDE_STEP, args.delta))
    hint = (
        "a change of 0 changes nothing; use a delta between 1 and "
        f"{MAX_ATTITUDE_STEP}, or -1 and -{MAX_ATTITUDE_STEP}"
        if args.delta == 0
        else f"attitude moves at most {MAX_ATTITUDE_STEP} per turn; use {nearest:+d} instead of "
        f"{args.delta:+d}"
    )
    facts = {"delta": args.delta, "max_step": MAX_ATTITUDE_STEP}
    return Refusal("step_out_of_bounds", hint, facts, "Their mood does not change that fast.")


def _change(tx: WorldTx, args: AttitudeArgs) -> Mapping[str, Any]:
    before = tx.attitude(args.npc_id, args.player_id)
    after = tx.adjust_attitude(args.npc_id, args.player_id, args.delta)
    feeling = "Warmed to" if args.delta > 0 else "Cooled on"
    tx.remember(
        args.npc_id,
        args.player_id,
        f"{feeling} them ({args.delta:+d}): {args.reason.strip()}",
        kind="attitude",
    )
    return {"attitude": after, "before": before}


def _note(tx: WorldTx, args: NoteArgs) -> Mapping[str, Any]:
    memory = tx.remember(args.npc_id, args.player_id, args.text.strip(), kind="note")
    return {"day": memory.day}


_PARTIES = {"npc_id": Role.NPC, "player_id": Role.PLAYER}

CHANGE = define_game_action(
    CHANGE_ATTITUDE,
    f"Change how you feel about the player, at most {MAX_ATTITUDE_STEP} either way per turn, "
    "with a reason. Lowballs cool you; fair deals warm you.",
    AttitudeArgs,
    bind=_PARTIES,
    guards=[_bounded],
    apply=_change,
    narrate=lambda args, effect: (
        f"Attitude {args.delta:+d} (now {effect['attitude']}): {args.reason.strip()}"
    ),
)

NOTE = define_game_action(
    NOTE_MEMORY,
    "Remember something about the player (deals are remembered already).",
    NoteArgs,
    bind=_PARTIES,
    apply=_note,
    narrate=lambda args, effect: f"Noted: {args.text.strip()}",
)
