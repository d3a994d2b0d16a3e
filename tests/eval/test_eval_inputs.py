"""Scenario files and transcripts, read from hand-written input."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from starharness.eval import ScenarioFileError, load_scenarios, model_turns
from starharness.runtime.session import SessionEvent
from starharness.runtime.session import event_types as ev


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("scenarios: [", "not valid YAML"),
        ("scenarios: []", "scenarios"),
        (
            "scenarios:\n  - name: a\n    player: p\n    steps:\n      - open: n\n        say: x\n",
            "exactly one of open, say, pick, accept or close",
        ),
        (
            "scenarios:\n  - name: a\n    player: p\n    steps:\n      - open: n\n"
            "  - name: a\n    player: p\n    steps:\n      - open: n\n",
            "two scenarios are named 'a'",
        ),
        (
            "scenarios:\n  - name: a\n    player: p\n    steps:\n      - open: n\n"
            "      - say: x\n        otherwise: y\n",
            "'otherwise' belongs to a pick or accept step",
        ),
    ],
)
def test_a_bad_scenario_file_names_the_problem(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "s.yml"
    path.write_text(text)
    with pytest.raises(ScenarioFileError, match=expected):
        load_scenarios(path)


def test_accept_and_pick_steps_read_a_flag_an_action_an_index_or_label_text(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.yml"
    path.write_text(
        "takes_from_player: [player_buys]\n"
        "scenarios:\n  - name: a\n    player: p\n    steps:\n      - open: n\n"
        "      - accept: true\n        otherwise: Yes.\n"
        "      - accept: book_passage\n"
        "      - pick: 2\n"
        "      - pick: job\n        otherwise: I'll do it.\n"
        "    expect:\n      no_commit: true\n      ignoring: [change_attitude]\n"
    )
    loaded = load_scenarios(path)
    steps = loaded.scenarios[0].steps
    assert [(s.accept, s.pick, s.otherwise) for s in steps[1:]] == [
        (True, None, "Yes."),
        ("book_passage", None, None),
        (False, 2, None),
        (False, "job", "I'll do it."),
    ]
    assert all(step.starts_turn for step in steps)
    assert loaded.takes_from_player == ["player_buys"]
    assert loaded.only(["a"]).takes_from_player == ["player_buys"]


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("      - accept: true\n        say: hi\n", "exactly one of open, say, pick, accept"),
        ("      - accept: false\n", "got none"),
        ('      - accept: "  "\n', "accept"),
        ("      - pick: 0\n", "pick"),
    ],
)
def test_a_bad_accept_or_pick_step_names_the_problem(
    tmp_path: Path, step: str, expected: str
) -> None:
    path = tmp_path / "s.yml"
    path.write_text("scenarios:\n  - name: a\n    player: p\n    steps:\n      - open: n\n" + step)
    with pytest.raises(ScenarioFileError, match=expected):
        load_scenarios(path)


def test_ignoring_belongs_to_no_commit(tmp_path: Path) -> None:
    path = tmp_path / "s.yml"
    path.write_text(
        "scenarios:\n  - name: a\n    player: p\n    steps:\n      - open: n\n"
        "    expect:\n      commit: {action: x}\n      ignoring: [y]\n"
    )
    with pytest.raises(ScenarioFileError, match="'ignoring' belongs to no_commit"):
        load_scenarios(path)


def test_json_scenarios_load_too(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    steps = [{"open": "npc-karsk"}, {"pick": 2, "otherwise": "hm"}, {"close": True}]
    path.write_text(json.dumps({"scenarios": [{"name": "j", "player": "p", "steps": steps}]}))
    loaded = load_scenarios(path)
    assert [step.starts_turn for step in loaded.scenarios[0].steps] == [True, True, False]


def _event(seq: int, kind: str, **data: Any) -> SessionEvent:
    return SessionEvent(seq, 1000 + seq, kind, MappingProxyType(data))


def _speak(seq: int, line: str) -> SessionEvent:
    arguments = json.dumps({"line": line})
    return _event(seq, ev.TOOL_CALL, call_id=f"c{seq}", name="speak", arguments=arguments)


REFUSAL = json.dumps({"ok": False, "reason": "cannot_afford", "hint": "they have 12,000"})


def test_turns_pair_refusals_with_the_next_line_and_count_tokens() -> None:
    events = [
        _event(0, ev.TURN_START, turn=1),
        _event(1, ev.REQUEST_CONTEXT, quirk={"choice": "forced-tool", "reason": "r"}),
        _event(2, ev.ASSISTANT_CHUNK, chunk={"type": "tool-call-delta"}),
        _event(3, ev.ASSISTANT_MESSAGE, text="", tool_calls=[{"name": "sell"}]),
        _event(4, ev.TOOL_CALL, call_id="c4", name="sell", arguments="{}"),
        _event(5, ev.TOOL_RESULT, call_id="c4", name="sell", content=REFUSAL, is_error=False),
        _event(6, ev.ASSISTANT_CHUNK, chunk={"type": "tool-call-delta"}),
        _event(7, ev.ASSISTANT_MESSAGE, text="", tool_calls=[{"name": "speak"}]),
        _speak(8, "Twelve thousand won't cover it, kid."),
        _event(9, ev.TURN_END, turn=1, reason="completed"),
        _event(10, ev.TURN_START, turn=2),
        _event(11, ev.ASSISTANT_MESSAGE, text="I am thinking.", tool_calls=[], usage=_usage()),
        _event(12, ev.TURN_END, turn=2, reason="completed"),
    ]
    first, second = model_turns(events, "speak", "line")
    assert first.speech_lines == ["Twelve thousand won't cover it, kid."]
    assert first.refusals[0].hint == "they have 12,000"
    assert first.refusals[0].next_line == "Twelve thousand won't cover it, kid."
    assert first.quirks == ["forced-tool"]
    assert first.tokens.estimated and first.tokens.output == 2
    assert second.plain_text == ["I am thinking."]
    assert not second.tokens.estimated
    assert (second.tokens.input, second.tokens.output, second.tokens.cache_read) == (900, 40, 600)


def test_a_refusal_without_a_later_line_has_no_next_line() -> None:
    events = [
        _event(0, ev.TURN_START, turn=1),
        _event(1, ev.TOOL_RESULT, call_id="c", name="sell", content=REFUSAL, is_error=False),
        _event(2, ev.TURN_END, turn=1, reason="error"),
    ]
    (turn,) = model_turns(events, "speak", "line")
    assert turn.refusals[0].next_line is None
    assert turn.end_reason == "error"


def _usage() -> dict[str, int]:
    return {"input": 900, "output": 40, "cache_read": 600, "cache_write": 0, "reasoning": 0}
