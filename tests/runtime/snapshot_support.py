"""Snapshot tests: record a conversation once, replay it without a model, diff the requests.

Recording runs the scenario against a "live" model (the mock LLM with a responder standing
in for one) and stores the model's answers, taken from the session log, with every request
sent. Replaying scripts the mock with the stored answers, so no model decides anything, and
compares each request with the stored one. `STAR_HARNESS_SNAPSHOT=refresh` re-records.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from starharness.mockllm import MockLlmServer, Responder
from starharness.runtime.context.events import COMPACTION_SUMMARY
from starharness.runtime.session import SessionEvent
from starharness.runtime.session import event_types as ev

SNAPSHOT_ENV = "STAR_HARNESS_SNAPSHOT"
SNAPSHOTS = Path(__file__).parent / "snapshots"

Scenario = Callable[[str], Awaitable[Sequence[SessionEvent]]]
"""Runs the conversation against the given base URL; returns the session's events."""


def answers_from_log(events: Sequence[SessionEvent]) -> list[dict[str, Any]]:
    """The model's answers in the order it gave them, as mock script steps."""
    steps: list[dict[str, Any]] = []
    for event in events:
        data = event.data
        if event.type == ev.ASSISTANT_MESSAGE and not data.get("interrupted"):
            calls = data.get("tool_calls", ())
            if calls:
                step: dict[str, Any] = {
                    "behaviour": "tool_call_success",
                    "calls": [
                        {"id": c["id"], "name": c["name"], "arguments": c["arguments"]}
                        for c in calls
                    ],
                }
                if data["text"]:
                    step["text"] = data["text"]
                steps.append(step)
            else:
                steps.append({"behaviour": "success", "text": data["text"]})
        elif event.type == COMPACTION_SUMMARY:
            steps.append({"behaviour": "success", "text": data["text"]})
    return steps


def _pretty(body: Any) -> list[str]:
    return json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def diff_requests(recorded: Sequence[Any], replayed: Sequence[Any]) -> str | None:
    """None when they are equal, else a readable diff of the first request that differs."""
    if len(recorded) != len(replayed):
        return f"{len(replayed)} requests were sent, the snapshot has {len(recorded)}"
    for index, (old, new) in enumerate(zip(recorded, replayed, strict=True)):
        if old != new:
            lines = difflib.unified_diff(
                _pretty(old), _pretty(new), "snapshot", "replay", n=2, lineterm=""
            )
            return f"request {index} differs:\n" + "\n".join(list(lines)[:80])
    return None


async def check_snapshot(name: str, conversation: str, scenario: Scenario, model: Responder) -> str:
    """Replay snapshot `name` (recording it first when missing or when refreshing); returns
    the mode it ran in. Raises AssertionError with a diff when a request changed."""
    path = SNAPSHOTS / f"{name}.json"
    if os.environ.get(SNAPSHOT_ENV) == "refresh" or not path.exists():
        async with MockLlmServer(responder=model) as live:
            events = await scenario(live.base_url)
            requests = [r.body for r in live.requests]
        record = {
            "conversation": conversation,
            "answers": answers_from_log(events),
            "requests": requests,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return "recorded"
    record = json.loads(path.read_text(encoding="utf-8"))
    async with MockLlmServer() as replay:
        replay.script(record["conversation"], record["answers"])
        await scenario(replay.base_url)
        replayed = [r.body for r in replay.requests]
        replay.assert_complete()
    problem = diff_requests(record["requests"], replayed)
    if problem is not None:
        raise AssertionError(
            f"snapshot {name}: {problem}\n(if the change is intended, rerun with"
            f" {SNAPSHOT_ENV}=refresh)"
        )
    return "replayed"
