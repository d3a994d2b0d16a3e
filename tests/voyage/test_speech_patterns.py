"""Omega station's speech schema draws lines, labels and ids from plain characters, so anything
a schema-constrained model can say passes the eval's raw, markup and option rules."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starharness.eval import ModelTurn, PlayerTurn, TurnEvidence
from starharness.eval.rules import no_stage_directions, nothing_raw_heard, options_well_formed
from starharness.npc import SpeechContract, define_speech_tool
from starharness.voyage.actions import MOODS, SPEAK
from starharness.voyage.actions.speech import MAX_LABEL_CHARS, MAX_LINE_CHARS, MAX_OPTIONS

_PROPERTIES: dict[str, Any] = SPEAK.schema.parameters["properties"]
_LINE = _PROPERTIES["line"]["pattern"]
_OPTION = _PROPERTIES["options"]["items"]["properties"]
_LABEL, _ID = _OPTION["label"]["pattern"], _OPTION["id"]["pattern"]


def _evidence(line: str, options: list[tuple[str, str]]) -> TurnEvidence:
    frames: list[dict[str, Any]] = [
        {"t": "say.delta", "id": "e1", "text": line},
        {"t": "say.end", "id": "e1", "mood": "neutral"},
        {"t": "options", "id": "e1", "items": [{"id": i, "label": t} for i, t in options]},
        {"t": "encounter.idle", "id": "e1"},
    ]
    return TurnEvidence(
        scenario="patterns",
        index=1,
        player=PlayerTurn(step=1, said="hello", frames=frames, ended_idle=True),
        model=ModelTurn(started_ms=0, speech_lines=[line], grounding=[]),
        committed=[],
        refused=[],
        max_options=MAX_OPTIONS,
        min_options=2,
    )


@settings(max_examples=300, deadline=None)
@given(
    line=st.from_regex(_LINE, fullmatch=True),
    options=st.lists(
        st.tuples(st.from_regex(_ID, fullmatch=True), st.from_regex(_LABEL, fullmatch=True)),
        min_size=2,
        max_size=MAX_OPTIONS,
        unique_by=lambda option: option[0],
    ),
)
def test_whatever_the_patterns_allow_is_clean_speech(
    line: str, options: list[tuple[str, str]]
) -> None:
    # A call named in words (`functions.say`) is the one raw form letters and a dot can spell;
    # the speech tool refuses a line that starts with it.
    if "functions." in line:
        return
    turn = _evidence(line, options)
    for rule in (nothing_raw_heard, no_stage_directions, options_well_formed):
        verdict = rule(turn)
        assert verdict.passed is not False, (rule.__name__, verdict.detail)


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (_LINE, '{"line": "Fuel is 450"}'),
        (_LINE, "*leans back* Fuel is 450."),
        (_LINE, "I&#39;m out of fuel."),
        (_LINE, "[laughs] No."),
        (_LINE, "x" * (MAX_LINE_CHARS + 1)),
        (_LABEL, "Offer job [quest-medgel]"),
        (_LABEL, "quest-medgel"),
        (_LABEL, "buy:fuel:5"),
        (_LABEL, "!!"),
        (_LABEL, "a" * (MAX_LABEL_CHARS + 1)),
        (_ID, "ad918ce8_6dd2D7ABF,"),
        (_ID, ""),
    ],
)
def test_the_patterns_refuse_what_the_eval_flags(pattern: str, text: str) -> None:
    assert re.fullmatch(pattern, text) is None


def test_the_patterns_take_ordinary_speech() -> None:
    assert re.fullmatch(_LINE, "Fuel cells are 450 a unit, kid. Two? That's 900.")
    assert re.fullmatch(_LINE, "x" * MAX_LINE_CHARS)
    assert re.fullmatch(_LABEL, "I'll take two, please.")
    assert re.fullmatch(_LABEL, "a" * MAX_LABEL_CHARS)
    assert re.fullmatch(_ID, "buy2")


def test_a_contract_without_characters_has_no_patterns() -> None:
    contract = SpeechContract("say", "line", "mood", "options", max_line_chars=50)
    schema = define_speech_tool(contract, MOODS).schema.parameters
    properties = schema["properties"]
    option = properties["options"]["items"]["properties"]
    assert properties["line"] == {
        "type": "string",
        "description": "The words you say.",
        "maxLength": 50,
    }
    assert "pattern" not in option["id"] and "pattern" not in option["label"]
