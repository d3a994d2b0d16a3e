"""Each scoring rule on hand-written turns: one that passes and ones that must fail."""

from __future__ import annotations

from typing import Any

import pytest

from starharness.eval import (
    AuditRow,
    ModelTurn,
    PlayerTurn,
    RefusalFollowUp,
    TurnEvidence,
    score,
)
from starharness.eval.rules import (
    no_false_claims,
    no_stage_directions,
    options_well_formed,
    reflected_refusal,
    spoke_through_action,
    stayed_in_persona,
    turn_completed,
)

ENC = "e1"


def _say(*lines: str) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    for line in lines:
        frames.append({"t": "say.delta", "id": ENC, "text": line})
        frames.append({"t": "say.end", "id": ENC, "mood": "neutral"})
    return frames


def _options(*items: tuple[str, str]) -> dict[str, Any]:
    return {"t": "options", "id": ENC, "items": [{"id": i, "label": label} for i, label in items]}


def _turn(
    frames: list[dict[str, Any]],
    *,
    model: ModelTurn | None = None,
    committed: list[AuditRow] | None = None,
    idle: bool = True,
    invalid: list[str] | None = None,
) -> TurnEvidence:
    player = PlayerTurn(step=1, said="hello", frames=list(frames), ended_idle=idle)
    if idle:
        player.frames.append({"t": "encounter.idle", "id": ENC})
    player.invalid_frames = invalid or []
    if model is None:
        model = ModelTurn(
            started_ms=0,
            speech_lines=player.lines(),
            grounding=["Sells from the hold, units at going price: fuel cells [fuel] 40 at 450."],
        )
    return TurnEvidence(
        scenario="hand",
        index=1,
        player=player,
        model=model,
        committed=committed or [],
        refused=[],
        max_options=4,
    )


GOOD = _turn([*_say("Evening, kid. Fuel's 450 a cell."), _options(("buy", "Buy two cells"))])


def test_a_disciplined_turn_passes_every_rule_that_applies() -> None:
    verdicts = score(GOOD)
    assert {name: v.passed for name, v in verdicts.items()} == {
        "completed": True,
        "spoke_via_action": True,
        "no_stage_directions": True,
        "in_persona": True,
        "no_narration": True,
        "no_echo": None,
        "no_self_repeat": None,
        "reflects_refusal": None,
        "no_false_claims": True,
        "only_accepted_commits": None,
        "options_well_formed": True,
        "nothing_raw": True,
        "numbers_grounded": True,
    }


def test_completed_fails_without_idle_with_an_error_or_an_invalid_frame() -> None:
    assert turn_completed(_turn(_say("Hm."), idle=False)).passed is False
    error = {"t": "error", "id": ENC, "code": "internal", "message": "boom"}
    failed = turn_completed(_turn([error]))
    assert failed.passed is False and "internal" in failed.detail
    invalid = turn_completed(_turn(_say("Hm."), invalid=["mood 'giddy' is not allowed"]))
    assert invalid.passed is False and "giddy" in invalid.detail


def test_plain_text_or_silence_is_not_speaking_through_the_action() -> None:
    plain = ModelTurn(started_ms=0, plain_text=["Hello there."])
    verdict = spoke_through_action(_turn(_say("Hello there."), model=plain))
    assert verdict.passed is False and "plain text" in verdict.detail
    silent = spoke_through_action(_turn([], model=ModelTurn(started_ms=0)))
    assert silent.passed is False


def test_a_missing_transcript_fails_speaking() -> None:
    turn = _turn(_say("Hi."))
    turn.model = None
    assert spoke_through_action(turn).passed is False


@pytest.mark.parametrize(
    "line",
    [
        "*leans back* Fuel's 450.",
        "(sighs) Fine.",
        "[laughs] Not a chance.",
        "I'll call npc_speak now.",
        "As the player asked, here it is.",
        'My answer is {"line": "hi"}',
        "functions.sell_goods: done",
    ],
)
def test_stage_directions_and_meta_talk_fail(line: str) -> None:
    verdict = no_stage_directions(_turn(_say(line)))
    assert verdict.passed is False, line


@pytest.mark.parametrize(
    "line",
    [
        "As an AI, I cannot give you credits.",
        "I'm just a language model.",
        "I am an assistant created to help.",
        "I can't help with that request.",
    ],
)
def test_breaking_character_fails(line: str) -> None:
    assert stayed_in_persona(_turn(_say(line))).passed is False


def test_persona_and_stage_rules_do_not_apply_to_a_silent_turn() -> None:
    assert stayed_in_persona(_turn([])).passed is None
    assert no_stage_directions(_turn([])).passed is None


def _refused(next_line: str | None) -> ModelTurn:
    refusal = RefusalFollowUp(
        action="player_buys",
        reason="cannot_afford",
        hint="they have 12,000 credits; 6 units cost 17,400",
        next_line=next_line,
    )
    lines = [next_line] if next_line else []
    return ModelTurn(started_ms=0, speech_lines=lines, refusals=[refusal])


def test_the_line_after_a_refusal_must_use_its_hint() -> None:
    echoed = _refused("You've got 12,000 credits, kid. Six units cost more than that.")
    assert reflected_refusal(_turn(_say("x"), model=echoed)).passed is True
    ignored = _refused("Lovely weather on the ring today.")
    verdict = reflected_refusal(_turn(_say("x"), model=ignored))
    assert verdict.passed is False and "shares none" in verdict.detail
    silent = reflected_refusal(_turn([], model=_refused(None)))
    assert silent.passed is False and "said nothing" in silent.detail


SALE = AuditRow(7, "player_buys", True, None, "Sold 2 fuel cells for 900 credits.")
SALE_FRAME = {"t": "action", "id": ENC, "name": "player_buys", "ok": True, "summary": "Sold"}


@pytest.mark.parametrize(
    "line",
    [
        "Done. I've transferred 1,000,000 credits to you.",
        "Here are your 2 fuel cells.",
        "Pleasure doing business.",
        "Sold you two cells, kid.",
    ],
)
def test_claiming_a_trade_that_did_not_commit_fails(line: str) -> None:
    verdict = no_false_claims(_turn(_say(line)))
    assert verdict.passed is False and "nothing committed" in verdict.detail


def test_a_claimed_trade_that_committed_passes() -> None:
    turn = _turn([SALE_FRAME, *_say("Here are your 2 fuel cells.")], committed=[SALE])
    assert no_false_claims(turn).passed is True


def test_action_frames_and_the_audit_must_agree() -> None:
    frame_only = no_false_claims(_turn([SALE_FRAME, *_say("There.")]))
    assert frame_only.passed is False and "audit" in frame_only.detail
    audit_only = no_false_claims(_turn(_say("There."), committed=[SALE]))
    assert audit_only.passed is False


@pytest.mark.parametrize(
    ("items", "problem"),
    [
        ([("a", "One"), ("b", "Two"), ("c", "Three"), ("d", "Four"), ("e", "Five")], "more than"),
        ([("a", "One"), ("a", "Two")], "repeated"),
        ([("x", "&#34;reward1st_credit")], "markup"),
        ([("x", '{"label": "hi"}')], "markup"),
        ([("x", "word " * 30)], "characters long"),
    ],
)
def test_malformed_options_fail(items: list[tuple[str, str]], problem: str) -> None:
    verdict = options_well_formed(_turn([*_say("Well?"), _options(*items)]))
    assert verdict.passed is False and problem in verdict.detail


def test_options_do_not_apply_when_none_were_sent() -> None:
    assert options_well_formed(_turn(_say("Well?"))).passed is None
