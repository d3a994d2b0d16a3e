"""NPC encounter transcripts for the browser: what the NPC was sent, request by request."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..npc import list_transcripts
from ..runtime.llm import DEEPSEEK, PROFILES
from ..runtime.llm.types import ToolSchema
from ..runtime.llm.wire import to_wire_messages, to_wire_tools
from ..runtime.session import (
    SessionEvent,
    SessionStore,
    StoredSession,
    rebuild_requests,
    thaw,
)
from ..runtime.session import event_types as ev


async def transcript_list(store: SessionStore) -> list[dict[str, Any]]:
    return [
        {
            "sessionId": info.session_id,
            "encounter": info.encounter,
            "npc": info.npc,
            "npcName": info.npc_name,
            "player": info.player,
            "game": info.game,
            "startedAt": info.started_at,
            "updatedAt": info.updated_at,
        }
        for info in await list_transcripts(store)
    ]


def transcript_detail(stored: StoredSession) -> dict[str, Any]:
    """Each request as sent (system, tool names and schemas, wire messages) and its answer."""
    contexts = [e for e in stored.events if e.type == ev.REQUEST_CONTEXT]
    answers = _answers(stored.events)
    requests: list[dict[str, Any]] = []
    for number, ((header, messages), context) in enumerate(
        zip(rebuild_requests(stored.events), contexts, strict=True), start=1
    ):
        sent = ev.payload(context, ev.REQUEST_CONTEXT)
        profile = PROFILES.get(sent["provider"], DEEPSEEK)
        system = str(header.get("system", "")) if header is not None else ""
        tools = _tools(header)
        requests.append(
            {
                "number": number,
                "provider": sent["provider"],
                "model": sent["model"],
                "system": system,
                "tools": thaw(to_wire_tools(tools, profile=profile)),
                "messages": thaw(to_wire_messages(system, messages, profile=profile)),
                "answer": answers.get(context.seq, {}),
            }
        )
    meta = stored.meta
    return {
        "sessionId": stored.id,
        "encounter": meta.get("encounter"),
        "npcName": meta.get("npc_name"),
        "npc": meta.get("npc"),
        "player": meta.get("player"),
        "game": meta.get("game"),
        "requests": requests,
    }


def _tools(header: Mapping[str, Any] | None) -> list[ToolSchema]:
    if header is None:
        return []
    return [ToolSchema(t["name"], t["description"], t["parameters"]) for t in header["tools"]]


def _answers(events: Iterable[SessionEvent]) -> dict[int, dict[str, Any]]:
    """For each request/context event's seq: the text, tool calls and tool results after it."""
    answers: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for event in events:
        if event.type == ev.REQUEST_CONTEXT:
            current = {"text": "", "toolCalls": [], "toolResults": []}
            answers[event.seq] = current
        elif current is None:
            continue
        elif event.type == ev.ASSISTANT_MESSAGE:
            message = ev.payload(event, ev.ASSISTANT_MESSAGE)
            current["text"] = message["text"]
            current["toolCalls"] = [
                {"name": c["name"], "arguments": c["arguments"]} for c in message["tool_calls"]
            ]
        elif event.type == ev.TOOL_RESULT:
            data = ev.payload(event, ev.TOOL_RESULT)
            current["toolResults"].append(
                {"name": data["name"], "content": str(data["content"]), "isError": data["is_error"]}
            )
    return answers
