"""Spill: a tool result over `max_inline_bytes` is stored whole in the session log and the
model reads a head/tail preview with a locator, and `read_spilled` for the rest."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Next, Plugin
from ..loop import AGENTS
from ..session import SESSIONS, Session, payload
from ..tools import (
    TOOL_POST_EXECUTE,
    TOOLS,
    PostExecute,
    ToolFailure,
    ToolRunContext,
    ToolSuccess,
    define_tool,
)
from .events import SPILL_STORED, SpillStoredData

READ_TOOL = "read_spilled"


class SpillConfig(BaseModel):
    """When a result is spilled and how much of it the model sees inline."""

    model_config = ConfigDict(extra="forbid")

    max_inline_bytes: int = Field(default=50_000, ge=256)
    """UTF-8 bytes of a tool result shown inline; a longer one is spilled."""
    head_chars: int = Field(default=2_000, ge=0)
    tail_chars: int = Field(default=1_000, ge=0)
    max_read_chars: int = Field(default=16_000, ge=1)
    """At most this many characters per read_spilled call."""
    read_tool: bool = True
    """Register read_spilled so the model can page through spilled results."""


class ReadSpilledArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spill: Annotated[int, Field(ge=1, description="The spill id from the result's locator.")]
    offset: Annotated[int, Field(ge=0, description="First character to read.")] = 0
    length: Annotated[int, Field(ge=1, description="Characters to read.")] = 8_000


def preview(content: str, spill_id: int, config: SpillConfig) -> str:
    """Head, a locator line, tail: what the model reads in place of a spilled result."""
    total = len(content)
    head = content[: config.head_chars]
    tail = content[total - config.tail_chars :] if config.tail_chars else ""
    omitted = total - len(head) - len(tail)
    locator = (
        f"\n[... {omitted} of {total} characters not shown. The whole result is spill"
        f" {spill_id}: call {READ_TOOL}(spill={spill_id}, offset=..., length=...) to read"
        f" any part of it, characters {len(head)}..{total - len(tail)} being the part"
        " left out here ...]\n"
    )
    return head + locator + tail


class SpillIndex:
    """Spill id -> seq of its spill/stored event, per session; each event looked at once.

    Ids count a session's spills from 1, so they do not depend on how many other events
    (streamed chunks, say) came before: the same conversation gets the same ids.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, tuple[int, dict[int, int]]] = {}

    def _update(self, session: Session) -> dict[int, int]:
        position, ids = self._sessions.get(session.id, (0, {}))
        events = session.events
        if position > len(events):
            position, ids = 0, {}
        for index in range(position, len(events)):
            event = events[index]
            if event.type == SPILL_STORED:
                ids[payload(event, SPILL_STORED)["id"]] = event.seq
        self._sessions[session.id] = (len(events), ids)
        return ids

    def next_id(self, session: Session) -> int:
        ids = self._update(session)
        return max(ids, default=0) + 1

    def content(self, session: Session, spill_id: int) -> str | None:
        seq = self._update(session).get(spill_id)
        if seq is None:
            return None
        return payload(session.events[seq], SPILL_STORED)["content"]

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)


def spilled_content(session: Session, spill_id: int) -> str | None:
    """The whole content of spill `spill_id` in this session's log, or None."""
    return SpillIndex().content(session, spill_id)


class SpillPlugin(Plugin[SpillConfig]):
    """Spills oversized tool results (tools/post-execute) and registers read_spilled."""

    needs_agent_loop = True

    Config = SpillConfig
    inject = (TOOLS, SESSIONS)

    async def setup(self, ctx: Context, config: SpillConfig) -> None:
        limit = config.max_inline_bytes
        index = SpillIndex()

        async def spill(post: PostExecute, next_: Next[PostExecute]) -> PostExecute | None:
            after = await next_(post)
            if after is None or after.tool.name == READ_TOOL:
                return after
            result = after.result
            content = result.content
            # Cheap first test: n characters take at most 4n UTF-8 bytes.
            if len(content) * 4 <= limit or len(content.encode()) <= limit:
                return after
            spill_id = _store(ctx, after.run, content, index)
            if spill_id is None:
                return after
            shown = preview(content, spill_id, config)
            if isinstance(result, ToolFailure):
                return after.with_result(ToolFailure(shown, result.code, result.traceback))
            return after.with_result(ToolSuccess(result.value, shown))

        ctx.on_waterfall(TOOL_POST_EXECUTE, spill)
        if config.read_tool:
            ctx.get(TOOLS).register(_read_tool(ctx, config, index))


def _store(ctx: Context, run: ToolRunContext, content: str, index: SpillIndex) -> int | None:
    session = ctx.get(SESSIONS).get(run.session_id)
    if session is None:
        return None
    spill_id = index.next_id(session)
    data = SpillStoredData(
        id=spill_id,
        call_id=run.call_id,
        name=run.name,
        chars=len(content),
        bytes=len(content.encode()),
        content=content,
    )
    agents = run.ctx.maybe(AGENTS) or ctx.maybe(AGENTS)
    agent = agents.get(run.session_id) if agents is not None else None
    if agent is not None:
        agent.log(SPILL_STORED, data)
    else:
        session.log(SPILL_STORED, data)
    return spill_id


def _read_tool(ctx: Context, config: SpillConfig, index: SpillIndex) -> Any:
    async def read_spilled(args: ReadSpilledArgs, run: ToolRunContext) -> ToolSuccess | ToolFailure:
        session = ctx.get(SESSIONS).get(run.session_id)
        content = index.content(session, args.spill) if session is not None else None
        if content is None:
            return ToolFailure(
                f"there is no spill {args.spill} in this session; use the number a result's"
                " locator names"
            )
        length = min(args.length, config.max_read_chars)
        end = min(len(content), args.offset + length)
        part = content[args.offset : end]
        more = f"; {len(content) - end} more after this" if end < len(content) else ""
        text = f"[spill {args.spill}: characters {args.offset}..{end} of {len(content)}{more}]\n"
        return ToolSuccess(part, text + part)

    return define_tool(
        READ_TOOL,
        "Read part of a tool result that was too long to show in full (its locator names the"
        " spill id and length).",
        ReadSpilledArgs,
        read_spilled,
        concurrency_safe=True,
    )
