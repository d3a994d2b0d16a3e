"""The scoring rules: each looks at one turn's evidence and passes, fails, or does not apply.

This module holds the rules over the turn's shape (completed, spoken, options, nothing raw,
numbers) and the registry of every rule; `speech_rules` judges what the NPC says and
`deal_rules` what it trades.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ..npc.speech import copies
from .deal_rules import no_false_claims, only_accepted_commits, reflected_refusal
from .evidence import Frame, TurnEvidence
from .speech_rules import (
    no_echo,
    no_narration,
    no_self_repeat,
    no_stage_directions,
    stayed_in_persona,
)
from .verdict import NOT_APPLICABLE, Rule, Verdict, clip

__all__ = [
    "MAX_LABEL_CHARS",
    "NOT_APPLICABLE",
    "RULES",
    "Rule",
    "Verdict",
    "no_echo",
    "no_false_claims",
    "no_narration",
    "no_self_repeat",
    "no_stage_directions",
    "nothing_raw_heard",
    "numbers_grounded",
    "only_accepted_commits",
    "options_well_formed",
    "reflected_refusal",
    "score",
    "spoke_through_action",
    "stayed_in_persona",
    "turn_completed",
]

_JUNK_LABEL = re.compile(r"[{}<>\\]|&#?\w+;|\"\s*:|^\W+$")
_ID_IN_LABEL = re.compile(r"\[[^\]]*\]|\b[a-z]+(?:-[a-z0-9]+)+\b|\b\w+:\w+(?::\w+)*\b")
"""`[quest-medgel]`, `quest-medgel`, `buy:fuel:5`: ids, not what a player says."""
_NPC_VOICE_LABEL = re.compile(
    r"\bwhat can i (?:do|get) (?:for )?you\b|\bhow (?:can|may) i (?:help|assist)\b"
    r"|\bwhat'?ll it be\b|\bwhat(?:'s| is) your pleasure\b|\bwelcome (?:back|aboard)\b"
    r"|\bwhat brings you\b",
    re.IGNORECASE,
)
"""An option worded as the NPC's line, not as what the player says. Only what a player never
says to an NPC: "Would you like my ore?", "Here's your gel" and "I'll sell you 5" are a
player's words too (selling, delivering); a label copied from the NPC's line is caught apart."""
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,8});", re.IGNORECASE)
_RAW_CALL = re.compile(r'^\s*[{\[]|"\w+"\s*:\s*[\[{"\d]|\bfunctions\.\w+|<tool_call>')
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
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


def options_well_formed(turn: TurnEvidence) -> Verdict:
    """Every line comes with options: at least the game's minimum and at most its maximum,
    unique ids, short clean labels in the player's words (no ids)."""
    frames = turn.player.of_type("options")
    if not frames:
        if turn.min_options > 0 and turn.player.of_type("say.end"):
            return Verdict(False, "a line without an options frame")
        return NOT_APPLICABLE
    lines = turn.player.lines()
    for frame in frames:
        items: list[Frame] = list(frame.get("items") or [])
        problem = _options_problem(items, turn.max_options, turn.min_options) or _voice_problem(
            items, lines
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
            return Verdict(False, f"{found.group(0)!r} in {clip(text)!r}")
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
                return Verdict(False, f"{number} in {clip(line)!r} is in neither the scene "
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
    "no_narration": no_narration,
    "no_echo": no_echo,
    "no_self_repeat": no_self_repeat,
    "reflects_refusal": reflected_refusal,
    "no_false_claims": no_false_claims,
    "only_accepted_commits": only_accepted_commits,
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
            return f"option {option_id!r} label looks like markup or JSON: {clip(label)!r}"
        found = _ID_IN_LABEL.search(label)
        if found is not None:
            return f"option {option_id!r} label shows an id ({found.group(0)!r}): {label!r}"
    return None


def _voice_problem(items: Sequence[Frame], lines: Sequence[str]) -> str | None:
    """An option worded as the NPC's own line (or copied from it) instead of the player's."""
    for item in items:
        if item.get("offer"):
            continue  # the game writes an offer's label
        label = str(item.get("label", ""))
        found = _NPC_VOICE_LABEL.search(label)
        if found is not None:
            return f"option {item.get('id')!r} is the NPC's line, not the player's: {label!r}"
        if any(copies(label, line) for line in lines):
            return f"option {item.get('id')!r} repeats the NPC's line: {label!r}"
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
