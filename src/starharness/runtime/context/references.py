"""SessionReferencesPlugin: the end of other stored sessions as a system-prompt section, each
within its byte budget (a way to carry earlier work into a new session)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Plugin
from ..llm.types import AssistantMessage, Message, ToolMessage
from ..prompt import PERSONA_ORDER, PROMPT
from ..session import SESSIONS, Projection

SECTION = "context.session-references"


class SessionReference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    max_bytes: int = Field(default=8_192, ge=64)


class SessionReferencesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sessions: list[SessionReference] = []
    order: float = PERSONA_ORDER + 60


def render_reference(session_id: str, messages: Sequence[Message], max_bytes: int) -> str:
    """The newest messages of a session that fit in `max_bytes` (UTF-8), oldest first."""
    lines: list[str] = []
    used = 0
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            line = f"[assistant] {message.text}" if message.text else ""
        elif isinstance(message, ToolMessage):
            line = f"[tool result] {message.content}"
        else:
            line = f"[{message.source}] {message.content}"
        if not line:
            continue
        size = len(line.encode()) + 1
        if used + size > max_bytes:
            room = max_bytes - used
            if room > 40:
                lines.append(line.encode()[:room].decode(errors="ignore") + " [...]")
            break
        lines.append(line)
        used += size
    lines.reverse()
    return f"## Session {session_id} (its latest messages)\n" + "\n".join(lines)


class SessionReferencesPlugin(Plugin[SessionReferencesConfig]):
    needs_agent_loop = True
    Config = SessionReferencesConfig
    inject = (PROMPT, SESSIONS)

    async def setup(self, ctx: Context, config: SessionReferencesConfig) -> None:
        parts: list[str] = []
        for reference in config.sessions:
            stored = await ctx.get(SESSIONS).store.load(reference.id)
            if stored is None:
                parts.append(f"## Session {reference.id}\n(not in the session store)")
                continue
            messages = Projection().feed(stored.events)
            parts.append(render_reference(reference.id, messages, reference.max_bytes))
        if parts:
            text = "Earlier sessions the user referred this one to:\n\n" + "\n\n".join(parts)
            ctx.get(PROMPT).section(SECTION, config.order, lambda _ctx: text)
