"""The offline brain: plays Mira from the request alone, as a model would, without a model.

`star-harness play` uses it when no API key is set: the mock LLM answers the real requests
with these tool calls, over real HTTP, so the whole pipeline runs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, cast

from starharness.responder import ChatRequest, ScriptedCall, Step, ToolCalls

from .actions import MOST_CUPS
from .world import PRICE, SCENE_MARK

_NUMBERS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_COUNT = {"a": 1, "an": 1, **{word: n for n, word in enumerate(_NUMBERS, start=1)}}
"""Numbers said in words."""
_CUPS = re.compile(rf"\b([0-9]+|{'|'.join(_COUNT)})\s+(?:cups?|mugs?|teas?)\b|\btea:([0-9]+)\b")
"""How many: "2 cups", "buy 2 tea", "a cup of tea", or an option id such as "tea:3"."""
_TEA = re.compile(r"\btea\b")
_BYE = re.compile(r"\b(bye|goodbye|leave|later)\b")
LEAVE = {"id": "bye", "label": "Leave"}
ACCEPTED = "i accept: "
"""How the framework tells the NPC the customer accepted one of its offers (casefolded)."""


@dataclass(frozen=True, slots=True)
class Stall:
    """What the scene says: cups in the pot and the customer's coins."""

    cups: int
    coins: int


def respond(request: ChatRequest) -> Step:
    """One step for the NPC: act (sell) or speak. Any words at all get an answer."""
    stall = _stall(request)
    last = request.last_message
    if last.role == "tool":
        return _after_action(_result(last.text), stall)
    said = _customer_words(request).casefold()
    if said.startswith(ACCEPTED):
        # The framework settled the offer the customer accepted and says how it went.
        line = "Here you are. Enjoy it." if "[done:" in said else "Ah, that won't work now."
        return _say(line, "glad", stall)
    if _BYE.search(said):
        return _say("Mind how you go. The kettle's always on.", "glad", stall)
    cups = _cups_wanted(said)
    if cups is not None and cups > MOST_CUPS:
        return _say(f"I pour at most {MOST_CUPS} cups at a time, love.", "calm", stall)
    if cups:
        return ToolCalls(
            calls=[ScriptedCall(name="sell_tea", arguments=json.dumps({"cups": cups}))]
        )
    if said.startswith("("):  # the framework's greeting prompt: the customer walked up
        return _say(f"Hello, love. Tea's {PRICE} coins a cup. How many?", "glad", stall)
    return _say(f"I only do tea, love: {PRICE} coins a cup.", "calm", stall)


def _cups_wanted(said: str) -> int | None:
    """How many cups the words ask for; None when they name no number of cups."""
    wanted = _CUPS.search(said)
    if wanted is None:
        return 1 if _TEA.search(said) else None
    number = wanted[1] or wanted[2]
    if number in _COUNT:
        return _COUNT[number]
    digits = number.lstrip("0") or "0"
    # Anything this long is far more than a pot holds (and int() refuses very long numbers).
    return int(digits) if len(digits) <= 4 else MOST_CUPS + 1


def _result(text: str | None) -> dict[str, Any] | None:
    """The action's answer, or None when the call failed before the action ran (its text then
    says what was wrong with the arguments, in prose, not JSON)."""
    try:
        value: object = json.loads(text or "")
    except ValueError:
        return None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _after_action(result: dict[str, Any] | None, stall: Stall) -> Step:
    if result is None:
        return _say(f"Sorry, love, I lost count. One to {MOST_CUPS} cups?", "calm", stall)
    if result.get("offered"):
        # Nothing changed yet: the customer sees the offer with its price and accepts it.
        return _say(f"{result.get('offer', 'That')}, love. Say the word.", "glad", stall)
    if result.get("ok"):
        # The scene is from before the sale: offer from what the sale left.
        after = Stall(int(result.get("cups_left", 0)), int(result.get("customer_coins", 0)))
        return _say(f"Here you are. {result.get('summary', '')} Anything else?", "glad", after)
    facts: dict[str, Any] = result.get("facts") or {}
    if result.get("reason") == "cannot_pay":
        line = f"That's {facts.get('need')} coins and you've {facts.get('have')}, love."
    else:
        line = f"Only {facts.get('have')} cups left in the pot, sorry."
    return _say(line, "calm", stall)


def _options(stall: Stall) -> list[dict[str, str]]:
    """Only what the customer can take now: in the pot and paid for."""
    fits = min(stall.cups, stall.coins // PRICE)
    offers = [
        {"id": f"tea:{n}", "label": f"{n} cup{'s' if n > 1 else ''} of tea ({n * PRICE} coins)"}
        for n in (1, 3)
        if n <= fits
    ]
    if not offers:
        offers = [{"id": "chat", "label": "Just chatting"}]
    return [*offers, LEAVE]


def _say(line: str, mood: str, stall: Stall) -> ToolCalls:
    arguments = {"line": line, "mood": mood, "options": _options(stall)}
    return ToolCalls(
        calls=[ScriptedCall(name="say", arguments=json.dumps(arguments))], fragment_size=6
    )


def _stall(request: ChatRequest) -> Stall:
    scene = next(
        (m.text or "" for m in reversed(request.messages) if (m.text or "").startswith(SCENE_MARK)),
        "",
    )
    cups = re.search(r"You have (\d+) cups", scene)
    coins = re.search(r"customer has (\d+) coins", scene)
    return Stall(int(cups[1]) if cups else 0, int(coins[1]) if coins else 0)


def _customer_words(request: ChatRequest) -> str:
    for message in reversed(request.messages):
        text = message.text or ""
        if message.role == "user" and not text.startswith(SCENE_MARK):
            return text
    return ""
