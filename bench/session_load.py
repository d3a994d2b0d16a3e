"""Session read cost: loading stored logs from SQLite, against a floor measured in the same run.

S sessions of T turns each (a tool-using turn as the loop logs it: context, header, chunks,
messages, a call and its result: 29 events) are written once. Each run then measures,
as process CPU per event: the floor (fetch each session's rows and parse their JSON, what any
loader must do), a load through the store (checksums, JSON, each event's data checked against
its type's TypedDict, freezing) and the projection of each loaded log into the model's messages
(what a resume does next). The median of `--runs` runs is shown.

Written with `Session.append` and plain type names only, so the same script measures a build
from before typed events (run it with that build's `src` first on PYTHONPATH).

Run: uv run python bench/session_load.py [--sessions 40] [--turns 25] [--runs 9]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from starharness.runtime.session import Session, SessionService, SqliteStore, StoredSession

_TOOLS = [
    {
        "name": "lookup",
        "description": "Look something up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
]
_USAGE = {"input": 900, "output": 40, "cache_read": 700, "cache_write": 0, "reasoning": 0}


def _fill(session: Session, turns: int) -> None:
    session.append(
        "request/header", {"system": "You are a test. " * 40, "tools": _TOOLS, "reason": "initial"}
    )
    for turn in range(1, turns + 1):
        session.append("turn/start", {"turn": turn})
        session.append("user/message", {"content": f"question {turn} " * 6, "source": "user"})
        for step in (1, 2):
            session.append(
                "request/context",
                {"provider": "mock", "model": "m", "max_tokens": None, "temperature": None,
                 "tool_choice": "auto"},
            )  # fmt: skip
            session.append("step/start", {"turn": turn, "step": step})
            for n in range(8):
                chunk = {"type": "text-delta", "text": f"word{n} "}
                session.append("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk})
            calls = [{"id": f"c{turn}", "name": "lookup", "arguments": '{"q":"x"}'}][: 2 - step]
            session.append(
                "assistant/message",
                {"turn": turn, "step": step, "text": "words " * 8, "tool_calls": calls,
                 "usage": _USAGE, "finish": "tool-calls" if calls else "stop"},
            )  # fmt: skip
            for call in calls:
                session.append(
                    "tool/call",
                    {"turn": turn, "step": step, "call_id": call["id"], "name": "lookup",
                     "arguments": call["arguments"]},
                )  # fmt: skip
                session.append(
                    "tool/result",
                    {"turn": turn, "step": step, "call_id": call["id"], "name": "lookup",
                     "content": "result " * 12, "is_error": False},
                )  # fmt: skip
            session.append("step/end", {"turn": turn, "step": step})
        session.append("turn/end", {"turn": turn, "reason": "completed"})


def _floor(path: Path, ids: list[str]) -> float:
    conn = sqlite3.connect(path)
    try:
        started = time.process_time()
        for session_id in ids:
            query = "SELECT data FROM events WHERE session_id = ? ORDER BY seq"
            for (data,) in conn.execute(query, (session_id,)):
                json.loads(data)
        return time.process_time() - started
    finally:
        conn.close()


async def _load(path: Path, ids: list[str]) -> tuple[float, list[StoredSession]]:
    store = await SqliteStore.open(path)
    try:
        started = time.process_time()
        loaded = [await store.load(session_id) for session_id in ids]
        spent = time.process_time() - started
    finally:
        await store.aclose()
    return spent, [stored for stored in loaded if stored is not None]


def _project(stored: list[StoredSession]) -> float:
    started = time.process_time()
    for one in stored:
        Session(one.id, one.events).messages()
    return time.process_time() - started


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    ids = [f"s{index}" for index in range(args.sessions)]
    with tempfile.TemporaryDirectory() as home:
        path = Path(home) / "sessions.db"
        service = SessionService(await SqliteStore.open(path, max_write_delay_s=0))
        for session_id in ids:
            _fill(service.create(session_id), args.turns)
        await service.aclose()
        floors: list[float] = []
        loads: list[float] = []
        projections: list[float] = []
        events = 0
        for _ in range(args.runs):
            floors.append(_floor(path, ids))
            spent, stored = await _load(path, ids)
            loads.append(spent)
            projections.append(_project(stored))
            events = sum(len(one.events) for one in stored)
    per_event = {
        name: statistics.median(times) / events * 1e6
        for name, times in (("floor", floors), ("load", loads), ("project", projections))
    }
    print(f"{args.sessions} sessions, {events} events; CPU per event, median of {args.runs} runs:")
    print(f"  floor (fetch rows + parse JSON) {per_event['floor']:.2f} us")
    print(f"  load through the store           {per_event['load']:.2f} us")
    print(f"  project into messages            {per_event['project']:.2f} us")
    print(f"ratio load/floor: {per_event['load'] / per_event['floor']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
