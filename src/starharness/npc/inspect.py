"""Transcripts of encounters and residents' turns: list them, and print what the model saw
(every request as sent) and what it did."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..runtime.llm import DEEPSEEK, PROFILES, ProviderProfile
from ..runtime.llm.types import ToolSchema
from ..runtime.llm.wire import to_wire_messages, to_wire_tools
from ..runtime.session import Projection, SessionEvent, SessionStore, StoredSession
from ..runtime.session import event_types as ev
from .encounter import TRANSCRIPT_KIND
from .lore import lore_lines
from .residents import RESIDENT_KIND


@dataclass(frozen=True, slots=True)
class TranscriptInfo:
    """One stored transcript, for listings: an encounter's, or a resident's turn after a tick."""

    session_id: str
    encounter: str
    npc: str
    npc_name: str
    player: str
    game: str
    started_at: int
    updated_at: int
    kind: str = TRANSCRIPT_KIND
    resident: str = ""
    """The resident's name (`kind` is RESIDENT_KIND); empty for an encounter."""
    days: int = 0
    """How many days the tick that woke the resident moved the clock."""

    def line(self) -> str:
        """One line for a listing."""
        started = datetime.fromtimestamp(self.started_at / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
        if self.kind == RESIDENT_KIND:
            tick = f"after a tick of {self.days} day(s)"
            return f"{self.session_id}  {started}Z  resident {self.resident!r} {tick}"
        who = f"{self.npc_name} ({self.npc}) with {self.player}"
        return f"{self.session_id}  {started}Z  {self.game}  {who}  encounter {self.encounter!r}"


async def list_transcripts(store: SessionStore) -> list[TranscriptInfo]:
    """Stored encounter and resident transcripts, most recently active first."""
    found: list[TranscriptInfo] = []
    for info in await store.list_sessions():
        meta = info.meta
        kind = meta.get("kind")
        if kind not in (TRANSCRIPT_KIND, RESIDENT_KIND):
            continue
        days = meta.get("days")
        found.append(
            TranscriptInfo(
                session_id=info.id,
                encounter=str(meta.get("encounter", "")),
                npc=str(meta.get("npc", "")),
                npc_name=str(meta.get("npc_name", "")),
                player=str(meta.get("player", "")),
                game=str(meta.get("game", "")),
                started_at=info.created_at,
                updated_at=info.updated_at,
                kind=str(kind),
                resident=str(meta.get("resident", "")),
                days=days if isinstance(days, int) else 0,
            )
        )
    return found


async def find_transcript(store: SessionStore, key: str) -> StoredSession | None:
    """The transcript whose session id is `key`, else the newest of the encounter id `key`,
    else the newest turn of the resident named `key`."""
    stored = await store.load(key)
    if stored is not None:
        return stored
    listed = await list_transcripts(store)
    by_encounter = (i for i in listed if i.kind == TRANSCRIPT_KIND and i.encounter == key)
    by_resident = (i for i in listed if i.kind == RESIDENT_KIND and i.resident == key)
    found = next(by_encounter, None) or next(by_resident, None)
    return None if found is None else await store.load(found.session_id)


def render_transcript(stored: StoredSession) -> str:
    """Every request as it was sent (system, tools, wire messages), and what came back."""
    meta = stored.meta
    out: list[str] = [
        f"resident {meta.get('resident')!r} after a tick of {meta.get('days')} day(s), "
        f"session {stored.id}"
        if meta.get("kind") == RESIDENT_KIND
        else f"encounter {meta.get('encounter')!r}: {meta.get('npc_name')} ({meta.get('npc')}) "
        f"with {meta.get('player')}, game {meta.get('game')}, session {stored.id}"
    ]
    if meta.get("plan"):
        out.append(f"turn plan: {meta.get('plan')} ({meta.get('plan_reason', '')})")
    out.extend(_render_events(stored.events))
    return "\n".join(out) + "\n"


def _render_events(events: Iterable[SessionEvent]) -> Iterable[str]:
    header: ev.RequestHeaderData | None = None
    shown_header: ev.RequestHeaderData | None = None
    # The projection, as the runtime builds requests: summaries and rewrites replace spans.
    projection = Projection()
    seen: list[SessionEvent] = []
    requests = 0
    for event in events:
        kind = event.type
        if kind == ev.REQUEST_HEADER:
            header = ev.payload(event, ev.REQUEST_HEADER)
        elif kind == ev.REQUEST_CONTEXT:
            context = ev.payload(event, ev.REQUEST_CONTEXT)
            requests += 1
            yield f"--- request {requests} ({context['provider']}, {context['model']})"
            if header is not shown_header:
                shown_header = header
                yield from _render_header(header, _profile(context))
            else:
                yield "system and tools: as in the previous request"
            system = header.get("system", "") if header is not None else ""
            messages = projection.feed(seen)
            wire = to_wire_messages(system, messages, profile=_profile(context))
            yield "messages:"
            yield from (_json(message) for message in wire)
        elif kind == ev.TURN_START:
            yield f"=== turn {ev.payload(event, ev.TURN_START)['turn']}"
        elif kind == ev.USER_MESSAGE:
            yield from _lore_given(ev.payload(event, ev.USER_MESSAGE))
        elif kind == ev.ASSISTANT_MESSAGE:
            yield f"answered: {_answer(ev.payload(event, ev.ASSISTANT_MESSAGE))}"
        elif kind == ev.TOOL_RESULT:
            result = ev.payload(event, ev.TOOL_RESULT)
            mark = "error" if result["is_error"] else "ok"
            yield f"tool {result['name']} -> {mark}: {result['content']}"
        elif kind == ev.LLM_RETRY:
            retry = ev.payload(event, ev.LLM_RETRY)
            yield f"retry {retry['attempt']} after: {retry['error']}"
        elif kind == ev.TURN_END:
            end = ev.payload(event, ev.TURN_END)
            detail = f" ({end['error']})" if "error" in end else ""
            yield f"=== turn {end['turn']} ended: {end['reason']}{detail}"
        seen.append(event)


def _lore_given(data: ev.UserMessageData) -> Iterable[str]:
    """The lore a turn's dynamic context gave the model, or, where the model runs locally,
    the context its decision to only talk added (the text itself is in the request's
    messages); a turn whose context did not change logs none and shows none."""
    if data.get("source") not in ("context", "tool"):
        return
    for text in lore_lines(data["content"]):
        yield f"lore: {text}"


def _render_header(header: ev.RequestHeaderData | None, profile: ProviderProfile) -> Iterable[str]:
    if header is None:
        yield "system: (none logged)"
        return
    yield "system:"
    yield str(header.get("system", ""))
    tools = header.get("tools", ())
    schemas = [ToolSchema(t["name"], t["description"], t["parameters"]) for t in tools]
    yield "tools:"
    yield from (_json(tool) for tool in to_wire_tools(schemas, profile=profile))


def _answer(data: ev.AssistantMessageData) -> str:
    parts: list[str] = []
    text = data.get("text")
    if text:
        parts.append(json.dumps(text, ensure_ascii=False))
    for call in data.get("tool_calls", ()):
        parts.append(f"{call['name']}({call['arguments']})")
    return " + ".join(parts) or "(nothing)"


def _profile(context: ev.RequestContextData) -> ProviderProfile:
    return PROFILES.get(str(context.get("provider")), DEEPSEEK)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_plain)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        mapping: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return dict(mapping)
    if isinstance(value, tuple):
        items: tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        return list(items)
    raise TypeError(f"cannot show {type(value).__name__}")
