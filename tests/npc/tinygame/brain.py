"""The tiny game's offline brain: a mock-LLM responder that plays the NPCs without a model."""

from __future__ import annotations

import json
import re

from starharness.mockllm import ChatRequest, ScriptedCall, Step, ToolCalls

from .world import SCENE_MARK

_BUY = re.compile(r"buy (\d+)")
OPTIONS = [{"id": "buy", "label": "buy 1"}, {"id": "bye", "label": "Goodbye"}]


def talk(
    line: str, mood: str = "calm", options: list[dict[str, str]] | None = None
) -> ScriptedCall:
    arguments = {"line": line, "mood": mood, "options": options or []}
    return ScriptedCall(name="talk", arguments=json.dumps(arguments))


def respond(request: ChatRequest) -> Step:
    """Sell when asked to buy, otherwise echo; react to the sale's result."""
    last = request.last_message
    if last.role == "tool":
        result = json.loads(last.text or "{}")
        if result.get("ok"):
            return ToolCalls(calls=[talk("Enjoy your bread.", "happy")], fragment_size=4)
        return ToolCalls(calls=[talk(f"Sorry: {result.get('hint')}", "cross")], fragment_size=4)
    said = customer_words(request)
    wanted = _BUY.search(said)
    if wanted:
        qty = int(wanted.group(1))
        arguments = json.dumps({"qty": qty, "price": 3 * qty})
        return ToolCalls(calls=[ScriptedCall(name="sell_bread", arguments=arguments)])
    # Spaced fragments, like a real model: each arrives in a read of its own.
    return ToolCalls(
        calls=[talk(f"You said: {said}", options=OPTIONS)], fragment_size=4, delay_ms=2
    )


def customer_words(request: ChatRequest) -> str:
    """The newest user message that is not the scene."""
    for message in reversed(request.messages):
        text = message.text or ""
        if message.role == "user" and not text.startswith(SCENE_MARK):
            return text
    return ""
