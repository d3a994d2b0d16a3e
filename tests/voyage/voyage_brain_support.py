"""Hand-built chat requests for the offline brain, shaped like the ones an encounter sends."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from starharness.mockllm import (
    ChatMessage,
    ChatRequest,
    FunctionCall,
    MessageToolCall,
    OfferedTool,
    Step,
    ToolCalls,
)
from starharness.voyage import PROTOCOL_TEXT
from starharness.voyage.actions import ACTIONS
from starharness.voyage.brain import respond
from starharness.voyage.brain.scene import is_scene, parse_scene
from starharness.voyage.content import SMUGGLER_PERSONA

ARRIVAL = "(The player walks up to you.)"
_going: dict[str, int] = {}
"""The going prices of the scene the last `ask()` sent, so an offer's id names its price
only when it is not the going one (as the brain's own option ids do)."""


def offered_tools() -> tuple[OfferedTool, ...]:
    return tuple(
        OfferedTool.model_validate(
            {
                "type": "function",
                "function": {
                    "name": tool.schema.name,
                    "description": tool.schema.description,
                    "parameters": tool.schema.parameters,
                },
            }
        )
        for tool in (getattr(action, "tool", action) for action in ACTIONS)
    )


@dataclass
class Conversation:
    """A history the test grows by hand; `ask()` plays the brain on it."""

    persona: str = SMUGGLER_PERSONA
    messages: list[ChatMessage] = field(default_factory=list[ChatMessage])
    calls: int = 0

    def __post_init__(self) -> None:
        system = f"You are an AI agent.\n\n{PROTOCOL_TEXT}\n\n{self.persona}"
        self.messages.append(ChatMessage(role="system", content=system))

    def player(self, text: str) -> Conversation:
        self.messages.append(ChatMessage(role="user", content=text))
        return self

    def scene(self, text: str) -> Conversation:
        self.messages.append(ChatMessage(role="user", content=text))
        return self

    def called(self, name: str, arguments: dict[str, Any]) -> str:
        self.calls += 1
        call_id = f"call_{self.calls}"
        call = MessageToolCall(
            id=call_id, function=FunctionCall(name=name, arguments=json.dumps(arguments))
        )
        self.messages.append(ChatMessage(role="assistant", content=None, tool_calls=(call,)))
        return call_id

    def result(self, call_id: str, content: dict[str, Any] | str) -> Conversation:
        text = content if isinstance(content, str) else json.dumps(content)
        self.messages.append(ChatMessage(role="tool", tool_call_id=call_id, content=text))
        return self

    def spoke(self, line: str, options: list[tuple[str, str]], mood: str = "neutral") -> None:
        arguments = {
            "line": line,
            "mood": mood,
            "options": [{"id": i, "label": label} for i, label in options],
        }
        self.result(self.called("npc_speak", arguments), "The player heard you.")

    def ask(self) -> Step:
        scenes = [m.text for m in self.messages if m.role == "user" and is_scene(m.text)]
        _going.clear()
        if scenes:
            _going.update({ware.good_id: ware.price for ware in parse_scene(scenes[-1]).sells})
        request = ChatRequest(
            conversation="npc",
            turn=len(self.messages),
            model="mock-model",
            messages=tuple(self.messages),
            tools=offered_tools(),
            tool_choice=None,
            stream=True,
            headers={},
            body={},
        )
        return respond(request)

    def follow(self, step: Step, result: dict[str, Any] | str | None = None) -> None:
        """Append the brain's step to the history, with a tool result for its single call."""
        assert isinstance(step, ToolCalls)
        speaks = step.calls[-1].name == "npc_speak"
        for call in step.calls:
            call_id = self.called(call.name, json.loads(call.arguments))
            if call.name == "npc_speak":
                self.result(call_id, "The player heard you.")
            elif speaks and result is None:
                # Deals made with a line are offers: the framework holds them for the player.
                self.result(call_id, {"ok": True, "offered": f"offer-{call_id}", "offer": "?"})
            else:
                assert result is not None, f"{call.name} needs a result"
                self.result(call_id, result)


def price_refusal(good: str, going: int, low: int, high: int, asked: int) -> dict[str, Any]:
    """The rules' refusal of a unit price out of the band, as the model reads it."""
    return {
        "ok": False,
        "reason": "price_out_of_band",
        "hint": f"the going price of {good} here is {going:,}; name a unit price between "
        f"{low:,} and {high:,} (you said {asked:,})",
        "facts": {"going": going, "low": low, "high": high, "asked": asked},
    }


def only_call(step: Step) -> tuple[str, dict[str, Any]]:
    assert isinstance(step, ToolCalls), step
    assert len(step.calls) == 1, step.calls
    call = step.calls[0]
    return call.name, json.loads(call.arguments)


OFFER_ACTIONS = frozenset(
    {"player_buys", "player_sells", "sell_intel", "book_passage", "complete_quest"}
)
"""The sample game's actions that take from the player: called, they become offers."""


def offer_calls(step: Step) -> list[tuple[str, dict[str, Any]]]:
    """The calls a speaking step makes before its line: each an offer for the player."""
    assert isinstance(step, ToolCalls), step
    *offers, last = step.calls
    assert last.name == "npc_speak", step.calls
    found = [(call.name, json.loads(call.arguments)) for call in offers]
    for name, _ in found:
        assert name in OFFER_ACTIONS, f"{name} is no offer: it must not share a step with speech"
    return found


def speech(step: Step) -> dict[str, Any]:
    """The line of a speaking step (offers may come first: see `offer_calls`)."""
    assert isinstance(step, ToolCalls), step
    offer_calls(step)
    return json.loads(step.calls[-1].arguments)


def _offer_id(name: str, arguments: dict[str, Any]) -> str:
    if name == "player_buys":
        base = f"buy:{arguments['good_id']}:{arguments['qty']}"
        unit = arguments["unit_price"]
        return base if _going.get(arguments["good_id"]) == unit else f"{base}:{unit}"
    if name == "player_sells":
        return f"sell:{arguments['good_id']}:{arguments['qty']}:{arguments['unit_price']}"
    subject = next(iter(arguments.values()))
    verb = {"sell_intel": "intel", "book_passage": "travel", "complete_quest": "deliver"}[name]
    return f"{verb}:{subject}"


def option_ids(step: Step) -> list[str]:
    """Offers first (as the brain's ids, price always named), then the spoken options."""
    offers = [_offer_id(name, arguments) for name, arguments in offer_calls(step)]
    return [*offers, *(option["id"] for option in speech(step)["options"])]
