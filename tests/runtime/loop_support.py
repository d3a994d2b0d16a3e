"""Helpers for loop tests: a runtime started from the `task` profile against the mock LLM."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from stack_support import start_test_runtime
from starharness.runtime.config import Patch, Runtime
from starharness.runtime.kernel import Context
from starharness.runtime.loop import AGENTS, SESSION_EVENT, AgentHandle, LoggedEvent
from starharness.runtime.session import SessionEvent
from starharness.runtime.session import event_types as ev


def mock_patch(base_url: str, *, store: str = "memory", path: Path | None = None) -> Patch:
    sessions: dict[str, Any] = {"store": store, "max_write_delay_ms": 5}
    if path is not None:
        sessions["path"] = str(path)
    return Patch.of(
        "test",
        [
            {
                "id": "llm",
                "config": {
                    "provider": "openai-compatible",
                    "model": "mock-model",
                    "base_url": base_url,
                    "retry": {"base_delay_s": 0.001, "max_delay_s": 0.01, "jitter": 0},
                },
            },
            {"id": "sessions", "config": sessions},
        ],
    )


@asynccontextmanager
async def runtime_for(
    base_url: str, home: Path, *, store: str = "memory", path: Path | None = None
) -> AsyncIterator[Runtime]:
    """The `task` profile with its llm row pointed at `base_url`."""
    patch = mock_patch(base_url, store=store, path=path)
    async with await start_test_runtime([patch], home=home) as runtime:
        yield runtime


class Recorder:
    """Collects every event an agent logs, live."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []
        self.streaming = asyncio.Event()
        """Set when the first streamed chunk is logged."""

    def __call__(self, logged: LoggedEvent) -> None:
        self.events.append(logged.event)
        if logged.event.type == ev.ASSISTANT_CHUNK:
            self.streaming.set()

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, type_: str) -> list[SessionEvent]:
        return [e for e in self.events if e.type == type_]


async def create_agent(
    ctx: Context, session_id: str, setup: Callable[[Context], object] | None = None
) -> tuple[AgentHandle, Recorder]:
    recorder = Recorder()

    def _setup(agent_ctx: Context) -> None:
        agent_ctx.on(SESSION_EVENT, recorder)
        if setup is not None:
            setup(agent_ctx)

    handle = await ctx.get(AGENTS).create(session_id, setup=_setup)
    return handle, recorder
