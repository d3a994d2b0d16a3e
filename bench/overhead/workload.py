"""The turn both variants run: one `speak` tool call, its result, then the reply "ok"."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from starharness.runtime.tools import ToolDefinition, ToolRunContext, define_tool

MODEL = "mock-model"
SYSTEM = "You are an AI agent powered by star-harness."
"""The `task` profile's only system section; the floor sends the same text."""
PROMPT = "Greet the traveller who just walked in and offer them something."
SPEAK_ARGUMENTS = json.dumps(
    {
        "line": (
            "Welcome back, traveller. The weather turned while you were out on the ridge, so "
            "the kitchen kept a bowl of stew warm for you. Sit by the fire, dry your boots, and "
            "tell me whether you found the old mill before the rain came down."
        ),
        "mood": "warm",
        "options": ["Tell her about the mill", "Ask about the stew"],
    }
)
"""A ~40-word line, a mood and two options, as the model streams them."""
SPEAK_DESCRIPTION = "Say one line to the player, with a mood and reply options."
TOOL_RESULT = "said"
REPLY = "ok"


class SpeakArgs(BaseModel):
    line: str
    mood: str
    options: list[str]


FLOOR_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "speak",
            "description": SPEAK_DESCRIPTION,
            "parameters": {
                "properties": {
                    "line": {"type": "string"},
                    "mood": {"type": "string"},
                    "options": {"items": {"type": "string"}, "type": "array"},
                },
                "required": ["line", "mood", "options"],
                "type": "object",
            },
        },
    }
]
"""What the floor offers, written out by hand; the pre-flight check compares it with the loop's."""


class SpeakCounter:
    """Counts tool runs, so each variant can prove its tool ran exactly once per turn."""

    def __init__(self) -> None:
        self.calls = 0


def speak_tool(counter: SpeakCounter) -> ToolDefinition[SpeakArgs]:
    """The loop's tool, defined once per process: every agent registers this one object."""

    async def speak(args: SpeakArgs, run: ToolRunContext) -> str:
        counter.calls += 1
        return TOOL_RESULT

    return define_tool("speak", SPEAK_DESCRIPTION, SpeakArgs, speak)
