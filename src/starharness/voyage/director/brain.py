"""The director's offline brain: reads the brief from the request, answers with tool calls.

With `run_code` offered, the tick's calls go into one program (code mode: one model step for
every exchange); without it, they are separate calls. Deterministic: the same brief always
gets the same calls. It steadies prices that strayed far
from their base, restocks exchanges that ran low, now and then makes a story of its own (a
rush or a glut, seeded by the day), and posts a headline for the biggest moves. It reads only
the request, as a model would; the world store is out of its reach.
"""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

from starharness.responder import ChatRequest, ScriptedCall, Step, Success, ToolCalls

from .lines import POST_HEADLINE, RESTOCK, RUN_CODE, SET_PRICE, MarketLine, TickBrief, parse_brief

STRAY: Final = 0.2
"""A price more than 20% from its base is steadied back towards it."""
LOW_STOCK: Final = 0.25
"""An exchange below a quarter of its target stock is restocked."""
MAX_CORRECTIONS: Final = 3
MAX_RESTOCKS: Final = 2
MAX_HEADLINES: Final = 2
STORY_CHANCE: Final = 0.3
SEED: Final = "omega-director"

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class _News:
    location_id: str
    headline: str


def is_director_request(request: ChatRequest) -> bool:
    """Whether the request carries the director's tools (its brain answers it)."""
    names = {tool.function.name for tool in request.tools}
    return SET_PRICE in names and POST_HEADLINE in names


def respond_director(request: ChatRequest) -> Step:
    """One step of the director: the tick's calls, or, once their results are in, a report."""
    last = request.messages[-1]
    if last.role == "tool":
        done = sum(_committed(_text(m)) for m in request.messages if m.role == "tool")
        return Success(text=f"Done for today: {done} changes committed.")
    brief = parse_brief(_text(last))
    if brief is None:
        return Success(text="There is no brief to act on.")
    calls = plan_tick(brief)
    if not calls:
        return Success(text=f"Day {brief.day}: the markets are steady; nothing to change.")
    if RUN_CODE in {tool.function.name for tool in request.tools}:
        return ToolCalls(calls=[_tool_call(RUN_CODE, {"program": tick_program(calls)})])
    return ToolCalls(calls=[_tool_call(name, args) for name, args in calls])


def tick_program(calls: list[Call]) -> str:
    """One program making `calls` in order; it prints one JSON line per call with its result."""
    planned = json.dumps([[name, args] for name, args in calls], ensure_ascii=False)
    return (
        "import json\n"
        f"CALLS = json.loads({planned!r})\n"
        "for name, args in CALLS:\n"
        "    try:\n"
        "        result = tools.call(name, args)\n"
        "    except ToolError as error:\n"
        "        result = {'ok': False, 'reason': error.code, 'error': error.message}\n"
        "    print(json.dumps({'tool': name, 'args': args, 'result': result}))\n"
    )


def _committed(content: str) -> int:
    """Changes a tool result reports as committed: one for a direct call, each for a program."""
    if '"ok": true' in content:
        return 1
    found = 0
    for line in _program_lines(content):
        result = line.get("result")
        found += isinstance(result, dict) and result.get("ok") is True  # pyright: ignore[reportUnknownMemberType]
    return found


def _program_lines(content: str) -> list[dict[str, Any]]:
    """The JSON lines a tick program printed, from run_code's result (none for other text)."""
    try:
        value: object = json.loads(content)
    except ValueError:
        return []
    output = cast("dict[str, object]", value).get("output") if isinstance(value, dict) else None
    lines: list[dict[str, Any]] = []
    for text in output.splitlines() if isinstance(output, str) else ():
        with contextlib.suppress(ValueError):
            line = json.loads(text)
            if isinstance(line, dict):
                lines.append(line)  # pyright: ignore[reportUnknownArgumentType]
    return lines


def plan_tick(brief: TickBrief) -> list[Call]:
    """The calls for one tick, in order: prices, restocks, then headlines."""
    calls: list[Call] = []
    news: list[_News] = []
    priced: set[tuple[str, str]] = set()
    story = _story(brief)
    if story is not None:
        market, price, headline = story
        calls.append(_price(market, price))
        priced.add((market.location_id, market.good_id))
        news.append(_News(market.location_id, headline))
    strays = sorted(
        (m for m in brief.markets if (m.location_id, m.good_id) not in priced and _strays(m)),
        key=lambda m: (-abs(m.price - m.base) / m.base, m.location_id, m.good_id),
    )
    for market in strays[:MAX_CORRECTIONS]:
        assert market.allowed is not None
        price = max(market.allowed[0], min(market.allowed[1], market.base))
        calls.append(_price(market, price))
        verb = "eases" if price < market.price else "recovers"
        news.append(
            _News(market.location_id, f"Guild traders steady {market.name}: the price {verb} to "
                  f"{price:,}.")
        )  # fmt: skip
    short = sorted(
        (m for m in brief.markets if m.max_restock > 0 and m.stock < m.target * LOW_STOCK),
        key=lambda m: (m.stock / max(1, m.target), m.location_id, m.good_id),
    )
    for market in short[:MAX_RESTOCKS]:
        units = min(market.max_restock, market.target - market.stock)
        calls.append(
            (
                RESTOCK,
                {"location_id": market.location_id, "good_id": market.good_id, "units": units},
            )
        )
        news.append(_News(market.location_id, f"A relief freighter unloads {units} {market.name}."))
    for item in news[: min(MAX_HEADLINES, brief.headlines_left)]:
        calls.append((POST_HEADLINE, {"location_id": item.location_id, "headline": item.headline}))
    return calls


def _story(brief: TickBrief) -> tuple[MarketLine, int, str] | None:
    """Now and then a rush or a glut of the director's own, seeded by the day."""
    rng = random.Random(f"{SEED}:{brief.day}")
    movable = [m for m in brief.markets if m.allowed is not None]
    if not movable or rng.random() >= STORY_CHANCE:
        return None
    market = rng.choice(movable)
    assert market.allowed is not None
    low, high = market.allowed
    if rng.random() < 0.5 and high > market.price:
        return market, high, f"A rush on {market.name}: the price climbs to {high:,}."
    if low < market.price:
        return market, low, f"A glut of {market.name}: the price slides to {low:,}."
    return None


def _strays(market: MarketLine) -> bool:
    return market.allowed is not None and abs(market.price - market.base) > market.base * STRAY


def _price(market: MarketLine, price: int) -> Call:
    return (
        SET_PRICE,
        {"location_id": market.location_id, "good_id": market.good_id, "price": price},
    )


def _tool_call(name: str, arguments: Mapping[str, Any]) -> ScriptedCall:
    return ScriptedCall(name=name, arguments=json.dumps(dict(arguments), ensure_ascii=False))


def _text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType, reportUnknownVariableType]
    return ""
