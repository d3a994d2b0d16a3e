"""Folding an NPC's memories of someone into a fixed budget, deterministically.

The newest memories are quoted; older ones become totals. Nothing is dropped silently: every
memory is either quoted or counted, and the first and the last deal are always named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .rows import Memory

TRADE = "trade"


@dataclass(frozen=True, slots=True)
class MemoryBudget:
    """How much room the memories get in a scene."""

    chars: int = 640
    verbatim: int = 4
    text_chars: int = 110


@dataclass(frozen=True, slots=True)
class _Style:
    verbatim: int
    text_chars: int
    deal_lines: int | None
    quote_firsts: bool


@dataclass(slots=True)
class _Totals:
    count: int = 0
    qty: int = 0
    price: int = 0


def summarise_memories(
    memories: Sequence[Memory],
    goods: Mapping[str, str],
    budget: MemoryBudget | None = None,
) -> str:
    """Render memories (oldest first) as text within the budget when at all possible.

    goods maps good ids to display names. The result always states how many memories there are
    (a folded row counts as the `weight` memories it stands for).
    """
    budget = budget or MemoryBudget()
    if not memories:
        return "You have never dealt with them."
    fallback = ""
    for style in _styles(budget, min(budget.verbatim, len(memories))):
        text = _render(memories, goods, style)
        if len(text) <= budget.chars:
            return text
        fallback = text
    return fallback


@lru_cache(maxsize=64)
def _styles(budget: MemoryBudget, most_verbatim: int) -> tuple[_Style, ...]:
    """Every rendering, most detailed first; the first that fits the budget wins.

    Cached: the list depends on nothing else, and every scene would build it anew.
    """
    styles: list[_Style] = []
    for verbatim in range(most_verbatim, 0, -1):
        for text_chars in (budget.text_chars, 60):
            for deal_lines in (None, 3, 1):
                for quote_firsts in (True, False):
                    styles.append(_Style(verbatim, text_chars, deal_lines, quote_firsts))
    return tuple(styles)


def _render(memories: Sequence[Memory], goods: Mapping[str, str], style: _Style) -> str:
    older = memories[: len(memories) - style.verbatim]
    recent = memories[len(memories) - style.verbatim :]
    lines = [f"{_count(memories)} memories since day {memories[0].day}."]
    if older:
        lines.append("Earlier: " + _fold(older, goods, style))
    trades = [memory for memory in memories if memory.kind == TRADE]
    if trades and trades[-1].id not in {memory.id for memory in recent}:
        lines.append(f"Last deal: day {trades[-1].day}, {_deal(trades[-1], goods)}.")
    lines.extend(f"- day {m.day}: {_clip(m.text, style.text_chars)}" for m in recent)
    return "\n".join(lines)


def _fold(older: Sequence[Memory], goods: Mapping[str, str], style: _Style) -> str:
    parts: list[str] = []
    trades = [memory for memory in older if memory.kind == TRADE]
    if trades:
        parts.append(_fold_trades(trades, goods, style))
    by_kind: dict[str, list[Memory]] = {}
    for memory in older:
        if memory.kind != TRADE:
            by_kind.setdefault(memory.kind, []).append(memory)
    for kind in sorted(by_kind):
        parts.append(_fold_kind(kind, by_kind[kind], style))
    return "; ".join(parts) + "."


def _fold_trades(trades: Sequence[Memory], goods: Mapping[str, str], style: _Style) -> str:
    groups: dict[tuple[str, str], _Totals] = {}
    for trade in trades:
        key = (trade.action or "traded", trade.good_id or "goods")
        totals = groups.setdefault(key, _Totals())
        totals.count += trade.weight
        totals.qty += trade.qty or 0
        totals.price += trade.price or 0
    ranked = sorted(groups.items(), key=lambda item: (-item[1].price, item[0]))
    shown = ranked if style.deal_lines is None else ranked[: style.deal_lines]
    rest = ranked[len(shown) :]
    lines = [
        f"they {action} {totals.qty:,} {goods.get(good, good)} for {totals.price:,}"
        for (action, good), totals in shown
    ]
    if rest:
        deals = sum(totals.count for _, totals in rest)
        credits = sum(totals.price for _, totals in rest)
        lines.append(f"{len(rest)} more kinds of deal ({deals} deals, {credits:,} in total)")
    first = trades[0]
    return (
        f"{_count(trades)} deals ({', '.join(lines)}); "
        f"first deal day {first.day}: {_deal(first, goods)}"
    )


def _fold_kind(kind: str, memories: Sequence[Memory], style: _Style) -> str:
    text = f"{_count(memories)} {kind} memories"
    paid = sum(memory.price or 0 for memory in memories)
    if paid:
        text += f" ({paid:,} credits)"
    if style.quote_firsts:
        first = memories[0]
        text += f', first day {first.day}: "{_clip(first.text, 50)}"'
    return text


def _count(memories: Sequence[Memory]) -> int:
    return sum(memory.weight for memory in memories)


def _deal(trade: Memory, goods: Mapping[str, str]) -> str:
    good = goods.get(trade.good_id or "", trade.good_id or "goods")
    return f"they {trade.action or 'traded'} {trade.qty or 0:,} {good} for {trade.price or 0:,}"


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
