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
from starharness.voyage.content import SMUGGLER_PERSONA

ARRIVAL = "(The player walks up to you.)"


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
        for call in step.calls:
            call_id = self.called(call.name, json.loads(call.arguments))
            if call.name == "npc_speak":
                self.result(call_id, "The player heard you.")
            else:
                assert result is not None, f"{call.name} needs a result"
                self.result(call_id, result)


def only_call(step: Step) -> tuple[str, dict[str, Any]]:
    assert isinstance(step, ToolCalls), step
    assert len(step.calls) == 1, step.calls
    call = step.calls[0]
    return call.name, json.loads(call.arguments)


def speech(step: Step) -> dict[str, Any]:
    name, arguments = only_call(step)
    assert name == "npc_speak", (name, arguments)
    return arguments


def option_ids(step: Step) -> list[str]:
    return [option["id"] for option in speech(step)["options"]]
