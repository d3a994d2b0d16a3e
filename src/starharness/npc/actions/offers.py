"""Offers: what an action that takes from the player becomes when a model calls it.

A model may propose anything; the player's property moves only when that player accepts the
exact proposal (invariant 9). The model's call runs the guards and, when they pass, freezes
its arguments into an `OfferDraft` the encounter holds and shows as an option. The player's
pick commits it (`commit_offer` in the factory), with the guards run again, once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel
from typing_extensions import TypeVar

if TYPE_CHECKING:
    from .binding import ActionAttempt

OFFERED: Final = "offered"
"""Key of a model's tool result when its call became an offer (its value is the option id)."""
ACCEPTED_OFFER: Final = "accepted_offer"
"""Key added to a committed offer's audited arguments: the option id the player picked."""
OFFER_CHANGED: Final = "offer_changed"
"""Refusal reason of an offer whose terms moved between the offer and the pick."""
PITCH: Final = "pitch"
"""Key of the offer's pitch (`OfferTerms.pitch`) in the model's tool result, when the game
wrote one."""
OFFER_NOTE: Final = "offered, not done: the player has not answered"
"""What the model reads after its call became an offer (constant: it never varies per call).

A status, not an instruction: a small model read a sentence addressed to it ("Tell them your
terms; do not say the deal is done.") aloud to the player."""

_A = TypeVar("_A", bound=BaseModel, default=BaseModel)
_Tx = TypeVar("_Tx", default=Any)


@dataclass(frozen=True, slots=True)
class OfferTerms:
    """How a game presents an offer and what must not change before it is accepted.

    `label` is what the player sees on the offer ("Buy 2 loaves"), `cost` what they give
    in the game's words ("6 coins"). `quote` holds the world's values the deal was priced on
    (a going price, a fare): if any differs when the player picks the offer, the pick is
    refused and the NPC may offer again. `pitch` is the same deal in the NPC's own words, to the
    player, for the model ("I sell you 2 loaves for 6 coins"); without it the model reads the
    label, the player's side, and a small model then speaks as the buyer ("I'll take 2
    loaves"). In the first person: a pitch about "the player" the 1.5B development model
    narrated ("You offer to sell ... to the player").

    `says` is the offer as the NPC says it aloud ("Two loaves for 6 coins."): where the model
    server can continue a line it did not begin (`models serve-local`), the NPC's line after
    making the offer begins with these words, streamed to the player at once, and the model
    goes on from them. Written in the characters the speech contract allows
    (`SpeechContract.line_characters`); words outside them, or none, and the model begins the
    line itself. `says_done` is the same for the NPC's line after the player accepted and the
    deal committed ("There you go: two loaves."): spoken from the NPC's side, so a small model
    goes on as the seller rather than as the buyer.
    """

    label: str
    cost: str = ""
    quote: Mapping[str, Any] = field(default_factory=dict[str, Any])
    pitch: str = ""
    says: str = ""
    says_done: str = ""


Terms = Callable[[_Tx, _A], OfferTerms]
"""`terms(tx, args)`: the offer's label, cost and quote, read inside the offer's transaction."""


@dataclass(frozen=True, slots=True)
class OfferDraft:
    """A guarded proposal, arguments frozen (bound roles included), waiting for the player."""

    action: str
    arguments: Mapping[str, Any]
    terms: OfferTerms
    settle: Callable[[str], ActionAttempt] = field(compare=False, repr=False)
    """`settle(offer_id)`: commit it in one transaction with the guards run again (blocking:
    run it where the world's calls run); the attempt, committed or refused."""

    def same_deal(self, other: OfferDraft) -> bool:
        """Whether both propose the same action with the same arguments."""
        return self.action == other.action and dict(self.arguments) == dict(other.arguments)


@dataclass(frozen=True, slots=True)
class Offer:
    """An offer the encounter holds, under the option id the player picks it by."""

    id: str
    draft: OfferDraft

    @property
    def label(self) -> str:
        return self.draft.terms.label

    @property
    def cost(self) -> str:
        return self.draft.terms.cost

    @property
    def terms(self) -> OfferTerms:
        return self.draft.terms

    def describe(self) -> str:
        """The offer in one line, for the model and the log: label, then cost."""
        cost = self.draft.terms.cost
        return f"{self.label} ({cost})" if cost else self.label

    def made(self) -> dict[str, Any]:
        """What a model's call that became this offer returns: its id, the offer in one line,
        its status, and the game's pitch when it wrote one."""
        made: dict[str, Any] = {OFFERED: self.id, "offer": self.describe(), "status": OFFER_NOTE}
        if self.draft.terms.pitch:
            made[PITCH] = self.draft.terms.pitch
        return made


Propose = Callable[[OfferDraft], Offer]
"""Registers a draft with the encounter; returns the offer (an equal pending one is reused)."""
