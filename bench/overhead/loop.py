"""The loop: a runtime from the `task` profile, its llm row pointed at the mock."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from starharness.composition import profile_search_path
from starharness.runtime.config import Patch, ResolvedProfile, load_profile
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import UserMessage
from starharness.runtime.loop import AgentHandle
from starharness.runtime.session import event_types as ev
from starharness.runtime.tools import TOOLS, ToolDefinition

from .workload import MODEL, PROMPT, REPLY, SpeakArgs


def task_profile(base_url: str, home: Path) -> ResolvedProfile:
    """The `task` profile with sessions in memory and the llm row aimed at `base_url`.

    Reads files: call it before the event loop starts or in a thread.
    """
    patch = Patch.of(
        "bench",
        [
            {
                "id": "llm",
                "config": {"provider": "openai-compatible", "model": MODEL, "base_url": base_url},
            },
            {"id": "sessions", "config": {"store": "memory"}},
        ],
    )
    return load_profile("task", [patch], search=profile_search_path(home), home=home)


def registrar(tool: ToolDefinition[SpeakArgs]) -> Callable[[Context], None]:
    """An agent setup that registers `tool` on the agent's own layer."""

    def setup(agent_ctx: Context) -> None:
        agent_ctx.get(TOOLS).register(tool)

    return setup


async def loop_turn(handle: AgentHandle) -> None:
    agent = handle.agent
    agent.followup(UserMessage(PROMPT))
    await agent.when_idle()


def loop_ok_turns(handle: AgentHandle) -> int:
    """Turns that completed with one successful tool call and the reply "ok"."""
    ok = 0
    tools_ok = 0
    last_text = None
    for event in handle.agent.session.events:
        if event.type == ev.TOOL_RESULT:
            tools_ok += 0 if event.data["is_error"] else 1
        elif event.type == ev.ASSISTANT_MESSAGE:
            last_text = event.data["text"]
        elif event.type == ev.TURN_END:
            if event.data["reason"] == "completed" and tools_ok == 1 and last_text == REPLY:
                ok += 1
            tools_ok, last_text = 0, None
    return ok
