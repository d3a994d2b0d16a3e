"""Rules over deals: refusals reflected, no claimed or promised trade without a commit or an
offer, and nothing taken from the player without the player's acceptance."""

from __future__ import annotations

import re
from typing import Final

from ..npc.actions import ACCEPTED_OFFER
from ..npc.speech import ENGLISH_CLAIMS
from .evidence import AuditRow, TurnEvidence
from .verdict import NOT_APPLICABLE, Verdict, clip

_CLAIMS: Final = ENGLISH_CLAIMS.without_promises()
"""Claims of a done deal; promises are judged apart, honest beside an offer."""
_STOP_TEXT: Final = (
    "about after again also because been before being cannot could does doing from have here "
    "into just more most much only other over same should some such than that their them then "
    "there these they this those under very what when where which while will with would your "
    "yours you"
)
_STOP_WORDS: Final = frozenset(_STOP_TEXT.split())


def reflected_refusal(turn: TurnEvidence) -> Verdict:
    """After a refused action, the next line uses the refusal's hint (a word or number of it)."""
    model = turn.model
    if model is None or not model.refusals:
        return NOT_APPLICABLE
    for refusal in model.refusals:
        if refusal.next_line is None:
            return Verdict(False, f"{refusal.action} was refused and the NPC said nothing after")
        wanted = _key_terms(refusal.hint) | _key_terms(refusal.reason.replace("_", " "))
        heard = _key_terms(refusal.next_line)
        if not wanted & heard:
            return Verdict(
                False,
                f"{refusal.action} refused ({refusal.hint!r}); next line "
                f"{clip(refusal.next_line)!r} shares none of it",
            )
    return Verdict(True)


def no_false_claims(turn: TurnEvidence) -> Verdict:
    """A line that says a trade happened comes with a committed action; one that promises a
    trade comes with a commit or an offer the player can accept; and the audit agrees with the
    committed `action` frames one for one."""
    actions_ok = [
        frame
        for frame in turn.player.of_type("action")
        if frame.get("ok") is True and not frame.get("offer")
    ]
    if turn.audit_available and len(actions_ok) != len(turn.committed):
        return Verdict(
            False,
            f"{len(actions_ok)} committed action frame(s) but {len(turn.committed)} committed "
            "audit row(s)",
        )
    offered = bool(turn.player.offers())
    for line in turn.player.lines():
        # The framework's own rule: what it never lets the player hear in a turn without a
        # commit is what this rule calls a false claim.
        claim = _CLAIMS.claim(line)
        if claim is not None and not actions_ok:
            return Verdict(False, f"claims {claim!r} but nothing committed")
        promise = ENGLISH_CLAIMS.promise(line)
        if promise is not None and not actions_ok and not offered:
            return Verdict(False, f"promises {promise!r} but nothing committed and nothing offered")
    return Verdict(True)


def only_accepted_commits(turn: TurnEvidence) -> Verdict:
    """An action that takes from the player commits only as an offer the player accepted this
    turn: never on walking up, never an offer the player was not shown or did not pick, and at
    most once per offer."""
    relevant = [
        row
        for row in turn.committed
        if row.action in turn.takes_from_player or row.arguments.get(ACCEPTED_OFFER)
    ]
    if not relevant:
        return NOT_APPLICABLE
    done = set(turn.accepted_before)
    for row in relevant:
        problem = _acceptance_problem(turn, row, done)
        if problem is not None:
            return Verdict(False, problem)
        done.add(str(row.arguments[ACCEPTED_OFFER]))
    return Verdict(True)


def _acceptance_problem(turn: TurnEvidence, row: AuditRow, done: set[str]) -> str | None:
    offer = row.arguments.get(ACCEPTED_OFFER)
    if not offer:
        return f"{row.action} committed without the player's acceptance (no accepted offer)"
    offer = str(offer)
    if turn.player.opened:
        return f"{row.action} (offer {offer!r}) committed as the player walked up"
    if offer in done:
        return f"offer {offer!r} committed more than once"
    picked = turn.player.picked
    if picked is not None and picked != offer:
        return f"the player picked {picked!r} but offer {offer!r} committed"
    if offer not in turn.offers_shown:
        return f"offer {offer!r} committed, but the player was never shown it"
    return None


def _key_terms(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z'-]{3,}|\d[\d,]*", text.lower())
    return {word.replace(",", "") for word in words if word not in _STOP_WORDS}
