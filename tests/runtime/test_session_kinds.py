"""Typed session events: every declared kind round-trips through the real stores (SQLite and
PostgreSQL, `store_place`), stored data that does not fit its kind is a StoredEventError naming
the session, the event, its type and the field, and rows as earlier builds wrote them still read."""

from __future__ import annotations

import asyncio
import json
import types
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict, is_typeddict

# Imported for the kinds they declare: every kind the runtime logs is in the round trip.
from starharness.runtime.codemode import keys as codemode_events
from starharness.runtime.context import events as context_events
from starharness.runtime.llm.types import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from starharness.runtime.sandbox import keys as sandbox_events
from starharness.runtime.session import (
    EventKind,
    SessionDataError,
    SessionService,
    SqliteStore,
    StoredEventError,
    declared_kinds,
    kind_named,
    message_to_data,
    payload,
)
from starharness.runtime.session import event_types as ev
from starharness.runtime.session.sqlite.codec import row_checksum
from store_support import StorePlace

_RUNTIME_KINDS: tuple[EventKind[Any], ...] = (
    *ev.KINDS,
    *context_events.KINDS,
    *sandbox_events.KINDS,
    *codemode_events.KINDS,
)
_MODEL_VISIBLE = frozenset({ev.USER_MESSAGE, ev.ASSISTANT_MESSAGE, ev.TOOL_RESULT})

_json: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)

_message: st.SearchStrategy[Message] = st.one_of(
    st.builds(UserMessage, content=st.text(max_size=20), source=st.sampled_from(["user", "tool"])),
    st.builds(
        AssistantMessage,
        text=st.text(max_size=20),
        reasoning=st.none() | st.text(max_size=10),
        tool_calls=st.lists(
            st.builds(ToolCall, st.text(max_size=5), st.text(max_size=5), st.text(max_size=10)),
            max_size=2,
        ).map(tuple),
    ),
    st.builds(ToolMessage, st.text(max_size=5), st.text(max_size=20), st.booleans()),
)


def _strategy(hint: Any) -> st.SearchStrategy[Any]:
    """Values of a payload field's type, as a writer would log them (JSON only)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return _json
    if hint is type(None):
        return st.none()
    if hint is bool:
        return st.booleans()
    if hint is int:
        return st.integers()
    if hint is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if hint is str:
        return st.text(max_size=20)
    if origin is Literal:
        return st.sampled_from(args)
    if origin is Union or origin is types.UnionType:
        return st.one_of(*(_strategy(arg) for arg in args))
    if origin in (list, Sequence):
        return st.lists(_strategy(args[0]), max_size=3)
    if origin in (dict, Mapping):
        return st.dictionaries(st.text(max_size=8), _strategy(args[1]), max_size=3)
    if is_typeddict(hint):
        return _typed_dict(hint)
    raise TypeError(f"no strategy for a payload field of type {hint!r}")


def _typed_dict(shape: Any) -> st.SearchStrategy[dict[str, Any]]:
    hints = get_type_hints(shape)
    required: frozenset[str] = shape.__required_keys__
    return st.fixed_dictionaries(
        {name: _strategy(hints[name]) for name in hints if name in required},
        optional={name: _strategy(hints[name]) for name in hints if name not in required},
    )


def _data(kind: EventKind[Any]) -> st.SearchStrategy[dict[str, Any]]:
    if kind == ev.VIEW_REWRITE:
        # The projection refuses a rewrite whose messages cannot become messages.
        messages = st.lists(_message.map(message_to_data), max_size=3)
        return _typed_dict(kind.shape).flatmap(
            lambda data: messages.map(lambda m: {**data, "surface": "append", "messages": m})
        )
    if kind in _MODEL_VISIBLE:
        # A replace needs a span of earlier messages; appending is what the random data does.
        return _typed_dict(kind.shape).map(lambda data: {**data, "surface": "append"})
    return _typed_dict(kind.shape)


def test_the_round_trip_covers_every_declared_kind() -> None:
    # test/... kinds are declared by the tests below.
    runtime = {kind for kind in declared_kinds() if not kind.startswith("test/")}
    assert set(_RUNTIME_KINDS) == runtime


async def _round_trip(place: StorePlace, logged: Sequence[tuple[EventKind[Any], Any]]) -> None:
    session_id = uuid.uuid4().hex
    service = SessionService(await place.open(max_write_delay_s=0))
    session = service.create(session_id)
    written = [session.log(kind, data) for kind, data in logged]
    await service.aclose()
    store = await place.open()
    try:
        stored = await store.load(session_id)
    finally:
        await store.aclose()
    assert stored is not None
    assert [(e.type, e.data) for e in stored.events] == [(e.type, e.data) for e in written]
    for event, (kind, _) in zip(stored.events, logged, strict=True):
        assert payload(event, kind) == event.data


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.tuples(*(_data(kind) for kind in _RUNTIME_KINDS)))
def test_every_kind_round_trips_through_the_store(
    store_place: StorePlace, data: tuple[dict[str, Any], ...]
) -> None:
    asyncio.run(_round_trip(store_place, list(zip(_RUNTIME_KINDS, data, strict=True))))


def _insert(path: Path, session_id: str, rows: Sequence[tuple[str, str]]) -> None:
    """Rows (type, data JSON) as a build wrote them: each with its checksum, in one write."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        conn.execute(
            "INSERT INTO sessions (id, created_at, updated_at, meta) VALUES (?, 1, 1, '{}')",
            (session_id,),
        )
        for seq, (kind, data) in enumerate(rows):
            crc = row_checksum(session_id, seq, 1000 + seq, kind, data)
            conn.execute(
                "INSERT INTO events (session_id, seq, time, type, data, batch, crc)"
                " VALUES (?, ?, ?, ?, ?, 1, ?)",
                (session_id, seq, 1000 + seq, kind, data, crc),
            )
        conn.commit()
    finally:
        conn.close()


async def _store_with(tmp_path: Path, rows: Sequence[tuple[str, str]]) -> SqliteStore:
    path = tmp_path / "s.db"
    await (await SqliteStore.open(path)).aclose()  # the schema, as any build creates it
    _insert(path, "old", rows)
    return await SqliteStore.open(path)


# Rows exactly as the builds before typed events wrote them (compact JSON, the writers' key order).
_OLD_ROWS = [
    ("request/header", '{"system":"You are a test.","tools":[],"reason":"initial"}'),
    ("turn/start", '{"turn":1}'),
    ("user/message", '{"content":"héllo","source":"user"}'),
    (
        "request/context",
        '{"provider":"mock","model":"m","max_tokens":null,"temperature":null,"tool_choice":'
        '{"name":"npc_speak"},"quirk":{"choice":"forced-tool","reason":"r","tool":"npc_speak"}}',
    ),
    ("step/start", '{"turn":1,"step":1}'),
    (
        "assistant/chunk",
        '{"turn":1,"step":1,"chunk":{"input":3,"output":1,"cache_read":0,"cache_write":0,'
        '"reasoning":0,"type":"usage"}}',
    ),
    (
        "assistant/message",
        '{"turn":1,"step":1,"text":"","tool_calls":[{"id":"c1","name":"shell","arguments":"{}"}],'
        '"finish":"tool-calls"}',
    ),
    ("tool/call", '{"turn":1,"step":1,"call_id":"c1","name":"shell","arguments":"{}"}'),
    ("command/done", '{"call_id":"c1","job":"job-1","status":"stopped"}'),
    (
        "tool/result",
        '{"turn":1,"step":1,"call_id":"c1","name":"shell","content":"x","is_error":true,'
        '"error":{"code":"ABORTED"}}',
    ),
    ("step/end", '{"turn":1,"step":1,"error":"context-overflow"}'),
    (
        "user/message",
        '{"content":"Summary","source":"summary","surface":{"op":"replace","start":2,"end":2},'
        '"compaction":"abc"}',
    ),
    ("turn/end", '{"turn":1,"reason":"aborted","cause":"user","detail":"stop"}'),
]


async def test_rows_written_before_typed_events_still_read(tmp_path: Path) -> None:
    store = await _store_with(tmp_path, _OLD_ROWS)
    try:
        stored = await store.load("old")
    finally:
        await store.aclose()
    assert stored is not None and stored.dropped == 0
    assert [e.type for e in stored.events] == [kind for kind, _ in _OLD_ROWS]
    assert [json.loads(data) for _, data in _OLD_ROWS] == [
        json.loads(json.dumps(e.data)) for e in stored.events
    ]
    done = payload(stored.events[8], sandbox_events.COMMAND_DONE)
    assert done.get("status") == "stopped"
    assert payload(stored.events[10], ev.STEP_END).get("error") == "context-overflow"
    assert payload(stored.events[12], ev.TURN_END)["reason"] == "aborted"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ('{"turn":1,"reason":"finished"}', r"data\['reason'\]: Input should be 'completed'"),
        ('{"reason":"completed"}', r"data\['turn'\] is missing"),
        ('{"turn":"1","reason":"completed"}', r"data\['turn'\]: Input should be a valid integer"),
    ],
)
async def test_a_stored_payload_that_does_not_fit_names_the_event_and_the_field(
    tmp_path: Path, data: str, problem: str
) -> None:
    store = await _store_with(tmp_path, [("turn/start", '{"turn":1}'), ("turn/end", data)])
    try:
        with pytest.raises(
            StoredEventError, match=r"session 'old': event 1 \(turn/end\): " + problem
        ):
            await store.load("old")
    finally:
        await store.aclose()


async def test_a_damaged_payload_deep_in_the_data_names_its_path(tmp_path: Path) -> None:
    message = (
        '{"turn":1,"step":1,"text":"","tool_calls":[{"id":"c1","name":7,"arguments":"{}"}],'
        '"finish":"stop"}'
    )
    store = await _store_with(tmp_path, [("assistant/message", message)])
    try:
        with pytest.raises(
            StoredEventError,
            match=r"event 0 \(assistant/message\): data\['tool_calls'\]\[0\]\['name'\]: "
            r"Input should be a valid string, got 7",
        ):
            await store.load("old")
    finally:
        await store.aclose()


class _LateData(TypedDict):
    count: int


async def test_a_type_declared_after_loading_is_checked_when_read(tmp_path: Path) -> None:
    store = await _store_with(
        tmp_path, [("test/late", '{"count":"many"}'), ("test/late", '{"count":2}')]
    )
    try:
        stored = await store.load("old")
    finally:
        await store.aclose()
    assert stored is not None
    try:
        late = kind_named("test/late")
    except KeyError:
        late = EventKind("test/late", _LateData)
    assert payload(stored.events[1], late) == {"count": 2}
    with pytest.raises(StoredEventError, match=r"event 0 \(test/late\): data\['count'\]"):
        payload(stored.events[0], late)


def test_reading_an_event_as_another_kind_is_refused() -> None:
    from starharness.runtime.session import Session

    event = Session("s").log(ev.TURN_START, ev.TurnStartData(turn=1))
    with pytest.raises(SessionDataError, match="event 0 is a turn/start event, read as turn/end"):
        payload(event, ev.TURN_END)
