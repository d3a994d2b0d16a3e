"""Compaction: prune then summarize on token pressure, compact-and-retry-once on the provider's
context-overflow error; all of it in the log, every request rebuildable from it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from context_support import (
    assert_rebuilt_equals_sent,
    compaction_row,
    context_runtime,
    is_summary_request,
    produce_call,
    register_blob_tool,
    summary_step,
)
from loop_support import create_agent

from starharness.mockllm import ChatRequest, ContextOverflow, MockLlmServer, Step, Success
from starharness.runtime.context import (
    CompactionConfig,
    Compactor,
    ProviderThresholds,
    rebuild_summary_requests,
)
from starharness.runtime.context.events import (
    COMPACTION_END,
    COMPACTION_PRUNE,
    COMPACTION_START,
    COMPACTION_SUMMARY,
)
from starharness.runtime.llm import DEEPSEEK
from starharness.runtime.loop import AgentOptions
from starharness.runtime.session import event_types as ev

WINDOW = 6_000


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def _player(request: ChatRequest) -> Step:
    if is_summary_request(request):
        return summary_step(request)
    last = request.messages[-1]
    if last.role == "user":
        return produce_call(5_000, f"c{request.turn}")
    return Success(text=f"done with step {request.turn}")


async def test_token_pressure_prunes_then_summarizes_and_keeps_requests_in_the_window(
    home: Path,
) -> None:
    row = compaction_row(context_window=WINDOW, prune={"threshold_chars": 2_000})
    async with MockLlmServer(responder=_player) as mock:
        async with context_runtime(mock.base_url, home, [row]) as rt:
            handle, rec = await create_agent(rt.ctx, "c1", register_blob_tool)
            for turn in range(12):
                handle.agent.followup(f"task {turn}: " + "details " * 200)
                await handle.agent.when_idle()
            events = list(handle.agent.session.events)
            await handle.dispose()
        sent = [r.body for r in mock.requests]
    assert [e.data["reason"] for e in rec.of(ev.TURN_END)] == ["completed"] * 12
    starts = [e for e in events if e.type == COMPACTION_START]
    ends = [e for e in events if e.type == COMPACTION_END]
    assert starts and len(starts) == len(ends)
    assert {e.data["trigger"] for e in starts} == {"pressure"}
    assert any(e.type == COMPACTION_PRUNE for e in events)
    assert any(e.data["outcome"] == "summarized" for e in ends)
    for end in ends:
        assert end.data["tokens_after"] < end.data["tokens_before"]
    agent_requests = [
        body for body in sent if "compact the history" not in body["messages"][0]["content"]
    ]
    # Every request stayed under the window (4 characters a token, as the estimate and the mock).
    assert all(len(json.dumps(body)) // 4 < WINDOW for body in agent_requests)
    assert_rebuilt_equals_sent(events, agent_requests)
    # The summarizer's requests, too, rebuild from the log.
    summarizer = [
        [m["content"] for m in body["messages"]]
        for body in sent
        if "compact the history" in body["messages"][0]["content"]
    ]
    assert summarizer and [list(r) for r in rebuild_summary_requests(events)] == summarizer


async def test_context_overflow_compacts_and_retries_once(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script(
            "c2",
            [
                Success(text="first answer"),
                ContextOverflow(),
                Success(text="a summary of the first exchange"),
                Success(text="second answer"),
            ],
        )
        async with context_runtime(mock.base_url, home, [compaction_row()]) as rt:
            handle, rec = await create_agent(rt.ctx, "c2")
            for text in ("first question " * 20, "second"):
                handle.agent.followup(text)
                await handle.agent.when_idle()
            events = list(handle.agent.session.events)
            await handle.dispose()
        sent = [r.body for r in mock.requests]
    assert [e.data["reason"] for e in rec.of(ev.TURN_END)] == ["completed", "completed"], [
        (e.type, dict(e.data)) for e in events if e.type.startswith(("compaction", "turn/end"))
    ]
    (start,) = [e for e in events if e.type == COMPACTION_START]
    (summary,) = [e for e in events if e.type == COMPACTION_SUMMARY]
    assert start.data["trigger"] == "overflow"
    assert summary.data["text"] == "a summary of the first exchange"
    retried = sent[3]["messages"]
    assert any("a summary of the first exchange" in str(m.get("content")) for m in retried)
    assert all("first question" not in str(m.get("content")) for m in retried)
    agent_requests = [sent[0], sent[1], sent[3]]
    assert_rebuilt_equals_sent(events, agent_requests)


async def test_a_second_overflow_after_compacting_ends_the_turn(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script(
            "c3",
            [
                Success(text="first answer"),
                ContextOverflow(),
                Success(text="summary"),
                ContextOverflow(),
            ],
        )
        async with context_runtime(mock.base_url, home, [compaction_row()]) as rt:
            handle, rec = await create_agent(rt.ctx, "c3")
            for text in ("first question", "second"):
                handle.agent.followup(text)
                await handle.agent.when_idle()
            await handle.dispose()
        mock.assert_complete()
    end = rec.of(ev.TURN_END)[-1]
    assert end.data["reason"] == "error"
    assert end.data["kind"] == "ContextOverflowError"
    assert len(rec.of(COMPACTION_SUMMARY)) == 1


class _Provider:
    def __init__(self, name: str, window: int | None) -> None:
        from starharness.runtime.llm import OPENAI_COMPATIBLE

        self.name = name
        self.profile = replace(OPENAI_COMPATIBLE, context_window=window)


class _Llm:
    def __init__(self, provider: _Provider) -> None:
        self.provider = provider

    def get(self, name: str | None = None) -> _Provider:
        return self.provider


class _AgentStub:
    def __init__(self, provider: _Provider) -> None:
        self.llm = _Llm(provider)
        self.options = AgentOptions()


def test_thresholds_come_from_the_provider_profile_then_overrides() -> None:
    config = CompactionConfig(
        context_window=10_000,
        providers=[ProviderThresholds(provider="local", context_window=4_096, retain_ratio=0.25)],
    )
    compactor = Compactor(config)
    declared = compactor.limits(_AgentStub(_Provider("deepseek", 1_000_000)))  # type: ignore[arg-type]
    assert (declared.window, declared.threshold, declared.retain) == (1_000_000, 800_000, 160_000)
    fallback = compactor.limits(_AgentStub(_Provider("other", None)))  # type: ignore[arg-type]
    assert fallback.window == 10_000 and fallback.threshold == 8_000
    local = compactor.limits(_AgentStub(_Provider("local", None)))  # type: ignore[arg-type]
    assert (local.window, local.threshold, local.retain) == (4_096, 3_276, 1_024)
    assert DEEPSEEK.context_window == 1_000_000


def _talker(request: ChatRequest) -> Step:
    return Success(text=f"answer {request.turn}: " + "words " * 150)


async def test_forget_drops_the_oldest_exchanges_with_no_model_call(home: Path) -> None:
    row = compaction_row(context_window=WINDOW, summarize=False, forget=True)
    async with MockLlmServer(responder=_talker) as mock:
        async with context_runtime(mock.base_url, home, [row]) as rt:
            handle, rec = await create_agent(rt.ctx, "f1")
            for turn in range(30):
                handle.agent.followup(f"question {turn}: " + "detail " * 150)
                await handle.agent.when_idle()
            events = list(handle.agent.session.events)
            await handle.dispose()
        sent = [r.body for r in mock.requests]
    assert [e.data["reason"] for e in rec.of(ev.TURN_END)] == ["completed"] * 30
    ends = [e for e in events if e.type == COMPACTION_END]
    assert ends and {e.data["outcome"] for e in ends} == {"forgot"}
    assert not any(e.type == COMPACTION_SUMMARY for e in events)
    # One request per turn: forgetting asks the model nothing.
    assert len(sent) == 30
    assert all(len(json.dumps(body)) // 4 < WINDOW for body in sent)
    last = [str(m.get("content")) for m in sent[-1]["messages"]]
    assert not any(text.startswith("question 0:") for text in last)
    assert last[-1].startswith("question 29:")
    # The view still opens on a user message and every request rebuilds from the log.
    assert sent[-1]["messages"][1]["role"] == "user"
    assert_rebuilt_equals_sent(events, sent)
    # Forgetting is rare: each one leaves room for several turns.
    assert len(ends) <= 10


def test_forget_and_summarize_are_one_choice() -> None:
    with pytest.raises(ValueError, match="set summarize: false to forget"):
        CompactionConfig(forget=True)
    assert CompactionConfig(summarize=False, forget=True).forget
