"""DelegatePlugin: the `delegate` tool runs a child agent (a fork of the caller's completed
turns) with a narrowed tool set and returns its final answer."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Plugin
from ..llm.types import UserMessage
from ..loop import AGENTS
from ..prompt import PROMPT, TOOL_GUIDANCE_ORDER
from ..session import SESSIONS, Session, SessionEvent, payload
from ..session import event_types as ev
from ..tools import TOOLS, ToolFailure, ToolRunContext, ToolSuccess, define_tool
from .events import SUBAGENT_END, SUBAGENT_START, SubagentEndData, SubagentStartData
from .forks import DELEGATION_DEPTH, fork

DELEGATE_TOOL = "delegate"
CHILD_SECTION = "delegate.child"
CHILD_TEXT = (
    "You are a subagent: another agent handed you one task. You see its conversation up to"
    " its last completed turn. Do the task with the tools you have, then answer with a"
    " concise, self-contained report: it is all the other agent will read."
)


class DelegateConfig(BaseModel):
    """What a child may do and how long it may take."""

    model_config = ConfigDict(extra="forbid")

    tools: list[str] | None = None
    """The tools a child may use (a call may narrow them further); null: all but delegate."""
    max_depth: int = Field(default=1, ge=1)
    """Children of children: how deep delegation may go."""
    max_steps: int = Field(default=24, ge=1)
    timeout_s: float = Field(default=600, gt=0)
    guidance: str = ""
    """Extra text for the caller's system prompt on when to delegate (a profile's job)."""


class DelegateArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: Annotated[str, Field(min_length=1, description="What the subagent must do and report.")]
    tools: Annotated[
        list[str] | None,
        Field(description="Only these of the allowed tools (default: all the allowed ones)."),
    ] = None


class DelegatePlugin(Plugin[DelegateConfig]):
    """Registers `delegate`."""

    needs_agent_loop = True

    Config = DelegateConfig
    inject = (SESSIONS, TOOLS)  # AGENTS is looked up per call: the agents row comes last

    async def setup(self, ctx: Context, config: DelegateConfig) -> None:
        ctx.get(TOOLS).register(_delegate_tool(ctx, config))
        ctx.scope.add(ctx.get(SESSIONS).add_recovery(recover_subagents))
        prompt = ctx.maybe(PROMPT)
        if config.guidance and prompt is not None:
            text = config.guidance
            prompt.section("delegate.guidance", TOOL_GUIDANCE_ORDER + 20, lambda _ctx: text)


def _delegate_tool(ctx: Context, config: DelegateConfig) -> Any:
    async def delegate(args: DelegateArgs, run: ToolRunContext) -> ToolSuccess | ToolFailure:
        agents = ctx.maybe(AGENTS)
        parent = agents.get(run.session_id) if agents is not None else None
        if parent is None:
            return ToolFailure("delegate works only for an agent of this process's agent loop")
        depth = int(parent.session.meta.get(DELEGATION_DEPTH, 0)) + 1
        if depth > config.max_depth:
            return ToolFailure(f"delegation is limited to {config.max_depth} level(s)")
        visible = set(ctx.get(TOOLS).names()) - {DELEGATE_TOOL}
        allowed = visible if config.tools is None else visible & set(config.tools)
        if args.tools is not None:
            unknown = sorted(set(args.tools) - allowed)
            if unknown:
                return ToolFailure(f"a subagent may not use {', '.join(unknown)}")
            allowed = set(args.tools)
        names = sorted(allowed)
        if depth < config.max_depth and DELEGATE_TOOL in ctx.get(TOOLS).names():
            names.append(DELEGATE_TOOL)
        child_id = f"{parent.id}.sub-{uuid.uuid4().hex[:8]}"

        def setup(child: Context) -> None:
            child.get(TOOLS).restrict(names)
            prompt = child.maybe(PROMPT)
            if prompt is not None:
                prompt.section(CHILD_SECTION, TOOL_GUIDANCE_ORDER + 30, CHILD_TEXT)

        options = replace(parent.options, max_steps=config.max_steps)
        handle = await fork(
            ctx,
            parent.session,
            child_id,
            setup=setup,
            options=options,
            origin="subagent",
            depth=depth,
        )
        child = handle.agent
        seed_length = int(child.session.meta["seed_length"])
        parent.log(
            SUBAGENT_START,
            SubagentStartData(child=child_id, seed_length=seed_length, task=args.task, tools=names),
        )
        end = SubagentEndData(child=child_id, status="error")
        try:
            child.followup(UserMessage(args.task, source="delegate"))
            await asyncio.wait_for(child.when_idle(), config.timeout_s)
            reason, text = _outcome(child.session.events, seed_length)
            end["reason"] = reason
            end["text"] = text
            if reason == "completed":
                end["status"] = "ok"
        except TimeoutError:
            end["reason"] = "timeout"
        finally:
            await handle.dispose()
            parent.log(SUBAGENT_END, end)
        if end["status"] != "ok":
            return ToolFailure(
                f"the subagent {child_id} did not finish ({end.get('reason')}):"
                f" {end.get('text') or 'no answer'}"
            )
        text = end.get("text", "")
        return ToolSuccess(text, text or "(the subagent gave no answer)")

    return define_tool(
        DELEGATE_TOOL,
        "Hand one self-contained task to a subagent that sees this conversation up to the last"
        " completed turn and has a narrowed set of tools; returns its final report. Use it for"
        " investigations whose details you do not need to keep in your own context.",
        DelegateArgs,
        delegate,
        timeout_s=config.timeout_s + 5,
    )


def recover_subagents(session: Session) -> list[SessionEvent]:
    """A subagent/start a crash left without its end gets one (`interrupted`); the child's own
    session is closed when it is resumed."""
    open_: dict[str, None] = {}
    for event in session.events:
        if event.type == SUBAGENT_START:
            open_[payload(event, SUBAGENT_START)["child"]] = None
        elif event.type == SUBAGENT_END:
            open_.pop(payload(event, SUBAGENT_END).get("child", ""), None)
    return [
        session.log(
            SUBAGENT_END, SubagentEndData(child=child, status="error", reason=ev.INTERRUPTED)
        )
        for child in open_
    ]


def _outcome(events: Sequence[SessionEvent], start: int) -> tuple[str, str]:
    reason, text = "interrupted", ""
    for event in events[start:]:
        if event.type == ev.TURN_END:
            end = payload(event, ev.TURN_END)
            reason = end["reason"]
            text = end.get("error") or text
        elif event.type == ev.ASSISTANT_MESSAGE:
            text = payload(event, ev.ASSISTANT_MESSAGE)["text"] or text
    return reason, text
