"""Reading an encounter's session log into model turns: speech, plain text, refusals, tokens."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..npc.speech import parse_arguments, read_line
from ..runtime.session import SessionEvent
from ..runtime.session import event_types as ev
from .evidence import ModelTurn, RefusalFollowUp, Tokens

_STREAMED = frozenset({"text-delta", "tool-call-delta"})


def model_turns(
    events: Iterable[SessionEvent], speech_tool: str, line_field: str
) -> list[ModelTurn]:
    """Every turn in the log, in order (a turn still running at the end is included)."""
    turns: list[ModelTurn] = []
    reader: _TurnReader | None = None
    # Each context entry is logged only when it changed: a turn sees the latest text of
    # each entry logged before it.
    context: dict[str, str] = {}
    for event in events:
        if event.type == ev.USER_MESSAGE:
            user = ev.payload(event, ev.USER_MESSAGE)
            if user.get("source") == "context":
                context[user.get("entry", "")] = user["content"]
        if event.type == ev.TURN_START:
            if reader is not None:
                turns.append(reader.finish())
            reader = _TurnReader(event.time, speech_tool, line_field)
            reader.turn.grounding.extend(context.values())
        elif reader is not None:
            reader.read(event)
            if event.type == ev.TURN_END:
                turns.append(reader.finish())
                reader = None
    if reader is not None:
        turns.append(reader.finish())
    return turns


class _TurnReader:
    __slots__ = (
        "_chunks",
        "_line_field",
        "_pending",
        "_reported",
        "_speech_tool",
        "_tokens",
        "turn",
    )

    def __init__(self, started_ms: int, speech_tool: str, line_field: str) -> None:
        self.turn = ModelTurn(started_ms)
        self._speech_tool = speech_tool
        self._line_field = line_field
        self._pending: list[tuple[str, str, str]] = []
        self._tokens = [0, 0, 0]
        self._reported = False
        self._chunks = 0

    def read(self, event: SessionEvent) -> None:
        kind = event.type
        if kind == ev.ASSISTANT_CHUNK:
            if ev.payload(event, ev.ASSISTANT_CHUNK)["chunk"].get("type") in _STREAMED:
                self._chunks += 1
        elif kind == ev.ASSISTANT_MESSAGE:
            self._message(ev.payload(event, ev.ASSISTANT_MESSAGE))
        elif kind == ev.TOOL_CALL:
            self._call(ev.payload(event, ev.TOOL_CALL))
        elif kind == ev.TOOL_RESULT:
            self._result(ev.payload(event, ev.TOOL_RESULT))
        elif kind == ev.REQUEST_CONTEXT:
            quirk = ev.payload(event, ev.REQUEST_CONTEXT).get("quirk")
            if isinstance(quirk, Mapping):
                self.turn.quirks.append(str(quirk.get("choice", "")))
        elif kind == ev.USER_MESSAGE:
            self.turn.grounding.append(ev.payload(event, ev.USER_MESSAGE)["content"])
        elif kind == ev.TURN_END:
            self.turn.end_reason = ev.payload(event, ev.TURN_END)["reason"]

    def _message(self, data: ev.AssistantMessageData) -> None:
        if data.get("interrupted"):
            return
        text = str(data.get("text") or "").strip()
        if text and not data.get("tool_calls"):
            self.turn.plain_text.append(text)
        usage = data.get("usage")
        if isinstance(usage, Mapping):
            self._reported = True
            counts: Mapping[str, Any] = usage  # pyright: ignore[reportUnknownVariableType]
            self._tokens[0] += int(counts.get("input", 0) or 0)
            self._tokens[1] += int(counts.get("output", 0) or 0)
            self._tokens[2] += int(counts.get("cache_read", 0) or 0)

    def _call(self, data: ev.ToolCallEventData) -> None:
        name = str(data.get("name", ""))
        self.turn.tool_calls.append(name)
        if name != self._speech_tool:
            # A price the NPC set in its own call (an offer at 1,275 a unit) is a number it
            # may say; the world's guards judged it, the numbers rule judges only speech.
            self.turn.grounding.append(str(data.get("arguments", "")))
            return
        try:
            arguments = parse_arguments(str(data.get("arguments", "")))
        except ValueError:
            arguments = {}
        line = read_line(arguments, self._line_field).strip()
        if not line:
            return
        self.turn.speech_lines.append(line)
        for action, reason, hint in self._pending:
            self.turn.refusals.append(RefusalFollowUp(action, reason, hint, line))
        self._pending.clear()

    def _result(self, data: ev.ToolResultData) -> None:
        self.turn.grounding.append(str(data.get("content", "")))
        refusal = _refusal(data.get("content"))
        if refusal is not None:
            reason, hint = refusal
            self._pending.append((str(data.get("name", "")), reason, hint))

    def finish(self) -> ModelTurn:
        for action, reason, hint in self._pending:
            self.turn.refusals.append(RefusalFollowUp(action, reason, hint, None))
        self._pending.clear()
        tokens = self._tokens
        if self._reported:
            self.turn.tokens = Tokens(tokens[0], tokens[1], tokens[2])
        else:
            # No usage reported (llama.cpp's streams carry none): each streamed chunk is about
            # one generated token there, so the chunk count stands in for the output.
            self.turn.tokens = Tokens(output=self._chunks, estimated=True)
        return self.turn


def _refusal(content: object) -> tuple[str, str] | None:
    """(reason, hint) when a tool result is a refusal `{ok: false, reason, hint, ...}`."""
    if not isinstance(content, str) or '"ok"' not in content:
        return None
    try:
        value: object = json.loads(content)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    result: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    if result.get("ok") is not False:
        return None
    return str(result.get("reason", "")), str(result.get("hint", ""))
