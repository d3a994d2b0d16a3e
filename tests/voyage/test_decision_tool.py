"""The decide-act-speak plan's decision tool: its schema and how it reads a decision."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.npc import GameKit
from starharness.npc.encounter.decision import DECISION_TOOL, NO_ACTION, decisions_out_of_view
from starharness.runtime.llm import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from starharness.runtime.llm.quirks import strict_compatible
from starharness.runtime.tools import ToolArgsError
from starharness.voyage import GAME

KIT = GameKit.of(GAME)
DECIDE = KIT.decision_tool


def test_the_schema_offers_every_action_but_speech_and_none() -> None:
    variants = DECIDE.schema.parameters["properties"]["action"]["anyOf"]
    names = [v["properties"]["name"]["enum"][0] for v in variants]
    assert names[-1] == NO_ACTION
    assert set(names[:-1]) == {t.name for t in KIT.tools} - {KIT.speech_tool.name}
    # Bound parameters (who pays whom) are not the model's to choose, here either.
    buys = next(v for v in variants if v["properties"]["name"]["enum"] == ["player_buys"])
    assert "npc_id" not in buys["properties"]["arguments"]["properties"]
    assert "player_id" not in json.dumps(DECIDE.schema.parameters)


def test_the_speech_tool_is_strict_so_servers_can_enforce_it() -> None:
    assert strict_compatible(KIT.speech_tool.schema.parameters)
    options = KIT.speech_tool.schema.parameters["properties"]["options"]
    assert (options["minItems"], options["maxItems"]) == (2, 4)


def test_a_decision_is_read_into_the_action_and_its_parsed_arguments() -> None:
    arguments = {"good_id": "fuel", "qty": 2, "unit_price": 450}
    raw = {"action": {"name": "player_buys", "arguments": arguments}}
    decision = DECIDE.parse(json.dumps(raw))
    assert decision.name == "player_buys"
    assert decision.arguments.qty == 2
    assert DECIDE.parse('{"action": {"name": "none"}}').tool is None
    # Entities copied from an escaping template are decoded before the world sees them.
    reason = {"delta": -2, "reason": "a &#34;fair&#34; price"}
    raw = {"action": {"name": "change_attitude", "arguments": reason}}
    assert DECIDE.parse(json.dumps(raw)).arguments.reason == 'a "fair" price'


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ('{"action": {"name": "give_credits"}}', "'give_credits' is not one of"),
        ('{"action": "player_buys"}', "field 'action'"),
        ('{"action": {"name": "player_buys", "arguments": {"qty": 0}}}', "action 'player_buys'"),
        ("functions.player_buys: {}", "not a JSON object"),
    ],
)
def test_an_unreadable_decision_names_what_is_wrong(raw: str, named: str) -> None:
    with pytest.raises(ToolArgsError, match=named):
        DECIDE.parse(raw)


@given(st.text(max_size=200))
def test_any_text_is_a_decision_or_a_clear_error(raw: str) -> None:
    try:
        decision = DECIDE.parse(raw)
    except ToolArgsError as exc:
        assert str(exc)
    else:
        assert decision.name


def _decided(call_id: str, action: str) -> AssistantMessage:
    arguments = json.dumps({"action": {"name": action}})
    return AssistantMessage(tool_calls=(ToolCall(call_id, DECISION_TOOL, arguments),))


_SPOKE = AssistantMessage(tool_calls=(ToolCall("s1", "npc_speak", '{"line":"Aye."}'),))
_CONVERSATION: list[Message] = [
    UserMessage("Evening."),
    _decided("d1", NO_ACTION),
    ToolMessage("d1", '{"ok":true,"action":"none"}'),
    _SPOKE,
    ToolMessage("s1", "The player heard you."),
    UserMessage("Two fuel cells."),
    _decided("d2", "player_buys"),
    ToolMessage("d2", '{"action":"player_buys","ok":true}'),
    UserMessage('Result of your decision: {"action":"player_buys","ok":true}', source="context"),
    UserMessage("Sell me a ship."),
    _decided("d3", "sell_ship"),
    ToolMessage("d3", "unknown action", is_error=True),
]


def test_decisions_the_model_need_not_read_again_leave_its_view() -> None:
    hidden = decisions_out_of_view(_CONVERSATION, results_repeated=True)
    # Talking only and acting both leave (the acting one's result is repeated in context);
    # the unreadable call stays, with its error: nothing repeats it.
    assert [m for m in _CONVERSATION if m not in hidden] == _CONVERSATION[1:3] + _CONVERSATION[6:8]
    # Where tool results are shown, the acting decision's call carries its result: it stays.
    shown = decisions_out_of_view(_CONVERSATION)
    assert [m for m in _CONVERSATION if m not in shown] == _CONVERSATION[1:3]
    # Nothing to hide: the same list, not a copy.
    only_speech = _CONVERSATION[3:6]
    assert decisions_out_of_view(only_speech, results_repeated=True) is only_speech
