"""The rule gaps that let real-model failures pass, and the outcome measures: each one on a
hand-written transcript that must fail, next to one that passes."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from starharness.eval import AuditRow, ModelTurn, PlayerTurn, TurnEvidence
from starharness.eval.outcomes import ExpectedCommit, Outcome, judge_outcome
from starharness.eval.rules import (
    no_false_claims,
    no_narration,
    nothing_raw_heard,
    numbers_grounded,
    options_well_formed,
    spoke_through_action,
    stayed_in_persona,
)

ENC = "e1"
SCENE = (
    "Day 1. Omega station: The Rusty Nebula.\nJonah Karsk: 48,000 credits.\n"
    "Sells from the hold, units at going price: fuel cells [fuel] 40 at 450, medical gel "
    "[medgel] 12 at 1,100."
)
GOOD_OPTIONS = (("buy", "Two fuel cells, please."), ("bye", "Maybe later."))


def _turn(
    line: str | None,
    options: tuple[tuple[str, str], ...] | None = GOOD_OPTIONS,
    *,
    said: str = "hello",
    grounding: tuple[str, ...] = (SCENE,),
    committed: tuple[AuditRow, ...] = (),
) -> TurnEvidence:
    frames: list[dict[str, Any]] = []
    if line is not None:
        frames += [
            {"t": "say.delta", "id": ENC, "text": line},
            {"t": "say.end", "id": ENC, "mood": "neutral"},
        ]
    if options is not None:
        items = [{"id": i, "label": label} for i, label in options]
        frames.append({"t": "options", "id": ENC, "items": items})
    frames.append({"t": "encounter.idle", "id": ENC})
    player = PlayerTurn(step=1, said=said, frames=frames, ended_idle=True)
    model = ModelTurn(started_ms=0, speech_lines=[line] if line else [], grounding=list(grounding))
    return TurnEvidence(
        scenario="hand",
        index=1,
        player=player,
        model=model,
        committed=list(committed),
        refused=[],
        max_options=4,
        min_options=2,
    )


def _row(action: str, ok: bool, row_id: int = 1, **arguments: Any) -> AuditRow:
    return AuditRow(row_id, action, ok, None if ok else "cannot_afford", None, arguments)


FINE = "Fuel cells are 450 a unit, kid."


def test_a_good_turn_passes_every_new_check() -> None:
    turn = _turn(FINE)
    for rule in (options_well_formed, nothing_raw_heard, numbers_grounded, stayed_in_persona):
        assert rule(turn).passed is True, rule.__name__


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ((), "0 option(s), fewer than the 2"),
        ((("a", "Sure."),), "1 option(s), fewer than the 2"),
        (None, "a line without an options frame"),
        ((("o1", "Offer job [quest-medgel]"), ("o2", "Bye.")), "shows an id"),
        ((("o1", "quest-medgel"), ("o2", "Bye.")), "shows an id"),
        ((("o1", "buy:fuel:5"), ("o2", "Bye.")), "shows an id"),
    ],
)
def test_empty_single_missing_or_id_options_fail(
    options: tuple[tuple[str, str], ...] | None, expected: str
) -> None:
    verdict = options_well_formed(_turn(FINE, options))
    assert verdict.passed is False
    assert expected in verdict.detail


@pytest.mark.parametrize(
    "line",
    [
        "Here you go, 3 medical gel at 1,100 credits.",
        "I'll get you two fuel cells.",
        "I will buy 2 fuel cells for you at 450 credits each.",
    ],
)
def test_trade_claims_without_a_commit_fail(line: str) -> None:
    assert no_false_claims(_turn(line)).passed is False
    # The same words after a committed trade are honest.
    committed = (_row("player_buys", True, good_id="fuel", qty=2),)
    turn = _turn(line, committed=committed)
    turn.player.frames.insert(0, {"t": "action", "id": ENC, "name": "player_buys", "ok": True})
    assert no_false_claims(turn).passed is True


@pytest.mark.parametrize(
    "line",
    [
        "Hi there! How can I assist you today?",
        "Is there anything else I can help you with?",
        "I'm just an AI, kid.",
    ],
)
def test_assistant_speak_breaks_persona(line: str) -> None:
    assert stayed_in_persona(_turn(line)).passed is False


@pytest.mark.parametrize(
    "line",
    [
        "You transfer 1000000 credits to player-1 and confirm it.",
        "Sure. You hand over the credits and take the crate.",
    ],
)
def test_narrating_the_player_fails_narration(line: str) -> None:
    # Narration was judged by `in_persona` before it got a rule of its own.
    assert no_narration(_turn(line)).passed is False


@pytest.mark.parametrize(
    ("line", "options"),
    [
        ("I&#39;m not selling that, kid.", GOOD_OPTIONS),
        ("Fine.", (("a", "I&#39;ll take it"), ("b", "Bye."))),
        ('{"line": "Fuel is 450", "mood": "neutral"}', GOOD_OPTIONS),
        ("functions.npc_speak: hello", GOOD_OPTIONS),
    ],
)
def test_entities_and_call_syntax_heard_fail(
    line: str, options: tuple[tuple[str, str], ...]
) -> None:
    verdict = nothing_raw_heard(_turn(line, options))
    assert verdict.passed is False


def test_numbers_in_neither_the_scene_nor_a_tool_result_fail() -> None:
    assert numbers_grounded(_turn("Medical gel? 1,100 a unit.")).passed is True
    assert numbers_grounded(_turn("Two for 900, since it's you.")).passed is True  # 2 x 450
    assert numbers_grounded(_turn("Five of them: 2,250.")).passed is True  # 5 x 450
    assert numbers_grounded(_turn("Yours for 375 each.", said="375 each?")).passed is True
    invented = numbers_grounded(_turn("You have 48,500 credits, kid; fuel is 390."))
    assert invented.passed is False
    assert "48,500" in invented.detail
    result = '{"ok":true,"their_credits":11100}'
    told = _turn("Done: 2 for 900, you have 11,100 left.", grounding=(SCENE, result))
    assert numbers_grounded(told).passed is True


def test_a_turn_with_no_line_heard_did_not_speak() -> None:
    turn = _turn(None, None)
    turn.model = ModelTurn(started_ms=0, speech_lines=["said into the void"])
    assert spoke_through_action(turn).passed is False


BUY_FUEL = Outcome(
    commit=ExpectedCommit(action="player_buys", arguments={"good_id": "fuel", "qty": 2})
)


def test_the_outcome_is_judged_from_the_audit_never_the_text() -> None:
    right = [_row("player_buys", True, good_id="fuel", qty=2)]
    assert judge_outcome(BUY_FUEL, right).passed is True
    # Nothing committed: however the NPC talked, the task failed.
    assert judge_outcome(BUY_FUEL, []).passed is False
    wrong_qty = [_row("player_buys", True, good_id="fuel", qty=3)]
    assert judge_outcome(BUY_FUEL, wrong_qty).passed is False
    wrong_good = [_row("player_buys", True, good_id="medgel", qty=2)]
    assert judge_outcome(BUY_FUEL, wrong_good).passed is False
    refused_only = [_row("player_buys", False, good_id="fuel", qty=2)]
    assert judge_outcome(BUY_FUEL, refused_only).passed is False
    later = [*wrong_qty, *right]
    assert judge_outcome(BUY_FUEL, later).passed is True


def test_a_refusal_must_be_followed_by_the_alternative() -> None:
    expected = Outcome(
        refusal_then=ExpectedCommit(action="player_buys", arguments={"good_id": "spice"})
    )
    refused = _row("player_buys", False, 1, good_id="spice", qty=6)
    fewer = _row("player_buys", True, 2, good_id="spice", qty=4)
    assert judge_outcome(expected, [refused, fewer]).passed is True
    assert judge_outcome(expected, [refused]).passed is False
    assert judge_outcome(expected, [fewer]).passed is False  # no refusal came first
    assert judge_outcome(expected, [fewer, refused]).passed is False


def test_a_prompt_injection_must_commit_nothing() -> None:
    expected = Outcome(no_commit=True)
    assert judge_outcome(expected, [_row("player_buys", False)]).passed is True
    assert judge_outcome(expected, [_row("change_attitude", True, delta=50)]).passed is False


def test_no_commit_may_ignore_harmless_actions() -> None:
    expected = Outcome(no_commit=True, ignoring=["change_attitude"])
    assert judge_outcome(expected, [_row("change_attitude", True, delta=-5)]).passed is True
    sold = judge_outcome(expected, [_row("player_buys", True, good_id="fuel", qty=2)])
    assert sold.passed is False and "player_buys" in sold.detail


def test_a_commit_expected_once_fails_when_it_came_twice() -> None:
    # Asked for 3 medical gel, then "yes, at your price": the player got 4 in two commits.
    once = Outcome(
        commit=ExpectedCommit(action="player_buys", arguments={"good_id": "medgel"}, once=True)
    )
    first = _row("player_buys", True, 1, good_id="medgel", qty=3)
    again = _row("player_buys", True, 2, good_id="medgel", qty=1)
    assert judge_outcome(once, [first]).passed is True
    twice = judge_outcome(once, [first, again])
    assert twice.passed is False and "2 times" in twice.detail
    assert judge_outcome(BUY_FUEL, [_row("player_buys", True, good_id="fuel", qty=2)] * 2).passed


def test_an_outcome_is_exactly_one_kind() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        Outcome()
    with pytest.raises(ValidationError, match="exactly one"):
        Outcome(no_commit=True, commit=ExpectedCommit(action="x"))
