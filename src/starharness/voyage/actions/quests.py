"""Jobs: the NPC offers one from its board, and pays out once its condition holds in the world."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field

from starharness.npc.actions import OfferTerms, Refusal, Role, StandingOffer, define_game_action

from ..content.seed import QUESTS
from ..store import Quest, WorldTx
from ._naming import good_name, listing
from .guards import attitude_at_least, can_afford, same_location
from .trade import sold_instead

OFFER_QUEST = "offer_quest"
COMPLETE_QUEST = "complete_quest"
QUEST_MEMORY = "quest"
TRUST_FOR_A_JOB_DONE = 10
"""A job done raises the giver's attitude to the player by this much."""


class QuestArgs(BaseModel):
    """One job from the scene."""

    npc_id: str
    player_id: str
    quest_id: str = Field(
        min_length=1,
        description="Id in [brackets] in the scene.",
        json_schema_extra={"enum": [quest.id for quest in QUESTS]},
    )


def _quest(tx: WorldTx, args: QuestArgs) -> Quest:
    found = tx.quest(args.quest_id)
    if found is None:  # the guards that check the quest run first; reaching this is a bug
        raise LookupError(f"no quest {args.quest_id!r}")
    return found


def _on_the_board(tx: WorldTx, args: QuestArgs) -> Refusal | None:
    found = tx.quest(args.quest_id)
    if found is not None and found.giver_id == args.npc_id and found.status == "open":
        return None
    if (
        found is not None
        and found.giver_id == args.npc_id
        and found.player_id == args.player_id
        and found.status == "accepted"
    ):
        # A small model offered the job the player took a turn ago once more: what it needs to
        # hear is where the job stands, not that it has no such job.
        have = tx.cargo_qty(args.player_id, found.good_id)
        name = good_name(tx, found.good_id)
        return Refusal(
            "job_already_taken",
            f"they took {args.quest_id!r} already: it completes when they hand over "
            f"{found.qty} {name} (they hold {have})",
            {"quest_id": args.quest_id, "have": have, "need": found.qty},
            f'You took "{found.title}" already.',
        )
    open_jobs = [
        f"{q.id} ({q.title})" for q in tx.quests_given_by(args.npc_id) if q.status == "open"
    ]
    return Refusal(
        "no_such_job",
        f"{args.quest_id!r} is not an open job of yours; open jobs: {listing(open_jobs, 'none')}",
        {"quest_id": args.quest_id},
        "That job is not on offer.",
    )


def _theirs(tx: WorldTx, args: QuestArgs) -> Refusal | None:
    found = tx.quest(args.quest_id)
    if (
        found is not None
        and found.giver_id == args.npc_id
        and found.player_id == args.player_id
        and found.status == "accepted"
    ):
        return None
    active = [
        f"{q.id} ({q.title})"
        for q in tx.quests_of(args.player_id)
        if q.giver_id == args.npc_id and q.status == "accepted"
    ]
    return Refusal(
        "not_their_job",
        f"{args.quest_id!r} is not a job they took from you; their jobs for you: "
        f"{listing(active, 'none')}",
        {"quest_id": args.quest_id},
        "You have no such job from them.",
    )


def _delivered(tx: WorldTx, args: QuestArgs) -> Refusal | None:
    quest = _quest(tx, args)
    have = tx.cargo_qty(args.player_id, quest.good_id)
    if have >= quest.qty:
        return None
    name = good_name(tx, quest.good_id)
    refusal = Refusal(
        "condition_unmet",
        f"the job needs {quest.qty} {name} and they hold {have}; it completes when they bring "
        f"{quest.qty - have} more",
        {"good_id": quest.good_id, "have": have, "need": quest.qty},
        f"The job needs {quest.qty} {name}; you hold {have}.",
    )
    # A giver who sells the goods offers the missing ones: the way to the hand-in the player
    # asked for, so the refusal is shown beside it.
    missing = sold_instead(tx, args.npc_id, args.player_id, quest.good_id, quest.qty - have)
    if missing is None:
        return refusal
    return replace(refusal, instead=replace(missing, explained=True))


def _offer(tx: WorldTx, args: QuestArgs) -> Mapping[str, Any]:
    quest = tx.accept_quest(args.quest_id, args.player_id)
    name = good_name(tx, quest.good_id)
    tx.remember(
        args.npc_id,
        args.player_id,
        f'Gave them the job "{quest.title}": {quest.qty} {name} for {quest.reward:,}.',
        kind=QUEST_MEMORY,
        ref=quest.id,
    )
    return {"title": quest.title, "good": name, "qty": quest.qty, "reward": quest.reward}


def _complete(tx: WorldTx, args: QuestArgs) -> Mapping[str, Any]:
    quest = _quest(tx, args)
    tx.move_cargo(args.player_id, args.npc_id, quest.good_id, quest.qty)
    tx.transfer_credits(args.npc_id, args.player_id, quest.reward)
    tx.set_quest_status(quest.id, "completed")
    attitude = tx.adjust_attitude(args.npc_id, args.player_id, TRUST_FOR_A_JOB_DONE)
    tx.remember(
        args.npc_id,
        args.player_id,
        f'They finished the job "{quest.title}"; I paid {quest.reward:,}.',
        kind=QUEST_MEMORY,
        price=quest.reward,
        ref=quest.id,
    )
    return {
        "title": quest.title,
        "reward": quest.reward,
        "their_credits": tx.credits(args.player_id),
        "attitude": attitude,
    }


_PARTIES = {"npc_id": Role.NPC, "player_id": Role.PLAYER}

OFFER = define_game_action(
    OFFER_QUEST,
    "Give the player an open job of yours. Refused below the attitude the job needs.",
    QuestArgs,
    bind=_PARTIES,
    guards=[
        same_location,
        _on_the_board,
        attitude_at_least(
            lambda tx, a: _quest(tx, a).min_attitude, lambda tx, a: f'"{_quest(tx, a).title}"'
        ),
    ],
    apply=_offer,
    narrate=lambda args, effect: f'Job taken: "{effect["title"]}", reward {effect["reward"]:,}.',
)


def _hand_over(tx: WorldTx, args: QuestArgs) -> OfferTerms:
    """Completing a job takes its goods from the player's hold: they hand them over."""
    quest = _quest(tx, args)
    goods = f"{quest.qty} {good_name(tx, quest.good_id)}"
    label = f'Hand over {goods} for "{quest.title}"'
    pitch = f'I take your {goods} for the job "{quest.title}"'
    return OfferTerms(
        label,
        goods,
        {"reward": quest.reward},
        pitch=pitch,
        says=f"Hand me the {goods} and the job is done.",
        says_done="That's the job done.",
    )


COMPLETE = define_game_action(
    COMPLETE_QUEST,
    "Close the player's job with you: take the goods it asks for and pay the reward. Refused "
    "unless they hold the goods.",
    QuestArgs,
    bind=_PARTIES,
    guards=[
        same_location,
        _theirs,
        _delivered,
        can_afford(lambda a: a.npc_id, lambda tx, a: _quest(tx, a).reward),
    ],
    apply=_complete,
    narrate=lambda args, effect: f'Job done: "{effect["title"]}", paid {effect["reward"]:,}.',
    takes_from=Role.PLAYER,
    terms=_hand_over,
)


def hand_ins(tx: WorldTx, npc_id: str, player_id: str) -> list[StandingOffer]:
    """`Game.standing_offers`: the hand-in of each job this NPC gave this player, shown as an
    offer whenever its guards pass (they hold the goods): a model that never thinks of
    closing the job leaves no player stuck with a hold full of gel."""
    standing: list[StandingOffer] = []
    for seeded in QUESTS:
        quest = tx.quest(seeded.id)
        if (
            quest is not None
            and quest.giver_id == npc_id
            and quest.player_id == player_id
            and quest.status == "accepted"
        ):
            standing.append(StandingOffer(COMPLETE, {"quest_id": quest.id}))
    return standing
