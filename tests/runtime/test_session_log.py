"""The session log: append, seq, immutability, listeners and the incremental projection."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from starharness.runtime.llm.types import AssistantMessage, ToolCall, ToolMessage, UserMessage
from starharness.runtime.session import (
    FrozenDict,
    Session,
    SessionDataError,
    SessionEvent,
    freeze_data,
    rebuild_requests,
    thaw,
)
from starharness.runtime.session import event_types as ev


def _ticker(start: int = 1_000) -> Any:
    now = [start]

    def clock() -> int:
        now[0] += 1
        return now[0]

    return clock


def test_append_numbers_events_by_index_and_stamps_time() -> None:
    session = Session("s1", clock=_ticker())
    first = session.append(ev.TURN_START, {"turn": 1})
    second = session.append(ev.USER_MESSAGE, {"content": "hi", "source": "user"})
    assert (first.seq, second.seq) == (0, 1)
    assert session.created_at == 1_001
    assert (first.time, second.time) == (1_002, 1_003)
    assert [e.type for e in session.events] == [ev.TURN_START, ev.USER_MESSAGE]
    assert session.events[1] is second
    assert len(session.events) == 2


def test_appended_data_is_a_frozen_deep_copy() -> None:
    session = Session("s1")
    data: dict[str, Any] = {"turn": 1, "nested": {"items": [1, {"k": "v"}]}}
    event = session.append("custom/thing", data)
    data["turn"] = 99
    data["nested"]["items"].append(2)
    data["nested"]["items"][1]["k"] = "changed"
    assert thaw(event.data) == {"turn": 1, "nested": {"items": [1, {"k": "v"}]}}
    with pytest.raises(TypeError):
        event.data["turn"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        event.data["nested"]["new"] = 1
    assert isinstance(event.data["nested"]["items"], tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.seq = 5  # type: ignore[misc]


def test_data_frozen_once_is_reused_and_a_hand_made_frozen_dict_is_not_trusted() -> None:
    session = Session("s1")
    first = session.append("custom/thing", {"nested": {"items": [1, 2]}, "n": 1})
    again = session.append("custom/copy", {"from": first.data["nested"], "all": first.data})
    # Frozen event data is immutable, so later events share it instead of copying it.
    assert again.data["from"] is first.data["nested"]
    assert again.data["all"] is first.data
    assert freeze_data(first.data) is first.data
    items: list[int] = [1]
    hand_made = FrozenDict({"items": items})
    event = session.append("custom/hand", {"inner": hand_made})
    items.append(2)
    assert event.data["inner"] is not hand_made
    assert event.data["inner"]["items"] == (1,)


def test_events_view_cannot_be_used_to_change_the_log() -> None:
    session = Session("s1")
    session.append("a/b", {})
    events = session.events
    assert not hasattr(events, "append")
    assert isinstance(events[0:1], tuple)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"a": {1, 2}}, "data['a'] is a set"),
        ({"a": [1, math.nan]}, "data['a'][1] is nan"),
        ({"a": {3: "x"}}, "key 3 of type int"),
        ({"a": object()}, "data['a'] is a object"),
    ],
)
def test_non_json_data_is_refused_and_the_log_is_unchanged(
    data: dict[str, Any], fragment: str
) -> None:
    session = Session("s1")
    with pytest.raises(SessionDataError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        session.append("custom/x", data)
    assert len(session.events) == 0
    assert session.append("custom/x", {"ok": True}).seq == 0


def test_model_visible_events_with_missing_fields_are_refused() -> None:
    session = Session("s1")
    with pytest.raises(SessionDataError, match=r"user/message needs data\['content'\]"):
        session.append(ev.USER_MESSAGE, {"text": "wrong field"})
    with pytest.raises(SessionDataError, match=r"tool_calls'\]\[0\]"):
        session.append(ev.ASSISTANT_MESSAGE, {"text": "", "tool_calls": [{"id": "c1"}]})
    with pytest.raises(SessionDataError, match=r"tool/result needs data\['call_id'\]"):
        session.append(ev.TOOL_RESULT, {"content": "x"})
    assert len(session.events) == 0


def test_listeners_see_events_synchronously_and_a_failing_one_does_not_stop_others() -> None:
    session = Session("s1")
    seen: list[int] = []

    def broken(event: SessionEvent) -> None:
        raise RuntimeError("listener bug")

    session.subscribe(broken)
    dispose = session.subscribe(lambda event: seen.append(event.seq))
    session.append("a/b", {})
    assert seen == [0]
    dispose()
    session.append("a/b", {})
    assert seen == [0]


def _assistant(turn: int, step: int, text: str, *calls: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "turn": turn,
        "step": step,
        "text": text,
        "tool_calls": [{"id": i, "name": n, "arguments": a} for i, n, a in calls],
        "finish": "tool-calls" if calls else "stop",
    }


def test_projection_makes_messages_from_model_visible_events_only() -> None:
    session = Session("s1")
    session.append(ev.TURN_START, {"turn": 1})
    session.append(ev.USER_MESSAGE, {"content": "hello", "source": "user"})
    session.append(ev.USER_MESSAGE, {"content": "scene: dusk", "source": "context"})
    session.append(ev.STEP_START, {"turn": 1, "step": 1})
    session.append(
        ev.ASSISTANT_CHUNK, {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "x"}}
    )
    session.append(
        ev.ASSISTANT_MESSAGE,
        {**_assistant(1, 1, "let me look", ("c1", "look", '{"at":"door"}')), "reasoning": "hm"},
    )
    session.append(ev.TOOL_CALL, {"turn": 1, "step": 1, "call_id": "c1", "name": "look"})
    session.append(
        ev.TOOL_RESULT,
        {"turn": 1, "step": 1, "call_id": "c1", "name": "look", "content": "a door"},
    )
    session.append(
        ev.TOOL_RESULT,
        {
            "turn": 1,
            "step": 1,
            "call_id": "c2",
            "name": "x",
            "content": "Error: no",
            "is_error": True,
        },
    )
    assert list(session.messages()) == [
        UserMessage("hello", "user"),
        UserMessage("scene: dusk", "context"),
        AssistantMessage("let me look", "hm", (ToolCall("c1", "look", '{"at":"door"}'),)),
        ToolMessage("c1", "a door", False),
        ToolMessage("c2", "Error: no", True),
    ]


def test_projection_processes_only_new_events_and_keeps_its_list() -> None:
    session = Session("s1")
    for i in range(3):
        session.append(ev.USER_MESSAGE, {"content": f"m{i}", "source": "user"})
    first = session.messages()
    assert session.projection_examined == 3
    again = session.messages()
    assert again is first
    assert session.projection_examined == 3
    session.append(ev.TURN_START, {"turn": 1})
    session.append(ev.USER_MESSAGE, {"content": "m3", "source": "user"})
    later = session.messages()
    assert later is first
    assert session.projection_examined == 5
    assert [m.content for m in later if isinstance(m, UserMessage)] == ["m0", "m1", "m2", "m3"]
    for i in range(100):
        session.append(ev.ASSISTANT_CHUNK, {"turn": 1, "step": 1, "chunk": {"n": i}})
        session.messages()
    assert session.projection_examined == 105


def test_header_is_the_last_logged_request_header() -> None:
    session = Session("s1")
    assert session.header() is None
    session.append(ev.REQUEST_HEADER, {"system": "one", "tools": [], "reason": "initial"})
    session.append(ev.USER_MESSAGE, {"content": "x", "source": "user"})
    header = session.header()
    assert header is not None and header["system"] == "one"
    session.append(ev.REQUEST_HEADER, {"system": "two", "tools": [], "reason": "change"})
    header = session.header()
    assert header is not None and header["system"] == "two"
    rebuilt = Session("copy", session.events)
    assert rebuilt.header() == header


def test_rebuild_requests_returns_header_and_messages_before_each_request() -> None:
    session = Session("s1")
    sent: list[tuple[Any, list[Any]]] = []

    def request(provider: str = "mock") -> None:
        sent.append((session.header(), list(session.messages())))
        session.append(
            ev.REQUEST_CONTEXT, {"provider": provider, "model": "m", "tool_choice": "auto"}
        )

    session.append(ev.REQUEST_HEADER, {"system": "sys A", "tools": [], "reason": "initial"})
    session.append(ev.TURN_START, {"turn": 1})
    session.append(ev.USER_MESSAGE, {"content": "go", "source": "user"})
    request()
    session.append(ev.ASSISTANT_MESSAGE, _assistant(1, 1, "", ("c1", "t", "{}")))
    session.append(
        ev.TOOL_RESULT, {"turn": 1, "step": 1, "call_id": "c1", "name": "t", "content": "ok"}
    )
    session.append(
        ev.LLM_RETRY, {"attempt": 1, "delay_s": 0.1, "error": "429", "after_output": False}
    )
    request()
    session.append(ev.ASSISTANT_MESSAGE, _assistant(1, 2, "done"))
    session.append(ev.TURN_END, {"turn": 1, "reason": "completed"})
    session.append(ev.REQUEST_HEADER, {"system": "sys B", "tools": [], "reason": "change"})
    session.append(ev.USER_MESSAGE, {"content": "again", "source": "user"})
    request()

    rebuilt = rebuild_requests(session.events)
    assert rebuilt == sent
    assert [h["system"] for h, _ in rebuilt if h is not None] == ["sys A", "sys A", "sys B"]
    assert [len(messages) for _, messages in rebuilt] == [1, 3, 5]


def test_loaded_events_out_of_order_are_refused_naming_the_index() -> None:
    session = Session("s1")
    for text in ("a", "b", "c"):
        session.append(ev.USER_MESSAGE, {"content": text, "source": "user"})
    events = list(session.events)
    assert len(Session("copy", events).events) == 3
    with pytest.raises(SessionDataError, match=r"index 1 has seq 2"):
        Session("gap", [events[0], events[2]])
    with pytest.raises(SessionDataError, match=r"index 0 has seq 1"):
        Session("late", events[1:])
