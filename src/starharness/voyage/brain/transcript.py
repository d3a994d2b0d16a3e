"""Reading a chat request: the latest scene, what the player just said, and this turn's steps."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from starharness.responder import ChatMessage, ChatRequest

from .heard import Answering, Heard, is_heard, is_lore, read_answering, read_heard, read_lore
from .options import Option
from .scene import SceneView, apply_changes, is_scene, is_scene_changes, parse_scene
from .tools import DECIDE, NO_ACTION, OFFERED, OUTCOME_PREFIX, SELL_GOODS, SPEAK

_BAND = re.compile(r"(\d+)% (?:off|of|over) the going price")
DEFAULT_BAND = 0.25


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call the brain made, and what came back (None while it has no result)."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.get("ok") is not False

    @property
    def offered(self) -> bool:
        """Whether the call became an offer: nothing happened until the player accepts."""
        return self.result is not None and OFFERED in self.result


@dataclass(slots=True)
class Transcript:
    """What the brain knows from one request."""

    system: str = ""
    scene: SceneView | None = None
    said: str = ""
    """What the player said to start this turn (the option label when they picked one)."""
    player_lines: list[str] = field(default_factory=list[str])
    """Everything the player said this encounter, oldest first, `said` last."""
    spoke_this_turn: bool = False
    """Whether the NPC already spoke since the player's last words."""
    last_options: list[Option] = field(default_factory=list[Option])
    """The options of the NPC's last line, which the player may have picked."""
    last_line: str = ""
    """The NPC's last line this encounter ("" before it first speaks)."""
    steps: list[list[Call]] = field(default_factory=list[list[Call]])
    """This turn's tool steps so far, each with its results."""
    offered: list[Call] = field(default_factory=list[Call])
    """Every call of this encounter that became an offer, oldest first (the deals on the
    table are the last ones)."""
    price_band: float = DEFAULT_BAND
    tools: frozenset[str] = frozenset()
    heard: list[Heard] = field(default_factory=list[Heard])
    """In a scene: everything this NPC heard the others say, oldest first."""
    answering: Answering | None = None
    """In a scene: the line another turned to this NPC with, when this turn answers it."""
    lore: list[str] = field(default_factory=list[str])
    """The lore given for this turn's line, most relevant first."""

    @property
    def calls(self) -> list[Call]:
        return [call for step in self.steps for call in step]


def read_transcript(request: ChatRequest) -> Transcript:
    """Split the history into scene, player, the NPC's own lines and this turn's tool steps."""
    out = Transcript(tools=frozenset(request.tool_names()), price_band=_band(request))
    results: dict[str, ChatMessage] = {
        m.tool_call_id: m for m in request.messages if m.role == "tool" and m.tool_call_id
    }
    lore: list[str] = []
    for message in request.messages:
        if message.role == "system":
            out.system += message.text + "\n"
        elif message.role == "user":
            text = message.text
            if text.startswith(OUTCOME_PREFIX):
                _attach_outcome(out, text[len(OUTCOME_PREFIX) :])
            elif is_scene_changes(text):
                out.scene = apply_changes(out.scene or SceneView(), text)
            elif is_scene(text):
                out.scene = parse_scene(text)
            elif is_heard(text):
                out.heard.extend(read_heard(text))
            elif is_lore(text):
                # Before a line (the turn's dynamic context) it is that line's; after a line
                # the NPC has not answered yet (given once it decided to only talk), too.
                if out.said and not out.spoke_this_turn:
                    out.lore = read_lore(text)
                else:
                    lore = read_lore(text)
            else:
                # Context is logged before the line it came with: lore read so far is this
                # line's, and none of it belongs to a later line.
                out.said = text.strip()
                out.answering = read_answering(out.said)
                if out.answering is None:
                    out.player_lines.append(out.said)
                out.lore, lore = lore, []
                out.steps = []
                out.spoke_this_turn = False
        elif message.role == "assistant" and message.tool_calls:
            step: list[Call] = []
            for call in message.tool_calls:
                arguments = _json_object(call.function.arguments) or {}
                if call.function.name == SPEAK:
                    out.spoke_this_turn = True
                    out.last_options = _options(arguments)
                    out.last_line = str(arguments.get("line") or "")
                    continue
                name = call.function.name
                if name == DECIDE:
                    name, arguments = _decided(arguments)
                    if name == NO_ACTION:
                        continue
                made = _with_result(name, arguments, results.get(call.id))
                if made.offered:
                    out.offered.append(made)
                step.append(made)
            if step:
                out.steps.append(step)
    return out


def _decided(arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The action inside a decision call, as if it had been called by itself."""
    action = arguments.get("action")
    if not isinstance(action, dict):
        return NO_ACTION, {}
    chosen = cast(dict[str, Any], action)
    name = chosen.get("name")
    inner = chosen.get("arguments")
    return (
        name if isinstance(name, str) else NO_ACTION,
        cast(dict[str, Any], inner) if isinstance(inner, dict) else {},
    )


def _attach_outcome(out: Transcript, text: str) -> None:
    """A decision's result told in a user message (the server showed no tool results)."""
    result = _json_object(text)
    if result is None or not out.steps:
        return
    step = out.steps[-1]
    for index, call in enumerate(step):
        if call.result is None and call.error is None:
            step[index] = Call(call.name, call.arguments, result=result)
            return


def _with_result(name: str, arguments: dict[str, Any], message: ChatMessage | None) -> Call:
    if message is None:
        return Call(name, arguments)
    parsed = _json_object(message.text)
    if parsed is None:
        return Call(name, arguments, error=message.text.strip() or "no result")
    return Call(name, arguments, result=parsed)


def _options(arguments: dict[str, Any]) -> list[Option]:
    raw = arguments.get("options")
    if not isinstance(raw, list):
        return []
    found: list[Option] = []
    for item in cast(list[Any], raw):
        if isinstance(item, dict):
            entry = cast(dict[str, Any], item)
            option_id, label = entry.get("id"), entry.get("label")
            if isinstance(option_id, str) and isinstance(label, str):
                found.append(Option(option_id, label))
    return found


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value: object = json.loads(text)
    except ValueError:
        return None
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def _band(request: ChatRequest) -> float:
    # The selling tool states the band; the buying one has a narrower band of its own.
    for tool in request.tools:
        if tool.function.name != SELL_GOODS:
            continue
        found = _BAND.search(tool.function.description or "")
        if found:
            return int(found[1]) / 100
    return DEFAULT_BAND
