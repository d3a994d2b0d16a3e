"""The offers an encounter holds for its player, and how a typed "deal" accepts one.

An offer is what a model's call of an action that takes from the player becomes (see
`npc.actions.offers`). The desk numbers them, shows them first in every `options` frame, and
hands one out at most once: to the player's pick, to a plain acceptance typed while it is
the only one pending, or to a typed line that restates its terms. Offers die with their
encounter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from ..actions import OFFERED, ActionAttempt, Offer, OfferDraft, OfferTerms
from ..frames import OfferTerms as WireOfferTerms
from ..frames import OptionItem
from ..game import SpeechContract

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

    __slots__ = ("_count", "_fresh", "_limit", "_pending", "_settled", "_standing", "dirty")

    def __init__(self, limit: int) -> None:
        self._limit = max(1, limit)
        self._pending: list[Offer] = []
        self._settled: set[str] = set()
        self._count = 0
        self._fresh = False
        self._standing: set[str] = set()
        """Ids of the pending offers that are the game's standing deals (`stand`)."""
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
            self._standing.clear()
            self.dirty = True

    @property
    def pending(self) -> tuple[Offer, ...]:
        return tuple(self._pending)

    def stand(self, drafts: Sequence[OfferDraft]) -> None:
        """The game's standing deals as the world allows them now: one already pending keeps
        its id (and takes the new terms), a new one joins, one no longer allowed is withdrawn.
        The NPC's own offers stay."""
        standing: set[str] = set()
        for draft in drafts:
            at = next(
                (i for i, offer in enumerate(self._pending) if offer.draft.same_deal(draft)), None
            )
            if at is None:
                self._count += 1
                offer = Offer(f"{OFFER_ID_PREFIX}{self._count}", draft)
                self._pending.append(offer)
                self.dirty = True
            else:
                offer = self._pending[at] = Offer(self._pending[at].id, draft)
            standing.add(offer.id)
        gone = self._standing - standing
        if gone:
            self._settled.update(gone)
            self._pending = [offer for offer in self._pending if offer.id not in gone]
            self.dirty = True
        self._standing = standing
        self._trim()

    def propose(self, draft: OfferDraft) -> Offer:
        """Hold `draft` (an equal pending offer keeps its id); the oldest beyond the limit go."""
        if self._fresh:
            self._fresh = False
            kept = [
                offer
                for offer in self._pending
                if offer.draft.same_deal(draft) or offer.id in self._standing
            ]
            self._settled.update(o.id for o in self._pending if o not in kept)
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
        self._trim()
        self.dirty = True
        return offer

    def _trim(self) -> None:
        """The oldest offers beyond the limit go, the NPC's own before a standing deal (the
        game holds those open whatever the NPC proposes)."""
        while len(self._pending) > self._limit:
            at = next(
                (i for i, offer in enumerate(self._pending) if offer.id not in self._standing), 0
            )
            gone = self._pending.pop(at)
            self._settled.add(gone.id)
            self._standing.discard(gone.id)

    def take(self, option_id: str) -> Offer | None:
        """The pending offer `option_id`, removed so that it is settled at most once."""
        for offer in self._pending:
            if offer.id == option_id:
                self._pending.remove(offer)
                self._settled.add(offer.id)
                self._standing.discard(offer.id)
                return offer
        return None

    def was_settled(self, option_id: str) -> bool:
        """Whether `option_id` was an offer of this encounter that is no longer open."""
        return option_id in self._settled

    def items(self) -> list[OptionItem]:
        """The pending offers as option items: the game's standing deals first (a job's
        hand-in before the NPC's older bid for the same goods), then the NPC's in the order it
        made them; showing them clears `dirty`."""
        self.dirty = False
        # A stable sort: each group keeps the order its offers were made in.
        ordered = sorted(self._pending, key=lambda offer: offer.id not in self._standing)
        return [
            OptionItem(
                id=offer.id,
                label=offer.label,
                offer=WireOfferTerms(action=offer.draft.action, cost=offer.cost),
            )
            for offer in ordered
        ]


def offer_made(result: str, offers: Sequence[Offer]) -> Offer | None:
    """The pending offer a decision whose result is `result` made, if it made one."""
    try:
        data = json.loads(result)
    except ValueError:
        return None
    if not isinstance(data, Mapping):
        return None
    offered = cast(Mapping[str, Any], data).get(OFFERED)
    return next((offer for offer in offers if offer.id == offered), None)


def line_opening(words: str, contract: SpeechContract) -> str | None:
    """The speech call's arguments so far for a line that begins with the game's `words`
    (`OfferTerms.says`, `OfferTerms.says_done`): compact JSON cut inside the line's string
    (`{"line":"Two loaves for 6 coins.`). None when there are none or they break the speech
    contract (a character outside `line_characters`, longer than `max_line_chars`)."""
    says = words.strip()
    if not says or (contract.max_line_chars is not None and len(says) > contract.max_line_chars):
        return None
    allowed = contract.line_characters
    if allowed is not None and re.fullmatch(f"(?:{allowed})*", says) is None:
        return None
    field = json.dumps(contract.line_field)
    return "{" + field + ":" + json.dumps(says, ensure_ascii=False)[:-1]


def acceptance_note(offer: Offer, attempt: ActionAttempt) -> str:
    """What the model reads when the player accepted `offer`: the deal and what the world did.

    Tried without the deal's label when it went through ("I accept. [Done: <summary>]"): the
    1.5B development model said its own line proposing the deal again less often (1 of 25
    accepted offers in the eval, 3 with the label), but spoke the game's summary, which is the
    player's ("Bought 2 <goods> ..."), as its own on 5 of 25 (a seller saying "I bought 2 ...",
    1 with the label; docs/eval-report-2026-12-07g-qwen-1.5b.md)."""
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


# -- restating an offer's terms ----------------------------------------------------------------
# "Fine, 4 loaves then." with "Buy 4 loaves at 3" pending means that offer: a small model
# handed the line may read it as the player selling loaves. Everything here comes from the
# offer's own label and cost, never from a game's words; the rest is English.

_RESTATE_MAX_WORDS: Final = 12
_SMALL: Final = frozenset(
    ("the", "of", "at", "to", "each", "my", "your", "on", "in", "from", "per")
)  # fmt: skip
"""Words a restatement may hold besides assent and filler; they never name an offer."""
_LOOSE: Final = frozenset(("a", "all", "much", "have", "got"))
"""Filler of a plain yes that says more in a restatement: "a loaf" is one, "all the loaves"
may be more than offered, "I have 4 loaves" is what the player holds."""
_TAKE: Final = "take"
"""Says the player receives: never beside what the offer says they give."""
_MORE: Final = "more"
"""Only after one of the offer's numbers ("4 more loaves"); alone it asks for more."""
_COUNTED: Final = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
)  # fmt: skip
_NUMBER_WORDS: Final = {word: str(value) for value, word in enumerate(_COUNTED)} | {
    "a": "1",
    "an": "1",
}
_NEVER: Final = frozenset(
    (
        "no", "not", "nope", "nah", "never", "dont", "doesnt", "didnt", "wont", "cant",
        "cannot", "isnt", "aint", "nothing", "none", "but", "if", "unless", "except",
        "without", "instead", "rather", "only", "or", "maybe", "perhaps", "cheaper", "less",
        "lower", "fewer", "discount", "half", "too", "than", "wait", "later", "cancel", "stop",
        "what", "why", "how", "when", "which", "who", "where", "whether",
    )
)  # fmt: skip
"""A negation, a condition, a haggle or a question word: the line is never a restatement,
even where the offer's own label holds the word."""
_RESTATING: Final = (_YES | _FILLER | _SMALL) - _LOOSE
_AGREEING: Final = _YES | frozenset(
    ("fine", "good", "great", "perfect", "right", "the", "that", "those", "these", "them")
)
"""Without the offer's own first word ("Buy", "Sell"), a restatement says yes or points at the
offer shown ("Fine, 4 loaves", "the 4 loaves"): bare terms ("4 loaves") may ask for a deal
the other way round."""
_TOKEN: Final = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:['\u2019][^\W\d_]+)*")


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    """Lowercase, without apostrophes; a number (or number word) as its digits, without
    thousands commas."""
    number: bool
    start: int
    end: int


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    # Spans are the text's own (lowercasing may change a string's length).
    for match in _TOKEN.finditer(text):
        raw = match.group().lower()
        if raw[0].isdigit():
            tokens.append(_Token(raw.replace(",", ""), True, match.start(), match.end()))
            continue
        word = raw.replace("'", "").replace("\u2019", "")
        number = _NUMBER_WORDS.get(word)
        tokens.append(_Token(word if number is None else number, number is not None, *match.span()))
    return tokens


def _same_word(said: str, written: str) -> bool:
    """Equal, or one the plural of the other ("cell" for "cells", "batteries" for "battery")."""
    if said == written:
        return True
    short, long = sorted((said, written), key=len)
    if len(short) < 3:
        return False
    return long in (f"{short}s", f"{short}es") or (
        short.endswith("y") and long == f"{short[:-1]}ies"
    )


def _names(word: str, written: Iterable[str]) -> bool:
    return any(_same_word(word, other) for other in written)


def restates(text: str, terms: OfferTerms, accepts: Callable[[str], bool] | None = None) -> bool:
    """Whether `text` restates the offer of `terms`, so accepts it ("Fine, 4 loaves then." for
    "Buy 4 loaves at 3").

    Every number in the line is one of the label's or cost's numbers; every word is a word of
    the label or cost (a plural for a singular is fine) or, by default, English assent or
    filler; at least one word names the offer (a word of the label that is not small talk).
    With `accepts` (a game's own plain yes) the line without the offer's words must be empty
    or a plain yes by that rule. Never: a question, more than 12 words, a negation, condition
    or haggle ("no", "but", "if", "cheaper", "instead"), "more" not after the offer's number,
    or "take" beside what the offer says the player gives (its cost's words).
    """
    if "?" in text:
        return False
    tokens = _tokens(text)
    if not tokens or len(tokens) > _RESTATE_MAX_WORDS:
        return False
    offered = _tokens(f"{terms.label} {terms.cost}")
    numbers = {token.text for token in offered if token.number}
    words = [token.text for token in offered if not token.number]
    naming = [t.text for t in _tokens(terms.label) if not t.number and t.text not in _RESTATING]
    giving = [token.text for token in _tokens(terms.cost) if not token.number]
    giving = [word for word in giving if word not in _RESTATING]
    named = receiving = gives = False
    rest: list[_Token] = []
    for index, token in enumerate(tokens):
        if token.number:
            if token.text not in numbers:
                return False
            continue
        if token.text == _MORE:
            if index == 0 or not tokens[index - 1].number:
                return False
            continue
        if token.text in _NEVER:
            return False
        if _names(token.text, words):
            named = named or _names(token.text, naming)
            gives = gives or _names(token.text, giving)
        else:
            rest.append(token)
        receiving = receiving or token.text == _TAKE
    if not named or (receiving and gives):
        return False
    verb = _says_verb(tokens, terms)
    if accepts is None:
        agreeing = any(token.text in _AGREEING for token in tokens)
        return (verb or agreeing) and all(token.text in _RESTATING for token in rest)
    if not rest:
        return verb
    # The game's rule reads the line as typed, with the offer's own words and numbers cut out.
    blanked = list(text)
    for token in tokens:
        if token not in rest:
            blanked[token.start : token.end] = " " * (token.end - token.start)
    return accepts("".join(blanked))


def _says_verb(tokens: Sequence[_Token], terms: OfferTerms) -> bool:
    """Whether the line holds the first word of the offer's label ("buy" of "Buy 4 loaves")."""
    first = next((t.text for t in _tokens(terms.label) if not t.number), None)
    return (
        first is not None
        and first not in _RESTATING
        and any(_same_word(t.text, first) for t in tokens)
    )


def _named_by(tokens: Sequence[_Token], terms: OfferTerms) -> bool:
    """Whether a word of the line names the offer (a word of its label that is not small talk)."""
    naming = [t.text for t in _tokens(terms.label) if not t.number and t.text not in _RESTATING]
    return any(not token.number and _names(token.text, naming) for token in tokens)


def offers_meant(
    text: str, pending: Sequence[Offer], accepts: Callable[[str], bool] | None = None
) -> tuple[Offer, ...]:
    """The pending offers typed `text` accepts: those whose terms it restates, else all of
    them when it plainly says yes (by `accepts`, a game's rule, or `plain_acceptance`).

    One: accept it. Several: ask which. None: the line is words for the NPC.
    """
    restated = tuple(offer for offer in pending if restates(text, offer.draft.terms, accepts))
    tokens = _tokens(text)
    # Without its verb, a restatement whose words also name a pending deal of another action
    # ("3 loaves" beside "Buy 5 loaves" and "Sell 3 loaves") does not say which way: the number
    # alone never decides whether the player gives or receives.
    restated = tuple(
        offer
        for offer in restated
        if _says_verb(tokens, offer.draft.terms)
        or not any(
            other.draft.action != offer.draft.action and _named_by(tokens, other.draft.terms)
            for other in pending
        )
    )
    if restated:
        return restated
    return tuple(pending) if (accepts or plain_acceptance)(text) else ()
