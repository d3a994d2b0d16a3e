"""Run one task headless: stream the assistant's text to stdout, tool activity to stderr."""

from __future__ import annotations

import sys
import uuid
from typing import TextIO

from ..kernel import Context
from ..llm.types import UserMessage
from ..session import event_types as ev
from .hooks import SESSION_EVENT, LoggedEvent
from .keys import AGENTS
from .options import AgentOptions


async def run_task(
    ctx: Context,
    task: str,
    *,
    options: AgentOptions | None = None,
    session_id: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run `task` as one turn of a new agent; 0 when the turn completed, 1 otherwise."""
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    sid = session_id or f"run-{uuid.uuid4().hex[:12]}"
    ended: list[ev.TurnEndData] = []
    wrote_text = False

    def observe(logged: LoggedEvent) -> None:
        nonlocal wrote_text
        event = logged.event
        if event.type == ev.ASSISTANT_CHUNK:
            chunk: ev.ChunkData = event.data["chunk"]
            if chunk["type"] == ev.TEXT_DELTA:
                stdout.write(chunk.get("text", ""))
                stdout.flush()
                wrote_text = True
        elif event.type == ev.TOOL_CALL:
            call = ev.payload(event, ev.TOOL_CALL)
            stderr.write(f"[tool] {call['name']}({call['arguments']})\n")
        elif event.type == ev.TOOL_RESULT:
            result = ev.payload(event, ev.TOOL_RESULT)
            mark = "error" if result["is_error"] else "ok"
            content = str(result["content"])
            short = content if len(content) <= 200 else content[:200] + "..."
            stderr.write(f"[tool] {result['name']} -> {mark}: {short}\n")
        elif event.type == ev.LLM_RETRY:
            retry = ev.payload(event, ev.LLM_RETRY)
            stderr.write(
                f"[retry] attempt {retry['attempt']} in {retry['delay_s']:.1f} s: "
                f"{retry['error']}\n"
            )
        elif event.type == ev.TURN_END:
            ended.append(ev.payload(event, ev.TURN_END))

    def setup(agent_ctx: Context) -> None:
        agent_ctx.on(SESSION_EVENT, observe)

    handle = await ctx.get(AGENTS).create(sid, setup=setup, options=options)
    try:
        handle.agent.followup(UserMessage(task))
        await handle.agent.when_idle()
    finally:
        await handle.dispose()
    if wrote_text:
        stdout.write("\n")
        stdout.flush()
    reason = ended[-1]["reason"] if ended else None
    if reason == "completed":
        return 0
    detail = (ended[-1].get("error") if ended else None) or reason or "the turn did not run"
    stderr.write(f"error: turn ended ({reason}): {detail}\n")
    return 1
