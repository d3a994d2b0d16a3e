"""Model-visible implies logged: what listeners add to a request is logged before it is sent,
and a request that differs from the one the log rebuilds is refused loudly."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from loop_support import create_agent, runtime_for

from starharness.mockllm import MockLlmServer, Success
from starharness.runtime.kernel import Next
from starharness.runtime.llm.types import LlmRequest, UserMessage
from starharness.runtime.llm.wire import to_wire_messages
from starharness.runtime.loop import AGENTS, PRE_STEP, REQUEST, OutgoingRequest, StepPlan
from starharness.runtime.loop.view_log import VERIFY_ENV, verify_request
from starharness.runtime.session import (
    VIEW_REWRITE,
    Session,
    SessionDataError,
    UnloggedViewError,
    ViewError,
    rebuild_requests,
    replace_op,
)
from starharness.runtime.session import event_types as ev


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def _assert_rebuilt_equals_sent(events: object, sent: list[dict[str, object]]) -> None:
    rebuilt = rebuild_requests(events)  # type: ignore[arg-type]
    assert len(rebuilt) == len(sent)
    for (header, messages), body in zip(rebuilt, sent, strict=True):
        assert header is not None
        wire = to_wire_messages(header["system"], messages)
        assert json.dumps(wire) == json.dumps(body["messages"])


async def test_a_message_injected_by_a_pre_step_listener_is_logged_before_it_is_sent(
    home: Path,
) -> None:
    async def inject(plan: StepPlan, next_: Next[StepPlan]) -> StepPlan | None:
        plan.messages.append(UserMessage("remember: be brief", source="plugin"))
        return await next_(plan)

    async with MockLlmServer() as mock:
        mock.script("p1", [Success(text="ok"), Success(text="ok again")])
        async with runtime_for(mock.base_url, home) as rt:
            handle, rec = await create_agent(
                rt.ctx, "p1", lambda c: c.on_waterfall(PRE_STEP, inject)
            )
            for text in ("one", "two"):
                handle.agent.followup(text)
                await handle.agent.when_idle()
            events = list(handle.agent.session.events)
            await handle.dispose()
        sent = [r.body for r in mock.requests]
    contents = [m.get("content") for m in sent[0]["messages"]]
    assert "remember: be brief" in contents
    rewrites = [e for e in events if e.type == VIEW_REWRITE]
    assert [r.data["by"] for r in rewrites] == ["agent/pre-step", "agent/pre-step"]
    assert rewrites[0].data["messages"][0]["content"] == "remember: be brief"
    assert [e.data["reason"] for e in rec.of(ev.TURN_END)] == ["completed", "completed"]
    _assert_rebuilt_equals_sent(events, sent)


async def test_a_request_listener_rewrite_replaces_a_span_and_stays_rebuildable(
    home: Path,
) -> None:
    async def redact(
        outgoing: OutgoingRequest, next_: Next[OutgoingRequest]
    ) -> OutgoingRequest | None:
        messages = list(outgoing.request.messages)
        for index, message in enumerate(messages):
            if isinstance(message, UserMessage) and "secret" in message.content:
                messages[index] = UserMessage("[redacted]", source=message.source)
        outgoing.request.messages = messages
        return await next_(outgoing)

    async with MockLlmServer() as mock:
        mock.script("p2", [Success(text="a"), Success(text="b")])
        async with runtime_for(mock.base_url, home) as rt:
            handle, _ = await create_agent(rt.ctx, "p2", lambda c: c.on_waterfall(REQUEST, redact))
            for text in ("my secret is 42", "and now?"):
                handle.agent.followup(text)
                await handle.agent.when_idle()
            events = list(handle.agent.session.events)
            await handle.dispose()
        sent = [r.body for r in mock.requests]
    assert all("secret" not in json.dumps(body["messages"]) for body in sent)
    rewrites = [e for e in events if e.type == VIEW_REWRITE]
    # Once redacted, the view stays so: the second request needs no second rewrite.
    assert len(rewrites) == 1
    assert rewrites[0].data["surface"]["op"] == "replace"
    assert rewrites[0].data["by"] == "agent/request"
    _assert_rebuilt_equals_sent(events, sent)


async def test_a_request_that_differs_from_the_log_is_refused(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script("p3", [Success(text="fine")])
        async with runtime_for(mock.base_url, home) as rt:
            handle, _ = await create_agent(rt.ctx, "p3")
            handle.agent.followup("hi")
            await handle.agent.when_idle()
            agent = handle.agent
            header = agent.session.header()
            assert header is not None
            messages = [*agent.session.messages(), UserMessage("smuggled", source="plugin")]
            request = LlmRequest("m", header["system"], messages, agent.session.id)
            for mode in ("projection", "rebuild"):
                with pytest.raises(UnloggedViewError, match="without logging it"):
                    verify_request(agent.session, request, mode)  # type: ignore[arg-type]
            # The request the log does rebuild passes.
            ok = LlmRequest("m", header["system"], agent.session.messages(), agent.session.id)
            verify_request(agent.session, ok, "rebuild")
            await handle.dispose()


def test_every_model_visible_event_declares_its_effect_on_the_view() -> None:
    session = Session("v")
    session.append(ev.USER_MESSAGE, {"content": "a"})
    with pytest.raises(SessionDataError, match="must declare its effect"):
        session.append(VIEW_REWRITE, {"messages": [{"role": "user", "content": "x"}]})
    with pytest.raises(SessionDataError, match="span needs"):
        session.append(ev.USER_MESSAGE, {"content": "b", "surface": replace_op(0, 5)})
    with pytest.raises(SessionDataError, match="unknown role"):
        session.append(
            VIEW_REWRITE, {"surface": "append", "messages": [{"role": "robot", "content": "x"}]}
        )
    assert [m.content for m in session.messages()] == ["a"]  # type: ignore[union-attr]


def test_a_replace_of_an_empty_span_fails_the_projection() -> None:
    session = Session("w")
    session.append(ev.USER_MESSAGE, {"content": "a"})
    session.append("turn/start", {"turn": 1})
    session.append(
        VIEW_REWRITE,
        {"surface": replace_op(1, 1), "messages": [{"role": "user", "content": "b"}]},
    )
    with pytest.raises(ViewError, match="holds no message"):
        session.messages()


def test_replaces_nest_summaries_of_summaries() -> None:
    session = Session("x")
    for index in range(4):
        session.append(ev.USER_MESSAGE, {"content": f"m{index}"})
    session.append(ev.USER_MESSAGE, {"content": "s1", "surface": replace_op(0, 2)})
    assert [m.content for m in session.messages()] == ["s1", "m3"]  # type: ignore[union-attr]
    session.append(ev.USER_MESSAGE, {"content": "m5"})
    session.append(ev.USER_MESSAGE, {"content": "s2", "surface": replace_op(0, 3)})
    assert [m.content for m in session.messages()] == ["s2", "m5"]  # type: ignore[union-attr]
    # A fresh projection of the same log agrees.
    rebuilt = Session("y", session.events).messages()
    assert rebuilt == session.messages()


@pytest.mark.parametrize(
    ("variable", "mode"),
    [("off", "off"), ("rebuild", "rebuild"), ("bogus", "projection"), (None, "projection")],
)
async def test_the_verify_view_variable_overrides_every_agents_option(
    home: Path, monkeypatch: pytest.MonkeyPatch, variable: str | None, mode: str
) -> None:
    """Read once per runtime's agent manager; a value that names no mode is ignored."""
    if variable is None:
        monkeypatch.delenv(VERIFY_ENV, raising=False)
    else:
        monkeypatch.setenv(VERIFY_ENV, variable)
    async with runtime_for("http://127.0.0.1:9", home) as runtime:
        agents = runtime.ctx.get(AGENTS)
        handle = await agents.create(
            "s1", options=replace(agents.defaults, verify_view="projection")
        )
        assert handle.agent.verify_view == mode
