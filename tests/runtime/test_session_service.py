"""SessionService over the in-memory store, retention, resume of interrupted turns, the plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import AssistantMessage, ToolMessage
from starharness.runtime.paths import star_harness_home
from starharness.runtime.session import (
    SESSIONS,
    MemoryStore,
    Session,
    SessionClosedError,
    SessionEvent,
    SessionExistsError,
    SessionNotFoundError,
    SessionsConfig,
    SessionService,
    SessionsPlugin,
    SqliteStore,
)
from starharness.runtime.session import event_types as ev


def _ticker() -> Any:
    now = [0]

    def clock() -> int:
        now[0] += 10
        return now[0]

    return clock


async def test_create_get_close_and_resume_from_memory_store() -> None:
    service = SessionService(MemoryStore())
    session = service.create("a", meta={"origin": "test"})
    assert service.get("a") is session
    assert "a" in service
    session.append(ev.USER_MESSAGE, {"content": "hi", "source": "user"})
    session.append(ev.TURN_END, {"turn": 1, "reason": "completed"})
    assert await service.resume("a") is session

    service.close("a")
    assert service.get("a") is None
    with pytest.raises(SessionClosedError, match="'a' is closed"):
        session.append("a/b", {})

    resumed = await service.resume("a")
    assert resumed is not session
    assert resumed.events == session.events
    assert resumed.meta["origin"] == "test"
    assert resumed.append("a/b", {}).seq == 2
    await service.aclose()


async def test_duplicate_and_unknown_ids_get_clear_errors() -> None:
    service = SessionService()
    service.create("a")
    with pytest.raises(SessionExistsError, match="'a' already exists"):
        service.create("a")
    service.close("a")
    with pytest.raises(SessionExistsError, match="resume it instead"):
        service.create("a")
    with pytest.raises(SessionNotFoundError, match="no session 'nope'"):
        await service.resume("nope")
    with pytest.raises(ValueError, match="non-empty string"):
        service.create("")


async def test_service_listeners_see_every_session() -> None:
    service = SessionService()
    seen: list[tuple[str, int]] = []

    def listener(session: Session, event: SessionEvent) -> None:
        seen.append((session.id, event.seq))

    dispose = service.subscribe(listener)
    service.create("a").append("x/y", {})
    service.create("b").append("x/y", {})
    service.get("a").append("x/y", {})  # type: ignore[union-attr]
    dispose()
    service.get("b").append("x/y", {})  # type: ignore[union-attr]
    assert seen == [("a", 0), ("b", 0), ("a", 1)]


async def test_a_listener_added_later_sees_sessions_opened_before_it() -> None:
    service = SessionService()
    early = service.create("early")
    early.append("x/y", {})
    seen: list[tuple[str, int]] = []
    dispose = service.subscribe(lambda session, event: seen.append((session.id, event.seq)))
    early.append("x/y", {})
    service.create("late").append("x/y", {})
    dispose()
    again = service.subscribe(lambda session, event: seen.append((session.id, -event.seq)))
    early.append("x/y", {})
    again()
    early.append("x/y", {})
    assert seen == [("early", 1), ("late", 0), ("early", -2)]


async def test_keep_sessions_retains_only_the_most_recently_active() -> None:
    service = SessionService(MemoryStore(), keep_sessions=2, clock=_ticker())
    for name in ("a", "b", "c", "d"):
        service.create(name).append("x/y", {})
    # All four are open, so none may go yet.
    assert {info.id for info in await service.stored()} == {"a", "b", "c", "d"}
    service.get("a").append("x/y", {})  # type: ignore[union-attr]  # "a" is now the most recent
    for name in ("a", "b", "c", "d"):
        service.close(name)
    assert [info.id for info in await service.stored()] == ["a", "d"]


async def test_delete_on_close_removes_the_log() -> None:
    service = SessionService(MemoryStore(), delete_on_close=True)
    service.create("a").append("x/y", {})
    service.create("b")
    service.close("a")
    assert [info.id for info in await service.stored()] == ["b"]
    with pytest.raises(SessionNotFoundError):
        await service.resume("a")


async def test_resume_closes_a_turn_cut_short_with_owed_tool_results() -> None:
    service = SessionService(MemoryStore())
    session = service.create("a")
    session.append(ev.TURN_START, {"turn": 1})
    session.append(ev.USER_MESSAGE, {"content": "go", "source": "user"})
    session.append(ev.STEP_START, {"turn": 1, "step": 1})
    session.append(
        ev.ASSISTANT_MESSAGE,
        {
            "turn": 1,
            "step": 1,
            "text": "",
            "tool_calls": [
                {"id": "c1", "name": "fast", "arguments": "{}"},
                {"id": "c2", "name": "slow", "arguments": "{}"},
            ],
            "finish": "tool-calls",
        },
    )
    session.append(
        ev.TOOL_RESULT, {"turn": 1, "step": 1, "call_id": "c1", "name": "fast", "content": "ok"}
    )
    service.close("a")  # the "crash": no turn/end was written

    resumed = await service.resume("a")
    tail = resumed.events[5:]
    assert [(e.seq, e.type) for e in tail] == [
        (5, ev.TOOL_RESULT),
        (6, ev.STEP_END),
        (7, ev.TURN_END),
    ]
    assert tail[0].data["call_id"] == "c2" and tail[0].data["is_error"] is True
    assert tail[0].data["content"].startswith("Error: ")
    assert dict(tail[1].data) == {"turn": 1, "step": 1}
    assert dict(tail[2].data) == {"turn": 1, "reason": "interrupted"}
    messages = resumed.messages()
    assert isinstance(messages[1], AssistantMessage)
    assert [m.call_id for m in messages if isinstance(m, ToolMessage)] == ["c1", "c2"]

    # A completed log is left alone.
    service.close("a")
    again = await service.resume("a")
    assert len(again.events) == 8


async def test_closed_store_refuses_writes() -> None:
    service = SessionService(MemoryStore())
    session = service.create("a")
    await service.aclose()
    with pytest.raises(SessionClosedError):
        session.append("x/y", {})


def test_star_harness_home_reads_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "state"))
    assert star_harness_home() == tmp_path / "state"
    monkeypatch.delenv("STAR_HARNESS_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert star_harness_home() == tmp_path / "home" / ".star-harness"


async def test_plugin_provides_sessions_in_the_default_sqlite_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    root = Context()
    plugin_ctx = root.fork("sessions")
    await SessionsPlugin().setup(plugin_ctx, SessionsConfig())
    root.get(SESSIONS).create("p").append(ev.USER_MESSAGE, {"content": "kept", "source": "user"})
    await root.dispose()
    assert not root.has(SESSIONS)

    store = SqliteStore(tmp_path / "home" / "sessions.db")
    stored = await store.load("p")
    await store.aclose()
    assert stored is not None
    assert [e.data["content"] for e in stored.events] == ["kept"]


async def test_plugin_memory_store_and_config_errors(tmp_path: Path) -> None:
    root = Context()
    await SessionsPlugin().setup(root.fork("sessions"), SessionsConfig(store="memory"))
    assert isinstance(root.get(SESSIONS).store, MemoryStore)
    await root.dispose()
    with pytest.raises(ValidationError, match="store"):
        SessionsConfig.model_validate({"store": "redis"})
    with pytest.raises(ValidationError, match="retention"):
        SessionsConfig.model_validate({"retention": 3})
