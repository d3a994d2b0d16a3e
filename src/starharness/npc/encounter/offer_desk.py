"""The offers an encounter holds for its player, and how a typed "deal" accepts one.

An offer is what a model's call of an action that takes from the player becomes (see
`npc.actions.offers`). The desk numbers them, shows them first in every `options` frame, and
hands one out at most once: to the player's pick, or to a plain acceptance typed while it is
the only one pending. Offers die with their encounter.
"""

from __future__ import annotations

import re
from typing import Final

from ..actions import ActionAttempt, Offer, OfferDraft
from ..frames import OfferTerms as WireOfferTerms
from ..frames import OptionItem

OFFER_ID_PREFIX: Final = "offer-"
ACCEPT_PREFIX: Final = "I accept: "
"""Starts the message the model reads when the player accepted one of its offers."""
DONE_NOTE: Final = "[Done: {summary}]"
REFUSED_NOTE: Final = "[It did not go through; nothing changed: {reason}]"


class OfferDesk:
    """One encounter's pending offers, newest last, at most `limit` of them.

    The offers of a turn are one set: the NPC's first offer in a later turn withdraws the
    earlier ones (they were priced on what was true then), and an accepted offer withdraws
    the rest (the world it was priced on has changed). A turn without offers leaves the
    pending ones on the table.
    """

    __slots__ = ("_count", "_fresh", "_limit", "_pending", "_settled", "dirty")

    def __init__(self, limit: int) -> None:
        self._limit = max(1, limit)
        self._pending: list[Offer] = []
        self._settled: set[str] = set()
        self._count = 0
        self._fresh = False
        self.dirty = False
        """An offer came, or offers were withdrawn, since the last `options` frame."""

    def new_turn(self) -> None:
        """A turn begins: its first offer replaces those still pending."""
        self._fresh = True

    def withdraw_all(self) -> None:
        """No pending offer stands any longer (one was accepted, or the world moved)."""
        if self._pending:
            self._settled.update(offer.id for offer in self._pending)
            self._pending.clear()
            self.dirty = True

    @property
    def pending(self) -> tuple[Offer, ...]:
        return tuple(self._pending)

    def propose(self, draft: OfferDraft) -> Offer:
        """Hold `draft` (an equal pending offer keeps its id); the oldest beyond the limit go."""
        if self._fresh:
            self._fresh = False
            kept = [offer for offer in self._pending if offer.draft.same_deal(draft)]
            self._settled.update(o.id for o in self._pending if not o.draft.same_deal(draft))
            self._pending = kept
        for offer in self._pending:
            if offer.draft.same_deal(draft):
                self._pending.remove(offer)
                offer = Offer(offer.id, draft)
                break
        else:
            self._count += 1
            offer = Offer(f"{OFFER_ID_PREFIX}{self._count}", draft)
        self._pending.append(offer)
        while len(self._pending) > self._limit:
            self._settled.add(self._pending.pop(0).id)
        self.dirty = True
        return offer

    def take(self, option_id: str) -> Offer | None:
        """The pending offer `option_id`, removed so that it is settled at most once."""
        for offer in self._pending:
            if offer.id == option_id:
                self._pending.remove(offer)
                self._settled.add(offer.id)
                return offer
        return None

    def was_settled(self, option_id: str) -> bool:
        """Whether `option_id` was an offer of this encounter that is no longer open."""
        return option_id in self._settled

    def items(self) -> list[OptionItem]:
        """The pending offers as option items, in the order the NPC made them; showing them
        clears `dirty`."""
        self.dirty = False
        return [
            OptionItem(
                id=offer.id,
                label=offer.label,
                offer=WireOfferTerms(action=offer.draft.action, cost=offer.cost),
            )
            for offer in self._pending
        ]


def acceptance_note(offer: Offer, attempt: ActionAttempt) -> str:
    """What the model reads when the player accepted `offer`: the deal and what the world did."""
    if attempt.ok:
        note = DONE_NOTE.format(summary=attempt.summary)
    else:
        hint = attempt.result.get("hint")
        note = REFUSED_NOTE.format(reason=hint if isinstance(hint, str) else attempt.summary)
    return f"{ACCEPT_PREFIX}{offer.describe()}. {note}"


_YES: Final = frozenset(
    (
        "yes", "yeah", "yea", "yep", "yup", "aye", "sure", "ok", "okay", "deal", "agreed",
        "agree", "accept", "accepted", "done", "take", "alright", "works",
    )
)  # fmt: skip
_FILLER: Final = frozenset(
    (
        "i", "ill", "it", "its", "that", "thats", "you", "have", "a", "we", "got", "is",
        "sounds", "good", "great", "fine", "perfect", "please", "then", "right", "all", "let",
        "lets", "do", "well", "very", "much", "thanks", "thank", "them", "those", "these",
        "for", "me", "with", "by",
    )
)  # fmt: skip


def plain_acceptance(text: str) -> bool:
    """An English "yes, deal": only words of assent and filler, at least one of assent.

    Anything else (a number, a question, "no", "but", a good's name) is not plain: the line
    goes to the NPC as words and nothing commits on it.
    """
    lowered = text.lower().replace("\u2019", "'")
    if "?" in lowered or any(ch.isdigit() for ch in lowered):
        return False
    words = [word.replace("'", "") for word in re.findall(r"[a-z']+", lowered)]
    if not words or len(words) > 8:
        return False
    if not all(word in _YES or word in _FILLER for word in words):
        return False
    return any(word in _YES for word in words)
