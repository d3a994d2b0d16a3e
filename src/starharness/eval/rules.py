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
_NUMBER_WORD = r"(?:\d[\d,.]*|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|some|all)"
_TRADE_CLAIM = re.compile(
    r"\b(?:sold|transferred|credited|wired|paid) (?:you|it|them|\d|the)"
    # "Here you go, 3 medical gel at 1,100 credits"
    r"|\bhere you (?:go|are)\b"
    # "I'll get you two fuel cells", "I will buy 2 fuel cells for you at 450 credits each"
    r"|\bi(?:'ll| will| am going to|'m going to) (?:get|give|sell|buy|send|load|hand|transfer"
    r"|pay|put)(?: you)? " + _NUMBER_WORD + r"\b"
    r"|\bi(?:'ll| will) (?:take|buy) (?:them|it|those|these|your)\b"
    r"|\bhere (?:are|is) (?:your|the) (?:\d|fuel|gel|goods|spice|credits|crates|ticket|berth)"
    r"|\b(?:deal(?: is)? done|it'?s a deal|pleasure doing business|enjoy your (?:purchase|cargo))"
    r"|\b(?:i(?:'ve| have)) (?:sent|given|added|transferred|loaded|credited)\b"
    r"|\b(?:credits|money) (?:have been|were|are now) (?:sent|added|transferred|in your)"
    r"|\bgive you (?:the )?\d[\d,.]* credits\b|\byou now (?:have|own)\b",
    re.IGNORECASE,
)
_JUNK_LABEL = re.compile(r"[{}<>\\]|&#?\w+;|\"\s*:|^\W+$")
_ID_IN_LABEL = re.compile(r"\[[^\]]*\]|\b[a-z]+(?:-[a-z0-9]+)+\b|\b\w+:\w+(?::\w+)*\b")
"""`[quest-medgel]`, `quest-medgel`, `buy:fuel:5`: ids, not what a player says."""
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,8});", re.IGNORECASE)
_RAW_CALL = re.compile(r'^\s*[{\[]|"\w+"\s*:\s*[\[{"\d]|\bfunctions\.\w+|<tool_call>')
_NARRATION = re.compile(
    r"(?:^|[.!?]\s+|,\s+)(?:and )?you (?:hand|take|give|pay|transfer|walk|nod|smile|grin|"
    r"receive|pick|agree|accept|confirm|sign|count|pocket|load|grab|reach|shake|sit|lean|look|"
    r"turn|step|feel|notice|decide|buy|sell)(?:s|ed|ing)?\b",
    re.IGNORECASE,
)
"""The NPC describing what the player does ("You transfer 1000000 credits and confirm it")."""
_ASSISTANT_SPEAK = re.compile(
    r"\bhow (?:can|may) i (?:help|assist)(?: you)?\b|\bassist you\b"
    r"|\bis there anything else\b|\bi'?m here to help\b|\bfeel free to (?:ask|reach)\b"
    r"|\bhi there!|\bhappy to help\b|\bwhat can i do for you today\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
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
    if not turn.player.of_type("say.end"):
        return Verdict(False, "the player heard no line")
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
    """The NPC never calls itself an AI, never talks like an assistant, never narrates the
    player."""
    lines = turn.player.lines()
    if not lines:
        return NOT_APPLICABLE
    for line in lines:
        found = (
            _OUT_OF_PERSONA.search(line) or _ASSISTANT_SPEAK.search(line) or _NARRATION.search(line)
        )
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
    """Every line comes with options: at least the game's minimum and at most its maximum,
    unique ids, short clean labels in the player's words (no ids)."""
    frames = turn.player.of_type("options")
    if not frames:
        if turn.min_options > 0 and turn.player.of_type("say.end"):
            return Verdict(False, "a line without an options frame")
        return NOT_APPLICABLE
    for frame in frames:
        problem = _options_problem(
            list(frame.get("items") or []), turn.max_options, turn.min_options
        )
        if problem is not None:
            return Verdict(False, problem)
    return Verdict(True)


def nothing_raw_heard(turn: TurnEvidence) -> Verdict:
    """No HTML entity and no call syntax (JSON, `functions.x`) in anything the player hears."""
    heard = [*turn.player.lines(), *_labels(turn)]
    if not heard:
        return NOT_APPLICABLE
    for text in heard:
        found = _ENTITY.search(text) or _RAW_CALL.search(text)
        if found is not None:
            return Verdict(False, f"{found.group(0)!r} in {_short(text)!r}")
    return Verdict(True)


def numbers_grounded(turn: TurnEvidence) -> Verdict:
    """Every number the NPC says is in the scene, a tool result or the player's words."""
    lines = turn.player.lines()
    model = turn.model
    if not lines or model is None:
        return NOT_APPLICABLE
    known = {_plain_number(n) for text in (*model.grounding, turn.player.said)
             for n in _NUMBER.findall(text)}  # fmt: skip
    for line in lines:
        for number in _NUMBER.findall(line):
            value = _plain_number(number)
            if value not in known and not _derivable(value, known):
                return Verdict(False, f"{number} in {_short(line)!r} is in neither the scene "
                               "nor a tool result")  # fmt: skip
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
    "nothing_raw": nothing_raw_heard,
    "numbers_grounded": numbers_grounded,
}
"""Every rule by the name reports use, in report order."""


def score(turn: TurnEvidence) -> dict[str, Verdict]:
    """Every rule's verdict for one turn."""
    return {name: rule(turn) for name, rule in RULES.items()}


def _options_problem(items: Sequence[Frame], max_options: int, min_options: int) -> str | None:
    if len(items) > max_options:
        return f"{len(items)} options, more than the {max_options} allowed"
    if len(items) < min_options:
        return f"{len(items)} option(s), fewer than the {min_options} asked for"
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
        found = _ID_IN_LABEL.search(label)
        if found is not None:
            return f"option {option_id!r} label shows an id ({found.group(0)!r}): {label!r}"
    return None


def _labels(turn: TurnEvidence) -> list[str]:
    labels: list[str] = []
    for frame in turn.player.of_type("options"):
        items: list[Frame] = list(frame.get("items") or [])
        labels.extend(str(item.get("label", "")) for item in items)
    return labels


def _plain_number(text: str) -> str:
    value = text.replace(",", "")
    return value[:-2] if value.endswith(".0") else value


def _derivable(value: str, known: set[str]) -> bool:
    """Small counts (one to ten) and a product of two known numbers (2 x 450 = 900) pass."""
    try:
        number = float(value)
    except ValueError:
        return False
    if number <= 10:
        return True
    floats = [float(k) for k in known if k.replace(".", "", 1).isdigit()]
    counts = [float(n) for n in range(1, 11)]
    return any(a * b == number or a + b == number for a in floats for b in [*floats, *counts])


def _key_terms(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z'-]{3,}|\d[\d,]*", text.lower())
    return {word.replace(",", "") for word in words if word not in _STOP_WORDS}


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
