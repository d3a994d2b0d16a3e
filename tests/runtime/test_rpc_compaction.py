"""Compaction through `star-harness rpc` against the mock LLM: a fourth long request that would
overflow the window is answered in the same turn after the older turns are summarized, and the
request itself is never summarized away; a request that cannot fit ends with an error naming
the window."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from rpc_child_support import RpcChild, rpc_child, stored_events

from session_protocol_support import mock_rows, write_patch
from starharness.mockllm import ChatRequest, MockLlmServer, Step, Success

WINDOW = 24_000
"""Tokens; the estimate (and the mock's requests) count 4 characters a token."""


def _texts(body: Any) -> list[str]:
    return [str(m.get("content")) for m in body["messages"]]


def _summary_body(body: Any) -> bool:
    """Whether the request (its JSON body) is the compactor's summary request."""
    return bool(body["messages"]) and "compact the history" in str(
        body["messages"][0].get("content")
    )


def _answer(request: ChatRequest) -> Step:
    if _summary_body(request.body):
        return Success(text="SUMMARY: the user sent three long notes, each acknowledged.")
    # The dynamic context (the date) follows the request: answer the newest note.
    notes = [m.text for m in request.messages if m.role == "user" and m.text.startswith("note")]
    return Success(text=f"ack {notes[-1][:8]}" if notes else "ack")


def _note(n: int, chars: int) -> str:
    head = f"note{n}: "
    return head + ("lorem ipsum " * (chars // 12 + 1))[: chars - len(head)]


@asynccontextmanager
async def _session(
    home: Path, tmp_path: Path
) -> AsyncIterator[tuple[RpcChild, str, MockLlmServer]]:
    """`rpc` with compaction at a WINDOW-token window, at the mock: the child, the id of a new
    session, and the mock."""
    async with MockLlmServer(responder=_answer) as mock:
        rows: list[dict[str, Any]] = [
            *mock_rows(mock.base_url, None),
            {"id": "sessions", "config": {"store": "sqlite"}},
            {
                "id": "compaction",
                "plugin": "starharness.runtime.context:CompactionPlugin",
                "config": {"context_window": WINDOW, "threshold_ratio": 0.85, "retain_ratio": 0.16},
                "before": "agents",
            },
        ]
        patch = write_patch(tmp_path, rows)
        async with rpc_child(home, tmp_path, ["--patch", str(patch)]) as child:
            await child.call("initialize", {"protocolVersion": 1})
            sid = (await child.call("session", {"action": "create"}))["sessionId"]
            yield child, sid, mock


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "home"
    folder.mkdir()
    yield folder


async def test_a_fourth_request_over_the_window_compacts_and_is_answered_in_the_same_turn(
    home: Path, tmp_path: Path
) -> None:
    async with _session(home, tmp_path) as (child, sid, mock):
        results = [
            await child.call("prompt", {"sessionId": sid, "text": _note(n, 20_000)})
            for n in range(1, 5)
        ]
        await child.call("shutdown", {})
    requests = [_texts(r.body) for r in mock.requests if not _summary_body(r.body)]
    summaries = [r for r in mock.requests if _summary_body(r.body)]
    assert [(r["turn"], r["reason"]) for r in results] == [(n, "completed") for n in range(1, 5)]
    assert results[3]["text"] == "ack " + _note(4, 20_000)[:8]
    assert len(summaries) == 1
    # The fourth turn's request to the model: the summary, then the fourth note, whole.
    fourth = requests[-1]
    assert any("SUMMARY: the user sent" in text for text in fourth)
    assert _note(4, 20_000) in fourth
    assert all(not text.startswith(("note1", "note2", "note3")) for text in fourth)
    events = stored_events(home, sid)
    kinds = [kind for kind, _ in events]
    assert "compaction/summary" in kinds
    [end] = [data for kind, data in events if kind == "compaction/end"]
    assert end["outcome"] == "summarized" and end["tokens_after"] < end["tokens_before"]
    # The compaction happened inside the fourth turn, before its one model request.
    turn_starts = [i for i, kind in enumerate(kinds) if kind == "turn/start"]
    assert kinds.index("compaction/start") > turn_starts[3]


async def test_a_request_larger_than_the_window_ends_the_turn_naming_the_window(
    home: Path, tmp_path: Path
) -> None:
    async with _session(home, tmp_path) as (child, sid, mock):
        small = await child.call("prompt", {"sessionId": sid, "text": _note(1, 2_000)})
        huge = await child.call("prompt", {"sessionId": sid, "text": _note(2, 8 * WINDOW)})
        after = await child.call("prompt", {"sessionId": sid, "text": "still there?"})
        await child.call("shutdown", {})
    sent = [_texts(r.body) for r in mock.requests if not _summary_body(r.body)]
    assert small["reason"] == "completed"
    assert huge["reason"] == "error"
    assert f"context window of {WINDOW} tokens" in (huge["error"] or "")
    # The oversized request never reached the model; the session goes on.
    assert all(_note(2, 8 * WINDOW) not in texts for texts in sent)
    # The next request is answered: the oversized one is now older, and is summarized.
    assert after["reason"] == "completed", after
    assert "still there?" in sent[-1]
