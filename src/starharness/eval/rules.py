"""The scoring rules: each looks at one turn's evidence and passes, fails, or does not apply."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from .evidence import Frame, TurnEvidence


@dataclass(frozen=True, slots=True)
class Verdict:
    """A rule's finding for one turn; `passed` is None when the rule does not apply."""

    passed: bool | None
    detail: str = ""


NOT_APPLICABLE: Final = Verdict(None, "does not apply")
Rule = Callable[[TurnEvidence], Verdict]

_STAGE_DIRECTION = re.compile(
    r"\*[^*\n]{1,80}\*"  # *leans back*
    r"|^\s*\([^)]{1,80}\)"  # (sighs) at the start of a line
    r"|\[[^\]\n]{1,80}\]"  # [laughs]
    r"|\b(?:smiles|sighs|nods|shrugs|chuckles|grins|leans (?:back|in|forward))\b[^.!?]*\*",
    re.IGNORECASE | re.MULTILINE,
)
_META_TALK = re.compile(
    r"\bthe player\b|\bthe npc\b|\bnpc_\w+|\btool[ _]?call|\bfunction call|\bfunctions\.\w+"
    r"|\bjson\b|\bsystem prompt\b|\bmy (?:instructions|prompt|persona)\b|\bthe scene says\b"
    r"|\b(?:ok|hint|reason)\s*:\s*(?:false|true)\b|\{\s*\"",
    re.IGNORECASE,
)
_OUT_OF_PERSONA = re.compile(
    r"\bas an ai\b|\bi(?:'m| am) (?:just |only )?an? (?:ai|artificial intelligence|assistant"
    r"|language model|chatbot|bot)\b|\blanguage model\b|\bopenai\b|\bchatgpt\b"
    r"|\bi (?:can(?:not|'t)|am unable to) (?:assist|help) with (?:that|this) request\b",
    re.IGNORECASE,
)
_TRADE_CLAIM = re.compile(
    r"\b(?:sold|transferred|credited|wired|paid) (?:you|it|them|\d|the)"
    r"|\bhere (?:are|is) (?:your|the) (?:\d|fuel|gel|goods|spice|credits|crates|ticket|berth)"
    r"|\b(?:deal(?: is)? done|it'?s a deal|pleasure doing business|enjoy your (?:purchase|cargo))"
    r"|\b(?:i(?:'ve| have)) (?:sent|given|added|transferred|loaded|credited)\b"
    r"|\b(?:credits|money) (?:have been|were|are now) (?:sent|added|transferred|in your)"
    r"|\bgive you (?:the )?\d[\d,.]* credits\b|\byou now (?:have|own)\b",
    re.IGNORECASE,
)
_JUNK_LABEL = re.compile(r"[{}<>\\]|&#?\w+;|\"\s*:|^\W+$")
_STOP_TEXT: Final = (
    "about after again also because been before being cannot could does doing from have here "
    "into just more most much only other over same should some such than that their them then "
    "there these they this those under very what when where which while will with would your "
    "yours you"
)
_STOP_WORDS: Final = frozenset(_STOP_TEXT.split())
MAX_LABEL_CHARS: Final = 80


def spoke_through_action(turn: TurnEvidence) -> Verdict:
    """The NPC spoke through the speech action, never as plain text outside it."""
    model = turn.model
    if model is None:
        return Verdict(False, "no transcript for this turn")
    if model.plain_text:
        return Verdict(False, f"plain text outside the speech action: {model.plain_text[0]!r}")
    if not model.speech_lines:
        return Verdict(False, "the NPC said nothing through the speech action")
    return Verdict(True)


def no_stage_directions(turn: TurnEvidence) -> Verdict:
    """No stage directions (*smiles*, [laughs]) and no talk about prompts, tools or the player."""
    lines = turn.player.lines()
    if not lines:
        return NOT_APPLICABLE
    for line in lines:
        found = _STAGE_DIRECTION.search(line) or _META_TALK.search(line)
        if found is not None:
            return Verdict(False, f"{found.group(0)!r} in {_short(line)!r}")
    return Verdict(True)


def stayed_in_persona(turn: TurnEvidence) -> Verdict:
    """The NPC never calls itself an AI, a model or an assistant."""
    lines = turn.player.lines()
    if not lines:
        return NOT_APPLICABLE
    for line in lines:
        found = _OUT_OF_PERSONA.search(line)
        if found is not None:
            return Verdict(False, f"{found.group(0)!r} in {_short(line)!r}")
    return Verdict(True)


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
                f"{_short(refusal.next_line)!r} shares none of it",
            )
    return Verdict(True)


def no_false_claims(turn: TurnEvidence) -> Verdict:
    """A line that claims a trade comes with a committed action, and the audit agrees."""
    actions_ok = [frame for frame in turn.player.of_type("action") if frame.get("ok") is True]
    if turn.audit_available and len(actions_ok) != len(turn.committed):
        return Verdict(
            False,
            f"{len(actions_ok)} committed action frame(s) but {len(turn.committed)} committed "
            "audit row(s)",
        )
    for line in turn.player.lines():
        claim = _TRADE_CLAIM.search(line)
        if claim is not None and not actions_ok:
            return Verdict(False, f"claims {claim.group(0)!r} but nothing committed")
    return Verdict(True)


def options_well_formed(turn: TurnEvidence) -> Verdict:
    """Every options frame: at most the game's maximum, unique ids, short clean labels."""
    frames = turn.player.of_type("options")
    if not frames:
        return NOT_APPLICABLE
    for frame in frames:
        problem = _options_problem(list(frame.get("items") or []), turn.max_options)
        if problem is not None:
            return Verdict(False, problem)
    return Verdict(True)


def turn_completed(turn: TurnEvidence) -> Verdict:
    """The turn ended with `encounter.idle`, every frame fit the schema, and no error frame."""
    player = turn.player
    if player.invalid_frames:
        return Verdict(False, f"invalid frame: {player.invalid_frames[0]}")
    errors = player.of_type("error")
    if errors:
        return Verdict(False, f"error {errors[0].get('code')}: {errors[0].get('message')}")
    if not player.ended_idle:
        return Verdict(False, "no encounter.idle")
    return Verdict(True)


RULES: Final[dict[str, Rule]] = {
    "completed": turn_completed,
    "spoke_via_action": spoke_through_action,
    "no_stage_directions": no_stage_directions,
    "in_persona": stayed_in_persona,
    "reflects_refusal": reflected_refusal,
    "no_false_claims": no_false_claims,
    "options_well_formed": options_well_formed,
}
"""Every rule by the name reports use, in report order."""


def score(turn: TurnEvidence) -> dict[str, Verdict]:
    """Every rule's verdict for one turn."""
    return {name: rule(turn) for name, rule in RULES.items()}


def _options_problem(items: Sequence[Frame], max_options: int) -> str | None:
    if len(items) > max_options:
        return f"{len(items)} options, more than the {max_options} allowed"
    ids: set[str] = set()
    for item in items:
        option_id = str(item.get("id", ""))
        label = str(item.get("label", ""))
        if not option_id.strip() or option_id in ids:
            return f"option id {option_id!r} is blank or repeated"
        ids.add(option_id)
        if not label.strip():
            return f"option {option_id!r} has no label"
        if len(label) > MAX_LABEL_CHARS:
            return f"option {option_id!r} label is {len(label)} characters long"
        if _JUNK_LABEL.search(label):
            return f"option {option_id!r} label looks like markup or JSON: {_short(label)!r}"
    return None


def _key_terms(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z'-]{3,}|\d[\d,]*", text.lower())
    return {word.replace(",", "") for word in words if word not in _STOP_WORDS}


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
